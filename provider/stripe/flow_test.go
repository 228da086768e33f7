package stripe_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"
	"github.com/paykit/paykit"
	"github.com/paykit/paykit/provider/stripe"
	"github.com/paykit/paykit/provider/stripe/stripefake"
)

// env is a fake of an account in country and an adapter in front of it.
type env struct {
	fake *stripefake.Fake
	p    *stripe.Provider
}

func newEnv(t *testing.T, country string) env {
	t.Helper()
	fake := stripefake.New(stripefake.Options{SecretKey: testSecretKey, AccountCountry: country, WebhookSecret: testWebhookSecret})
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	// The fake answers at once: a long timeout keeps a loaded machine from
	// turning its answers into timeouts.
	return env{fake: fake, p: newAdapter(t, srv.URL, func(c *stripe.Config) { c.AccountCountry, c.Timeout = country, 5*time.Second })}
}

func request(key, method, country, ccy string, amount int64) paykit.PaymentRequest {
	r := paykit.PaymentRequest{
		Key: key, Amount: amount, Currency: ccy, Country: country, Method: method,
		Customer:  map[string]string{"name": "Payer", "email": "payer@example.com"},
		ReturnURL: "https://pay.example/pay/return/" + key,
	}
	if method == "FPX" {
		r.Options = map[string]string{"bank": "cimb"}
	}
	return r
}

// Each method answers its next action; the payer approves; inquiries by id
// and by key agree; the payment refunds, pending then succeeded.
func TestMethodFlows(t *testing.T) {
	t.Parallel()
	cases := []struct {
		method, country, ccy, action, refPrefix, check string
	}{
		{"FPX", "MY", "MYR", paykit.NextActionRedirectToURL, "pi_", "https://pm-redirects.stripe.com/"},
		{"GRABPAY", "MY", "MYR", paykit.NextActionRedirectToURL, "pi_", "https://pm-redirects.stripe.com/"},
		{"ALIPAY", "MY", "MYR", paykit.NextActionRedirectToURL, "pi_", "https://hooks.stripe.com/"},
		{"CARD", "MY", "MYR", paykit.NextActionRedirectToURL, "cs_", "https://checkout.stripe.com/"},
		{"PROMPTPAY", "TH", "THB", paykit.NextActionDisplayQRCode, "pi_", "000201010212"},
		{"WECHAT_PAY", "SG", "SGD", paykit.NextActionRedirectToURL, "pi_", "https://payments.stripe.com/qr/instructions/"},
	}
	for _, c := range cases {
		t.Run(c.method, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			ctx := context.Background()
			e := newEnv(t, c.country)
			key := "flow_" + c.method
			r := e.p.CreatePayment(ctx, request(key, c.method, c.country, c.ccy, 12345))
			is.Equal(r.Outcome, paykit.OutcomeRequiresAction)
			is.True(strings.HasPrefix(r.Reference, c.refPrefix))
			is.Equal(r.Action.Type, c.action)
			got := r.Action.URL + r.Action.QRData
			is.True(strings.HasPrefix(got, c.check)) // the Provider's page or QR payload
			is.Equal(r.FailureCode, "")

			is.NoErr(e.fake.Approve(key))
			byID := e.p.InquirePayment(ctx, paykit.AttemptRef{Key: key, Reference: r.Reference})
			is.Equal(byID.Outcome, paykit.OutcomeSucceeded)
			byKey := e.p.InquirePayment(ctx, paykit.AttemptRef{Key: key})
			is.Equal(byKey.Outcome, paykit.OutcomeSucceeded)
			is.Equal(byKey.Reference, r.Reference) // the same attempt, card included

			rf := e.p.CreateRefund(ctx, paykit.RefundRequest{Key: key + "_rf", PaymentKey: key, PaymentRef: r.Reference, Amount: 2345, Currency: c.ccy})
			is.Equal(rf.Outcome, paykit.OutcomePending)
			is.True(strings.HasPrefix(rf.Reference, "re_"))
			amount, ccy, ok := e.fake.Received(key + "_rf")
			is.True(ok)
			is.Equal(amount, int64(2345))
			is.Equal(ccy, c.ccy)
			is.NoErr(e.fake.SettleRefund(key + "_rf"))
			is.Equal(e.p.InquireRefund(ctx, paykit.AttemptRef{Key: key + "_rf", Reference: rf.Reference}).Outcome, paykit.OutcomeSucceeded)
			is.Equal(e.p.InquireRefund(ctx, paykit.AttemptRef{Key: key + "_rf"}).Outcome, paykit.OutcomeSucceeded)
		})
	}
}

