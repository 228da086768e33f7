package paykit_test

import (
	"context"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/paykittest"
	"github.com/paykit/paykit/provider/sandbox"
	"github.com/paykit/paykit/store/storetest"
)

// A settlement line read before paykit learnt the outcome it settles (a
// lost callback, a worker behind) opens a break; once paykit learns the
// outcome, the line is judged again and the break heals. Found by the
// simulation (internal/sim), seeds named in each test.

// lateEnv is a sandbox Env with a merchant whose MYR payment of amount
// succeeded at the PSP; settled, when settle, with paykit told.
type lateEnv struct {
	*paykittest.Env
	m  paykittest.Merchant
	pi *paykit.PaymentIntent
}

func newLateEnv(t *testing.T, kind paykittest.StoreKind, amount int64, settle bool) *lateEnv {
	t.Helper()
	is := is.New(t)
	ctx := context.Background()
	env := paykittest.New(t, paykittest.WithStore(kind))
	m := env.Merchant(ctx)
	pi, _, err := env.Service.CreatePaymentIntent(ctx, m.Principal, "order-1", paykit.CreatePaymentIntentRequest{
		Amount: amount, Currency: "MYR", Country: "MY", MerchantReference: "order-1",
		PaymentMethod: "FPX", Customer: map[string]string{"name": "Aisyah", "email": "aisyah@example.com"},
	})
	is.NoErr(err)
	is.NoErr(env.Pay(ctx, pi.ID))
	if settle {
		env.SettleAndNotify(ctx)
		_, err = env.Service.SettleTestFunds(ctx, m.Principal)
		is.NoErr(err)
	}
	t.Cleanup(func() { storetest.CheckLedger(t, env.Store, m.Principal.Scope) })
	return &lateEnv{Env: env, m: m, pi: pi}
}

// breaks returns the breaks of status.
func (e *lateEnv) breaks(t *testing.T, status paykit.BreakStatus) []paykit.ReconciliationBreak {
	t.Helper()
	page, err := e.Service.ListReconciliationBreaks(context.Background(), paykit.BreakListParams{Status: status})
	if err != nil {
		t.Fatal(err)
	}
	return page.Data
}

// healed checks that the one break there is was opened as typ and
// healed, matched, about source.
func (e *lateEnv) healed(t *testing.T, typ paykit.BreakType, source string) {
	t.Helper()
	is := is.New(t)
	is.Equal(len(e.breaks(t, paykit.BreakOpen)), 0)
	done := e.breaks(t, paykit.BreakResolved)
	is.Equal(len(done), 1)
	is.Equal(done[0].Type, typ)
	is.Equal(done[0].Resolution, paykit.ResolveMatched)
	is.Equal(done[0].Source, source)
	is.Equal(done[0].MerchantID, e.m.ID)
}

// Seed 56: the settlement helper read a payment's line while paykit still
// had the payment waiting for its payer; paykit then learnt of the
// success, and the break stayed open with the funds pending for ever.
func TestSimSeed56PaymentLineReadBeforeItsSuccess(t *testing.T) {
	t.Parallel()
	for _, kind := range paykittest.Stores {
		t.Run(string(kind), func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			ctx := context.Background()
			e := newLateEnv(t, kind, 50000, false)
			e.Clock.Advance(paykittest.PSPDelay)
			_, err := e.Service.SettleTestFunds(ctx, e.m.Principal)
			is.NoErr(err)
			open := e.breaks(t, paykit.BreakOpen)
			is.Equal(len(open), 1)
			is.Equal(open[0].Type, paykit.BreakAmountMismatch) // paykit expected nothing yet

			e.SettleAndNotify(ctx) // the callback: paykit learns of the success
			e.healed(t, paykit.BreakAmountMismatch, e.pi.ID)
			pi, err := e.Service.GetPaymentIntent(ctx, e.m.Principal, e.pi.ID)
			is.NoErr(err)
			is.Equal(pi.Status, paykit.PaymentSucceeded)
			is.True(pi.SettledAt != nil) // its funds are available
			b, err := e.Store.GetBalance(ctx, e.m.Principal.Scope, "MYR")
			is.NoErr(err)
			is.Equal([]int64{b.Available, b.Pending}, []int64{50000 - pi.Fee, 0})
		})
	}
}

// Seed 12: a refund's line read while paykit still had the refund pending.
func TestSimSeed12RefundLineReadBeforeItsSuccess(t *testing.T) {
	t.Parallel()
	for _, kind := range paykittest.Stores {
		t.Run(string(kind), func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			ctx := context.Background()
			e := newLateEnv(t, kind, 50000, true)
			re, _, err := e.Service.CreateRefund(ctx, e.m.Principal, "k-refund", paykit.CreateRefundRequest{PaymentIntent: e.pi.ID, MerchantReference: "refund-1", Amount: 2000})
			is.NoErr(err)
			is.Equal(re.Status, paykit.RefundPending)
			e.Clock.Advance(paykittest.PSPDelay) // the PSP's refund succeeds; no callback yet
			_, err = e.Service.SettleTestFunds(ctx, e.m.Principal)
			is.NoErr(err)
			is.Equal(len(e.breaks(t, paykit.BreakOpen)), 1)

			e.SettleAndNotify(ctx)
			e.healed(t, paykit.BreakAmountMismatch, re.ID)
			got, err := e.Service.GetRefund(ctx, e.m.Principal, re.ID)
			is.NoErr(err)
			is.Equal(got.Status, paykit.RefundSucceeded)
		})
	}
}

