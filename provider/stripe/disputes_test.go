package stripe_test

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"
	"github.com/paykit/paykit"
	"github.com/paykit/paykit/provider/stripe"
	"github.com/paykit/paykit/provider/stripe/stripefake"
)

// fakeNow is the fake's and the adapter's clock in these tests.
var fakeNow = time.Date(2026, 11, 24, 15, 4, 5, 0, time.UTC)

// clocked is an adapter in front of a fake in country, both on fakeNow.
func clocked(t *testing.T, country string) env {
	t.Helper()
	clock := func() time.Time { return fakeNow }
	fake := stripefake.New(stripefake.Options{SecretKey: testSecretKey, AccountCountry: country, WebhookSecret: testWebhookSecret, Now: clock})
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	return env{fake: fake, p: newAdapter(t, srv.URL, func(c *stripe.Config) { c.AccountCountry, c.Timeout, c.Now = country, 5*time.Second, clock })}
}

// paid creates the payment under key and has the payer approve it.
func (e env) paid(t *testing.T, key, method string, amount int64) paykit.Result {
	t.Helper()
	r := e.p.CreatePayment(context.Background(), request(key, method, "MY", "MYR", amount))
	if r.Outcome != paykit.OutcomeRequiresAction {
		t.Fatalf("create %s: %s (%s)", key, r.Outcome, r.Detail)
	}
	if err := e.fake.Approve(key); err != nil {
		t.Fatal(err)
	}
	return r
}

// A succeeded payment carries the fee and available date of its charge's
// balance transaction, whichever way it is read: by id, by key, through a
// card's Checkout Session, through a cancel that finds it succeeded.
func TestSucceededPaymentsCarryTheirFee(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := clocked(t, "MY")
	available := time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC) // the fake's: three days later, at 00:00 UTC
	for _, c := range []struct {
		key, method string
		amount, fee int64
	}{
		{"feefpx", "FPX", 12345, 370},         // 3 % of 12345, half up
		{"feecard", "CARD", 12350, 371 + 100}, // 370.5 rounds up; cards add 100
	} {
		t.Run(c.method, func(t *testing.T) {
			is := is.New(t)
			r := e.paid(t, c.key, c.method, c.amount)
			fee, ok := e.fake.Fee(c.key)
			is.True(ok)
			is.Equal(fee, c.fee)
			for name, got := range map[string]paykit.Result{
				"by id":  e.p.InquirePayment(ctx, paykit.AttemptRef{Key: c.key, Reference: r.Reference}),
				"by key": e.p.InquirePayment(ctx, paykit.AttemptRef{Key: c.key}),
				"cancel": e.p.CancelPayment(ctx, paykit.AttemptRef{Key: c.key, Reference: r.Reference}),
			} {
				if got.Outcome != paykit.OutcomeSucceeded || got.Fee != c.fee || !got.AvailableOn.Equal(available) {
					t.Errorf("%s: %s fee %d available %s (%s), want succeeded fee %d available %s", name, got.Outcome, got.Fee, got.AvailableOn, got.Detail, c.fee, available)
				}
			}
		})
	}
}

// A dispute: the fake's bank opens it, the webhook and an inquiry tell
// the same dispute in paykit's words; winning evidence wins it, and the
// dispute, settled, answers as it is to another submission.
func TestDisputeWon(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	e := clocked(t, "MY")
	r := e.paid(t, "dpwin", "FPX", 20000)
	id, err := e.fake.OpenDispute("dpwin", 15000, "fraudulent")
	is.NoErr(err)
	hook, err := e.fake.Webhook("charge.dispute.created", "dpwin")
	is.NoErr(err)
	evs, err := e.p.ParseCallback(ctx, hook)
	is.NoErr(err)
	is.Equal(len(evs), 1)
	is.Equal(evs[0].Kind, "dispute")
	want := paykit.ProviderDispute{Reference: id, PaymentKey: "dpwin", PaymentRef: r.Reference, Amount: 15000, Currency: "MYR",
		Fee: stripefake.DisputeFee, Reason: paykit.DisputeFraudulent, Status: paykit.DisputeNeedsResponse, EvidenceDueBy: fakeNow.Add(7 * 24 * time.Hour)}
	got := *evs[0].Dispute
	got.Detail = ""
	is.Equal(got, want)

	inq, err := e.p.InquireDispute(ctx, id)
	is.NoErr(err)
	inq.Detail = ""
	is.Equal(inq, want)

	won, err := e.p.SubmitDisputeEvidence(ctx, id, "Delivered on 2026-11-20; winning_evidence")
	is.NoErr(err)
	is.Equal(won.Status, paykit.DisputeWon)
	is.Equal(won.Fee, int64(stripefake.DisputeFee)) // kept, though won
	again, err := e.p.SubmitDisputeEvidence(ctx, id, "more")
	is.NoErr(err) // Stripe refuses: the dispute as it is
	is.Equal(again.Status, paykit.DisputeWon)
	acc, err := e.p.AcceptDispute(ctx, id)
	is.NoErr(err)
	is.Equal(acc.Status, paykit.DisputeWon)

	// A disputed payment cannot be refunded.
	rf := e.p.CreateRefund(ctx, paykit.RefundRequest{Key: "dpwinrf", PaymentRef: r.Reference, Amount: 100, Currency: "MYR"})
	is.Equal(rf.Outcome, paykit.OutcomeFailed)
	is.Equal(rf.FailureCode, paykit.RefundProviderDeclined)
	is.True(strings.Contains(rf.Detail, "charge_disputed"))
}

