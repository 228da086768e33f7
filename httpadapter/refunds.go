package httpadapter

import (
	"net/http"

	"github.com/paykit/paykit"
)

// routeRefunds adds the refund routes of the merchant API.
func (m *merchantAPI) routeRefunds() {
	m.handle("POST /refunds", m.auth(serveCreate[createRefundBody](m, m.svc.CreateRefund)))
	m.handle("GET /refunds", m.auth(m.listRefunds))
	m.handle("GET /refunds/{id}", m.auth(serveGet(m, m.svc.GetRefund)))
}

// listRefunds serves GET /refunds: the query parameters of the other lists
// (status takes refund statuses) and payment_intent.
func (m *merchantAPI) listRefunds(w http.ResponseWriter, r *http.Request, p paykit.Principal) error {
	q := r.URL.Query()
	f, err := listFilters(q, "payment_intent")
	if err != nil {
		return err
	}
	params := paykit.RefundListParams{ListParams: paykit.ListParams[paykit.RefundStatus]{
		PageParams: f.page, Currency: f.currency, Country: f.country, MerchantReference: f.reference,
		CreatedAfter: f.after, CreatedBefore: f.before,
	}}
	for _, s := range f.statuses {
		params.Statuses = append(params.Statuses, paykit.RefundStatus(s))
	}
	if params.PaymentIntent, err = singleValue(q, "payment_intent"); err != nil {
		return err
	}
	page, err := m.svc.ListRefunds(r.Context(), p, params)
	if err != nil {
		return err
	}
	m.writeJSON(w, r, http.StatusOK, page)
	return nil
}
