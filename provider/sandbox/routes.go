package sandbox

import (
	"context"
	"net/http"
	"net/url"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/paykit/paykit/internal/telemetry"
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
	routeOpenDispute
	routeInquireDispute
	routeDisputeEvidence
	routeAcceptDispute
	routeListSettlements
	routeSettleNow
	routeCount
)

// keyPlace is where a route's call names its record.
type keyPlace int

const (
	keyInPath   keyPlace = iota // /api/{kind}/{key}[/{action}]
	keyInHeader                 // a create: the Idempotency-Key header
	keyNone                     // no record key: /api/{kind}
)

// routes are the API's paths: a create is POST /api/{kind} under an
// Idempotency-Key header; most others name their record by its key in
// the path, /api/{kind}/{key}[/{action}] (a dispute by its id, a settle-now
// the merchant); opening a dispute and listing settlement batches name
// none.
var routes = [routeCount]struct {
	method, kind, action string
	key                  keyPlace
}{
	routeCreatePayment:   {http.MethodPost, "payments", "", keyInHeader},
	routeInquirePayment:  {http.MethodGet, "payments", "", keyInPath},
	routeCancelPayment:   {http.MethodPost, "payments", "cancel", keyInPath},
	routeApprovePayment:  {http.MethodPost, "payments", "approve", keyInPath},
	routeDeclinePayment:  {http.MethodPost, "payments", "decline", keyInPath},
	routeCreatePayout:    {http.MethodPost, "payouts", "", keyInHeader},
	routeInquirePayout:   {http.MethodGet, "payouts", "", keyInPath},
	routeCancelPayout:    {http.MethodPost, "payouts", "cancel", keyInPath},
	routeReturnPayout:    {http.MethodPost, "payouts", "return", keyInPath},
	routeCreateRefund:    {http.MethodPost, "refunds", "", keyInHeader},
	routeInquireRefund:   {http.MethodGet, "refunds", "", keyInPath},
	routeOpenDispute:     {http.MethodPost, "disputes", "", keyNone},
	routeInquireDispute:  {http.MethodGet, "disputes", "", keyInPath},
	routeDisputeEvidence: {http.MethodPost, "disputes", "evidence", keyInPath},
	routeAcceptDispute:   {http.MethodPost, "disputes", "accept", keyInPath},
	routeListSettlements: {http.MethodGet, "settlements", "", keyNone},
	routeSettleNow:       {http.MethodPost, "merchants", "settle", keyInPath},
}

// creates reports whether rt creates a record (its key is the
// Idempotency-Key header).
func (rt route) creates() bool { return routes[rt].key == keyInHeader }

// pattern is rt's ServeMux pattern.
func (rt route) pattern() string { return routes[rt].method + " " + rt.withKey("{key}") }

// path is rt's path for the record under key.
func (rt route) path(key string) string { return rt.withKey(url.PathEscape(key)) }

// withKey is rt's path with keySegment, as it stands in the path, for the
// record's key (a create's path has none).
func (rt route) withKey(keySegment string) string {
	r := routes[rt]
	p := "/api/" + r.kind
	if r.key == keyInPath {
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
	// The PSP is paykit's own code: its calls are spans in the trace of
	// the adapter's call.
	if parent := trace.SpanFromContext(ctx); parent != noSpan && !parent.IsRecording() && !parent.SpanContext().IsRemote() {
		return operations[rt](p, ctx, c) // in a trace not recorded: no span
	}
	ctx, span := p.tracer.Start(ctx, "sandbox.psp "+rt.name(), serverSpan...)
	a := operations[rt](p, ctx, c)
	if span.IsRecording() {
		span.SetAttributes(attribute.String("paykit.operation", rt.name()))
		switch {
		case a.hold:
			span.SetAttributes(attribute.String("sandbox.answer", "held"))
		case a.drop:
			span.SetAttributes(attribute.String("sandbox.answer", "dropped"))
		default:
			span.SetAttributes(semconv.HTTPResponseStatusCode(a.status))
		}
	}
	span.End()
	return a
}

// noSpan is what trace.SpanFromContext finds in a context without a span.
var noSpan = trace.SpanFromContext(context.Background())

// serverSpan are the options of the PSP's spans.
var serverSpan = []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindServer)}

// pspTracer is tp's tracer of the PSP's spans; the global TracerProvider's
// (as it is when they start) when tp is nil.
func pspTracer(tp trace.TracerProvider) trace.Tracer {
	if tp == nil {
		return otel.Tracer(telemetry.Scope + "/provider/sandbox")
	}
	return tp.Tracer(telemetry.Scope + "/provider/sandbox")
}

// name is rt's operation name in spans: its kind and action
// ("payments.cancel"), a create's "payments.create".
func (rt route) name() string {
	r := routes[rt]
	switch {
	case r.action != "":
		return r.kind + "." + r.action
	case rt.creates():
		return r.kind + ".create"
	case r.method == http.MethodGet:
		return r.kind + ".get"
	}
	return r.kind + ".post"
}

// operations are the routes' operations.
var operations = [routeCount]func(p *PSP, ctx context.Context, c apiCall) answer{
	routeCreatePayment:   (*PSP).createPayment,
	routeInquirePayment:  (*PSP).inquirePayment,
	routeCancelPayment:   (*PSP).cancelPayment,
	routeApprovePayment:  func(p *PSP, ctx context.Context, c apiCall) answer { return p.payerAPI(ctx, c, true) },
	routeDeclinePayment:  func(p *PSP, ctx context.Context, c apiCall) answer { return p.payerAPI(ctx, c, false) },
	routeCreatePayout:    (*PSP).createPayout,
	routeInquirePayout:   (*PSP).inquirePayout,
	routeCancelPayout:    (*PSP).cancelPayout,
	routeReturnPayout:    (*PSP).returnPayout,
	routeCreateRefund:    (*PSP).createRefund,
	routeInquireRefund:   (*PSP).inquireRefund,
	routeOpenDispute:     (*PSP).openDispute,
	routeInquireDispute:  (*PSP).inquireDispute,
	routeDisputeEvidence: (*PSP).disputeEvidence,
	routeAcceptDispute:   (*PSP).acceptDispute,
	routeListSettlements: (*PSP).listSettlements,
	routeSettleNow:       (*PSP).settleNow,
}

// queryRequest is a request read from the URL's query (a GET's).
type queryRequest interface{ fromQuery(url.Values) error }

// serveRoute serves rt over HTTP: the key from the header or path, the
// body decoded strictly (or a GET's query), the answer written, held or
// dropped.
func (p *PSP) serveRoute(rt route) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		c := apiCall{key: r.PathValue("key"), body: func(v any) error {
			if q, ok := v.(queryRequest); ok && r.Method == http.MethodGet {
				return q.fromQuery(r.URL.Query())
			}
			return decode(r, v)
		}}
		if rt.creates() {
			c.key = r.Header.Get("Idempotency-Key")
		}
		ctx := propagation.TraceContext{}.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
		switch a := p.call(ctx, rt, c); {
		case a.hold:
			p.holdRequest(w, r)
		case a.drop:
			dropConnection(w, r)
		default:
			writeAnswer(w, a)
		}
	}
}
