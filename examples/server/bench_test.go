package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// BenchmarkCreatePaymentIntentHTTP measures POST /v1/payment_intents
// through the example server's handler as bench/run.sh memory starts it
// (-db memory -rate-limit 0): authentication, body decoding, the Service on
// the memory Store, the sandbox PSP called in-process and the JSON answer.
// Each request has its own Idempotency-Key and merchant_reference, as
// bench/wrk-paykit-create.lua's. The background workers do not run.
// The -traced variants run with OpenTelemetry on: every span sampled and
// batched to an exporter that drops them, every duration recorded.
func BenchmarkCreatePaymentIntentHTTP(b *testing.B) {
	off := benchApp(b, &telemetry{})
	exp := tracetest.NewNoopExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()), sdktrace.WithBatcher(exp))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	b.Cleanup(func() { _ = tp.Shutdown(context.Background()); _ = mp.Shutdown(context.Background()) })
	on := benchApp(b, &telemetry{tp: tp, mp: mp})
	var n atomic.Int64
	create := func(b *testing.B, a *app) {
		ref := fmt.Sprintf("bench-%d", n.Add(1))
		body := `{"amount":"15000","currency":"MYR","country":"MY","merchant_reference":"` + ref +
			`","payment_method":"FPX","customer":{"name":"A","email":"a@example.com"}}`
		req := httptest.NewRequest("POST", benchURL+"/v1/payment_intents", strings.NewReader(body))
		req.SetBasicAuth(a.demoKey.PublicKey, a.demoKey.SecretKey)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Idempotency-Key", "k-"+ref)
		w := httptest.NewRecorder()
		a.handler.ServeHTTP(w, req)
		if w.Code != http.StatusCreated {
			b.Fatalf("status %d: %s", w.Code, w.Body)
		}
	}
	for _, v := range []struct {
		suffix string
		a      *app
	}{{"", off}, {"-traced", on}} {
		b.Run("serial"+v.suffix, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				create(b, v.a)
			}
		})
		b.Run("parallel"+v.suffix, func(b *testing.B) {
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					create(b, v.a)
				}
			})
		})
	}
}

const benchURL = "http://127.0.0.1:18080"

// benchApp is the example server's app on the memory Store, with tel's
// providers.
func benchApp(b *testing.B, tel *telemetry) *app {
	cfg, err := parseConfig([]string{"-db", "memory", "-rate-limit", "0"}, func(string) string { return "" }, nil)
	if err != nil {
		b.Fatal(err)
	}
	cfg.PublicURL = benchURL
	a, closeApp, err := newApp(context.Background(), cfg, func(string) string { return "" }, benchURL, discardLogger(), tel)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(closeApp)
	return a
}
