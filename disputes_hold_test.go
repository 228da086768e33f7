package paykit_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/paykittest"
	"github.com/paykit/paykit/provider/sandbox"
	"github.com/paykit/paykit/store/storetest"
)

// cutStore is a Store whose transactions fail while it is down, as a
// process's do once it died.
type cutStore struct {
	paykit.Store
	down atomic.Bool
}

func (s *cutStore) InTx(ctx context.Context, fn func(tx paykit.Tx) error) error {
	if s.down.Load() {
		return errors.New("the process died")
	}
	return s.Store.InTx(ctx, fn)
}

// dyingDisputes is the sandbox adapter whose dispute openings take the
// Store down once the PSP opened the dispute, and keep its reference.
type dyingDisputes struct {
	*sandbox.Provider
	store *cutStore
	ref   string
}

func (p *dyingDisputes) OpenDispute(ctx context.Context, req paykit.DisputeOpening) (paykit.ProviderDispute, error) {
	pd, err := p.Provider.OpenDispute(ctx, req)
	p.ref = pd.Reference
	p.store.down.Store(true)
	return pd, err
}

// Seed 32: a simulated dispute's request died after the PSP opened the
// dispute and before paykit recorded it. Its hold stayed on the payment
// for ever (a payment with an "open dispute" is never refundable), and
// the PSP's callback about the dispute, once decided, counted it a
// second time. Now a job gives the hold back unless the dispute used it;
// a callback that comes first uses it.
func TestSimSeed32SimulatedDisputeHoldOutlivesItsRequest(t *testing.T) {
	t.Parallel()
	for _, kind := range paykittest.Stores {
		for _, callbackFirst := range []bool{false, true} {
			name := string(kind) + map[bool]string{false: "/released", true: "/used_by_callback"}[callbackFirst]
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				is := is.New(t)
				ctx := context.Background()
				var cut *cutStore
				var prov *dyingDisputes
				env := paykittest.New(t, paykittest.WithStoreFunc(func(t paykittest.T) paykit.Store {
					cut = &cutStore{Store: paykittest.OpenStore(t, kind)}
					return cut
				}), paykittest.WithConfig(func(c *paykit.Config) {
					prov = &dyingDisputes{Provider: c.Providers[sandbox.Name].(*sandbox.Provider), store: cut}
					c.Providers = map[string]paykit.Provider{sandbox.Name: prov}
				}))
				m := env.Merchant(ctx)
				t.Cleanup(func() { storetest.CheckLedger(t, env.Store, m.Principal.Scope) })
				pi, _, err := env.Service.CreatePaymentIntent(ctx, m.Principal, "order-1", paykit.CreatePaymentIntentRequest{
					Amount: 50000, Currency: "MYR", Country: "MY", MerchantReference: "order-1",
					PaymentMethod: "FPX", Customer: map[string]string{"name": "Aisyah", "email": "aisyah@example.com"},
				})
				is.NoErr(err)
				is.NoErr(env.Pay(ctx, pi.ID))
				env.SettleAndNotify(ctx)

				_, err = env.Service.SimulateDispute(ctx, m.Principal, pi.ID, paykit.SimulateDisputeRequest{Amount: 10000})
				is.True(err != nil) // the request died
				cut.down.Store(false)
				got, err := env.Service.GetPaymentIntent(ctx, m.Principal, pi.ID)
				is.NoErr(err)
				is.Equal([]int64{got.DisputedAmount, int64(got.OpenDisputes)}, []int64{10000, 1}) // held

				if callbackFirst {
					// The bank decides before the hold's job runs; the
					// PSP's callback records the dispute, which uses the hold.
					_, err := env.Provider.SubmitDisputeEvidence(ctx, prov.ref, "winning_evidence")
					is.NoErr(err)
					env.SettleAndNotify(ctx)
				}
				env.Clock.Advance(time.Minute) // the hold's job is due
				env.Drain(ctx)
				if !callbackFirst {
					got, err = env.Service.GetPaymentIntent(ctx, m.Principal, pi.ID)
					is.NoErr(err)
					is.Equal([]int64{got.DisputedAmount, int64(got.OpenDisputes)}, []int64{0, 0}) // given back
					// The PSP's dispute is lost at its deadline, and its
					// callback records it, once.
					env.Clock.Advance(8 * 24 * time.Hour)
					env.SettleAndNotify(ctx)
				}
				page, err := env.Service.ListDisputes(ctx, m.Principal, paykit.DisputeListParams{PaymentIntent: pi.ID})
				is.NoErr(err)
				is.Equal(len(page.Data), 1)
				d := page.Data[0]
				want := map[bool]paykit.DisputeStatus{false: paykit.DisputeLost, true: paykit.DisputeWon}[callbackFirst]
				is.Equal(d.Status, want)
				got, err = env.Service.GetPaymentIntent(ctx, m.Principal, pi.ID)
				is.NoErr(err)
				disputed := map[bool]int64{false: 10000, true: 0}[callbackFirst]
				is.Equal([]int64{got.DisputedAmount, int64(got.OpenDisputes)}, []int64{disputed, 0})
			})
		}
	}
}
