package paykit_test

import (
	"context"
	"fmt"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/store/memory"
)

// A host hands paykit its own TracerProvider (and MeterProvider): under
// the host's span, each Store transaction and Provider call of a create
// is a child span; the Provider call carries its outcome.
func ExampleConfig_tracing() {
	exporter := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exporter))
	defer func() { _ = tp.Shutdown(context.Background()) }()
	e := newExample(memory.New(), paykit.Config{TracerProvider: tp})
	defer e.close()
	exporter.Reset() // the example's set-up

	ctx, span := tp.Tracer("shop").Start(context.Background(), "checkout")
	if _, _, err := e.svc.CreatePaymentIntent(ctx, e.p, "order-1001", tngPayment("order-1001")); err != nil {
		panic(err)
	}
	span.End()
	for _, s := range exporter.GetSpans() {
		outcome := ""
		for _, kv := range s.Attributes {
			if kv.Key == "paykit.outcome" {
				outcome = " (" + kv.Value.AsString() + ")"
			}
		}
		fmt.Println(s.Name + outcome)
	}
	// Output:
	// tx CreatePaymentIntent
	// sandbox create_payment (requires_action)
	// tx CreatePaymentIntent
	// checkout
}
