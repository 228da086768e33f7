package paykit_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/internal/monitor"
	"github.com/paykit/paykit/paykittest"
)

// A job that waits is not a failing one, and a job whose purpose another
// path met is completed there. Every Store.

// TestWaitingJobIsNoFailure: a run that waits leaves the job waiting, with
// no last error, no error counted and no warning; the job is listed and
// counted as waiting, not retrying. Waiting runs still count towards the
// kind's attempt limit: the 25th needs attention, and says why.
func TestWaitingJobIsNoFailure(t *testing.T) {
	t.Parallel()
	forEachJobStore(t, func(t *testing.T, store paykit.Store) {
		is := is.New(t)
		ctx := context.Background()
		clock := paykit.NewManualClock(time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC))
		svc, logs := newLoggedWorkerService(t, store, clock)
		paykit.HandleJob(svc, "t.waits", func(context.Context, *paykit.Job) error { return paykit.ErrNotYet })
		job := &paykit.Job{ID: "job_wait", Kind: "t.waits", TargetID: "po_1"}
		is.NoErr(store.InTx(ctx, func(tx paykit.Tx) error { return paykit.EnqueueJob(ctx, svc, tx, job) }))
		round := func() {
			t.Helper()
			n, err := svc.ProcessDue(ctx)
			is.NoErr(err)
			is.Equal(n, 1)
		}
		list := func(state paykit.JobState) int {
			t.Helper()
			page, err := svc.ListJobs(ctx, paykit.JobListParams{State: state})
			is.NoErr(err)
			return len(page.Data)
		}

		round()
		j, err := store.GetJob(ctx, job.ID)
		is.NoErr(err)
		is.Equal(j.Status, paykit.JobWaiting)
		is.Equal(j.LastError, "")
		is.Equal(j.Attempts, 1)
		is.Equal(list(paykit.JobWaiting), 1)
		is.Equal(list(paykit.JobRetrying), 0)
		page, err := svc.ListJobs(ctx, paykit.JobListParams{})
		is.NoErr(err)
		is.Equal(page.Data[0].State, paykit.JobWaiting)
		stats, err := svc.JobStats(ctx)
		is.NoErr(err)
		is.Equal(kindStats(stats, "t.waits"), paykit.JobKindStats{Kind: "t.waits", Waiting: 1})
		clock.Advance(2 * time.Hour)
		stats, err = svc.JobStats(ctx)
		is.NoErr(err)
		is.Equal(kindStats(stats, "t.waits"), paykit.JobKindStats{Kind: "t.waits", Due: 1, Waiting: 1, OldestDue: &j.RunAt})
		is.Equal(list(paykit.JobWaiting), 1) // due again, still waiting
		is.Equal(list(paykit.JobDue), 0)

		for range paykit.DefaultMaxAttempts - 2 {
			round()
			clock.Advance(2 * time.Hour)
		}
		j, err = store.GetJob(ctx, job.ID)
		is.NoErr(err)
		is.Equal(j.Status, paykit.JobWaiting)
		is.Equal(monitor.JobRuns(svc), []monitor.JobRunCounts{{Kind: "t.waits", Attempts: paykit.DefaultMaxAttempts - 1, Errors: map[monitor.JobErrorKind]uint64{}}})
		is.True(!strings.Contains(logs.String(), "level=WARN"))
		is.True(!strings.Contains(logs.String(), "level=ERROR"))

		round() // the 25th run: still waiting, now for too long
		j, err = store.GetJob(ctx, job.ID)
		is.NoErr(err)
		is.Equal(j.Status, paykit.JobNeedsAttention)
		is.Equal(j.LastError, "not_yet: provider outcome not final yet")
		is.Equal(list(paykit.JobNeedsAttention), 1)
		is.Equal(list(paykit.JobWaiting), 0)
		is.Equal(strings.Count(logs.String(), "needs operator attention"), 1)
		is.Equal(monitor.JobRuns(svc)[0].Errors, map[monitor.JobErrorKind]uint64{})
	})
}