// Other evidence leaves the dispute under review until the bank decides;
// losing evidence loses it; a merchant who concedes (close) loses it, and
// conceding again answers it lost. A card payment's dispute names its
// Checkout Session, paykit's Reference of it.
func TestDisputeLostAndAccepted(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	e := clocked(t, "MY")

	e.paid(t, "dpreview", "FPX", 5000)
	id, err := e.fake.OpenDispute("dpreview", 0, "")
	is.NoErr(err)
	d, err := e.p.SubmitDisputeEvidence(ctx, id, "the receipt")
	is.NoErr(err)
	is.Equal(d.Status, paykit.DisputeUnderReview)
	is.Equal(d.Amount, int64(5000)) // the whole payment by default
	is.Equal(d.Reason, paykit.DisputeGeneral)
	is.NoErr(e.fake.DecideDispute(id, false))
	d, err = e.p.InquireDispute(ctx, id)
	is.NoErr(err)
	is.Equal(d.Status, paykit.DisputeLost)

	e.paid(t, "dplose", "FPX", 5000)
	id, err = e.fake.OpenDispute("dplose", 0, "product_unacceptable")
	is.NoErr(err)
	d, err = e.p.SubmitDisputeEvidence(ctx, id, "losing_evidence")
	is.NoErr(err)
	is.Equal(d.Status, paykit.DisputeLost)
	is.Equal(d.Reason, paykit.DisputeProductUnacceptable)

	card := e.paid(t, "dpcard", "CARD", 5000)
	id, err = e.fake.OpenDispute("dpcard", 2000, "duplicate")
	is.NoErr(err)
	d, err = e.p.AcceptDispute(ctx, id)
	is.NoErr(err)
	is.Equal(d.Status, paykit.DisputeLost)
	is.Equal(d.PaymentRef, card.Reference)
	is.True(strings.HasPrefix(d.PaymentRef, "cs_"))
	is.Equal(d.PaymentKey, "dpcard")
	d, err = e.p.AcceptDispute(ctx, id)
	is.NoErr(err)
	is.Equal(d.Status, paykit.DisputeLost)

	_, err = e.p.InquireDispute(ctx, "du_000000000000000000000000")
	is.True(err != nil) // Stripe's resource_missing
	is.True(strings.Contains(err.Error(), "resource_missing"))
}

// Dispute calls that get no trustworthy answer are errors, which paykit
// may repeat.
func TestDisputeCallsWithoutAnswer(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	down := httptest.NewServer(nil)
	down.Close()
	p := newAdapter(t, down.URL)
	_, err := p.InquireDispute(ctx, "du_1")
	is.True(err != nil)
	_, err = p.SubmitDisputeEvidence(ctx, "du_1", "text")
	is.True(err != nil)
	_, err = p.AcceptDispute(ctx, "du_1")
	is.True(err != nil)
}

// The fake posts its dispute events, signed; each parses to the dispute
// as it was then.
func TestDisputeWebhookDelivery(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	cb := &callbacks{}
	hook := httptest.NewServer(cb)
	defer hook.Close()
	fake := stripefake.New(stripefake.Options{SecretKey: testSecretKey, AccountCountry: "MY", WebhookSecret: testWebhookSecret, WebhookURL: hook.URL})
	api := httptest.NewServer(fake)
	defer api.Close()
	cb.p = newAdapter(t, api.URL, func(c *stripe.Config) { c.Timeout = 5 * time.Second })
	r := cb.p.CreatePayment(ctx, request("dphook", "FPX", "MY", "MYR", 5000))
	is.NoErr(fake.Approve("dphook"))
	id, err := fake.OpenDispute("dphook", 0, "")
	is.NoErr(err)
	_, err = cb.p.SubmitDisputeEvidence(ctx, id, "winning_evidence")
	is.NoErr(err)

	cb.mu.Lock()
	defer cb.mu.Unlock()
	is.Equal(len(cb.errs), 0)
	var statuses []paykit.DisputeStatus
	for _, e := range cb.events {
		if e.Kind == "dispute" {
			is.Equal(e.Dispute.Reference, id)
			is.Equal(e.Dispute.PaymentRef, r.Reference)
			statuses = append(statuses, e.Dispute.Status)
		}
	}
	// created, funds_withdrawn, updated (submitted), funds_reinstated, closed
	is.Equal(statuses, []paykit.DisputeStatus{paykit.DisputeNeedsResponse, paykit.DisputeNeedsResponse,
		paykit.DisputeUnderReview, paykit.DisputeWon, paykit.DisputeWon})
}
