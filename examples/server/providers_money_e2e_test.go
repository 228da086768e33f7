package main

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/paykit/paykit/provider/opn/opnfake"
	"github.com/paykit/paykit/provider/stripe/stripefake"
)

// settleAfter is how long after a payment the fakes make its funds
// available: the example server runs on the real clock, so the test
// waits for it.
const settleAfter = 3 * time.Second

// moneyPSP is one Provider of TestRealProvidersMoneyEndToEnd: how to pay
// at its fake, open and read disputes there, and what paykit should make
// of them.
type moneyPSP struct {
	name        string
	currency    string
	payment     func(amount int64, ref string) string // a POST /v1/payment_intents body
	approve     func(key string) error
	fee         func(key string) (int64, bool)
	stated      *atomic.Int64 // the available_on (Unix seconds) the fake stated last
	disputeFee  int64
	openDispute func(key string, amount int64, reason string) (string, error)
	fakeDispute func(t *testing.T, id string) fakeDispute
	wonReason   string // a Provider reason for the dispute that is won
	wonWant     string // paykit's word for it
	wonAmount   int64  // 0: the whole payment
	lostReason  string
	lostWant    string
	lostAmount  int64
}

// fakeDispute is what a fake holds of a dispute.
type fakeDispute struct {
	status, evidence string
	dueBy            time.Time // zero when the Provider states none
}

// TestRealProvidersMoneyEndToEnd runs the example server with Stripe and
// Opn fakes whose funds become available settleAfter after a payment,
// and follows the merchant's money through paykit's API: each succeeded
// payment's balance transaction carries the Provider's fee and available
// date, its net is pending until then and available after; a dispute
// opened at the Provider reaches paykit by signed webhook, takes its
// amount and the Provider's fee, and blocks refunds; evidence submitted
// through paykit reaches the Provider, whose decision comes back by
// webhook; a dispute the merchant accepts is conceded at the Provider.
func TestRealProvidersMoneyEndToEnd(t *testing.T) {
	t.Parallel()
	hooks := &forwarder{}
	hookSrv := httptest.NewServer(hooks)
	t.Cleanup(hookSrv.Close)

	var stripeStated, opnStated atomic.Int64
	stating := func(last *atomic.Int64) func(time.Time) time.Time {
		return func(paid time.Time) time.Time {
			at := paid.Add(settleAfter).Truncate(time.Second)
			last.Store(at.Unix())
			return at
		}
	}
	opnSecret := base64.StdEncoding.EncodeToString([]byte("opn-webhook-secret-money-0123456"))
	stripeFake := stripefake.New(stripefake.Options{
		SecretKey: "sk_test_money", AccountCountry: "MY", WebhookSecret: "whsec_money",
		WebhookURL: hookSrv.URL + "/providers/stripe_my/webhooks", AvailableOn: stating(&stripeStated),
	})
	opnFake := opnfake.New(opnfake.Options{
		SecretKey: "skey_test_money", WebhookSecret: opnSecret,
		WebhookURL: hookSrv.URL + "/providers/opn_th/webhooks", AvailableOn: stating(&opnStated),
	})
	stripeSrv, opnSrv := httptest.NewServer(stripeFake), httptest.NewServer(opnFake)
	t.Cleanup(stripeSrv.Close)
	t.Cleanup(opnSrv.Close)

	path := writeFile(t, `{
	  "providers": [
	    {"name": "stripe_my", "kind": "stripe", "environment": "test", "base_url": "`+stripeSrv.URL+`", "account_country": "MY",
	     "secrets": {"secret_key": "STRIPE_MY_SECRET_KEY", "webhook_secrets": "STRIPE_MY_WEBHOOK_SECRETS"}, "timeout": "5s"},
	    {"name": "opn_th", "kind": "opn", "environment": "test", "base_url": "`+opnSrv.URL+`",
	     "secrets": {"secret_key": "OPN_TH_SECRET_KEY", "webhook_secrets": "OPN_TH_WEBHOOK_SECRETS"}, "timeout": "5s"}
	  ],
	  "routes": [
	    {"environment": "test", "method": "FPX", "country": "MY", "currency": "MYR", "provider": "stripe_my"},
	    {"environment": "test", "method": "PROMPTPAY", "country": "TH", "currency": "THB", "provider": "opn_th"}
	  ]
	}`)
	// The worker runs: a payment's funds become available through a job
	// at the Provider's date, and evidence and concessions go to the
	// Provider through jobs.
	s := startEnv(t, map[string]string{
		"STRIPE_MY_SECRET_KEY": "sk_test_money", "STRIPE_MY_WEBHOOK_SECRETS": "whsec_money",
		"OPN_TH_SECRET_KEY": "skey_test_money", "OPN_TH_WEBHOOK_SECRETS": opnSecret,
	}, "-db", "memory", "-addr", "127.0.0.1:0", "-worker-interval", "100ms", "-approval-threshold", "0", "-providers", path)
	target, err := url.Parse(s.url)
	if err != nil {
		t.Fatal(err)
	}
	hooks.target.Store(target)

	// fakeGet reads an object from a fake's API.
	fakeGet := func(t *testing.T, u string, auth func(*http.Request)) map[string]any {
		t.Helper()
		status, _, raw := call(t, "GET", u, "", auth)
		if status != http.StatusOK {
			t.Fatalf("GET %s: %d %s", u, status, raw)
		}
		var v map[string]any
		if err := json.Unmarshal(raw, &v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	psps := []moneyPSP{{
		name: "stripe", currency: "MYR",
		payment: func(amount int64, ref string) string {
			return fmt.Sprintf(`{"amount":"%d","currency":"MYR","country":"MY","merchant_reference":%q,"payment_method":"FPX",
				"payment_method_options":{"bank":"MAYBANK"},"customer":{"name":"Aisyah","email":"aisyah@example.com"}}`, amount, ref)
		},
		approve: stripeFake.Approve, fee: stripeFake.Fee, stated: &stripeStated, disputeFee: stripefake.DisputeFee,
		openDispute: stripeFake.OpenDispute,
		fakeDispute: func(t *testing.T, id string) fakeDispute {
			d := fakeGet(t, stripeSrv.URL+"/v1/disputes/"+id, func(r *http.Request) { r.Header.Set("Authorization", "Bearer sk_test_money") })
			text, _ := d["evidence"].(map[string]any)["uncategorized_text"].(string)
			due := int64(d["evidence_details"].(map[string]any)["due_by"].(float64))
			return fakeDispute{d["status"].(string), text, time.Unix(due, 0)}
		},
		wonReason: "fraudulent", wonWant: "fraudulent", wonAmount: 6000,
		lostReason: "product_not_received", lostWant: "product_not_received",
	}, {
		name: "opn", currency: "THB",
		payment: func(amount int64, ref string) string {
			return fmt.Sprintf(`{"amount":"%d","currency":"THB","country":"TH","merchant_reference":%q,"payment_method":"PROMPTPAY",
				"customer":{"name":"Somchai"}}`, amount, ref)
		},
		approve: opnFake.Approve, fee: opnFake.Fee, stated: &opnStated, disputeFee: 0, // Opn states no dispute fee
		openDispute: opnFake.OpenDispute,
		fakeDispute: func(t *testing.T, id string) fakeDispute {
			d := fakeGet(t, opnSrv.URL+"/disputes/"+id, func(r *http.Request) { r.SetBasicAuth("skey_test_money", "") })
			text, _ := d["message"].(string)
			return fakeDispute{status: d["status"].(string), evidence: text}
		},
		wonReason: "not_as_described", wonWant: "product_unacceptable",
		lostReason: "goods_or_services_not_provided", lostWant: "product_not_received", lostAmount: 10000,
	}}
	for _, p := range psps {
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			moneyFlow(t, s, p, stripeSrv.URL, opnSrv.URL)
		})
	}
}

