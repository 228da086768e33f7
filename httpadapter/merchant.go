package httpadapter

import (
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/paykit/paykit"
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
	m.handle("GET /payment_intents", m.auth(m.listPaymentIntents))
	m.handle("GET /payment_intents/{id}", m.auth(m.getPaymentIntent))
	return m
}

// auth authenticates the request's API key pair (HTTP Basic: public key as
// user name, secret key as password) and applies the key's rate limit.
// Every failure is the same 401.
func (m *merchantAPI) auth(next func(w http.ResponseWriter, r *http.Request, p paykit.Principal) error) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		publicKey, secretKey, ok := r.BasicAuth()
		if !ok {
			return paykit.ErrUnauthorized()
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

func (m *merchantAPI) getPaymentIntent(w http.ResponseWriter, r *http.Request, p paykit.Principal) error {
	if err := allowQuery(r.URL.Query()); err != nil {
		return err
	}
	pi, err := m.svc.GetPaymentIntent(r.Context(), p, r.PathValue("id"))
	if err != nil {
		return err
	}
	m.writeJSON(w, r, http.StatusOK, pi)
	return nil
}

func (m *merchantAPI) listPaymentIntents(w http.ResponseWriter, r *http.Request, p paykit.Principal) error {
	q := r.URL.Query()
	if err := allowQuery(q, "limit", "cursor", "status", "currency", "country", "merchant_reference", "created_after", "created_before"); err != nil {
		return err
	}
	var params paykit.PaymentIntentListParams
	var err error
	if params.PageParams, err = pageParams(q); err != nil {
		return err
	}
	statuses, err := listValues(q, "status")
	if err != nil {
		return err
	}
	for _, s := range statuses {
		params.Statuses = append(params.Statuses, paykit.PaymentStatus(s))
	}
	if params.Currency, err = singleValue(q, "currency"); err != nil {
		return err
	}
	if params.Country, err = singleValue(q, "country"); err != nil {
		return err
	}
	if params.MerchantReference, err = singleValue(q, "merchant_reference"); err != nil {
		return err
	}
	if params.CreatedAfter, err = timeValue(q, "created_after"); err != nil {
		return err
	}
	if params.CreatedBefore, err = timeValue(q, "created_before"); err != nil {
		return err
	}
	page, err := m.svc.ListPaymentIntents(r.Context(), p, params)
	if err != nil {
		return err
	}
	m.writeJSON(w, r, http.StatusOK, page)
	return nil
}

// Query parameter helpers shared by the list routes. A parameter that is
// present must have a value; an absent one does not filter.

// allowQuery rejects parameters the route does not know, as Stripe does,
// so that a misspelt filter is not silently ignored.
func allowQuery(q url.Values, known ...string) error {
	for name := range q {
		if !slices.Contains(known, name) {
			return paykit.InvalidRequest(name, "Received unknown query parameter: %s.", name)
		}
	}
	return nil
}

// singleValue returns the one value of name ("" when absent).
func singleValue(q url.Values, name string) (string, error) {
	vs, ok := q[name]
	switch {
	case !ok:
		return "", nil
	case len(vs) > 1:
		return "", paykit.InvalidRequest(name, "%s must be given once.", name)
	case vs[0] == "":
		return "", paykit.InvalidRequest(name, "%s must not be empty.", name)
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
				return nil, paykit.InvalidRequest(name, "%s must be a value or a comma-separated list of values.", name)
			}
			out = append(out, item)
		}
	}
	return out, nil
}

// timeValue parses an RFC 3339 date-time with an offset. A '+' sent
// unencoded in a query string arrives as a space, so a space is read as '+'.
func timeValue(q url.Values, name string) (*time.Time, error) {
	v, err := singleValue(q, name)
	if err != nil || v == "" {
		return nil, err
	}
	t, err := time.Parse(time.RFC3339Nano, strings.ReplaceAll(v, " ", "+"))
	if err != nil {
		return nil, paykit.InvalidRequest(name, "%s must be an ISO 8601 date-time with an offset, such as 2026-01-02T15:04:05Z.", name)
	}
	t = t.UTC()
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
		if err != nil || n < 1 || n > paykit.MaxPageLimit {
			return p, paykit.InvalidRequest("limit", "limit must be an integer between 1 and %d.", paykit.MaxPageLimit)
		}
		p.Limit = n
	}
	if p.Cursor, err = singleValue(q, "cursor"); err != nil {
		return p, err
	}
	return p, nil
}