// TestPayerWaitNeverNeedsAttention: a payment whose payer never pays is
// polled by runs that wait, and expired on time by its job before that job
// reaches the attempt limit, whatever the PaymentTTL: with the default
// (30 min) in 10 runs, with a day in at most 20.
func TestPayerWaitNeverNeedsAttention(t *testing.T) {
	t.Parallel()
	for _, kind := range paykittest.Stores {
		t.Run(string(kind), func(t *testing.T) {
			t.Parallel()
			for _, c := range []struct {
				name    string
				ttl     time.Duration
				maxRuns uint64
			}{
				{"default TTL", 0, 10},
				{"a day", 24 * time.Hour, 20},
			} {
				t.Run(c.name, func(t *testing.T) {
					is := is.New(t)
					ctx := context.Background()
					e := newFlowEnvOn(t, paykittest.OpenStore(t, kind), func(cfg *paykit.Config) { cfg.PaymentTTL = c.ttl })
					pi, _, err := e.svc.CreatePaymentIntent(ctx, e.test, "k-1", fpx(5000, "order-1"))
					is.NoErr(err)
					is.Equal(pi.Status, paykit.PaymentRequiresAction)
					for range 100 {
						jobs := pendingJobs(t, e.svc, pi.ID)
						if len(jobs) == 0 {
							break
						}
						j := jobs[0]
						if j.Attempts > 0 {
							is.Equal(j.State, paykit.JobWaiting)
							is.Equal(j.LastError, "")
						}
						is.True(!j.RunAt.After(pi.ExpiresAt))
						e.clock.Set(j.RunAt)
						e.drain(t)
					}
					got, err := e.svc.GetPaymentIntent(ctx, e.test, pi.ID)
					is.NoErr(err)
					is.Equal(got.Status, paykit.PaymentExpired)
					is.Equal(*got.CompletedAt, pi.ExpiresAt) // on time
					runs := runCounts(e.svc, "payment.inquire")
					is.True(runs.Attempts <= c.maxRuns)
					is.True(runs.Attempts < paykit.DefaultMaxAttempts)
					is.Equal(runs.Errors, map[monitor.JobErrorKind]uint64{})
				})
			}
		})
	}
}

// postCallback posts events to svc as the "fake" Provider's callback.
func postCallback(t *testing.T, svc *paykit.Service, events ...paykit.CallbackEvent) {
	t.Helper()
	body, err := json.Marshal(events)
	if err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest(http.MethodPost, "/providers/fake/callbacks", bytes.NewReader(body))
	if err := svc.HandleProviderCallback(context.Background(), "fake", req); err != nil {
		t.Fatal(err)
	}
}

// callbackSucceeded posts the "fake" Provider's callback that the
// attempt of kind ("payment", "payout" or "refund") id succeeded.
func callbackSucceeded(t *testing.T, svc *paykit.Service, kind, id string) {
	t.Helper()
	postCallback(t, svc, paykit.CallbackEvent{ID: "cb-" + id, Kind: kind, Key: id,
		Result: paykit.Result{Outcome: paykit.OutcomeSucceeded, Reference: "fake_" + id}})
}

// inquiryNeverRuns fails t unless the inquiry job of kind about id
// completed without a run, and none runs in the hour after.
func inquiryNeverRuns(t *testing.T, e *flowEnv, kind, id string) {
	t.Helper()
	if j := completedJob(t, e.svc, kind, id); j.Attempts != 0 {
		t.Errorf("the %s job of %s ran %d times", kind, id, j.Attempts)
	}
	e.clock.Advance(time.Hour)
	e.drain(t)
	if n := runsOf(e.svc, kind); n != 0 {
		t.Errorf("%d runs of %s", n, kind)
	}
}

// completedJob returns the completed job of kind about target, failing t
// unless there is exactly one and no pending one.
func completedJob(t *testing.T, svc *paykit.Service, kind, target string) paykit.JobView {
	t.Helper()
	jobDone(t, svc, kind, target)
	page, err := svc.ListJobs(context.Background(), paykit.JobListParams{Kind: kind, State: paykit.JobCompleted})
	if err != nil {
		t.Fatal(err)
	}
	var out []paykit.JobView
	for _, j := range page.Data {
		if j.TargetID == target {
			out = append(out, j)
		}
	}
	if len(out) != 1 {
		t.Fatalf("%d completed %s jobs of %s, want 1", len(out), kind, target)
	}
	return out[0]
}

// runCounts returns svc's counts of the runs of kind.
func runCounts(svc *paykit.Service, kind string) monitor.JobRunCounts {
	for _, r := range monitor.JobRuns(svc) {
		if r.Kind == kind {
			return r
		}
	}
	return monitor.JobRunCounts{Kind: kind}
}

