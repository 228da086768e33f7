package sandbox

import (
	"context"
	"net/http"
	"net/url"
)

// route is one operation of the PSP's API, whichever way it is called:
// over HTTP (ServeHTTP) or by an adapter in the same process
// (Config.PSP).
type route int

const (
	routeCreatePayment route = iota
	routeInquirePayment
	routeCancelPayment
	routeApprovePayment
	routeDeclinePayment
	routeCreatePayout
	routeInquirePayout
	routeCancelPayout
	routeReturnPayout
	routeCreateRefund
	routeInquireRefund
	routeCount
)

// routes are the API's paths: a create is POST /api/{kind} under an
// Idempotency-Key header; the others name their record by its key in the
// path, /api/{kind}/{key}[/{action}].
var routes = [routeCount]struct {
	method, kind, action string
}{
	routeCreatePayment:  {http.MethodPost, "payments", ""},
	routeInquirePayment: {http.MethodGet, "payments", ""},
	routeCancelPayment:  {http.MethodPost, "payments", "cancel"},
	routeApprovePayment: {http.MethodPost, "payments", "approve"},
	routeDeclinePayment: {http.MethodPost, "payments", "decline"},
	routeCreatePayout:   {http.MethodPost, "payouts", ""},
	routeInquirePayout:  {http.MethodGet, "payouts", ""},
	routeCancelPayout:   {http.MethodPost, "payouts", "cancel"},
	routeReturnPayout:   {http.MethodPost, "payouts", "return"},
	routeCreateRefund:   {http.MethodPost, "refunds", ""},
	routeInquireRefund:  {http.MethodGet, "refunds", ""},
}

// creates reports whether rt creates a record (its key is the
// Idempotency-Key header).
func (rt route) creates() bool {
	return rt == routeCreatePayment || rt == routeCreatePayout || rt == routeCreateRefund
}

// pattern is rt's ServeMux pattern.
func (rt route) pattern() string { return routes[rt].method + " " + rt.withKey("{key}") }

// path is rt's path for the record under key.
func (rt route) path(key string) string { return rt.withKey(url.PathEscape(key)) }

// withKey is rt's path with keySegment, as it stands in the path, for the
// record's key (a create's path has none).
func (rt route) withKey(keySegment string) string {
	r := routes[rt]
	p := "/api/" + r.kind
	if !rt.creates() {
		p += "/" + keySegment
	}
	if r.action != "" {
		p += "/" + r.action
	}
	return p
}

// apiCall is one call of a route, apart from its transport.
type apiCall struct {
	// key is the record's key: the Idempotency-Key of a create, the
	// path's key otherwise.
	key string
	// body reads the request's body into v, a pointer to the route's
	// request type.
	body func(v any) error
}

// call runs one call of rt. Its answer may ask for the request to be held
// or dropped, which the transport does.
func (p *PSP) call(ctx context.Context, rt route, c apiCall) answer {
	if rt < 0 || rt >= routeCount {
		return errAnswer(http.StatusNotFound, errNoRoute, "No such API operation.")
	}
	return operations[rt](p, ctx, c)
}

// operations are the routes' operations.
var operations = [routeCount]func(p *PSP, ctx context.Context, c apiCall) answer{
	routeCreatePayment:  (*PSP).createPayment,
	routeInquirePayment: (*PSP).inquirePayment,
	routeCancelPayment:  (*PSP).cancelPayment,
	routeApprovePayment: func(p *PSP, ctx context.Context, c apiCall) answer { return p.payerAPI(ctx, c, true) },
	routeDeclinePayment: func(p *PSP, ctx context.Context, c apiCall) answer { return p.payerAPI(ctx, c, false) },
	routeCreatePayout:   (*PSP).createPayout,
	routeInquirePayout:  (*PSP).inquirePayout,
	routeCancelPayout:   (*PSP).cancelPayout,
	routeReturnPayout:   (*PSP).returnPayout,
	routeCreateRefund:   (*PSP).createRefund,
	routeInquireRefund:  (*PSP).inquireRefund,
}

// serveRoute serves rt over HTTP: the key from the header or path, the
// body decoded strictly, the answer written, held or dropped.
func (p *PSP) serveRoute(rt route) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		c := apiCall{key: r.PathValue("key"), body: func(v any) error { return decode(r, v) }}
		if rt.creates() {
			c.key = r.Header.Get("Idempotency-Key")
		}
		switch a := p.call(r.Context(), rt, c); {
		case a.hold:
			p.holdRequest(w, r)
		case a.drop:
			dropConnection(w, r)
		default:
			writeAnswer(w, a)
		}
	}
}
