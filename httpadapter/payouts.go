package httpadapter

import (
	"net/http"

	"github.com/paykit/paykit"
)

// Merchant payout routes.
func (m *merchantAPI) routePayouts() {
	m.handle("POST /payout_intents", m.auth(serveCreate[createPayoutIntentBody](m, m.svc.CreatePayoutIntent)))
	m.handle("GET /payout_intents", m.auth(serveList(m, m.svc.ListPayoutIntents)))
	m.handle("GET /payout_intents/{id}", m.auth(serveGet(m, m.svc.GetPayoutIntent)))
	m.handle("POST /payout_intents/{id}/cancel", m.auth(m.cancelPayoutIntent))
	m.handle("GET /balances", m.auth(m.listBalances))
	m.handle("POST /test_helpers/payout_intents/{id}/return", m.auth(m.returnPayoutIntent))
}

// cancelPayoutIntent serves POST /payout_intents/{id}/cancel: an empty body
// or {"reason": ...}.
func (m *merchantAPI) cancelPayoutIntent(w http.ResponseWriter, r *http.Request, p paykit.Principal) error {
	if err := allowQuery(r.URL.Query()); err != nil {
		return err
	}
	key, err := idempotencyKey(r)
	if err != nil {
		return err
	}
	var req cancelRequest
	if err := decodeOptionalBody(w, r, &req); err != nil {
		return err
	}
	po, ans, err := m.svc.CancelPayoutIntent(r.Context(), p, key, r.PathValue("id"), paykit.CancelPayoutIntentRequest{Reason: req.reason()})
	if err != nil {
		return err
	}
	m.writeAnswer(w, r, po, ans)
	return nil
}

func (m *merchantAPI) listBalances(w http.ResponseWriter, r *http.Request, p paykit.Principal) error {
	if err := allowQuery(r.URL.Query()); err != nil {
		return err
	}
	page, err := m.svc.ListBalances(r.Context(), p)
	if err != nil {
		return err
	}
	m.writeJSON(w, r, http.StatusOK, page)
	return nil
}

// returnPayoutIntent serves /test_helpers/payout_intents/{id}/return: the
// bank returns a succeeded test payout. Like the payment test helpers, the
// route does not exist for a live key.
func (m *merchantAPI) returnPayoutIntent(w http.ResponseWriter, r *http.Request, p paykit.Principal) error {
	if p.Environment != paykit.Test {
		return errUnknownRoute(r)
	}
	if err := allowQuery(r.URL.Query()); err != nil {
		return err
	}
	if err := decodeOptionalBody(w, r, &testHelperRequest{}); err != nil {
		return err
	}
	po, err := m.svc.SimulateReturn(r.Context(), p, r.PathValue("id"))
	if err != nil {
		return err
	}
	m.writeJSON(w, r, http.StatusOK, po)
	return nil
}

// Operator payout routes.
func (o *operatorAPI) routePayouts() {
	o.handle("GET /payout_intents", o.auth(o.listPayoutApprovals))
	o.handle("POST /payout_intents/{id}/approve", o.auth(o.approvePayout))
	o.handle("POST /payout_intents/{id}/reject", o.auth(o.rejectPayout))
	o.handle("POST /merchants/{id}/balance_adjustments", o.auth(o.adjustBalance))
}

// listPayoutApprovals serves GET /payout_intents?approval_status=pending,
// the approval queue of every merchant. approval_status is required: the
// operator API lists nothing else.
func (o *operatorAPI) listPayoutApprovals(w http.ResponseWriter, r *http.Request, _ string) error {
	q := r.URL.Query()
	if err := allowQuery(q, "approval_status", "limit", "cursor"); err != nil {
		return err
	}
	status, err := singleValue(q, "approval_status")
	if err != nil {
		return err
	}
	if status != "pending" {
		return invalidRequest("approval_status", "approval_status is required and must be pending.")
	}
	params, err := pageParams(q)
	if err != nil {
		return err
	}
	page, err := o.svc.ListPendingApprovals(r.Context(), params)
	if err != nil {
		return err
	}
	o.writeJSON(w, r, http.StatusOK, page)
	return nil
}

type approvePayoutRequest struct {
	Note string `json:"note,omitempty" validate:"omitempty,max=512"`
}

func (o *operatorAPI) approvePayout(w http.ResponseWriter, r *http.Request, actor string) error {
	if err := allowQuery(r.URL.Query()); err != nil {
		return err
	}
	var req approvePayoutRequest
	if err := decodeOptionalBody(w, r, &req); err != nil {
		return err
	}
	po, err := o.svc.ApprovePayout(r.Context(), actor, r.PathValue("id"), req.Note)
	if err != nil {
		return err
	}
	o.writeJSON(w, r, http.StatusOK, po)
	return nil
}

type rejectPayoutRequest struct {
	Reason string `json:"reason" validate:"required,min=1,max=512"`
}

func (o *operatorAPI) rejectPayout(w http.ResponseWriter, r *http.Request, actor string) error {
	if err := allowQuery(r.URL.Query()); err != nil {
		return err
	}
	var req rejectPayoutRequest
	if _, err := decodeBody(w, r, &req); err != nil {
		return err
	}
	po, err := o.svc.RejectPayout(r.Context(), actor, r.PathValue("id"), req.Reason)
	if err != nil {
		return err
	}
	o.writeJSON(w, r, http.StatusOK, po)
	return nil
}

func (o *operatorAPI) adjustBalance(w http.ResponseWriter, r *http.Request, actor string) error {
	if err := allowQuery(r.URL.Query()); err != nil {
		return err
	}
	var body balanceAdjustmentBody
	if _, err := decodeBody(w, r, &body); err != nil {
		return err
	}
	req, err := body.request()
	if err != nil {
		return err
	}
	adj, err := o.svc.AdjustBalance(r.Context(), actor, r.PathValue("id"), req)
	if err != nil {
		return err
	}
	o.writeJSON(w, r, http.StatusCreated, adj)
	return nil
}
