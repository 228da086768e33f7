package opn_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/provider/opn"
	"github.com/paykit/paykit/provider/opn/opnfake"
	"github.com/paykit/paykit/provider/providertest"
)

const (
	testSecret  = "skey_test_5xuy4w91xqz7d1w9u0t"
	testPublic  = "pkey_test_5xuy4w91xqz7d1w9u0t"
	testTimeout = 200 * time.Millisecond
)

func newFake(t *testing.T) *opnfake.Fake {
	t.Helper()
	return opnfake.New(opnfake.Options{SecretKey: testSecret, PublicKey: testPublic})
}

// adapter calls baseURL with the suite's short timeout.
func adapter(t *testing.T, f *opnfake.Fake, baseURL string) *opn.Provider {
	t.Helper()
	return adapterWithin(t, f, baseURL, testTimeout)
}

func adapterWithin(t *testing.T, f *opnfake.Fake, baseURL string, timeout time.Duration) *opn.Provider {
	t.Helper()
	p, err := opn.New(opn.Config{SecretKey: testSecret, BaseURL: baseURL, WebhookSecrets: []string{f.WebhookSecret()}, Timeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func promptpay(key string, amount int64) paykit.PaymentRequest {
	return paykit.PaymentRequest{
		Key: key, Amount: amount, Currency: "THB", Country: "TH", Method: "PROMPTPAY",
		Customer: map[string]string{"name": "Somchai Jaidee", "email": "somchai@example.com"}, ReturnURL: "https://pay.example/pay/return/t",
	}
}

func payout(key, account string) paykit.PayoutRequest {
	return paykit.PayoutRequest{
		Key: key, Amount: 50000, Currency: "THB", Country: "TH", BankCode: "kbank",
		AccountNumber: account, HolderName: "Somchai Jaidee", HolderNameTH: "สมชาย ใจดี",
	}
}

// The adapter passes the Provider conformance suite against the fake,
// fees, disputes and settlement included: the fake and the adapter keep a
// manual clock, which the suite's settling moves on five days, past the
// day every transaction so far became transferable. Opn
// caps amounts per method, so the amounts stay within PromptPay's limits
// (TestAmountsAboveFloatPrecision shows larger ones survive the adapter).
func TestProviderConformance(t *testing.T) {
	clock := paykit.NewManualClock(time.Date(2026, 11, 24, 15, 4, 5, 0, time.UTC))
	f := opnfake.New(opnfake.Options{SecretKey: testSecret, PublicKey: testPublic, Now: clock.Now})
	declined := promptpay("", 10901) // ends in 901: the fake declines it
	failed := payout("", opnfake.InvalidAccount)
	providertest.Run(t, providertest.Harness{
		Fake: f,
		New: func(baseURL string) paykit.Provider {
			p, err := opn.New(opn.Config{SecretKey: testSecret, BaseURL: baseURL, WebhookSecrets: []string{f.WebhookSecret()},
				Timeout: testTimeout, Now: clock.Now, SettlementReports: true})
			if err != nil {
				t.Fatal(err)
			}
			return p
		},
		Payment:      promptpay("", 0),
		Payout:       payout("", "1234567890"),
		Amounts:      []int64{2000, 12345, 15000000},
		Declined:     &declined,
		FailedPayout: &failed,
		UnknownReference: func(kind string) string {
			return map[string]string{
				"payment": "chrg_test_5zz0000000000000000",
				"payout":  "trsf_test_5zz0000000000000000",
				"refund":  "chrg_test_5zz0000000000000000/rfnd_test_5zz0000000000000000",
				"dispute": "dspt_test_5zz0000000000000000",
			}[kind]
		},
		Received: f.Received,
		Callback: func(key string) *http.Request {
			r, err := f.Webhook("charge.complete", key)
			if err != nil {
				t.Fatal(err)
			}
			return r
		},
		Pay: func(ctx context.Context, p paykit.Provider, req paykit.PaymentRequest) error {
			if r := p.CreatePayment(ctx, req); r.Outcome != paykit.OutcomeRequiresAction && r.Outcome != paykit.OutcomePending {
				t.Fatalf("create: %s (%s)", r.Outcome, r.Detail)
			}
			return f.Approve(req.Key)
		},
		RefundAmounts:  []int64{2000, 12345, 15000000},
		DeclinedRefund: 20911,
		RefundCallback: func(key string) *http.Request {
			r, err := f.Webhook("refund.create", key)
			if err != nil {
				t.Fatal(err)
			}
			return r
		},
		Fee: f.Fee,
		OpenDispute: func(key string, amount int64) *http.Request {
			if _, err := f.OpenDispute(key, amount, ""); err != nil {
				t.Fatalf("open dispute on %s: %v", key, err)
			}
			r, err := f.Webhook("dispute.create", key)
			if err != nil {
				t.Fatal(err)
			}
			return r
		},
		Settle: func(context.Context, paykit.Provider) error {
			clock.Advance(5 * 24 * time.Hour)
			return nil
		},
	})
}
