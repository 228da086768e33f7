package opn_test

import (
	"context"
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

// fakeNow is the fake's and the adapter's clock in these tests.
var fakeNow = time.Date(2026, 11, 24, 15, 4, 5, 0, time.UTC)

// clocked serves a fake on fakeNow and returns it with an adapter on the
// same clock calling it.
func clocked(t *testing.T) (*opnfake.Fake, *opn.Provider) {
	t.Helper()
	clock := func() time.Time { return fakeNow }
	f := opnfake.New(opnfake.Options{SecretKey: testSecret, Now: clock})
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	p, err := opn.New(opn.Config{SecretKey: testSecret, BaseURL: srv.URL, WebhookSecrets: []string{f.WebhookSecret()}, Timeout: 5 * time.Second, Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	return f, p
}

// paidCharge creates a PromptPay charge under key and approves it.
func paidCharge(t *testing.T, f *opnfake.Fake, p *opn.Provider, key string, amount int64) paykit.Result {
	t.Helper()
	r := p.CreatePayment(context.Background(), promptpay(key, amount))
	if r.Outcome != paykit.OutcomeRequiresAction {
		t.Fatalf("create %s: %s (%s)", key, r.Outcome, r.Detail)
	}
	if err := f.Approve(key); err != nil {
		t.Fatal(err)
	}
	return r
}

// A successful charge's result carries fee + fee_vat as Opn states them,
// and the transferable_at of its transaction, by id, by key and in its
// charge.complete webhook.
func TestSuccessfulChargesCarryTheirFee(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	f, p := clocked(t)
	r := paidCharge(t, f, p, "fee_k", 12345)
	fee, ok := f.Fee("fee_k")
	is.True(ok)
	is.Equal(fee, int64(451+32)) // Opn's documented example: 3.65 % of 12345 and 7 % VAT on it
	transferable := time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC)
	hook, err := f.Webhook("charge.complete", "fee_k")
	is.NoErr(err)
	evs, err := p.ParseCallback(ctx, hook)
	is.NoErr(err)
	is.Equal(len(evs), 1)
	for name, got := range map[string]paykit.Result{
		"by id":   p.InquirePayment(ctx, paykit.AttemptRef{Key: "fee_k", Reference: r.Reference}),
		"by key":  p.InquirePayment(ctx, paykit.AttemptRef{Key: "fee_k"}),
		"webhook": evs[0].Result,
	} {
		if got.Outcome != paykit.OutcomeSucceeded || got.Fee != fee || !got.AvailableOn.Equal(transferable) {
			t.Errorf("%s: %s fee %d available %s (%s), want succeeded fee %d available %s", name, got.Outcome, got.Fee, got.AvailableOn, got.Detail, fee, transferable)
		}
	}
}

// A dispute: opened by the payer's bank, its webhook and an inquiry tell
// the same dispute in paykit's words; the merchant's message makes it
// pending (under review) until the bank decides; a winning message wins it
// at once. A settled dispute answers as it is to another submission.
func TestDisputeFlow(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	f, p := clocked(t)
	r := paidCharge(t, f, p, "dsp_k", 20000)
	id, err := f.OpenDispute("dsp_k", 15000, "fraudulent")
	is.NoErr(err)
	hook, err := f.Webhook("dispute.create", "dsp_k")
	is.NoErr(err)
	evs, err := p.ParseCallback(ctx, hook)
	is.NoErr(err)
	is.Equal(len(evs), 1)
	is.Equal(evs[0].Kind, "dispute")
	want := paykit.ProviderDispute{Reference: id, PaymentKey: "dsp_k", PaymentRef: r.Reference, Amount: 15000, Currency: "THB",
		Reason: paykit.DisputeFraudulent, Status: paykit.DisputeNeedsResponse}
	got := *evs[0].Dispute
	got.Detail = ""
	is.Equal(got, want)
	inq, err := p.InquireDispute(ctx, id)
	is.NoErr(err)
	inq.Detail = ""
	is.Equal(inq, want)

	// A disputed charge cannot be refunded.
	rf := p.CreateRefund(ctx, paykit.RefundRequest{Key: "dsp_k_rf", PaymentRef: r.Reference, Amount: 100, Currency: "THB"})
	is.Equal(rf.Outcome, paykit.OutcomeFailed)

	d, err := p.SubmitDisputeEvidence(ctx, id, "The goods were delivered on 2026-11-20.")
	is.NoErr(err)
	is.Equal(d.Status, paykit.DisputeUnderReview)
	again, err := p.SubmitDisputeEvidence(ctx, id, "more")
	is.NoErr(err) // no longer open: as it is
	is.Equal(again.Status, paykit.DisputeUnderReview)
	is.NoErr(f.DecideDispute(id, true))
	d, err = p.InquireDispute(ctx, id)
	is.NoErr(err)
	is.Equal(d.Status, paykit.DisputeWon)

	paidCharge(t, f, p, "dsp_w", 5000)
	id, err = f.OpenDispute("dsp_w", 0, "")
	is.NoErr(err)
	d, err = p.SubmitDisputeEvidence(ctx, id, "winning_evidence")
	is.NoErr(err)
	is.Equal(d.Status, paykit.DisputeWon)
	is.Equal(d.Amount, int64(5000)) // the whole charge by default
	is.Equal(d.Reason, paykit.DisputeProductNotReceived)
	d, err = p.AcceptDispute(ctx, id)
	is.NoErr(err) // no longer open: as it is
	is.Equal(d.Status, paykit.DisputeWon)
}

// Accepting a dispute loses it, and accepting it again answers it lost;
// losing evidence loses it too.
func TestDisputeAcceptedAndLost(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	f, p := clocked(t)
	paidCharge(t, f, p, "acc_k", 5000)
	id, err := f.OpenDispute("acc_k", 0, "duplicate_processing")
	is.NoErr(err)
	d, err := p.AcceptDispute(ctx, id)
	is.NoErr(err)
	is.Equal(d.Status, paykit.DisputeLost)
	is.Equal(d.Reason, paykit.DisputeDuplicate)
	d, err = p.AcceptDispute(ctx, id)
	is.NoErr(err)
	is.Equal(d.Status, paykit.DisputeLost)

	paidCharge(t, f, p, "lose_k", 5000)
	id, err = f.OpenDispute("lose_k", 0, "not_as_described")
	is.NoErr(err)
	d, err = p.SubmitDisputeEvidence(ctx, id, "losing_evidence")
	is.NoErr(err)
	is.Equal(d.Status, paykit.DisputeLost)
	is.Equal(d.Reason, paykit.DisputeProductUnacceptable)

	_, err = p.InquireDispute(ctx, "dspt_test_5zz0000000000000000")
	is.True(err != nil) // Opn's not_found
	is.True(strings.Contains(err.Error(), "not_found"))
}

// Opn's statuses and reason codes in paykit's words; a status the adapter
// does not know is an error.
func TestDisputeMapping(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	sec := secret(t)
	p, err := opn.New(opn.Config{SecretKey: testSecret, WebhookSecrets: []string{sec}, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	event := func(status, reason string) string {
		return `{"object":"event","id":"evnt_test_d","key":"dispute.update","data":{"object":"dispute","id":"dspt_test_1","amount":3000,"currency":"thb",` +
			`"status":"` + status + `","reason_code":"` + reason + `","charge":{"object":"charge","id":"chrg_test_1","metadata":{"paykit_key":"k_d"}}}}`
	}
	cases := []struct {
		status, reason string
		want           paykit.DisputeStatus
		wantReason     paykit.DisputeReason
	}{
		{"open", "goods_or_services_not_provided", paykit.DisputeNeedsResponse, paykit.DisputeProductNotReceived},
		{"pending", "fraudulent_transaction", paykit.DisputeUnderReview, paykit.DisputeFraudulent},
		{"won", "duplicate_processing", paykit.DisputeWon, paykit.DisputeDuplicate},
		{"lost", "credit_not_processed", paykit.DisputeLost, paykit.DisputeCreditNotProcessed},
		{"closed", "not_as_described", paykit.DisputeLost, paykit.DisputeProductUnacceptable},
		{"open", "other", paykit.DisputeNeedsResponse, paykit.DisputeGeneral},
	}
	for _, c := range cases {
		t.Run(c.status+"_"+c.reason, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			evs, err := p.ParseCallback(context.Background(), signedEvent(t, event(c.status, c.reason), now, sec))
			is.NoErr(err)
			is.Equal(len(evs), 1)
			d := evs[0].Dispute
			is.Equal(evs[0].Kind, "dispute")
			is.Equal(d.Status, c.want)
			is.Equal(d.Reason, c.wantReason)
			is.Equal(d.Amount, int64(3000))
			is.Equal(d.Currency, "THB")
			is.Equal(d.PaymentRef, "chrg_test_1")
			is.Equal(d.PaymentKey, "k_d") // from the expanded charge: no call
		})
	}
	t.Run("unknown status", func(t *testing.T) {
		t.Parallel()
		is := is.New(t)
		_, err := p.ParseCallback(context.Background(), signedEvent(t, event("escalated", "general"), now, sec))
		is.True(err != nil)
		is.True(strings.Contains(err.Error(), "escalated"))
	})
}

// Dispute calls without Opn's answer are errors, which paykit may repeat.
func TestDisputeCallsWithoutAnswer(t *testing.T) {
	t.Parallel()
	for name, h := range map[string]http.HandlerFunc{
		"502":             func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(502) },
		"a 404 not Opn's": http.NotFound,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			ctx := context.Background()
			srv := httptest.NewServer(h)
			defer srv.Close()
			p, err := opn.New(opn.Config{SecretKey: testSecret, BaseURL: srv.URL, Timeout: 5 * time.Second})
			is.NoErr(err)
			_, err = p.InquireDispute(ctx, "dspt_test_1")
			is.True(err != nil)
			_, err = p.SubmitDisputeEvidence(ctx, "dspt_test_1", "text")
			is.True(err != nil)
			_, err = p.AcceptDispute(ctx, "dspt_test_1")
			is.True(err != nil)
		})
	}
}

