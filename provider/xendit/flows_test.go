package xendit_test

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/provider/xendit"
	"github.com/paykit/paykit/provider/xendit/xenditfake"
)

// env is the adapter in front of a fake on a manual clock.
type env struct {
	f     *xenditfake.Fake
	p     *xendit.Provider
	url   string
	clock *paykit.ManualClock
}

func newEnv(t *testing.T, opt xenditfake.Options) *env {
	t.Helper()
	clock := paykit.NewManualClock(time.Date(2026, 11, 24, 9, 30, 0, 0, time.UTC))
	opt.Now = clock.Now
	f := newFake(opt)
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return &env{f: f, p: adapter(t, srv.URL, 5*time.Second, clock.Now), url: srv.URL, clock: clock}
}

// Every payment request status the adapter maps, reached through the
// fake's flows: REQUIRES_ACTION (a redirect, a QR string, a virtual
// account), SUCCEEDED with the fee and settlement estimate of its
// transaction, FAILED, CANCELED and EXPIRED.
func TestPaymentStatuses(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	e := newEnv(t, xenditfake.Options{})

	r := e.p.CreatePayment(ctx, tng("pay_redirect", 15000))
	is.Equal(r.Outcome, paykit.OutcomeRequiresAction)
	is.Equal(r.Action.Type, paykit.NextActionRedirectToURL)
	is.True(strings.HasPrefix(r.Action.URL, "https://"))
	is.True(strings.HasPrefix(r.Reference, "pr-"))

	pp := paykit.PaymentRequest{Key: "pay_qr", Amount: 25000, Currency: "THB", Country: "TH", Method: "PROMPTPAY",
		ExpiresAt: e.clock.Now().Add(30 * time.Minute)}
	r = e.p.CreatePayment(ctx, pp)
	is.Equal(r.Outcome, paykit.OutcomeRequiresAction)
	is.Equal(r.Action.Type, paykit.NextActionDisplayQRCode)
	is.True(strings.HasPrefix(r.Action.QRData, "000201"))
	is.Equal(r.Action.ExpiresAt, pp.ExpiresAt) // channel_properties.expires_at

	va := paykit.PaymentRequest{Key: "pay_va", Amount: 50000, Currency: "MYR", Country: "MY", Method: "BANK_TRANSFER"}
	r = e.p.CreatePayment(ctx, va)
	is.Equal(r.Outcome, paykit.OutcomeRequiresAction)
	is.Equal(r.Action.Type, paykit.NextActionBankTransferInstructions)
	is.Equal(r.Action.BankName, "AmBank")
	is.Equal(r.Action.AccountHolder, "Kedai Paykit")
	is.True(r.Action.AccountNumber != "")

	fpx := paykit.PaymentRequest{Key: "pay_fpx", Amount: 15000, Currency: "MYR", Country: "MY", Method: "FPX",
		Options: map[string]string{"bank": "MAYB2U_FPX"}, ReturnURL: "https://pay.example/pay/return/x"}
	is.Equal(e.p.CreatePayment(ctx, fpx).Outcome, paykit.OutcomeRequiresAction)

	// SUCCEEDED: the fee and settlement estimate of its transaction.
	is.NoErr(e.f.Approve("pay_redirect"))
	r = e.p.InquirePayment(ctx, paykit.AttemptRef{Key: "pay_redirect"})
	is.Equal(r.Outcome, paykit.OutcomeSucceeded)
	fee, _ := e.f.Fee("pay_redirect")
	is.Equal(r.Fee, fee)
	is.Equal(fee, int64(375+30)) // 2.5 % of 150.00, and 8 % of that
	is.Equal(r.AvailableOn, e.clock.Now().Add(48*time.Hour))

	// FAILED: a payer who declines, and an amount the fake declines at once.
	is.NoErr(e.f.Decline("pay_fpx"))
	r = e.p.InquirePayment(ctx, paykit.AttemptRef{Key: "pay_fpx"})
	is.Equal(r.Outcome, paykit.OutcomeFailed)
	is.Equal(r.FailureCode, paykit.FailureProviderDeclined)
	is.True(strings.Contains(r.Detail, "USER_DECLINED_PAYMENT"))
	r = e.p.CreatePayment(ctx, tng("pay_declined", 10901))
	is.Equal(r.Outcome, paykit.OutcomeFailed)

	// CANCELED by paykit's cancel; EXPIRED at Xendit.
	r = e.p.CancelPayment(ctx, paykit.AttemptRef{Key: "pay_qr"})
	is.Equal(r.Outcome, paykit.OutcomeCancelled)
	is.NoErr(e.f.Expire("pay_va"))
	is.Equal(e.p.InquirePayment(ctx, paykit.AttemptRef{Key: "pay_va"}).Outcome, paykit.OutcomeCancelled)
	// A cancel of what is final answers its state.
	is.Equal(e.p.CancelPayment(ctx, paykit.AttemptRef{Key: "pay_redirect"}).Outcome, paykit.OutcomeSucceeded)
}

