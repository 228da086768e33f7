package paykit_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/matryer/is"
	"github.com/uptrace/bun"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/keyring"
	"github.com/paykit/paykit/paykittest"
	"github.com/paykit/paykit/store/memory"
	"github.com/paykit/paykit/store/sqlstore"
	"github.com/paykit/paykit/store/storetest"
)

// hostOrder is a row of the host's own table, written in the same
// transaction as paykit's.
type hostOrder struct {
	bun.BaseModel `bun:"table:host_orders"`
	ID            string `bun:"id,pk"`
	CheckoutID    string `bun:"checkout_id"`
}

// hostTxEnv is a Service on a SQL Store with a host table beside paykit's.
type hostTxEnv struct {
	svc   *paykit.Service
	store *sqlstore.Store
	bank  *fakeBank
	clock *paykit.ManualClock
	p     paykit.Principal
}

func newHostTxEnv(t *testing.T, dsn string) *hostTxEnv {
	t.Helper()
	ctx := context.Background()
	store := paykittest.OpenSQL(t, dsn)
	if _, err := store.DB().NewCreateTable().Model((*hostOrder)(nil)).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	e := &hostTxEnv{store: store, bank: newFakeBank(),
		clock: paykit.NewManualClock(time.Date(2026, 6, 1, 8, 0, 0, 0, time.UTC))}
	keys, err := keyring.New("k1", map[string][]byte{"k1": []byte("0123456789abcdef0123456789abcdef")})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := paykit.New(paykit.Config{Store: store, Now: e.clock.Now, Routing: thPayoutRouting(),
		Providers: map[string]paykit.Provider{"fake": e.bank}, PublicURL: "https://pay.example",
		SigningKey: []byte("host-tx-test-signing-key-32bytes"), AccountKeys: keys})
	if err != nil {
		t.Fatal(err)
	}
	e.svc = svc
	m, err := svc.CreateMerchant(ctx, "ops", "Host")
	if err != nil {
		t.Fatal(err)
	}
	e.p = paykit.Principal{Scope: paykit.Scope{MerchantID: m.ID, Environment: paykit.Test}}
	if _, err := svc.AdjustBalance(ctx, "ops", m.ID, paykit.BalanceAdjustmentRequest{Environment: paykit.Test, Currency: "THB", Amount: 1_000_000, Reason: "float"}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { storetest.CheckLedger(t, store, e.p.Scope) })
	return e
}

// drain runs the worker until nothing is due.
func (e *hostTxEnv) drain(t *testing.T) { t.Helper(); drainWorker(t, e.svc) }

func (f *fakeProvider) totalCreates() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, c := range f.creates {
		n += c
	}
	return n
}

var errRollback = errors.New("host rolls back")

func hostTxStores() []struct {
	name string
	dsn  func(t *testing.T) string
} {
	return []struct {
		name string
		dsn  func(t *testing.T) string
	}{
		{"sqlite", func(t *testing.T) string { return paykittest.SQLiteDSN(t) }},
		{"postgres", func(t *testing.T) string { return paykittest.PostgresDSN(t) }},
	}
}

func checkoutReq(ref string) paykit.CreateCheckoutRequest {
	return paykit.CreateCheckoutRequest{Amount: 2500, Currency: "MYR", Country: "MY", MerchantReference: ref}
}

