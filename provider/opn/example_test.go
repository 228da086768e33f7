package opn_test

import (
	"context"
	"fmt"
	"net/http/httptest"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/provider/opn"
	"github.com/paykit/paykit/provider/opn/opnfake"
)

// An FPX payment through the adapter against the fake Opn API: the
// route's bank becomes Opn's source[bank], the payer is redirected, and
// Opn's signed charge.complete webhook settles it.
func Example() {
	fake := opnfake.New(opnfake.Options{SecretKey: "skey_test_example"})
	api := httptest.NewServer(fake)
	defer api.Close()

	p, err := opn.New(opn.Config{
		SecretKey:      "skey_test_example",
		BaseURL:        api.URL,
		WebhookSecrets: []string{fake.WebhookSecret()},
		Methods:        []string{"FPX", "TNG"},
	})
	if err != nil {
		panic(err)
	}
	route, _ := opn.Route("FPX", "MY")
	bank, _ := route.Bank("MAYBANK")

	ctx := context.Background()
	r := p.CreatePayment(ctx, paykit.PaymentRequest{
		Key: "pi_123_1", Amount: 150000, Currency: "MYR", Country: "MY", Method: "FPX",
		Customer:  map[string]string{"email": "aisyah@example.com"},
		Options:   map[string]string{"bank": bank.ProviderCode},
		ReturnURL: "https://pay.example/pay/return/pi_123",
	})
	fmt.Println(r.Outcome, r.Action.Type)

	_ = fake.Approve("pi_123_1") // the payer pays at the bank
	hook, _ := fake.Webhook("charge.complete", "pi_123_1")
	events, err := p.ParseCallback(ctx, hook)
	if err != nil {
		panic(err)
	}
	fmt.Println(events[0].Kind, events[0].Key, events[0].Result.Outcome)
	fmt.Println(p.InquirePayment(ctx, paykit.AttemptRef{Key: "pi_123_1", Reference: r.Reference}).Outcome)
	// Output:
	// requires_action redirect_to_url
	// payment pi_123_1 succeeded
	// succeeded
}
