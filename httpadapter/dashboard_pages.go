package httpadapter

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/internal/contract"
	"github.com/paykit/paykit/internal/enums"
)

// The dashboard's pages. Payments, checkouts, payouts, refunds, disputes
// and balance transactions belong to one merchant and environment: those
// pages show the merchant and environment the picker names (query
// parameters merchant and env), by default the one with the most recent
// event (activeScope). Approvals, merchants, jobs and the audit log span
// every merchant.

func (d *dashboard) routePages() {
	d.handle("GET /{$}", d.authed(d.overview))
	d.handle("GET /payment_intents", d.authed(d.paymentList))
	d.handle("GET /payment_intents/{id}", d.authed(d.paymentDetail))
	d.handle("GET /checkouts", d.authed(d.checkoutList))
	d.handle("GET /checkouts/{id}", d.authed(d.checkoutDetail))
	d.handle("GET /payouts", d.authed(d.payoutList))
	d.handle("GET /payouts/{id}", d.authed(d.payoutDetail))
	d.handle("POST /payouts/{id}", d.authed(d.payoutAction))
	d.handle("GET /refunds", d.authed(d.refundList))
	d.handle("GET /refunds/{id}", d.authed(d.refundDetail))
	d.handle("GET /disputes", d.authed(d.disputeList))
	d.handle("GET /disputes/{id}", d.authed(d.disputeDetail))
	d.handle("GET /balance_transactions", d.authed(d.balanceTxnList))
	d.handle("GET /approvals", d.authed(d.approvals))
	d.handle("GET /merchants", d.authed(d.merchants))
	d.handle("POST /merchants", d.authed(d.merchantsAction))
	d.handle("GET /merchants/{id}", d.authed(d.merchantDetail))
	d.handle("POST /merchants/{id}", d.authed(d.merchantAction))
	d.handle("GET /webhook_endpoints/{id}", d.authed(d.endpointDetail))
	d.handle("POST /webhook_endpoints/{id}", d.authed(d.endpointAction))
	d.handle("GET /jobs", d.authed(d.jobs))
	d.handle("GET /audit", d.authed(d.audit))
	d.routeReconciliation()
}

var dashNav = []struct{ label, path string }{
	{"Overview", "/"}, {"Payments", "/payment_intents"}, {"Checkouts", "/checkouts"}, {"Payouts", "/payouts"},
	{"Refunds", "/refunds"}, {"Disputes", "/disputes"}, {"Balance transactions", "/balance_transactions"},
	{"Approvals", "/approvals"}, {"Reconciliation", "/reconciliation"}, {"Merchants", "/merchants"}, {"Jobs", "/jobs"}, {"Audit log", "/audit"},
}

// show renders a page of the signed-in operator with status.
func (d *dashboard) show(w http.ResponseWriter, r *http.Request, s *session, status int, current string, n *notice, p *dashPageView) {
	v := view{Operator: s.Operator, CSRF: d.csrf(s), Notice: n, Data: p}
	for _, l := range dashNav {
		v.Nav = append(v.Nav, navLink{Label: l.label, Href: base(r) + l.path, Current: l.path == current})
	}
	d.render(w, r, status, dashPageTmpl, v)
}

// failed is the notice of a failed action and the page's status.
func failed(err error) (int, *notice) {
	e := paykit.AsError(err)
	status := StatusForCode(e.Code)
	if status >= 500 {
		return status, &notice{Tone: "bad", Text: "The action failed: " + internalError(nil).Message}
	}
	return status, &notice{Tone: "bad", Text: e.Message}
}

// scoped is the picker's merchant and environment.
type scoped struct {
	paykit.Scope
	view *scopeView
}

// principal is the Go API caller of the scope (the operator reads as the
// merchant would, with no key).
func (s scoped) principal() paykit.Principal { return paykit.Principal{Scope: s.Scope} }

// scopeParams are the query parameters that keep the scope in links.
func (s scoped) params() []string {
	return []string{"merchant", s.MerchantID, "env", string(s.Environment)}
}

// scopeOf reads the merchant and environment of the query; with no
// merchant named, def (its environment unless the query names one).
func scopeOf(r *http.Request, def paykit.Scope) scoped {
	q := r.URL.Query()
	var sc scoped
	sc.MerchantID, sc.Environment = q.Get("merchant"), paykit.Test
	if sc.MerchantID == "" {
		sc.Scope = def
	}
	switch env := paykit.Environment(q.Get("env")); env {
	case paykit.Test, paykit.Live:
		sc.Environment = env
	}
	return sc
}

// activeMerchants is how many of the newest merchants the default scope is
// chosen among.
const activeMerchants = overviewMerchants

// activeScope is the default scope of the pages: of the newest
// activeMerchants of ms (newest first), the merchant and environment with
// the most recent event. An operator opens the dashboard to see what is
// going on, which is rarely a merchant just created and still empty.
// Without any event, the newest merchant in test.
func (d *dashboard) activeScope(ctx context.Context, ms []paykit.Merchant) (paykit.Scope, error) {
	if len(ms) == 0 {
		return paykit.Scope{}, nil
	}
	best, at := paykit.Scope{MerchantID: ms[0].ID, Environment: paykit.Test}, time.Time{}
	for _, m := range ms[:min(len(ms), activeMerchants)] {
		for _, env := range []paykit.Environment{paykit.Test, paykit.Live} {
			sc := paykit.Scope{MerchantID: m.ID, Environment: env}
			evs, err := d.svc.ListEvents(ctx, paykit.Principal{Scope: sc}, paykit.EventListParams{PageParams: paykit.PageParams{Limit: 1}})
			if err != nil {
				return paykit.Scope{}, err
			}
			if len(evs.Data) > 0 && evs.Data[0].CreatedAt.After(at) {
				best, at = sc, evs.Data[0].CreatedAt
			}
		}
	}
	return best, nil
}