// The PromptPay QR data is an EMVCo payload for the amount, with a CRC.
func TestPromptPayQRIsEMVCo(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	e := newEnv(t, "TH")
	r := e.p.CreatePayment(context.Background(), request("qr", "PROMPTPAY", "TH", "THB", 150050))
	is.Equal(r.Outcome, paykit.OutcomeRequiresAction)
	qr := r.Action.QRData
	is.True(strings.HasPrefix(qr, "000201"))
	is.True(strings.Contains(qr, "5303764"))     // THB
	is.True(strings.Contains(qr, "54071500.50")) // the amount
	is.True(strings.Contains(qr, "6304"))        // CRC follows
	is.Equal(len(qr[strings.LastIndex(qr, "6304")+4:]), 4)
}

// A decline by the payer's bank is Failed with provider_declined, the
// local code in Detail; a decline at confirmation (402) too, with the
// PaymentIntent's id.
func TestDeclines(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	e := newEnv(t, "MY")
	r := e.p.CreatePayment(ctx, request("dec", "FPX", "MY", "MYR", 5000))
	is.Equal(r.Outcome, paykit.OutcomeRequiresAction)
	is.NoErr(e.fake.Decline("dec"))
	got := e.p.InquirePayment(ctx, paykit.AttemptRef{Key: "dec", Reference: r.Reference})
	is.Equal(got.Outcome, paykit.OutcomeFailed)
	is.Equal(got.FailureCode, paykit.FailureProviderDeclined)
	is.True(strings.Contains(got.Detail, "payment_method_provider_decline"))

	now := e.p.CreatePayment(ctx, request("dec402", "FPX", "MY", "MYR", 10901))
	is.Equal(now.Outcome, paykit.OutcomeFailed)
	is.Equal(now.FailureCode, paykit.FailureProviderDeclined)
	is.True(strings.HasPrefix(now.Reference, "pi_"))
	again := e.p.CreatePayment(ctx, request("dec402", "FPX", "MY", "MYR", 10901))
	is.Equal(again.Reference, now.Reference) // the saved idempotent answer

	// On Stripe's hosted card page a declined card leaves the session
	// open: the payer may try another card.
	card := e.p.CreatePayment(ctx, request("deccard", "CARD", "MY", "MYR", 5000))
	is.NoErr(e.fake.Decline("deccard"))
	is.Equal(e.p.InquirePayment(ctx, paykit.AttemptRef{Key: "deccard", Reference: card.Reference}).Outcome, paykit.OutcomeRequiresAction)
}

// Cancel cancels an open PaymentIntent and expires an open Checkout
// Session; a succeeded payment stays succeeded.
func TestCancel(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	e := newEnv(t, "MY")
	for _, m := range []string{"FPX", "CARD"} {
		r := e.p.CreatePayment(ctx, request("cnl"+m, m, "MY", "MYR", 5000))
		is.Equal(e.p.CancelPayment(ctx, paykit.AttemptRef{Key: "cnl" + m, Reference: r.Reference}).Outcome, paykit.OutcomeCancelled)
		is.Equal(e.p.InquirePayment(ctx, paykit.AttemptRef{Key: "cnl" + m, Reference: r.Reference}).Outcome, paykit.OutcomeCancelled)
	}
	r := e.p.CreatePayment(ctx, request("paid", "FPX", "MY", "MYR", 5000))
	is.NoErr(e.fake.Approve("paid"))
	is.Equal(e.p.CancelPayment(ctx, paykit.AttemptRef{Key: "paid", Reference: r.Reference}).Outcome, paykit.OutcomeSucceeded)
	c := e.p.CreatePayment(ctx, request("paidcard", "CARD", "MY", "MYR", 5000))
	is.NoErr(e.fake.Approve("paidcard"))
	is.Equal(e.p.CancelPayment(ctx, paykit.AttemptRef{Key: "paidcard"}).Outcome, paykit.OutcomeSucceeded)
	is.Equal(e.p.CancelPayment(ctx, paykit.AttemptRef{Key: "paidcard", Reference: c.Reference}).Outcome, paykit.OutcomeSucceeded)
}

