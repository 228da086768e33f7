package paykit_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/matryer/is"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/paykittest"
	"github.com/paykit/paykit/provider/opn"
	"github.com/paykit/paykit/provider/opn/opnfake"
)

// tracedService is a paykittest Env whose Service traces with a provider
// sampling as sampler says, into an in-memory exporter.
func tracedService(t *testing.T, sampler sdktrace.Sampler) (*paykittest.Env, *tracetest.InMemoryExporter, trace.Tracer) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp), sdktrace.WithSampler(sampler))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	e := paykittest.New(t, paykittest.WithConfig(func(c *paykit.Config) { c.TracerProvider = tp }))
	return e, exp, tp.Tracer("host")
}

// TestTracingFromTheGoAPI: a call of the Go API without a span of the
// host's makes root spans of its transactions and Provider calls; under
// the host's span they are its children.
func TestTracingFromTheGoAPI(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	e, exp, host := tracedService(t, sdktrace.AlwaysSample())
	m := e.Merchant(ctx)
	exp.Reset()

	_, _, err := e.Service.CreatePaymentIntent(ctx, m.Principal, "k-1", fpx(5000, "r-1"))
	is.NoErr(err)
	spans := exp.GetSpans()
	is.True(len(spans) >= 3)
	names := map[string]int{}
	for _, s := range spans {
		is.True(!s.Parent.IsValid()) // roots: the host had no span
		names[s.Name]++
	}
	is.True(names["tx CreatePaymentIntent"] >= 2)
	is.Equal(names["sandbox create_payment"], 1)

	exp.Reset()
	hctx, span := host.Start(ctx, "checkout")
	_, _, err = e.Service.CreatePaymentIntent(hctx, m.Principal, "k-2", fpx(5000, "r-2"))
	is.NoErr(err)
	span.End()
	for _, s := range exp.GetSpans() {
		if s.Name != "checkout" {
			is.Equal(s.SpanContext.TraceID(), span.SpanContext().TraceID())
			is.True(s.Parent.IsValid())
		}
	}
}

// TestTracingUnsampledTraceRecordsNothing: under a host's span that was
// not sampled, paykit starts no span of its own.
func TestTracingUnsampledTraceRecordsNothing(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	e, exp, host := tracedService(t, sdktrace.ParentBased(sdktrace.NeverSample()))
	m := e.Merchant(ctx)
	hctx, span := host.Start(ctx, "checkout")
	is.True(!span.IsRecording())
	_, _, err := e.Service.CreatePaymentIntent(hctx, m.Principal, "k-1", fpx(5000, "r-1"))
	is.NoErr(err)
	span.End()
	is.Equal(len(exp.GetSpans()), 0)
}

// TestNoTraceparentToARealProvider: a real Provider's API (Opn, behind
// its fake) receives no traceparent from a traced call, since only
// paykit's own sandbox PSP joins paykit's traces.
func TestNoTraceparentToARealProvider(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	fake := opnfake.New(opnfake.Options{SecretKey: "skey_test_trace"})
	var mu sync.Mutex
	var seen []string
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Get("Traceparent"))
		mu.Unlock()
		fake.ServeHTTP(w, r)
	}))
	defer api.Close()
	p, err := opn.New(opn.Config{SecretKey: "skey_test_trace", BaseURL: api.URL, WebhookSecrets: []string{fake.WebhookSecret()},
		Methods: []string{"TNG"}})
	is.NoErr(err)
	route, _ := opn.Route("TNG", "MY")
	route.Environment, route.Provider = paykit.Test, "opn"
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	e := paykittest.New(t, paykittest.WithConfig(func(c *paykit.Config) {
		c.TracerProvider = tp
		c.Providers = map[string]paykit.Provider{"opn": p}
		c.Routing = paykit.Routing{Payments: []paykit.PaymentRoute{route}}
	}))
	m := e.Merchant(ctx)
	req := fpx(15000, "r-1")
	req.PaymentMethod = "TNG"
	_, _, err = e.Service.CreatePaymentIntent(ctx, m.Principal, "k-1", req)
	is.NoErr(err)
	calls := 0
	for _, s := range exp.GetSpans() {
		if s.Name == "opn create_payment" {
			calls++
		}
	}
	is.Equal(calls, 1) // the call was traced
	mu.Lock()
	defer mu.Unlock()
	is.True(len(seen) > 0)
	for _, h := range seen {
		is.Equal(h, "")
	}
}
