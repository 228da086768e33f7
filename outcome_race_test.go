package paykit_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/keyring"
	"github.com/paykit/paykit/paykittest"
	"github.com/paykit/paykit/store/storetest"
)

// A Provider's final outcome reported by its callback while the worker's
// inquiry finds it too, and an approval hold ended by an operator or the
// merchant while the worker expires it, on every Store: one transition,
// one event, one ledger move, and neither side fails.

// raceIterations is how many resources each race test settles.
const raceIterations = 20

// gateStore holds each of the first two transactions that read the armed
// resource, after its read, until the other has read it too: both then
// act on the state before either wrote. Only for a Store
// whose transactions run side by side (PostgreSQL): on memory and SQLite
// they take turns, and the first would wait for the second for ever.
type gateStore struct {
	paykit.Store
	mu    sync.Mutex
	id    string        // the armed resource; "" when none
	reads int           // transactions that read it since it was armed, at most 2
	both  chan struct{} // closed by the second
}

// arm gates the transactions that read id; nil does nothing.
func (s *gateStore) arm(id string) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.id, s.reads, s.both = id, 0, make(chan struct{})
}

// disarm stops gating and returns how many transactions read the armed
// resource (at most 2).
func (s *gateStore) disarm() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.id = ""
	return s.reads
}

// read waits, for the first two transactions that read the armed
// resource, until both have.
func (s *gateStore) read(ctx context.Context, id string) error {
	s.mu.Lock()
	if id != s.id || s.reads == 2 {
		s.mu.Unlock()
		return nil
	}
	s.reads++
	both := s.both
	if s.reads == 2 {
		close(both)
	}
	s.mu.Unlock()
	select {
	case <-both:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("gate of %s: %w", id, ctx.Err())
	}
}

func (s *gateStore) InTx(ctx context.Context, fn func(tx paykit.Tx) error) error {
	return s.Store.InTx(ctx, func(tx paykit.Tx) error { return fn(gateTx{tx, s}) })
}

// gateTx is a transaction of a gateStore.
type gateTx struct {
	paykit.Tx
	s *gateStore
}

func (t gateTx) GetPaymentIntent(ctx context.Context, scope paykit.Scope, id string) (*paykit.PaymentIntent, error) {
	pi, err := t.Tx.GetPaymentIntent(ctx, scope, id)
	if err != nil {
		return nil, err
	}
	return pi, t.s.read(ctx, id)
}

func (t gateTx) GetPayoutIntent(ctx context.Context, scope paykit.Scope, id string) (*paykit.PayoutIntent, error) {
	po, err := t.Tx.GetPayoutIntent(ctx, scope, id)
	if err != nil {
		return nil, err
	}
	return po, t.s.read(ctx, id)
}

func (t gateTx) FindPayoutIntent(ctx context.Context, id string) (*paykit.PayoutIntent, error) {
	po, err := t.Tx.FindPayoutIntent(ctx, id)
	if err != nil {
		return nil, err
	}
	return po, t.s.read(ctx, id)
}

func (t gateTx) GetRefund(ctx context.Context, scope paykit.Scope, id string) (*paykit.Refund, error) {
	re, err := t.Tx.GetRefund(ctx, scope, id)
	if err != nil {
		return nil, err
	}
	return re, t.s.read(ctx, id)
}

// onEveryRaceStore runs test on a fresh Store of every kind, gated on
// PostgreSQL (gate is nil on the others).
func onEveryRaceStore(t *testing.T, test func(t *testing.T, store paykit.Store, gate *gateStore)) {
	for _, kind := range paykittest.Stores {
		t.Run(string(kind), func(t *testing.T) {
			t.Parallel()
			store := paykittest.OpenStore(t, kind)
			var gate *gateStore
			if kind == paykittest.Postgres {
				gate = &gateStore{Store: store}
				store = gate
			}
			test(t, store, gate)
		})
	}
}