// pickScope reads the picker (the newest 100 merchants are offered; any
// merchant id is accepted). It returns the merchants offered, newest
// first.
func (d *dashboard) pickScope(r *http.Request) (scoped, []paykit.Merchant, error) {
	ms, err := d.svc.ListMerchants(r.Context(), paykit.PageParams{Limit: contract.MaxPageLimit})
	if err != nil {
		return scoped{}, nil, err
	}
	var def paykit.Scope
	if r.URL.Query().Get("merchant") == "" {
		if def, err = d.activeScope(r.Context(), ms.Data); err != nil {
			return scoped{}, nil, err
		}
	}
	sc := scopeOf(r, def)
	sc.view = &scopeView{}
	listed := false
	for _, m := range ms.Data {
		sc.view.Merchants = append(sc.view.Merchants, option{Value: m.ID, Label: m.Name + " (" + m.ID + ")", Selected: m.ID == sc.MerchantID})
		listed = listed || m.ID == sc.MerchantID
	}
	if !listed && sc.MerchantID != "" {
		sc.view.Merchants = append(sc.view.Merchants, option{Value: sc.MerchantID, Label: sc.MerchantID, Selected: true})
	}
	sc.view.Envs = options(string(sc.Environment), string(paykit.Test), string(paykit.Live))
	return sc, ms.Data, nil
}

// detailScope is the scope of a detail page, which shows no picker: the
// merchants are read only when the query names none.
func (d *dashboard) detailScope(r *http.Request) (scoped, error) {
	if r.URL.Query().Get("merchant") != "" {
		return scopeOf(r, paykit.Scope{}), nil
	}
	ms, err := d.svc.ListMerchants(r.Context(), paykit.PageParams{Limit: activeMerchants})
	if err != nil {
		return scoped{}, err
	}
	def, err := d.activeScope(r.Context(), ms.Data)
	if err != nil {
		return scoped{}, err
	}
	return scopeOf(r, def), nil
}

// listQuery reads the filters shared by the lists: status, currency,
// reference, cursor.
type listQuery struct {
	Status, Currency, Reference, Cursor string
}

func readListQuery(r *http.Request) listQuery {
	q := r.URL.Query()
	return listQuery{Status: q.Get("status"), Currency: q.Get("currency"), Reference: q.Get("reference"), Cursor: q.Get("cursor")}
}

func listParams[S ~string](lq listQuery) paykit.ListParams[S] {
	p := paykit.ListParams[S]{PageParams: paykit.PageParams{Cursor: lq.Cursor}, Currency: lq.Currency, MerchantReference: lq.Reference}
	if lq.Status != "" {
		p.Statuses = []S{S(lq.Status)}
	}
	return p
}

// dashListFilters is the filter form of a list with statuses.
func dashListFilters(sc scoped, lq listQuery, statuses []string) *filters {
	return &filters{
		Hidden: []hidden{{"merchant", sc.MerchantID}, {"env", string(sc.Environment)}},
		Fields: []formField{
			{Name: "status", Label: "Status", Options: options(lq.Status, append([]string{""}, statuses...)...)},
			{Name: "currency", Label: "Currency", Value: lq.Currency},
			{Name: "reference", Label: "Merchant reference", Value: lq.Reference},
		},
	}
}

// pager sets a table's next and first page links.
func pager(r *http.Request, t *table, cursor, next string) {
	q := r.URL.Query()
	if next != "" {
		q.Set("cursor", next)
		t.Next = base(r) + r.URL.Path + "?" + q.Encode()
	}
	if cursor != "" {
		q.Del("cursor")
		t.First = base(r) + r.URL.Path + "?" + q.Encode()
	}
}

// listPage serves a scoped list: fetch returns the rows as a table and
// the next cursor.
func (d *dashboard) listPage(w http.ResponseWriter, r *http.Request, s *session, path, title string, statuses []string,
	fetch func(ctx context.Context, sc scoped, lq listQuery) (*table, string, error)) error {
	return d.filteredListPage(w, r, s, path, title, func(sc scoped, lq listQuery) *filters { return dashListFilters(sc, lq, statuses) }, fetch)
}

// filteredListPage is listPage with a filter form of its own.
func (d *dashboard) filteredListPage(w http.ResponseWriter, r *http.Request, s *session, path, title string,
	filtersOf func(sc scoped, lq listQuery) *filters, fetch func(ctx context.Context, sc scoped, lq listQuery) (*table, string, error)) error {
	sc, _, err := d.pickScope(r)
	if err != nil {
		return err
	}
	lq := readListQuery(r)
	p := &dashPageView{Title: title, Scope: sc.view, Filters: filtersOf(sc, lq)}
	status, n := http.StatusOK, (*notice)(nil)
	t := &table{Empty: "There are no merchants yet."}
	if sc.MerchantID != "" {
		var next string
		if t, next, err = fetch(r.Context(), sc, lq); err != nil {
			t = &table{Empty: "Nothing to show."}
			status, n = failed(err)
		} else {
			pager(r, t, lq.Cursor, next)
		}
	}
	p.Sections = append(p.Sections, section{ID: "list", Table: t})
	d.show(w, r, s, status, path, n, p)
	return nil
}

func (d *dashboard) paymentList(w http.ResponseWriter, r *http.Request, s *session) error {
	return d.listPage(w, r, s, "/payment_intents", "Payment intents", enums.PaymentStatuses,
		func(ctx context.Context, sc scoped, lq listQuery) (*table, string, error) {
			page, err := d.svc.ListPaymentIntents(ctx, sc.principal(), listParams[paykit.PaymentStatus](lq))
			if err != nil {
				return nil, "", err
			}
			t := &table{Head: []string{"Payment intent", "Status", "Amount", "Method", "Reference", "Created"}, Empty: "No payment intents match."}
			for _, pi := range page.Data {
				t.Rows = append(t.Rows, []cell{linked(pi.ID, link(r, "/payment_intents/"+pathID(pi.ID), sc.params()...)),
					statusCell(string(pi.Status)), money(pi.Amount, pi.Currency), text(pi.PaymentMethod), text(pi.MerchantReference), text(when(pi.CreatedAt))})
			}
			return t, page.NextCursor, nil
		})
}

