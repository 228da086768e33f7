package sandbox_test

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/sqlitedialect"
	_ "modernc.org/sqlite"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/provider/sandbox"
	"github.com/paykit/paykit/provider/sandbox/sandboxsql"
)

// refundClock is a manual clock for the PSP.
type refundClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *refundClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *refundClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// refundSink receives the PSP's callbacks and parses them with the adapter.
type refundSink struct {
	mu   sync.Mutex
	prov *sandbox.Provider
	got  []paykit.CallbackEvent
}

func (s *refundSink) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	evs, err := s.prov.ParseCallback(r.Context(), r)
	if err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	s.got = append(s.got, evs...)
}

func (s *refundSink) events() []paykit.CallbackEvent {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.got)
}

const delay = 2 * time.Second

// refundEnv is a PSP on a manual clock behind a real HTTP server, its adapter
// with a short timeout, and a callback receiver.
type refundEnv struct {
	psp   *sandbox.PSP
	prov  *sandbox.Provider
	clock *refundClock
	sink  *refundSink
}

func newRefundEnv(t *testing.T) *refundEnv { return newRefundEnvOn(t, nil) }

func newRefundEnvOn(t *testing.T, db *bun.DB) *refundEnv {
	t.Helper()
	var st sandbox.State
	if db != nil {
		sst, err := sandboxsql.New(db, nil)
		if err != nil {
			t.Fatal(err)
		}
		st = sst
	}
	e := &refundEnv{clock: &refundClock{now: time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)}, sink: &refundSink{}}
	cb := httptest.NewServer(e.sink)
	t.Cleanup(cb.Close)
	e.psp = sandbox.NewPSP(sandbox.PSPConfig{
		BaseURL: "http://psp.invalid", APIKey: testAPIKey, Delay: delay, Hold: 10 * time.Second,
		CallbackURL: cb.URL, Now: e.clock.Now, State: st,
	})
	srv := httptest.NewServer(e.psp)
	t.Cleanup(srv.Close)
	e.prov = sandbox.New(sandbox.Config{BaseURL: srv.URL, APIKey: testAPIKey, Timeout: testTimeout})
	e.sink.prov = e.prov
	return e
}

// paid makes a succeeded payment of amount by method under key and
// returns a refund request template for it.
func (e *refundEnv) paid(t *testing.T, key, method string, amount int64) paykit.RefundRequest {
	t.Helper()
	ctx := context.Background()
	r := e.prov.CreatePayment(ctx, paykit.PaymentRequest{
		Key: key, Amount: amount, Currency: "MYR", Country: "MY", Method: method,
		Customer: map[string]string{"name": "Aisyah Rahman", "email": "aisyah@example.com"},
	})
	if r.Outcome != paykit.OutcomeRequiresAction {
		t.Fatalf("create payment: %s (%s)", r.Outcome, r.Detail)
	}
	if method != "BANK_TRANSFER" {
		if err := e.prov.Approve(ctx, key); err != nil {
			t.Fatalf("approve: %v", err)
		}
	}
	return paykit.RefundRequest{PaymentKey: key, PaymentRef: r.Reference, Currency: "MYR"}
}

func refund(tmpl paykit.RefundRequest, key string, amount int64) paykit.RefundRequest {
	tmpl.Key, tmpl.Amount = key, amount
	return tmpl
}

