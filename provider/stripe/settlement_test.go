package stripe_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"
	"github.com/paykit/paykit"
	"github.com/paykit/paykit/provider/stripe"
	"github.com/paykit/paykit/provider/stripe/stripefake"
)

// settling is an adapter in front of a fake on a manual clock, whose
// funds become available as opts (default: the fake's three days) says.
func settling(t *testing.T, opts stripefake.Options) (env, *paykit.ManualClock) {
	t.Helper()
	clock := paykit.NewManualClock(fakeNow)
	opts.SecretKey, opts.AccountCountry, opts.WebhookSecret, opts.Now = testSecretKey, "MY", testWebhookSecret, clock.Now
	fake := stripefake.New(opts)
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	return env{fake: fake, p: newAdapter(t, srv.URL, func(c *stripe.Config) { c.Timeout, c.Now = 5*time.Second, clock.Now })}, clock
}

// succeeded pays under key and returns the succeeded inquiry.
func (e env) succeeded(t *testing.T, key, method string, amount int64) paykit.Result {
	t.Helper()
	e.paid(t, key, method, amount)
	r := e.p.InquirePayment(context.Background(), paykit.AttemptRef{Key: key})
	if r.Outcome != paykit.OutcomeSucceeded {
		t.Fatalf("payment %s: %s (%s)", key, r.Outcome, r.Detail)
	}
	return r
}