// moneyFlow is one Provider's part of TestRealProvidersMoneyEndToEnd.
func moneyFlow(t *testing.T, s *server, p moneyPSP, fakeURLs ...string) {
	is := is.New(t)
	leakPattern := `(?i)stripe|omise|opn|chrg_|dspt_|trxn_|du_`
	for _, u := range fakeURLs {
		leakPattern += `|` + regexp.QuoteMeta(strings.TrimPrefix(u, "http://"))
	}
	leak := regexp.MustCompile(leakPattern)
	send := func(method, path, key, body string, want int) map[string]any {
		t.Helper()
		status, _, raw := call(t, method, s.url+"/v1"+path, body, func(r *http.Request) {
			r.SetBasicAuth(s.public, s.secret)
			if key != "" {
				r.Header.Set("Idempotency-Key", key)
			}
		})
		if status != want {
			t.Fatalf("%s %s: %d, want %d: %s", method, path, status, want, raw)
		}
		if m := leak.Find(scrubbed(raw)); m != nil {
			t.Errorf("%s %s shows %q: %s", method, path, m, raw)
		}
		var v map[string]any
		is.NoErr(json.Unmarshal(raw, &v))
		return v
	}
	get := func(path string) map[string]any {
		t.Helper()
		return send("GET", path, "", "", http.StatusOK)
	}
	list := func(path string) []map[string]any {
		t.Helper()
		var out []map[string]any
		for _, v := range get(path)["data"].([]any) {
			out = append(out, v.(map[string]any))
		}
		return out
	}
	// balance is the merchant's balance in the Provider's currency:
	// available, pending, reserved.
	balance := func() [3]int64 {
		t.Helper()
		for _, b := range list("/balances") {
			if b["currency"] == p.currency {
				return [3]int64{minor(t, b["available"]), minor(t, b["pending"]), minor(t, b["reserved"])}
			}
		}
		t.Fatalf("no %s balance", p.currency)
		return [3]int64{}
	}
	// The demo merchant starts with its float, available.
	const float = demoBalance
	is.Equal(balance(), [3]int64{float, 0, 0})

	// pay makes a payment of amount at the Provider and checks its
	// balance transaction: the Provider's fee and available date, pending.
	pay := func(amount int64, ref string) (id string, net int64) {
		t.Helper()
		pi := send("POST", "/payment_intents", "pi-"+ref, p.payment(amount, ref), http.StatusCreated)
		id = pi["id"].(string)
		is.NoErr(p.approve(id)) // the Provider's webhook reports the success
		is.Equal(get("/payment_intents/" + id)["status"], "succeeded")
		fee, ok := p.fee(id)
		is.True(ok)
		is.True(fee > 0)
		bts := list("/balance_transactions?source=" + id)
		is.Equal(len(bts), 1)
		bt := bts[0]
		is.Equal(bt["type"], "payment")
		is.Equal(bt["amount"], strconv.FormatInt(amount, 10))
		is.Equal(bt["fee"], strconv.FormatInt(fee, 10))
		is.Equal(bt["net"], strconv.FormatInt(amount-fee, 10))
		is.Equal(bt["currency"], p.currency)
		is.Equal(bt["status"], "pending")
		is.True(timeOf(t, bt["available_on"]).Equal(time.Unix(p.stated.Load(), 0)))
		return id, amount - fee
	}
	// settled waits until the payment's funds are available, no earlier
	// than the Provider said.
	settled := func(id string) {
		t.Helper()
		var bt map[string]any
		eventually(t, "the funds of "+id+" available", func() bool {
			bt = list("/balance_transactions?type=payment&source=" + id)[0]
			return bt["status"] == "available"
		})
		is.True(!timeOf(t, bt["available_on"]).Before(time.Unix(p.stated.Load(), 0)))
	}
	// disputeEvents are the types of the events about dispute id, oldest
	// first.
	disputeEvents := func(id string) []string {
		t.Helper()
		var types []string
		for _, e := range list("/events?limit=100") {
			if d := e["data"].(map[string]any); d["object"] == "dispute" && d["id"] == id {
				types = append([]string{e["type"].(string)}, types...)
			}
		}
		return types
	}

	// A payment: its net is pending until the Provider's date, then
	// available.
	piWon, netWon := pay(40000, "order-"+p.currency+"-1")
	is.Equal(balance(), [3]int64{float, netWon, 0})
	settled(piWon)
	is.Equal(balance(), [3]int64{float + netWon, 0, 0})

	// The payer's bank disputes it; the Provider's webhook tells paykit.
	ref, err := p.openDispute(piWon, p.wonAmount, p.wonReason)
	is.NoErr(err)
	disputed := p.wonAmount
	if disputed == 0 {
		disputed = 40000
	}
	ds := list("/disputes?payment_intent=" + piWon)
	is.Equal(len(ds), 1)
	d := ds[0]
	dpWon := d["id"].(string)
	is.True(strings.HasPrefix(dpWon, "dp_"))
	is.Equal(d["status"], "needs_response")
	is.Equal(d["amount"], strconv.FormatInt(disputed, 10))
	is.Equal(d["currency"], p.currency)
	is.Equal(d["reason"], p.wonWant)
	is.Equal(d["evidence"], nil)
	is.Equal(d["closed_at"], nil)
	if due := p.fakeDispute(t, ref).dueBy; !due.IsZero() {
		is.True(timeOf(t, d["evidence_due_by"]).Equal(due)) // the Provider's deadline
	} else {
		is.True(timeOf(t, d["evidence_due_by"]).Equal(timeOf(t, d["created_at"]).Add(7 * 24 * time.Hour)))
	}
	is.Equal(get("/payment_intents/" + piWon)["disputed_amount"], strconv.FormatInt(disputed, 10))
	bts := list("/balance_transactions?source=" + dpWon)
	is.Equal(len(bts), 1)
	is.Equal(bts[0]["type"], "dispute")
	is.Equal(bts[0]["amount"], strconv.FormatInt(-disputed, 10))
	is.Equal(bts[0]["fee"], strconv.FormatInt(p.disputeFee, 10))
	is.Equal(bts[0]["net"], strconv.FormatInt(-disputed-p.disputeFee, 10))
	is.Equal(bts[0]["status"], "available")
	is.Equal(balance(), [3]int64{float + netWon - disputed - p.disputeFee, 0, 0})

	// A payment with an open dispute cannot be refunded.
	e := send("POST", "/refunds", "re-"+p.currency, `{"payment_intent":"`+piWon+`","merchant_reference":"refund-`+p.currency+`","amount":"100"}`,
		http.StatusUnprocessableEntity)
	is.Equal(e["error"].(map[string]any)["code"], "invalid_state")

	// Evidence submitted through paykit reaches the Provider, which
	// decides for the merchant; its webhook reports the decision.
	text := "Delivered 2026-05-30, signed for by the payer; winning_evidence"
	d = send("POST", "/disputes/"+dpWon+"/evidence", "ev-"+p.currency, `{"text":"`+text+`","submit":true}`, http.StatusOK)
	is.Equal(d["status"], "under_review")
	is.Equal(d["evidence"], map[string]any{"text": text})
	eventually(t, "the dispute won", func() bool { return get("/disputes/" + dpWon)["status"] == "won" })
	at := p.fakeDispute(t, ref)
	is.Equal(at.evidence, text)
	is.Equal(at.status, "won")
	d = get("/disputes/" + dpWon)
	is.True(d["closed_at"] != nil)
	bts = list("/balance_transactions?source=" + dpWon)
	is.Equal(len(bts), 2)
	is.Equal(bts[0]["type"], "dispute_reversal")
	is.Equal([3]any{bts[0]["amount"], bts[0]["fee"], bts[0]["net"]}, [3]any{strconv.FormatInt(disputed, 10), "0", strconv.FormatInt(disputed, 10)})
	is.Equal(get("/payment_intents/" + piWon)["disputed_amount"], "0")
	is.Equal(balance(), [3]int64{float + netWon - p.disputeFee, 0, 0}) // the fee is kept
	is.Equal(disputeEvents(dpWon), []string{"dispute.created", "dispute.updated", "dispute.won"})

	// Another payment, disputed too; the merchant concedes through
	// paykit, and the Provider is told.
	piLost, netLost := pay(30000, "order-"+p.currency+"-2")
	ref, err = p.openDispute(piLost, p.lostAmount, p.lostReason)
	is.NoErr(err)
	disputed = p.lostAmount
	if disputed == 0 {
		disputed = 30000
	}
	ds = list("/disputes?payment_intent=" + piLost)
	is.Equal(len(ds), 1)
	dpLost := ds[0]["id"].(string)
	is.Equal(ds[0]["reason"], p.lostWant)
	is.Equal(ds[0]["amount"], strconv.FormatInt(disputed, 10))
	d = send("POST", "/disputes/"+dpLost+"/accept", "acc-"+p.currency, "", http.StatusOK)
	is.Equal(d["status"], "lost")
	eventually(t, "the Provider told of the concession", func() bool { return p.fakeDispute(t, ref).status == "lost" })
	is.Equal(p.fakeDispute(t, ref).evidence, "") // conceded, not answered
	is.Equal(get("/disputes/" + dpLost)["status"], "lost")
	is.Equal(len(list("/balance_transactions?source="+dpLost)), 1) // a lost dispute moves nothing more
	is.Equal(get("/payment_intents/" + piLost)["disputed_amount"], strconv.FormatInt(disputed, 10))
	is.Equal(disputeEvents(dpLost), []string{"dispute.created", "dispute.lost"})

	// Once the second payment's funds are available, the balance is what
	// the Provider holds, and the balance transactions add up to it.
	settled(piLost)
	want := float + netWon - p.disputeFee + netLost - disputed - p.disputeFee
	is.Equal(balance(), [3]int64{want, 0, 0})
	var sum int64
	for _, bt := range list("/balance_transactions?limit=100&currency=" + p.currency) {
		sum += minor(t, bt["net"])
	}
	is.Equal(sum, want)
}

// minor is an amount string as minor units.
func minor(t *testing.T, v any) int64 {
	t.Helper()
	s, _ := v.(string)
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatalf("amount %v: %v", v, err)
	}
	return n
}

// timeOf is a timestamp of the API.
func timeOf(t *testing.T, v any) time.Time {
	t.Helper()
	s, _ := v.(string)
	at, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatalf("timestamp %v: %v", v, err)
	}
	return at
}

// eventually polls cond until it holds, failing the test after 30
// seconds: the example server's clock and worker are real.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
