package sandbox_test

import (
	"context"
	"fmt"
	"io"
	"math"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"
	"github.com/uptrace/bun"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/paykittest"
	"github.com/paykit/paykit/provider/sandbox"
	"github.com/paykit/paykit/provider/sandbox/sandboxsql"
	"github.com/paykit/paykit/store/sqlstore"
)

// stateBackend opens a fresh state for a PSP: the zero stateDB for
// memory, else a migrated database.
type stateBackend struct {
	name string
	open func(t *testing.T) stateDB
}

// stateDB is where a PSP keeps its state: sandboxsql.New's db and inTx.
type stateDB struct {
	db   *bun.DB
	inTx sandboxsql.TxRunner
}

// state is the PSPConfig.State on db: nil (memory) for the zero stateDB.
func (db stateDB) state(t *testing.T) sandbox.State {
	t.Helper()
	if db.db == nil {
		return nil
	}
	st, err := sandboxsql.New(db.db, db.inTx)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

var stateBackends = []stateBackend{
	{"memory", func(*testing.T) stateDB { return stateDB{} }},
	{"sqlite", func(t *testing.T) stateDB { return openStateDB(t, paykittest.SQLiteDSN(t)) }},
	{"postgres", func(t *testing.T) stateDB { return openStateDB(t, paykittest.PostgresDSN(t)) }},
	// A host's own SQLite database, given as a DB alone.
	{"sqlite db only", func(t *testing.T) stateDB { return stateDB{db: openStateDB(t, paykittest.SQLiteDSN(t)).db} }},
}

// sqlBackends are the backends whose state outlives a PSP.
var sqlBackends = stateBackends[1:]

// openStateDB opens dsn as the example server does (through sqlstore,
// whose RunInTx runs the PSP's transactions) and migrates the sandbox
// tables, twice: Migrate runs at every start.
func openStateDB(t *testing.T, dsn string) stateDB {
	t.Helper()
	ctx := context.Background()
	s, err := sqlstore.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	for range 2 {
		if err := sandboxsql.Migrate(ctx, s.DB()); err != nil {
			t.Fatal(err)
		}
	}
	return stateDB{db: s.DB(), inTx: s.RunInTx}
}

// callbackSink receives a PSP's callbacks and verifies them with the
// adapter of that PSP.
type callbackSink struct {
	srv  *httptest.Server
	mu   sync.Mutex
	prov *sandbox.Provider
	got  []paykit.CallbackEvent
}

func newCallbackSink(t *testing.T) *callbackSink {
	t.Helper()
	c := &callbackSink{}
	c.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.mu.Lock()
		defer c.mu.Unlock()
		evs, err := c.prov.ParseCallback(r.Context(), r)
		if err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		c.got = append(c.got, evs...)
	}))
	t.Cleanup(c.srv.Close)
	return c
}

// verifyWith makes the sink verify callbacks with prov, and forgets what
// it received.
func (c *callbackSink) verifyWith(prov *sandbox.Provider) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.prov, c.got = prov, nil
}

// received returns "kind key outcome" of each callback received.
func (c *callbackSink) received() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, e := range c.got {
		out = append(out, e.Kind+" "+e.Key+" "+string(e.Result.Outcome))
	}
	return out
}

