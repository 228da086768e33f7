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

var (
	webhookNow  = time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	availableOn = time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC)
)

// stubPI is the body of a succeeded PaymentIntent id whose charge's
// balance transaction (expanded, bt: a JSON object or null) is in
// btCurrency.
func stubPI(id, currency string, amount int64, bt string) string {
	return fmt.Sprintf(`{"id":%q,"object":"payment_intent","amount":%d,"currency":%q,"status":"succeeded","metadata":{"paykit_key":"key_%s"},`+
		`"latest_charge":{"id":"ch_%s","object":"charge","amount":%d,"currency":%q,"balance_transaction":%s}}`, id, amount, currency, id, id, amount, currency, bt)
}

// stripeStub answers the reads webhooks lead to: GET
// /v1/payment_intents/{id} with its balance transaction expanded. pi_sgd
// is an SGD payment of 5000 settled in MYR (15500, fee 465); pi_nobt has
// no balance transaction yet; pi_cs is a Checkout payment (its session
// cs_test_of_pi_cs); any other is a MYR payment of 5000 with a fee of 151.
func stripeStub(t *testing.T) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/v1/checkout/sessions" {
			fmt.Fprintf(w, `{"object":"list","data":[{"id":"cs_test_of_%s","object":"checkout.session","status":"complete","payment_status":"paid","metadata":{}}]}`, r.URL.Query().Get("payment_intent"))
			return
		}
		id, ok := strings.CutPrefix(r.URL.Path, "/v1/payment_intents/")
		if !ok || r.URL.Query().Get("expand[]") != "latest_charge.balance_transaction" {
			w.WriteHeader(404)
			fmt.Fprintf(w, `{"error":{"type":"invalid_request_error","code":"resource_missing","message":"No such %s"}}`, r.URL.Path)
			return
		}
		bt := fmt.Sprintf(`{"id":"txn_1","object":"balance_transaction","amount":5000,"currency":"myr","fee":151,"net":4849,"available_on":%d,"status":"pending","type":"charge"}`, availableOn.Unix())
		switch id {
		case "pi_sgd":
			fmt.Fprint(w, stubPI(id, "sgd", 5000, fmt.Sprintf(`{"id":"txn_2","object":"balance_transaction","amount":15500,"currency":"myr","fee":465,"net":15035,"available_on":%d}`, availableOn.Unix())))
		case "pi_nobt":
			fmt.Fprint(w, stubPI(id, "myr", 5000, "null"))
		case "pi_cs":
			fmt.Fprint(w, strings.Replace(stubPI(id, "myr", 5000, bt), `"metadata":{`, `"metadata":{"paykit_checkout":"true",`, 1))
		default:
			fmt.Fprint(w, stubPI(id, "myr", 5000, bt))
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func hookAdapter(t *testing.T, secrets ...string) *stripe.Provider {
	return newAdapter(t, stripeStub(t), func(c *stripe.Config) {
		c.WebhookSecrets = secrets
		c.Now = func() time.Time { return webhookNow }
		c.Timeout = 5 * time.Second
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
				Result: paykit.Result{Outcome: paykit.OutcomeSucceeded, Reference: "pi_1", Fee: 151, AvailableOn: availableOn, Detail: evs[0].Result.Detail}})
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

// A succeeded payment's event carries no balance transaction: the adapter
// reads it, and the fee and available date are Stripe's. A fee stated in
// another settlement currency is brought to the payment's at the charge's
// own rate; without a balance transaction yet, the outcome is Unknown,
// its Reference kept, never a succeeded payment without its fee.
func TestWebhookFees(t *testing.T) {
	t.Parallel()
	cases := []struct {
		id      string
		outcome paykit.Outcome
		fee     int64
	}{
		{"pi_myr", paykit.OutcomeSucceeded, 151},
		{"pi_sgd", paykit.OutcomeSucceeded, 150}, // 465 MYR × 5000 SGD / 15500 MYR
		{"pi_nobt", paykit.OutcomeUnknown, 0},
	}
	for _, c := range cases {
		t.Run(c.id, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			body := strings.Replace(piEvent("payment_intent.succeeded", "succeeded", "k"), `"pi_1"`, `"`+c.id+`"`, 1)
			evs, err := hookAdapter(t, "whsec_a").ParseCallback(context.Background(), hookRequest(body, stripe.Sign([]byte(body), "whsec_a", webhookNow)))
			is.NoErr(err)
			is.Equal(len(evs), 1)
			r := evs[0].Result
			is.Equal(r.Outcome, c.outcome)
			is.Equal(r.Reference, c.id)
			is.Equal(r.Fee, c.fee)
			if c.outcome == paykit.OutcomeSucceeded {
				is.Equal(r.AvailableOn, availableOn)
			} else {
				is.True(r.AvailableOn.IsZero())
				is.True(strings.Contains(r.Detail, "no balance transaction"))
			}
		})
	}
}

func disputeEvent(typ, status, reason, pi string, bts string) string {
	return fmt.Sprintf(`{"id":"evt_d","object":"event","type":%q,"data":{"object":{"id":"du_1","object":"dispute","amount":4000,"currency":"myr",`+
		`"status":%q,"reason":%q,"charge":"ch_9","payment_intent":%s,"balance_transactions":%s,"evidence_details":{"due_by":%d,"submission_count":0}}}}`,
		typ, status, reason, pi, bts, availableOn.Unix())
}

// Dispute events map to paykit's dispute: statuses and reasons in paykit's
// words, the fee of the withdrawal (not given back by a reinstatement),
// the evidence deadline, and the disputed payment by its PaymentIntent's
// key (a Checkout payment by its session).
func TestWebhookDisputes(t *testing.T) {
	t.Parallel()
	withdrawn := `[{"id":"txn_w","object":"balance_transaction","amount":-4000,"currency":"myr","fee":1500,"net":-5500}]`
	both := `[{"id":"txn_w","object":"balance_transaction","amount":-4000,"currency":"myr","fee":1500,"net":-5500},` +
		`{"id":"txn_r","object":"balance_transaction","amount":4000,"currency":"myr","fee":0,"net":4000}]`
	cases := []struct {
		name, body string
		status     paykit.DisputeStatus
		reason     paykit.DisputeReason
		fee        int64
		key, ref   string
	}{
		{"created", disputeEvent("charge.dispute.created", "needs_response", "fraudulent", `"pi_a"`, withdrawn), paykit.DisputeNeedsResponse, paykit.DisputeFraudulent, 1500, "key_pi_a", "pi_a"},
		{"inquiry", disputeEvent("charge.dispute.created", "warning_needs_response", "product_not_received", `"pi_a"`, `[]`), paykit.DisputeNeedsResponse, paykit.DisputeProductNotReceived, 0, "key_pi_a", "pi_a"},
		{"updated", disputeEvent("charge.dispute.updated", "under_review", "product_unacceptable", `"pi_a"`, withdrawn), paykit.DisputeUnderReview, paykit.DisputeProductUnacceptable, 1500, "key_pi_a", "pi_a"},
		{"inquiry under review", disputeEvent("charge.dispute.updated", "warning_under_review", "duplicate", `"pi_a"`, `[]`), paykit.DisputeUnderReview, paykit.DisputeDuplicate, 0, "key_pi_a", "pi_a"},
		{"won, the fee kept", disputeEvent("charge.dispute.closed", "won", "credit_not_processed", `"pi_a"`, both), paykit.DisputeWon, paykit.DisputeCreditNotProcessed, 1500, "key_pi_a", "pi_a"},
		{"funds reinstated", disputeEvent("charge.dispute.funds_reinstated", "won", "general", `"pi_a"`, both), paykit.DisputeWon, paykit.DisputeGeneral, 1500, "key_pi_a", "pi_a"},
		{"inquiry closed", disputeEvent("charge.dispute.closed", "warning_closed", "unrecognized", `"pi_a"`, `[]`), paykit.DisputeWon, paykit.DisputeGeneral, 0, "key_pi_a", "pi_a"},
		{"lost", disputeEvent("charge.dispute.closed", "lost", "subscription_canceled", `"pi_a"`, withdrawn), paykit.DisputeLost, paykit.DisputeGeneral, 1500, "key_pi_a", "pi_a"},
		{"funds withdrawn", disputeEvent("charge.dispute.funds_withdrawn", "needs_response", "general", `"pi_a"`, withdrawn), paykit.DisputeNeedsResponse, paykit.DisputeGeneral, 1500, "key_pi_a", "pi_a"},
		{"a Checkout payment", disputeEvent("charge.dispute.created", "needs_response", "general", `"pi_cs"`, withdrawn), paykit.DisputeNeedsResponse, paykit.DisputeGeneral, 1500, "key_pi_cs", "cs_test_of_pi_cs"},
		{"a charge without PaymentIntent", disputeEvent("charge.dispute.created", "needs_response", "general", `null`, withdrawn), paykit.DisputeNeedsResponse, paykit.DisputeGeneral, 1500, "", "ch_9"},
		{"settled in another currency", disputeEvent("charge.dispute.created", "needs_response", "general", `"pi_a"`,
			`[{"id":"txn_w","object":"balance_transaction","amount":-12400,"currency":"sgd","fee":4650,"net":-17050}]`),
			paykit.DisputeNeedsResponse, paykit.DisputeGeneral, 1500, "key_pi_a", "pi_a"}, // 4650 SGD × 4000 MYR / 12400 SGD
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			evs, err := hookAdapter(t, "whsec_a").ParseCallback(context.Background(), hookRequest(c.body, stripe.Sign([]byte(c.body), "whsec_a", webhookNow)))
			is.NoErr(err)
			is.Equal(len(evs), 1)
			e := evs[0]
			is.Equal(e.Kind, "dispute")
			is.Equal(e.ID, "evt_d")
			is.True(e.Dispute != nil)
			d := *e.Dispute
			is.Equal(d.Reference, "du_1")
			is.Equal(d.Status, c.status)
			is.Equal(d.Reason, c.reason)
			is.Equal(d.Amount, int64(4000))
			is.Equal(d.Currency, "MYR")
			is.Equal(d.Fee, c.fee)
			is.Equal(d.EvidenceDueBy, availableOn)
			is.Equal(d.PaymentKey, c.key)
			is.Equal(d.PaymentRef, c.ref)
		})
	}
}

