package paykit_test

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/internal/answertest"
	"github.com/paykit/paykit/paykittest"
)

// The fake Provider's refunds, by key. Amounts ending in 911 are declined,
// 912 time out after the Provider recorded them, 913 are not acknowledged
// the first time (nothing recorded); others are pending, then succeeded at
// the next inquiry. While the fake's block is set, a recorded refund's
// answer waits on it (a hung request).
type fakeRefund struct {
	amount int64
	state  paykit.Outcome
}

func (f *fakeProvider) CreateRefund(ctx context.Context, req paykit.RefundRequest) paykit.Result {
	f.mu.Lock()
	res, block, meanwhile := f.createRefund(req), f.block, f.meanwhile
	f.meanwhile = nil
	f.mu.Unlock()
	if meanwhile != nil {
		meanwhile()
	}
	if block != nil && res.Outcome != paykit.OutcomeUnacknowledged {
		select {
		case <-block:
		case <-ctx.Done():
		}
	}
	return res
}

func (f *fakeProvider) createRefund(req paykit.RefundRequest) paykit.Result {
	if f.refunds == nil {
		f.refunds, f.refundCalls = map[string]*fakeRefund{}, map[string]int{}
	}
	f.refundCalls[req.Key]++
	if req.Amount%1000 == 913 && f.refundCalls[req.Key] == 1 {
		return paykit.Result{Outcome: paykit.OutcomeUnacknowledged, Detail: "connection refused"}
	}
	r, seen := f.refunds[req.Key]
	if !seen {
		r = &fakeRefund{amount: req.Amount, state: paykit.OutcomePending}
		if req.Amount%1000 == 911 {
			r.state = paykit.OutcomeFailed
		}
		f.refunds[req.Key] = r
	}
	if req.Amount%1000 == 914 { // a Provider that never says
		r.state = paykit.OutcomeUnknown
	}
	if req.Amount%1000 == 912 && !seen || r.state == paykit.OutcomeUnknown {
		return paykit.Result{Outcome: paykit.OutcomeUnknown, Detail: "timeout"}
	}
	return f.refundResult(req.Key, r)
}

func (f *fakeProvider) refundResult(key string, r *fakeRefund) paykit.Result {
	res := paykit.Result{Outcome: r.state, Reference: "rf_" + key}
	if r.state == paykit.OutcomeFailed {
		res.FailureCode, res.Detail = paykit.RefundProviderDeclined, "REFUND_DECLINED"
	}
	return res
}

func (f *fakeProvider) InquireRefund(_ context.Context, ref paykit.AttemptRef) paykit.Result {
	key := ref.Key
	f.mu.Lock()
	defer f.mu.Unlock()
	r, ok := f.refunds[key]
	if !ok {
		return paykit.Result{Outcome: paykit.OutcomeNotFound}
	}
	if r.state == paykit.OutcomeUnknown {
		return paykit.Result{Outcome: paykit.OutcomeUnknown, Detail: "timeout"}
	}
	if r.state == paykit.OutcomePending {
		r.state = paykit.OutcomeSucceeded // settles by the next inquiry
		return paykit.Result{Outcome: paykit.OutcomePending, Reference: "rf_" + key}
	}
	return f.refundResult(key, r)
}

// refundsReceived is how many distinct refunds the Provider holds, and
// create calls made.
func (f *fakeProvider) refundsReceived() (refunds, calls int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, n := range f.refundCalls {
		calls += n
	}
	return len(f.refunds), calls
}

// paid makes a succeeded FPX payment of amount.
func (e *flowEnv) paid(t *testing.T, amount int64, ref string) *paykit.PaymentIntent {
	t.Helper()
	ctx := context.Background()
	pi, _, err := e.svc.CreatePaymentIntent(ctx, e.test, "pay-"+ref, fpx(amount, ref))
	if err != nil {
		t.Fatal(err)
	}
	e.provider.approve(pi.ID)
	e.clock.Advance(time.Minute)
	e.drain(t)
	if pi, err = e.svc.GetPaymentIntent(ctx, e.test, pi.ID); err != nil || pi.Status != paykit.PaymentSucceeded {
		t.Fatalf("payment %s: %v %v", ref, pi.Status, err)
	}
	return pi
}

// settle runs the worker through ten minutes of inquiries and retries.
func (e *flowEnv) settle(t *testing.T) {
	t.Helper()
	for range 10 {
		e.clock.Advance(time.Minute)
		e.drain(t)
	}
}

