package httpadapter

import (
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/internal/contract"
	"github.com/paykit/paykit/internal/validated"
	"github.com/paykit/paykit/internal/wire"
)

// Options configures the merchant API.
type Options struct {
	// Logger receives one access-log line per request; default
	// slog.Default().
	Logger *slog.Logger
	// RateLimit is the sustained requests per second allowed per API key,
	// with bursts of twice that; over it requests get 429 rate_limited with
	// Retry-After. 0 turns rate limiting off.
	RateLimit float64
	// Registerer receives the HTTP request metrics; nil records none.
	Registerer prometheus.Registerer
}

// merchantAPI serves the merchant API.
type merchantAPI struct {
	*api
	limiter *keyLimiter
}

// NewMerchantAPI returns the merchant API as an http.Handler with paths
// relative to its mount point ("/payment_intents", not
// "/v1/payment_intents"). Every route but GET /openapi.json requires HTTP
// Basic authentication with an API key pair.
func NewMerchantAPI(svc *paykit.Service, opts Options) http.Handler {
	m := &merchantAPI{
		api:     newAPI(svc, "merchant", `Basic realm="paykit"`, opts.Logger, newMetrics(opts.Registerer)),
		limiter: newKeyLimiter(opts.RateLimit, svc.Now),
	}
	m.handle("GET /openapi.json", serveOpenAPI)
	m.handle("POST /payment_intents", m.auth(serveCreate[createPaymentIntentBody](m, svc.CreatePaymentIntent)))
	m.handle("GET /payment_intents", m.auth(serveList(m, svc.ListPaymentIntents)))
	m.handle("GET /payment_intents/{id}", m.auth(serveGet(m, svc.GetPaymentIntent)))
	m.handle("POST /payment_intents/{id}/cancel", m.auth(m.cancelPaymentIntent))
	m.handle("GET /payment_methods", m.auth(m.listPaymentMethods))
	m.handle("POST /test_helpers/payment_intents/{id}/approve", m.auth(m.simulatePayer(true)))
	m.handle("POST /test_helpers/payment_intents/{id}/decline", m.auth(m.simulatePayer(false)))
	m.routePayouts()
	m.routeRefunds()
	m.routeDisputes()
	m.routeEvents()
	m.routeMerchantCheckouts()
	m.routeWebhookEndpoints()
	return m
}

// auth authenticates the request's API key pair (HTTP Basic: public key as
// user name, secret key as password) and applies the key's rate limit.
// Every failure is the same 401, also credentials that are not text
// (invalid UTF-8 or a NUL), which never reach the Service.
func (m *merchantAPI) auth(next func(w http.ResponseWriter, r *http.Request, p paykit.Principal) error) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		publicKey, secretKey, ok := r.BasicAuth()
		if !ok || !wire.ValidText(publicKey) || !wire.ValidText(secretKey) {
			return unauthorized()
		}
		p, err := m.svc.Authenticate(r.Context(), publicKey, secretKey)
		if err != nil {
			return err
		}
		requestInfoFrom(r.Context()).principal = &p
		if err := m.limiter.allow(p.KeyID); err != nil {
			return err
		}
		return next(w, r, p)
	}
}

// cancelRequest is the optional body of a cancel. Reason is a pointer so
// that an explicit "" is refused (1 to 512 characters) instead of being
// read as no reason.
type cancelRequest struct {
	Reason *string `json:"reason" validate:"omitempty,min=1,max=512"`
}

func (c *cancelRequest) reason() string {
	if c.Reason == nil {
		return ""
	}
	return *c.Reason
}

// cancelPaymentIntent serves POST /payment_intents/{id}/cancel: an empty
// body or {"reason": ...}; 202 with the projection.
func (m *merchantAPI) cancelPaymentIntent(w http.ResponseWriter, r *http.Request, p paykit.Principal) error {
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
	pi, ans, err := m.svc.CancelPaymentIntent(r.Context(), p, key, r.PathValue("id"), paykit.CancelPaymentIntentRequest{Reason: req.reason()})
	if err != nil {
		return err
	}
	m.writeAnswer(w, r, pi, ans)
	return nil
}

