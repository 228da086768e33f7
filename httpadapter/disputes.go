package httpadapter

import (
	"net/http"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/internal/wire"
)

// routeDisputes adds the dispute and balance transaction routes of the
// merchant API, and their test helpers.
func (m *merchantAPI) routeDisputes() {
	m.handle("GET /disputes", m.auth(m.listDisputes))
	m.handle("GET /disputes/{id}", m.auth(serveGet(m, m.svc.GetDispute)))
	m.handle("POST /disputes/{id}/evidence", m.auth(m.submitDisputeEvidence))
	m.handle("POST /disputes/{id}/accept", m.auth(m.acceptDispute))
	m.handle("GET /balance_transactions", m.auth(m.listBalanceTransactions))
	m.handle("GET /balance_transactions/{id}", m.auth(serveGet(m, m.svc.GetBalanceTransaction)))
	m.handle("POST /test_helpers/payment_intents/{id}/dispute", m.auth(m.simulateDispute))
	m.handle("POST /test_helpers/settlements", m.auth(m.settleTestFunds))
}

// listDisputes serves GET /disputes: the query parameters of the other
// lists (status takes dispute statuses) and payment_intent.
func (m *merchantAPI) listDisputes(w http.ResponseWriter, r *http.Request, p paykit.Principal) error {
	q := r.URL.Query()
	f, err := listFilters(q, "payment_intent")
	if err != nil {
		return err
	}
	params := paykit.DisputeListParams{ListParams: paykit.ListParams[paykit.DisputeStatus]{
		PageParams: f.page, Currency: f.currency, Country: f.country, MerchantReference: f.reference,
		CreatedAfter: f.after, CreatedBefore: f.before,
	}}
	for _, s := range f.statuses {
		params.Statuses = append(params.Statuses, paykit.DisputeStatus(s))
	}
	if params.PaymentIntent, err = singleValue(q, "payment_intent"); err != nil {
		return err
	}
	page, err := m.svc.ListDisputes(r.Context(), p, params)
	if err != nil {
		return err
	}
	m.writeJSON(w, r, http.StatusOK, page)
	return nil
}

// listBalanceTransactions serves GET /balance_transactions: limit,
// cursor, status, currency, created_after, created_before, type (one or a
// comma-separated list) and source.
func (m *merchantAPI) listBalanceTransactions(w http.ResponseWriter, r *http.Request, p paykit.Principal) error {
	q := r.URL.Query()
	if err := allowQuery(q, "limit", "cursor", "status", "currency", "created_after", "created_before", "type", "source"); err != nil {
		return err
	}
	f, err := listFilters(q, "type", "source")
	if err != nil {
		return err
	}
	params := paykit.BalanceTransactionListParams{ListParams: paykit.ListParams[paykit.BalanceTransactionStatus]{
		PageParams: f.page, Currency: f.currency, CreatedAfter: f.after, CreatedBefore: f.before,
	}}
	for _, s := range f.statuses {
		params.Statuses = append(params.Statuses, paykit.BalanceTransactionStatus(s))
	}
	types, err := listValues(q, "type")
	if err != nil {
		return err
	}
	for _, t := range types {
		params.Types = append(params.Types, paykit.BalanceTransactionType(t))
	}
	if params.Source, err = singleValue(q, "source"); err != nil {
		return err
	}
	page, err := m.svc.ListBalanceTransactions(r.Context(), p, params)
	if err != nil {
		return err
	}
	m.writeJSON(w, r, http.StatusOK, page)
	return nil
}

// disputeEvidenceBody is the body of POST /disputes/{id}/evidence.
type disputeEvidenceBody struct {
	Text   string `json:"text" validate:"required,min=1,max=20000"`
	Submit *bool  `json:"submit,omitempty"`
}

// submitDisputeEvidence serves POST /disputes/{id}/evidence.
func (m *merchantAPI) submitDisputeEvidence(w http.ResponseWriter, r *http.Request, p paykit.Principal) error {
	if err := allowQuery(r.URL.Query()); err != nil {
		return err
	}
	key, err := idempotencyKey(r)
	if err != nil {
		return err
	}
	var body disputeEvidenceBody
	if _, err := decodeBody(w, r, &body); err != nil {
		return err
	}
	req := paykit.DisputeEvidenceRequest{Text: body.Text, Submit: body.Submit != nil && *body.Submit}
	d, ans, err := m.svc.SubmitDisputeEvidence(r.Context(), p, key, r.PathValue("id"), req)
	if err != nil {
		return err
	}
	m.writeAnswer(w, r, d, ans)
	return nil
}