func (e *flowEnv) balance(t *testing.T) (available, reserved int64) {
	t.Helper()
	page, err := e.svc.ListBalances(context.Background(), e.test)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range page.Data {
		if b.Currency == "MYR" {
			return b.Available, b.Reserved
		}
	}
	return 0, 0
}

func refundOf(pi *paykit.PaymentIntent, ref string, amount int64) paykit.CreateRefundRequest {
	return paykit.CreateRefundRequest{PaymentIntent: pi.ID, MerchantReference: ref, Amount: amount}
}

// TestRefundRules: every refusal comes before anything is persisted;
// partial refunds add up to the payment; the ledger reserves, settles and
// releases.
func TestRefundRules(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	e := newFlowEnv(t)
	is.NoErr(e.store.CreateMerchant(ctx, &paykit.Merchant{ID: "mch_1", Name: "One", CreatedAt: e.clock.Now()}))
	pi := e.paid(t, 10000, "order-1")
	avail, _ := e.balance(t)
	is.Equal(avail, int64(10000))

	refuse := func(req paykit.CreateRefundRequest, p paykit.Principal, code, param string) {
		t.Helper()
		_, _, err := e.svc.CreateRefund(ctx, p, "k-"+req.MerchantReference+code, req)
		is.Equal(paykit.ErrorCode(err), code)
		if param != "" {
			is.Equal(paykit.AsError(err).Param, param)
		}
	}
	refuse(paykit.CreateRefundRequest{PaymentIntent: "pi_nope", MerchantReference: "r"}, e.test, paykit.CodeNotFound, "payment_intent")
	refuse(refundOf(pi, "r", 0), e.live, paykit.CodeNotFound, "payment_intent") // another environment's payment
	refuse(refundOf(pi, "", 0), e.test, paykit.CodeInvalidRequest, "merchant_reference")
	refuse(refundOf(pi, "r", -5), e.test, paykit.CodeInvalidRequest, "amount")
	refuse(refundOf(pi, "r", 10001), e.test, paykit.CodeAmountExceedsRefundable, "amount")
	long := make([]byte, 513)
	for i := range long {
		long[i] = 'x'
	}
	refuse(paykit.CreateRefundRequest{PaymentIntent: pi.ID, MerchantReference: "r", Reason: string(long)}, e.test, paykit.CodeInvalidRequest, "reason")
	open, _, err := e.svc.CreatePaymentIntent(ctx, e.test, "pay-open", fpx(3000, "open"))
	is.NoErr(err)
	refuse(paykit.CreateRefundRequest{PaymentIntent: open.ID, MerchantReference: "r"}, e.test, paykit.CodeInvalidState, "payment_intent")

	page, err := e.svc.ListRefunds(ctx, e.test, paykit.RefundListParams{})
	is.NoErr(err)
	is.Equal(len(page.Data), 0) // nothing persisted
	avail, reserved := e.balance(t)
	is.Equal([]int64{avail, reserved}, []int64{10000, 0})

	// Partial refunds: 3000 succeeds, 2500 is declined (…911 is the fake's
	// decline), the rest by default.
	re1, ans, err := e.svc.CreateRefund(ctx, e.test, "k1", paykit.CreateRefundRequest{PaymentIntent: pi.ID, MerchantReference: "r1", Amount: 3000, Reason: "damaged"})
	is.NoErr(err)
	is.Equal(ans.Kind, paykit.AnswerCreated)
	is.Equal(re1.Status, paykit.RefundPending)
	is.Equal(re1.Currency, "MYR")
	is.Equal(re1.Reason, "damaged")
	avail, reserved = e.balance(t)
	is.Equal([]int64{avail, reserved}, []int64{7000, 3000})
	refuse(refundOf(pi, "r1", 100), e.test, paykit.CodeDuplicateMerchantReference, "merchant_reference")

	declined, _, err := e.svc.CreateRefund(ctx, e.test, "k2", refundOf(pi, "r2", 1911))
	is.NoErr(err)
	is.Equal(declined.Status, paykit.RefundFailed)
	is.Equal(declined.FailureCode, paykit.RefundProviderDeclined)
	is.True(declined.CompletedAt != nil)
	avail, reserved = e.balance(t)
	is.Equal([]int64{avail, reserved}, []int64{7000, 3000}) // released at once

	rest, _, err := e.svc.CreateRefund(ctx, e.test, "k3", refundOf(pi, "r3", 0))
	is.NoErr(err)
	is.Equal(rest.Amount, int64(7000)) // all that is refundable: 10000 - 3000 pending
	refuse(refundOf(pi, "r4", 0), e.test, paykit.CodeAmountExceedsRefundable, "amount")

	// Replays answer the first answer.
	again, ans, err := e.svc.CreateRefund(ctx, e.test, "k1", paykit.CreateRefundRequest{PaymentIntent: pi.ID, MerchantReference: "r1", Amount: 3000, Reason: "damaged"})
	is.NoErr(err)
	is.True(ans.Replayed)
	is.Equal(again.ID, re1.ID)

	e.settle(t) // inquiries find both succeeded
	for _, id := range []string{re1.ID, rest.ID} {
		got, err := e.svc.GetRefund(ctx, e.test, id)
		is.NoErr(err)
		is.Equal(got.Status, paykit.RefundSucceeded)
		is.True(got.CompletedAt != nil)
		is.Equal(got.ProviderRef, "rf_"+id)
	}
	pi, err = e.svc.GetPaymentIntent(ctx, e.test, pi.ID)
	is.NoErr(err)
	is.Equal(pi.Status, paykit.PaymentSucceeded)
	is.Equal(pi.RefundedAmount, int64(10000))
	is.Equal(pi.RefundPendingAmount, int64(0))
	avail, reserved = e.balance(t)
	is.Equal([]int64{avail, reserved}, []int64{0, 0})

	// Nothing left: not even a balance to refund from.
	pi2 := e.paid(t, 5000, "order-2")
	_, err = e.svc.AdjustBalance(ctx, "ops", "mch_1", paykit.BalanceAdjustmentRequest{Environment: paykit.Test, Currency: "MYR", Amount: -4000, Reason: "fee"})
	is.NoErr(err)
	refuse(refundOf(pi2, "r5", 2000), e.test, paykit.CodeInsufficientBalance, "amount")
	_, err = e.svc.GetPaymentIntent(ctx, e.test, pi2.ID)
	is.NoErr(err)

	// Events: pending on create, then the final status.
	evs, err := e.svc.ListEvents(ctx, e.test, paykit.EventListParams{Types: []string{"refund.pending", "refund.succeeded", "refund.failed"}})
	is.NoErr(err)
	var types []string
	for _, ev := range evs.Data {
		if ev.ObjectID == re1.ID {
			types = append(types, ev.Type)
			is.Equal(ev.Resource.(*paykit.Refund).ID, re1.ID)
		}
	}
	is.Equal(types, []string{"refund.succeeded", "refund.pending"})

	list, err := e.svc.ListRefunds(ctx, e.test, paykit.RefundListParams{PaymentIntent: pi.ID, ListParams: paykit.ListParams[paykit.RefundStatus]{Statuses: []paykit.RefundStatus{paykit.RefundSucceeded}}})
	is.NoErr(err)
	is.Equal(len(list.Data), 2)
}

