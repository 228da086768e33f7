package sandbox_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/paykit/paykit"
)

func TestPayoutMagicAccounts(t *testing.T) {
	ctx := context.Background()
	t.Run("any other account succeeds after the delay", func(t *testing.T) {
		is := is.New(t)
		e := newEnv(t)
		r := e.prov.CreatePayout(ctx, payout("po_ok", "123456789012"))
		is.Equal(r.Outcome, paykit.OutcomePending)
		is.Equal(r.Detail, "state=PROCESSING")
		is.True(strings.HasPrefix(r.Reference, "trf_"))
		e.clock.Advance(testDelay)
		is.Equal(e.prov.InquirePayout(ctx, paykit.AttemptRef{Key: "po_ok"}).Outcome, paykit.OutcomeSucceeded)
		tr := e.psp.Transfers()
		is.Equal(len(tr), 1)
		is.Equal(tr[0].Key, "po_ok")
		is.Equal(tr[0].ID, r.Reference)
		is.Equal(tr[0].State, "SUCCESS")
		is.Equal(tr[0].AmountMinor, int64(250000))
		is.Equal(tr[0].Ccy, "THB")
		is.Equal(tr[0].Bank, "TH-004")
		is.Equal(tr[0].AccountLast4, "9012")
	})
	t.Run("000111111116 fails account_invalid", func(t *testing.T) {
		is := is.New(t)
		e := newEnv(t)
		r := e.prov.CreatePayout(ctx, payout("po_bad", "000111111116"))
		is.Equal(r.Outcome, paykit.OutcomeFailed)
		is.Equal(r.FailureCode, paykit.FailureAccountInvalid)
		is.Equal(r.Detail, "state=FAILED error=ERR_ACCOUNT")
		is.Equal(e.prov.InquirePayout(ctx, paykit.AttemptRef{Key: "po_bad"}).FailureCode, paykit.FailureAccountInvalid)
	})
	t.Run("000222222227 times out, the single transfer succeeds", func(t *testing.T) {
		is := is.New(t)
		e := newEnv(t)
		r := e.prov.CreatePayout(ctx, payout("po_slowack", "000222222227"))
		is.Equal(r.Outcome, paykit.OutcomeUnknown)
		is.Equal(len(e.psp.Transfers()), 1) // recorded before the hold
		is.Equal(e.prov.InquirePayout(ctx, paykit.AttemptRef{Key: "po_slowack"}).Outcome, paykit.OutcomePending)
		retry := e.prov.CreatePayout(ctx, payout("po_slowack", "000222222227"))
		is.Equal(retry.Outcome, paykit.OutcomePending) // answered at once
		e.clock.Advance(testDelay)
		is.Equal(e.prov.InquirePayout(ctx, paykit.AttemptRef{Key: "po_slowack"}).Outcome, paykit.OutcomeSucceeded)
		is.Equal(len(e.psp.Transfers()), 1)
		is.Equal(e.psp.CreateCalls("po_slowack"), 2)
	})
	t.Run("000333333335 first create unacknowledged, the retry finds it", func(t *testing.T) {
		is := is.New(t)
		e := newEnv(t)
		r := e.prov.CreatePayout(ctx, payout("po_drop", "000333333335"))
		is.Equal(r.Outcome, paykit.OutcomeUnacknowledged)
		is.True(strings.HasPrefix(r.Detail, "sent, connection ended before an answer"))
		tr := e.psp.Transfers()
		is.Equal(len(tr), 1)
		retry := e.prov.CreatePayout(ctx, payout("po_drop", "000333333335"))
		is.Equal(retry.Outcome, paykit.OutcomePending)
		is.Equal(retry.Reference, tr[0].ID)
		is.Equal(e.psp.CreateCalls("po_drop"), 2)
		is.Equal(len(e.psp.Transfers()), 1)
		e.clock.Advance(testDelay)
		is.Equal(e.prov.CreatePayout(ctx, payout("po_drop", "000333333335")).Outcome, paykit.OutcomeSucceeded)
	})
	t.Run("000444444440 is in flight for a minute", func(t *testing.T) {
		is := is.New(t)
		e := newEnv(t)
		is.Equal(e.prov.CreatePayout(ctx, payout("po_slow", "000444444440")).Outcome, paykit.OutcomePending)
		e.clock.Advance(time.Minute - time.Millisecond)
		is.Equal(e.prov.InquirePayout(ctx, paykit.AttemptRef{Key: "po_slow"}).Outcome, paykit.OutcomePending)
		e.clock.Advance(time.Millisecond)
		is.Equal(e.prov.InquirePayout(ctx, paykit.AttemptRef{Key: "po_slow"}).Outcome, paykit.OutcomeSucceeded)
	})
}

func TestCancelSlowPayout(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	e := newEnv(t)
	e.prov.CreatePayout(ctx, payout("po_slow", "000444444440"))
	e.clock.Advance(30 * time.Second)
	r := e.prov.CancelPayout(ctx, paykit.AttemptRef{Key: "po_slow"})
	is.Equal(r.Outcome, paykit.OutcomePending) // accepted, not yet done
	is.Equal(r.Detail, "state=PROCESSING cancel_requested")
	is.True(e.psp.Transfers()[0].CancelRequested)
	e.clock.Advance(testDelay - time.Millisecond)
	is.Equal(e.prov.InquirePayout(ctx, paykit.AttemptRef{Key: "po_slow"}).Outcome, paykit.OutcomePending)
	e.clock.Advance(time.Millisecond)
	is.Equal(e.prov.InquirePayout(ctx, paykit.AttemptRef{Key: "po_slow"}).Outcome, paykit.OutcomeCancelled)
	is.Equal(e.prov.CancelPayout(ctx, paykit.AttemptRef{Key: "po_slow"}).Outcome, paykit.OutcomeCancelled) // again: as it is
	e.clock.Advance(time.Hour)
	is.Equal(e.prov.InquirePayout(ctx, paykit.AttemptRef{Key: "po_slow"}).Outcome, paykit.OutcomeCancelled) // the minute changes nothing now
}