func (d *dashboard) checkoutList(w http.ResponseWriter, r *http.Request, s *session) error {
	return d.listPage(w, r, s, "/checkouts", "Checkouts", enums.CheckoutStatuses,
		func(ctx context.Context, sc scoped, lq listQuery) (*table, string, error) {
			page, err := d.svc.ListCheckouts(ctx, sc.principal(), listParams[paykit.CheckoutStatus](lq))
			if err != nil {
				return nil, "", err
			}
			t := &table{Head: []string{"Checkout", "Status", "Payment", "Amount", "Reference", "Created"}, Empty: "No checkouts match."}
			for _, c := range page.Data {
				t.Rows = append(t.Rows, []cell{linked(c.ID, link(r, "/checkouts/"+pathID(c.ID), sc.params()...)),
					statusCell(string(c.Status)), statusCell(string(c.PaymentStatus)), money(c.Amount, c.Currency), text(c.MerchantReference), text(when(c.CreatedAt))})
			}
			return t, page.NextCursor, nil
		})
}

func (d *dashboard) payoutList(w http.ResponseWriter, r *http.Request, s *session) error {
	return d.listPage(w, r, s, "/payouts", "Payouts", enums.PayoutStatuses,
		func(ctx context.Context, sc scoped, lq listQuery) (*table, string, error) {
			page, err := d.svc.ListPayoutIntents(ctx, sc.principal(), listParams[paykit.PayoutStatus](lq))
			if err != nil {
				return nil, "", err
			}
			t := &table{Head: []string{"Payout intent", "Status", "Amount", "Bank", "Reference", "Reason", "Created"}, Empty: "No payouts match."}
			for _, po := range page.Data {
				t.Rows = append(t.Rows, []cell{linked(po.ID, link(r, "/payouts/"+pathID(po.ID), sc.params()...)),
					statusCell(string(po.Status)), money(po.Amount, po.Currency), text(po.BankCode + " ····" + po.AccountLast4),
					text(po.MerchantReference), text(po.CancelReason), text(when(po.CreatedAt))})
			}
			return t, page.NextCursor, nil
		})
}

func (d *dashboard) refundList(w http.ResponseWriter, r *http.Request, s *session) error {
	return d.listPage(w, r, s, "/refunds", "Refunds", enums.RefundStatuses,
		func(ctx context.Context, sc scoped, lq listQuery) (*table, string, error) {
			page, err := d.svc.ListRefunds(ctx, sc.principal(), paykit.RefundListParams{ListParams: listParams[paykit.RefundStatus](lq)})
			if err != nil {
				return nil, "", err
			}
			t := &table{Head: []string{"Refund", "Status", "Amount", "Payment intent", "Reason", "Created"}, Empty: "No refunds match."}
			for _, rf := range page.Data {
				t.Rows = append(t.Rows, []cell{linked(rf.ID, link(r, "/refunds/"+pathID(rf.ID), sc.params()...)),
					statusCell(string(rf.Status)), money(rf.Amount, rf.Currency),
					linked(rf.PaymentIntentID, link(r, "/payment_intents/"+pathID(rf.PaymentIntentID), sc.params()...)),
					text(rf.Reason), text(when(rf.CreatedAt))})
			}
			return t, page.NextCursor, nil
		})
}

// timelineSection is the history of a resource: its events and the
// operator actions on it, oldest first.
func (d *dashboard) timelineSection(ctx context.Context, r paykit.Resource) section {
	sec := section{ID: "timeline", Heading: "Timeline"}
	tl, err := d.svc.ResourceTimeline(ctx, r)
	if err != nil {
		_, n := failed(err)
		sec.Text = n.Text
		return sec
	}
	t := &table{Head: []string{"When", "What", "Status", "By", "Details"}, Empty: "No state changes recorded."}
	for _, e := range tl.Entries {
		if ev := e.Event; ev != nil {
			t.Rows = append(t.Rows, []cell{text(when(e.At)), mono(ev.Type + " (" + ev.ID + ")"), statusCell(eventStatus(ev)), text("paykit"), text("")})
			continue
		}
		a := e.Audit
		t.Rows = append(t.Rows, []cell{text(when(e.At)), mono(a.Action), text(""), mono(a.Actor), text(auditDetails(a))})
	}
	sec.Table = t
	if tl.Incomplete {
		sec.Text = "Only the most recent part of the history was searched; older entries may be missing."
	}
	return sec
}

// eventStatus is the status the resource of an event had.
func eventStatus(e *paykit.Event) string {
	switch r := e.Resource.(type) {
	case *paykit.PaymentIntent:
		return string(r.Status)
	case *paykit.Checkout:
		return string(r.Status)
	case *paykit.PayoutIntent:
		return string(r.Status)
	case *paykit.Refund:
		return string(r.Status)
	case *paykit.Dispute:
		return string(r.Status)
	}
	return ""
}

// merchantCell links to a merchant.
func merchantCell(r *http.Request, id string) cell {
	return linked(id, link(r, "/merchants/"+pathID(id)))
}