// applyTwiceAtOnce posts ev to svc as the "fake" Provider's callback while
// svc's worker runs the due inquiry (job kind inquiry) of the same
// resource, which the Provider answers alike, and fails t unless the
// callback answered success and the inquiry job completed.
func applyTwiceAtOnce(t *testing.T, svc *paykit.Service, gate *gateStore, inquiry string, ev paykit.CallbackEvent) {
	t.Helper()
	is := is.New(t)
	// A gate that never opens fails the test instead of hanging it.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	body, err := json.Marshal([]paykit.CallbackEvent{ev})
	is.NoErr(err)
	var callback error
	withWorker(ctx, t, svc, gate, ev.Key, func() {
		req := httptest.NewRequest(http.MethodPost, "/providers/fake/callbacks", bytes.NewReader(body))
		callback = svc.HandleProviderCallback(ctx, "fake", req)
	})
	is.NoErr(callback) // the callback is acknowledged
	jobDone(t, svc, inquiry, ev.Key)
}

// withWorker runs fn and a round of svc's worker at once, with the gate
// armed for resource id, and fails t unless the round ran without error
// and, on a gated Store, both read id before either wrote.
func withWorker(ctx context.Context, t *testing.T, svc *paykit.Service, gate *gateStore, id string, fn func()) {
	t.Helper()
	gate.arm(id)
	var (
		wg    sync.WaitGroup
		start = make(chan struct{})
		round error
	)
	wg.Add(2)
	go func() {
		defer wg.Done()
		<-start
		fn()
	}()
	go func() {
		defer wg.Done()
		<-start
		_, round = svc.ProcessDue(ctx)
	}()
	close(start)
	wg.Wait()
	is := is.New(t)
	is.NoErr(round)
	if gate != nil {
		is.Equal(gate.disarm(), 2) // both read the resource before either wrote
	}
}

// jobDone fails t unless no job of kind about id is left to run.
func jobDone(t *testing.T, svc *paykit.Service, kind, id string) {
	t.Helper()
	pending, err := svc.ListJobs(context.Background(), paykit.JobListParams{Kind: kind})
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range pending.Data {
		if j.TargetID == id {
			t.Fatalf("the %s job of %s did not complete: attempts %d, last error %q", kind, id, j.Attempts, j.LastError)
		}
	}
}

// appliedOnce fails t unless resource id has exactly one ledger
// transaction of kind and one event of type event.
func appliedOnce(t *testing.T, store paykit.Store, scope paykit.Scope, id, kind, event string) {
	t.Helper()
	is := is.New(t)
	ctx := context.Background()
	entries, err := store.ListLedgerEntries(ctx, paykit.LedgerQuery{Scope: scope, RefID: id})
	is.NoErr(err)
	txns := map[string]bool{}
	for _, e := range entries {
		if e.Kind == kind {
			txns[e.TxnID] = true
		}
	}
	is.Equal(len(txns), 1) // one ledger move
	events, err := store.ListEvents(ctx, paykit.ListQuery[paykit.EventListParams]{Scope: scope, Filter: paykit.EventListParams{Types: []string{event}}, Limit: 1000})
	is.NoErr(err)
	n := 0
	for _, e := range events {
		if e.ObjectID == id {
			n++
		}
	}
	is.Equal(n, 1) // one transition
}

// TestPayoutOutcomeAppliedTwiceAtOnce: a payout's success (the
// reservation paid out) or failure (the reservation released), reported
// by the Provider's callback while the worker's inquiry finds it too.
func TestPayoutOutcomeAppliedTwiceAtOnce(t *testing.T) {
	t.Parallel()
	keys, err := keyring.New("k1", map[string][]byte{"k1": []byte("0123456789abcdef0123456789abcdef")})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		outcome paykit.Outcome
		status  paykit.PayoutStatus
		kind    string // of the ledger move
		event   string
	}{
		{paykit.OutcomeSucceeded, paykit.PayoutSucceeded, "payout.succeeded", paykit.EventPayoutSucceeded},
		{paykit.OutcomeFailed, paykit.PayoutFailed, "payout.released", paykit.EventPayoutFailed},
	} {
		t.Run(string(c.outcome), func(t *testing.T) {
			t.Parallel()
			onEveryRaceStore(t, func(t *testing.T, store paykit.Store, gate *gateStore) {
				is := is.New(t)
				ctx := context.Background()
				e := newPayoutEnvOn(t, store, keys, 0)
				before := e.balance(t, "THB")
				var paid int64
				for i := range raceIterations {
					ref := fmt.Sprintf("race-%d", i)
					amount := int64(1000 + i)
					po, _, err := e.svc.CreatePayoutIntent(ctx, e.test, "k-"+ref, thPayout(amount, ref, "000123456789"))
					is.NoErr(err)
					is.Equal(po.Status, paykit.PayoutProcessing)
					e.clock.Advance(time.Minute)
					e.drain(t) // the inquiry finds it in flight and runs again in a second
					e.bank.mu.Lock()
					tr := e.bank.transfers[po.ID]
					tr.state = c.outcome
					res := e.bank.payoutResult(po.ID, tr)
					e.bank.mu.Unlock()
					e.clock.Advance(time.Minute)

					applyTwiceAtOnce(t, e.svc, gate, "payout.inquire", paykit.CallbackEvent{ID: "evt_" + ref, Kind: "payout", Key: po.ID, Result: res})
					got, err := e.svc.GetPayoutIntent(ctx, e.test, po.ID)
					is.NoErr(err)
					is.Equal(got.Status, c.status)
					appliedOnce(t, store, e.test.Scope, po.ID, c.kind, c.event)
					if c.outcome == paykit.OutcomeSucceeded {
						paid += amount
					}
					b := e.balance(t, "THB")
					is.Equal([]int64{b.Available, b.Reserved}, []int64{before.Available - paid, 0})
				}
				storetest.CheckLedger(t, store, e.test.Scope)
			})
		})
	}
}

