package httpadapter

import (
	"context"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/internal/contract"
	"github.com/paykit/paykit/internal/enums"
	"github.com/paykit/paykit/internal/monitor"
)

// overviewMerchants is how many of the newest merchants the overview shows
// balances and failing webhook endpoints of.
const overviewMerchants = 10

// overview: what needs attention, the picked merchant's last 24 hours by
// status, and balances. The attention counts are read with a bound of
// contract.MaxPageLimit (shown as "100+"); the 24-hour counts are exact.
func (d *dashboard) overview(w http.ResponseWriter, r *http.Request, s *session) error {
	ctx := r.Context()
	sc, merchants, err := d.pickScope(r)
	if err != nil {
		return err
	}
	bound := paykit.PageParams{Limit: contract.MaxPageLimit}
	approvals, err := d.svc.ListPendingApprovals(ctx, bound)
	if err != nil {
		return err
	}
	attention, err := d.svc.ListJobs(ctx, paykit.JobListParams{PageParams: bound, State: jobsDefaultState})
	if err != nil {
		return err
	}
	retrying, err := d.svc.ListJobs(ctx, paykit.JobListParams{PageParams: bound, State: paykit.JobRetrying})
	if err != nil {
		return err
	}
	stats, err := d.svc.JobStats(ctx)
	if err != nil {
		return internalError(err)
	}
	bt := &table{Head: []string{"Merchant", "Environment", "Currency", "Available", "Pending", "Reserved"}, Empty: "No balances yet."}
	ft := &table{Head: []string{"Endpoint", "Merchant", "URL", "Status"}, Empty: "No webhook endpoint is disabled."}
	// The newest merchants are the first the picker offers.
	for _, m := range merchants[:min(len(merchants), overviewMerchants)] {
		for _, env := range []paykit.Environment{paykit.Test, paykit.Live} {
			bals, err := d.svc.ListBalances(ctx, paykit.Principal{Scope: paykit.Scope{MerchantID: m.ID, Environment: env}})
			if err != nil {
				return err
			}
			for _, b := range bals.Data {
				bt.Rows = append(bt.Rows, []cell{linked(m.Name, link(r, "/merchants/"+pathID(m.ID))), text(string(env)), text(b.Currency),
					balanceMoney(b.Available, b.Currency), money(b.Pending, b.Currency), money(b.Reserved, b.Currency)})
			}
		}
		eps, err := d.svc.ListWebhookEndpoints(ctx, m.ID)
		if err != nil {
			return err
		}
		for _, e := range eps.Data {
			// What a merchant disabled or deleted itself needs no operator.
			if e.Status != paykit.WebhookEnabled && e.DisabledReason != paykit.DisabledByMerchant && e.DisabledReason != paykit.DisabledDeleted {
				ft.Rows = append(ft.Rows, []cell{linked(e.ID, link(r, "/webhook_endpoints/"+pathID(e.ID))), text(m.Name), mono(e.URL),
					statusCell(e.Status + " (" + e.DisabledReason + ")")})
			}
		}
	}
	p := &dashPageView{Title: "Overview", Scope: sc.view}
	p.Sections = append(p.Sections, section{ID: "attention", Heading: "Needs attention", Stats: []stat{
		{count(len(approvals.Data), approvals.HasMore), "payouts wait for approval", link(r, "/approvals")},
		{count(len(attention.Data), attention.HasMore), "jobs need attention", link(r, "/jobs")}, // the jobs page's default
		{count(len(retrying.Data), retrying.HasMore), "jobs retrying", link(r, "/jobs", "state", string(paykit.JobRetrying))},
		{strconv.Itoa(stats.Stale.PaymentIntents), "payments processing past their stale time (all merchants)", link(r, "/payment_intents", append(sc.params(), "status", "processing")...)},
		{strconv.Itoa(stats.Stale.PayoutIntents), "payouts processing past their stale time (all merchants)", link(r, "/payouts", append(sc.params(), "status", "processing")...)},
		{strconv.Itoa(len(ft.Rows)), "webhook endpoints disabled", ""},
	}})
	if ps := monitor.ProviderStates(d.svc); len(ps) > 0 {
		pt := &table{Head: []string{"Provider", "State"}}
		for _, st := range ps {
			state := statusCell("enabled")
			switch {
			case st.Disabled:
				state = statusCell("disabled")
			case st.CircuitOpen:
				state = cell{Text: "circuit open until " + when(st.OpenUntil), Tone: "bad"}
			}
			pt.Rows = append(pt.Rows, []cell{text(st.Name), state})
		}
		p.Sections = append(p.Sections, section{ID: "providers", Heading: "Providers (this instance)", Table: pt})
	}
	if len(ft.Rows) > 0 {
		p.Sections = append(p.Sections, section{ID: "failing-endpoints", Heading: "Disabled webhook endpoints", Table: ft})
	}
	if sc.MerchantID != "" {
		day, err := d.dayCounts(ctx, r, sc)
		if err != nil {
			return err
		}
		p.Sections = append(p.Sections, day...)
	}
	p.Sections = append(p.Sections, section{ID: "balances", Heading: "Balances", Text: "The " + strconv.Itoa(overviewMerchants) + " newest merchants.", Table: bt})
	d.show(w, r, s, http.StatusOK, "/", nil, p)
	return nil
}

