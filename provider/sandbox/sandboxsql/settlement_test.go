package sandboxsql_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/paykit/paykit"
)

// scenarios are what the PSP does about fees, settlement and disputes,
// whichever state it keeps. Each runs on a fresh state.
var scenarios = []struct {
	name string
	run  func(t *testing.T, db stateDB)
}{
	{"a succeeded payment states its fee and when it is paid out", func(t *testing.T, db stateDB) {
		is := is.New(t)
		e := newEnv(t, db, paykit.NewManualClock(start), 0) // the default interval: 24h
		midnight := time.Date(2026, 6, 2, 0, 0, 0, 0, time.UTC)
		cases := []struct {
			key, method, country string
			amount, fee          int64
		}{
			{"pi_tng", "TNG", "MY", 15000, 435},
			{"pi_14_471", "TNG", "MY", 499, 14},
			{"pi_14_5", "BOOST", "MY", 500, 15}, // half rounds up
			{"pi_1_45", "GRABPAY", "MY", 50, 1},
			{"pi_0_029", "TNG", "MY", 1, 0},
			{"pi_card_my", "CARD", "MY", 10000, 290 + 100},
			{"pi_card_th", "CARD", "TH", 10000, 290 + 100},
			{"pi_unionpay", "UNIONPAY", "MY", 10000, 290}, // a card scheme, not method CARD
			{"pi_promptpay", "PROMPTPAY", "TH", 123456, 3580},
		}
		fees := map[string]int64{}
		for _, c := range cases {
			r := e.pay(t, c.key, "mch_a", c.method, c.country, c.amount)
			is.Equal(r.Fee, c.fee)            // fee of c.key
			is.Equal(r.AvailableOn, midnight) // the boundary after the success
			is.True(r.AvailableOn.Location() == time.UTC)
			fees[c.key] = c.fee
		}
		for _, p := range e.psp.Payments() {
			is.Equal(p.Merchant, "mch_a")
			is.Equal(p.FeeMinor, fees[p.Key])
		}
		n, err := e.psp.SendCallbacks(context.Background())
		is.NoErr(err)
		is.Equal(n, len(cases))
		for _, ev := range e.sink.events() {
			is.Equal(ev.Kind, "payment")
			is.Equal(ev.Result.Outcome, paykit.OutcomeSucceeded)
			is.Equal(ev.Result.Fee, fees[ev.Key])
			is.Equal(ev.Result.AvailableOn, midnight)
		}
	}},
	{"batches per merchant and currency close at the interval's boundary", func(t *testing.T, db stateDB) {
		is := is.New(t)
		ctx := context.Background()
		clock := paykit.NewManualClock(start)
		e := newEnv(t, db, clock, interval)
		e.pay(t, "pi_a_myr", "mch_a", "TNG", "MY", 10000)
		e.pay(t, "pi_a_thb", "mch_a", "PROMPTPAY", "TH", 20000)
		e.pay(t, "pi_b_myr", "mch_b", "CARD", "MY", 30000)
		rf := e.prov.CreateRefund(ctx, paykit.RefundRequest{Key: "re_a", PaymentKey: "pi_a_myr", Amount: 4000, Currency: "MYR"})
		is.Equal(rf.Outcome, paykit.OutcomePending) // succeeds after the delay
		failed := e.prov.CreateRefund(ctx, paykit.RefundRequest{Key: "re_declined", PaymentKey: "pi_a_myr", Amount: 911, Currency: "MYR"})
		is.Equal(failed.Outcome, paykit.OutcomeFailed) // settles nothing

		noon := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
		clock.Set(noon.Add(-time.Nanosecond))
		is.Equal(len(e.batches(t, "", 10)), 0) // nothing closed before the boundary
		clock.Set(noon)
		got := e.batches(t, "", 10)
		is.Equal(summaries(got, nil), []string{
			"mch_a MYR 06-01T12:00:00: payment pi_a_myr 10000 290; refund re_a -4000 0;",
			"mch_a THB 06-01T12:00:00: payment pi_a_thb 20000 580;",
			"mch_b MYR 06-01T12:00:00: payment pi_b_myr 30000 970;",
		})
		is.Equal(got[0].Lines[1].Reference, rf.Reference)
		is.Equal(got[0].Lines[0].Reference, e.prov.InquirePayment(ctx, paykit.AttemptRef{Key: "pi_a_myr"}).Reference)
		is.True(strings.HasPrefix(got[0].Reference, "stl_"))

		// Read again: the same batches; after the last, nothing new.
		is.Equal(e.batches(t, "", 1), got) // page by page
		is.Equal(len(e.batches(t, got[2].Reference, 10)), 0)
		is.Equal(e.batches(t, got[0].Reference, 10), got[1:])
		is.Equal(e.prov.InquirePayment(ctx, paykit.AttemptRef{Key: "pi_a_myr"}).AvailableOn, noon)

		// A payment at the boundary itself settles at the next one.
		edge := e.pay(t, "pi_edge", "mch_a", "TNG", "MY", 1000)
		is.Equal(edge.AvailableOn, noon.Add(interval))
		clock.Set(noon.Add(interval - time.Nanosecond))
		is.Equal(len(e.batches(t, got[2].Reference, 10)), 0)
		clock.Set(noon.Add(interval))
		is.Equal(summaries(e.batches(t, got[2].Reference, 10), nil), []string{"mch_a MYR 06-01T18:00:00: payment pi_edge 1000 29;"})

		// Closed late (nobody asked for two days), a batch still settles
		// at the boundary after its lines.
		clock.Set(noon.Add(interval + 30*time.Minute))
		e.pay(t, "pi_late", "mch_b", "TNG", "MY", 2000)
		clock.Set(noon.Add(50 * time.Hour))
		all := e.batches(t, "", 10)
		is.Equal(summary(all[len(all)-1], nil), "mch_b MYR 06-02T00:00:00: payment pi_late 2000 58;")
		is.Equal(len(all), 5)
	}},
	{"921 settles with another fee, 922 never", func(t *testing.T, db stateDB) {
		is := is.New(t)
		ctx := context.Background()
		clock := paykit.NewManualClock(start)
		e := newEnv(t, db, clock, interval)
		is.Equal(e.pay(t, "pi_921", "mch_a", "TNG", "MY", 10921).Fee, int64(317))
		never := e.pay(t, "pi_922", "mch_a", "TNG", "MY", 10922)
		is.Equal(never.Fee, int64(317))
		clock.Advance(30 * 24 * time.Hour)
		is.Equal(summaries(e.batches(t, "", 10), nil), []string{"mch_a MYR 06-01T12:00:00: payment pi_921 10921 318;"})
		again := e.prov.InquirePayment(ctx, paykit.AttemptRef{Key: "pi_922"})
		is.Equal(again.Outcome, paykit.OutcomeSucceeded)
		is.Equal(again.AvailableOn, never.AvailableOn) // as stated, never kept
		is.Equal(again.AvailableOn, time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC))
	}},
	{"settle now closes the asking merchant's lines only", func(t *testing.T, db stateDB) {
		is := is.New(t)
		ctx := context.Background()
		clock := paykit.NewManualClock(start)
		e := newEnv(t, db, clock, interval)
		e.pay(t, "pi_a1", "mch_a", "TNG", "MY", 10000)
		e.pay(t, "pi_a_th", "mch_a", "TRUEMONEY", "TH", 5000)
		e.pay(t, "pi_b1", "mch_b", "TNG", "MY", 20000)
		clock.Advance(time.Minute)
		now, err := e.prov.SettleNow(ctx, "mch_a")
		is.NoErr(err)
		is.Equal(summaries(now, nil), []string{
			"mch_a MYR 06-01T08:01:00: payment pi_a1 10000 290;",
			"mch_a THB 06-01T08:01:00: payment pi_a_th 5000 145;",
		})
		is.Equal(e.batches(t, "", 10), now) // listed like any other
		is.Equal(e.prov.InquirePayment(ctx, paykit.AttemptRef{Key: "pi_a1"}).AvailableOn, start.Add(time.Minute))
		is.Equal(e.prov.InquirePayment(ctx, paykit.AttemptRef{Key: "pi_b1"}).AvailableOn, start.Add(4*time.Hour))
		again, err := e.prov.SettleNow(ctx, "mch_a")
		is.NoErr(err)
		is.Equal(len(again), 0)
		none, err := e.prov.SettleNow(ctx, "mch_nobody")
		is.NoErr(err)
		is.Equal(len(none), 0)
		_, err = e.prov.SettleNow(ctx, "")
		is.True(err != nil)

		clock.Set(start.Add(4 * time.Hour)) // 12:00
		is.Equal(summaries(e.batches(t, now[1].Reference, 10), nil), []string{"mch_b MYR 06-01T12:00:00: payment pi_b1 20000 580;"})

		// Lines due at a boundary nobody read yet close at it, the others
		// now; the answer holds both.
		clock.Set(start.Add(4*time.Hour + 30*time.Minute))
		e.pay(t, "pi_a2", "mch_a", "TNG", "MY", 1000)
		e.pay(t, "pi_b2", "mch_b", "TNG", "MY", 1000)
		clock.Set(start.Add(10*time.Hour + 10*time.Minute)) // 18:10
		e.pay(t, "pi_a3", "mch_a", "TNG", "MY", 3000)
		e.pay(t, "pi_b3", "mch_b", "TNG", "MY", 3000)
		now, err = e.prov.SettleNow(ctx, "mch_a")
		is.NoErr(err)
		is.Equal(summaries(now, nil), []string{
			"mch_a MYR 06-01T18:00:00: payment pi_a2 1000 29;",
			"mch_a MYR 06-01T18:10:00: payment pi_a3 3000 87;",
		})
		all := e.batches(t, "", 10)
		is.Equal(summaries(all[len(all)-3:], nil), []string{
			"mch_a MYR 06-01T18:00:00: payment pi_a2 1000 29;",
			"mch_b MYR 06-01T18:00:00: payment pi_b2 1000 29;", // due, closed with them
			"mch_a MYR 06-01T18:10:00: payment pi_a3 3000 87;",
		})
	}},
	{"a dispute is won with winning evidence, and accepted ones are lost", func(t *testing.T, db stateDB) {
		is := is.New(t)
		ctx := context.Background()
		clock := paykit.NewManualClock(start)
		e := newEnv(t, db, clock, interval)
		paid := e.pay(t, "pi_d", "mch_a", "TNG", "MY", 10000)
		e.prov.CreatePayment(ctx, paykit.PaymentRequest{
			Key: "pi_wait", Amount: 10000, Currency: "MYR", Country: "MY", Method: "TNG",
			Customer: map[string]string{"name": "Aisyah Rahman"},
		})
		_, err := e.prov.OpenDispute(ctx, paykit.DisputeOpening{PaymentKey: "pi_wait"})
		is.True(err != nil && strings.Contains(err.Error(), "ERR_DISPUTE_PAYMENT")) // not SUCCESS
		_, err = e.prov.OpenDispute(ctx, paykit.DisputeOpening{PaymentKey: "pi_nosuch"})
		is.True(err != nil && strings.Contains(err.Error(), "ERR_DISPUTE_PAYMENT"))
		_, err = e.prov.OpenDispute(ctx, paykit.DisputeOpening{PaymentKey: "pi_d", Reason: "unhappy"})
		is.True(err != nil) // no such reason: not sent
		is.Equal(e.prov.CreateRefund(ctx, paykit.RefundRequest{Key: "re_d", PaymentKey: "pi_d", Amount: 3000, Currency: "MYR"}).Outcome, paykit.OutcomePending)

		d1, err := e.prov.OpenDispute(ctx, paykit.DisputeOpening{PaymentKey: "pi_d", Amount: 5000, Reason: paykit.DisputeFraudulent})
		is.NoErr(err)
		is.True(strings.HasPrefix(d1.Reference, "dsp_"))
		is.Equal(d1.PaymentKey, "pi_d")
		is.Equal(d1.PaymentRef, paid.Reference)
		is.Equal(d1.Amount, int64(5000))
		is.Equal(d1.Currency, "MYR")
		is.Equal(d1.Fee, int64(1500))
		is.Equal(d1.Reason, paykit.DisputeFraudulent)
		is.Equal(d1.Status, paykit.DisputeNeedsResponse)
		is.Equal(d1.EvidenceDueBy, start.Add(7*24*time.Hour))

		// The refund and the dispute left 2000 of the payment.
		_, err = e.prov.OpenDispute(ctx, paykit.DisputeOpening{PaymentKey: "pi_d", Amount: 2001})
		is.True(err != nil && strings.Contains(err.Error(), "ERR_DISPUTE_AMOUNT"))
		over := e.prov.CreateRefund(ctx, paykit.RefundRequest{Key: "re_over", PaymentKey: "pi_d", Amount: 2001, Currency: "MYR"})
		is.Equal(over.FailureCode, paykit.RefundProviderError)
		d2, err := e.prov.OpenDispute(ctx, paykit.DisputeOpening{PaymentRef: paid.Reference}) // the rest, general
		is.NoErr(err)
		is.Equal(d2.Amount, int64(2000))
		is.Equal(d2.Reason, paykit.DisputeGeneral)
		_, err = e.prov.OpenDispute(ctx, paykit.DisputeOpening{PaymentKey: "pi_d"})
		is.True(err != nil) // nothing left

		under, err := e.prov.SubmitDisputeEvidence(ctx, d1.Reference, "Signed delivery note attached. winning_evidence")
		is.NoErr(err)
		is.Equal(under.Status, paykit.DisputeUnderReview)
		// Repeated or late calls answer the dispute as it is.
		again, err := e.prov.SubmitDisputeEvidence(ctx, d1.Reference, "more")
		is.NoErr(err)
		is.Equal(again.Status, paykit.DisputeUnderReview)
		again, err = e.prov.AcceptDispute(ctx, d1.Reference)
		is.NoErr(err)
		is.Equal(again.Status, paykit.DisputeUnderReview)
		lost, err := e.prov.AcceptDispute(ctx, d2.Reference)
		is.NoErr(err)
		is.Equal(lost.Status, paykit.DisputeLost)
		again, err = e.prov.AcceptDispute(ctx, d2.Reference)
		is.NoErr(err)
		is.Equal(again.Status, paykit.DisputeLost)
		_, err = e.prov.InquireDispute(ctx, "dsp_nosuch")
		is.True(err != nil)

		clock.Advance(delay - time.Nanosecond)
		got, err := e.prov.InquireDispute(ctx, d1.Reference)
		is.NoErr(err)
		is.Equal(got.Status, paykit.DisputeUnderReview)
		_, err = e.psp.SendCallbacks(ctx)
		is.NoErr(err)
		is.Equal(disputeEvents(e.sink.events()), []string{})
		clock.Advance(time.Nanosecond)
		_, err = e.psp.SendCallbacks(ctx) // before any inquiry: the PSP finds it won on its own
		is.NoErr(err)
		is.Equal(disputeEvents(e.sink.events()), []string{d1.Reference + " won"}) // the accepted one: none
		got, err = e.prov.InquireDispute(ctx, d1.Reference)
		is.NoErr(err)
		is.Equal(got.Status, paykit.DisputeWon)
		is.Equal(got.Fee, int64(1500)) // kept though won
	}},
	{"losing evidence loses, other texts stay under review, silence loses at the deadline", func(t *testing.T, db stateDB) {
		is := is.New(t)
		ctx := context.Background()
		clock := paykit.NewManualClock(start)
		e := newEnv(t, db, clock, interval)
		e.pay(t, "pi_e", "mch_a", "TNG", "MY", 30000)
		open := func(reason paykit.DisputeReason) paykit.ProviderDispute {
			t.Helper()
			d, err := e.prov.OpenDispute(ctx, paykit.DisputeOpening{PaymentKey: "pi_e", Amount: 10000, Reason: reason})
			is.NoErr(err)
			return d
		}
		losing, other, silent := open(paykit.DisputeProductNotReceived), open(paykit.DisputeDuplicate), open(paykit.DisputeCreditNotProcessed)
		is.Equal(losing.Reason, paykit.DisputeProductNotReceived)
		_, err := e.prov.SubmitDisputeEvidence(ctx, losing.Reference, "losing_evidence")
		is.NoErr(err)
		_, err = e.prov.SubmitDisputeEvidence(ctx, other.Reference, "The parcel was delivered on time.")
		is.NoErr(err)
		// Evidence kept without submitting it does not stop the deadline.
		status, body := e.raw(t, http.MethodPost, "/api/disputes/"+silent.Reference+"/evidence", `{"text":"draft"}`)
		is.Equal(status, http.StatusOK)
		is.True(strings.Contains(body, `"state":"NEEDS_RESPONSE"`))
		status, _ = e.raw(t, http.MethodPost, "/api/disputes/"+silent.Reference+"/evidence", `{"text":""}`)
		is.Equal(status, http.StatusBadRequest)
		status, _ = e.raw(t, http.MethodPost, "/api/disputes/"+silent.Reference+"/evidence", `{"text":"`+strings.Repeat("é", 20_001)+`"}`)
		is.Equal(status, http.StatusBadRequest)

		clock.Advance(delay)
		_, err = e.psp.SendCallbacks(ctx)
		is.NoErr(err)
		is.Equal(disputeEvents(e.sink.events()), []string{losing.Reference + " lost"})

		clock.Set(silent.EvidenceDueBy.Add(-time.Nanosecond))
		got, err := e.prov.InquireDispute(ctx, silent.Reference)
		is.NoErr(err)
		is.Equal(got.Status, paykit.DisputeNeedsResponse)
		_, err = e.psp.SendCallbacks(ctx)
		is.NoErr(err)
		is.Equal(disputeEvents(e.sink.events()), []string{})
		clock.Set(silent.EvidenceDueBy)
		_, err = e.psp.SendCallbacks(ctx)
		is.NoErr(err)
		is.Equal(disputeEvents(e.sink.events()), []string{silent.Reference + " lost"})
		late, err := e.prov.SubmitDisputeEvidence(ctx, silent.Reference, "winning_evidence, too late")
		is.NoErr(err)
		is.Equal(late.Status, paykit.DisputeLost)

		clock.Advance(30 * 24 * time.Hour)
		got, err = e.prov.InquireDispute(ctx, other.Reference)
		is.NoErr(err)
		is.Equal(got.Status, paykit.DisputeUnderReview)
	}},
	{"disputes settle their debit at opening and a won one's reversal", func(t *testing.T, db stateDB) {
		is := is.New(t)
		ctx := context.Background()
		clock := paykit.NewManualClock(start)
		e := newEnv(t, db, clock, interval)
		e.pay(t, "pi_s", "mch_a", "TNG", "MY", 10000)
		open := func(amount int64) string {
			t.Helper()
			d, err := e.prov.OpenDispute(ctx, paykit.DisputeOpening{PaymentKey: "pi_s", Amount: amount})
			is.NoErr(err)
			return d.Reference
		}
		won, lost, late := open(4000), open(3000), open(2000)
		names := map[string]string{won: "won", lost: "lost", late: "late"}
		_, err := e.prov.SubmitDisputeEvidence(ctx, won, "winning_evidence")
		is.NoErr(err)
		_, err = e.prov.AcceptDispute(ctx, lost)
		is.NoErr(err)
		clock.Set(start.Add(4*time.Hour - time.Second)) // won a second after noon
		_, err = e.prov.SubmitDisputeEvidence(ctx, late, "winning_evidence")
		is.NoErr(err)

		clock.Set(start.Add(4 * time.Hour))
		noon := e.batches(t, "", 10)
		is.Equal(summaries(noon, names), []string{
			"mch_a MYR 06-01T12:00:00: payment pi_s 10000 290; dispute won -4000 1500; dispute_reversal won 4000 0; dispute lost -3000 1500; dispute late -2000 1500;",
		})
		clock.Set(start.Add(10 * time.Hour))
		is.Equal(summaries(e.batches(t, noon[0].Reference, 10), names), []string{"mch_a MYR 06-01T18:00:00: dispute_reversal late 2000 0;"})
		got := e.psp.SettlementBatches()
		is.Equal(len(got), 2)
		is.Equal(got[1].Lines[0].Type, "DISPUTE_REVERSAL") // the PSP's word; the adapter maps it
	}},
}