// Seed 34: a refund's line read while paykit did not know the PSP's id of
// the refund (its create's answer was lost): unknown_to_paykit, until the
// create sent again learns it.
func TestSimSeed34RefundLineReadBeforeItsReference(t *testing.T) {
	t.Parallel()
	for _, kind := range paykittest.Stores {
		t.Run(string(kind), func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			ctx := context.Background()
			e := newLateEnv(t, kind, 50000, true)
			e.PSP.InjectFault(sandbox.Fault{Op: sandbox.OpCreateRefund, Kind: sandbox.FaultReset, AfterRecord: true})
			re, _, err := e.Service.CreateRefund(ctx, e.m.Principal, "k-refund", paykit.CreateRefundRequest{PaymentIntent: e.pi.ID, MerchantReference: "refund-1", Amount: 2000})
			is.NoErr(err)
			is.Equal(re.ProviderRef, "") // the answer never came
			e.Clock.Advance(paykittest.PSPDelay)
			_, err = e.Service.SettleTestFunds(ctx, e.m.Principal)
			is.NoErr(err)
			open := e.breaks(t, paykit.BreakOpen)
			is.Equal(len(open), 1)
			is.Equal(open[0].Type, paykit.BreakUnknownToPaykit)

			e.Drain(ctx) // the dispatch job sends the refund again and learns its outcome
			e.healed(t, paykit.BreakUnknownToPaykit, re.ID)
		})
	}
}

// Seed 55: a won dispute's reversal line read while paykit still had the
// dispute under review.
func TestSimSeed55DisputeReversalReadBeforeItWasWon(t *testing.T) {
	t.Parallel()
	for _, kind := range paykittest.Stores {
		t.Run(string(kind), func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			ctx := context.Background()
			e := newLateEnv(t, kind, 50000, true)
			d, err := e.Service.SimulateDispute(ctx, e.m.Principal, e.pi.ID, paykit.SimulateDisputeRequest{Amount: 10000})
			is.NoErr(err)
			_, _, err = e.Service.SubmitDisputeEvidence(ctx, e.m.Principal, "k-evidence", d.ID, paykit.DisputeEvidenceRequest{Text: "winning_evidence", Submit: true})
			is.NoErr(err)
			e.Drain(ctx)                         // the evidence reaches the PSP
			e.Clock.Advance(paykittest.PSPDelay) // the bank decides: won; no callback yet
			_, err = e.Service.SettleTestFunds(ctx, e.m.Principal)
			is.NoErr(err)
			is.Equal(len(e.breaks(t, paykit.BreakOpen)), 1)

			e.Clock.Advance(time.Second)
			e.SettleAndNotify(ctx)
			e.healed(t, paykit.BreakAmountMismatch, d.ID)
			got, err := e.Service.GetDispute(ctx, e.m.Principal, d.ID)
			is.NoErr(err)
			is.Equal(got.Status, paykit.DisputeWon)
		})
	}
}

// Found by the PostgreSQL soak (seed 12284983436969899159): a batch read
// beside the transaction that made a refund succeed opened its break
// after that transaction looked for one, so neither healed it. The
// settlement sweep judges such breaks again.
func TestSimSoakSeed12284983436969899159EarlyBreakOpenedBesideTheSuccess(t *testing.T) {
	t.Parallel()
	for _, kind := range paykittest.Stores {
		t.Run(string(kind), func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			ctx := context.Background()
			e := newLateEnv(t, kind, 50000, true)
			re, _, err := e.Service.CreateRefund(ctx, e.m.Principal, "k-refund", paykit.CreateRefundRequest{PaymentIntent: e.pi.ID, MerchantReference: "refund-1", Amount: 2000})
			is.NoErr(err)
			e.SettleAndNotify(ctx)
			re, err = e.Service.GetRefund(ctx, e.m.Principal, re.ID)
			is.NoErr(err)
			is.Equal(re.Status, paykit.RefundSucceeded)
			// The break the concurrent read committed after the success.
			is.NoErr(e.Store.CreateReconciliationBreak(ctx, &paykit.ReconciliationBreak{
				ID: "rb_beside", Type: paykit.BreakAmountMismatch, Status: paykit.BreakOpen, Provider: sandbox.Name,
				MerchantID: e.m.ID, Environment: paykit.Test, Source: re.ID, LineType: "refund", Reference: re.ProviderRef, Batch: "stl_x",
				Expected: &paykit.SettlementAmounts{Currency: "MYR"}, Reported: &paykit.SettlementAmounts{Amount: -2000, Currency: "MYR"},
				CreatedAt: e.Clock.Now(),
			}))
			e.Clock.Advance(time.Minute) // the sweep's next round
			e.Drain(ctx)
			e.healed(t, paykit.BreakAmountMismatch, re.ID)
		})
	}
}