// Requests Stripe refuses before creating anything are Refused; a key
// reused with other parameters is Unknown, never Refused.
func TestRefusedAndIdempotency(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	e := newEnv(t, "MY")
	bad := request("badbank", "FPX", "MY", "MYR", 5000)
	bad.Options["bank"] = "no_such_bank"
	r := e.p.CreatePayment(ctx, bad)
	is.Equal(r.Outcome, paykit.OutcomeRefused)
	is.True(strings.Contains(r.Detail, "payment_method_data[fpx][bank]"))
	_, _, ok := e.fake.Received("badbank")
	is.True(!ok) // nothing was created

	tooBig := e.p.CreatePayment(ctx, request("big", "FPX", "MY", "MYR", 100000000))
	is.Equal(tooBig.Outcome, paykit.OutcomeRefused)
	is.True(strings.Contains(tooBig.Detail, "amount_too_large"))

	first := e.p.CreatePayment(ctx, request("reuse", "FPX", "MY", "MYR", 5000))
	is.Equal(first.Outcome, paykit.OutcomeRequiresAction)
	other := e.p.CreatePayment(ctx, request("reuse", "FPX", "MY", "MYR", 6000))
	is.Equal(other.Outcome, paykit.OutcomeUnknown) // idempotency_error: the key has an attempt
	is.True(strings.Contains(other.Detail, "idempotency_error"))

	srv := httptest.NewServer(e.fake)
	defer srv.Close()
	wk := newAdapter(t, srv.URL, func(c *stripe.Config) { c.SecretKey = "sk_test_wrong" })
	is.Equal(wk.CreatePayment(ctx, request("auth", "FPX", "MY", "MYR", 5000)).Outcome, paykit.OutcomeRefused)
	is.Equal(wk.InquirePayment(ctx, paykit.AttemptRef{Key: "reuse", Reference: first.Reference}).Outcome, paykit.OutcomeUnknown)

	// Methods the account is not configured for are never sent.
	is.Equal(e.p.CreatePayment(ctx, request("pp", "PROMPTPAY", "TH", "THB", 5000)).Outcome, paykit.OutcomeRefused)
	// PromptPay without the payer's email is not sent either.
	th := newEnv(t, "TH")
	noEmail := request("ppnoemail", "PROMPTPAY", "TH", "THB", 5000)
	noEmail.Customer = nil
	is.Equal(th.p.CreatePayment(ctx, noEmail).Outcome, paykit.OutcomeRefused)
}

// Refunds: over the refundable amount is Failed provider_declined; an
// amount the fake fails (ending in 911) is Failed after the fact.
func TestRefundFailures(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	e := newEnv(t, "MY")
	r := e.p.CreatePayment(ctx, request("rp", "FPX", "MY", "MYR", 20911))
	is.NoErr(e.fake.Approve("rp"))
	over := e.p.CreateRefund(ctx, paykit.RefundRequest{Key: "over", PaymentRef: r.Reference, Amount: 20912, Currency: "MYR"})
	is.Equal(over.Outcome, paykit.OutcomeFailed)
	is.Equal(over.FailureCode, paykit.RefundProviderDeclined)
	failed := e.p.CreateRefund(ctx, paykit.RefundRequest{Key: "f911", PaymentKey: "rp", Amount: 20911, Currency: "MYR"}) // found by key
	is.Equal(failed.Outcome, paykit.OutcomeFailed)
	is.Equal(failed.FailureCode, paykit.RefundProviderDeclined)
	is.True(strings.Contains(failed.Detail, "declined"))
	is.Equal(e.p.InquireRefund(ctx, paykit.AttemptRef{Key: "nope", Reference: "re_000000000000000000000000"}).Outcome, paykit.OutcomeNotFound)
}

// callbacks is a webhook endpoint parsing with p, recording events.
type callbacks struct {
	p      *stripe.Provider
	mu     sync.Mutex
	events []paykit.CallbackEvent
	errs   []error
}

func (c *callbacks) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	evs, err := c.p.ParseCallback(r.Context(), r)
	c.mu.Lock()
	defer c.mu.Unlock()
	if err != nil {
		c.errs = append(c.errs, err)
		http.Error(w, "bad signature", http.StatusBadRequest)
		return
	}
	c.events = append(c.events, evs...)
}

