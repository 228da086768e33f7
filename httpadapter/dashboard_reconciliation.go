package httpadapter

import (
	"context"
	"net/http"
	"strconv"
	"strings"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/internal/contract"
)

// The reconciliation pages: the queue of breaks between paykit's records
// and what the Providers settled, a break with its resolve form, and the
// batches read. Breaks span every merchant (a line unknown to paykit has
// none), so these pages have no merchant picker.

// breakStatuses and breakTypeNames are the filters' choices, in the
// contract's order.
var (
	breakStatuses  = []string{string(paykit.BreakOpen), string(paykit.BreakResolved)}
	breakTypeNames = []string{string(paykit.BreakFeeMismatch), string(paykit.BreakAmountMismatch), string(paykit.BreakCurrencyMismatch),
		string(paykit.BreakDuplicateLine), string(paykit.BreakUnknownToPaykit), string(paykit.BreakMissingInReport)}
)

// breakDefaultStatus is the queue's status filter when the URL names none:
// the breaks that wait for an operator.
const breakDefaultStatus = paykit.BreakOpen

func (d *dashboard) routeReconciliation() {
	d.handle("GET /reconciliation", d.authed(d.breakQueue))
	d.handle("GET /reconciliation/breaks/{id}", d.authed(d.breakDetail))
	d.handle("POST /reconciliation/breaks/{id}", d.authed(d.breakAction))
	d.handle("GET /reconciliation/runs", d.authed(d.reconciliationRuns))
}

// breakQueue lists the breaks: open ones by default, filtered by status,
// type, provider and merchant.
func (d *dashboard) breakQueue(w http.ResponseWriter, r *http.Request, s *session) error {
	q := r.URL.Query()
	status, typ, provider, merchant, cursor := q.Get("status"), q.Get("type"), q.Get("provider"), q.Get("merchant"), q.Get("cursor")
	if _, ok := q["status"]; !ok {
		status = string(breakDefaultStatus)
	}
	p := &dashPageView{Title: "Reconciliation breaks", Filters: &filters{Fields: []formField{
		{Name: "status", Label: "Status", Options: options(status, append([]string{""}, breakStatuses...)...)},
		{Name: "type", Label: "Type", Options: options(typ, append([]string{""}, breakTypeNames...)...)},
		{Name: "provider", Label: "Provider", Value: provider},
		{Name: "merchant", Label: "Merchant id", Value: merchant},
	}}}
	page, err := d.svc.ListReconciliationBreaks(r.Context(), paykit.BreakListParams{PageParams: paykit.PageParams{Cursor: cursor},
		Status: paykit.BreakStatus(status), Type: paykit.BreakType(typ), Provider: provider, MerchantID: merchant})
	code, n := http.StatusOK, (*notice)(nil)
	t := &table{Head: []string{"Break", "Type", "Status", "Provider", "Merchant", "Source", "Expected", "Reported", "Created"},
		Empty: "No breaks match."}
	if err != nil {
		code, n = failed(err)
	} else {
		for _, b := range page.Data {
			t.Rows = append(t.Rows, []cell{linked(b.ID, link(r, "/reconciliation/breaks/"+pathID(b.ID))), word(string(b.Type)),
				statusCell(string(b.Status)), text(b.Provider), breakMerchantCell(r, &b), breakSourceCell(r, &b),
				amountsCell(b.Expected), amountsCell(b.Reported), text(when(b.CreatedAt))})
		}
		pager(r, t, cursor, page.NextCursor)
	}
	sec := section{ID: "list", Table: t}
	if _, ok := q["status"]; !ok {
		sec.Text = "Open breaks: their funds stay pending until resolved. Choose a status, or Any for every break."
	}
	p.Sections = append(p.Sections, sec, section{ID: "runs", Fields: []field{
		{Label: "Settlement batches read", Value: linked("Reconciliation runs", link(r, "/reconciliation/runs"))}}})
	d.show(w, r, s, code, "/reconciliation", n, p)
	return nil
}

// breakMerchantCell links a break's merchant; a line unknown to paykit
// has none.
func breakMerchantCell(r *http.Request, b *paykit.ReconciliationBreak) cell {
	if b.MerchantID == "" {
		return text("none")
	}
	return merchantCell(r, b.MerchantID)
}

// breakSourceCell links the paykit record a break concerns to its page,
// in the break's merchant and environment.
func breakSourceCell(r *http.Request, b *paykit.ReconciliationBreak) cell {
	if b.Source == "" {
		return text("none")
	}
	var path string
	switch b.LineType {
	case "payment":
		path = "/payment_intents/"
	case "refund":
		path = "/refunds/"
	case "dispute", "dispute_reversal":
		path = "/disputes/"
	default:
		return mono(b.Source)
	}
	return linked(b.Source, link(r, path+pathID(b.Source), "merchant", b.MerchantID, "env", string(b.Environment)))
}