func (d *dashboard) paymentDetail(w http.ResponseWriter, r *http.Request, s *session) error {
	sc, err := d.detailScope(r)
	if err != nil {
		return err
	}
	pi, err := d.svc.GetPaymentIntent(r.Context(), sc.principal(), r.PathValue("id"))
	if err != nil {
		return err
	}
	var breaks []paykit.ReconciliationBreak
	moreBreaks := false
	if pi.Status == paykit.PaymentSucceeded {
		if breaks, moreBreaks, err = d.openBreaksOf(r.Context(), pi); err != nil {
			return err
		}
	}
	settlement := settlementCell(pi)
	if len(breaks) > 0 && pi.SettledAt == nil {
		settlement = cell{Text: "pending: held by an open reconciliation break", Tone: "bad"}
	}
	f := []field{
		{Label: "Status", ID: "status", Value: statusCell(string(pi.Status))},
		{Label: "Amount", Value: text(formatMoney(pi.Amount, pi.Currency))},
		{Label: "Refunded", Value: text(formatMoney(pi.RefundedAmount, pi.Currency))},
		{Label: "Provider fee", ID: "fee", Value: succeededMoney(pi, pi.Fee)},
		{Label: "Net", ID: "net", Value: succeededMoney(pi, pi.Amount-pi.Fee)},
		{Label: "Settlement", ID: "settlement", Value: settlement},
		{Label: "Disputed", ID: "disputed", Value: text(formatMoney(pi.DisputedAmount, pi.Currency))},
		{Label: "Merchant", Value: merchantCell(r, pi.MerchantID)},
		{Label: "Environment", Value: text(string(pi.Environment))},
		{Label: "Method", Value: text(pi.PaymentMethod)},
		{Label: "Country", Value: text(pi.Country)},
		{Label: "Merchant reference", Value: text(pi.MerchantReference)},
		{Label: "Failure code", Value: text(pi.FailureCode)},
		{Label: "Created", Value: text(when(pi.CreatedAt))},
		{Label: "Updated", Value: text(when(pi.UpdatedAt))},
		{Label: "Expires", Value: text(when(pi.ExpiresAt))},
		{Label: "Completed", Value: text(whenPtr(pi.CompletedAt))},
	}
	if pi.CheckoutID != "" {
		f = append(f, field{Label: "Checkout", Value: linked(pi.CheckoutID, link(r, "/checkouts/"+pathID(pi.CheckoutID), sc.params()...))})
	}
	if pi.Receipt != nil {
		f = append(f, field{Label: "Receipt", Value: text(pi.Receipt.Number)})
	}
	if pi.Status == paykit.PaymentSucceeded {
		f = append(f, field{Label: "Balance transactions", Value: linked("Of this payment", link(r, "/balance_transactions", append(sc.params(), "source", pi.ID)...))})
	}
	internal := []field{
		{Label: "Provider", Value: text(pi.Provider)},
		{Label: "Provider reference", Value: mono(pi.ProviderRef)},
		{Label: "Attempt state", ID: "attempt", Value: text(string(pi.Attempt))},
		{Label: "Cancel requested", Value: text(whenPtr(pi.CancelRequestedAt))},
	}
	p := &dashPageView{Title: "Payment intent " + pi.ID, Sections: []section{
		{ID: "details", Heading: "Details", Fields: f},
		{ID: "provider", Heading: "Provider attempt (internal)", Fields: internal},
	}}
	if len(breaks) > 0 || moreBreaks {
		p.Sections = append(p.Sections, paymentBreaksSection(r, pi, breaks, moreBreaks))
	}
	refunds, err := d.svc.ListRefunds(r.Context(), sc.principal(), paykit.RefundListParams{PaymentIntent: pi.ID,
		ListParams: paykit.ListParams[paykit.RefundStatus]{PageParams: paykit.PageParams{Limit: contract.MaxPageLimit}}})
	if err != nil {
		return err
	}
	rt := &table{Head: []string{"Refund", "Status", "Amount", "Created"}, Empty: "No refunds."}
	for _, rf := range refunds.Data {
		rt.Rows = append(rt.Rows, []cell{linked(rf.ID, link(r, "/refunds/"+pathID(rf.ID), sc.params()...)), statusCell(string(rf.Status)),
			money(rf.Amount, rf.Currency), text(when(rf.CreatedAt))})
	}
	disputes, err := d.svc.ListDisputes(r.Context(), sc.principal(), paykit.DisputeListParams{PaymentIntent: pi.ID,
		ListParams: paykit.ListParams[paykit.DisputeStatus]{PageParams: paykit.PageParams{Limit: contract.MaxPageLimit}}})
	if err != nil {
		return err
	}
	dt := &table{Head: []string{"Dispute", "Status", "Amount", "Reason", "Evidence due by", "Created"}, Empty: "No disputes."}
	for _, dp := range disputes.Data {
		dt.Rows = append(dt.Rows, []cell{linked(dp.ID, link(r, "/disputes/"+pathID(dp.ID), sc.params()...)), statusCell(string(dp.Status)),
			money(dp.Amount, dp.Currency), word(string(dp.Reason)), text(when(dp.EvidenceDueBy)), text(when(dp.CreatedAt))})
	}
	p.Sections = append(p.Sections, section{ID: "refunds", Heading: "Refunds", Table: rt},
		section{ID: "disputes", Heading: "Disputes", Table: dt},
		d.timelineSection(r.Context(), pi))
	d.show(w, r, s, http.StatusOK, "/payment_intents", nil, p)
	return nil
}

func (d *dashboard) checkoutDetail(w http.ResponseWriter, r *http.Request, s *session) error {
	sc, err := d.detailScope(r)
	if err != nil {
		return err
	}
	c, err := d.svc.GetCheckout(r.Context(), sc.principal(), r.PathValue("id"))
	if err != nil {
		return err
	}
	f := []field{
		{Label: "Status", ID: "status", Value: statusCell(string(c.Status))},
		{Label: "Amount", Value: text(formatMoney(c.Amount, c.Currency))},
		{Label: "Merchant", Value: merchantCell(r, c.MerchantID)},
		{Label: "Environment", Value: text(string(c.Environment))},
		{Label: "Payment intent", Value: linked(c.PaymentIntentID, link(r, "/payment_intents/"+pathID(c.PaymentIntentID), sc.params()...))},
		{Label: "Payment status", Value: statusCell(string(c.PaymentStatus))},
		{Label: "Method", Value: text(c.ChosenMethod)},
		{Label: "Provider status", Value: text(c.ProviderStatus)},
		{Label: "Merchant reference", Value: text(c.MerchantReference)},
		{Label: "Failure code", Value: text(c.FailureCode)},
		{Label: "Created", Value: text(when(c.CreatedAt))},
		{Label: "Expires", Value: text(when(c.ExpiresAt))},
		{Label: "Stale at", Value: text(whenPtr(c.ProcessingStaleAt))},
	}
	p := &dashPageView{Title: "Checkout " + c.ID, Sections: []section{{ID: "details", Heading: "Details", Fields: f},
		d.timelineSection(r.Context(), c)}}
	d.show(w, r, s, http.StatusOK, "/checkouts", nil, p)
	return nil
}

