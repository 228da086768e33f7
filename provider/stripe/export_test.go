package stripe

import (
	"context"

	"github.com/paykit/paykit"
)

// PayoutLines reads the settlement lines of the payout id, for the tests
// that check request shapes against stripe-mock, whose payouts are never
// paid.
func PayoutLines(p *Provider, ctx context.Context, id string) ([]paykit.SettlementLine, error) {
	return p.payoutLines(ctx, id, 0, map[string]string{})
}

// CheckoutPaymentRef is paykit's Reference of the Checkout payment whose
// PaymentIntent is pi, as a settlement line names it.
func CheckoutPaymentRef(p *Provider, ctx context.Context, pi string) (string, error) {
	return p.paymentRef(ctx, &txnSource{ID: "ch_x", PaymentIntent: []byte(`"` + pi + `"`), Metadata: map[string]string{checkoutMetadata: "true"}}, map[string]string{})
}