// serveCreate serves a create (payment intent, payout intent, checkout)
// under its Idempotency-Key: the body B converts to the Service's request;
// the Service validates, persists and starts the work; its answer (201, or
// the stored one on a replay) is written.
func serveCreate[B any, Req any, T any, PB interface {
	*B
	createBody[Req]
}](m *merchantAPI, create func(context.Context, paykit.Principal, string, Req) (*T, paykit.Answer, error)) func(http.ResponseWriter, *http.Request, paykit.Principal) error {
	return func(w http.ResponseWriter, r *http.Request, p paykit.Principal) error {
		if r.URL.RawQuery != "" { // no query: nothing to parse
			if err := allowQuery(r.URL.Query()); err != nil {
				return err
			}
		}
		key, err := idempotencyKey(r)
		if err != nil {
			return err
		}
		body := PB(new(B))
		if _, err := decodeBody(w, r, body); err != nil {
			return err
		}
		ctx := validated.With(r.Context()) // the Service need not run the same rules again
		req, err := toRequest[Req](ctx, m.svc, p, key, body)
		if err != nil {
			return err
		}
		v, ans, err := create(ctx, p, key, req)
		if err != nil {
			return err
		}
		m.writeAnswer(w, r, v, ans)
		return nil
	}
}

// serveGet serves a read of one resource by the {id} of the path: the
// committed projection, never Provider work.
func serveGet[T any](m *merchantAPI, get func(context.Context, paykit.Principal, string) (T, error)) func(http.ResponseWriter, *http.Request, paykit.Principal) error {
	return func(w http.ResponseWriter, r *http.Request, p paykit.Principal) error {
		if err := allowQuery(r.URL.Query()); err != nil {
			return err
		}
		v, err := get(r.Context(), p, r.PathValue("id"))
		if err != nil {
			return err
		}
		m.writeJSON(w, r, http.StatusOK, v)
		return nil
	}
}

// serveList serves a list of 4.2's shape (payment intents, payout intents,
// checkouts): the shared query parameters, read into paykit.ListParams,
// and the page list returns.
func serveList[S ~string, T any](m *merchantAPI, list func(context.Context, paykit.Principal, paykit.ListParams[S]) (*paykit.Page[T], error)) func(http.ResponseWriter, *http.Request, paykit.Principal) error {
	return func(w http.ResponseWriter, r *http.Request, p paykit.Principal) error {
		f, err := listFilters(r.URL.Query())
		if err != nil {
			return err
		}
		params := paykit.ListParams[S]{
			PageParams: f.page, Currency: f.currency, Country: f.country, MerchantReference: f.reference,
			CreatedAfter: f.after, CreatedBefore: f.before,
		}
		for _, s := range f.statuses {
			params.Statuses = append(params.Statuses, S(s))
		}
		page, err := list(r.Context(), p, params)
		if err != nil {
			return err
		}
		m.writeJSON(w, r, http.StatusOK, page)
		return nil
	}
}

// listPaymentMethods serves GET /payment_methods?amount=&currency=&country=
// (all three required).
func (m *merchantAPI) listPaymentMethods(w http.ResponseWriter, r *http.Request, p paykit.Principal) error {
	q := r.URL.Query()
	if err := allowQuery(q, "amount", "currency", "country"); err != nil {
		return err
	}
	var query paymentMethodsQuery
	var err error
	if query.Amount, err = singleValue(q, "amount"); err != nil {
		return err
	}
	if query.Currency, err = singleValue(q, "currency"); err != nil {
		return err
	}
	if query.Country, err = singleValue(q, "country"); err != nil {
		return err
	}
	if err := validated.Check(&query); err != nil {
		return err
	}
	amount, err := wire.ParseAmount(query.Amount)
	if err != nil {
		return invalidRequest("amount", "amount is invalid.")
	}
	page, err := m.svc.ListPaymentMethods(r.Context(), p, paykit.PaymentMethodsRequest{Amount: amount, Currency: query.Currency, Country: query.Country})
	if err != nil {
		return err
	}
	m.writeJSON(w, r, http.StatusOK, page)
	return nil
}

// testHelperRequest is the body of a test helper: nothing, or {}.
type testHelperRequest struct{}

// simulatePayer serves the test helpers POST
// /test_helpers/payment_intents/{id}/approve and .../decline: they act as
// the payer on the sandbox Provider's page and answer 200 with the
// projection. For a live key the routes do not exist: the 404 is the one of
// an unknown route.
func (m *merchantAPI) simulatePayer(approve bool) func(w http.ResponseWriter, r *http.Request, p paykit.Principal) error {
	return func(w http.ResponseWriter, r *http.Request, p paykit.Principal) error {
		if p.Environment != paykit.Test {
			return errUnknownRoute(r)
		}
		if err := allowQuery(r.URL.Query()); err != nil {
			return err
		}
		if err := decodeOptionalBody(w, r, &testHelperRequest{}); err != nil {
			return err
		}
		pi, err := m.svc.SimulatePayer(r.Context(), p, r.PathValue("id"), approve)
		if err != nil {
			return err
		}
		m.writeJSON(w, r, http.StatusOK, pi)
		return nil
	}
}

