package stripe_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"
	"github.com/paykit/paykit"
	"github.com/paykit/paykit/provider/stripe"
)

var webhookNow = time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)

func hookAdapter(t *testing.T, secrets ...string) *stripe.Provider {
	return newAdapter(t, "http://stripe.invalid", func(c *stripe.Config) {
		c.WebhookSecrets = secrets
		c.Now = func() time.Time { return webhookNow }
	})
}

func hookRequest(body, sig string) *http.Request {
	r := httptest.NewRequest(http.MethodPost, "/webhooks/stripe", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	if sig != "" {
		r.Header.Set(stripe.SignatureHeader, sig)
	}
	return r
}

func piEvent(typ, status, key string) string {
	return fmt.Sprintf(`{"id":"evt_1","object":"event","type":%q,"data":{"object":{"id":"pi_1","object":"payment_intent","amount":5000,"currency":"myr","status":%q,"metadata":{"paykit_key":%q},"next_action":null,"last_payment_error":{"type":"card_error","code":"payment_method_provider_decline","message":"declined"}}}}`, typ, status, key)
}

// Verification: any configured secret (rotation), any of several v1
// signatures, within the timestamp tolerance; anything else is an error.
func TestWebhookSignatures(t *testing.T) {
	t.Parallel()
	body := piEvent("payment_intent.succeeded", "succeeded", "k1")
	v1 := func(secret string, at time.Time) string {
		return strings.Split(stripe.Sign([]byte(body), secret, at), ",")[1]
	}
	ts := fmt.Sprintf("t=%d", webhookNow.Unix())
	cases := []struct {
		name    string
		secrets []string
		sig     string
		ok      bool
	}{
		{"signed", []string{"whsec_a"}, stripe.Sign([]byte(body), "whsec_a", webhookNow), true},
		{"rotation: the new secret of two", []string{"whsec_old", "whsec_new"}, stripe.Sign([]byte(body), "whsec_new", webhookNow), true},
		{"rotation: Stripe signs with both", []string{"whsec_new"}, ts + "," + v1("whsec_old", webhookNow) + "," + v1("whsec_new", webhookNow), true},
		{"another secret", []string{"whsec_a"}, stripe.Sign([]byte(body), "whsec_b", webhookNow), false},
		{"stale timestamp", []string{"whsec_a"}, stripe.Sign([]byte(body), "whsec_a", webhookNow.Add(-301*time.Second)), false},
		{"within tolerance", []string{"whsec_a"}, stripe.Sign([]byte(body), "whsec_a", webhookNow.Add(-299*time.Second)), true},
		{"future timestamp", []string{"whsec_a"}, stripe.Sign([]byte(body), "whsec_a", webhookNow.Add(10*time.Minute)), false},
		{"v0 only", []string{"whsec_a"}, ts + ",v0=" + strings.TrimPrefix(v1("whsec_a", webhookNow), "v1="), false},
		{"no timestamp", []string{"whsec_a"}, v1("whsec_a", webhookNow), false},
		{"no header", []string{"whsec_a"}, "", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			evs, err := hookAdapter(t, c.secrets...).ParseCallback(context.Background(), hookRequest(body, c.sig))
			if !c.ok {
				is.True(errors.Is(err, stripe.ErrSignature))
				is.Equal(len(evs), 0)
				return
			}
			is.NoErr(err)
			is.Equal(len(evs), 1)
			is.Equal(evs[0], paykit.CallbackEvent{ID: "evt_1", Kind: "payment", Key: "k1",
				Result: paykit.Result{Outcome: paykit.OutcomeSucceeded, Reference: "pi_1", Detail: evs[0].Result.Detail}})
		})
	}
}

// A body changed after signing is refused.
func TestWebhookTamperedBody(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	body := piEvent("payment_intent.succeeded", "succeeded", "k1")
	sig := stripe.Sign([]byte(body), "whsec_a", webhookNow)
	tampered := strings.Replace(body, `"amount":5000`, `"amount":5`, 1)
	_, err := hookAdapter(t, "whsec_a").ParseCallback(context.Background(), hookRequest(tampered, sig))
	is.True(errors.Is(err, stripe.ErrSignature))
}