func (c *callbacks) last(key string) (paykit.CallbackEvent, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := len(c.events) - 1; i >= 0; i-- {
		if c.events[i].Key == key {
			return c.events[i], true
		}
	}
	return paykit.CallbackEvent{}, false
}

// The fake posts its events, signed, and the adapter maps them: payment
// results, card payments through their Checkout Session, refunds.
func TestWebhookDelivery(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	cb := &callbacks{}
	hook := httptest.NewServer(cb)
	defer hook.Close()
	fake := stripefake.New(stripefake.Options{SecretKey: testSecretKey, AccountCountry: "MY", WebhookSecret: testWebhookSecret, WebhookURL: hook.URL})
	api := httptest.NewServer(fake)
	defer api.Close()
	p := newAdapter(t, api.URL)
	cb.p = p

	r := p.CreatePayment(ctx, request("wh", "FPX", "MY", "MYR", 5000))
	ev, ok := cb.last("wh")
	is.True(ok)
	is.Equal(ev.Kind, "payment")
	is.Equal(ev.Result.Outcome, paykit.OutcomeRequiresAction)
	is.NoErr(fake.Approve("wh"))
	ev, _ = cb.last("wh")
	is.Equal(ev.Result.Outcome, paykit.OutcomeSucceeded)
	is.Equal(ev.Result.Reference, r.Reference)
	is.True(strings.HasPrefix(ev.ID, "evt_"))
	fee, ok := fake.Fee("wh")
	is.True(ok)
	is.Equal(ev.Result.Fee, fee) // read from Stripe: the event carries no balance transaction
	is.True(fee > 0)

	c := p.CreatePayment(ctx, request("whcard", "CARD", "MY", "MYR", 5000))
	is.NoErr(fake.Approve("whcard"))
	ev, _ = cb.last("whcard")
	is.Equal(ev.Result.Outcome, paykit.OutcomeSucceeded)
	is.Equal(ev.Result.Reference, c.Reference) // the session's event, not its PaymentIntent's
	fee, _ = fake.Fee("whcard")
	is.Equal(ev.Result.Fee, fee)

	rf := p.CreateRefund(ctx, paykit.RefundRequest{Key: "whrf", PaymentRef: r.Reference, Amount: 5000, Currency: "MYR"})
	is.NoErr(fake.SettleRefund("whrf"))
	ev, _ = cb.last("whrf")
	is.Equal(ev.Kind, "refund")
	is.Equal(ev.Result.Outcome, paykit.OutcomeSucceeded)
	is.Equal(ev.Result.Reference, rf.Reference)
	cb.mu.Lock()
	is.Equal(len(cb.errs), 0)
	cb.mu.Unlock()
}

// Without a Reference, the attempt is found by its Key: a card attempt
// (a Checkout Session without a PaymentIntent yet) too, and one past the
// newest 100 objects by search. Nothing under the key is Unknown, never
// NotFound: it is not Stripe's word (paykit then resends the create).
func TestLookupByKey(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	e := newEnv(t, "MY")
	card := e.p.CreatePayment(ctx, request("card", "CARD", "MY", "MYR", 5000))
	got := e.p.InquirePayment(ctx, paykit.AttemptRef{Key: "card"})
	is.Equal(got.Outcome, paykit.OutcomeRequiresAction)
	is.Equal(got.Reference, card.Reference)
	is.Equal(e.p.CancelPayment(ctx, paykit.AttemptRef{Key: "card"}).Outcome, paykit.OutcomeCancelled)
	is.Equal(e.p.InquirePayment(ctx, paykit.AttemptRef{Key: "never"}).Outcome, paykit.OutcomeUnknown)

	for i := range 101 {
		r := e.p.CreatePayment(ctx, request("many"+strconv.Itoa(i), "FPX", "MY", "MYR", 5000))
		is.Equal(r.Outcome, paykit.OutcomeRequiresAction)
	}
	unknown := e.p.InquirePayment(ctx, paykit.AttemptRef{Key: "never"})
	is.Equal(unknown.Outcome, paykit.OutcomeUnknown)
	is.Equal(e.p.CancelPayment(ctx, paykit.AttemptRef{Key: "never"}).Outcome, paykit.OutcomeUnknown)
	is.Equal(e.p.InquirePayment(ctx, paykit.AttemptRef{Key: "many0"}).Outcome, paykit.OutcomeRequiresAction) // found by search
}
