package opn_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/provider/opn"
	"github.com/paykit/paykit/provider/opn/opnfake"
)

// settleStart is where the settlement tests' clock starts: 08:00 UTC.
var settleStart = time.Date(2026, 6, 1, 8, 0, 0, 0, time.UTC)

// settling serves a fake on a manual clock and returns it with an
// adapter on the same clock.
func settling(t *testing.T, opts opnfake.Options) (*opnfake.Fake, *opn.Provider, *paykit.ManualClock) {
	t.Helper()
	clock := paykit.NewManualClock(settleStart)
	opts.SecretKey, opts.Now = testSecret, clock.Now
	f := opnfake.New(opts)
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	p, err := opn.New(opn.Config{SecretKey: testSecret, BaseURL: srv.URL, WebhookSecrets: []string{f.WebhookSecret()}, Timeout: 5 * time.Second, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	return f, p, clock
}

func batchesOf(t *testing.T, p *opn.Provider, after string, limit int) []paykit.SettlementBatch {
	t.Helper()
	b, err := p.SettlementBatches(context.Background(), after, limit)
	if err != nil {
		t.Fatalf("settlement batches after %q: %v", after, err)
	}
	return b
}

func batchRefs(bs []paykit.SettlementBatch) []string {
	out := []string{}
	for _, b := range bs {
		out = append(out, b.Reference)
	}
	return out
}

// A batch is a day of transactions becoming transferable, reported an
// hour after it closed at midnight UTC: a refund, a dispute and its
// reversal the day they happen, payments the day their funds become
// transferable (three days on in the fake), each with the fee its charge
// states; transfers are no lines. The batch's net is what its
// transactions moved, which the lines add up to.
func TestSettlementDaysOfTransactions(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	f, p, clock := settling(t, opnfake.Options{})
	a := paidCharge(t, f, p, "stl_a", 10000)
	b := paidCharge(t, f, p, "stl_b", 20000)
	rf := p.CreateRefund(ctx, paykit.RefundRequest{Key: "stl_a_rf", PaymentKey: "stl_a", PaymentRef: a.Reference, Amount: 3000, Currency: "THB"})
	is.Equal(rf.Outcome, paykit.OutcomeSucceeded)
	dp, err := f.OpenDispute("stl_b", 5000, "")
	is.NoErr(err)
	won, err := p.SubmitDisputeEvidence(ctx, dp, "winning_evidence")
	is.NoErr(err)
	is.Equal(won.Status, paykit.DisputeWon)
	po := p.CreatePayout(ctx, payout("stl_po", "1234567890"))
	is.Equal(po.Outcome, paykit.OutcomePending)
	is.NoErr(f.PayTransfer("stl_po"))

	clock.Set(time.Date(2026, 6, 2, 0, 30, 0, 0, time.UTC))
	is.Equal(len(batchesOf(t, p, "", 10)), 0) // closed half an hour ago: not yet
	clock.Set(time.Date(2026, 6, 2, 1, 0, 0, 0, time.UTC))
	june2 := batchesOf(t, p, "", 10)
	is.Equal(batchRefs(june2), []string{"opn_2026-06-02T00:00:00Z_THB"})
	is.Equal(june2[0].Lines, []paykit.SettlementLine{
		{Type: "refund", Reference: rf.Reference, Key: "stl_a_rf", Amount: -3000, Currency: "THB"},
		{Type: "dispute", Reference: dp, Amount: -5000, Currency: "THB"},
		{Type: "dispute_reversal", Reference: dp, Amount: 5000, Currency: "THB"},
	})
	is.True(strings.Contains(rf.Reference, "/rfnd_")) // named as the adapter's refunds are
	is.Equal(june2[0].SettledAt, time.Date(2026, 6, 2, 0, 0, 0, 0, time.UTC))
	is.Equal([]int64{june2[0].Gross, june2[0].Fee, june2[0].Net}, []int64{-3000, 0, -3000})

	clock.Set(time.Date(2026, 6, 4, 1, 0, 0, 0, time.UTC))
	all := batchesOf(t, p, "", 10)
	is.Equal(batchRefs(all), []string{"opn_2026-06-02T00:00:00Z_THB", "opn_2026-06-04T00:00:00Z_THB"})
	is.Equal(all[0], june2[0]) // read again: the same
	feeA, _ := f.Fee("stl_a")
	feeB, _ := f.Fee("stl_b")
	is.Equal(feeA, int64(365+26)) // 3.65 % and 7 % VAT on it
	is.Equal(all[1].Lines, []paykit.SettlementLine{
		{Type: "payment", Reference: a.Reference, Key: "stl_a", Amount: 10000, Fee: feeA, Currency: "THB"},
		{Type: "payment", Reference: b.Reference, Key: "stl_b", Amount: 20000, Fee: feeB, Currency: "THB"},
	})
	is.Equal(all[1].Net, 10000-feeA+20000-feeB) // the transactions' credits
	gross, fee, net := all[1].Totals()
	is.Equal([]int64{gross, fee, net}, []int64{all[1].Gross, all[1].Fee, all[1].Net})
	is.Equal(batchRefs(batchesOf(t, p, "opn_2026-06-02T00:00:00Z_THB", 10)), []string{"opn_2026-06-04T00:00:00Z_THB"})
	is.Equal(len(batchesOf(t, p, "opn_2026-06-04T00:00:00Z_THB", 10)), 0)
}

// Config.SettlementPeriod and SettlementDelay set a batch's length and
// how long after its close it is reported: six hours, at once.
func TestSettlementPeriodAndDelay(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	clock := paykit.NewManualClock(settleStart) // 08:00
	f := opnfake.New(opnfake.Options{SecretKey: testSecret, Now: clock.Now, AvailableOn: func(paid time.Time) time.Time { return paid }})
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	p, err := opn.New(opn.Config{SecretKey: testSecret, BaseURL: srv.URL, WebhookSecrets: []string{f.WebhookSecret()}, Timeout: 5 * time.Second,
		Now: clock.Now, SettlementPeriod: 6 * time.Hour, SettlementDelay: -1})
	is.NoErr(err)
	a := paidCharge(t, f, p, "stl_6h_a", 2000)
	clock.Set(time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)) // the 06:00-12:00 period closes
	b := paidCharge(t, f, p, "stl_6h_b", 3000)              // transferable at 12:00: that period's
	c := paidCharge(t, f, p, "stl_6h_c", 4000)
	clock.Set(time.Date(2026, 6, 1, 12, 0, 1, 0, time.UTC))
	got := batchesOf(t, p, "", 10)
	is.Equal(batchRefs(got), []string{"opn_2026-06-01T12:00:00Z_THB"})
	is.Equal(len(got[0].Lines), 3)
	is.Equal([]string{got[0].Lines[0].Reference, got[0].Lines[1].Reference, got[0].Lines[2].Reference}, []string{a.Reference, b.Reference, c.Reference})
	is.Equal(got[0].SettledAt, time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC))
	d := paidCharge(t, f, p, "stl_6h_d", 5000)
	clock.Set(time.Date(2026, 6, 1, 18, 0, 0, 0, time.UTC))
	next := batchesOf(t, p, got[0].Reference, 10)
	is.Equal(batchRefs(next), []string{"opn_2026-06-01T18:00:00Z_THB"})
	is.Equal(next[0].Lines[0].Reference, d.Reference)
}