// runsOf is how many runs of kind svc's worker made.
func runsOf(svc *paykit.Service, kind string) uint64 { return runCounts(svc, kind).Attempts }

// forEachFlowStore runs test on a fresh flow environment on every Store.
func forEachFlowStore(t *testing.T, test func(t *testing.T, e *flowEnv)) {
	for _, kind := range paykittest.Stores {
		t.Run(string(kind), func(t *testing.T) {
			t.Parallel()
			test(t, newFlowEnvOn(t, paykittest.OpenStore(t, kind)))
		})
	}
}

// TestCallbackCompletesTheInquiry: a callback that decides a payment
// completes its inquiry job in the same transaction, so the job never runs
// and the Provider is never asked; an expiry job an earlier version left
// then completes without a Provider call or a write.
func TestCallbackCompletesTheInquiry(t *testing.T) {
	t.Parallel()
	forEachFlowStore(t, func(t *testing.T, e *flowEnv) {
		is := is.New(t)
		ctx := context.Background()
		pi, _, err := e.svc.CreatePaymentIntent(ctx, e.test, "k-1", fpx(5000, "order-1"))
		is.NoErr(err)
		is.Equal(len(pendingJobs(t, e.svc, pi.ID)), 1)

		e.clock.Advance(10 * time.Second)
		e.provider.approve(pi.ID)
		callbackSucceeded(t, e.svc, "payment", pi.ID)
		got, err := e.svc.GetPaymentIntent(ctx, e.test, pi.ID)
		is.NoErr(err)
		is.Equal(got.Status, paykit.PaymentSucceeded)
		j := completedJob(t, e.svc, "payment.inquire", pi.ID)
		is.Equal(j.Attempts, 0) // never ran
		is.Equal(*j.CompletedAt, e.clock.Now())

		// A payment.expire job of an earlier version: it ends at once.
		is.NoErr(e.store.InTx(ctx, func(tx paykit.Tx) error {
			return tx.EnqueueJob(ctx, &paykit.Job{ID: "job_legacy", Kind: "payment.expire", Scope: pi.Scope(), TargetID: pi.ID,
				RunAt: pi.ExpiresAt, CreatedAt: e.clock.Now()})
		}))
		e.clock.Set(pi.ExpiresAt.Add(time.Hour))
		n, err := e.svc.ProcessDue(ctx)
		is.NoErr(err)
		is.Equal(n, 1) // the legacy job only
		is.Equal(runsOf(e.svc, "payment.inquire"), uint64(0))
		completedJob(t, e.svc, "payment.expire", pi.ID)
		after, err := e.svc.GetPaymentIntent(ctx, e.test, pi.ID)
		is.NoErr(err)
		is.Equal(after.Version, got.Version) // not written
		e.provider.mu.Lock()
		is.Equal(e.provider.inquired[pi.ID], 0)
		e.provider.mu.Unlock()
	})
}

// TestDecidedHoldCompletesItsExpiry: approving, rejecting or cancelling a
// payout held for approval completes its payout.expire job in the same
// transaction; only a hold nobody decided is expired by it.
func TestDecidedHoldCompletesItsExpiry(t *testing.T) {
	t.Parallel()
	onEveryPayoutStoreHolding(t, 1_000_000, func(t *testing.T, e *payoutEnv) {
		is := is.New(t)
		ctx := context.Background()
		held := func(ref string) string {
			t.Helper()
			po, _, err := e.svc.CreatePayoutIntent(ctx, e.test, "k-"+ref, thPayout(1_000_000, ref, "000123456789"))
			is.NoErr(err)
			is.Equal(po.Status, paykit.PayoutRequiresApproval)
			return po.ID
		}
		approved, rejected, cancelled, left := held("a"), held("r"), held("c"), held("l")
		e.clock.Advance(time.Minute)
		_, err := e.svc.ApprovePayout(ctx, "ops", approved, "checked")
		is.NoErr(err)
		_, err = e.svc.RejectPayout(ctx, "ops", rejected, "suspicious recipient")
		is.NoErr(err)
		_, _, err = e.svc.CancelPayoutIntent(ctx, e.test, "cancel-c", cancelled, paykit.CancelPayoutIntentRequest{})
		is.NoErr(err)
		for _, id := range []string{approved, rejected, cancelled} {
			j := completedJob(t, e.svc, "payout.expire", id)
			is.Equal(j.Attempts, 0)
			is.Equal(*j.CompletedAt, e.clock.Now())
		}

		e.clock.Advance(73 * time.Hour)
		e.drain(t)
		is.Equal(runsOf(e.svc, "payout.expire"), uint64(1)) // the hold nobody decided
		po, err := e.svc.GetPayoutIntent(ctx, e.test, left)
		is.NoErr(err)
		is.Equal(po.Status, paykit.PayoutExpired)
		completedJob(t, e.svc, "payout.expire", left)
	})
}