// The fake posts its dispute events, signed; each parses to the dispute
// as it was then.
func TestDisputeWebhookDelivery(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	var (
		mu       sync.Mutex
		statuses []paykit.DisputeStatus
		errs     []error
		p        *opn.Provider
	)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		evs, err := p.ParseCallback(r.Context(), r)
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			errs = append(errs, err)
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		for _, e := range evs {
			if e.Kind == "dispute" {
				statuses = append(statuses, e.Dispute.Status)
			}
		}
	}))
	defer hook.Close()
	f := opnfake.New(opnfake.Options{SecretKey: testSecret, WebhookURL: hook.URL})
	api := httptest.NewServer(f)
	defer api.Close()
	p = adapterWithin(t, f, api.URL, 5*time.Second)
	paidCharge(t, f, p, "hook_d", 5000)
	id, err := f.OpenDispute("hook_d", 0, "")
	is.NoErr(err)
	_, err = p.SubmitDisputeEvidence(context.Background(), id, "winning_evidence")
	is.NoErr(err)
	mu.Lock()
	defer mu.Unlock()
	is.Equal(len(errs), 0)
	// dispute.create, dispute.update (pending), dispute.close (won)
	is.Equal(statuses, []paykit.DisputeStatus{paykit.DisputeNeedsResponse, paykit.DisputeUnderReview, paykit.DisputeWon})
}
