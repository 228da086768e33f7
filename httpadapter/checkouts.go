package httpadapter

import (
	"net/http"

	"github.com/paykit/paykit"
)

// Merchant checkout routes (the payer's side is checkout_pay.go).
func (m *merchantAPI) routeMerchantCheckouts() {
	m.handle("POST /checkouts", m.auth(serveCreate[createCheckoutBody](m, m.svc.CreateCheckout)))
	m.handle("GET /checkouts", m.auth(serveList(m, m.svc.ListCheckouts)))
	m.handle("GET /checkouts/{id}", m.auth(serveGet(m, m.svc.GetCheckout)))
	m.handle("POST /checkouts/{id}/cancel", m.auth(m.cancelCheckout))
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
	co, ans, err := m.svc.CancelCheckout(r.Context(), p, key, r.PathValue("id"))
	if err != nil {
		return err
	}
	m.writeAnswer(w, r, co, ans)
	return nil
}