// More transactions than a page of Opn's list, and more days than asked
// for: every day once, oldest first, every line.
func TestSettlementPagesThroughTransactions(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	f, p, clock := settling(t, opnfake.Options{AvailableOn: func(paid time.Time) time.Time { return paid }})
	for i := range 120 {
		paidCharge(t, f, p, fmt.Sprintf("stl_pg_%d", i), 2000)
	}
	for d := range 4 {
		clock.Advance(24 * time.Hour)
		paidCharge(t, f, p, fmt.Sprintf("stl_pg_day_%d", d), 2000)
	}
	clock.Advance(24 * time.Hour)
	var want []string
	for d := range 5 {
		want = append(want, "opn_"+settleStart.AddDate(0, 0, d+1).Truncate(24*time.Hour).Format(time.RFC3339)+"_THB")
	}
	all := batchesOf(t, p, "", 10)
	is.Equal(batchRefs(all), want)
	is.Equal(len(all[0].Lines), 120) // two pages of transactions
	var walked []paykit.SettlementBatch
	for after := ""; ; {
		b := batchesOf(t, p, after, 1)
		if len(b) == 0 {
			break
		}
		walked = append(walked, b...)
		after = b[0].Reference
	}
	is.Equal(walked, all) // every line, whichever the limit
	is.Equal(batchesOf(t, p, want[1], 2), all[2:4])
}

// opnAnswers serves canned Opn answers: the transactions list and charges
// by id; it records the transactions queries.
type opnAnswers struct {
	mu      sync.Mutex
	queries []string
	txns    string
	charges map[string]string
}

