package stripe_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/provider/stripe"
	"github.com/paykit/paykit/provider/stripe/stripefake"
)

// An FPX payment through the adapter, against the fake: the payer is
// redirected to Stripe's page, approves, and the payment succeeds; then a
// partial refund.
func Example() {
	fake := stripefake.New(stripefake.Options{SecretKey: "sk_test_example", AccountCountry: "MY", WebhookSecret: "whsec_example"})
	api := httptest.NewServer(fake)
	defer api.Close()

	p, err := stripe.New(stripe.Config{
		SecretKey: "sk_test_example", WebhookSecrets: []string{"whsec_example"},
		BaseURL: api.URL, AccountCountry: "MY", Methods: []string{"FPX", "CARD"},
	})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	route, _ := stripe.Route("FPX", "MY")
	maybank, _ := route.Bank("MAYBANK")
	r := p.CreatePayment(ctx, paykit.PaymentRequest{
		Key: "pi_attempt_1", Amount: 12345, Currency: "MYR", Country: "MY", Method: "FPX",
		Options: map[string]string{"bank": maybank.ProviderCode}, ReturnURL: "https://pay.example/return",
	})
	fmt.Println(r.Outcome, r.Action.Type, strings.HasPrefix(r.Reference, "pi_"))

	_ = fake.Approve("pi_attempt_1") // the payer completes the redirect
	r = p.InquirePayment(ctx, paykit.AttemptRef{Key: "pi_attempt_1", Reference: r.Reference})
	fmt.Println(r.Outcome)

	rf := p.CreateRefund(ctx, paykit.RefundRequest{Key: "rf_1", PaymentRef: r.Reference, Amount: 2345, Currency: "MYR"})
	fmt.Println(rf.Outcome)
	// Output:
	// requires_action redirect_to_url true
	// succeeded
	// pending
}