// TestRefundOutcomeAppliedTwiceAtOnce: a refund's success (the
// reservation paid out) or failure (the reservation released), reported
// by the Provider's callback while the worker's inquiry finds it too.
func TestRefundOutcomeAppliedTwiceAtOnce(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		outcome paykit.Outcome
		status  paykit.RefundStatus
		kind    string // of the ledger move
		event   string
	}{
		{paykit.OutcomeSucceeded, paykit.RefundSucceeded, "refund.succeeded", paykit.EventRefundSucceeded},
		{paykit.OutcomeFailed, paykit.RefundFailed, "refund.released", paykit.EventRefundFailed},
	} {
		t.Run(string(c.outcome), func(t *testing.T) {
			t.Parallel()
			onEveryRaceStore(t, func(t *testing.T, store paykit.Store, gate *gateStore) {
				is := is.New(t)
				ctx := context.Background()
				e := newFlowEnvOn(t, store)
				pi := e.paid(t, 100000, "order-1")
				var refunded int64
				for i := range raceIterations {
					ref := fmt.Sprintf("race-%d", i)
					amount := int64(1000 + i)
					re, _, err := e.svc.CreateRefund(ctx, e.test, "k-"+ref, refundOf(pi, ref, amount))
					is.NoErr(err)
					is.Equal(re.Status, paykit.RefundPending)
					e.clock.Advance(time.Minute)
					e.drain(t) // the inquiry finds it pending and runs again in a second
					e.provider.mu.Lock()
					fr := e.provider.refunds[re.ID]
					fr.state = c.outcome
					res := e.provider.refundResult(re.ID, fr)
					e.provider.mu.Unlock()
					e.clock.Advance(time.Minute)

					applyTwiceAtOnce(t, e.svc, gate, "refund.inquire", paykit.CallbackEvent{ID: "evt_" + ref, Kind: "refund", Key: re.ID, Result: res})
					got, err := e.svc.GetRefund(ctx, e.test, re.ID)
					is.NoErr(err)
					is.Equal(got.Status, c.status)
					appliedOnce(t, store, e.test.Scope, re.ID, c.kind, c.event)
					if c.outcome == paykit.OutcomeSucceeded {
						refunded += amount
					}
					avail, reserved := e.balance(t)
					is.Equal([]int64{avail, reserved}, []int64{100000 - refunded, 0})
					payment, err := e.svc.GetPaymentIntent(ctx, e.test, pi.ID)
					is.NoErr(err)
					is.Equal([]int64{payment.RefundedAmount, payment.RefundPendingAmount}, []int64{refunded, 0})
				}
				storetest.CheckLedger(t, store, e.test.Scope)
			})
		})
	}
}