func (a *opnAnswers) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	switch {
	case r.URL.Path == "/transactions":
		a.mu.Lock()
		a.queries = append(a.queries, r.URL.RawQuery)
		a.mu.Unlock()
		fmt.Fprintf(w, `{"object":"list","data":[%s],"limit":100,"offset":0,"total":%d}`, a.txns, strings.Count(a.txns, `"object":"transaction"`))
	case strings.HasPrefix(r.URL.Path, "/charges/") && a.charges[strings.TrimPrefix(r.URL.Path, "/charges/")] != "":
		fmt.Fprint(w, a.charges[strings.TrimPrefix(r.URL.Path, "/charges/")])
	default:
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, `{"object":"error","code":"not_found","message":"not found"}`)
	}
}

func txnJSON(id, direction, origin string, amount int64, at string) string {
	return fmt.Sprintf(`{"object":"transaction","id":%q,"amount":%d,"currency":"THB","direction":%q,"key":"k","origin":%q,"transferable_at":%q,"created_at":%q}`,
		id, amount, direction, origin, at, at)
}

// A transaction paykit has no line for, a charge settled in another
// currency, or a cursor the adapter never gave is an error, never a
// guess; receipts are no lines. After a cursor, transactions are read
// from SettlementHold before its day.
func TestSettlementRefusesWhatItCannotAccountFor(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const at = "2026-06-01T08:00:00Z"
	charge := `{"object":"charge","id":"chrg_1","amount":1000,"currency":"%s","fee":36,"fee_vat":3,"status":"successful","metadata":{"paykit_key":"k1"}}`
	for _, c := range []struct {
		name, txns, ccy, err string
		lines                int
	}{
		{"a receipt is no line", txnJSON("trxn_1", "credit", "chrg_1", 961, at) + "," + txnJSON("trxn_2", "debit", "rcpt_1", 500, at), "THB", "", 1},
		{"a charge's debit", txnJSON("trxn_1", "debit", "chrg_1", 961, at), "THB", "has no settlement line type", 0},
		{"an unknown origin", txnJSON("trxn_1", "credit", "xfer_1", 961, at), "THB", "has no settlement line type", 0},
		{"a charge in another currency", txnJSON("trxn_1", "credit", "chrg_1", 961, at), "USD", "is settled in THB", 0},
		{"an unknown direction", txnJSON("trxn_1", "sideways", "chrg_1", 961, at), "THB", "direction", 0},
		{"no transferable_at: at once", strings.Replace(txnJSON("trxn_1", "credit", "chrg_1", 961, at), `"transferable_at":"`+at+`"`, `"transferable_at":null`, 1), "THB", "", 1},
		{"a created_at that is no time", strings.Replace(txnJSON("trxn_1", "credit", "chrg_1", 961, at), `"created_at":"`+at+`"`, `"created_at":"soon"`, 1), "THB", "created_at", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			srv := httptest.NewServer(&opnAnswers{txns: c.txns, charges: map[string]string{"chrg_1": fmt.Sprintf(charge, c.ccy)}})
			t.Cleanup(srv.Close)
			p, err := opn.New(opn.Config{SecretKey: testSecret, BaseURL: srv.URL, Timeout: 5 * time.Second,
				Now: func() time.Time { return settleStart.Add(48 * time.Hour) }})
			is.NoErr(err)
			got, err := p.SettlementBatches(ctx, "", 10)
			if c.err != "" {
				is.True(err != nil && strings.Contains(err.Error(), c.err)) // says what it cannot map
				return
			}
			is.NoErr(err)
			is.Equal(len(got), 1)
			is.Equal(len(got[0].Lines), c.lines)
			is.Equal(got[0].Net, int64(961)) // the receipt's debit is not the batch's
		})
	}
	t.Run("cursors", func(t *testing.T) {
		is := is.New(t)
		a := &opnAnswers{}
		srv := httptest.NewServer(a)
		t.Cleanup(srv.Close)
		p, err := opn.New(opn.Config{SecretKey: testSecret, BaseURL: srv.URL, Timeout: 5 * time.Second, SettlementHold: 10 * 24 * time.Hour})
		is.NoErr(err)
		for _, bad := range []string{"stl_1", "opn_2026-06-01_THB", "opn_2026-13-01T00:00:00Z_THB", "opn_2026-06-01T00:00:00Z_thb", "po_123"} {
			_, err := p.SettlementBatches(ctx, bad, 10)
			is.True(err != nil) // bad
		}
		_, err = p.SettlementBatches(ctx, "opn_2026-06-11T00:00:00Z_THB", 10)
		is.NoErr(err)
		is.Equal(len(a.queries), 1)
		is.True(strings.Contains(a.queries[0], "from=2026-06-01T00%3A00%3A00Z")) // ten days before the cursor's day
		is.True(strings.Contains(a.queries[0], "order=chronological"))
	})
}