// amountsText is one side's money of a settlement line: amount and fee.
func amountsText(a *paykit.SettlementAmounts) string {
	if a == nil {
		return "none"
	}
	return formatMoney(a.Amount, a.Currency) + ", fee " + formatMoney(a.Fee, a.Currency)
}

// amountsCell is amountsText in a table: it may wrap on a phone.
func amountsCell(a *paykit.SettlementAmounts) cell { return text(amountsText(a)) }

func (d *dashboard) breakDetail(w http.ResponseWriter, r *http.Request, s *session) error {
	return d.showBreak(w, r, s, http.StatusOK, nil)
}

// showBreak renders a break; an open one with its resolve form.
func (d *dashboard) showBreak(w http.ResponseWriter, r *http.Request, s *session, status int, n *notice) error {
	b, err := d.svc.GetReconciliationBreak(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	env := string(b.Environment)
	if env == "" {
		env = "none"
	}
	f := []field{
		{Label: "Type", ID: "type", Value: word(string(b.Type))},
		{Label: "Status", ID: "status", Value: statusCell(string(b.Status))},
		{Label: "Provider", ID: "provider", Value: text(b.Provider)},
		{Label: "Merchant", ID: "merchant", Value: breakMerchantCell(r, b)},
		{Label: "Environment", Value: text(env)},
		{Label: "Source", ID: "source", Value: breakSourceCell(r, b)},
		{Label: "Line type", Value: text(b.LineType)},
		{Label: "Provider reference", Value: mono(b.Reference)},
		{Label: "Batch", Value: mono(b.Batch)},
		{Label: "Expected (paykit)", ID: "expected", Value: text(amountsText(b.Expected))},
		{Label: "Reported (Provider)", ID: "reported", Value: text(amountsText(b.Reported))},
	}
	if x, y := b.Expected, b.Reported; x != nil && y != nil && x.Currency == y.Currency {
		f = append(f, field{Label: "Net difference", ID: "difference",
			Value: text(formatMoney((y.Amount-y.Fee)-(x.Amount-x.Fee), x.Currency))})
	}
	f = append(f, field{Label: "Created", Value: text(when(b.CreatedAt))})
	if b.Status == paykit.BreakResolved {
		f = append(f, field{Label: "Resolution", ID: "resolution", Value: word(string(b.Resolution))},
			field{Label: "Note", ID: "note", Value: text(b.Note)},
			field{Label: "Resolved at", ID: "resolved-at", Value: text(whenPtr(b.ResolvedAt))})
	}
	p := &dashPageView{Title: "Reconciliation break " + b.ID, Sections: []section{{ID: "details", Heading: "Break", Fields: f}}}
	if b.Status == paykit.BreakOpen {
		p.Sections = append(p.Sections, resolveSection(r, b))
	}
	d.show(w, r, s, status, "/reconciliation", n, p)
	return nil
}

// resolveSection is the form that resolves an open break.
func resolveSection(r *http.Request, b *paykit.ReconciliationBreak) section {
	text := "accept_paykit settles the funds as paykit recorded them. accept_provider settles them as the Provider reported " +
		"and books the difference as an adjustment of the merchant's balance."
	switch {
	case b.MerchantID == "":
		text = "This line has no paykit record: resolving it moves no merchant's money."
	case b.Type == paykit.BreakMissingInReport:
		text = "accept_paykit settles the funds as paykit recorded them. accept_provider takes them out: the Provider never settled them."
	}
	return section{ID: "resolve", Heading: "Resolve", Text: text, Forms: []*form{{ID: "resolve-form",
		Action: link(r, "/reconciliation/breaks/"+pathID(b.ID)), Submit: "Resolve break", ButtonID: "resolve-submit",
		Hidden: []hidden{{"action", "resolve"}},
		Fields: []formField{
			{Name: "resolution", Label: "Resolution", Options: []option{
				{Value: string(paykit.ResolveAcceptPaykit), Label: "accept_paykit: as paykit recorded", Selected: true},
				{Value: string(paykit.ResolveAcceptProvider), Label: "accept_provider: as the Provider reported"}}},
			{Name: "note", Label: "Note (1 to 512 characters)", Type: "textarea", Required: true},
		}}}}
}

// breakAction resolves a break as the session's operator; the answer is
// the break, resolved or with the reason it was not.
func (d *dashboard) breakAction(w http.ResponseWriter, r *http.Request, s *session) error {
	var err error
	var done string
	switch r.PostFormValue("action") {
	case "resolve":
		var b *paykit.ReconciliationBreak
		b, err = d.svc.ResolveBreak(r.Context(), s.actor(), r.PathValue("id"), paykit.ResolveBreakRequest{
			Resolution: paykit.BreakResolution(r.PostFormValue("resolution")), Note: strings.TrimSpace(r.PostFormValue("note"))})
		if err == nil {
			done = "Break resolved: " + string(b.Resolution) + "."
		}
	default:
		err = unknownAction()
	}
	if err != nil {
		status, n := failed(err)
		return d.showBreak(w, r, s, status, n)
	}
	return d.showBreak(w, r, s, http.StatusOK, &notice{Text: done})
}

// reconciliationRuns lists the settlement batches read, newest first.
func (d *dashboard) reconciliationRuns(w http.ResponseWriter, r *http.Request, s *session) error {
	q := r.URL.Query()
	provider, cursor := q.Get("provider"), q.Get("cursor")
	p := &dashPageView{Title: "Reconciliation runs", Filters: &filters{Fields: []formField{{Name: "provider", Label: "Provider", Value: provider}}}}
	page, err := d.svc.ListReconciliationRuns(r.Context(), paykit.RunListParams{PageParams: paykit.PageParams{Cursor: cursor}, Provider: provider})
	code, n := http.StatusOK, (*notice)(nil)
	t := &table{Head: []string{"Run", "Provider", "Batch", "Lines", "Matched", "Breaks", "Started", "Finished"}, Empty: "No settlement batch read yet."}
	if err != nil {
		code, n = failed(err)
	} else {
		for _, run := range page.Data {
			breaks := cell{Text: strconv.Itoa(run.Breaks), Class: "num"}
			if run.Breaks > 0 {
				breaks.Tone = "bad"
			}
			t.Rows = append(t.Rows, []cell{mono(run.ID), text(run.Provider), mono(run.Batch), {Text: strconv.Itoa(run.Lines), Class: "num"},
				{Text: strconv.Itoa(run.Matched), Class: "num"}, breaks, text(when(run.StartedAt)), text(when(run.FinishedAt))})
		}
		pager(r, t, cursor, page.NextCursor)
	}
	p.Sections = append(p.Sections, section{ID: "list", Table: t}, section{ID: "queue", Fields: []field{
		{Label: "Breaks", Value: linked("Open reconciliation breaks", link(r, "/reconciliation"))}}})
	d.show(w, r, s, code, "/reconciliation", n, p)
	return nil
}

// paymentBreakPages bounds how many pages of a merchant's open breaks of
// a Provider a payment's page reads looking for the payment's own.
const paymentBreakPages = 5

// openBreaksOf returns the open breaks whose source is pi. The Service
// filters breaks by merchant and Provider, not by source: the page reads
// the merchant's open breaks of pi's Provider (few: each waits for an
// operator) and keeps pi's; more says the search stopped before the end.
func (d *dashboard) openBreaksOf(ctx context.Context, pi *paykit.PaymentIntent) (out []paykit.ReconciliationBreak, more bool, err error) {
	params := paykit.BreakListParams{PageParams: paykit.PageParams{Limit: contract.MaxPageLimit}, Status: paykit.BreakOpen,
		MerchantID: pi.MerchantID, Provider: pi.Provider}
	for range paymentBreakPages {
		page, err := d.svc.ListReconciliationBreaks(ctx, params)
		if err != nil {
			return nil, false, err
		}
		for _, b := range page.Data {
			if b.Source == pi.ID && b.Environment == pi.Environment {
				out = append(out, b)
			}
		}
		if !page.HasMore {
			return out, false, nil
		}
		params.Cursor = page.NextCursor
	}
	return out, true, nil
}

// paymentBreaksSection lists a payment's open breaks.
func paymentBreaksSection(r *http.Request, pi *paykit.PaymentIntent, breaks []paykit.ReconciliationBreak, more bool) section {
	t := &table{Head: []string{"Break", "Type", "Expected", "Reported", "Created"}, Empty: "No open break."}
	for _, b := range breaks {
		t.Rows = append(t.Rows, []cell{linked(b.ID, link(r, "/reconciliation/breaks/"+pathID(b.ID))), word(string(b.Type)),
			amountsCell(b.Expected), amountsCell(b.Reported), text(when(b.CreatedAt))})
	}
	sec := section{ID: "breaks", Heading: "Open reconciliation breaks", Table: t}
	if more {
		sec.Text = "Only the newest of this merchant's open breaks were searched; see all in the queue."
		sec.Fields = []field{{Label: "Queue", Value: linked("Open breaks of this merchant",
			link(r, "/reconciliation", "merchant", pi.MerchantID, "provider", pi.Provider))}}
	}
	return sec
}
