package httpadapter

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/paykit/paykit"
)

// OperatorOptions configures the operator API.
type OperatorOptions struct {
	// Tokens maps an operator's name to its bearer token. The name is
	// recorded as the actor of every audit event the operator causes.
	// Without a non-empty token every request is refused.
	Tokens map[string]string
	// Logger receives one access-log line per request; default
	// slog.Default().
	Logger *slog.Logger
	// Registerer receives the HTTP request metrics and the background-work
	// metrics of the Service (see NewOperatorAPI); nil records none.
	Registerer prometheus.Registerer
}

// operatorAPI serves the operator API.
type operatorAPI struct {
	*api
	tokens []operatorToken
}

type operatorToken struct {
	actor string
	hash  [sha256.Size]byte
}

// NewOperatorAPI returns the operator API as an http.Handler with paths
// relative to its mount point (examples/server uses /operator). Every route
// requires "Authorization: Bearer <token>" with one of opts.Tokens.
//
// With opts.Registerer it also registers the background-work metrics of svc,
// read at scrape time: paykit_jobs_{due,running,retrying} and
// paykit_jobs_oldest_due_age_seconds by job kind (from the Store, so shared
// by every instance), paykit_job_attempts_total and paykit_job_errors_total
// (this process's worker), paykit_payment_intents_stale and
// paykit_payout_intents_stale (processing for more than 15 minutes since
// their last change),
// and paykit_webhook_endpoints_paused (the webhook endpoints paused now,
// from the Store).
// A Registerer serves one Service: a second operator API registered on it
// reuses the first one's collector.
func NewOperatorAPI(svc *paykit.Service, opts OperatorOptions) http.Handler {
	o := &operatorAPI{api: newAPI(svc, "operator", `Bearer realm="paykit-operator"`, opts.Logger, newMetrics(opts.Registerer))}
	for _, actor := range slices.Sorted(maps.Keys(opts.Tokens)) {
		if token := opts.Tokens[actor]; token != "" {
			o.tokens = append(o.tokens, operatorToken{actor, sha256.Sum256([]byte(token))})
		}
	}
	o.handle("POST /merchants", o.auth(o.createMerchant))
	o.handle("GET /merchants", o.auth(servePaged(o, func(r *http.Request, p paykit.PageParams) (*paykit.Page[paykit.Merchant], error) {
		return o.svc.ListMerchants(r.Context(), p) // every merchant, newest first
	})))
	o.handle("GET /merchants/{id}", o.auth(serveByID(o, o.svc.GetMerchant)))
	o.handle("POST /merchants/{id}/api_keys", o.auth(o.createAPIKey))
	o.handle("GET /merchants/{id}/api_keys", o.auth(o.listAPIKeys))
	o.handle("POST /api_keys/{id}/revoke", o.auth(o.revokeAPIKey))
	o.handle("GET /audit_events", o.auth(o.listAuditEvents))
	o.routePayouts()
	o.routeWebhooks()
	o.routeJobs(opts.Registerer)
	o.routeReconciliation(opts.Registerer)
	return o
}

// auth checks the bearer token against every configured token in constant
// time (comparing SHA-256 digests, so lengths leak nothing) and passes the
// operator's name on as the actor.
func (o *operatorAPI) auth(next func(w http.ResponseWriter, r *http.Request, actor string) error) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
		if !ok || !strings.EqualFold(scheme, "Bearer") || token == "" {
			return unauthorized()
		}
		given := sha256.Sum256([]byte(token))
		actor := ""
		for _, t := range o.tokens {
			if subtle.ConstantTimeCompare(given[:], t.hash[:]) == 1 && actor == "" {
				actor = t.actor
			}
		}
		if actor == "" {
			return unauthorized()
		}
		requestInfoFrom(r.Context()).actor = actor
		return next(w, r, actor)
	}
}

type createMerchantRequest struct {
	Name string `json:"name" validate:"required"`
}

