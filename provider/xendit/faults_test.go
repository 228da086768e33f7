package xendit_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/provider/xendit/xenditfake"
)

type mode int32

const (
	pass      mode = iota
	hold           // the fake acts, the answer never comes
	reset          // the fake acts, the connection is closed
	status502      // the fake acts, a proxy answers 502
	status429      // not executed: rate limited
	malformed      // the fake acts, the answer is cut short
	lostOnce       // the fake acts on POST /v3/payment_requests, the answer is lost once
)

// faulty breaks requests to the fake as its mode says.
type faulty struct {
	fake http.Handler
	mode atomic.Int32
	stop chan struct{}
}

func (f *faulty) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	m := mode(f.mode.Load())
	if m == lostOnce {
		if r.Method != http.MethodPost || r.URL.Path != "/v3/payment_requests" {
			f.fake.ServeHTTP(w, r)
			return
		}
		f.mode.Store(int32(pass))
		m = reset
	}
	switch m {
	case pass:
		f.fake.ServeHTTP(w, r)
		return
	case status429:
		w.Header().Set("Retry-After", "7")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusTooManyRequests)
		_, _ = io.WriteString(w, `{"error_code":"RATE_LIMIT_EXCEEDED","message":"too many requests"}`)
		return
	}
	rec := httptest.NewRecorder()
	f.fake.ServeHTTP(rec, r)
	switch m {
	case hold:
		select {
		case <-r.Context().Done():
		case <-f.stop:
		}
	case reset:
		conn, _, err := http.NewResponseController(w).Hijack()
		if err != nil {
			panic(http.ErrAbortHandler)
		}
		_ = conn.Close()
	case status502:
		w.WriteHeader(http.StatusBadGateway)
	case malformed:
		w.Header().Set("Content-Type", "application/json")
		body := rec.Body.String()
		_, _ = io.WriteString(w, body[:len(body)/2])
	}
}

// Over real HTTP, a timeout after sending, a reset, a 502, a 429 with
// Retry-After and a malformed answer never end an attempt as failed:
// each call of every kind (payments, refunds, payouts) is Unknown or
// Unacknowledged, and what Xendit did is found again afterwards.
func TestFaultsNeverFail(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	want := map[mode]paykit.Outcome{
		hold: paykit.OutcomeUnknown, reset: paykit.OutcomeUnacknowledged, status502: paykit.OutcomeUnacknowledged,
		status429: paykit.OutcomeUnacknowledged, malformed: paykit.OutcomeUnknown,
	}
	names := map[mode]string{hold: "timeout", reset: "reset", status502: "502", status429: "429", malformed: "malformed"}
	for m, outcome := range want {
		t.Run(names[m], func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			f := newFake(xenditfake.Options{})
			front := &faulty{fake: f, stop: make(chan struct{})}
			srv := httptest.NewServer(front)
			defer srv.Close()
			defer close(front.stop)
			// Only a held request needs the short timeout; the other faults
			// answer at once, and a loaded machine must not turn them into
			// timeouts.
			timeout := 5 * time.Second
			if m == hold {
				timeout = testTimeout
			}
			p := adapter(t, srv.URL, timeout, nil)
			paid := p.CreatePayment(ctx, tng("k_paid", 2000))
			is.NoErr(f.Approve("k_paid"))
			po := p.CreatePayout(ctx, payout("k_po", xenditfake.HoldAccount))
			is.Equal(po.Outcome, paykit.OutcomePending)

			front.mode.Store(int32(m))
			results := map[string]paykit.Result{
				"create":         p.CreatePayment(ctx, tng("k_new", 2000)),
				"inquire":        p.InquirePayment(ctx, paykit.AttemptRef{Key: "k_paid", Reference: paid.Reference}),
				"inquire by key": p.InquirePayment(ctx, paykit.AttemptRef{Key: "k_paid"}),
				"cancel":         p.CancelPayment(ctx, paykit.AttemptRef{Key: "k_paid", Reference: paid.Reference}),
				"refund":         p.CreateRefund(ctx, paykit.RefundRequest{Key: "k_rf", PaymentKey: "k_paid", PaymentRef: paid.Reference, Amount: 100, Currency: "MYR"}),
				"inquire refund": p.InquireRefund(ctx, paykit.AttemptRef{Key: "k_rf"}),
				"payout":         p.CreatePayout(ctx, payout("k_po2", "1234567890")),
				"inquire payout": p.InquirePayout(ctx, paykit.AttemptRef{Key: "k_po", Reference: po.Reference}),
				"cancel payout":  p.CancelPayout(ctx, paykit.AttemptRef{Key: "k_po", Reference: po.Reference}),
			}
			for what, r := range results {
				if r.Outcome != outcome || r.FailureCode != "" {
					t.Errorf("%s: %s %q (%s), want %s", what, r.Outcome, r.FailureCode, r.Detail, outcome)
				}
			}
			if m == status429 {
				is.True(strings.Contains(results["create"].Detail, "Retry-After 7"))
			}
			front.mode.Store(int32(pass))
			// Whatever the fault, the payment stays succeeded at Xendit and
			// a retry of the create finds the attempt, if Xendit made it.
			is.Equal(p.InquirePayment(ctx, paykit.AttemptRef{Key: "k_paid"}).Outcome, paykit.OutcomeSucceeded)
			made := 1
			if m == status429 {
				made = 0
			}
			is.Equal(f.PaymentRequests("k_new"), made)
			again := p.CreatePayment(ctx, tng("k_new", 2000))
			is.Equal(again.Outcome, paykit.OutcomeRequiresAction)
			is.Equal(f.PaymentRequests("k_new"), 1)
			// The payout retried under its key is the one Xendit made.
			retry := p.CreatePayout(ctx, payout("k_po2", "1234567890"))
			is.Equal(retry.Outcome, paykit.OutcomePending)
			is.Equal(p.InquirePayout(ctx, paykit.AttemptRef{Key: "k_po2"}).Reference, retry.Reference)
		})
	}
}