func (d *dashboard) refundDetail(w http.ResponseWriter, r *http.Request, s *session) error {
	sc, err := d.detailScope(r)
	if err != nil {
		return err
	}
	rf, err := d.svc.GetRefund(r.Context(), sc.principal(), r.PathValue("id"))
	if err != nil {
		return err
	}
	f := []field{
		{Label: "Status", ID: "status", Value: statusCell(string(rf.Status))},
		{Label: "Amount", Value: text(formatMoney(rf.Amount, rf.Currency))},
		{Label: "Payment intent", Value: linked(rf.PaymentIntentID, link(r, "/payment_intents/"+pathID(rf.PaymentIntentID), sc.params()...))},
		{Label: "Merchant", Value: merchantCell(r, rf.MerchantID)},
		{Label: "Reason", Value: text(rf.Reason)},
		{Label: "Merchant reference", Value: text(rf.MerchantReference)},
		{Label: "Failure code", Value: text(rf.FailureCode)},
		{Label: "Created", Value: text(when(rf.CreatedAt))},
		{Label: "Completed", Value: text(whenPtr(rf.CompletedAt))},
	}
	internal := []field{
		{Label: "Provider", Value: text(rf.Provider)},
		{Label: "Provider reference", Value: mono(rf.ProviderRef)},
		{Label: "Dispatch", Value: text(string(rf.Attempt))},
	}
	p := &dashPageView{Title: "Refund " + rf.ID, Sections: []section{{ID: "details", Heading: "Details", Fields: f},
		{ID: "provider", Heading: "Provider attempt (internal)", Fields: internal},
		d.timelineSection(r.Context(), rf)}}
	d.show(w, r, s, http.StatusOK, "/refunds", nil, p)
	return nil
}

func (d *dashboard) payoutDetail(w http.ResponseWriter, r *http.Request, s *session) error {
	return d.showPayout(w, r, s, http.StatusOK, nil)
}

// showPayout renders a payout's page; ?confirm=approve or reject shows
// the confirmation form of a pending approval.
func (d *dashboard) showPayout(w http.ResponseWriter, r *http.Request, s *session, status int, n *notice) error {
	sc, err := d.detailScope(r)
	if err != nil {
		return err
	}
	po, err := d.svc.GetPayoutIntent(r.Context(), sc.principal(), r.PathValue("id"))
	if err != nil {
		return err
	}
	return d.renderPayout(w, r, s, sc, po, status, n)
}

// renderPayout renders po, a payout of scope sc.
func (d *dashboard) renderPayout(w http.ResponseWriter, r *http.Request, s *session, sc scoped, po *paykit.PayoutIntent, status int, n *notice) error {
	reasonLabel := "Cancel reason" // the merchant's (merchant-api.md 4.10)
	if po.FailureCode == paykit.FailureApprovalRejected {
		reasonLabel = "Rejection reason" // the operator's, kept in the same field
	}
	f := []field{
		{Label: "Status", ID: "status", Value: statusCell(string(po.Status))},
		{Label: "Amount", Value: text(formatMoney(po.Amount, po.Currency))},
		{Label: "Merchant", Value: merchantCell(r, po.MerchantID)},
		{Label: "Environment", Value: text(string(po.Environment))},
		{Label: "Recipient", Value: text(po.HolderName + " · " + po.BankCode + " ····" + po.AccountLast4)},
		{Label: "Merchant reference", Value: text(po.MerchantReference)},
		{Label: reasonLabel, ID: "cancel-reason", Value: text(po.CancelReason)},
		{Label: "Failure", Value: text(po.FailureCode + " " + po.FailureMessage)},
		{Label: "Reserved", Value: text(formatMoney(po.ReservedAmount, po.Currency))},
		{Label: "Paid out", Value: text(formatMoney(po.CompletedAmount, po.Currency))},
		{Label: "Returned", Value: text(formatMoney(po.ReturnedAmount, po.Currency))},
		{Label: "Created", Value: text(when(po.CreatedAt))},
		{Label: "Updated", Value: text(when(po.UpdatedAt))},
	}
	if po.ApprovalPending {
		f = append(f, field{Label: "Approval", ID: "approval", Value: cell{Text: "pending until " + whenPtr(po.ApprovalExpiresAt), Tone: "wait"}})
	}
	internal := []field{
		{Label: "Provider", Value: text(po.Provider)},
		{Label: "Provider reference", Value: mono(po.ProviderRef)},
		{Label: "Provider bank code", Value: text(po.ProviderBankCode)},
		{Label: "Dispatch", ID: "dispatch", Value: text(string(po.Attempt))},
		{Label: "Cancel requested", Value: text(whenPtr(po.CancelRequestedAt))},
	}
	p := &dashPageView{Title: "Payout " + po.ID, Sections: []section{{ID: "details", Heading: "Details", Fields: f}}}
	if po.ApprovalPending {
		p.Sections = append(p.Sections, approvalSection(r, po, r.URL.Query().Get("confirm")))
	}
	p.Sections = append(p.Sections, section{ID: "provider", Heading: "Provider attempt (internal)", Fields: internal},
		d.timelineSection(r.Context(), po))
	d.show(w, r, s, status, "/payouts", n, p)
	return nil
}

// approvalSection asks for a decision on a pending approval: first the
// choice, then (confirm set) the confirmation form.
func approvalSection(r *http.Request, po *paykit.PayoutIntent, confirm string) section {
	self := link(r, "/payouts/"+pathID(po.ID), "merchant", po.MerchantID, "env", string(po.Environment))
	amount := formatMoney(po.Amount, po.Currency)
	sec := section{ID: "decide", Heading: "Approval"}
	switch confirm {
	case "approve":
		sec.Text = "Approve the payout of " + amount + " to " + po.HolderName + "? It is sent to the bank at once."
		sec.Forms = []*form{{ID: "approve", Action: self, Submit: "Confirm approval", ButtonID: "confirm-approve",
			Hidden: []hidden{{"action", "approve"}}, Fields: []formField{{Name: "note", Label: "Note (optional)"}}}}
	case "reject":
		sec.Text = "Reject the payout of " + amount + "? The reserved amount goes back to the merchant's balance."
		sec.Forms = []*form{{ID: "reject", Action: self, Submit: "Confirm rejection", Class: "danger", ButtonID: "confirm-reject",
			Hidden: []hidden{{"action", "reject"}}, Fields: []formField{{Name: "reason", Label: "Reason (the merchant sees it)", Type: "textarea", Required: true}}}}
	default:
		sec.Text = "This payout waits for an operator."
		sec.Table = &table{Rows: [][]cell{{
			{Text: "Approve…", Href: self + "&confirm=approve", Class: "approve"},
			{Text: "Reject…", Href: self + "&confirm=reject", Class: "reject"},
		}}}
	}
	return sec
}

func (d *dashboard) approvals(w http.ResponseWriter, r *http.Request, s *session) error {
	return d.showApprovals(w, r, s, http.StatusOK, nil)
}