// Xendit's refusals before anything is made are Refused, so paykit may
// try the next route: an amount outside the channel's documented limits,
// a channel the account does not have, a method the adapter does not
// serve in the country.
func TestRefusedPayments(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	e := newEnv(t, xenditfake.Options{})
	r := e.p.CreatePayment(ctx, tng("too_much", 2500001))
	is.Equal(r.Outcome, paykit.OutcomeRefused)
	is.True(strings.Contains(r.Detail, "INVALID_VALUE_ERROR"))
	e.f.DisableChannel("TOUCHNGO", true)
	is.Equal(e.p.CreatePayment(ctx, tng("no_channel", 1500)).Outcome, paykit.OutcomeRefused)
	is.Equal(e.f.PaymentRequests("no_channel"), 0)
	pp := tng("card", 1500)
	pp.Method = "CARD"
	is.Equal(e.p.CreatePayment(ctx, pp).Outcome, paykit.OutcomeRefused)
}

// Refund statuses: PENDING, SUCCEEDED, FAILED and CANCELLED, and the
// refusals Xendit states for a payment (amount above what is left, a
// channel without refunds) are failed refunds.
func TestRefundStatuses(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	e := newEnv(t, xenditfake.Options{})
	paid := e.p.CreatePayment(ctx, tng("rf_pay", 30000))
	is.NoErr(e.f.Approve("rf_pay"))
	refund := func(key string, amount int64) paykit.Result {
		return e.p.CreateRefund(ctx, paykit.RefundRequest{Key: key, PaymentKey: "rf_pay", PaymentRef: paid.Reference, Amount: amount, Currency: "MYR"})
	}
	r := refund("rf_1", 10000)
	is.Equal(r.Outcome, paykit.OutcomePending)
	is.True(strings.HasPrefix(r.Reference, "rfd-"))
	is.NoErr(e.f.SettleRefund("rf_1"))
	is.Equal(e.p.InquireRefund(ctx, paykit.AttemptRef{Key: "rf_1", Reference: r.Reference}).Outcome, paykit.OutcomeSucceeded)

	is.Equal(refund("rf_2", 5000).Outcome, paykit.OutcomePending)
	is.NoErr(e.f.FailRefund("rf_2"))
	r = e.p.InquireRefund(ctx, paykit.AttemptRef{Key: "rf_2"})
	is.Equal(r.Outcome, paykit.OutcomeFailed)
	is.Equal(r.FailureCode, paykit.RefundProviderDeclined)

	is.Equal(refund("rf_3", 5000).Outcome, paykit.OutcomePending)
	is.NoErr(e.f.CancelRefund("rf_3"))
	is.Equal(e.p.InquireRefund(ctx, paykit.AttemptRef{Key: "rf_3"}).Outcome, paykit.OutcomeFailed)

	r = refund("rf_4", 25000) // 20000 is left
	is.Equal(r.Outcome, paykit.OutcomeFailed)
	is.True(strings.Contains(r.Detail, "REFUND_AMOUNT_EXCEEDED"))

	// The refund is found without the payment's Reference, by its key.
	r = e.p.CreateRefund(ctx, paykit.RefundRequest{Key: "rf_5", PaymentKey: "rf_pay", Amount: 1000, Currency: "MYR"})
	is.Equal(r.Outcome, paykit.OutcomePending)

	// PromptPay takes no refunds at Xendit.
	pp := e.p.CreatePayment(ctx, paykit.PaymentRequest{Key: "rf_pp", Amount: 25000, Currency: "THB", Country: "TH", Method: "PROMPTPAY"})
	is.NoErr(e.f.Approve("rf_pp"))
	r = e.p.CreateRefund(ctx, paykit.RefundRequest{Key: "rf_6", PaymentKey: "rf_pp", PaymentRef: pp.Reference, Amount: 25000, Currency: "THB"})
	is.Equal(r.Outcome, paykit.OutcomeFailed)
	is.True(strings.Contains(r.Detail, "REFUND_NOT_SUPPORTED"))
}

