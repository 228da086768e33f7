package xendit_test

import (
	"context"
	"fmt"
	"net/http/httptest"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/provider/xendit"
	"github.com/paykit/paykit/provider/xendit/xenditfake"
)

// An FPX payment through the adapter against the fake Xendit API: the
// route's bank becomes Xendit's {Bank}_FPX channel code, the payer is
// redirected, and Xendit's payment.capture webhook (authenticated by its
// x-callback-token, the payment read back from the API) settles it with
// Xendit's fee.
func Example() {
	fake := xenditfake.New(xenditfake.Options{SecretKey: "xnd_development_example"})
	api := httptest.NewServer(fake)
	defer api.Close()

	p, err := xendit.New(xendit.Config{
		SecretKey:      "xnd_development_example",
		BaseURL:        api.URL,
		CallbackTokens: []string{fake.CallbackToken()},
		Methods:        []string{"FPX", "TNG"},
	})
	if err != nil {
		panic(err)
	}
	route, _ := xendit.Route("FPX", "MY")
	bank, _ := route.Bank("MAYBANK")
	fmt.Println(bank.ProviderCode)

	ctx := context.Background()
	r := p.CreatePayment(ctx, paykit.PaymentRequest{
		Key: "pi_123_1", Amount: 150000, Currency: "MYR", Country: "MY", Method: "FPX",
		Customer:  map[string]string{"email": "aisyah@example.com"},
		Options:   map[string]string{"bank": bank.ProviderCode},
		ReturnURL: "https://pay.example/pay/return/pi_123",
	})
	fmt.Println(r.Outcome, r.Action.Type)

	_ = fake.Approve("pi_123_1") // the payer pays at the bank
	hook, _ := fake.Webhook("payment.capture", "pi_123_1")
	events, err := p.ParseCallback(ctx, hook)
	if err != nil {
		panic(err)
	}
	fmt.Println(events[0].Kind, events[0].Key, events[0].Result.Outcome)
	fmt.Println("fee", events[0].Result.Fee) // the fake's 2.5 % and 8 % tax on it: RM 37.50 + RM 3.00
	// Output:
	// MAYB2U_FPX
	// requires_action redirect_to_url
	// payment pi_123_1 succeeded
	// fee 4050
}
