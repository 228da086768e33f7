package main

import (
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/matryer/is"

	"github.com/paykit/paykit/internal/otlpview"
)

// TestServerExportsOTLP: with OTEL_EXPORTER_OTLP_ENDPOINT set, the server
// exports its spans and metrics over OTLP/HTTP (flushed when it stops);
// the OTEL_* variables configure the SDK. (It sets the process's
// environment, which the SDK reads: not parallel.)
func TestServerExportsOTLP(t *testing.T) {
	is := is.New(t)
	var c otlpview.Collector
	collector := httptest.NewServer(&c)
	defer collector.Close()
	vars := map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": collector.URL, "OTEL_SERVICE_NAME": "paykit-e2e"}
	for k, v := range vars {
		t.Setenv(k, v)
	}
	s := startEnv(t, vars, "-db", "memory", "-demo")
	pi := s.createPayment(t, "otlp-1", `{"amount":"15000","currency":"MYR","country":"MY","merchant_reference":"otlp-1","payment_method":"FPX","customer":{"name":"A","email":"a@example.com"}}`)
	is.Equal(pi["status"], "requires_action")
	is.NoErr(s.stop())

	var request, call, psp *otlpview.Span
	spans := c.Spans()
	for i, sp := range spans {
		switch sp.Name {
		case "POST /payment_intents":
			request = &spans[i]
		case "sandbox create_payment":
			call = &spans[i]
		case "sandbox.psp payments.create":
			psp = &spans[i]
		}
	}
	is.True(request != nil && call != nil && psp != nil)
	is.Equal(request.Service, "paykit-e2e") // OTEL_SERVICE_NAME applies
	is.Equal(request.Kind, "server")
	is.Equal(request.Attributes["http.response.status_code"], "201")
	is.Equal(call.ParentID, request.SpanID)
	is.Equal(call.Attributes["paykit.outcome"], "requires_action")
	is.Equal(psp.ParentID, call.SpanID) // the sandbox PSP joins the trace
	metrics := c.Metrics()
	for _, m := range []string{"http.server.request.duration", "db.client.operation.duration", "paykit.provider.call.duration"} {
		is.True(slices.Contains(metrics, m))
	}
}

// TestServerExportsNothingByDefault: without the variable the server
// starts no exporter (paykit's providers stay the no-op globals).
func TestServerExportsNothingByDefault(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	is.True(!otlpEnabled(func(string) string { return "" }))
	is.True(otlpEnabled(func(k string) string { return map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://x"}[k] }))
	is.True(!otlpEnabled(func(k string) string {
		return map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://x", "OTEL_SDK_DISABLED": "true"}[k]
	}))
}
