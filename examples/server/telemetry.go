package main

import (
	"context"
	"errors"
	"strings"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
)

// telemetry is the server's OpenTelemetry: OTLP over HTTP/protobuf when
// OTEL_EXPORTER_OTLP_ENDPOINT (or a signal's own endpoint variable) is
// set, configured by the standard OTEL_* variables, which the SDK reads
// itself; nil providers (paykit's no-op defaults) otherwise.
type telemetry struct {
	tp       trace.TracerProvider
	mp       metric.MeterProvider
	shutdown func(context.Context) error
}

// otlpEnabled reports whether the environment asks for OTLP export.
func otlpEnabled(getenv func(string) string) bool {
	if strings.EqualFold(getenv("OTEL_SDK_DISABLED"), "true") {
		return false
	}
	for _, v := range []string{"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT"} {
		if getenv(v) != "" {
			return true
		}
	}
	return false
}

// newTelemetry starts the exporters the environment asks for. The server
// is service.name "paykit" unless OTEL_SERVICE_NAME or
// OTEL_RESOURCE_ATTRIBUTES say otherwise. It also becomes the global
// TracerProvider and the W3C propagator, so that a client's traceparent
// joins its trace.
func newTelemetry(ctx context.Context, getenv func(string) string) (*telemetry, error) {
	if !otlpEnabled(getenv) {
		return &telemetry{shutdown: func(context.Context) error { return nil }}, nil
	}
	res, err := resource.New(ctx,
		resource.WithAttributes(semconv.ServiceName("paykit"), semconv.ServiceVersion(version())),
		resource.WithTelemetrySDK(), resource.WithFromEnv())
	if err != nil {
		return nil, err
	}
	spans, err := otlptracehttp.New(ctx)
	if err != nil {
		return nil, err
	}
	metrics, err := otlpmetrichttp.New(ctx)
	if err != nil {
		return nil, err
	}
	// The samplers and intervals of OTEL_TRACES_SAMPLER and
	// OTEL_METRIC_EXPORT_INTERVAL apply: no option here overrides them.
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(spans), sdktrace.WithResource(res))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewPeriodicReader(metrics)), sdkmetric.WithResource(res))
	otel.SetTracerProvider(tp)
	otel.SetMeterProvider(mp)
	otel.SetTextMapPropagator(propagation.TraceContext{})
	return &telemetry{tp: tp, mp: mp, shutdown: func(ctx context.Context) error {
		return errors.Join(tp.Shutdown(ctx), mp.Shutdown(ctx))
	}}, nil
}
