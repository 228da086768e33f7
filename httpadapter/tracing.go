package httpadapter

import (
	"context"
	"net/http"
	"strings"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/internal/adapterhooks"
	"github.com/paykit/paykit/internal/telemetry"
)

// tracing is an API's OpenTelemetry side: a server span per request,
// named "{method} {route}" once the route is known, and the
// http.server.request.duration histogram, from the Service's providers.
type tracing struct {
	tracer trace.Tracer
	dur    metric.Float64Histogram
}

func newTracing(svc *paykit.Service) tracing {
	tp, mp := otel.GetTracerProvider(), otel.GetMeterProvider()
	if svc != nil {
		tp, mp = adapterhooks.Telemetry(svc)
	}
	t := tracing{tracer: tp.Tracer(telemetry.Scope)}
	var err error
	t.dur, err = mp.Meter(telemetry.Scope).Float64Histogram("http.server.request.duration", metric.WithUnit("s"),
		metric.WithDescription("Duration of HTTP server requests."),
		metric.WithExplicitBucketBoundaries(0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10))
	if err != nil {
		otel.Handle(err)
	}
	return t
}

// start starts r's server span, in the trace the request names (through
// the global propagator) if any.
func (t tracing) start(r *http.Request) (context.Context, trace.Span) {
	ctx := otel.GetTextMapPropagator().Extract(r.Context(), propagation.HeaderCarrier(r.Header))
	return t.tracer.Start(ctx, knownMethod(r.Method), serverSpan...)
}

// serverSpan are the options of a request's span, made once.
var serverSpan = []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindServer)}

// end ends the request's span and records its duration. route is the
// matched pattern ("GET /payment_intents/{id}"), "" when none matched;
// path the path as the access log shows it (payer tokens masked). Query
// strings, headers and bodies stay out.
func (t tracing) end(ctx context.Context, r *http.Request, route, path string, status int, info *requestInfo, d time.Duration) {
	span := trace.SpanFromContext(ctx)
	recording := span.IsRecording()
	if !recording && (t.dur == nil || !t.dur.Enabled(ctx)) {
		return
	}
	method := knownMethod(r.Method)
	_, template, _ := strings.Cut(route, " ")
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	attrs := make([]attribute.KeyValue, 0, 8)
	attrs = append(attrs, semconv.HTTPRequestMethodKey.String(method), semconv.URLScheme(scheme))
	if template != "" {
		attrs = append(attrs, semconv.HTTPRoute(template))
	}
	if status != 0 {
		attrs = append(attrs, semconv.HTTPResponseStatusCode(status))
	}
	if status >= 500 {
		attrs = append(attrs, semconv.ErrorTypeKey.String(errorType(status, info)))
	}
	if t.dur != nil && t.dur.Enabled(ctx) {
		t.dur.Record(ctx, d.Seconds(), metric.WithAttributes(attrs...))
	}
	if !recording {
		return
	}
	if template != "" {
		span.SetName(method + " " + template)
	}
	span.SetAttributes(attrs...)
	span.SetAttributes(semconv.URLPath(path), attribute.String("paykit.request_id", info.id))
	if p := info.principal; p != nil {
		span.SetAttributes(attribute.String("paykit.merchant_id", p.MerchantID),
			attribute.String("paykit.environment", string(p.Environment)))
	}
	if info.err != nil {
		span.SetAttributes(attribute.String("paykit.error_code", info.err.Code))
	}
	if status >= 500 {
		span.SetStatus(codes.Error, "")
	}
}

// errorType is the error.type of a 5xx: the contract's error code, else
// the status.
func errorType(status int, info *requestInfo) string {
	if info.err != nil && info.err.Code != "" {
		return info.err.Code
	}
	return http.StatusText(status)
}

// knownMethod is method when HTTP defines it, else "_OTHER": a span name
// or attribute never takes a client's arbitrary text.
func knownMethod(method string) string {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodConnect, http.MethodOptions, http.MethodTrace:
		return method
	}
	return "_OTHER"
}
