package telemetry_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"testing"

	"github.com/matryer/is"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/paykit/paykit/internal/telemetry"
)

func TestTraceParentRoundTrip(t *testing.T) {
	is := is.New(t)
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()))
	ctx, span := tp.Tracer("t").Start(context.Background(), "s")
	defer span.End()
	v := telemetry.TraceParent(ctx)
	is.Equal(len(v), 55)
	sc := telemetry.ParseTraceParent(v)
	is.True(sc.IsValid())
	is.Equal(sc.TraceID(), span.SpanContext().TraceID())
	is.Equal(sc.SpanID(), span.SpanContext().SpanID())
	is.True(sc.IsRemote())

	// Nothing to link to: no span, or one not sampled.
	is.Equal(telemetry.TraceParent(context.Background()), "")
	never := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.NeverSample()))
	uctx, u := never.Tracer("t").Start(context.Background(), "s")
	defer u.End()
	is.Equal(telemetry.TraceParent(uctx), "")
	is.True(!telemetry.ParseTraceParent("").IsValid())
	is.True(!telemetry.ParseTraceParent("00-zz-11-01").IsValid())
}

func TestLoggerAddsTraceAndSpanIDs(t *testing.T) {
	is := is.New(t)
	var buf bytes.Buffer
	log := telemetry.Logger(slog.New(slog.NewJSONHandler(&buf, nil))).With("api", "merchant")
	is.Equal(telemetry.Logger(log), log) // wrapped once

	log.InfoContext(context.Background(), "outside")
	sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1}, SpanID: trace.SpanID{2}, TraceFlags: trace.FlagsSampled})
	log.InfoContext(trace.ContextWithSpanContext(context.Background(), sc), "inside")

	dec := json.NewDecoder(&buf)
	var outside, inside map[string]any
	is.NoErr(dec.Decode(&outside))
	is.NoErr(dec.Decode(&inside))
	is.Equal(outside["trace_id"], nil)
	is.Equal(inside["trace_id"], sc.TraceID().String())
	is.Equal(inside["span_id"], sc.SpanID().String())
	is.Equal(inside["api"], "merchant")
}