// TestPaymentSuccessAppliedTwiceAtOnce: a payment's success (the balance
// credited), reported by the Provider's callback while the worker's
// inquiry finds it too.
func TestPaymentSuccessAppliedTwiceAtOnce(t *testing.T) {
	t.Parallel()
	onEveryRaceStore(t, func(t *testing.T, store paykit.Store, gate *gateStore) {
		is := is.New(t)
		ctx := context.Background()
		e := newFlowEnvOn(t, store)
		var credited int64
		for i := range raceIterations {
			ref := fmt.Sprintf("race-%d", i)
			amount := int64(1000 + i)
			pi, _, err := e.svc.CreatePaymentIntent(ctx, e.test, "k-"+ref, fpx(amount, ref))
			is.NoErr(err)
			is.Equal(pi.Status, paykit.PaymentRequiresAction)
			e.clock.Advance(time.Minute)
			e.drain(t) // the inquiry finds it waiting for the payer and runs again a minute later
			e.provider.approve(pi.ID)
			e.provider.mu.Lock()
			res := e.provider.result(pi.ID, e.provider.attempts[pi.ID])
			e.provider.mu.Unlock()
			e.clock.Advance(2 * time.Minute)

			applyTwiceAtOnce(t, e.svc, gate, "payment.inquire", paykit.CallbackEvent{ID: "evt_" + ref, Kind: "payment", Key: pi.ID, Result: res})
			got, err := e.svc.GetPaymentIntent(ctx, e.test, pi.ID)
			is.NoErr(err)
			is.Equal(got.Status, paykit.PaymentSucceeded)
			appliedOnce(t, store, e.test.Scope, pi.ID, "payment.succeeded", paykit.EventPaymentSucceeded)
			credited += amount
			avail, reserved := e.balance(t)
			is.Equal([]int64{avail, reserved}, []int64{credited, 0})
		}
		storetest.CheckLedger(t, store, e.test.Scope)
	})
}

// TestApprovalHoldEndedTwiceAtOnce: an operator's reject, or the
// merchant's cancel, while the worker expires the same approval hold.
// Whichever comes first ends it and releases the reservation, once; the
// other finds it ended: the reject or cancel answers invalid_state, the
// expiry job completes.
func TestApprovalHoldEndedTwiceAtOnce(t *testing.T) {
	t.Parallel()
	keys, err := keyring.New("k1", map[string][]byte{"k1": []byte("0123456789abcdef0123456789abcdef")})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		by     string
		status paykit.PayoutStatus // when it comes first
		event  string
	}{
		{"reject", paykit.PayoutFailed, paykit.EventPayoutFailed},
		{"cancel", paykit.PayoutCancelled, paykit.EventPayoutCancelled},
	} {
		t.Run(c.by, func(t *testing.T) {
			t.Parallel()
			onEveryRaceStore(t, func(t *testing.T, store paykit.Store, gate *gateStore) {
				is := is.New(t)
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				e := newPayoutEnvOn(t, store, keys, 1000) // every payout here is held
				before := e.balance(t, "THB")
				for i := range raceIterations {
					ref := fmt.Sprintf("race-%d", i)
					po, _, err := e.svc.CreatePayoutIntent(ctx, e.test, "k-"+ref, thPayout(int64(1000+i), ref, "000123456789"))
					is.NoErr(err)
					is.Equal(po.Status, paykit.PayoutRequiresApproval)
					e.clock.Advance(72*time.Hour + time.Second) // the hold's expiry is due

					var ended error
					withWorker(ctx, t, e.svc, gate, po.ID, func() {
						if c.by == "reject" {
							_, ended = e.svc.RejectPayout(ctx, "ops", po.ID, "suspicious recipient")
						} else {
							_, _, ended = e.svc.CancelPayoutIntent(ctx, e.test, "c-"+ref, po.ID, paykit.CancelPayoutIntentRequest{Reason: "changed my mind"})
						}
					})
					jobDone(t, e.svc, "payout.expire", po.ID)
					got, err := e.svc.GetPayoutIntent(ctx, e.test, po.ID)
					is.NoErr(err)
					event := paykit.EventPayoutExpired
					if ended == nil {
						is.Equal(got.Status, c.status)
						event = c.event
					} else {
						is.Equal(paykit.ErrorCode(ended), paykit.CodeInvalidState) // expired first
						is.Equal(got.Status, paykit.PayoutExpired)
					}
					appliedOnce(t, store, e.test.Scope, po.ID, "payout.released", event)
					b := e.balance(t, "THB")
					is.Equal([]int64{b.Available, b.Reserved}, []int64{before.Available, 0})
				}
				storetest.CheckLedger(t, store, e.test.Scope)
			})
		})
	}
}