// The sandbox's magic refund amounts, through the adapter over HTTP:
// 911 declined at once, 912 a timeout the PSP recorded, anything else
// pending then succeeded after the delay, each with its callback.
func TestRefundMagicAmounts(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	e := newRefundEnv(t)
	tmpl := e.paid(t, "pay_1", "TNG", 100000)

	ok := e.prov.CreateRefund(ctx, refund(tmpl, "re_ok", 20000))
	is.Equal(ok.Outcome, paykit.OutcomePending)
	is.True(strings.HasPrefix(ok.Reference, "rfd_"))
	is.Equal(ok.FailureCode, "")

	declined := e.prov.CreateRefund(ctx, refund(tmpl, "re_declined", 10911))
	is.Equal(declined.Outcome, paykit.OutcomeFailed)
	is.Equal(declined.FailureCode, paykit.RefundProviderDeclined)
	is.True(strings.HasPrefix(declined.Reference, "rfd_"))
	is.True(strings.Contains(declined.Detail, "ERR_REFUND_DECLINED")) // the local code stays in Detail

	start := time.Now()
	timeout := e.prov.CreateRefund(ctx, refund(tmpl, "re_timeout", 30912))
	is.Equal(timeout.Outcome, paykit.OutcomeUnknown)
	is.Equal(timeout.Reference, "")
	is.True(time.Since(start) < 5*time.Second) // the adapter's timeout, not the PSP's hold
	is.Equal(e.psp.CreateCalls("re_timeout"), 1)

	// The PSP recorded the timed-out refund: an inquiry finds it.
	inq := e.prov.InquireRefund(ctx, paykit.AttemptRef{Key: "re_timeout"})
	is.Equal(inq.Outcome, paykit.OutcomePending)
	is.True(strings.HasPrefix(inq.Reference, "rfd_"))
	is.Equal(e.prov.InquireRefund(ctx, paykit.AttemptRef{Key: "re_ok"}).Outcome, paykit.OutcomePending)
	is.Equal(e.prov.InquireRefund(ctx, paykit.AttemptRef{Key: "re_declined"}).FailureCode, paykit.RefundProviderDeclined)

	e.clock.Advance(delay)
	for key, ref := range map[string]string{"re_ok": ok.Reference, "re_timeout": inq.Reference} {
		r := e.prov.InquireRefund(ctx, paykit.AttemptRef{Key: key})
		is.Equal(r.Outcome, paykit.OutcomeSucceeded)
		is.Equal(r.Reference, ref)
	}
	// A retry of the timed-out create gets the refund, not a second one.
	retry := e.prov.CreateRefund(ctx, refund(tmpl, "re_timeout", 30912))
	is.Equal(retry.Outcome, paykit.OutcomeSucceeded)
	is.Equal(retry.Reference, inq.Reference)

	got := map[string]string{}
	for _, r := range e.psp.Refunds() {
		got[r.Key] = fmt.Sprintf("%s %d %s %s %s", r.PaymentKey, r.AmountMinor, r.Ccy, r.State, r.ErrorCode)
	}
	is.Equal(got, map[string]string{
		"re_ok":       "pay_1 20000 MYR SUCCESS ",
		"re_declined": "pay_1 10911 MYR FAILED ERR_REFUND_DECLINED",
		"re_timeout":  "pay_1 30912 MYR SUCCESS ",
	})

	// Callbacks: one per refund, of kind refund under the refund's key.
	n, err := e.psp.SendCallbacks(ctx)
	is.NoErr(err)
	is.True(n >= 3)
	var refunds []string
	for _, ev := range e.sink.events() {
		if ev.Kind == "refund" {
			refunds = append(refunds, fmt.Sprintf("%s %s %s", ev.Key, ev.Result.Outcome, ev.Result.FailureCode))
		}
	}
	slices.Sort(refunds)
	is.Equal(refunds, []string{"re_declined failed provider_declined", "re_ok succeeded ", "re_timeout succeeded "})
	n, err = e.psp.SendCallbacks(ctx) // acknowledged: not sent again
	is.NoErr(err)
	is.Equal(n, 0)
}