// TestRefundUnknownOutcomes: a timed-out create stays pending and inquiry
// settles it, recording the Provider's id; an unacknowledged one is sent
// again under the same key; neither is ever failed for want of an answer.
func TestRefundUnknownOutcomes(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	e := newFlowEnv(t)
	pi := e.paid(t, 10000, "order-1")

	timedOut, _, err := e.svc.CreateRefund(ctx, e.test, "k1", refundOf(pi, "r1", 1912))
	is.NoErr(err)
	is.Equal(timedOut.Status, paykit.RefundPending)
	is.Equal(timedOut.ProviderRef, "") // the create said nothing

	dropped, _, err := e.svc.CreateRefund(ctx, e.test, "k2", refundOf(pi, "r2", 1913))
	is.NoErr(err)
	is.Equal(dropped.Status, paykit.RefundPending)
	refunds, calls := e.provider.refundsReceived()
	is.Equal([]int{refunds, calls}, []int{1, 2})

	e.settle(t)
	refunds, calls = e.provider.refundsReceived()
	is.Equal([]int{refunds, calls}, []int{2, 3}) // the dropped one sent once more, same key
	for _, id := range []string{timedOut.ID, dropped.ID} {
		got, err := e.svc.GetRefund(ctx, e.test, id)
		is.NoErr(err)
		is.Equal(got.Status, paykit.RefundSucceeded)
		is.Equal(got.ProviderRef, "rf_"+id) // recorded from inquiry
	}
	_, _, err = e.svc.CreateRefund(ctx, e.test, "k1", refundOf(pi, "r1", 1912))
	is.NoErr(err) // replay
}

