// Package telemetry is what paykit's packages share of OpenTelemetry: the
// instrumentation scope, the W3C traceparent a job keeps of the request
// that enqueued it, and a slog handler that stamps records with the
// trace and span of their context.
package telemetry

import (
	"context"
	"log/slog"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// Scope is the instrumentation scope of paykit's tracers and meters.
const Scope = "github.com/paykit/paykit"

// TraceParent is the W3C traceparent of ctx's span when it is valid and
// sampled; "" otherwise (nothing to link to, nothing stored).
func TraceParent(ctx context.Context) string {
	sc := trace.SpanContextFromContext(ctx)
	if !sc.IsValid() || !sc.IsSampled() {
		return ""
	}
	return "00-" + sc.TraceID().String() + "-" + sc.SpanID().String() + "-" + sc.TraceFlags().String()
}

// ParseTraceParent is the span context of a TraceParent value; invalid
// when v is empty or malformed.
func ParseTraceParent(v string) trace.SpanContext {
	if v == "" {
		return trace.SpanContext{}
	}
	ctx := propagation.TraceContext{}.Extract(context.Background(), propagation.MapCarrier{"traceparent": v})
	return trace.SpanContextFromContext(ctx)
}

// Logger returns l (slog.Default() when nil) whose records carry the
// trace_id and span_id of the span in their context, if any.
func Logger(l *slog.Logger) *slog.Logger {
	if l == nil {
		l = slog.Default()
	}
	if _, ok := l.Handler().(handler); ok {
		return l
	}
	return slog.New(handler{l.Handler()})
}

// handler adds the trace and span ids of a record's context.
type handler struct{ slog.Handler }

func (h handler) Handle(ctx context.Context, r slog.Record) error {
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
		r.AddAttrs(slog.String("trace_id", sc.TraceID().String()), slog.String("span_id", sc.SpanID().String()))
	}
	return h.Handler.Handle(ctx, r)
}

func (h handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return handler{h.Handler.WithAttrs(attrs)}
}

func (h handler) WithGroup(name string) slog.Handler {
	return handler{h.Handler.WithGroup(name)}
}