// disputeEvents are "reference status" of the dispute callbacks among evs.
func disputeEvents(evs []paykit.CallbackEvent) []string {
	out := []string{}
	for _, ev := range evs {
		if ev.Kind == "dispute" {
			out = append(out, ev.Dispute.Reference+" "+string(ev.Dispute.Status))
		}
	}
	return out
}

// TestPSPOnEveryState runs the scenarios on each state the PSP can keep.
func TestPSPOnEveryState(t *testing.T) {
	t.Parallel()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			for _, sc := range scenarios {
				t.Run(sc.name, func(t *testing.T) { sc.run(t, b.open(t)) })
			}
		})
	}
}

// TestStateSurvivesANewPSP stops a PSP with a closed batch, a dispute
// decided but not yet told, and lines still open; a new PSP on the same
// database lists the same batches, knows the dispute, sends its callback,
// and closes the open lines once.
func TestStateSurvivesANewPSP(t *testing.T) {
	t.Parallel()
	for _, b := range sqlBackends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			ctx := context.Background()
			db := b.open(t)
			clock := paykit.NewManualClock(start)
			old := newEnv(t, db, clock, interval)
			old.pay(t, "pi_r", "mch_a", "TNG", "MY", 10000)
			d, err := old.prov.OpenDispute(ctx, paykit.DisputeOpening{PaymentKey: "pi_r", Amount: 1000})
			is.NoErr(err)
			_, err = old.prov.SubmitDisputeEvidence(ctx, d.Reference, "winning_evidence")
			is.NoErr(err)
			clock.Set(start.Add(4 * time.Hour))
			first := old.batches(t, "", 10)
			is.Equal(len(first), 1)
			old.pay(t, "pi_open", "mch_a", "TNG", "MY", 2000) // settles at 18:00
			_, err = old.psp.SendCallbacks(ctx)
			is.NoErr(err)
			is.Equal(disputeEvents(old.sink.events()), []string{d.Reference + " won"})
			got, err := old.prov.InquireDispute(ctx, d.Reference)
			is.NoErr(err)
			is.Equal(got.Status, paykit.DisputeWon)

			e := newEnv(t, db, clock, interval) // another PSP, as after a restart
			is.Equal(e.batches(t, "", 10), first)
			is.Equal(len(e.batches(t, first[0].Reference, 10)), 0)
			got, err = e.prov.InquireDispute(ctx, d.Reference)
			is.NoErr(err)
			is.Equal(got.Status, paykit.DisputeWon)
			is.Equal(e.prov.InquirePayment(ctx, paykit.AttemptRef{Key: "pi_r"}).AvailableOn, start.Add(4*time.Hour))
			n, err := e.psp.SendCallbacks(ctx) // what the old one told stays told
			is.NoErr(err)
			is.Equal(n, 0)
			clock.Set(start.Add(10 * time.Hour))
			is.Equal(summaries(e.batches(t, first[0].Reference, 10), map[string]string{d.Reference: "d"}), []string{
				"mch_a MYR 06-01T18:00:00: payment pi_open 2000 58;",
			})
			is.Equal(summaries(old.batches(t, "", 10), nil), summaries(e.batches(t, "", 10), nil)) // one database, one truth
		})
	}
}

