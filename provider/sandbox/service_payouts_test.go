package sandbox_test

// The paykit payout flow wired to the sandbox: magic accounts end to end.

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/internal/answertest"
)

func fundedService(t *testing.T, e *env) (*paykit.Service, paykit.Principal) {
	t.Helper()
	svc, p := newService(t, e)
	if _, err := svc.AdjustBalance(context.Background(), "ops:test", p.MerchantID, paykit.BalanceAdjustmentRequest{
		Environment: "test", Currency: "THB", Amount: 10000000, Reason: "float",
	}); err != nil {
		t.Fatal(err)
	}
	return svc, p
}

func thPayoutIntent(ref, account string) paykit.CreatePayoutIntentRequest {
	return paykit.CreatePayoutIntentRequest{Amount: 250000, Currency: "THB", Country: "TH", MerchantReference: ref,
		Recipient: paykit.Recipient{Type: "bank_account", AccountNumber: account, BankCode: "KBANK", HolderName: "Somchai", HolderNameTH: "สมชาย"}}
}

func payoutID(t *testing.T, r *answertest.Response) string {
	t.Helper()
	var b struct {
		ID     string `json:"id"`
		Status string `json:"status"`
	}
	if err := json.Unmarshal(r.Body, &b); err != nil {
		t.Fatal(err)
	}
	if b.Status != "processing" {
		t.Fatalf("payout %s is %s, want processing", b.ID, b.Status)
	}
	return b.ID
}

func TestServicePayoutMagicAccounts(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	e := newEnv(t)
	svc, p := fundedService(t, e)

	// 000333333335: the first dispatch is not acknowledged (503); the
	// retry with the same key resumes the same transfer.
	_, err := answertest.From(svc.CreatePayoutIntent(ctx, p, "k-drop", thPayoutIntent("drop", "000333333335")))
	is.Equal(paykit.ErrorCode(err), paykit.CodeDispatchUnavailable)
	resp, err := answertest.From(svc.CreatePayoutIntent(ctx, p, "k-drop", thPayoutIntent("drop", "000333333335")))
	is.NoErr(err)
	is.Equal(resp.Status, 201)
	drop := payoutID(t, resp)
	is.Equal(e.psp.CreateCalls(drop), 2)

	// 000222222227: the dispatch times out; recovery finds the transfer.
	resp, err = answertest.From(svc.CreatePayoutIntent(ctx, p, "k-slowack", thPayoutIntent("slowack", "000222222227")))
	is.NoErr(err)
	slowack := payoutID(t, resp)

	// 000111111116: failed, account_invalid.
	resp, err = answertest.From(svc.CreatePayoutIntent(ctx, p, "k-bad", thPayoutIntent("bad", "000111111116")))
	is.NoErr(err)
	var bad map[string]any
	is.NoErr(json.Unmarshal(resp.Body, &bad))
	is.Equal(bad["status"], "failed")
	is.Equal(bad["failure_code"], paykit.FailureAccountInvalid)

	// 000444444440: slow; a cancel stays processing until the PSP confirms.
	resp, err = answertest.From(svc.CreatePayoutIntent(ctx, p, "k-slow", thPayoutIntent("slow", "000444444440")))
	is.NoErr(err)
	slow := payoutID(t, resp)
	resp, err = answertest.From(svc.CancelPayoutIntent(ctx, p, "k-cancel", slow, paykit.CancelPayoutIntentRequest{Reason: "changed my mind"}))
	is.NoErr(err)
	is.Equal(resp.Status, 202)
	drain(t, svc)
	po, err := svc.GetPayoutIntent(ctx, p, slow)
	is.NoErr(err)
	is.Equal(po.Status, paykit.PayoutProcessing)

	for range 10 { // let the PSP settle and the worker's backoff come round
		e.clock.Advance(30 * time.Second)
		drain(t, svc)
	}
	for id, want := range map[string]paykit.PayoutStatus{drop: paykit.PayoutSucceeded, slowack: paykit.PayoutSucceeded, slow: paykit.PayoutCancelled} {
		po, err := svc.GetPayoutIntent(ctx, p, id)
		is.NoErr(err)
		if po.Status != want {
			t.Errorf("payout %s: %s, want %s", id, po.Status, want)
		}
	}
	is.Equal(len(e.psp.Transfers()), 4) // one transfer each, however often sent
	is.Equal(e.psp.CreateCalls(slowack), 1)

	// Returned funds: the PSP reverses the transfer, the payout fails.
	returned, err := svc.SimulateReturn(ctx, p, drop)
	is.NoErr(err)
	is.Equal(returned.Status, paykit.PayoutFailed)
	is.Equal(returned.FailureCode, paykit.FailureFundsReturned)
	is.Equal(e.prov.InquirePayout(ctx, paykit.AttemptRef{Key: drop}).Outcome, paykit.OutcomeReturned)
}
