package xendit_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/provider/xendit/xenditfake"
)

func day(d int) time.Time { return time.Date(2026, 11, d, 0, 0, 0, 0, time.UTC) }

// Settlement batches are UTC days of settlements: payments by the time
// Xendit settles them, refunds and disputes by when they are made. A day
// is reported an hour after it closes, once every transaction in it is
// final and settled; the days after a pending one wait for it. Payouts
// bring no lines.
func TestSettlementBatches(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	e := newEnv(t, xenditfake.Options{}) // 2026-11-24 09:30 UTC
	pay := func(key string, amount int64) paykit.Result {
		r := e.p.CreatePayment(ctx, tng(key, amount))
		is.NoErr(e.f.Approve(key))
		return r
	}
	a := pay("stl_a", 15000) // settles 26 Nov 09:30: the batch closing 27 Nov
	e.clock.Advance(time.Hour)
	b := pay("stl_b", 30000)
	rf := e.p.CreateRefund(ctx, paykit.RefundRequest{Key: "stl_rf", PaymentKey: "stl_a", PaymentRef: a.Reference, Amount: 5000, Currency: "MYR"})
	is.NoErr(e.f.SettleRefund("stl_rf")) // a debit on 24 Nov: the batch closing 25 Nov
	e.p.CreateRefund(ctx, paykit.RefundRequest{Key: "stl_rf2", PaymentKey: "stl_b", PaymentRef: b.Reference, Amount: 1000, Currency: "MYR"})
	e.p.CreatePayout(ctx, payout("stl_po", "1234567890"))
	is.NoErr(e.f.CompletePayout("stl_po"))

	batches := func(after string) []paykit.SettlementBatch {
		t.Helper()
		out, err := e.p.SettlementBatches(ctx, after, 100)
		is.NoErr(err)
		return out
	}
	// 25 Nov 00:30: the 25 Nov day has closed but is not reported yet.
	e.clock.Set(day(25).Add(30 * time.Minute))
	is.Equal(len(batches("")), 0)
	// 25 Nov 01:30: reported, yet a refund in it is still pending.
	e.clock.Set(day(25).Add(90 * time.Minute))
	is.Equal(len(batches("")), 0)
	is.NoErr(e.f.SettleRefund("stl_rf2"))
	got := batches("")
	is.Equal(len(got), 1)
	first := got[0]
	is.Equal(first.SettledAt, day(25))
	is.Equal(first.Currency, "MYR")
	is.Equal(len(first.Lines), 2)
	is.Equal(first.Lines[0], paykit.SettlementLine{Type: "refund", Reference: rf.Reference, Key: "stl_rf", Amount: -5000, Currency: "MYR"})
	is.Equal(first.Gross, int64(-6000))
	is.Equal(first.Net, int64(-6000))

	// 27 Nov 01:30: both payments settled on 26 Nov, with their fees.
	e.clock.Set(day(27).Add(90 * time.Minute))
	id, err := e.f.OpenDispute("stl_b", 2000, "fraud") // a debit on 27 Nov
	is.NoErr(err)
	got = batches("")
	is.Equal(len(got), 2)
	second := got[1]
	is.Equal(second.SettledAt, day(27))
	feeA, _ := e.f.Fee("stl_a")
	feeB, _ := e.f.Fee("stl_b")
	is.Equal(len(second.Lines), 2)
	for _, l := range second.Lines {
		is.Equal(l.Type, "payment")
		switch l.Reference {
		case a.Reference:
			is.Equal(l, paykit.SettlementLine{Type: "payment", Reference: a.Reference, Key: "stl_a", Amount: 15000, Fee: feeA, Currency: "MYR"})
		case b.Reference:
			is.Equal(l, paykit.SettlementLine{Type: "payment", Reference: b.Reference, Key: "stl_b", Amount: 30000, Fee: feeB, Currency: "MYR"})
		default:
			t.Errorf("unexpected line %+v", l)
		}
	}
	is.Equal(second.Fee, feeA+feeB)
	is.Equal(second.Net, 45000-feeA-feeB)
	gross, fee, net := second.Totals()
	is.Equal([]int64{gross, fee, net}, []int64{second.Gross, second.Fee, second.Net})

	// 28 Nov 01:30: the dispute's debit.
	e.clock.Set(day(28).Add(90 * time.Minute))
	got = batches(first.Reference)
	is.Equal(len(got), 2)
	is.Equal(got[0].Reference, second.Reference)
	is.Equal(got[1].Lines, []paykit.SettlementLine{{Type: "dispute", Reference: id, Key: "stl_b", Amount: -2000, Currency: "MYR"}})
	// Paged one at a time, and nothing after the last.
	is.Equal(batches(got[1].Reference), []paykit.SettlementBatch{})
	one, err := e.p.SettlementBatches(ctx, "", 1)
	is.NoErr(err)
	is.Equal(one[0].Reference, first.Reference)
	_, err = e.p.SettlementBatches(ctx, "not-a-batch", 1)
	is.True(err != nil)

	// A won dispute's credit is a reversal line.
	_, err = e.p.SubmitDisputeEvidence(ctx, id, "winning_evidence: delivered")
	is.NoErr(err)
	e.clock.Set(day(29).Add(90 * time.Minute))
	got = batches(got[1].Reference)
	is.Equal(got[0].Lines, []paykit.SettlementLine{{Type: "dispute_reversal", Reference: id, Key: "stl_b", Amount: 2000, Currency: "MYR"}})
}

// A transaction the adapter cannot account for makes the report an
// error, never a silent gap.
func TestSettlementUnknownTransaction(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"has_more":false,"links":[],"data":[{"id":"txn_1","product_id":"adj_1","type":"ADJUSTMENT_ADD",
			"status":"SUCCESS","reference_id":"x","currency":"MYR","amount":10,"net_amount":10,"net_amount_currency":"MYR",
			"cashflow":"MONEY_IN","settlement_status":null,"estimated_settlement_time":null,"created":"2026-11-24T09:30:00.000Z",
			"fee":{"xendit_fee":0,"value_added_tax":0,"status":"NOT_APPLICABLE"}}]}`)
	}))
	defer srv.Close()
	p := adapter(t, srv.URL, time.Second, func() time.Time { return day(30) })
	_, err := p.SettlementBatches(context.Background(), "", 10)
	is.True(err != nil)
}