// TestPSPsCloseEachLineOnce makes two PSPs on one database close the
// same due lines at once, by listing and by settling now: every line lands
// in exactly one batch.
func TestPSPsCloseEachLineOnce(t *testing.T) {
	t.Parallel()
	for _, b := range sqlBackends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			ctx := context.Background()
			db := b.open(t)
			clock := paykit.NewManualClock(start)
			envs := []*env{newEnv(t, db, clock, interval), newEnv(t, db, clock, interval)}
			merchants := []string{"mch_a", "mch_b", "mch_c"}
			const perMerchant = 4
			for i := range perMerchant * len(merchants) {
				envs[i%2].pay(t, "pi_"+itoa(int64(i)), merchants[i%len(merchants)], "TNG", "MY", 1000+int64(i))
			}
			clock.Set(start.Add(4 * time.Hour))
			var wg sync.WaitGroup
			for i := range 8 {
				wg.Go(func() {
					e := envs[i%2]
					var err error
					if i%4 == 3 {
						_, err = e.prov.SettleNow(ctx, merchants[i%len(merchants)])
					} else {
						_, err = e.prov.SettlementBatches(ctx, "", 100)
					}
					if err != nil {
						t.Error(err)
					}
				})
			}
			wg.Wait()
			all := envs[0].batches(t, "", 100)
			is.Equal(len(all), len(merchants)) // one batch per merchant
			seen := map[string]int{}
			for _, b := range all {
				is.Equal(len(b.Lines), perMerchant)
				for _, l := range b.Lines {
					seen[l.Key]++
				}
			}
			is.Equal(len(seen), perMerchant*len(merchants))
			for key, n := range seen {
				if n != 1 {
					t.Errorf("%s settled %d times", key, n)
				}
			}
		})
	}
}