func TestCancelOtherPayouts(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	e := newEnv(t)
	// In flight: accepted, and cancelled when it would have settled.
	e.prov.CreatePayout(ctx, payout("po_n", "123456789012"))
	e.clock.Advance(time.Second)
	is.Equal(e.prov.CancelPayout(ctx, paykit.AttemptRef{Key: "po_n"}).Outcome, paykit.OutcomePending)
	e.clock.Advance(time.Second)
	is.Equal(e.prov.InquirePayout(ctx, paykit.AttemptRef{Key: "po_n"}).Outcome, paykit.OutcomeCancelled)

	// Already paid: the answer says so.
	e.prov.CreatePayout(ctx, payout("po_paid", "123456789012"))
	e.clock.Advance(testDelay)
	is.Equal(e.prov.CancelPayout(ctx, paykit.AttemptRef{Key: "po_paid"}).Outcome, paykit.OutcomeSucceeded)
	is.Equal(e.prov.CancelPayout(ctx, paykit.AttemptRef{Key: "po_none"}).Outcome, paykit.OutcomeNotFound)
}

func TestReturnPayout(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	e := newEnv(t)
	e.prov.CreatePayout(ctx, payout("po_r", "123456789012"))
	err := e.prov.ReturnPayout(ctx, "po_r")
	is.True(err != nil && strings.Contains(err.Error(), "ERR_STATE")) // still in flight
	e.clock.Advance(testDelay)
	is.NoErr(e.prov.ReturnPayout(ctx, "po_r"))
	r := e.prov.InquirePayout(ctx, paykit.AttemptRef{Key: "po_r"})
	is.Equal(r.Outcome, paykit.OutcomeReturned)
	is.Equal(r.Detail, "state=REVERSED")
	is.NoErr(e.prov.ReturnPayout(ctx, "po_r")) // idempotent
	is.True(e.prov.ReturnPayout(ctx, "po_none") != nil)
}

func TestPayoutIdempotencyAndValidation(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	e := newEnv(t)
	req := payout("po_i", "123456789012")
	first := e.prov.CreatePayout(ctx, req)
	is.Equal(e.prov.CreatePayout(ctx, req).Reference, first.Reference)
	changed := req
	changed.Amount++
	r := e.prov.CreatePayout(ctx, changed)
	is.Equal(r.Outcome, paykit.OutcomeUnknown) // a payout fails only on the PSP's word
	is.True(strings.Contains(r.Detail, "http 409 ERR_IDEMPOTENCY"))
	is.Equal(len(e.psp.Transfers()), 1)

	bad := payout("po_v", "123456789012")
	bad.BankCode = "KBANK" // canonical, not the PSP's code
	r = e.prov.CreatePayout(ctx, bad)
	is.Equal(r.Outcome, paykit.OutcomeUnknown)
	is.True(strings.Contains(r.Detail, "http 400 ERR_VALIDATION"))
	is.Equal(e.prov.InquirePayout(ctx, paykit.AttemptRef{Key: "po_v"}).Outcome, paykit.OutcomeNotFound)
}

// TestAnswersNeverCarryTheAccountNumber reads the PSP's raw answers (and
// the adapter's details) of every payout call.
func TestAnswersNeverCarryTheAccountNumber(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	e := newEnv(t)
	const acct = "987654321012"
	call := func(method, path, key, body string) string {
		_, answer := e.raw(t, method, path, key, body)
		return answer
	}
	body := `{"amount_minor":1000,"ccy":"THB","country":"TH","bank":"TH-004","beneficiary_account":"` + acct + `","beneficiary_name":"Somchai"}`
	answers := []string{
		call("POST", "/api/payouts", "po_raw", body),
		call("POST", "/api/payouts", "po_raw", body),
		call("POST", "/api/payouts", "po_raw", strings.Replace(body, "1000", "1001", 1)),      // 409
		call("POST", "/api/payouts", "po_raw2", strings.Replace(body, "TH-004", "TH-999", 1)), // 400
		call("POST", "/api/payouts", "po_raw3", strings.Replace(body, acct, acct+"!", 1)),     // 400
		call("POST", "/api/payouts", "po_raw4", strings.Replace(body, `"ccy"`, `"ccyy"`, 1)),  // 400 unknown field
		call("GET", "/api/payouts/po_raw", "", ""),
		call("POST", "/api/payouts/po_raw/cancel", "", ""),
	}
	e.clock.Advance(testDelay)
	answers = append(answers, call("POST", "/api/payouts/po_raw/return", "", ""))
	is.True(strings.Contains(answers[0], `"account_last4":"1012"`))
	for i, a := range answers {
		if strings.Contains(a, acct) || strings.Contains(a, "987654") {
			t.Errorf("answer %d carries the account number: %s", i, a)
		}
	}
	for _, r := range []paykit.Result{
		e.prov.CreatePayout(ctx, payout("po_a", acct)),
		e.prov.CreatePayout(ctx, payout("po_a", acct[:11]+"9")),
		e.prov.CreatePayout(ctx, payout("po_b", acct+"-")),
	} {
		is.True(!strings.Contains(r.Detail, acct[:8]))
	}
	for _, tr := range e.psp.Transfers() {
		is.True(!strings.Contains(tr.AccountLast4+tr.ID+tr.Key, acct[:8]))
	}
}