// TestCheckoutInHostTransaction: the host's order row and the checkout
// commit together or not at all (bun.Tx).
func TestCheckoutInHostTransaction(t *testing.T) {
	t.Parallel()
	for _, st := range hostTxStores() {
		t.Run(st.name, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			e := newHostTxEnv(t, st.dsn(t))
			ctx := context.Background()

			// Committed: both rows exist, the checkout with its expiry job.
			var co *paykit.Checkout
			err := e.store.DB().RunInTx(ctx, nil, func(ctx context.Context, btx bun.Tx) error {
				var ans paykit.Answer
				var err error
				co, ans, err = e.svc.CreateCheckoutTx(ctx, e.store.WrapTx(btx), e.p, "order-1", checkoutReq("order-1"))
				if err != nil {
					return err
				}
				is.Equal(ans.Kind, paykit.AnswerCreated)
				_, err = btx.NewInsert().Model(&hostOrder{ID: "order-1", CheckoutID: co.ID}).Exec(ctx)
				return err
			})
			is.NoErr(err)
			got, err := e.svc.GetCheckout(ctx, e.p, co.ID)
			is.NoErr(err)
			is.Equal(got.MerchantReference, "order-1")
			var order hostOrder
			is.NoErr(e.store.DB().NewSelect().Model(&order).Where("id = ?", "order-1").Scan(ctx))
			is.Equal(order.CheckoutID, co.ID)
			// The same key through the Service replays the committed answer.
			again, ans, err := e.svc.CreateCheckout(ctx, e.p, "order-1", checkoutReq("order-1"))
			is.NoErr(err)
			is.True(ans.Replayed)
			is.Equal(again.ID, co.ID)

			// Rolled back: nothing exists, no job runs.
			var lost *paykit.Checkout
			err = e.store.DB().RunInTx(ctx, nil, func(ctx context.Context, btx bun.Tx) error {
				var err error
				if lost, _, err = e.svc.CreateCheckoutTx(ctx, e.store.WrapTx(btx), e.p, "order-2", checkoutReq("order-2")); err != nil {
					return err
				}
				if _, err := btx.NewInsert().Model(&hostOrder{ID: "order-2", CheckoutID: lost.ID}).Exec(ctx); err != nil {
					return err
				}
				return errRollback
			})
			is.True(errors.Is(err, errRollback))
			_, err = e.svc.GetCheckout(ctx, e.p, lost.ID)
			is.Equal(paykit.ErrorCode(err), paykit.CodeNotFound)
			n, err := e.store.DB().NewSelect().Model((*hostOrder)(nil)).Where("id = ?", "order-2").Count(ctx)
			is.NoErr(err)
			is.Equal(n, int64(0))
			jobs, err := e.store.Queue().ListJobs(ctx, paykit.ListQuery[paykit.JobListParams]{}, e.clock.Now())
			is.NoErr(err)
			for _, j := range jobs {
				is.True(j.TargetID != lost.ID) // no job of the rolled-back checkout
			}
			// The key is free again: the rollback took its record too.
			_, ans, err = e.svc.CreateCheckout(ctx, e.p, "order-2", checkoutReq("order-2"))
			is.NoErr(err)
			is.True(!ans.Replayed)
		})
	}
}

// TestPaymentIntentInHostTransaction: the intent and its job commit with
// the host's rows (database/sql Tx); the Provider is called by the worker
// after the commit, never for a rolled-back intent.
func TestPaymentIntentInHostTransaction(t *testing.T) {
	t.Parallel()
	for _, st := range hostTxStores() {
		t.Run(st.name, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			e := newHostTxEnv(t, st.dsn(t))
			ctx := context.Background()

			inTx := func(key string, commit bool) *paykit.PaymentIntent {
				stx, err := e.store.DB().DB.BeginTx(ctx, nil)
				is.NoErr(err)
				pi, ans, err := e.svc.CreatePaymentIntentTx(ctx, e.store.WrapSQLTx(stx), e.p, key, fpx(1500, key))
				is.NoErr(err)
				is.Equal(ans.Kind, paykit.AnswerAccepted)
				is.Equal(pi.Status, paykit.PaymentProcessing)
				_, err = stx.ExecContext(ctx, "INSERT INTO host_orders (id, checkout_id) VALUES ('"+key+"', '')")
				is.NoErr(err)
				is.Equal(e.bank.totalCreates(), 0) // no Provider call inside the host's transaction
				if commit {
					is.NoErr(stx.Commit())
				} else {
					is.NoErr(stx.Rollback())
				}
				return pi
			}

			lost := inTx("pay-rolled-back", false)
			e.drain(t)
			is.Equal(e.bank.totalCreates(), 0)
			_, err := e.svc.GetPaymentIntent(ctx, e.p, lost.ID)
			is.Equal(paykit.ErrorCode(err), paykit.CodeNotFound)

			pi := inTx("pay-1", true)
			e.drain(t) // the worker makes the Provider call at once
			is.Equal(e.bank.totalCreates(), 1)
			got, err := e.svc.GetPaymentIntent(ctx, e.p, pi.ID)
			is.NoErr(err)
			is.Equal(got.Status, paykit.PaymentRequiresAction)
			is.True(got.NextAction != nil)
			// The worker completed the key: the Service replays what the
			// Provider said, with no second call.
			again, ans, err := e.svc.CreatePaymentIntent(ctx, e.p, "pay-1", fpx(1500, "pay-1"))
			is.NoErr(err)
			is.True(ans.Replayed)
			is.Equal(ans.Kind, paykit.AnswerCreated)
			is.Equal(again.Status, paykit.PaymentRequiresAction)
			is.Equal(e.bank.totalCreates(), 1)
			evs, err := e.svc.ListEvents(ctx, e.p, paykit.EventListParams{})
			is.NoErr(err)
			is.True(len(evs.Data) > 0)
			is.Equal(evs.Data[0].Type, "payment_intent.requires_action")
		})
	}
}

