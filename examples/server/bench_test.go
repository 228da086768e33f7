package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// BenchmarkCreatePaymentIntentHTTP measures POST /v1/payment_intents
// through the example server's handler as bench/run.sh memory starts it
// (-db memory -rate-limit 0): authentication, body decoding, the Service on
// the memory Store, the sandbox PSP called in-process and the JSON answer.
// Each request has its own Idempotency-Key and merchant_reference, as
// bench/wrk-paykit-create.lua's. The background workers do not run.
func BenchmarkCreatePaymentIntentHTTP(b *testing.B) {
	ctx := context.Background()
	cfg, err := parseConfig([]string{"-db", "memory", "-rate-limit", "0"}, func(string) string { return "" }, nil)
	if err != nil {
		b.Fatal(err)
	}
	const baseURL = "http://127.0.0.1:18080"
	cfg.PublicURL = baseURL
	a, closeApp, err := newApp(ctx, cfg, func(string) string { return "" }, baseURL, discardLogger())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(closeApp)
	var n atomic.Int64
	create := func(b *testing.B) {
		ref := fmt.Sprintf("bench-%d", n.Add(1))
		body := `{"amount":"15000","currency":"MYR","country":"MY","merchant_reference":"` + ref +
			`","payment_method":"FPX","customer":{"name":"A","email":"a@example.com"}}`
		req := httptest.NewRequest("POST", baseURL+"/v1/payment_intents", strings.NewReader(body))
		req.SetBasicAuth(a.demoKey.PublicKey, a.demoKey.SecretKey)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Idempotency-Key", "k-"+ref)
		w := httptest.NewRecorder()
		a.handler.ServeHTTP(w, req)
		if w.Code != http.StatusCreated {
			b.Fatalf("status %d: %s", w.Code, w.Body)
		}
	}
	b.Run("serial", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			create(b)
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				create(b)
			}
		})
	})
}
