package paykit_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/internal/monitor"
	"github.com/paykit/paykit/store/memory"
)

// A Provider that refuses every connection is logged at WARN on each
// create, and counted by outcome in monitor.ProviderCalls (which
// paykit_provider_calls_total exposes); a Provider that answers stays at
// INFO.
func TestUnreachableProviderWarnsAndCounts(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	var logs bytes.Buffer
	e := newFlowEnvOn(t, memory.New(), func(c *paykit.Config) {
		c.Logger = slog.New(slog.NewTextHandler(&logs, nil))
		c.CircuitFailures = 100 // every create reaches the Provider
	})
	_, _, err := e.svc.CreatePaymentIntent(ctx, e.test, "k-ok", fpx(5000, "order-ok"))
	is.NoErr(err)
	is.True(strings.Contains(logs.String(), `level=INFO msg="provider create payment"`))
	is.True(!strings.Contains(logs.String(), "level=WARN"))

	e.provider.mu.Lock()
	e.provider.down = true
	e.provider.mu.Unlock()
	for i := range 3 {
		_, _, _ = e.svc.CreatePaymentIntent(ctx, e.test, fmt.Sprintf("k-down-%d", i), fpx(5000, fmt.Sprintf("order-down-%d", i)))
	}
	is.Equal(strings.Count(logs.String(), `level=WARN msg="provider create payment: no answer"`), 3)
	is.True(strings.Contains(logs.String(), `provider=fake outcome=unacknowledged detail="connection refused"`))
	is.Equal(monitor.ProviderCalls(e.svc), []monitor.ProviderCallCount{
		{Provider: "fake", Call: "create_payment", Outcome: string(paykit.OutcomeRequiresAction), Count: 1},
		{Provider: "fake", Call: "create_payment", Outcome: string(paykit.OutcomeUnacknowledged), Count: 3},
	})
}
