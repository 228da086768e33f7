package httpadapter

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/internal/contract"
)

// Merchant event routes: the event log of the key's merchant and
// environment.
func (m *merchantAPI) routeEvents() {
	m.handle("GET /events", m.auth(m.listEvents))
	m.handle("GET /events/{id}", m.auth(serveGet(m, m.svc.GetEvent)))
}

func (m *merchantAPI) listEvents(w http.ResponseWriter, r *http.Request, p paykit.Principal) error {
	q := r.URL.Query()
	if err := allowQuery(q, "limit", "cursor", "type", "created_after", "created_before"); err != nil {
		return err
	}
	var params paykit.EventListParams
	var err error
	if params.PageParams, err = pageParams(q); err != nil {
		return err
	}
	if params.Types, err = listValues(q, "type"); err != nil {
		return err
	}
	if params.CreatedAfter, err = timeValue(q, "created_after"); err != nil {
		return err
	}
	if params.CreatedBefore, err = timeValue(q, "created_before"); err != nil {
		return err
	}
	page, err := m.svc.ListEvents(r.Context(), p, params)
	if err != nil {
		return err
	}
	m.writeJSON(w, r, http.StatusOK, page)
	return nil
}

// Operator webhook endpoint routes.
func (o *operatorAPI) routeWebhooks() {
	o.handle("POST /merchants/{id}/webhook_endpoints", o.auth(o.createWebhookEndpoint))
	o.handle("GET /merchants/{id}/webhook_endpoints", o.auth(serveByID(o, o.svc.ListWebhookEndpoints)))
	o.handle("POST /webhook_endpoints/{id}/rotate_secret", o.auth(o.rotateWebhookSecret))
	setEnabled := func(enabled bool) func(ctx context.Context, actor, id string) (*paykit.WebhookEndpoint, error) {
		return func(ctx context.Context, actor, id string) (*paykit.WebhookEndpoint, error) {
			return o.svc.SetWebhookEndpointEnabled(ctx, actor, id, enabled)
		}
	}
	o.handle("POST /webhook_endpoints/{id}/enable", o.auth(o.endpointAction(setEnabled(true))))
	o.handle("POST /webhook_endpoints/{id}/disable", o.auth(o.endpointAction(setEnabled(false))))
	o.handle("POST /webhook_endpoints/{id}/resume", o.auth(o.endpointAction(o.svc.ResumeWebhookEndpoint)))
	o.handle("GET /webhook_endpoints/{id}", o.auth(serveByID(o, o.svc.GetWebhookEndpoint)))
	o.handle("GET /webhook_endpoints/{id}/attempts", o.auth(servePaged(o, func(r *http.Request, p paykit.PageParams) (*paykit.Page[paykit.WebhookAttempt], error) {
		return o.svc.ListWebhookAttempts(r.Context(), r.PathValue("id"), p)
	})))
}

func (o *operatorAPI) createWebhookEndpoint(w http.ResponseWriter, r *http.Request, actor string) error {
	if err := allowQuery(r.URL.Query()); err != nil {
		return err
	}
	var req paykit.CreateWebhookEndpointRequest
	if _, err := decodeBody(w, r, &req); err != nil {
		return err
	}
	ep, err := o.svc.CreateWebhookEndpoint(r.Context(), actor, r.PathValue("id"), req)
	if err != nil {
		return err
	}
	o.writeJSON(w, r, http.StatusCreated, ep)
	return nil
}

type rotateSecretRequest struct {
	// ExpirePreviousAfter is how long the previous secrets keep signing, in
	// seconds; default 86400.
	ExpirePreviousAfter *int64 `json:"expire_previous_after,omitempty" validate:"omitempty,min=0,max=604800"`
}

func (o *operatorAPI) rotateWebhookSecret(w http.ResponseWriter, r *http.Request, actor string) error {
	if err := allowQuery(r.URL.Query()); err != nil {
		return err
	}
	var req rotateSecretRequest
	if err := decodeOptionalBody(w, r, &req); err != nil {
		return err
	}
	overlap := contract.DefaultSecretOverlap
	if req.ExpirePreviousAfter != nil {
		overlap = time.Duration(*req.ExpirePreviousAfter) * time.Second
	}
	ep, err := o.svc.RotateWebhookSecret(r.Context(), actor, r.PathValue("id"), overlap)
	if err != nil {
		return err
	}
	o.writeJSON(w, r, http.StatusOK, ep)
	return nil
}

// endpointAction serves a POST that acts on the endpoint of the path (an
// empty body or {}) and answers 200 with the endpoint.
func (o *operatorAPI) endpointAction(act func(ctx context.Context, actor, id string) (*paykit.WebhookEndpoint, error)) func(w http.ResponseWriter, r *http.Request, actor string) error {
	return func(w http.ResponseWriter, r *http.Request, actor string) error {
		if err := allowQuery(r.URL.Query()); err != nil {
			return err
		}
		if err := decodeOptionalBody(w, r, &struct{}{}); err != nil {
			return err
		}
		ep, err := act(r.Context(), actor, r.PathValue("id"))
		if err != nil {
			return err
		}
		o.writeJSON(w, r, http.StatusOK, ep)
		return nil
	}
}

// CallbackOptions configure NewProviderCallbacks.
type CallbackOptions struct {
	// Logger receives one access-log line per request; default
	// slog.Default().
	Logger *slog.Logger
	// Registerer receives the HTTP request metrics; nil records none.
	Registerer prometheus.Registerer
}

// NewProviderCallbacks returns the handler of inbound Provider callbacks,
// "POST /{provider}/webhooks" relative to its mount point (examples/server
// mounts it at /providers). The named Provider's adapter verifies each
// callback's signature; nothing else authenticates the caller. A callback
// that verifies is answered 200 once applied, so the Provider stops
// resending it; one that does not is 400 without detail.
func NewProviderCallbacks(svc *paykit.Service, opts CallbackOptions) http.Handler {
	a := newAPI(svc, "callbacks", "", opts.Logger, newMetrics(opts.Registerer))
	a.handle("POST /{provider}/webhooks", func(w http.ResponseWriter, r *http.Request) error {
		r.Body = http.MaxBytesReader(w, r.Body, MaxBodyBytes)
		if err := svc.HandleProviderCallback(r.Context(), r.PathValue("provider"), r); err != nil {
			return err
		}
		a.writeJSON(w, r, http.StatusOK, map[string]bool{"received": true})
		return nil
	})
	return a
}