// What the PSP refuses is failed provider_error and records nothing; the
// same key never makes a second refund; the refundable amount counts
// every refund that is not declined.
func TestRefundRulesAtThePSP(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	e := newRefundEnv(t)
	tmpl := e.paid(t, "pay_1", "TNG", 10000)

	for i, amount := range []int64{3000, 3000, 3000} {
		key := fmt.Sprintf("re_%d", i)
		first := e.prov.CreateRefund(ctx, refund(tmpl, key, amount))
		is.Equal(first.Outcome, paykit.OutcomePending)
		again := e.prov.CreateRefund(ctx, refund(tmpl, key, amount))
		is.Equal(again.Reference, first.Reference) // same key, same refund
	}
	// A declined refund takes nothing of the refundable amount.
	is.Equal(e.prov.CreateRefund(ctx, refund(tmpl, "re_dec", 911)).FailureCode, paykit.RefundProviderDeclined)
	is.Equal(len(e.psp.Refunds()), 4)

	refused := func(what string, req paykit.RefundRequest, code string) {
		t.Helper()
		before := len(e.psp.Refunds())
		r := e.prov.CreateRefund(ctx, req)
		if r.Outcome != paykit.OutcomeFailed || r.FailureCode != paykit.RefundProviderError || !strings.Contains(r.Detail, code) {
			t.Errorf("%s: %s %s (%s), want failed provider_error with %s in Detail", what, r.Outcome, r.FailureCode, r.Detail, code)
		}
		if r.Reference != "" {
			t.Errorf("%s: a refused refund with reference %q", what, r.Reference)
		}
		if n := len(e.psp.Refunds()); n != before {
			t.Errorf("%s: the PSP recorded a refund it refused", what)
		}
		// Nothing was made: the PSP says so.
		if got := e.prov.InquireRefund(ctx, paykit.AttemptRef{Key: req.Key}); got.Outcome != paykit.OutcomeNotFound {
			t.Errorf("%s: inquiry %s, want not found", what, got.Outcome)
		}
	}
	refused("more than is left", refund(tmpl, "re_over", 1001), "ERR_REFUND_AMOUNT")
	refused("unknown payment", refund(paykit.RefundRequest{PaymentKey: "pay_none", Currency: "MYR"}, "re_none", 100), "ERR_REFUND_PAYMENT")
	refused("unknown payment id", refund(paykit.RefundRequest{PaymentRef: "pay_0000000000000000", Currency: "MYR"}, "re_noid", 100), "ERR_REFUND_PAYMENT")
	refused("another currency", refund(paykit.RefundRequest{PaymentKey: "pay_1", Currency: "THB"}, "re_thb", 100), "ERR_REFUND_PAYMENT")

	open := e.prov.CreatePayment(ctx, paykit.PaymentRequest{Key: "pay_open", Amount: 5000, Currency: "MYR", Country: "MY", Method: "TNG",
		Customer: map[string]string{"name": "A", "email": "a@example.com"}})
	is.Equal(open.Outcome, paykit.OutcomeRequiresAction)
	refused("payment not succeeded", refund(paykit.RefundRequest{PaymentKey: "pay_open", Currency: "MYR"}, "re_open", 100), "ERR_REFUND_PAYMENT")

	// The exact rest fits; by payment id alone too.
	last := e.prov.CreateRefund(ctx, refund(paykit.RefundRequest{PaymentRef: tmpl.PaymentRef, Currency: "MYR"}, "re_last", 1000))
	is.Equal(last.Outcome, paykit.OutcomePending)
	refused("nothing left", refund(tmpl, "re_more", 1), "ERR_REFUND_AMOUNT")

	// The PSP received exactly 5 refunds (4 taking 10000 of 10000, 1 declined).
	var sum int64
	for _, r := range e.psp.Refunds() {
		if r.ErrorCode == "" {
			sum += r.AmountMinor
		}
	}
	is.Equal(len(e.psp.Refunds()), 5)
	is.Equal(sum, int64(10000))

	// The same key with another request is the PSP's 409: Unknown, never failed.
	r := e.prov.CreateRefund(ctx, refund(tmpl, "re_0", 2000))
	is.Equal(r.Outcome, paykit.OutcomeUnknown)
	is.Equal(len(e.psp.Refunds()), 5)
}

// Payments by bank transfer (virtual accounts) cannot be refunded: the
// routes say so, and the PSP refuses.
func TestBankTransferCannotRefund(t *testing.T) {
	is := is.New(t)
	for _, r := range sandbox.DefaultRouting().Payments {
		is.Equal(r.NoRefunds, r.Method == "BANK_TRANSFER") // only bank transfers
	}
	ctx := context.Background()
	e := newRefundEnv(t)
	tmpl := e.paid(t, "pay_va", "BANK_TRANSFER", 5000)
	is.Equal(e.prov.InquirePayment(ctx, paykit.AttemptRef{Key: "pay_va"}).Outcome, paykit.OutcomeRequiresAction)
	r := e.prov.CreateRefund(ctx, refund(tmpl, "re_va", 100))
	is.Equal(r.Outcome, paykit.OutcomeFailed)
	is.Equal(r.FailureCode, paykit.RefundProviderError)
}