func (d *dashboard) showApprovals(w http.ResponseWriter, r *http.Request, s *session, status int, n *notice) error {
	cursor := r.URL.Query().Get("cursor")
	page, err := d.svc.ListPendingApprovals(r.Context(), paykit.PageParams{Cursor: cursor})
	if err != nil {
		return err
	}
	t := &table{Head: []string{"Payout intent", "Merchant", "Env", "Amount", "Recipient", "Hold ends", "Decide", ""}, Empty: "No payouts wait for approval."}
	for _, po := range page.Data {
		self := link(r, "/payouts/"+pathID(po.ID), "merchant", po.MerchantID, "env", string(po.Environment))
		t.Rows = append(t.Rows, []cell{linked(po.ID, self), merchantCell(r, po.MerchantID), text(string(po.Environment)),
			money(po.Amount, po.Currency), text(po.HolderName + " · " + po.BankCode + " ····" + po.AccountLast4),
			text(whenPtr(po.ApprovalExpiresAt)),
			{Text: "Approve…", Href: self + "&confirm=approve"}, {Text: "Reject…", Href: self + "&confirm=reject"}})
	}
	pager(r, t, cursor, page.NextCursor)
	d.show(w, r, s, status, "/approvals", n, &dashPageView{Title: "Approval queue", Sections: []section{{ID: "list", Table: t}}})
	return nil
}

func (d *dashboard) merchants(w http.ResponseWriter, r *http.Request, s *session) error {
	return d.showMerchants(w, r, s, http.StatusOK, nil)
}

func (d *dashboard) showMerchants(w http.ResponseWriter, r *http.Request, s *session, status int, n *notice) error {
	cursor := r.URL.Query().Get("cursor")
	page, err := d.svc.ListMerchants(r.Context(), paykit.PageParams{Cursor: cursor})
	if err != nil {
		return err
	}
	t := &table{Head: []string{"Merchant", "Id", "Created"}, Empty: "No merchants yet."}
	for _, m := range page.Data {
		t.Rows = append(t.Rows, []cell{linked(m.Name, link(r, "/merchants/"+pathID(m.ID))), mono(m.ID), text(when(m.CreatedAt))})
	}
	pager(r, t, cursor, page.NextCursor)
	create := &form{ID: "create-merchant", Action: link(r, "/merchants"), Submit: "Create merchant", ButtonID: "create-merchant-submit",
		Hidden: []hidden{{"action", "create"}}, Fields: []formField{{Name: "name", Label: "Name", Required: true}}}
	d.show(w, r, s, status, "/merchants", n, &dashPageView{Title: "Merchants", Sections: []section{
		{ID: "list", Table: t}, {ID: "create", Heading: "New merchant", Forms: []*form{create}}}})
	return nil
}

func (d *dashboard) merchantDetail(w http.ResponseWriter, r *http.Request, s *session) error {
	return d.showMerchant(w, r, s, http.StatusOK, nil, nil)
}

// showMerchant renders a merchant's page: balances, API keys, webhook
// endpoints and their forms.
func (d *dashboard) showMerchant(w http.ResponseWriter, r *http.Request, s *session, status int, n *notice, secret *secretView) error {
	ctx := r.Context()
	m, err := d.svc.GetMerchant(ctx, r.PathValue("id"))
	if err != nil {
		return err
	}
	self := link(r, "/merchants/"+pathID(m.ID))
	p := &dashPageView{Title: m.Name, Secret: secret}
	p.Sections = append(p.Sections, section{ID: "details", Heading: "Merchant", Fields: []field{
		{Label: "Name", ID: "merchant-name", Value: text(m.Name)}, {Label: "Id", Value: mono(m.ID)}, {Label: "Created", Value: text(when(m.CreatedAt))},
		{Label: "Payments", Value: linked("Test", link(r, "/payment_intents", "merchant", m.ID, "env", "test"))},
		{Label: "Payouts", Value: linked("Test", link(r, "/payouts", "merchant", m.ID, "env", "test"))},
		{Label: "Disputes", Value: linked("Test", link(r, "/disputes", "merchant", m.ID, "env", "test"))},
		{Label: "Balance transactions", Value: linked("Test", link(r, "/balance_transactions", "merchant", m.ID, "env", "test"))},
		{Label: "Reconciliation breaks", Value: linked("Open", link(r, "/reconciliation", "merchant", m.ID))},
		{Label: "Audit log", Value: linked("Actions on this merchant", link(r, "/audit", "merchant", m.ID))},
	}})
	bt := &table{Head: []string{"Environment", "Currency", "Available", "Pending", "Reserved", "Updated"}, Empty: "No balances yet."}
	for _, env := range []paykit.Environment{paykit.Test, paykit.Live} {
		bals, err := d.svc.ListBalances(ctx, paykit.Principal{Scope: paykit.Scope{MerchantID: m.ID, Environment: env}})
		if err != nil {
			return err
		}
		for _, b := range bals.Data {
			bt.Rows = append(bt.Rows, []cell{text(string(env)), text(b.Currency), balanceMoney(b.Available, b.Currency), money(b.Pending, b.Currency),
				money(b.Reserved, b.Currency), text(when(b.UpdatedAt))})
		}
	}
	adjust := &form{ID: "adjust", Action: self, Submit: "Adjust balance", ButtonID: "adjust-submit", Hidden: []hidden{{"action", "adjust_balance"}},
		Fields: []formField{
			{Name: "environment", Label: "Environment", Options: options("test", "test", "live")},
			{Name: "currency", Label: "Currency", Required: true, Placeholder: "MYR"},
			{Name: "amount", Label: "Amount (negative to debit)", Required: true, Placeholder: "100.00"},
			{Name: "reason", Label: "Reason", Type: "textarea", Required: true},
		}}
	p.Sections = append(p.Sections, section{ID: "balances", Heading: "Balances", Table: bt, Forms: []*form{adjust}})

	keys, err := d.svc.ListAPIKeys(ctx, m.ID)
	if err != nil {
		return err
	}
	kt := &table{Head: []string{"Key", "Environment", "Public key", "Secret ends", "Created", "State"}, Empty: "No API keys."}
	for _, k := range keys {
		state := statusCell("active")
		if k.RevokedAt != nil {
			state = statusCell("revoked")
		} else {
			state.Forms = []*form{{Action: self, Submit: "Revoke", Class: "danger", ButtonID: "revoke-" + k.ID,
				Hidden: []hidden{{"action", "revoke_key"}, {"key", k.ID}}}}
		}
		kt.Rows = append(kt.Rows, []cell{mono(k.ID), text(string(k.Environment)), mono(k.PublicKey), text("…" + k.SecretLast4), text(when(k.CreatedAt)), state})
	}
	createKey := &form{ID: "create-key", Action: self, Submit: "Create API key", ButtonID: "create-key-submit", Hidden: []hidden{{"action", "create_key"}},
		Fields: []formField{{Name: "environment", Label: "Environment", Options: options("test", "test", "live")}}}
	p.Sections = append(p.Sections, section{ID: "keys", Heading: "API keys", Table: kt, Forms: []*form{createKey}})

	eps, err := d.svc.ListWebhookEndpoints(ctx, m.ID)
	if err != nil {
		return err
	}
	et := &table{Head: []string{"Endpoint", "Environment", "URL", "Status", "Deliveries", "Created"}, Empty: "No webhook endpoints."}
	now := d.svc.Now()
	for _, e := range eps.Data {
		et.Rows = append(et.Rows, []cell{linked(e.ID, link(r, "/webhook_endpoints/"+pathID(e.ID))), text(string(e.Environment)), mono(e.URL),
			endpointStatus(&e), deliveryCell(&e, now), text(when(e.CreatedAt))})
	}
	createEP := &form{ID: "create-endpoint", Action: self, Submit: "Add endpoint", ButtonID: "create-endpoint-submit", Hidden: []hidden{{"action", "create_endpoint"}},
		Fields: []formField{{Name: "environment", Label: "Environment", Options: options("test", "test", "live")},
			{Name: "url", Label: "URL", Required: true, Placeholder: "https://example.com/webhooks"}}}
	p.Sections = append(p.Sections, section{ID: "endpoints", Heading: "Webhook endpoints", Table: et, Forms: []*form{createEP}})
	d.show(w, r, s, status, "/merchants", n, p)
	return nil
}