// TestRefundThatNeverSettlesIsVisible: a refund whose Provider never
// answers stays pending, keeps being asked, and shows in the jobs view.
func TestRefundThatNeverSettlesIsVisible(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	e := newFlowEnv(t)
	pi := e.paid(t, 10000, "order-1")
	re, _, err := e.svc.CreateRefund(ctx, e.test, "k1", refundOf(pi, "r1", 1914))
	is.NoErr(err)
	for range 48 { // two days of asking
		e.clock.Advance(time.Hour)
		e.drain(t)
	}
	got, err := e.svc.GetRefund(ctx, e.test, re.ID)
	is.NoErr(err)
	is.Equal(got.Status, paykit.RefundPending) // never failed for want of an answer
	jobs, err := e.svc.ListJobs(ctx, paykit.JobListParams{Kind: "refund.inquire"})
	is.NoErr(err)
	is.Equal(len(jobs.Data), 1)
	is.Equal(jobs.Data[0].TargetID, re.ID)
	is.True(jobs.Data[0].State == paykit.JobRetrying || jobs.Data[0].State == paykit.JobNeedsAttention)
	is.True(jobs.Data[0].Attempts > 10)
}

// TestCrashedRefundIsRecovered, on every Store: a request that dies
// between its two transactions (here in the Provider call, which recorded
// the refund) leaves it pending, reserved and still to send; a concurrent
// request with its key is told it is in progress. Once the lock lapses,
// the retry with the key, or the dispatch job before it, sends it again
// under the same Provider key, and every later replay answers the same.
func TestCrashedRefundIsRecovered(t *testing.T) {
	t.Parallel()
	for _, via := range []string{"retry", "worker"} {
		t.Run(via, func(t *testing.T) {
			onEveryStore(t, func(t *testing.T, e *flowEnv, pi *paykit.PaymentIntent) {
				is := is.New(t)
				ctx := context.Background()
				req := refundOf(pi, "r-crash", 4000)

				die := e.hang(t, func(hung context.Context) {
					_, _, _ = e.svc.CreateRefund(hung, e.test, "crash-key", req)
				}, func() bool { n, _ := e.provider.refundsReceived(); return n == 1 })
				_, _, err := e.svc.CreateRefund(ctx, e.test, "crash-key", req)
				is.Equal(paykit.ErrorCode(err), paykit.CodeIdempotencyInProgress)
				is.True(paykit.AsError(err).RetryAfter > 0)
				die()

				page, err := e.svc.ListRefunds(ctx, e.test, paykit.RefundListParams{})
				is.NoErr(err)
				is.Equal(len(page.Data), 1)
				re := page.Data[0]
				is.Equal(re.Status, paykit.RefundPending)
				is.Equal(re.Attempt, paykit.AttemptCreating) // the answer was never applied
				avail, reserved := e.balance(t)
				is.Equal([]int64{avail, reserved}, []int64{6000, 4000})

				e.clock.Advance(31 * time.Second) // the request's lock lapses
				if via == "worker" {
					e.drain(t)
				}
				resp, err := answertest.From(e.svc.CreateRefund(ctx, e.test, "crash-key", req))
				is.NoErr(err)
				is.Equal(resp.Status, http.StatusCreated)
				is.Equal(resp.Replayed, via == "worker")
				var got paykit.Refund
				is.NoErr(resp.Decode(&got))
				is.Equal(got.ID, re.ID)
				is.Equal(got.Status, paykit.RefundPending)
				refunds, calls := e.provider.refundsReceived()
				is.Equal([]int{refunds, calls}, []int{1, 2}) // sent again under its key: one refund

				e.settle(t)
				replay, err := answertest.From(e.svc.CreateRefund(ctx, e.test, "crash-key", req))
				is.NoErr(err)
				is.True(replay.Replayed)
				is.Equal(string(replay.Body), string(resp.Body))
				refunds, calls = e.provider.refundsReceived()
				is.Equal([]int{refunds, calls}, []int{1, 2})
				final, err := e.svc.GetRefund(ctx, e.test, re.ID)
				is.NoErr(err)
				is.Equal(final.Status, paykit.RefundSucceeded)
				avail, reserved = e.balance(t)
				is.Equal([]int64{avail, reserved}, []int64{6000, 0})
				p, err := e.svc.GetPaymentIntent(ctx, e.test, pi.ID)
				is.NoErr(err)
				is.Equal([]int64{p.RefundedAmount, p.RefundPendingAmount}, []int64{4000, 0})
			})
		})
	}
}

