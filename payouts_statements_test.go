package paykit_test

import (
	"context"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/internal/answertest"
	"github.com/paykit/paykit/keyring"
	"github.com/paykit/paykit/paykittest"
	"github.com/paykit/paykit/store/sqlstore"
)

// TestPayoutCreateStatements counts what a payout create sends to
// PostgreSQL, answered pending, final and uncertain: two transactions,
// nothing outside them, no table read twice in one, none but
// payout_intents both inserted into and updated in one: the reservation
// updates the payout after its insert, so that the payout_intent.created
// event keeps showing the payout before its reservation, as it always has.
func TestPayoutCreateStatements(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	log := &statementLog{}
	// A Store on the same database whose statements pass through log.
	store := sqlstore.New(paykittest.OpenSQL(t, paykittest.MigratedDSN(t, paykittest.Postgres)).DB().WithQueryHook(log))
	keys, err := keyring.New("k1", map[string][]byte{"k1": []byte("0123456789abcdef0123456789abcdef")})
	if err != nil {
		t.Fatal(err)
	}
	e := newPayoutEnvOn(t, store, keys, 0)
	for _, c := range []struct {
		ref, account string
		dispatch     paykit.PayoutStatus
		max          int // BEGIN and COMMIT included
	}{
		{"pending", "000123456789", paykit.PayoutProcessing, 16},
		{"failed", "000111111116", paykit.PayoutFailed, 20}, // the fake bank fails …116
		{"unknown", "000222222227", paykit.PayoutProcessing, 16},
	} {
		var (
			po  *paykit.PayoutIntent
			err error
		)
		stmts := log.record(func() {
			po, _, err = e.svc.CreatePayoutIntent(ctx, e.test, "k-"+c.ref, thPayout(1000, c.ref, c.account))
		})
		if err != nil || po.Status != c.dispatch {
			t.Fatalf("payout %s: %v %v", c.ref, po, err)
		}
		checkTwoTransactions(t, c.ref, stmts, c.max, "payout_intents")
	}
}

// onEveryPayoutStore runs test on a payout environment on every Store.
func onEveryPayoutStore(t *testing.T, test func(t *testing.T, e *payoutEnv)) {
	onEveryPayoutStoreHolding(t, 0, test)
}

// onEveryPayoutStoreHolding is onEveryPayoutStore with the payouts of
// threshold and more held for approval (0: none).
func onEveryPayoutStoreHolding(t *testing.T, threshold int64, test func(t *testing.T, e *payoutEnv)) {
	keys, err := keyring.New("k1", map[string][]byte{"k1": []byte("0123456789abcdef0123456789abcdef")})
	if err != nil {
		t.Fatal(err)
	}
	for _, kind := range paykittest.Stores {
		t.Run(string(kind), func(t *testing.T) {
			t.Parallel()
			test(t, newPayoutEnvOn(t, paykittest.OpenStore(t, kind), keys, threshold))
		})
	}
}