// Query parameter helpers shared by the list routes. A parameter that is
// present must have a value; an absent one does not filter.

// allowQuery rejects parameters the route does not know, as Stripe does,
// so that a misspelt filter is not silently ignored.
func allowQuery(q url.Values, known ...string) error {
	for name := range q {
		if !slices.Contains(known, name) {
			return invalidRequest(name, "Received unknown query parameter: %s.", name)
		}
	}
	return nil
}

// listFilter holds the query parameters every resource list shares.
type listFilter struct {
	page                         paykit.PageParams
	statuses                     []string // unchecked: the Service knows the kind's statuses
	currency, country, reference string
	after, before                *time.Time
}

// listFilters reads the shared list parameters (4.2): limit, cursor,
// status, currency, country, merchant_reference, created_after and
// created_before, refusing any other.
func listFilters(q url.Values, extra ...string) (listFilter, error) {
	var f listFilter
	if err := allowQuery(q, append([]string{"limit", "cursor", "status", "currency", "country", "merchant_reference", "created_after", "created_before"}, extra...)...); err != nil {
		return f, err
	}
	var err error
	if f.page, err = pageParams(q); err != nil {
		return f, err
	}
	if f.statuses, err = listValues(q, "status"); err != nil {
		return f, err
	}
	if f.currency, err = singleValue(q, "currency"); err != nil {
		return f, err
	}
	if f.country, err = singleValue(q, "country"); err != nil {
		return f, err
	}
	if f.reference, err = singleValue(q, "merchant_reference"); err != nil {
		return f, err
	}
	if f.after, err = timeValue(q, "created_after"); err != nil {
		return f, err
	}
	f.before, err = timeValue(q, "created_before")
	return f, err
}

// singleValue returns the one value of name ("" when absent).
func singleValue(q url.Values, name string) (string, error) {
	vs, ok := q[name]
	switch {
	case !ok:
		return "", nil
	case len(vs) > 1:
		return "", invalidRequest(name, "%s must be given once.", name)
	case vs[0] == "":
		return "", invalidRequest(name, "%s must not be empty.", name)
	}
	return vs[0], nil
}

// listValues returns the values of a parameter that takes one value, a
// comma-separated list, or repeats.
func listValues(q url.Values, name string) ([]string, error) {
	var out []string
	for _, v := range q[name] {
		for _, item := range strings.Split(v, ",") {
			if item == "" {
				return nil, invalidRequest(name, "%s must be a value or a comma-separated list of values.", name)
			}
			out = append(out, item)
		}
	}
	return out, nil
}

// timeValue parses an RFC 3339 date-time with an offset, in UTC within the
// years 0001 to 9999 (what every Store can hold and compare). A '+' sent
// unencoded in a query string arrives as a space, so a space is read as '+'.
func timeValue(q url.Values, name string) (*time.Time, error) {
	v, err := singleValue(q, name)
	if err != nil || v == "" {
		return nil, err
	}
	t, err := time.Parse(time.RFC3339Nano, strings.ReplaceAll(v, " ", "+"))
	if err != nil {
		return nil, invalidRequest(name, "%s must be an ISO 8601 date-time with an offset, such as 2026-01-02T15:04:05Z.", name)
	}
	t = t.UTC()
	if t.Year() < 1 || t.Year() > 9999 {
		return nil, invalidRequest(name, "%s must lie between the years 0001 and 9999 (in UTC).", name)
	}
	return &t, nil
}

// pageParams reads limit (1 to 100, default 25) and cursor (at least one
// character); the Service checks the cursor itself.
func pageParams(q url.Values) (paykit.PageParams, error) {
	var p paykit.PageParams
	limit, err := singleValue(q, "limit")
	if err != nil {
		return p, err
	}
	if limit != "" {
		n, err := strconv.Atoi(limit)
		if err != nil || n < 1 || n > contract.MaxPageLimit {
			return p, invalidRequest("limit", "limit must be an integer between 1 and %d.", contract.MaxPageLimit)
		}
		p.Limit = n
	}
	if p.Cursor, err = singleValue(q, "cursor"); err != nil {
		return p, err
	}
	return p, nil
}