// refundAnsweredMeanwhile creates a refund of amount of pi under key k1
// while the Provider call outlasts the request's lock and the worker runs
// meanwhile; it checks that the request answers the job's stored answer,
// as a replay, and a retry the same body, and returns the refund answered.
func refundAnsweredMeanwhile(t *testing.T, e *flowEnv, pi *paykit.PaymentIntent, amount int64) paykit.Refund {
	t.Helper()
	is := is.New(t)
	ctx := context.Background()
	e.provider.meanwhile = func() {
		e.clock.Advance(31 * time.Second)
		e.drain(t)
	}
	resp, err := answertest.From(e.svc.CreateRefund(ctx, e.test, "k1", refundOf(pi, "r1", amount)))
	is.NoErr(err)
	is.True(resp.Replayed) // the job's answer
	var re paykit.Refund
	is.NoErr(resp.Decode(&re))
	again, err := answertest.From(e.svc.CreateRefund(ctx, e.test, "k1", refundOf(pi, "r1", amount)))
	is.NoErr(err)
	is.Equal(string(again.Body), string(resp.Body))
	return re
}

// TestRefundAnsweredMeanwhile, on every Store: while the request's
// Provider call outlasts its lock, the dispatch job sends the refund again
// and completes the key. The request's answer then meets a refund changed
// since it committed it (the versioned update fails), reads it, and
// answers what the job stored.
func TestRefundAnsweredMeanwhile(t *testing.T) {
	t.Parallel()
	onEveryStore(t, func(t *testing.T, e *flowEnv, pi *paykit.PaymentIntent) {
		is := is.New(t)
		ctx := context.Background()
		re := refundAnsweredMeanwhile(t, e, pi, 3000)
		is.Equal(re.Attempt, paykit.AttemptOpen)
		refunds, calls := e.provider.refundsReceived()
		is.Equal([]int{refunds, calls}, []int{1, 2})
		evs, err := e.svc.ListEvents(ctx, e.test, paykit.EventListParams{})
		is.NoErr(err)
		n := 0
		for _, ev := range evs.Data {
			if ev.ObjectID == re.ID {
				n++
			}
		}
		is.Equal(n, 1) // refund.pending, once
		avail, reserved := e.balance(t)
		is.Equal([]int64{avail, reserved}, []int64{7000, 3000})
	})
}

// TestDeclinedRefundAnsweredMeanwhile, on every Store: as above, with a
// refund the Provider declines. The job releases the reservation first;
// the request's answer, on its unread copy, meets a reservation already
// released, which is the conflict it is: it reads, and answers what the job
// stored, and the reservation is released once.
func TestDeclinedRefundAnsweredMeanwhile(t *testing.T) {
	t.Parallel()
	onEveryStore(t, func(t *testing.T, e *flowEnv, pi *paykit.PaymentIntent) {
		is := is.New(t)
		re := refundAnsweredMeanwhile(t, e, pi, 2911)
		is.Equal(re.Status, paykit.RefundFailed)
		avail, reserved := e.balance(t)
		is.Equal([]int64{avail, reserved}, []int64{10000, 0})
	})
}

// TestConcurrentIdenticalRefunds, on every Store: requests with one key at
// once make one refund, sent once; each answers the one body or
// idempotency_in_progress.
func TestConcurrentIdenticalRefunds(t *testing.T) {
	t.Parallel()
	onEveryStore(t, func(t *testing.T, e *flowEnv, pi *paykit.PaymentIntent) {
		is := is.New(t)
		ctx := context.Background()
		created := sameKeyAnswers(t, 20, func() (*answertest.Response, error) {
			return answertest.From(e.svc.CreateRefund(ctx, e.test, "same-key", refundOf(pi, "r-same", 3000)))
		})
		is.True(created >= 1)
		refunds, calls := e.provider.refundsReceived()
		is.Equal([]int{refunds, calls}, []int{1, 1})
		avail, reserved := e.balance(t)
		is.Equal([]int64{avail, reserved}, []int64{7000, 3000})
	})
}