func (d *dashboard) endpointDetail(w http.ResponseWriter, r *http.Request, s *session) error {
	return d.showEndpoint(w, r, s, http.StatusOK, nil, nil)
}

// showEndpoint renders a webhook endpoint with its delivery attempts.
func (d *dashboard) showEndpoint(w http.ResponseWriter, r *http.Request, s *session, status int, n *notice, secret *secretView) error {
	ctx := r.Context()
	e, err := d.svc.GetWebhookEndpoint(ctx, r.PathValue("id"))
	if err != nil {
		return err
	}
	self := base(r) + "/webhook_endpoints/" + pathID(e.ID)
	toggle := &form{ID: "toggle", Action: self, Submit: "Disable", Class: "danger", ButtonID: "disable", Hidden: []hidden{{"action", "disable"}}}
	if e.Status != paykit.WebhookEnabled {
		toggle = &form{ID: "toggle", Action: self, Submit: "Enable", ButtonID: "enable", Hidden: []hidden{{"action", "enable"}}}
	}
	rotate := &form{ID: "rotate", Action: self, Submit: "Rotate secret", Class: "secondary", ButtonID: "rotate", Hidden: []hidden{{"action", "rotate"}}}
	forms := []*form{toggle, rotate}
	now := d.svc.Now()
	if e.Paused(now) {
		forms = append([]*form{{ID: "resume", Action: self, Submit: "Resume deliveries", ButtonID: "resume-submit", Hidden: []hidden{{"action", "resume"}}}}, forms...)
	}
	secrets := ""
	for _, sec := range e.Secrets {
		secrets += "made " + when(sec.CreatedAt)
		if sec.ExpiresAt != nil {
			secrets += ", signs until " + when(*sec.ExpiresAt)
		}
		secrets += "; "
	}
	p := &dashPageView{Title: "Webhook endpoint " + e.ID, Secret: secret, Sections: []section{{ID: "details", Heading: "Endpoint", Fields: []field{
		{Label: "URL", Value: mono(e.URL)}, {Label: "Status", ID: "status", Value: endpointStatus(e)},
		{Label: "Deliveries", ID: "delivery", Value: deliveryCell(e, now)},
		{Label: "Events", ID: "events", Value: text(strings.Join(webhookEndpointFieldsOf(e).EnabledEvents, ", "))},
		{Label: "Description", Value: text(e.Description)},
		{Label: "Merchant", Value: merchantCell(r, e.MerchantID)}, {Label: "Environment", Value: text(string(e.Environment))},
		{Label: "Secrets", Value: text(secrets)}, {Label: "Created", Value: text(when(e.CreatedAt))},
	}, Forms: forms}}}

	cursor := r.URL.Query().Get("cursor")
	attempts, err := d.svc.ListWebhookAttempts(ctx, e.ID, paykit.PageParams{Cursor: cursor})
	if err != nil {
		return err
	}
	t := &table{Head: []string{"When", "Event", "Attempt", "Answer", "Response time", "Error", ""}, Empty: "No delivery attempts yet."}
	for _, a := range attempts.Data {
		answer := statusCell("failed")
		if a.StatusCode != 0 {
			answer.Text = strconv.Itoa(a.StatusCode)
		}
		if a.Succeeded {
			answer.Tone = "ok"
		}
		resend := cell{Forms: []*form{{Action: self, Submit: "Resend", Class: "secondary", ButtonID: "resend-" + a.ID,
			Hidden: []hidden{{"action", "resend"}, {"event", a.EventID}}}}}
		t.Rows = append(t.Rows, []cell{text(when(a.CreatedAt)), mono(a.EventID), {Text: strconv.Itoa(a.Number), Class: "num"}, answer,
			{Text: strconv.FormatInt(a.Latency.Milliseconds(), 10) + " ms", Class: "num"}, text(a.Error), resend})
	}
	pager(r, t, cursor, attempts.NextCursor)
	resendAny := &form{ID: "resend-event", Action: self, Submit: "Resend event", Class: "secondary", ButtonID: "resend-event-submit",
		Hidden: []hidden{{"action", "resend"}}, Fields: []formField{{Name: "event", Label: "Event id", Required: true, Placeholder: "evt_…"}}}
	p.Sections = append(p.Sections, section{ID: "attempts", Heading: "Delivery attempts", Table: t, Forms: []*form{resendAny}})
	d.show(w, r, s, status, "/merchants", n, p)
	return nil
}