func (o *operatorAPI) createMerchant(w http.ResponseWriter, r *http.Request, actor string) error {
	var req createMerchantRequest
	if _, err := decodeBody(w, r, &req); err != nil {
		return err
	}
	m, err := o.svc.CreateMerchant(r.Context(), actor, req.Name)
	if err != nil {
		return err
	}
	o.writeJSON(w, r, http.StatusCreated, m)
	return nil
}

// servePaged serves an operator list whose only query parameters are limit
// and cursor; list gets the request (for its path values) and the page.
func servePaged[T any](o *operatorAPI, list func(r *http.Request, p paykit.PageParams) (*paykit.Page[T], error)) func(http.ResponseWriter, *http.Request, string) error {
	return func(w http.ResponseWriter, r *http.Request, _ string) error {
		q := r.URL.Query()
		if err := allowQuery(q, "limit", "cursor"); err != nil {
			return err
		}
		params, err := pageParams(q)
		if err != nil {
			return err
		}
		page, err := list(r, params)
		if err != nil {
			return err
		}
		o.writeJSON(w, r, http.StatusOK, page)
		return nil
	}
}

// serveByID serves an operator read of the {id} of the path, which takes
// no query parameters.
func serveByID[T any](o *operatorAPI, get func(context.Context, string) (T, error)) func(http.ResponseWriter, *http.Request, string) error {
	return func(w http.ResponseWriter, r *http.Request, _ string) error {
		if err := allowQuery(r.URL.Query()); err != nil {
			return err
		}
		v, err := get(r.Context(), r.PathValue("id"))
		if err != nil {
			return err
		}
		o.writeJSON(w, r, http.StatusOK, v)
		return nil
	}
}

type createAPIKeyRequest struct {
	Environment string `json:"environment" validate:"required,oneof=test live"`
}

func (o *operatorAPI) createAPIKey(w http.ResponseWriter, r *http.Request, actor string) error {
	var req createAPIKeyRequest
	if _, err := decodeBody(w, r, &req); err != nil {
		return err
	}
	key, err := o.svc.CreateAPIKey(r.Context(), actor, r.PathValue("id"), paykit.Environment(req.Environment))
	if err != nil {
		return err
	}
	o.writeJSON(w, r, http.StatusCreated, key)
	return nil
}

func (o *operatorAPI) listAPIKeys(w http.ResponseWriter, r *http.Request, _ string) error {
	if err := allowQuery(r.URL.Query()); err != nil {
		return err
	}
	keys, err := o.svc.ListAPIKeys(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	o.writeJSON(w, r, http.StatusOK, paykit.Page[paykit.APIKey]{Data: keys})
	return nil
}

// revokeAPIKey takes no body; one sent is ignored.
func (o *operatorAPI) revokeAPIKey(w http.ResponseWriter, r *http.Request, actor string) error {
	if err := allowQuery(r.URL.Query()); err != nil {
		return err
	}
	key, err := o.svc.RevokeAPIKey(r.Context(), actor, r.PathValue("id"))
	if err != nil {
		return err
	}
	o.writeJSON(w, r, http.StatusOK, key)
	return nil
}

func (o *operatorAPI) listAuditEvents(w http.ResponseWriter, r *http.Request, _ string) error {
	q := r.URL.Query()
	if err := allowQuery(q, "limit", "cursor", "merchant_id", "action"); err != nil {
		return err
	}
	var params paykit.AuditListParams
	var err error
	if params.PageParams, err = pageParams(q); err != nil {
		return err
	}
	if params.MerchantID, err = singleValue(q, "merchant_id"); err != nil {
		return err
	}
	if params.Action, err = singleValue(q, "action"); err != nil {
		return err
	}
	page, err := o.svc.ListAuditEvents(r.Context(), params)
	if err != nil {
		return err
	}
	o.writeJSON(w, r, http.StatusOK, page)
	return nil
}
