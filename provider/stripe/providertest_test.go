package stripe_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/provider/providertest"
	"github.com/paykit/paykit/provider/stripe"
	"github.com/paykit/paykit/provider/stripe/stripefake"
)

const (
	testSecretKey     = "sk_test_paykit0000000000000000"
	testWebhookSecret = "whsec_paykit_test_0000000000"
	testTimeout       = 200 * time.Millisecond
)

// newAdapter is an adapter for a MY account calling baseURL.
func newAdapter(t *testing.T, baseURL string, mod ...func(*stripe.Config)) *stripe.Provider {
	t.Helper()
	cfg := stripe.Config{
		SecretKey: testSecretKey, WebhookSecrets: []string{testWebhookSecret}, BaseURL: baseURL,
		Timeout: testTimeout, AccountCountry: "MY",
	}
	for _, m := range mod {
		m(&cfg)
	}
	p, err := stripe.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func fpxPayment(amount int64) paykit.PaymentRequest {
	return paykit.PaymentRequest{
		Amount: amount, Currency: "MYR", Country: "MY", Method: "FPX",
		Customer:  map[string]string{"name": "Aisyah Rahman", "email": "aisyah@example.com"},
		Options:   map[string]string{"bank": "maybank2u"},
		ReturnURL: "https://pay.example/pay/return/t",
	}
}

// The adapter passes the Provider conformance suite against the stateful
// fake. Stripe caps amounts at eight digits (99999999), so the amounts
// stay within it; a PaymentIntent amount ending in 901 is declined and a
// refund amount ending in 911 fails (the fake's triggers).
func TestProviderConformance(t *testing.T) {
	fake := stripefake.New(stripefake.Options{SecretKey: testSecretKey, AccountCountry: "MY", WebhookSecret: testWebhookSecret})
	declined := fpxPayment(10901)
	providertest.Run(t, providertest.Harness{
		Fake:           fake,
		New:            func(baseURL string) paykit.Provider { return newAdapter(t, baseURL) },
		Payment:        fpxPayment(0),
		Amounts:        []int64{200, 12345, 99999999},
		Declined:       &declined,
		RefundAmounts:  []int64{1000, 12345, 99999999},
		DeclinedRefund: 20911,
		Received:       fake.Received,
		UnknownReference: func(kind string) string {
			return map[string]string{"payment": "pi_000000000000000000000000", "refund": "re_000000000000000000000000"}[kind]
		},
		Callback:       webhook(t, fake, "payment_intent.requires_action"),
		RefundCallback: webhook(t, fake, "refund.updated"),
		Pay: func(ctx context.Context, p paykit.Provider, req paykit.PaymentRequest) error {
			if r := p.CreatePayment(ctx, req); !slices.Contains([]paykit.Outcome{paykit.OutcomeRequiresAction, paykit.OutcomePending}, r.Outcome) {
				return fmt.Errorf("create: %s (%s)", r.Outcome, r.Detail)
			}
			return fake.Approve(req.Key)
		},
	})
}

func webhook(t *testing.T, fake *stripefake.Fake, typ string) func(string) *http.Request {
	return func(key string) *http.Request {
		r, err := fake.Webhook(typ, key)
		if err != nil {
			t.Fatalf("webhook %s %s: %v", typ, key, err)
		}
		return r
	}
}