// Injected faults on refund calls classify as payments' do.
func TestRefundFaults(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name        string
		fault       sandbox.Fault
		want        paykit.Outcome
		recorded    bool
		inquireWant paykit.Outcome
	}{
		{"timeout before", sandbox.Fault{Op: sandbox.OpCreateRefund, Kind: sandbox.FaultTimeout}, paykit.OutcomeUnknown, false, paykit.OutcomeNotFound},
		{"timeout after", sandbox.Fault{Op: sandbox.OpCreateRefund, Kind: sandbox.FaultTimeout, AfterRecord: true}, paykit.OutcomeUnknown, true, paykit.OutcomePending},
		{"reset after", sandbox.Fault{Op: sandbox.OpCreateRefund, Kind: sandbox.FaultReset, AfterRecord: true}, paykit.OutcomeUnacknowledged, true, paykit.OutcomePending},
		{"500 before", sandbox.Fault{Op: sandbox.OpCreateRefund, Kind: sandbox.FaultStatus500}, paykit.OutcomeUnacknowledged, false, paykit.OutcomeNotFound},
		{"500 after", sandbox.Fault{Op: sandbox.OpCreateRefund, Kind: sandbox.FaultStatus500, AfterRecord: true}, paykit.OutcomeUnacknowledged, true, paykit.OutcomePending},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			e := newRefundEnv(t)
			tmpl := e.paid(t, "pay_1", "TNG", 5000)
			e.psp.InjectFault(c.fault)
			is.Equal(e.prov.CreateRefund(ctx, refund(tmpl, "re_1", 1000)).Outcome, c.want)
			is.Equal(len(e.psp.Refunds()) == 1, c.recorded)
			is.Equal(e.prov.InquireRefund(ctx, paykit.AttemptRef{Key: "re_1"}).Outcome, c.inquireWant)
			retry := e.prov.CreateRefund(ctx, refund(tmpl, "re_1", 1000))
			is.Equal(retry.Outcome, paykit.OutcomePending)
			is.Equal(len(e.psp.Refunds()), 1) // never a second refund
		})
	}
	t.Run("inquiry 500", func(t *testing.T) {
		is := is.New(t)
		e := newRefundEnv(t)
		tmpl := e.paid(t, "pay_1", "TNG", 5000)
		is.Equal(e.prov.CreateRefund(ctx, refund(tmpl, "re_1", 1000)).Outcome, paykit.OutcomePending)
		e.psp.InjectFault(sandbox.Fault{Op: sandbox.OpInquireRefund, Kind: sandbox.FaultStatus500})
		is.Equal(e.prov.InquireRefund(ctx, paykit.AttemptRef{Key: "re_1"}).Outcome, paykit.OutcomeUnacknowledged)
		is.Equal(e.prov.InquireRefund(ctx, paykit.AttemptRef{Key: "re_1"}).Outcome, paykit.OutcomePending)
	})
}

// Concurrent refunds of one payment that together exceed it: exactly the
// ones that fit are recorded.
func TestConcurrentRefundsNeverExceedThePayment(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	e := newRefundEnv(t)
	tmpl := e.paid(t, "pay_1", "TNG", 10000)
	var wg sync.WaitGroup
	results := make([]paykit.Result, 12)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Two requests per key: the same key never makes two refunds.
			results[i] = e.prov.CreateRefund(ctx, refund(tmpl, fmt.Sprintf("re_%d", i/2), 3000))
		}()
	}
	wg.Wait()
	pending := map[string]bool{}
	for _, r := range results {
		switch r.Outcome {
		case paykit.OutcomePending:
			pending[r.Reference] = true
		case paykit.OutcomeFailed:
			is.Equal(r.FailureCode, paykit.RefundProviderError)
		default:
			t.Errorf("outcome %s (%s)", r.Outcome, r.Detail)
		}
	}
	is.Equal(len(pending), 3)
	is.Equal(len(e.psp.Refunds()), 3)
}