// pspScenarios are what the PSP does, whichever state it keeps. Each runs
// on a fresh PSP whose callbacks go to sink.
var pspScenarios = []struct {
	name string
	run  func(t *testing.T, e *env, sink *callbackSink)
}{
	{"a NUL or invalid UTF-8 in a page's id names no payment", func(t *testing.T, e *env, _ *callbackSink) {
		is := is.New(t)
		for _, id := range []string{"%00", "pi%00x", "%ff"} {
			resp, err := http.Get(e.srv.URL + "/pay/" + id)
			is.NoErr(err)
			resp.Body.Close()
			is.Equal(resp.StatusCode, http.StatusNotFound)
			resp, err = http.Post(e.srv.URL+"/pay/"+id+"/approve", "application/x-www-form-urlencoded", nil)
			is.NoErr(err)
			resp.Body.Close()
			is.Equal(resp.StatusCode, http.StatusNotFound)
		}
	}},
	{"payment waits for the payer, who approves or declines", func(t *testing.T, e *env, _ *callbackSink) {
		is := is.New(t)
		ctx := context.Background()
		r := e.prov.CreatePayment(ctx, e.payment("pi_a", "TNG", "MY", 15000))
		is.Equal(r.Outcome, paykit.OutcomeRequiresAction)
		again := e.prov.InquirePayment(ctx, paykit.AttemptRef{Key: "pi_a"})
		is.Equal(again.Reference, r.Reference)
		is.Equal(*again.Action, *r.Action)
		is.NoErr(e.prov.Approve(ctx, "pi_a"))
		is.Equal(e.prov.InquirePayment(ctx, paykit.AttemptRef{Key: "pi_a"}).Outcome, paykit.OutcomeSucceeded)
		is.True(e.prov.Decline(ctx, "pi_a") != nil) // the payer already chose

		e.prov.CreatePayment(ctx, e.payment("pi_d", "TNG", "MY", 15000))
		is.NoErr(e.prov.Decline(ctx, "pi_d"))
		is.Equal(e.prov.InquirePayment(ctx, paykit.AttemptRef{Key: "pi_d"}).FailureCode, paykit.FailureProviderDeclined)
		is.Equal(e.psp.PaymentCount(), 2)
	}},
	{"payer page shows the attempt and takes the choice", func(t *testing.T, e *env, _ *callbackSink) {
		is := is.New(t)
		ctx := context.Background()
		r := e.prov.CreatePayment(ctx, e.payment("pi_page", "WECHAT_PAY", "MY", 8800))
		resp, body := getPage(t, r.Action.URL)
		is.Equal(resp.StatusCode, 200)
		is.True(strings.Contains(body, "MYR 88.00"))
		resp = postForm(t, r.Action.URL+"/approve", nil)
		is.Equal(resp.StatusCode, http.StatusSeeOther)
		is.Equal(resp.Header.Get("Location"), "https://shop.example/return?order=1")
		is.Equal(e.prov.InquirePayment(ctx, paykit.AttemptRef{Key: "pi_page"}).Outcome, paykit.OutcomeSucceeded)
		_, body = getPage(t, r.Action.URL)
		is.True(strings.Contains(body, "Payment successful"))
		resp, _ = getPage(t, e.base+"/pay/pay_nosuch")
		is.Equal(resp.StatusCode, 404)
	}},
	{"magic amounts decline, or time out and settle", func(t *testing.T, e *env, _ *callbackSink) {
		is := is.New(t)
		ctx := context.Background()
		is.Equal(e.prov.CreatePayment(ctx, e.payment("pi_901", "TNG", "MY", 1901)).Outcome, paykit.OutcomeFailed)
		is.Equal(e.prov.CreatePayment(ctx, e.payment("pi_902", "CARD", "TH", 902)).Outcome, paykit.OutcomeUnknown)
		is.Equal(e.prov.CreatePayment(ctx, e.payment("pi_903", "CARD", "TH", 3903)).Outcome, paykit.OutcomeUnknown)
		is.Equal(e.prov.InquirePayment(ctx, paykit.AttemptRef{Key: "pi_902"}).Outcome, paykit.OutcomePending)
		is.Equal(e.prov.CreatePayment(ctx, e.payment("pi_902", "CARD", "TH", 902)).Outcome, paykit.OutcomePending)
		e.clock.Advance(testDelay)
		is.Equal(e.prov.InquirePayment(ctx, paykit.AttemptRef{Key: "pi_902"}).Outcome, paykit.OutcomeSucceeded)
		is.Equal(e.prov.InquirePayment(ctx, paykit.AttemptRef{Key: "pi_903"}).FailureCode, paykit.FailureProviderDeclined)
		is.Equal(e.psp.CreateCalls("pi_902"), 2)
		is.Equal(e.psp.PaymentCount(), 3)
	}},
	{"creates are idempotent per key", func(t *testing.T, e *env, _ *callbackSink) {
		is := is.New(t)
		ctx := context.Background()
		req := e.payment("pi_i", "BOOST", "MY", 4200)
		first := e.prov.CreatePayment(ctx, req)
		is.Equal(e.prov.CreatePayment(ctx, req).Reference, first.Reference)
		req.Amount++
		is.True(strings.Contains(e.prov.CreatePayment(ctx, req).Detail, "http 409 ERR_IDEMPOTENCY"))
		po := payout("po_i", "123456789012")
		is.Equal(e.prov.CreatePayout(ctx, po).Reference, e.prov.CreatePayout(ctx, po).Reference)
		po.Amount++
		is.True(strings.Contains(e.prov.CreatePayout(ctx, po).Detail, "http 409 ERR_IDEMPOTENCY"))
		is.Equal(e.psp.CreateCalls("pi_i"), 3)
		is.Equal(e.psp.CreateCalls("po_i"), 3)
		is.Equal(e.psp.PaymentCount(), 1)
		is.Equal(len(e.psp.Transfers()), 1)
	}},
	{"QR and transfer instructions stay the same", func(t *testing.T, e *env, _ *callbackSink) {
		is := is.New(t)
		ctx := context.Background()
		qr := e.prov.CreatePayment(ctx, e.payment("pi_qr", "PROMPTPAY", "TH", 123456))
		is.True(strings.HasPrefix(qr.Action.QRData, "000201"))
		is.Equal(*e.prov.InquirePayment(ctx, paykit.AttemptRef{Key: "pi_qr"}).Action, *qr.Action)
		va := e.prov.CreatePayment(ctx, e.payment("pi_va", "BANK_TRANSFER", "MY", 99000))
		is.Equal(va.Action.Type, paykit.NextActionBankTransferInstructions)
		is.Equal(*e.prov.InquirePayment(ctx, paykit.AttemptRef{Key: "pi_va"}).Action, *va.Action)
	}},
	{"unpaid attempt expires, cancel stops a waiting one", func(t *testing.T, e *env, _ *callbackSink) {
		is := is.New(t)
		ctx := context.Background()
		req := e.payment("pi_exp", "ALIPAY", "MY", 1000)
		req.ExpiresAt = e.clock.Now().Add(10 * time.Minute)
		e.prov.CreatePayment(ctx, req)
		e.prov.CreatePayment(ctx, e.payment("pi_c", "EMONEI", "MY", 1000))
		e.prov.CreatePayment(ctx, e.payment("pi_p", "EMONEI", "MY", 902))
		is.Equal(e.prov.CancelPayment(ctx, paykit.AttemptRef{Key: "pi_c"}).Detail, "state=CANCELLED cancel_requested")
		is.Equal(e.prov.CancelPayment(ctx, paykit.AttemptRef{Key: "pi_p"}).Detail, "state=PENDING cancel_requested")
		e.clock.Advance(10*time.Minute - time.Millisecond)
		is.Equal(e.prov.InquirePayment(ctx, paykit.AttemptRef{Key: "pi_exp"}).Outcome, paykit.OutcomeRequiresAction)
		e.clock.Advance(time.Millisecond)
		is.Equal(e.prov.InquirePayment(ctx, paykit.AttemptRef{Key: "pi_exp"}).Detail, "state=EXPIRED")
		is.True(e.prov.Approve(ctx, "pi_exp") != nil)
		is.Equal(e.prov.InquirePayment(ctx, paykit.AttemptRef{Key: "pi_p"}).Outcome, paykit.OutcomeSucceeded)
		is.Equal(e.prov.CancelPayment(ctx, paykit.AttemptRef{Key: "pi_none"}).Outcome, paykit.OutcomeNotFound)
	}},
	{"payout magic accounts", func(t *testing.T, e *env, _ *callbackSink) {
		is := is.New(t)
		ctx := context.Background()
		is.Equal(e.prov.CreatePayout(ctx, payout("po_ok", "123456789012")).Outcome, paykit.OutcomePending)
		is.Equal(e.prov.CreatePayout(ctx, payout("po_bad", "000111111116")).FailureCode, paykit.FailureAccountInvalid)
		is.Equal(e.prov.CreatePayout(ctx, payout("po_hold", "000222222227")).Outcome, paykit.OutcomeUnknown)
		is.Equal(e.prov.CreatePayout(ctx, payout("po_drop", "000333333335")).Outcome, paykit.OutcomeUnacknowledged)
		is.Equal(e.prov.CreatePayout(ctx, payout("po_drop", "000333333335")).Outcome, paykit.OutcomePending)
		is.Equal(e.prov.CreatePayout(ctx, payout("po_slow", "000444444440")).Outcome, paykit.OutcomePending)
		e.clock.Advance(testDelay)
		for key, want := range map[string]paykit.Outcome{
			"po_ok": paykit.OutcomeSucceeded, "po_bad": paykit.OutcomeFailed, "po_hold": paykit.OutcomeSucceeded,
			"po_drop": paykit.OutcomeSucceeded, "po_slow": paykit.OutcomePending,
		} {
			is.Equal(e.prov.InquirePayout(ctx, paykit.AttemptRef{Key: key}).Outcome, want)
		}
		e.clock.Advance(time.Minute)
		is.Equal(e.prov.InquirePayout(ctx, paykit.AttemptRef{Key: "po_slow"}).Outcome, paykit.OutcomeSucceeded)
		var keys []string
		for _, tr := range e.psp.Transfers() {
			keys = append(keys, tr.Key)
			is.Equal(tr.AccountLast4, map[string]string{"po_ok": "9012", "po_bad": "1116", "po_hold": "2227", "po_drop": "3335", "po_slow": "4440"}[tr.Key])
		}
		is.Equal(keys, []string{"po_ok", "po_bad", "po_hold", "po_drop", "po_slow"}) // creation order
	}},
	{"payout cancel and return", func(t *testing.T, e *env, _ *callbackSink) {
		is := is.New(t)
		ctx := context.Background()
		e.prov.CreatePayout(ctx, payout("po_slow", "000444444440"))
		e.prov.CreatePayout(ctx, payout("po_r", "123456789012"))
		is.Equal(e.prov.CancelPayout(ctx, paykit.AttemptRef{Key: "po_slow"}).Detail, "state=PROCESSING cancel_requested")
		is.True(e.psp.Transfers()[0].CancelRequested)
		is.True(e.prov.ReturnPayout(ctx, "po_r") != nil) // still in flight
		e.clock.Advance(testDelay)
		is.Equal(e.prov.InquirePayout(ctx, paykit.AttemptRef{Key: "po_slow"}).Outcome, paykit.OutcomeCancelled)
		is.NoErr(e.prov.ReturnPayout(ctx, "po_r"))
		is.Equal(e.prov.InquirePayout(ctx, paykit.AttemptRef{Key: "po_r"}).Outcome, paykit.OutcomeReturned)
		is.Equal(e.prov.CancelPayout(ctx, paykit.AttemptRef{Key: "po_none"}).Outcome, paykit.OutcomeNotFound)
	}},
	{"faults break requests before or after the record", func(t *testing.T, e *env, _ *callbackSink) {
		is := is.New(t)
		ctx := context.Background()
		e.psp.InjectFault(sandbox.Fault{Op: sandbox.OpCreatePayment, Kind: sandbox.FaultStatus500})
		is.Equal(e.prov.CreatePayment(ctx, e.payment("pi_f", "TNG", "MY", 1000)).Outcome, paykit.OutcomeUnacknowledged)
		is.Equal(e.prov.InquirePayment(ctx, paykit.AttemptRef{Key: "pi_f"}).Outcome, paykit.OutcomeNotFound)
		e.psp.InjectFault(sandbox.Fault{Op: sandbox.OpCreatePayout, Kind: sandbox.FaultReset, AfterRecord: true})
		is.Equal(e.prov.CreatePayout(ctx, payout("po_f", "123456789012")).Outcome, paykit.OutcomeUnacknowledged)
		is.Equal(e.prov.InquirePayout(ctx, paykit.AttemptRef{Key: "po_f"}).Outcome, paykit.OutcomePending)
	}},
	{"callbacks tell each final state until acknowledged", func(t *testing.T, e *env, sink *callbackSink) {
		is := is.New(t)
		ctx := context.Background()
		e.prov.CreatePayout(ctx, payout("po_cb", "123456789012"))
		e.prov.CreatePayment(ctx, e.payment("pi_cb", "TNG", "MY", 1000))
		n, err := e.psp.SendCallbacks(ctx)
		is.NoErr(err)
		is.Equal(n, 0) // nothing final yet
		is.NoErr(e.prov.Approve(ctx, "pi_cb"))
		e.clock.Advance(testDelay)
		n, err = e.psp.SendCallbacks(ctx)
		is.NoErr(err)
		is.Equal(n, 2)
		is.Equal(sink.received(), []string{"payment pi_cb succeeded", "payout po_cb succeeded"}) // oldest first
		n, _ = e.psp.SendCallbacks(ctx)
		is.Equal(n, 0) // acknowledged: not again
		is.NoErr(e.prov.ReturnPayout(ctx, "po_cb"))
		n, _ = e.psp.SendCallbacks(ctx)
		is.Equal(n, 1)
		is.Equal(sink.received()[2], "payout po_cb returned")
	}},
	{"fees, a settlement batch and a dispute decided on its own", func(t *testing.T, e *env, sink *callbackSink) {
		is := is.New(t)
		ctx := context.Background()
		req := e.payment("pi_fee", "CARD", "TH", 10000)
		req.Merchant = "mch_fee"
		e.prov.CreatePayment(ctx, req)
		is.NoErr(e.prov.Approve(ctx, "pi_fee"))
		paid := e.prov.InquirePayment(ctx, paykit.AttemptRef{Key: "pi_fee"})
		is.Equal(paid.Fee, int64(390)) // 2.9 % and 100 for a card
		d, err := e.prov.OpenDispute(ctx, paykit.DisputeOpening{PaymentKey: "pi_fee", Amount: 4000})
		is.NoErr(err)
		_, err = e.prov.SubmitDisputeEvidence(ctx, d.Reference, "winning_evidence")
		is.NoErr(err)
		batches, err := e.prov.SettleNow(ctx, "mch_fee")
		is.NoErr(err)
		is.Equal(len(batches), 1)
		is.Equal(batches[0].Lines, []paykit.SettlementLine{
			{Type: "payment", Reference: paid.Reference, Key: "pi_fee", Amount: 10000, Fee: 390, Currency: "THB"},
			{Type: "dispute", Reference: d.Reference, Amount: -4000, Fee: 1500, Currency: "THB"},
		})
		e.clock.Advance(testDelay)
		_, err = e.psp.SendCallbacks(ctx)
		is.NoErr(err)
		is.Equal(sink.received()[len(sink.received())-1], "dispute  ") // no key or result: the dispute says it
		sink.mu.Lock()
		won := sink.got[len(sink.got)-1].Dispute
		sink.mu.Unlock()
		is.Equal(won.Status, paykit.DisputeWon)
		is.Equal(won.Reference, d.Reference)
		is.Equal(e.psp.SettlementBatches()[0].ID, batches[0].Reference)
	}},
	{"a won dispute's amount can be refunded again, a lost one's cannot", func(t *testing.T, e *env, _ *callbackSink) {
		is := is.New(t)
		ctx := context.Background()
		for _, key := range []string{"pi_won", "pi_lost"} {
			e.prov.CreatePayment(ctx, e.payment(key, "TNG", "MY", 10000))
			is.NoErr(e.prov.Approve(ctx, key))
		}
		refund := func(key, payment string, amount int64) paykit.Outcome {
			return e.prov.CreateRefund(ctx, paykit.RefundRequest{Key: key, PaymentKey: payment, Amount: amount, Currency: "MYR"}).Outcome
		}
		won, err := e.prov.OpenDispute(ctx, paykit.DisputeOpening{PaymentKey: "pi_won", Amount: 4000})
		is.NoErr(err)
		_, err = e.prov.SubmitDisputeEvidence(ctx, won.Reference, "winning_evidence")
		is.NoErr(err)
		lost, err := e.prov.OpenDispute(ctx, paykit.DisputeOpening{PaymentKey: "pi_lost", Amount: 4000})
		is.NoErr(err)
		_, err = e.prov.AcceptDispute(ctx, lost.Reference)
		is.NoErr(err)
		is.Equal(refund("re_review", "pi_won", 6001), paykit.OutcomeFailed) // under review: still the dispute's
		e.clock.Advance(testDelay)                                          // won
		is.Equal(refund("re_won", "pi_won", 10000), paykit.OutcomePending)
		_, err = e.prov.OpenDispute(ctx, paykit.DisputeOpening{PaymentKey: "pi_won", Amount: 1})
		is.True(err != nil) // all of it refunded
		is.Equal(refund("re_lost", "pi_lost", 6001), paykit.OutcomeFailed)
		is.Equal(refund("re_lost_rest", "pi_lost", 6000), paykit.OutcomePending)
	}},
	{"a batch states its totals, which a test hook corrupts", func(t *testing.T, e *env, _ *callbackSink) {
		is := is.New(t)
		ctx := context.Background()
		settle := func(merchant string, amounts ...int64) paykit.SettlementBatch {
			t.Helper()
			for i, amount := range amounts {
				key := fmt.Sprintf("pi_%s_%d", merchant, i)
				req := e.payment(key, "TNG", "MY", amount)
				req.Merchant = merchant
				e.prov.CreatePayment(ctx, req)
				is.NoErr(e.prov.Approve(ctx, key))
			}
			is.Equal(e.prov.CreateRefund(ctx, paykit.RefundRequest{Key: "re_" + merchant, PaymentKey: "pi_" + merchant + "_0", Amount: 500, Currency: "MYR"}).Outcome, paykit.OutcomePending)
			e.clock.Advance(testDelay) // the refund succeeds
			batches, err := e.prov.SettleNow(ctx, merchant)
			is.NoErr(err)
			is.Equal(len(batches), 1)
			return batches[0]
		}
		b := settle("mch_a", 10000, 2000)
		// 10000 and 2000 less a 500 refund; fees 290 and 58.
		is.Equal([]int64{b.Gross, b.Fee, b.Net}, []int64{11500, 348, 11152})
		gross, fee, net := b.Totals()
		is.Equal([]int64{gross, fee, net}, []int64{b.Gross, b.Fee, b.Net})
		listed, err := e.prov.SettlementBatches(ctx, "", 10)
		is.NoErr(err)
		is.Equal(listed, []paykit.SettlementBatch{b})

		e.psp.CorruptBatchTotal(b.Reference)
		e.psp.CorruptBatchTotal("") // the next batch closed
		c := settle("mch_b", 3000)
		is.Equal(c.Net, int64(3000-87-500)+1) // stated one above its lines
		d := settle("mch_c", 3000)
		is.Equal(d.Net, int64(3000-87-500)) // only one batch was next
		listed, err = e.prov.SettlementBatches(ctx, "", 10)
		is.NoErr(err)
		is.Equal(len(listed), 3)
		is.Equal([]int64{listed[0].Net, listed[1].Net, listed[2].Net}, []int64{b.Net + 1, c.Net, d.Net})
		for i, sb := range e.psp.SettlementBatches() { // as stored: true
			is.Equal(sb.NetMinor, []int64{b.Net, c.Net - 1, d.Net}[i])
		}
	}},
	{"amounts near the int64 limit: exact fees, totals that never overflow", func(t *testing.T, e *env, _ *callbackSink) {
		is := is.New(t)
		ctx := context.Background()
		amounts := []int64{1<<62 + 7, 1<<62 + 7, 1<<62 + 7, math.MaxInt64}
		var lines int
		for i, amount := range amounts {
			key := fmt.Sprintf("pi_big_%d", i)
			req := e.payment(key, "CARD", "TH", amount)
			req.Merchant = "mch_big"
			e.prov.CreatePayment(ctx, req)
			is.NoErr(e.prov.Approve(ctx, key))
			// (amount × 29 + 500) / 1000 + 100, in exact arithmetic.
			exact := new(big.Int).Mul(big.NewInt(amount), big.NewInt(29))
			exact.Add(exact, big.NewInt(500)).Quo(exact, big.NewInt(1000)).Add(exact, big.NewInt(100))
			is.Equal(e.prov.InquirePayment(ctx, paykit.AttemptRef{Key: key}).Fee, exact.Int64())
		}
		batches, err := e.prov.SettleNow(ctx, "mch_big")
		is.NoErr(err)
		is.True(len(batches) >= 3) // no two of these amounts fit one total
		for _, b := range batches {
			gross, fee, net := b.Totals()
			is.Equal([]int64{gross, fee, net}, []int64{b.Gross, b.Fee, b.Net})
			is.True(b.Gross > 0 && b.Net > 0)
			lines += len(b.Lines)
		}
		is.Equal(lines, len(amounts))
	}},
}