// TestConcurrentRefundsNeverExceedThePayment: ten concurrent refunds of
// 30 % each on every Store: exactly three are created and sent, the rest
// are amount_exceeds_refundable.
func TestConcurrentRefundsNeverExceedThePayment(t *testing.T) {
	t.Parallel()
	for _, kind := range paykittest.Stores {
		t.Run(string(kind), func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			ctx := context.Background()
			e := newFlowEnvOn(t, paykittest.OpenStore(t, kind))
			pi := e.paid(t, 10000, "order-1")
			var (
				wg       sync.WaitGroup
				mu       sync.Mutex
				created  int
				exceeded int
			)
			for i := range 10 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					ref := "r" + string(rune('a'+i))
					_, _, err := e.svc.CreateRefund(ctx, e.test, "k-"+ref, refundOf(pi, ref, 3000))
					mu.Lock()
					defer mu.Unlock()
					switch {
					case err == nil:
						created++
					case paykit.ErrorCode(err) == paykit.CodeAmountExceedsRefundable:
						exceeded++
					default:
						t.Errorf("refund %s: %v", ref, err)
					}
				}()
			}
			wg.Wait()
			is.Equal([]int{created, exceeded}, []int{3, 7})
			refunds, _ := e.provider.refundsReceived()
			is.Equal(refunds, 3)
			got, err := e.svc.GetPaymentIntent(ctx, e.test, pi.ID)
			is.NoErr(err)
			is.Equal(got.RefundPendingAmount, int64(9000))
		})
	}
}

// TestCreateRefundTx, on every Store: rolled back, no refund, no
// reservation, no call; committed, the reservation with it, and the worker
// sends it and completes the key, which then replays, in a host's
// transaction too.
func TestCreateRefundTx(t *testing.T) {
	t.Parallel()
	onEveryStore(t, func(t *testing.T, e *flowEnv, pi *paykit.PaymentIntent) {
		is := is.New(t)
		ctx := context.Background()
		errHost := errors.New("host rolls back")
		err := e.store.InTx(ctx, func(tx paykit.Tx) error {
			if _, _, err := e.svc.CreateRefundTx(ctx, tx, e.test, "k1", refundOf(pi, "r1", 4000)); err != nil {
				return err
			}
			return errHost
		})
		is.True(errors.Is(err, errHost))
		e.drain(t)
		refunds, _ := e.provider.refundsReceived()
		is.Equal(refunds, 0)
		avail, reserved := e.balance(t)
		is.Equal([]int64{avail, reserved}, []int64{10000, 0})

		var re *paykit.Refund
		is.NoErr(e.store.InTx(ctx, func(tx paykit.Tx) error {
			var ans paykit.Answer
			re, ans, err = e.svc.CreateRefundTx(ctx, tx, e.test, "k2", refundOf(pi, "r2", 4000))
			is.Equal(ans.Kind, paykit.AnswerAccepted)
			return err
		}))
		is.Equal(re.Status, paykit.RefundPending)
		avail, reserved = e.balance(t)
		is.Equal([]int64{avail, reserved}, []int64{6000, 4000})
		refunds, _ = e.provider.refundsReceived()
		is.Equal(refunds, 0)
		e.drain(t)
		refunds, _ = e.provider.refundsReceived()
		is.Equal(refunds, 1)
		again, ans, err := e.svc.CreateRefund(ctx, e.test, "k2", refundOf(pi, "r2", 4000))
		is.NoErr(err)
		is.True(ans.Replayed)
		is.Equal(ans.Kind, paykit.AnswerCreated)
		is.Equal(again.ID, re.ID)
		is.NoErr(e.store.InTx(ctx, func(tx paykit.Tx) error {
			again, ans, err = e.svc.CreateRefundTx(ctx, tx, e.test, "k2", refundOf(pi, "r2", 4000))
			return err
		}))
		is.True(ans.Replayed)
		is.Equal(again.ID, re.ID)
	})
}

// onEveryStore runs test on a flow environment of every Store, with a
// succeeded payment of 10000.
func onEveryStore(t *testing.T, test func(t *testing.T, e *flowEnv, pi *paykit.PaymentIntent)) {
	for _, kind := range paykittest.Stores {
		t.Run(string(kind), func(t *testing.T) {
			t.Parallel()
			e := newFlowEnvOn(t, paykittest.OpenStore(t, kind))
			test(t, e, e.paid(t, 10000, "order-1"))
		})
	}
}