// TestPayoutIntentInHostTransaction: the payout and its reservation commit
// with the host's rows; the transfer is sent by the worker after commit;
// rolled back, the balance is untouched and nothing is sent.
func TestPayoutIntentInHostTransaction(t *testing.T) {
	t.Parallel()
	for _, st := range hostTxStores() {
		t.Run(st.name, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			e := newHostTxEnv(t, st.dsn(t))
			ctx := context.Background()
			before, err := e.svc.ListBalances(ctx, e.p)
			is.NoErr(err)

			var lost *paykit.PayoutIntent
			err = e.store.DB().RunInTx(ctx, nil, func(ctx context.Context, btx bun.Tx) error {
				var err error
				lost, _, err = e.svc.CreatePayoutIntentTx(ctx, e.store.WrapTx(btx), e.p, "po-lost", thPayout(40000, "po-lost", "000123456789"))
				if err != nil {
					return err
				}
				return errRollback
			})
			is.True(errors.Is(err, errRollback))
			e.drain(t)
			is.Equal(e.bank.calls(lost.ID), 0)
			after, err := e.svc.ListBalances(ctx, e.p)
			is.NoErr(err)
			is.Equal(after, before)

			var po *paykit.PayoutIntent
			err = e.store.DB().RunInTx(ctx, nil, func(ctx context.Context, btx bun.Tx) error {
				var ans paykit.Answer
				var err error
				po, ans, err = e.svc.CreatePayoutIntentTx(ctx, e.store.WrapTx(btx), e.p, "po-1", thPayout(40000, "po-1", "000123456789"))
				if err != nil {
					return err
				}
				is.Equal(ans.Kind, paykit.AnswerAccepted)
				is.Equal(po.ReservedAmount, int64(40000))
				return nil
			})
			is.NoErr(err)
			is.Equal(e.bank.calls(po.ID), 0)
			e.drain(t)
			is.Equal(e.bank.calls(po.ID), 1)
			is.Equal(e.bank.bankCode(po.ID), "TH-004")
			again, ans, err := e.svc.CreatePayoutIntent(ctx, e.p, "po-1", thPayout(40000, "po-1", "000123456789"))
			is.NoErr(err)
			is.True(ans.Replayed)
			is.Equal(again.ID, po.ID)
			is.Equal(e.bank.calls(po.ID), 1)
		})
	}
}

// TestHostTransactionOnMemoryStore: on the memory Store the host's
// transaction is the one Store.InTx gives.
func TestHostTransactionOnMemoryStore(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	e := newFlowEnv(t)
	ctx := context.Background()
	store := memory.New()
	svc, err := paykit.New(paykit.Config{Store: store, Now: e.clock.Now, Routing: fakeRouting,
		Providers: map[string]paykit.Provider{"fake": e.provider}, PublicURL: "https://pay.example"})
	is.NoErr(err)

	var lost *paykit.PaymentIntent
	err = store.InTx(ctx, func(tx paykit.Tx) error {
		var err error
		if lost, _, err = svc.CreatePaymentIntentTx(ctx, tx, e.test, "k-lost", fpx(1500, "k-lost")); err != nil {
			return err
		}
		return errRollback
	})
	is.True(errors.Is(err, errRollback))
	_, err = svc.GetPaymentIntent(ctx, e.test, lost.ID)
	is.Equal(paykit.ErrorCode(err), paykit.CodeNotFound)

	var pi *paykit.PaymentIntent
	is.NoErr(store.InTx(ctx, func(tx paykit.Tx) error {
		pi, _, err = svc.CreatePaymentIntentTx(ctx, tx, e.test, "k-1", fpx(1500, "k-1"))
		return err
	}))
	for {
		n, err := svc.ProcessDue(ctx)
		is.NoErr(err)
		if n == 0 {
			break
		}
	}
	got, err := svc.GetPaymentIntent(ctx, e.test, pi.ID)
	is.NoErr(err)
	is.Equal(got.Status, paykit.PaymentRequiresAction)
	is.Equal(e.provider.totalCreates(), 1)

	_, _, err = svc.CreateCheckoutTx(ctx, nil, e.test, "k-2", checkoutReq("k-2"))
	is.True(err != nil) // a …Tx call needs the host's transaction
}