// TestPSPOnEveryState runs the PSP's scenarios on each state it can keep.
func TestPSPOnEveryState(t *testing.T) {
	for _, b := range stateBackends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			for _, sc := range pspScenarios {
				t.Run(sc.name, func(t *testing.T) {
					sink := newCallbackSink(t)
					e := newEnvOn(t, b.open(t), newClock(), testAPIKey, sink.srv.URL)
					sink.verifyWith(e.prov)
					sc.run(t, e, sink)
				})
			}
		})
	}
}

// TestPSPStateSurvivesRestart stops a PSP with a payout in flight, a
// payment waiting for its payer, an acknowledged callback and an owed one;
// a new PSP on the same database, with an API key of its own, answers for
// them, settles them, and sends only the callbacks still owed, signed
// with its key.
func TestPSPStateSurvivesRestart(t *testing.T) {
	for _, b := range sqlBackends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			ctx := context.Background()
			db := b.open(t)
			clock := newClock()
			sink := newCallbackSink(t)
			old := newEnvOn(t, db, clock, "key-of-the-first-process", sink.srv.URL)
			sink.verifyWith(old.prov)

			old.prov.CreatePayout(ctx, payout("po_told", "123456789012"))
			clock.Advance(testDelay)
			n, err := old.psp.SendCallbacks(ctx)
			is.NoErr(err)
			is.Equal(n, 1) // po_told succeeded, acknowledged
			inFlight := old.prov.CreatePayout(ctx, payout("po_flight", "123456789012"))
			is.Equal(inFlight.Outcome, paykit.OutcomePending)
			waiting := old.prov.CreatePayment(ctx, e2ePayment(old, "pi_wait"))
			is.Equal(waiting.Outcome, paykit.OutcomeRequiresAction)
			old.prov.CreatePayment(ctx, e2ePayment(old, "pi_owed"))
			is.NoErr(old.prov.Approve(ctx, "pi_owed")) // final, callback not yet sent
			old.srv.Close()                            // the process ends

			e := newEnvOn(t, db, clock, "key-of-the-second-process", sink.srv.URL)
			sink.verifyWith(e.prov)
			r := e.prov.InquirePayout(ctx, paykit.AttemptRef{Key: "po_flight"})
			is.Equal(r.Outcome, paykit.OutcomePending)
			is.Equal(r.Reference, inFlight.Reference)
			p := e.prov.InquirePayment(ctx, paykit.AttemptRef{Key: "pi_wait"})
			is.Equal(p.Outcome, paykit.OutcomeRequiresAction)
			is.Equal(p.Reference, waiting.Reference)
			is.Equal(p.Action.URL, e.base+"/pay/"+waiting.Reference) // the payer page of the running PSP
			resp, body := getPage(t, p.Action.URL)
			is.Equal(resp.StatusCode, 200)
			is.True(strings.Contains(body, ">Approve<"))
			is.Equal(e.psp.CreateCalls("po_flight"), 1)
			is.Equal(len(e.psp.Transfers()), 2)
			is.Equal(e.psp.PaymentCount(), 2)

			clock.Advance(testDelay)
			is.Equal(e.prov.InquirePayout(ctx, paykit.AttemptRef{Key: "po_flight"}).Outcome, paykit.OutcomeSucceeded)
			clock.Advance(time.Second)
			resp = postForm(t, p.Action.URL+"/approve", nil)
			is.Equal(resp.StatusCode, http.StatusSeeOther)
			is.Equal(e.prov.InquirePayment(ctx, paykit.AttemptRef{Key: "pi_wait"}).Outcome, paykit.OutcomeSucceeded)
			n, err = e.psp.SendCallbacks(ctx)
			is.NoErr(err)
			is.Equal(n, 3)
			is.Equal(sink.received(), []string{"payment pi_owed succeeded", "payout po_flight succeeded", "payment pi_wait succeeded"})
		})
	}
}