// Every payout status of the Payouts API v2: ACCEPTED,
// PENDING_COMPLIANCE_ASSESSMENT and REQUESTED are in flight, SUCCEEDED
// succeeded, FAILED failed (INVALID_DESTINATION: account_invalid),
// COMPLIANCE_REJECTED failed, CANCELLED cancelled, and REVERSED after a
// success is a return.
func TestPayoutStatuses(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	e := newEnv(t, xenditfake.Options{})
	inquire := func(key string) paykit.Result { return e.p.InquirePayout(ctx, paykit.AttemptRef{Key: key}) }

	r := e.p.CreatePayout(ctx, payout("po_ok", "1234567890"))
	is.Equal(r.Outcome, paykit.OutcomePending) // ACCEPTED
	is.True(strings.HasPrefix(r.Reference, "disb-"))
	is.NoErr(e.f.SendPayout("po_ok"))
	is.Equal(inquire("po_ok").Outcome, paykit.OutcomePending) // REQUESTED
	is.NoErr(e.f.CompletePayout("po_ok"))
	is.Equal(inquire("po_ok").Outcome, paykit.OutcomeSucceeded)
	is.NoErr(e.f.ReversePayout("po_ok"))
	is.Equal(inquire("po_ok").Outcome, paykit.OutcomeReturned)

	is.Equal(e.p.CreatePayout(ctx, payout("po_bad", xenditfake.InvalidAccount)).Outcome, paykit.OutcomePending)
	is.NoErr(e.f.FailPayout("po_bad", "INVALID_DESTINATION"))
	r = inquire("po_bad")
	is.Equal(r.Outcome, paykit.OutcomeFailed)
	is.Equal(r.FailureCode, paykit.FailureAccountInvalid)

	is.Equal(e.p.CreatePayout(ctx, payout("po_fail", "1234567890")).Outcome, paykit.OutcomePending)
	is.NoErr(e.f.FailPayout("po_fail", "REJECTED_BY_CHANNEL"))
	r = inquire("po_fail")
	is.Equal(r.Outcome, paykit.OutcomeFailed)
	is.Equal(r.FailureCode, paykit.FailureProviderDeclined)

	is.Equal(e.p.CreatePayout(ctx, payout("po_kyc", "1234567890")).Outcome, paykit.OutcomePending)
	is.NoErr(e.f.HoldForCompliance("po_kyc"))
	is.Equal(inquire("po_kyc").Outcome, paykit.OutcomePending)
	is.NoErr(e.f.RejectForCompliance("po_kyc"))
	is.Equal(inquire("po_kyc").Outcome, paykit.OutcomeFailed)

	// CANCELLED while ACCEPTED (account 131313 stays so); once sent, the
	// cancel answers the payout's state.
	is.Equal(e.p.CreatePayout(ctx, payout("po_cancel", xenditfake.HoldAccount)).Outcome, paykit.OutcomePending)
	is.Equal(e.p.CancelPayout(ctx, paykit.AttemptRef{Key: "po_cancel"}).Outcome, paykit.OutcomeCancelled)
	is.Equal(e.p.CreatePayout(ctx, payout("po_sent", "1234567890")).Outcome, paykit.OutcomePending)
	is.NoErr(e.f.SendPayout("po_sent"))
	is.Equal(e.p.CancelPayout(ctx, paykit.AttemptRef{Key: "po_sent"}).Outcome, paykit.OutcomePending)

	// Validation refusals: an account number Xendit refuses is invalid;
	// a channel it does not pay out to is refused (nothing was made).
	bad := payout("po_letters", "12AB")
	r = e.p.CreatePayout(ctx, bad)
	is.Equal(r.Outcome, paykit.OutcomeFailed)
	is.Equal(r.FailureCode, paykit.FailureAccountInvalid)
	bad = payout("po_channel", "1234567890")
	bad.BankCode = "SG_DBS"
	is.Equal(e.p.CreatePayout(ctx, bad).Outcome, paykit.OutcomeRefused)
}

