package xendit_test

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/provider/xendit"
	"github.com/paykit/paykit/provider/xendit/xenditfake"
)

// webhook returns the fake's webhook of event about key.
func (e *env) webhook(t *testing.T, event, key string) *http.Request {
	t.Helper()
	r, err := e.f.Webhook(event, key)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// withToken is r with its body and the callback token tok ("": none).
func withToken(t *testing.T, r *http.Request, tok string, body []byte) *http.Request {
	t.Helper()
	if body == nil {
		var err error
		if body, err = io.ReadAll(r.Body); err != nil {
			t.Fatal(err)
		}
	}
	c := r.Clone(context.Background())
	c.Body = io.NopCloser(bytes.NewReader(body))
	c.Header.Del(xendit.CallbackTokenHeader)
	if tok != "" {
		c.Header.Set(xendit.CallbackTokenHeader, tok)
	}
	return c
}

// The x-callback-token is compared with each of the account's tokens
// (two during a rotation); a webhook without one, or with another, is
// refused.
func TestCallbackToken(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	e := newEnv(t, xenditfake.Options{})
	e.p.CreatePayment(ctx, tng("wh_tok", 1500))
	for _, tok := range []string{testToken, "old-token"} {
		events, err := e.p.ParseCallback(ctx, withToken(t, e.webhook(t, "payment.capture", "wh_tok"), tok, nil))
		is.NoErr(err)
		is.Equal(len(events), 1)
	}
	for _, tok := range []string{"", "not-the-token", testToken + " ", strings.ToUpper(testToken)} {
		_, err := e.p.ParseCallback(ctx, withToken(t, e.webhook(t, "payment.capture", "wh_tok"), tok, nil))
		is.True(err != nil)
	}
	// An adapter without tokens verifies nothing, so accepts nothing.
	bare, err := xendit.New(xendit.Config{SecretKey: testSecret, BaseURL: e.url})
	is.NoErr(err)
	_, err = bare.ParseCallback(ctx, e.webhook(t, "payment.capture", "wh_tok"))
	is.True(err != nil)
}

// A webhook is a notification: the adapter answers what the API says of
// the object it names, and refuses one whose body names another key.
func TestWebhookEvents(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	e := newEnv(t, xenditfake.Options{})

	paid := e.p.CreatePayment(ctx, tng("wh_pay", 20000))
	is.NoErr(e.f.Approve("wh_pay"))
	events, err := e.p.ParseCallback(ctx, e.webhook(t, "payment.capture", "wh_pay"))
	is.NoErr(err)
	is.Equal(len(events), 1)
	ev := events[0]
	is.Equal(ev.Kind, "payment")
	is.Equal(ev.Key, "wh_pay")
	is.Equal(ev.Result.Outcome, paykit.OutcomeSucceeded)
	is.Equal(ev.Result.Reference, paid.Reference)
	fee, _ := e.f.Fee("wh_pay")
	is.Equal(ev.Result.Fee, fee)
	is.True(strings.HasPrefix(ev.ID, "payment.capture:py-"))

	// A body claiming success for a payment Xendit still waits on reads as
	// Xendit's state, not the body's.
	e.p.CreatePayment(ctx, tng("wh_wait", 20000))
	r := e.webhook(t, "payment.capture", "wh_wait")
	body, _ := io.ReadAll(r.Body)
	body = bytes.ReplaceAll(body, []byte(`"REQUIRES_ACTION"`), []byte(`"SUCCEEDED"`))
	events, err = e.p.ParseCallback(ctx, withToken(t, r, testToken, body))
	is.NoErr(err)
	is.Equal(events[0].Result.Outcome, paykit.OutcomeRequiresAction)
	// One naming another reference_id is refused.
	forged := bytes.ReplaceAll(body, []byte(`"wh_wait"`), []byte(`"wh_other"`))
	_, err = e.p.ParseCallback(ctx, withToken(t, r, testToken, forged))
	is.True(err != nil)

	rf := e.p.CreateRefund(ctx, paykit.RefundRequest{Key: "wh_rf", PaymentKey: "wh_pay", PaymentRef: paid.Reference, Amount: 5000, Currency: "MYR"})
	is.NoErr(e.f.SettleRefund("wh_rf"))
	events, err = e.p.ParseCallback(ctx, e.webhook(t, "refund.succeeded", "wh_rf"))
	is.NoErr(err)
	is.Equal(events[0].Kind, "refund")
	is.Equal(events[0].Key, "wh_rf")
	is.Equal(events[0].Result.Reference, rf.Reference)
	is.Equal(events[0].Result.Outcome, paykit.OutcomeSucceeded)

	e.p.CreatePayout(ctx, payout("wh_po", "1234567890"))
	is.NoErr(e.f.CompletePayout("wh_po"))
	is.NoErr(e.f.ReversePayout("wh_po"))
	events, err = e.p.ParseCallback(ctx, e.webhook(t, "payout.reversed", "wh_po"))
	is.NoErr(err)
	is.Equal(events[0].Kind, "payout")
	is.Equal(events[0].Result.Outcome, paykit.OutcomeReturned)

	id, err := e.f.OpenDispute("wh_pay", 5000, "duplicate")
	is.NoErr(err)
	events, err = e.p.ParseCallback(ctx, e.webhook(t, "dispute.action_required", "wh_pay"))
	is.NoErr(err)
	is.Equal(events[0].Kind, "dispute")
	is.Equal(events[0].Dispute.Reference, id)
	is.Equal(events[0].Dispute.Reason, paykit.DisputeDuplicate)
	is.Equal(events[0].Dispute.PaymentRef, paid.Reference)
	is.True(events[0].ID != "")

	// Events about other things give none.
	unknown := withToken(t, e.webhook(t, "payment.capture", "wh_pay"), testToken, []byte(`{"event":"payment_token.activation","data":{}}`))
	events, err = e.p.ParseCallback(ctx, unknown)
	is.NoErr(err)
	is.Equal(len(events), 0)
}

// A webhook whose object cannot be read now is an error, so that Xendit
// sends it again.
func TestWebhookWithoutAPIIsAnError(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	e := newEnv(t, xenditfake.Options{})
	e.p.CreatePayment(ctx, tng("wh_down", 1500))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	is.NoErr(err)
	closed := "http://" + ln.Addr().String()
	is.NoErr(ln.Close())
	down := adapter(t, closed, time.Second, nil)
	_, err = down.ParseCallback(ctx, e.webhook(t, "payment.capture", "wh_down"))
	is.True(err != nil)
}