// dayCounts counts the picked merchant's payments, checkouts, payouts and
// refunds created in the last 24 hours, by status (one grouped count each).
func (d *dashboard) dayCounts(ctx context.Context, r *http.Request, sc scoped) ([]section, error) {
	since := d.svc.Now().Add(-24 * time.Hour)
	kinds := []struct {
		kind            string
		id, heading, to string
		statuses        []string
	}{
		{"payment_intent", "payments-24h", "Payments, last 24 hours", "/payment_intents", enums.PaymentStatuses},
		{"checkout", "checkouts-24h", "Checkouts, last 24 hours", "/checkouts", enums.CheckoutStatuses},
		{"payout_intent", "payouts-24h", "Payouts, last 24 hours", "/payouts", enums.PayoutStatuses},
		{"refund", "refunds-24h", "Refunds, last 24 hours", "/refunds", enums.RefundStatuses},
	}
	var out []section
	for i, k := range kinds {
		counts, err := d.svc.StatusCounts(ctx, sc.principal(), k.kind, since)
		if err != nil {
			return nil, err
		}
		sec := section{ID: k.id, Heading: k.heading}
		if i == 0 {
			sec.Text = "Merchant " + sc.MerchantID + ", " + string(sc.Environment) + "."
		}
		for _, st := range k.statuses {
			sec.Stats = append(sec.Stats, stat{strconv.Itoa(counts[st]), st, link(r, k.to, append(sc.params(), "status", st)...)})
		}
		out = append(out, sec)
	}
	return out, nil
}

// Actions: each POST goes to the page it acts on, with the form field
// action naming what to do; the answer is that page with a notice.

// payoutAction approves or rejects a pending approval of the page's scope
// (merchant and environment, which the URL must name, as the page's form
// does). A payout
// outside that scope (a stale or hand-made URL) is refused before
// anything is done. The answer is the payout acted on.
func (d *dashboard) payoutAction(w http.ResponseWriter, r *http.Request, s *session) error {
	ctx, id := r.Context(), r.PathValue("id")
	q := r.URL.Query()
	q.Del("confirm")
	r.URL.RawQuery = q.Encode()
	// The scope is the URL's, never a default that may have changed
	// since the page was shown.
	if q.Get("merchant") == "" || q.Get("env") == "" {
		return invalidRequest("", "This form does not name the merchant and environment it was shown for. Nothing was done. Open the payout again from the approval queue.")
	}
	sc := scopeOf(r, paykit.Scope{})
	// A payout never changes merchant or environment: checked here, the
	// scope holds for the action below.
	if _, err := d.svc.GetPayoutIntent(ctx, sc.principal(), id); err != nil {
		if paykit.ErrorCode(err) == paykit.CodeNotFound {
			return outOfScope("payout", id, sc)
		}
		return err
	}
	var po *paykit.PayoutIntent
	var err error
	var done string
	switch r.PostFormValue("action") {
	case "approve":
		po, err = d.svc.ApprovePayout(ctx, s.actor(), id, strings.TrimSpace(r.PostFormValue("note")))
		done = "Payout approved."
	case "reject":
		po, err = d.svc.RejectPayout(ctx, s.actor(), id, strings.TrimSpace(r.PostFormValue("reason")))
		done = "Payout rejected."
	default:
		err = unknownAction()
	}
	if err != nil {
		status, n := failed(err)
		return d.showPayout(w, r, s, status, n)
	}
	return d.renderPayout(w, r, s, sc, po, http.StatusOK, &notice{Text: done})
}

// outOfScope refuses an action on a resource that is not of the page's
// scope.
func outOfScope(what, id string, sc scoped) error {
	return errorf(paykit.CodeNotFound, "", "The %s %s is not one of merchant %s in %s, the merchant and environment this page is for. Nothing was done. Open it again from the approval queue or its merchant's list.",
		what, id, sc.MerchantID, sc.Environment)
}

func unknownAction() error { return invalidRequest("action", "Unknown action.") }

