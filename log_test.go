package paykit_test

import (
	"context"
	"log/slog"
	"regexp"
	"testing"

	"github.com/matryer/is"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/paykittest"
)

// A create logs its Provider call as one line of plain text attributes.
func TestCreateLogsTheProviderCall(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	var logs paykittest.LogBuffer
	e := paykittest.New(t, paykittest.WithConfig(func(c *paykit.Config) {
		c.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	}))
	m := e.Merchant(ctx)
	pi, _, err := e.Service.CreatePaymentIntent(ctx, m.Principal, "log-1", paykit.CreatePaymentIntentRequest{
		Amount: 15000, Currency: "MYR", Country: "MY", MerchantReference: "order-log-1", PaymentMethod: "TNG",
		Customer: map[string]string{"name": "Aisyah", "email": "aisyah@example.com"},
	})
	is.NoErr(err)
	line := regexp.MustCompile(`level=INFO msg="provider create payment" payment_intent=` + pi.ID +
		` provider=sandbox outcome=requires_action detail="state=PAYER_ACTION"\n`)
	if !line.MatchString(logs.String()) {
		t.Fatalf("no provider line for %s in:\n%s", pi.ID, logs.String())
	}
}