// Events map to paykit's results; events the adapter does not map, and
// objects without a paykit key, give no event and no error.
func TestWebhookMapping(t *testing.T) {
	t.Parallel()
	refund := func(typ, status string) string {
		return fmt.Sprintf(`{"id":"evt_r","object":"event","type":%q,"data":{"object":{"id":"re_1","object":"refund","amount":100,"currency":"myr","status":%q,"failure_reason":"declined","metadata":{"paykit_key":"rk"}}}}`, typ, status)
	}
	session := func(typ, status, paid string) string {
		return fmt.Sprintf(`{"id":"evt_s","object":"event","type":%q,"data":{"object":{"id":"cs_test_1","object":"checkout.session","status":%q,"payment_status":%q,"url":null,"metadata":{"paykit_key":"ck"},"payment_intent":"pi_9"}}}`, typ, status, paid)
	}
	cases := []struct {
		name, body, kind string
		outcome          paykit.Outcome
		code             string
	}{
		{"payment_failed", piEvent("payment_intent.payment_failed", "requires_payment_method", "k"), "payment", paykit.OutcomeFailed, paykit.FailureProviderDeclined},
		{"canceled", piEvent("payment_intent.canceled", "canceled", "k"), "payment", paykit.OutcomeCancelled, ""},
		{"processing", piEvent("payment_intent.processing", "processing", "k"), "payment", paykit.OutcomePending, ""},
		{"refund.updated succeeded", refund("refund.updated", "succeeded"), "refund", paykit.OutcomeSucceeded, ""},
		{"refund.failed", refund("refund.failed", "failed"), "refund", paykit.OutcomeFailed, paykit.RefundProviderDeclined},
		{"charge.refund.updated", refund("charge.refund.updated", "pending"), "refund", paykit.OutcomePending, ""},
		{"checkout.session.completed", session("checkout.session.completed", "complete", "paid"), "payment", paykit.OutcomeSucceeded, ""},
		{"checkout.session.expired", session("checkout.session.expired", "expired", "unpaid"), "payment", paykit.OutcomeCancelled, ""},
		{"checkout.session.async_payment_failed", session("checkout.session.async_payment_failed", "complete", "unpaid"), "payment", paykit.OutcomeFailed, paykit.FailureProviderDeclined},
		{"unmapped type", `{"id":"evt_x","object":"event","type":"customer.created","data":{"object":{"id":"cus_1","object":"customer"}}}`, "", "", ""},
		{"payment_intent.created tells nothing new", piEvent("payment_intent.created", "requires_payment_method", "k"), "", "", ""},
		{"no paykit key", piEvent("payment_intent.succeeded", "succeeded", ""), "", "", ""},
		{"a Checkout PaymentIntent", strings.Replace(piEvent("payment_intent.succeeded", "succeeded", "k"), `"paykit_key":"k"`, `"paykit_key":"k","paykit_checkout":"true"`, 1), "", "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			evs, err := hookAdapter(t, "whsec_a").ParseCallback(context.Background(), hookRequest(c.body, stripe.Sign([]byte(c.body), "whsec_a", webhookNow)))
			is.NoErr(err)
			if c.kind == "" {
				is.Equal(len(evs), 0)
				return
			}
			is.Equal(len(evs), 1)
			is.Equal(evs[0].Kind, c.kind)
			is.Equal(evs[0].Result.Outcome, c.outcome)
			is.Equal(evs[0].Result.FailureCode, c.code)
			is.True(evs[0].Key != "")
		})
	}
}

// A signed body that is not an event is an error, as is an oversized one.
func TestWebhookNotAnEvent(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	p := hookAdapter(t, "whsec_a")
	body := `{"hello":"world"}`
	_, err := p.ParseCallback(context.Background(), hookRequest(body, stripe.Sign([]byte(body), "whsec_a", webhookNow)))
	is.True(err != nil)
	big := bytes.Repeat([]byte("x"), 2<<20)
	r := httptest.NewRequest(http.MethodPost, "/", io.NopCloser(bytes.NewReader(big)))
	_, err = p.ParseCallback(context.Background(), r)
	is.True(err != nil)
}
