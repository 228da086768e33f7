package paykit_test

import (
	"context"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/paykittest"
)

// TestSandboxRefundMagicAmounts: the sandbox PSP's refund outcomes through
// the Service, on every Store: …911 declined at once, …912 a Provider
// timeout that stays pending until recovery finds it succeeded, others
// pending until the PSP's callback; BANK_TRANSFER cannot refund.
func TestSandboxRefundMagicAmounts(t *testing.T) {
	t.Parallel()
	for _, kind := range paykittest.Stores {
		t.Run(string(kind), func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			ctx := context.Background()
			env := paykittest.New(t, paykittest.WithStore(kind))
			m := env.Merchant(ctx)
			pi, _, err := env.Service.CreatePaymentIntent(ctx, m.Principal, "order-1", paykit.CreatePaymentIntentRequest{
				Amount: 50000, Currency: "MYR", Country: "MY", MerchantReference: "order-1",
				PaymentMethod: "FPX", Customer: map[string]string{"name": "Aisyah", "email": "aisyah@example.com"},
			})
			is.NoErr(err)
			is.NoErr(env.Pay(ctx, pi.ID))
			env.SettleAndNotify(ctx)
			_, err = env.Service.SettleTestFunds(ctx, m.Principal) // refunds draw on settled funds
			is.NoErr(err)
			refund := func(ref string, amount int64) *paykit.Refund {
				t.Helper()
				re, ans, err := env.Service.CreateRefund(ctx, m.Principal, "k-"+ref, paykit.CreateRefundRequest{PaymentIntent: pi.ID, MerchantReference: ref, Amount: amount})
				is.NoErr(err)
				is.Equal(ans.Kind, paykit.AnswerCreated)
				return re
			}
			get := func(id string) *paykit.Refund {
				t.Helper()
				re, err := env.Service.GetRefund(ctx, m.Principal, id)
				is.NoErr(err)
				return re
			}

			declined := refund("declined", 1911)
			is.Equal(declined.Status, paykit.RefundFailed)
			is.Equal(declined.FailureCode, paykit.RefundProviderDeclined)

			timedOut := refund("timeout", 1912)
			is.Equal(timedOut.Status, paykit.RefundPending)
			normal := refund("normal", 2000)
			is.Equal(normal.Status, paykit.RefundPending)

			env.SettleAndNotify(ctx) // the PSP's callbacks settle both
			for range 5 {            // and recovery asks about whatever a callback missed
				env.Clock.Advance(time.Minute)
				env.Drain(ctx)
			}
			for _, id := range []string{timedOut.ID, normal.ID} {
				re := get(id)
				is.Equal(re.Status, paykit.RefundSucceeded)
				is.True(re.ProviderRef != "")
			}
			is.Equal(len(env.PSP.Refunds()), 3) // one each, however often asked
			got, err := env.Service.GetPaymentIntent(ctx, m.Principal, pi.ID)
			is.NoErr(err)
			is.Equal(got.RefundedAmount, int64(3912))
			is.Equal(got.RefundPendingAmount, int64(0))

			bt, _, err := env.Service.CreatePaymentIntent(ctx, m.Principal, "order-2", paykit.CreatePaymentIntentRequest{
				Amount: 50000, Currency: "MYR", Country: "MY", MerchantReference: "order-2",
				PaymentMethod: "BANK_TRANSFER", Customer: map[string]string{"name": "Aisyah", "email": "aisyah@example.com"},
			})
			is.NoErr(err)
			is.NoErr(env.Pay(ctx, bt.ID))
			env.SettleAndNotify(ctx)
			bt, err = env.Service.GetPaymentIntent(ctx, m.Principal, bt.ID)
			is.NoErr(err)
			is.Equal(bt.Status, paykit.PaymentSucceeded)
			_, _, err = env.Service.CreateRefund(ctx, m.Principal, "k-bt", paykit.CreateRefundRequest{PaymentIntent: bt.ID, MerchantReference: "bt"})
			is.Equal(paykit.ErrorCode(err), paykit.CodeRefundUnsupported)
		})
	}
}
