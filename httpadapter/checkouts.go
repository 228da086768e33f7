package httpadapter

import (
	"net/http"

	"github.com/paykit/paykit"
)

// Merchant checkout routes (the payer's side is checkout_pay.go).
func (m *merchantAPI) routeMerchantCheckouts() {
	m.handle("POST /checkouts", m.auth(m.createCheckout))
	m.handle("GET /checkouts", m.auth(serveList(m, m.svc.ListCheckouts)))
	m.handle("GET /checkouts/{id}", m.auth(m.getCheckout))
	m.handle("POST /checkouts/{id}/cancel", m.auth(m.cancelCheckout))
}

// createCheckout serves POST /checkouts under the Idempotency-Key; the
// answer (201, or the stored one on a replay) is written as stored.
func (m *merchantAPI) createCheckout(w http.ResponseWriter, r *http.Request, p paykit.Principal) error {
	if err := allowQuery(r.URL.Query()); err != nil {
		return err
	}
	key, err := idempotencyKey(r)
	if err != nil {
		return err
	}
	var req paykit.CreateCheckoutRequest
	if _, err := decodeBody(w, r, &req); err != nil {
		return err
	}
	resp, err := m.svc.CreateCheckout(r.Context(), p, key, req)
	if err != nil {
		return err
	}
	writeStored(w, resp)
	return nil
}

func (m *merchantAPI) getCheckout(w http.ResponseWriter, r *http.Request, p paykit.Principal) error {
	if err := allowQuery(r.URL.Query()); err != nil {
		return err
	}
	c, err := m.svc.GetCheckout(r.Context(), p, r.PathValue("id"))
	if err != nil {
		return err
	}
	m.writeJSON(w, r, http.StatusOK, c)
	return nil
}

// checkoutCancelRequest is the body of a checkout cancel: nothing, or {}.
type checkoutCancelRequest struct{}

// cancelCheckout serves POST /checkouts/{id}/cancel: 200 with the
// projection.
func (m *merchantAPI) cancelCheckout(w http.ResponseWriter, r *http.Request, p paykit.Principal) error {
	if err := allowQuery(r.URL.Query()); err != nil {
		return err
	}
	key, err := idempotencyKey(r)
	if err != nil {
		return err
	}
	if err := decodeOptionalBody(w, r, &checkoutCancelRequest{}); err != nil {
		return err
	}
	resp, err := m.svc.CancelCheckout(r.Context(), p, key, r.PathValue("id"))
	if err != nil {
		return err
	}
	writeStored(w, resp)
	return nil
}
