package paykit_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/paykittest"
	"github.com/paykit/paykit/provider/sandbox"
)

// lostCreates is the sandbox adapter whose first creates of payouts and
// refunds are lost on the way: the PSP never receives them and the caller
// hears nothing.
type lostCreates struct {
	*sandbox.Provider
	lost atomic.Int32 // how many creates are still to be lost
}

func (p *lostCreates) CreatePayout(ctx context.Context, req paykit.PayoutRequest) paykit.Result {
	if p.lost.Add(-1) >= 0 {
		return paykit.Result{Outcome: paykit.OutcomeUnknown, Detail: "sent, no answer"}
	}
	return p.Provider.CreatePayout(ctx, req)
}

func (p *lostCreates) CreateRefund(ctx context.Context, req paykit.RefundRequest) paykit.Result {
	if p.lost.Add(-1) >= 0 {
		return paykit.Result{Outcome: paykit.OutcomeUnknown, Detail: "sent, no answer"}
	}
	return p.Provider.CreateRefund(ctx, req)
}

// Seed 1214: a create whose answer never came, and which the PSP never
// received, is sent again when an inquiry finds nothing; when the resend
// ran in the same round as that inquiry (the request's own dispatch job
// came due with it), the inquiry job it scheduled was taken for the
// inquiry that was finishing, so no job asked again, and with the PSP's
// callback lost the payout (or refund) stayed processing for ever though
// the PSP paid it. The inquiry now keeps asking after a resend.
func TestSimSeed1214ResendInTheRoundOfItsInquiry(t *testing.T) {
	t.Parallel()
	for _, kind := range paykittest.Stores {
		for _, what := range []string{"payout", "refund"} {
			t.Run(string(kind)+"/"+what, func(t *testing.T) {
				t.Parallel()
				is := is.New(t)
				ctx := context.Background()
				var prov *lostCreates
				env := paykittest.New(t, paykittest.WithStore(kind), paykittest.WithConfig(func(c *paykit.Config) {
					prov = &lostCreates{Provider: c.Providers[sandbox.Name].(*sandbox.Provider)}
					c.Providers = map[string]paykit.Provider{sandbox.Name: prov}
				}))
				m := env.Merchant(ctx)
				_, err := env.Service.AdjustBalance(ctx, "ops", m.ID, paykit.BalanceAdjustmentRequest{Environment: paykit.Test, Currency: "MYR", Amount: 1_000_000, Reason: "float"})
				is.NoErr(err)
				var get func() (string, error)
				switch what {
				case "payout":
					prov.lost.Store(1)
					po, _, err := env.Service.CreatePayoutIntent(ctx, m.Principal, "k-payout", paykit.CreatePayoutIntentRequest{
						Amount: 10000, Currency: "MYR", Country: "MY", MerchantReference: "payout-1",
						Recipient: paykit.Recipient{Type: "bank_account", AccountNumber: "123456789012", BankCode: "MAYBANK", HolderName: "Aisyah"},
					})
					is.NoErr(err)
					is.Equal(po.Status, paykit.PayoutProcessing)
					get = func() (string, error) {
						po, err := env.Service.GetPayoutIntent(ctx, m.Principal, po.ID)
						return string(po.Status), err
					}
				case "refund":
					pi, _, err := env.Service.CreatePaymentIntent(ctx, m.Principal, "k-pay", paykit.CreatePaymentIntentRequest{
						Amount: 50000, Currency: "MYR", Country: "MY", MerchantReference: "order-1",
						PaymentMethod: "FPX", Customer: map[string]string{"name": "Aisyah", "email": "aisyah@example.com"},
					})
					is.NoErr(err)
					is.NoErr(env.Pay(ctx, pi.ID))
					env.SettleAndNotify(ctx)
					prov.lost.Store(1)
					re, _, err := env.Service.CreateRefund(ctx, m.Principal, "k-refund", paykit.CreateRefundRequest{PaymentIntent: pi.ID, MerchantReference: "refund-1", Amount: 2000})
					is.NoErr(err)
					is.Equal(re.Status, paykit.RefundPending)
					get = func() (string, error) {
						re, err := env.Service.GetRefund(ctx, m.Principal, re.ID)
						return string(re.Status), err
					}
				}
				// The inquiry (due after a second) and the request's own
				// dispatch job (after its lock) run in one round: the
				// inquiry finds nothing, and the create is sent again.
				env.Clock.Advance(31 * time.Second)
				n, err := env.Service.ProcessDue(ctx)
				is.NoErr(err)
				is.True(n >= 2)
				// The PSP's callbacks are lost: only inquiries can tell.
				for range 20 {
					env.Clock.Advance(time.Minute)
					env.Drain(ctx)
				}
				status, err := get()
				is.NoErr(err)
				is.Equal(status, "succeeded")
			})
		}
	}
}