// merchantsAction creates a merchant and shows its page.
func (d *dashboard) merchantsAction(w http.ResponseWriter, r *http.Request, s *session) error {
	if r.PostFormValue("action") != "create" {
		status, n := failed(unknownAction())
		return d.showMerchants(w, r, s, status, n)
	}
	m, err := d.svc.CreateMerchant(r.Context(), s.actor(), r.PostFormValue("name"))
	if err != nil {
		status, n := failed(err)
		return d.showMerchants(w, r, s, status, n)
	}
	r.SetPathValue("id", m.ID)
	return d.showMerchant(w, r, s, http.StatusOK, &notice{Text: "Merchant " + m.Name + " created."}, nil)
}

// merchantAction: create_key, revoke_key, adjust_balance, create_endpoint.
func (d *dashboard) merchantAction(w http.ResponseWriter, r *http.Request, s *session) error {
	ctx, id, f := r.Context(), r.PathValue("id"), r.PostFormValue
	var secret *secretView
	var done string
	var err error
	switch f("action") {
	case "create_key":
		var k *paykit.NewAPIKey
		if k, err = d.svc.CreateAPIKey(ctx, s.actor(), id, paykit.Environment(f("environment"))); err == nil {
			secret = &secretView{Label: "Secret key of " + k.PublicKey, Value: k.SecretKey}
			done = "API key " + k.ID + " created."
		}
	case "revoke_key":
		// Only a key of this merchant: checked before anything is revoked.
		var keys []paykit.APIKey
		if keys, err = d.svc.ListAPIKeys(ctx, id); err == nil {
			if !slices.ContainsFunc(keys, func(k paykit.APIKey) bool { return k.ID == f("key") }) {
				err = errorf(paykit.CodeNotFound, "", "No such API key.")
			} else if _, err = d.svc.RevokeAPIKey(ctx, s.actor(), f("key")); err == nil {
				done = "API key " + f("key") + " revoked."
			}
		}
	case "adjust_balance":
		currency := strings.ToUpper(strings.TrimSpace(f("currency")))
		var amount int64
		if amount, err = parseMoney(f("amount"), currency); err == nil {
			var adj *paykit.BalanceAdjustment
			adj, err = d.svc.AdjustBalance(ctx, s.actor(), id, paykit.BalanceAdjustmentRequest{Environment: paykit.Environment(f("environment")),
				Currency: currency, Amount: amount, Reason: strings.TrimSpace(f("reason"))})
			if err == nil {
				done = "Balance adjusted by " + formatMoney(adj.Amount, adj.Currency) + "; available now " + formatMoney(adj.Balance.Available, adj.Currency) + "."
			}
		}
	case "create_endpoint":
		var ep *paykit.NewWebhookSecret
		if ep, err = d.svc.CreateWebhookEndpoint(ctx, s.actor(), id, paykit.CreateWebhookEndpointRequest{Environment: f("environment"), URL: strings.TrimSpace(f("url"))}); err == nil {
			secret = &secretView{Label: "Signing secret of " + ep.Endpoint.ID, Value: ep.Secret}
			done = "Webhook endpoint " + ep.Endpoint.ID + " added."
		}
	default:
		err = unknownAction()
	}
	if err != nil {
		status, n := failed(err)
		return d.showMerchant(w, r, s, status, n, nil)
	}
	return d.showMerchant(w, r, s, http.StatusOK, &notice{Text: done}, secret)
}

// endpointAction: resend, enable, disable, resume, rotate.
func (d *dashboard) endpointAction(w http.ResponseWriter, r *http.Request, s *session) error {
	ctx, id, f := r.Context(), r.PathValue("id"), r.PostFormValue
	var secret *secretView
	var done string
	var err error
	switch f("action") {
	case "resend":
		event := strings.TrimSpace(f("event"))
		if err = d.svc.ResendEvent(ctx, s.actor(), id, event); err == nil {
			done = "Event " + event + " will be sent again in a moment."
		}
	case "enable", "disable":
		if _, err = d.svc.SetWebhookEndpointEnabled(ctx, s.actor(), id, f("action") == "enable"); err == nil {
			done = "Endpoint " + f("action") + "d."
		}
	case "resume":
		if _, err = d.svc.ResumeWebhookEndpoint(ctx, s.actor(), id); err == nil {
			done = "Deliveries resumed; those that waited are sent now."
		}
	case "rotate":
		var ns *paykit.NewWebhookSecret
		if ns, err = d.svc.RotateWebhookSecret(ctx, s.actor(), id, contract.DefaultSecretOverlap); err == nil {
			secret = &secretView{Label: "New signing secret", Value: ns.Secret}
			done = "Secret rotated; the previous one signs for 24 hours more."
		}
	default:
		err = unknownAction()
	}
	if err != nil {
		status, n := failed(err)
		return d.showEndpoint(w, r, s, status, n, nil)
	}
	return d.showEndpoint(w, r, s, http.StatusOK, &notice{Text: done}, secret)
}