// TestEndedCheckoutExpiry: a cancelled checkout's expiry job is completed
// with the cancel; a completed checkout's runs at its time and changes
// nothing.
func TestEndedCheckoutExpiry(t *testing.T) {
	t.Parallel()
	forEachFlowStore(t, func(t *testing.T, e *flowEnv) {
		is := is.New(t)
		ctx := context.Background()
		is.NoErr(e.store.CreateMerchant(ctx, &paykit.Merchant{ID: "mch_1", Name: "Kedai Kopi", CreatedAt: e.clock.Now()}))
		req := func(ref string) paykit.CreateCheckoutRequest {
			return paykit.CreateCheckoutRequest{Amount: 15000, Currency: "MYR", Country: "MY", MerchantReference: ref}
		}
		paid, cancelled := e.createCheckout(t, "co-1", req("order-1")), e.createCheckout(t, "co-2", req("order-2"))
		pi, err := e.svc.PayCheckout(ctx, checkoutToken(paid), paykit.PayCheckoutRequest{PaymentMethod: "FPX",
			Customer: map[string]string{"name": "Aisyah", "email": "a@example.com"}})
		is.NoErr(err)
		e.provider.approve(pi.ID)
		callbackSucceeded(t, e.svc, "payment", pi.ID)
		_, _, err = e.svc.CancelCheckout(ctx, e.test, "cancel-2", cancelled.ID)
		is.NoErr(err)
		is.Equal(completedJob(t, e.svc, "checkout.expire", cancelled.ID).Attempts, 0)
		done, err := e.svc.GetCheckout(ctx, e.test, paid.ID)
		is.NoErr(err)
		is.Equal(done.Status, paykit.CheckoutCompleted)

		e.clock.Set(paid.ExpiresAt)
		e.drain(t)
		is.Equal(runsOf(e.svc, "checkout.expire"), uint64(1))
		completedJob(t, e.svc, "checkout.expire", paid.ID)
		after, err := e.svc.GetCheckout(ctx, e.test, paid.ID)
		is.NoErr(err)
		is.Equal(after.Status, paykit.CheckoutCompleted)
		is.Equal(after.Version, done.Version)
	})
}

// TestCallbackCompletesPayoutAndRefundInquiries: a callback that decides a
// payout or a refund completes its inquiry job in the same transaction.
func TestCallbackCompletesPayoutAndRefundInquiries(t *testing.T) {
	t.Parallel()
	onEveryPayoutStoreHolding(t, 0, func(t *testing.T, e *payoutEnv) {
		is := is.New(t)
		ctx := context.Background()
		po, _, err := e.svc.CreatePayoutIntent(ctx, e.test, "k-po", thPayout(1000, "po-1", "000123456789"))
		is.NoErr(err)
		is.Equal(po.Status, paykit.PayoutProcessing)
		callbackSucceeded(t, e.svc, "payout", po.ID)
		got, err := e.svc.GetPayoutIntent(ctx, e.test, po.ID)
		is.NoErr(err)
		is.Equal(got.Status, paykit.PayoutSucceeded)
		inquiryNeverRuns(t, e.flowEnv, "payout.inquire", po.ID)
	})
	onEveryStore(t, func(t *testing.T, e *flowEnv, pi *paykit.PaymentIntent) {
		is := is.New(t)
		ctx := context.Background()
		re, _, err := e.svc.CreateRefund(ctx, e.test, "k-re", refundOf(pi, "r1", 3000))
		is.NoErr(err)
		is.Equal(re.Status, paykit.RefundPending)
		callbackSucceeded(t, e.svc, "refund", re.ID)
		got, err := e.svc.GetRefund(ctx, e.test, re.ID)
		is.NoErr(err)
		is.Equal(got.Status, paykit.RefundSucceeded)
		inquiryNeverRuns(t, e, "refund.inquire", re.ID)
	})
}