// Dispute statuses: ACTION_REQUIRED needs a response, a challenge with
// evidence is UNDER_REVIEW, then WON or LOST; an accept is LOST. The
// disputed payment is named by its payment request, read from the
// payment the dispute names.
func TestDisputeStatuses(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	e := newEnv(t, xenditfake.Options{})
	paid := func(key string) paykit.Result {
		r := e.p.CreatePayment(ctx, tng(key, 40000))
		is.NoErr(e.f.Approve(key))
		return r
	}
	p1 := paid("dsp_1")
	id, err := e.f.OpenDispute("dsp_1", 40000, "product_not_received")
	is.NoErr(err)
	d, err := e.p.InquireDispute(ctx, id)
	is.NoErr(err)
	is.Equal(d.Status, paykit.DisputeNeedsResponse)
	is.Equal(d.Reason, paykit.DisputeProductNotReceived)
	is.Equal(d.PaymentRef, p1.Reference)
	is.Equal(d.PaymentKey, "dsp_1")
	is.Equal(d.Amount, int64(40000))
	is.Equal(d.EvidenceDueBy, e.clock.Now().Add(7*24*time.Hour))

	d, err = e.p.SubmitDisputeEvidence(ctx, id, "Delivered on 24 November, signed for at the door.")
	is.NoErr(err)
	is.Equal(d.Status, paykit.DisputeUnderReview)
	is.NoErr(e.f.DecideDispute("dsp_1", true))
	d, err = e.p.InquireDispute(ctx, id)
	is.NoErr(err)
	is.Equal(d.Status, paykit.DisputeWon)

	paid("dsp_2")
	id, err = e.f.OpenDispute("dsp_2", 10000, "fraud")
	is.NoErr(err)
	d, err = e.p.SubmitDisputeEvidence(ctx, id, "losing_evidence: the order was refunded elsewhere")
	is.NoErr(err)
	is.Equal(d.Status, paykit.DisputeLost)
	is.Equal(d.Reason, paykit.DisputeFraudulent)

	paid("dsp_3")
	id, err = e.f.OpenDispute("dsp_3", 10000, "")
	is.NoErr(err)
	d, err = e.p.AcceptDispute(ctx, id)
	is.NoErr(err)
	is.Equal(d.Status, paykit.DisputeLost)
	is.Equal(d.Reason, paykit.DisputeGeneral)

	// Evidence longer than Xendit's TEXT category takes is cut to it.
	paid("dsp_4")
	id, err = e.f.OpenDispute("dsp_4", 10000, "")
	is.NoErr(err)
	d, err = e.p.SubmitDisputeEvidence(ctx, id, strings.Repeat("x", 2500))
	is.NoErr(err)
	is.Equal(d.Status, paykit.DisputeUnderReview)
	is.True(strings.Contains(d.Detail, "cut to the 2000 characters"))

	_, err = e.p.InquireDispute(ctx, "mi-dspt-00000000-0000-4000-8000-000000000000")
	is.True(err != nil)
}

// New refuses what it cannot work with, and Route and MethodsIn describe
// what the adapter serves.
func TestConfigAndRoutes(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	_, err := xendit.New(xendit.Config{})
	is.True(err != nil)
	_, err = xendit.New(xendit.Config{SecretKey: "xnd_x", Methods: []string{"CARD"}})
	is.True(err != nil)
	_, err = xendit.New(xendit.Config{SecretKey: "xnd_x", BaseURL: "ftp://x"})
	is.True(err != nil)
	_, err = xendit.New(xendit.Config{SecretKey: "xnd_x", CallbackTokens: []string{" "}})
	is.True(err != nil)
	p, err := xendit.New(xendit.Config{SecretKey: "xnd_x"})
	is.NoErr(err)
	is.Equal(p.Capabilities(), paykit.CapPayments|paykit.CapCancel|paykit.CapRefunds|paykit.CapPayouts|paykit.CapDisputes)

	is.Equal(xendit.MethodsIn("MY"), []string{"FPX", "BANK_TRANSFER", "TNG", "GRABPAY", "WECHAT_PAY"})
	is.Equal(xendit.MethodsIn("TH"), []string{"PROMPTPAY", "TRUEMONEY", "WECHAT_PAY"})
	r, ok := xendit.Route("FPX", "MY")
	is.True(ok)
	is.True(r.NoRefunds)
	b, ok := r.Bank("MAYBANK")
	is.True(ok)
	is.Equal(b.ProviderCode, "MAYB2U_FPX")
	r, ok = xendit.Route("WECHAT_PAY", "TH")
	is.True(ok && r.NoRefunds && r.Currency == "THB")
	r, ok = xendit.Route("WECHAT_PAY", "MY")
	is.True(ok && !r.NoRefunds)
	_, ok = xendit.Route("TNG", "TH")
	is.True(!ok)
	ccy, banks, ok := xendit.PayoutBanks("MY")
	is.True(ok)
	is.Equal(ccy, "MYR")
	is.Equal(banks[0].ProviderCode, "MY_MAYBANK")
	_, _, ok = xendit.PayoutBanks("SG")
	is.True(!ok)
}

// A payment request listed under another reference_id than the attempt's
// key is no answer about the attempt.
func TestForeignReferenceIsUnknown(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	e := newEnv(t, xenditfake.Options{})
	r := e.p.CreatePayment(ctx, tng("mine", 1500))
	got := e.p.InquirePayment(ctx, paykit.AttemptRef{Key: "someone_else", Reference: r.Reference})
	is.Equal(got.Outcome, paykit.OutcomeUnknown)
	// An unknown id is Xendit's 404: not found.
	got = e.p.InquirePayment(ctx, paykit.AttemptRef{Key: "x", Reference: "pr-00000000-0000-4000-8000-000000000000"})
	is.Equal(got.Outcome, paykit.OutcomeNotFound)
	// A key never used: the list is no proof, so Unknown.
	got = e.p.InquirePayment(ctx, paykit.AttemptRef{Key: "never"})
	is.Equal(got.Outcome, paykit.OutcomeUnknown)
}