// e2ePayment is a TNG payment request without an expiry of its own.
func e2ePayment(e *env, key string) paykit.PaymentRequest {
	req := e.payment(key, "TNG", "MY", 2000)
	req.ExpiresAt = time.Time{}
	return req
}

// TestPSPsOnOneDatabaseCreateOnce sends the same creates to two PSPs on one
// database at once: one payment and one transfer come of them, and every
// answer names it.
func TestPSPsOnOneDatabaseCreateOnce(t *testing.T) {
	for _, b := range sqlBackends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			ctx := context.Background()
			db := b.open(t)
			clock := newClock()
			envs := []*env{newEnvOn(t, db, clock, "key-a", ""), newEnvOn(t, db, clock, "key-b", "")}
			for i, e := range envs { // room for the writers to queue: this is about what is recorded
				e.prov = sandbox.New(sandbox.Config{BaseURL: e.base, APIKey: []string{"key-a", "key-b"}[i], Timeout: 10 * time.Second})
			}
			const perPSP = 8
			var mu sync.Mutex
			refs := map[string]map[string]bool{"payment": {}, "payout": {}}
			var wg sync.WaitGroup
			for i := range 2 * perPSP {
				e := envs[i%2]
				wg.Go(func() {
					pay := e.prov.CreatePayment(ctx, e.payment("pi_race", "TNG", "MY", 5000))
					po := e.prov.CreatePayout(ctx, payout("po_race", "123456789012"))
					mu.Lock()
					defer mu.Unlock()
					refs["payment"][string(pay.Outcome)+" "+pay.Reference] = true
					refs["payout"][string(po.Outcome)+" "+po.Reference] = true
				})
			}
			wg.Wait()
			is.Equal(len(refs["payment"]), 1) // one attempt, the same answer everywhere
			is.Equal(len(refs["payout"]), 1)
			for _, e := range envs {
				is.Equal(e.psp.PaymentCount(), 1)
				is.Equal(len(e.psp.Transfers()), 1)
				is.Equal(e.psp.CreateCalls("pi_race"), 2*perPSP)
				is.Equal(e.psp.CreateCalls("po_race"), 2*perPSP)
			}
			for k := range refs["payment"] {
				is.True(strings.HasPrefix(k, "requires_action pay_"))
			}
			for k := range refs["payout"] {
				is.True(strings.HasPrefix(k, "pending trf_"))
			}
		})
	}
}