// TestCrashedPayoutIsRecovered, on every Store: a request that dies
// between its two transactions (here in the Provider call, which made the
// transfer) leaves the payout processing, reserved and still to send; a
// concurrent request with its key is told it is in progress. Once the lock
// lapses, the retry with the key, or the dispatch job before it, sends it
// again under the same Provider key, and every later replay answers the
// same.
func TestCrashedPayoutIsRecovered(t *testing.T) {
	t.Parallel()
	for _, via := range []string{"retry", "worker"} {
		t.Run(via, func(t *testing.T) {
			onEveryPayoutStore(t, func(t *testing.T, e *payoutEnv) {
				is := is.New(t)
				ctx := context.Background()
				req := thPayout(4000, "po-crash", "000123456789")

				e.bank.block = make(chan struct{})
				hung, stop := context.WithCancel(context.Background())
				done := make(chan struct{})
				go func() {
					defer close(done)
					_, _, _ = e.svc.CreatePayoutIntent(hung, e.test, "crash-key", req)
				}()
				waitFor(t, func() bool {
					e.bank.mu.Lock()
					defer e.bank.mu.Unlock()
					return len(e.bank.transfers) == 1
				})
				_, _, err := e.svc.CreatePayoutIntent(ctx, e.test, "crash-key", req)
				is.Equal(paykit.ErrorCode(err), paykit.CodeIdempotencyInProgress)
				is.True(paykit.AsError(err).RetryAfter > 0)
				stop()
				<-done
				e.bank.block = nil

				page, err := e.svc.ListPayoutIntents(ctx, e.test, paykit.ListParams[paykit.PayoutStatus]{})
				is.NoErr(err)
				is.Equal(len(page.Data), 1)
				po := page.Data[0]
				is.Equal(po.Status, paykit.PayoutProcessing)
				is.Equal(po.Attempt, paykit.AttemptCreating) // the answer was never applied
				b := e.balance(t, "THB")
				is.Equal([]int64{b.Available, b.Reserved}, []int64{5_000_000 - 4000, 4000})

				e.clock.Advance(31 * time.Second) // the request's lock lapses
				if via == "worker" {
					e.drain(t)
				}
				resp, err := answertest.From(e.svc.CreatePayoutIntent(ctx, e.test, "crash-key", req))
				is.NoErr(err)
				is.Equal(resp.Status, 201)
				is.Equal(resp.Replayed, via == "worker")
				got := body(t, resp)
				is.Equal(got["id"], po.ID)
				is.Equal(got["status"], "processing")
				is.Equal(len(e.bank.transfers), 1)
				is.Equal(e.bank.calls(po.ID), 2) // sent again under its key: one transfer

				e.bank.settle()
				e.clock.Advance(2 * time.Second)
				e.drain(t)
				replay, err := answertest.From(e.svc.CreatePayoutIntent(ctx, e.test, "crash-key", req))
				is.NoErr(err)
				is.True(replay.Replayed)
				is.Equal(string(replay.Body), string(resp.Body))
				is.Equal(e.bank.calls(po.ID), 2)
				final, err := e.svc.GetPayoutIntent(ctx, e.test, po.ID)
				is.NoErr(err)
				is.Equal(final.Status, paykit.PayoutSucceeded)
				b = e.balance(t, "THB")
				is.Equal([]int64{b.Available, b.Reserved}, []int64{5_000_000 - 4000, 0})
			})
		})
	}
}

// TestPayoutAnsweredMeanwhile, on every Store: while the request's
// Provider call outlasts its lock, the dispatch job sends the transfer
// again and completes the key. The request's answer then meets a payout
// changed since it committed it (the versioned update fails), reads it,
// and answers what the job stored.
func TestPayoutAnsweredMeanwhile(t *testing.T) {
	t.Parallel()
	onEveryPayoutStore(t, func(t *testing.T, e *payoutEnv) {
		is := is.New(t)
		ctx := context.Background()
		e.bank.meanwhile = func() {
			e.clock.Advance(31 * time.Second)
			e.drain(t)
		}
		req := thPayout(3000, "po-1", "000111111116") // the fake bank fails it
		resp, err := answertest.From(e.svc.CreatePayoutIntent(ctx, e.test, "k1", req))
		is.NoErr(err)
		is.True(resp.Replayed) // the job's answer
		got := body(t, resp)
		is.Equal(got["status"], "failed")
		id := got["id"].(string)
		is.Equal(e.bank.calls(id), 2)
		again, err := answertest.From(e.svc.CreatePayoutIntent(ctx, e.test, "k1", req))
		is.NoErr(err)
		is.Equal(string(again.Body), string(resp.Body))
		evs, err := e.svc.ListEvents(ctx, e.test, paykit.EventListParams{})
		is.NoErr(err)
		n := 0
		for _, ev := range evs.Data {
			if ev.ObjectID == id && ev.Type == "payout_intent.failed" {
				n++
			}
		}
		is.Equal(n, 1) // failed once: the reservation released once
		b := e.balance(t, "THB")
		is.Equal([]int64{b.Available, b.Reserved}, []int64{5_000_000, 0})
	})
}