// payOut has the fake pay out what is available, status as asked, and
// returns the payouts' ids.
func (e env) payOut(t *testing.T, status string) []string {
	t.Helper()
	ids, err := e.fake.PayOut(status)
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

func (e env) batches(t *testing.T, after string, limit int) []paykit.SettlementBatch {
	t.Helper()
	b, err := e.p.SettlementBatches(context.Background(), after, limit)
	if err != nil {
		t.Fatalf("settlement batches after %q: %v", after, err)
	}
	return b
}

// A payout is a batch of what it paid out, oldest first and in paykit's
// words: payments (an FPX PaymentIntent, a card's Checkout Session) with
// their fees, refunds (a failed one as it went and came back), a dispute
// with its fee and its reversal; its own transaction is no line. Its net
// is the payout's amount, which the lines add up to.
func TestSettlementLinesOfAPayout(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	e, clock := settling(t, stripefake.Options{})
	fpx := e.succeeded(t, "stl_fpx", "FPX", 12345)
	card := e.succeeded(t, "stl_card", "CARD", 12350)
	refunded := e.succeeded(t, "stl_rf", "FPX", 20000)
	rf := e.p.CreateRefund(ctx, paykit.RefundRequest{Key: "stl_rf_1", PaymentKey: "stl_rf", PaymentRef: refunded.Reference, Amount: 5000, Currency: "MYR"})
	is.Equal(rf.Outcome, paykit.OutcomePending)
	is.NoErr(e.fake.SettleRefund("stl_rf_1"))
	failing := e.succeeded(t, "stl_rfail", "FPX", 30000)
	failed := e.p.CreateRefund(ctx, paykit.RefundRequest{Key: "stl_rfail_1", PaymentKey: "stl_rfail", PaymentRef: failing.Reference, Amount: 20911, Currency: "MYR"})
	is.Equal(failed.Outcome, paykit.OutcomeFailed) // the fake's 911
	disputed := e.succeeded(t, "stl_dsp", "FPX", 40000)
	dp, err := e.fake.OpenDispute("stl_dsp", 10000, "")
	is.NoErr(err)
	won, err := e.p.SubmitDisputeEvidence(ctx, dp, "winning_evidence")
	is.NoErr(err)
	is.Equal(won.Status, paykit.DisputeWon)

	// Refunds and disputes are available at once, payments in three
	// days: until then the balance is negative and nothing is paid out.
	is.Equal(len(e.payOut(t, "paid")), 0)
	is.Equal(len(e.batches(t, "", 10)), 0)
	clock.Advance(4 * 24 * time.Hour)
	ids := e.payOut(t, "paid")
	is.Equal(len(ids), 1)

	got := e.batches(t, "", 10)
	is.Equal(len(got), 1)
	b := got[0]
	want := []paykit.SettlementLine{
		{Type: "payment", Reference: fpx.Reference, Key: "stl_fpx", Amount: 12345, Fee: 370, Currency: "MYR"},
		{Type: "payment", Reference: card.Reference, Key: "stl_card", Amount: 12350, Fee: 471, Currency: "MYR"},
		{Type: "payment", Reference: refunded.Reference, Key: "stl_rf", Amount: 20000, Fee: 600, Currency: "MYR"},
		{Type: "refund", Reference: rf.Reference, Key: "stl_rf_1", Amount: -5000, Currency: "MYR"},
		{Type: "payment", Reference: failing.Reference, Key: "stl_rfail", Amount: 30000, Fee: 900, Currency: "MYR"},
		{Type: "refund", Reference: failed.Reference, Key: "stl_rfail_1", Amount: -20911, Currency: "MYR"},
		{Type: "refund", Reference: failed.Reference, Key: "stl_rfail_1", Amount: 20911, Currency: "MYR"},
		{Type: "payment", Reference: disputed.Reference, Key: "stl_dsp", Amount: 40000, Fee: 1200, Currency: "MYR"},
		{Type: "dispute", Reference: dp, Amount: -10000, Fee: stripefake.DisputeFee, Currency: "MYR"},
		{Type: "dispute_reversal", Reference: dp, Amount: 10000, Currency: "MYR"},
	}
	is.True(strings.HasPrefix(card.Reference, "cs_")) // the card payment is its session
	is.Equal(b.Lines, want)
	var net int64
	for _, l := range want {
		net += l.Amount - l.Fee
	}
	is.Equal(b.Reference, ids[0])
	is.Equal(b.Currency, "MYR")
	is.Equal(b.Merchant, "")
	is.Equal(b.SettledAt, clock.Now()) // the fake's payouts arrive at once
	is.Equal(b.Net, net)               // the payout's amount
	gross, fee, lineNet := b.Totals()
	is.Equal([]int64{gross, fee, lineNet}, []int64{b.Gross, b.Fee, b.Net})

	is.Equal(e.batches(t, "", 10), got) // read again: the same
	is.Equal(len(e.batches(t, ids[0], 10)), 0)
}

// Payouts are read in the order Stripe made them, up to the first one
// still on its way: a payout that arrives late is never passed over.
func TestSettlementStopsAtAPayoutOnItsWay(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	e, clock := settling(t, stripefake.Options{})
	var po []string
	for i, status := range []string{"paid", "in_transit", "paid"} {
		e.succeeded(t, fmt.Sprintf("stl_way_%d", i), "FPX", 10000)
		clock.Advance(4 * 24 * time.Hour)
		ids := e.payOut(t, status)
		is.Equal(len(ids), 1)
		po = append(po, ids[0])
	}
	is.Equal(refs(e.batches(t, "", 10)), po[:1])
	is.Equal(len(e.batches(t, po[0], 10)), 0)
	is.NoErr(e.fake.SetPayoutStatus(po[1], "paid"))
	is.Equal(refs(e.batches(t, "", 10)), po)
	is.Equal(refs(e.batches(t, po[0], 10)), po[1:])
	is.Equal(refs(e.batches(t, po[0], 1)), po[1:2])
	is.Equal(len(e.batches(t, po[2], 10)), 0)
}

// A payout that failed is no batch; the next payout pays its funds out
// again, and its lines are the failed payout's with its own.
func TestSettlementFailedPayoutPaidOutAgain(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	e, clock := settling(t, stripefake.Options{})
	first := e.succeeded(t, "stl_f1", "FPX", 10000)
	clock.Advance(4 * 24 * time.Hour)
	failed := e.payOut(t, "in_transit")
	is.Equal(len(failed), 1)
	is.NoErr(e.fake.SetPayoutStatus(failed[0], "failed"))
	second := e.succeeded(t, "stl_f2", "FPX", 20000)
	clock.Advance(4 * 24 * time.Hour)
	again := e.payOut(t, "paid")
	is.Equal(len(again), 1)
	got := e.batches(t, "", 10)
	is.Equal(refs(got), again)
	is.Equal(got[0].Lines, []paykit.SettlementLine{
		{Type: "payment", Reference: first.Reference, Key: "stl_f1", Amount: 10000, Fee: 300, Currency: "MYR"},
		{Type: "payment", Reference: second.Reference, Key: "stl_f2", Amount: 20000, Fee: 600, Currency: "MYR"},
	})
	is.Equal(got[0].Net, int64(10000-300+20000-600))
}

// With automatic payouts the fake pays out what became available before
// it answers: the report names the payment once its funds are available,
// and not before.
func TestSettlementAutomaticPayouts(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	e, clock := settling(t, stripefake.Options{AutomaticPayouts: true})
	paid := e.succeeded(t, "stl_auto", "FPX", 10000)
	is.Equal(len(e.batches(t, "", 10)), 0) // available in three days
	clock.Advance(4 * 24 * time.Hour)
	got := e.batches(t, "", 10)
	is.Equal(len(got), 1)
	is.Equal(got[0].Lines, []paykit.SettlementLine{{Type: "payment", Reference: paid.Reference, Key: "stl_auto", Amount: 10000, Fee: 300, Currency: "MYR"}})
	is.Equal(len(e.batches(t, got[0].Reference, 10)), 0)
}

// Where Stripe debits the account's bank, a negative balance is paid out
// too: a withdrawal, a batch of a negative net.
func TestSettlementWithdrawal(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	e, clock := settling(t, stripefake.Options{AutomaticPayouts: true, DebitNegativeBalances: true})
	paid := e.succeeded(t, "stl_wd", "FPX", 10000)
	clock.Advance(4 * 24 * time.Hour)
	first := e.batches(t, "", 10)
	is.Equal(len(first), 1)
	dp, err := e.fake.OpenDispute("stl_wd", 10000, "")
	is.NoErr(err)
	got := e.batches(t, first[0].Reference, 10)
	is.Equal(len(got), 1)
	is.Equal(got[0].Lines, []paykit.SettlementLine{{Type: "dispute", Reference: dp, Amount: -10000, Fee: stripefake.DisputeFee, Currency: "MYR"}})
	is.Equal(got[0].Net, int64(-10000-stripefake.DisputeFee))
	is.Equal(first[0].Lines[0].Reference, paid.Reference)
}

// More payouts than a page of Stripe's list, and a payout of more
// transactions than a page: every payout once, oldest first, every line.
func TestSettlementPagesThroughStripesLists(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	e, _ := settling(t, stripefake.Options{AvailableOn: func(paid time.Time) time.Time { return paid }})
	const n = 105
	for i := range n {
		e.succeeded(t, fmt.Sprintf("stl_pg_big_%d", i), "FPX", 1000)
	}
	var po []string
	po = append(po, e.payOut(t, "paid")...)
	for i := range n - 1 {
		e.succeeded(t, fmt.Sprintf("stl_pg_%d", i), "FPX", 1000)
		po = append(po, e.payOut(t, "paid")...)
	}
	is.Equal(len(po), n)
	first := e.batches(t, "", 100)
	is.Equal(refs(first), po[:100])
	is.Equal(len(first[0].Lines), n) // two pages of its transactions
	rest := e.batches(t, first[99].Reference, 100)
	is.Equal(refs(rest), po[100:])
	var walked []string
	for after := ""; ; {
		b := e.batches(t, after, 1)
		if len(b) == 0 {
			break
		}
		walked = append(walked, b[0].Reference)
		after = b[0].Reference
	}
	is.Equal(walked, po)
}

func refs(bs []paykit.SettlementBatch) []string {
	out := []string{}
	for _, b := range bs {
		out = append(out, b.Reference)
	}
	return out
}

// stripeAnswers serves canned Stripe answers: the payouts list, and the
// balance transactions of each payout.
func stripeAnswers(t *testing.T, payouts string, txns map[string]string) *stripe.Provider {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/v1/payouts":
			fmt.Fprintf(w, `{"object":"list","url":"/v1/payouts","has_more":false,"data":[%s]}`, payouts)
		case "/v1/balance_transactions":
			fmt.Fprintf(w, `{"object":"list","url":"/v1/balance_transactions","has_more":false,"data":[%s]}`, txns[r.URL.Query().Get("payout")])
		default:
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, `{"error":{"type":"invalid_request_error","message":"Unrecognized request URL"}}`)
		}
	}))
	t.Cleanup(srv.Close)
	return newAdapter(t, srv.URL, func(c *stripe.Config) { c.Timeout = 5 * time.Second })
}