// A dispute event the adapter cannot map now is an error, so that Stripe
// sends it again: a status it does not know, or a PaymentIntent it cannot
// read.
func TestWebhookDisputeErrors(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	parse := func(p *stripe.Provider, body string) error {
		_, err := p.ParseCallback(context.Background(), hookRequest(body, stripe.Sign([]byte(body), "whsec_a", webhookNow)))
		return err
	}
	err := parse(hookAdapter(t, "whsec_a"), disputeEvent("charge.dispute.updated", "charge_refunded", "general", `"pi_a"`, `[]`))
	is.True(err != nil)
	is.True(!errors.Is(err, stripe.ErrSignature)) // verified, not mapped
	is.True(strings.Contains(err.Error(), "charge_refunded"))

	down := httptest.NewServer(http.NotFoundHandler())
	down.Close()
	p := newAdapter(t, down.URL, func(c *stripe.Config) {
		c.WebhookSecrets, c.Now = []string{"whsec_a"}, func() time.Time { return webhookNow }
	})
	err = parse(p, disputeEvent("charge.dispute.created", "needs_response", "general", `"pi_a"`, `[]`))
	is.True(err != nil)
	is.True(!errors.Is(err, stripe.ErrSignature))
	is.True(strings.Contains(err.Error(), "PaymentIntent"))
}