// The PSP's refunds live in its database state as well: another PSP on
// the database answers for them, and the refundable amount is shared.
func TestRefundsInSQLState(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	sqldb, err := sql.Open("sqlite", "file:"+t.TempDir()+"/psp.db?_pragma=busy_timeout(5000)&_txlock=immediate")
	is.NoErr(err)
	sqldb.SetMaxOpenConns(1)
	db := bun.NewDB(sqldb, sqlitedialect.New())
	t.Cleanup(func() { _ = db.Close() })
	is.NoErr(sandboxsql.Migrate(ctx, db))
	is.NoErr(sandboxsql.Migrate(ctx, db)) // again: nothing to do

	a := newRefundEnvOn(t, db)
	tmpl := a.paid(t, "pay_1", "TNG", 5000)
	is.Equal(a.prov.CreateRefund(ctx, refund(tmpl, "re_1", 4000)).Outcome, paykit.OutcomePending)
	is.Equal(a.prov.CreateRefund(ctx, refund(tmpl, "re_t", 912)).Outcome, paykit.OutcomeUnknown)

	b := newRefundEnvOn(t, db)
	b.clock.Advance(delay)
	is.Equal(b.prov.InquireRefund(ctx, paykit.AttemptRef{Key: "re_1"}).Outcome, paykit.OutcomeSucceeded)
	is.Equal(b.prov.InquireRefund(ctx, paykit.AttemptRef{Key: "re_t"}).Outcome, paykit.OutcomeSucceeded)
	r := b.prov.CreateRefund(ctx, refund(tmpl, "re_2", 89))
	is.Equal(r.FailureCode, paykit.RefundProviderError) // 5000 - 4000 - 912 = 88 left
	is.Equal(b.prov.CreateRefund(ctx, refund(tmpl, "re_2b", 88)).Outcome, paykit.OutcomePending)
	is.Equal(len(b.psp.Refunds()), 3)
	n, err := b.psp.SendCallbacks(ctx)
	is.NoErr(err)
	is.True(n >= 2)
}

// The PSP's refund endpoints, raw: the answer names the refund and never
// a second one under a key; GET of an unknown key is the PSP's 404.
func TestRefundAPI(t *testing.T) {
	is := is.New(t)
	e := newRefundEnv(t)
	e.paid(t, "pay_1", "TNG", 5000)
	srv := httptest.NewServer(e.psp)
	t.Cleanup(srv.Close)
	do := func(method, path, key, body string) (int, string) {
		req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		is.NoErr(err)
		req.Header.Set("Authorization", "Bearer "+testAPIKey)
		if key != "" {
			req.Header.Set("Idempotency-Key", key)
		}
		resp, err := http.DefaultClient.Do(req)
		is.NoErr(err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	body := `{"payment_key":"pay_1","amount_minor":1500,"ccy":"MYR"}`
	st, first := do("POST", "/api/refunds", "re_raw", body)
	is.Equal(st, http.StatusCreated)
	is.True(strings.Contains(first, `"state":"PROCESSING"`))
	st, again := do("POST", "/api/refunds", "re_raw", body)
	is.Equal(st, http.StatusOK)
	is.Equal(strings.SplitN(again, ",", 2)[0], strings.SplitN(first, ",", 2)[0]) // the same id
	st, _ = do("POST", "/api/refunds", "", body)
	is.Equal(st, http.StatusBadRequest) // no key
	st, got := do("GET", "/api/refunds/re_raw", "", "")
	is.Equal(st, http.StatusOK)
	is.True(strings.Contains(got, `"amount_minor":1500`))
	st, got = do("GET", "/api/refunds/re_none", "", "")
	is.Equal(st, http.StatusNotFound)
	is.True(strings.Contains(got, "ERR_NOT_FOUND"))
	st, _ = do("POST", "/api/refunds", "re_neg", `{"payment_key":"pay_1","amount_minor":-1,"ccy":"MYR"}`)
	is.Equal(st, http.StatusBadRequest)
	is.Equal(e.psp.CreateCalls("re_raw"), 2)
	is.Equal(len(e.psp.Refunds()), 1)
}
