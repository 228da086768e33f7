package httpadapter

import (
	"context"
	"net/http"

	"github.com/paykit/paykit"
)

// routeWebhookEndpoints adds the merchant's own webhook endpoints to the
// merchant API.
func (m *merchantAPI) routeWebhookEndpoints() {
	m.handle("POST /webhook_endpoints", m.auth(m.createWebhookEndpoint))
	m.handle("GET /webhook_endpoints", m.auth(m.listWebhookEndpoints))
	m.handle("GET /webhook_endpoints/{id}", m.auth(serveGet(m, m.svc.GetMerchantWebhookEndpoint)))
	m.handle("POST /webhook_endpoints/{id}", m.auth(serveEndpointAction(m, m.svc.UpdateMerchantWebhookEndpoint)))
	m.handle("DELETE /webhook_endpoints/{id}", m.auth(serveEndpointAction(m, m.deleteWebhookEndpoint)))
	m.handle("POST /webhook_endpoints/{id}/rotate_secret", m.auth(serveEndpointAction(m, m.rotateWebhookSecret)))
}

// createWebhookEndpoint serves POST /webhook_endpoints under its
// Idempotency-Key: 201 with the endpoint and its secret.
func (m *merchantAPI) createWebhookEndpoint(w http.ResponseWriter, r *http.Request, p paykit.Principal) error {
	if err := allowQuery(r.URL.Query()); err != nil {
		return err
	}
	key, err := idempotencyKey(r)
	if err != nil {
		return err
	}
	var req paykit.CreateMerchantWebhookEndpointRequest
	if _, err := decodeBody(w, r, &req); err != nil {
		return err
	}
	v, ans, err := m.svc.CreateMerchantWebhookEndpoint(r.Context(), p, key, req)
	if err != nil {
		return err
	}
	m.writeAnswer(w, r, v, ans)
	return nil
}

// listWebhookEndpoints serves GET /webhook_endpoints: newest first, with
// limit and cursor.
func (m *merchantAPI) listWebhookEndpoints(w http.ResponseWriter, r *http.Request, p paykit.Principal) error {
	q := r.URL.Query()
	if err := allowQuery(q, "limit", "cursor"); err != nil {
		return err
	}
	params, err := pageParams(q)
	if err != nil {
		return err
	}
	page, err := m.svc.ListMerchantWebhookEndpoints(r.Context(), p, params)
	if err != nil {
		return err
	}
	m.writeJSON(w, r, http.StatusOK, page)
	return nil
}

// serveEndpointAction serves a POST or DELETE on /webhook_endpoints/{id}:
// an optional body Req, then 200 with what act answers.
func serveEndpointAction[Req any, T any](m *merchantAPI, act func(context.Context, paykit.Principal, string, Req) (T, error)) func(http.ResponseWriter, *http.Request, paykit.Principal) error {
	return func(w http.ResponseWriter, r *http.Request, p paykit.Principal) error {
		if err := allowQuery(r.URL.Query()); err != nil {
			return err
		}
		var req Req
		if err := decodeOptionalBody(w, r, &req); err != nil {
			return err
		}
		v, err := act(r.Context(), p, r.PathValue("id"), req)
		if err != nil {
			return err
		}
		m.writeJSON(w, r, http.StatusOK, v)
		return nil
	}
}

// deletedJSON is the answer of a deletion.
type deletedJSON struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Deleted bool   `json:"deleted"`
}

// deleteWebhookEndpoint deletes an endpoint; the body, if any, must be
// empty or {}.
func (m *merchantAPI) deleteWebhookEndpoint(ctx context.Context, p paykit.Principal, id string, _ struct{}) (deletedJSON, error) {
	v, err := m.svc.DeleteMerchantWebhookEndpoint(ctx, p, id)
	if err != nil {
		return deletedJSON{}, err
	}
	return deletedJSON{v.ID, "webhook_endpoint", true}, nil
}

// rotateWebhookSecret rotates an endpoint's secret; the body, if any, must
// be empty or {}.
func (m *merchantAPI) rotateWebhookSecret(ctx context.Context, p paykit.Principal, id string, _ struct{}) (*paykit.NewWebhookSecret, error) {
	return m.svc.RotateMerchantWebhookSecret(ctx, p, id)
}
