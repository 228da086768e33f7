package xendit_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/provider/providertest"
	"github.com/paykit/paykit/provider/xendit"
	"github.com/paykit/paykit/provider/xendit/xenditfake"
)

const (
	testSecret  = "xnd_development_paykit_test_key"
	testToken   = "paykit-test-callback-token"
	testTimeout = 200 * time.Millisecond
)

func newFake(opt xenditfake.Options) *xenditfake.Fake {
	opt.SecretKey, opt.CallbackToken = testSecret, testToken
	return xenditfake.New(opt)
}

// adapter calls baseURL within timeout.
func adapter(t testing.TB, baseURL string, timeout time.Duration, now func() time.Time) *xendit.Provider {
	t.Helper()
	p, err := xendit.New(xendit.Config{SecretKey: testSecret, CallbackTokens: []string{"old-token", testToken}, BaseURL: baseURL,
		Timeout: timeout, Now: now, SettlementReports: true, DisplayName: "Kedai Paykit"})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func tng(key string, amount int64) paykit.PaymentRequest {
	return paykit.PaymentRequest{
		Key: key, Amount: amount, Currency: "MYR", Country: "MY", Method: "TNG",
		Customer: map[string]string{"name": "Aisyah"}, ReturnURL: "https://pay.example/pay/return/t",
	}
}

func payout(key, account string) paykit.PayoutRequest {
	return paykit.PayoutRequest{
		Key: key, Amount: 50000, Currency: "MYR", Country: "MY", BankCode: "MY_MAYBANK",
		AccountNumber: account, HolderName: "Aisyah binti Ahmad",
	}
}

// The adapter passes the Provider conformance suite against the fake,
// fees, disputes and settlement included: the fake and the adapter keep a
// manual clock, which the suite's settling moves on five days, past the
// 48 hours the fake's payments take to settle. Xendit authenticates its
// webhooks by a token, not a body signature (TokenCallbacks). Amounts
// stay within Touch 'n Go's documented limits.
func TestProviderConformance(t *testing.T) {
	clock := paykit.NewManualClock(time.Date(2026, 11, 24, 15, 4, 5, 0, time.UTC))
	f := newFake(xenditfake.Options{Now: clock.Now, Auto: true})
	declined := tng("", 10901) // ends in 901: the fake declines it
	failed := payout("", xenditfake.InvalidAccount)
	webhook := func(event string) func(string) *http.Request {
		return func(key string) *http.Request {
			r, err := f.Webhook(event, key)
			if err != nil {
				t.Fatal(err)
			}
			return r
		}
	}
	providertest.Run(t, providertest.Harness{
		Fake:         f,
		New:          func(baseURL string) paykit.Provider { return adapter(t, baseURL, testTimeout, clock.Now) },
		Payment:      tng("", 0),
		Payout:       payout("", "1234567890"),
		Amounts:      []int64{2000, 12345, 2500000},
		Declined:     &declined,
		FailedPayout: &failed,
		UnknownReference: func(kind string) string {
			return map[string]string{
				"payment": "pr-00000000-0000-4000-8000-000000000000",
				"payout":  "disb-00000000-0000-4000-8000-000000000000",
				"refund":  "rfd-00000000-0000-4000-8000-000000000000",
				"dispute": "mi-dspt-00000000-0000-4000-8000-000000000000",
			}[kind]
		},
		Received:       f.Received,
		Callback:       webhook("payment.capture"),
		TokenCallbacks: true,
		Pay: func(ctx context.Context, p paykit.Provider, req paykit.PaymentRequest) error {
			if r := p.CreatePayment(ctx, req); r.Outcome != paykit.OutcomeRequiresAction && r.Outcome != paykit.OutcomePending {
				t.Fatalf("create: %s (%s)", r.Outcome, r.Detail)
			}
			return f.Approve(req.Key)
		},
		RefundAmounts:  []int64{2000, 12345, 2500000},
		DeclinedRefund: 20911,
		RefundCallback: webhook("refund.succeeded"),
		Fee:            f.Fee,
		OpenDispute: func(key string, amount int64) *http.Request {
			if _, err := f.OpenDispute(key, amount, "fraud"); err != nil {
				t.Fatalf("open dispute on %s: %v", key, err)
			}
			return webhook("dispute.action_required")(key)
		},
		Settle: func(context.Context, paykit.Provider) error {
			clock.Advance(5 * 24 * time.Hour)
			return nil
		},
	})
}
