package opn_test

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
	"github.com/paykit/paykit/provider/opn"
	"github.com/paykit/paykit/provider/opn/opnfake"
)

type mode int32

const (
	pass      mode = iota
	hold           // the fake acts, the answer never comes
	reset          // the fake acts, the connection is closed
	status502      // the fake acts, a proxy answers 502
	status429      // not executed: rate limited
	malformed      // the fake acts, the answer is cut short
	lostOnce       // the fake acts on POST /charges, the answer is lost once
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
		if r.Method != http.MethodPost || r.URL.Path != "/charges" {
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
		_, _ = io.WriteString(w, `{"object":"error","code":"rate_limit","message":"too many requests"}`)
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
			f := newFake(t)
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
			p := adapterWithin(t, f, srv.URL, timeout)
			paid := p.CreatePayment(ctx, promptpay("k_paid", 2000))
			is.NoErr(f.Approve("k_paid"))
			po := p.CreatePayout(ctx, payout("k_po", "1234567890"))

			front.mode.Store(int32(m))
			results := map[string]paykit.Result{
				"create":         p.CreatePayment(ctx, promptpay("k_new", 2000)),
				"inquire":        p.InquirePayment(ctx, paykit.AttemptRef{Key: "k_paid", Reference: paid.Reference}),
				"inquire by key": p.InquirePayment(ctx, paykit.AttemptRef{Key: "k_paid"}),
				"cancel":         p.CancelPayment(ctx, paykit.AttemptRef{Key: "k_paid", Reference: paid.Reference}),
				"refund":         p.CreateRefund(ctx, paykit.RefundRequest{Key: "k_rf", PaymentKey: "k_paid", PaymentRef: paid.Reference, Amount: 100, Currency: "THB"}),
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
			// Whatever the fault, the payment stays succeeded at Opn and
			// a retry of the create finds the attempt, if Opn made it.
			is.Equal(p.InquirePayment(ctx, paykit.AttemptRef{Key: "k_paid"}).Outcome, paykit.OutcomeSucceeded)
			if m != status429 {
				is.Equal(f.Charges("k_new"), 1)
			}
			p.CreatePayment(ctx, promptpay("k_new", 2000))
			is.Equal(f.Charges("k_new"), 1)
		})
	}
}

// A create whose answer was lost, retried under the same key, charges
// once: with Opn honouring Idempotency-Key, and without (the adapter's
// search by metadata paykit_key finds the charge first).
func TestNoDoubleCharge(t *testing.T) {
	t.Parallel()
	for _, ignore := range []bool{false, true} {
		t.Run(map[bool]string{false: "idempotency key", true: "search"}[ignore], func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			f := opnfake.New(opnfake.Options{SecretKey: testSecret, IgnoreIdempotencyKey: ignore})
			front := &faulty{fake: f, stop: make(chan struct{})}
			srv := httptest.NewServer(front)
			defer srv.Close()
			p := adapterWithin(t, f, srv.URL, 5*time.Second) // no answer is held here
			front.mode.Store(int32(lostOnce))
			lost := p.CreatePayment(context.Background(), promptpay("k_once", 2000))
			is.Equal(lost.Outcome, paykit.OutcomeUnacknowledged)
			retry := p.CreatePayment(context.Background(), promptpay("k_once", 2000))
			is.Equal(retry.Outcome, paykit.OutcomeRequiresAction)
			is.Equal(f.Charges("k_once"), 1)
		})
	}
}

// Opn documents its QR image as a document download; an SVG of rect
// modules decodes as a PNG does.
func TestSVGQRCode(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	payload := opnfake.EMVCo("TH", "THB", 2000, "chrg_test_svg")
	svg, err := opnfake.QRSVG(payload)
	is.NoErr(err)
	got, err := opn.DecodeQR(svg)
	is.NoErr(err)
	is.Equal(got, payload)
}