// jobsDefaultState is the jobs page's filter when the URL names none.
const jobsDefaultState = paykit.JobNeedsAttention

func (d *dashboard) jobs(w http.ResponseWriter, r *http.Request, s *session) error {
	q := r.URL.Query()
	state, kind, merchant, cursor := q.Get("state"), q.Get("kind"), q.Get("merchant"), q.Get("cursor")
	// By default what the overview counts as jobs that need attention:
	// the same list, so the count and the page agree.
	if _, ok := q["state"]; !ok {
		state = string(jobsDefaultState)
	}
	p := &dashPageView{Title: "Background jobs", Filters: &filters{Fields: []formField{
		{Name: "state", Label: "State", Options: options(state, append([]string{""}, enums.JobStates...)...)},
		{Name: "kind", Label: "Kind", Value: kind},
		{Name: "merchant", Label: "Merchant id", Value: merchant},
	}}}
	page, err := d.svc.ListJobs(r.Context(), paykit.JobListParams{PageParams: paykit.PageParams{Cursor: cursor},
		State: paykit.JobState(state), Kind: kind, MerchantID: merchant})
	status, n := http.StatusOK, (*notice)(nil)
	t := &table{Head: []string{"Job", "Kind", "State", "Target", "Merchant", "Attempts", "Runs at", "Last error"}, Empty: "No jobs match."}
	if err != nil {
		status, n = failed(err)
	} else {
		for _, j := range page.Data {
			t.Rows = append(t.Rows, []cell{mono(j.ID), text(j.Kind), statusCell(string(j.State)), mono(j.TargetID),
				merchantCell(r, j.Scope.MerchantID), {Text: strconv.Itoa(j.Attempts), Class: "num"}, text(when(j.RunAt)), text(j.LastError)})
		}
		pager(r, t, cursor, page.NextCursor)
	}
	sec := section{ID: "list", Table: t}
	if _, ok := q["state"]; !ok {
		sec.Text = "Jobs that need attention: they failed their kind's attempt limit and are still tried. Choose a state, or Any for every pending job."
	}
	p.Sections = append(p.Sections, sec)
	d.show(w, r, s, status, "/jobs", n, p)
	return nil
}

func (d *dashboard) audit(w http.ResponseWriter, r *http.Request, s *session) error {
	q := r.URL.Query()
	merchant, action, cursor := q.Get("merchant"), q.Get("action"), q.Get("cursor")
	p := &dashPageView{Title: "Audit log", Filters: &filters{Fields: []formField{
		{Name: "merchant", Label: "Merchant id", Value: merchant},
		{Name: "action", Label: "Action", Value: action},
	}}}
	page, err := d.svc.ListAuditEvents(r.Context(), paykit.AuditListParams{PageParams: paykit.PageParams{Cursor: cursor}, MerchantID: merchant, Action: action})
	status, n := http.StatusOK, (*notice)(nil)
	t := &table{Head: []string{"When", "Actor", "Action", "Target", "Merchant", "Details"}, Empty: "No audit events match."}
	if err != nil {
		status, n = failed(err)
	} else {
		for _, a := range page.Data {
			t.Rows = append(t.Rows, []cell{text(when(a.CreatedAt)), mono(a.Actor), mono(a.Action), targetCell(r, &a), merchantCell(r, a.MerchantID), text(auditDetails(&a))})
		}
		pager(r, t, cursor, page.NextCursor)
	}
	p.Sections = append(p.Sections, section{ID: "list", Table: t})
	d.show(w, r, s, status, "/audit", n, p)
	return nil
}

// targetCell links an audit event's target where the dashboard has a page
// for it.
func targetCell(r *http.Request, a *paykit.AuditEvent) cell {
	sc := []string{"merchant", a.MerchantID, "env", string(a.Environment)}
	switch a.TargetType {
	case "payout_intent":
		return linked(a.TargetID, link(r, "/payouts/"+pathID(a.TargetID), sc...))
	case "webhook_endpoint":
		return linked(a.TargetID, link(r, "/webhook_endpoints/"+pathID(a.TargetID)))
	case "merchant":
		return linked(a.TargetID, link(r, "/merchants/"+pathID(a.TargetID)))
	case "reconciliation_break":
		return linked(a.TargetID, link(r, "/reconciliation/breaks/"+pathID(a.TargetID)))
	}
	return mono(a.TargetType + " " + a.TargetID)
}

// auditDetails is an audit event's details as text, by key. An amount in
// minor units with its currency reads as money ("amount: MYR 1,500.00"),
// and the currency is not repeated.
func auditDetails(a *paykit.AuditEvent) string {
	var b strings.Builder
	cur := a.Details["currency"]
	for _, k := range slices.Sorted(maps.Keys(a.Details)) {
		v := a.Details[k]
		if k == "currency" && cur != "" {
			if _, err := strconv.ParseInt(a.Details["amount"], 10, 64); err == nil {
				continue
			}
		}
		if k == "amount" && cur != "" {
			if n, err := strconv.ParseInt(v, 10, 64); err == nil {
				v = formatMoney(n, cur)
			}
		}
		if b.Len() > 0 {
			b.WriteString("; ")
		}
		b.WriteString(k + ": " + v)
	}
	return b.String()
}

// endpointStatus is a webhook endpoint's status with the reason it was
// disabled.
func endpointStatus(e *paykit.WebhookEndpoint) cell {
	st := statusCell(e.Status)
	if e.DisabledReason != "" {
		st.Text += " (" + e.DisabledReason + ")"
	}
	return st
}

// deliveryCell is a webhook endpoint's delivery state at now: active, or
// paused, until when and why.
func deliveryCell(e *paykit.WebhookEndpoint, now time.Time) cell {
	if !e.Paused(now) {
		return statusCell(deliveryActive)
	}
	return cell{Text: fmt.Sprintf("Paused until %s — %s (%d failures)", when(*e.PausedUntil), e.PauseReason, e.Failures), Tone: "bad"}
}