// po is a payout's JSON, newest first in lists.
func po(id, status, reconciliation string, automatic bool) string {
	return fmt.Sprintf(`{"id":%q,"object":"payout","amount":970,"currency":"myr","arrival_date":1795000000,"automatic":%t,"status":%q,"reconciliation_status":%q}`,
		id, automatic, status, reconciliation)
}

// txn is a balance transaction's JSON with its source expanded.
func txn(id, typ, category, source string, amount, fee int64) string {
	return fmt.Sprintf(`{"id":%q,"object":"balance_transaction","amount":%d,"fee":%d,"net":%d,"currency":"myr","type":%q,"reporting_category":%q,"source":%s}`,
		id, amount, fee, amount-fee, typ, category, source)
}

const (
	chargeSource = `{"id":"ch_1","object":"charge","payment_intent":"pi_1","metadata":{"paykit_key":"k1"}}`
	payoutSource = `{"id":"po_1","object":"payout"}`
)

// Manual payouts (Stripe cannot name what they paid out) are no batches;
// a paid payout whose reconciliation is in progress stops the read; a
// status, a transaction type or a source the adapter does not know is an
// error, never a guess.
func TestSettlementRefusesWhatItCannotAccountFor(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	charge := txn("txn_c", "charge", "charge", chargeSource, 1000, 30)
	own := txn("txn_p", "payout", "payout", payoutSource, -970, 0)
	for _, c := range []struct {
		name    string
		payouts string // newest first
		txns    string // of po_1
		batches []string
		err     string
	}{
		{"a manual payout is skipped", po("po_m", "paid", "not_applicable", false) + "," + po("po_1", "paid", "completed", true), charge + "," + own, []string{"po_1"}, ""},
		{"reconciliation in progress stops", po("po_2", "paid", "completed", true) + "," + po("po_1", "paid", "in_progress", true), charge, nil, ""},
		{"an unknown payout status", po("po_1", "exploded", "completed", true), charge, nil, `status "exploded"`},
		{"an unknown transaction type", po("po_1", "paid", "completed", true), charge + "," + txn("txn_f", "stripe_fee", "fee", `{"id":"fee_1","object":"application_fee"}`, -30, 0), nil, "stripe_fee"},
		{"a source not expanded", po("po_1", "paid", "completed", true), txn("txn_c", "charge", "charge", `"ch_1"`, 1000, 30), nil, "no expanded source"},
	} {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			p := stripeAnswers(t, c.payouts, map[string]string{"po_1": c.txns})
			got, err := p.SettlementBatches(ctx, "", 10)
			if c.err != "" {
				is.True(err != nil && strings.Contains(err.Error(), c.err)) // names what it cannot map
				is.Equal(len(got), 0)
				return
			}
			is.NoErr(err)
			is.Equal(refs(got), append([]string{}, c.batches...))
		})
	}
}