// TestSQLStateKeepsNoAccountNumber reads the sandbox tables raw: of an
// account number they hold the last four digits only, and nothing of the
// payer's details.
func TestSQLStateKeepsNoAccountNumber(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	db := sqlBackends[0].open(t)
	e := newEnvOn(t, db, newClock(), testAPIKey, "")
	e.prov.CreatePayout(ctx, payout("po_secret", "987654321012"))
	e.prov.CreatePayment(ctx, e.payment("pi_secret", "FPX", "MY", 1000))
	var dump strings.Builder
	for _, table := range []string{"sandbox_transfers", "sandbox_payments", "sandbox_create_calls"} {
		rows, err := db.db.QueryContext(ctx, "SELECT * FROM "+table)
		is.NoErr(err)
		cols, err := rows.Columns()
		is.NoErr(err)
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			is.NoErr(rows.Scan(ptrs...))
			for _, v := range vals {
				_, _ = io.WriteString(&dump, strings.TrimSpace(toString(v))+"\n")
			}
		}
		is.NoErr(rows.Close())
	}
	is.True(strings.Contains(dump.String(), `"account_last4":"1012"`))
	for _, secret := range []string{"98765432", "Somchai", "aisyah@example.com", "+60123456789"} {
		if strings.Contains(dump.String(), secret) {
			t.Errorf("the sandbox tables hold %q", secret)
		}
	}
}

func toString(v any) string {
	switch v := v.(type) {
	case []byte:
		return string(v)
	case string:
		return v
	}
	return ""
}