// Xendit documents no idempotency key for payment requests: a create
// whose answer was lost, retried under the same key, finds the payment
// request by its reference_id and makes no second one.
func TestNoDoubleCharge(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	f := newFake(xenditfake.Options{})
	front := &faulty{fake: f, stop: make(chan struct{})}
	srv := httptest.NewServer(front)
	defer srv.Close()
	p := adapter(t, srv.URL, 5*time.Second, nil) // no answer is held here
	front.mode.Store(int32(lostOnce))
	lost := p.CreatePayment(context.Background(), tng("k_once", 2000))
	is.Equal(lost.Outcome, paykit.OutcomeUnacknowledged)
	retry := p.CreatePayment(context.Background(), tng("k_once", 2000))
	is.Equal(retry.Outcome, paykit.OutcomeRequiresAction)
	is.Equal(f.PaymentRequests("k_once"), 1)
}

// The Payouts API's Idempotency-key is mandatory: the adapter sends the
// attempt's Key, so a payout whose answer was lost and is sent again is
// the same payout, and a key reused with another body answers the payout
// Xendit holds under it.
func TestPayoutIdempotencyKey(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	f := newFake(xenditfake.Options{})
	var keys []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.URL.Path == "/v2/payouts" {
			keys = append(keys, r.Header.Get("Idempotency-key"))
		}
		f.ServeHTTP(w, r)
	}))
	defer srv.Close()
	p := adapter(t, srv.URL, 5*time.Second, nil)
	first := p.CreatePayout(ctx, payout("po_key_1", "1234567890"))
	again := p.CreatePayout(ctx, payout("po_key_1", "1234567890"))
	is.Equal(first.Outcome, paykit.OutcomePending)
	is.Equal(again.Reference, first.Reference)
	other := payout("po_key_1", "1234567890")
	other.Amount = 777
	dup := p.CreatePayout(ctx, other)
	is.Equal(dup.Reference, first.Reference) // DUPLICATE_ERROR: the payout under the key
	is.True(strings.Contains(dup.Detail, "DUPLICATE_ERROR"))
	is.Equal(keys, []string{"po_key_1", "po_key_1", "po_key_1"})
}