// acceptDispute serves POST /disputes/{id}/accept: an empty body (or {}).
func (m *merchantAPI) acceptDispute(w http.ResponseWriter, r *http.Request, p paykit.Principal) error {
	if err := allowQuery(r.URL.Query()); err != nil {
		return err
	}
	key, err := idempotencyKey(r)
	if err != nil {
		return err
	}
	if err := decodeOptionalBody(w, r, &testHelperRequest{}); err != nil {
		return err
	}
	d, ans, err := m.svc.AcceptDispute(r.Context(), p, key, r.PathValue("id"))
	if err != nil {
		return err
	}
	m.writeAnswer(w, r, d, ans)
	return nil
}

// simulateDisputeBody is the body of the dispute test helper: nothing, or
// {amount?, reason?}.
type simulateDisputeBody struct {
	Amount *string `json:"amount,omitempty" validate:"omitempty,amount"`
	Reason *string `json:"reason,omitempty"`
}

// simulateDispute serves POST /test_helpers/payment_intents/{id}/dispute.
// For a live key the route does not exist.
func (m *merchantAPI) simulateDispute(w http.ResponseWriter, r *http.Request, p paykit.Principal) error {
	if p.Environment != paykit.Test {
		return errUnknownRoute(r)
	}
	if err := allowQuery(r.URL.Query()); err != nil {
		return err
	}
	var body simulateDisputeBody
	if err := decodeOptionalBody(w, r, &body); err != nil {
		return err
	}
	var req paykit.SimulateDisputeRequest
	if body.Amount != nil {
		amount, err := wire.ParseAmount(*body.Amount)
		if err != nil {
			return invalidRequest("amount", "amount must be a string of minor units.")
		}
		req.Amount = amount
	}
	if body.Reason != nil {
		if *body.Reason == "" {
			return invalidRequest("reason", "reason must not be empty.")
		}
		req.Reason = paykit.DisputeReason(*body.Reason)
	}
	d, err := m.svc.SimulateDispute(r.Context(), p, r.PathValue("id"), req)
	if err != nil {
		return err
	}
	m.writeJSON(w, r, http.StatusOK, d)
	return nil
}

// settleTestFunds serves POST /test_helpers/settlements (no body).
func (m *merchantAPI) settleTestFunds(w http.ResponseWriter, r *http.Request, p paykit.Principal) error {
	if p.Environment != paykit.Test {
		return errUnknownRoute(r)
	}
	if err := allowQuery(r.URL.Query()); err != nil {
		return err
	}
	if err := decodeOptionalBody(w, r, &testHelperRequest{}); err != nil {
		return err
	}
	batches, err := m.svc.SettleTestFunds(r.Context(), p)
	if err != nil {
		return err
	}
	m.writeJSON(w, r, http.StatusOK, settlementBatchesView(batches))
	return nil
}

type settlementBatchJSON struct {
	Object    string `json:"object"`
	ID        string `json:"id"`
	Currency  string `json:"currency"`
	SettledAt string `json:"settled_at"`
	Lines     int    `json:"lines"`
	Gross     string `json:"gross"`
	Fee       string `json:"fee"`
	Net       string `json:"net"`
}

// settlementBatchesView is the list envelope of settlement batches: each
// with its count of lines and their sums.
func settlementBatchesView(batches []paykit.SettlementBatch) listView {
	data := make([]any, len(batches))
	for i, b := range batches {
		var gross, fee int64
		for _, l := range b.Lines {
			gross += l.Amount
			fee += l.Fee
		}
		data[i] = settlementBatchJSON{"settlement_batch", b.Reference, b.Currency, formatTime(b.SettledAt), len(b.Lines),
			amount(gross), amount(fee), amount(gross - fee)}
	}
	return listView{Object: "list", Data: data}
}
