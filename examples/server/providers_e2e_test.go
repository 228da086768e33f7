package main

import (
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/matryer/is"

	"github.com/paykit/paykit/provider/opn/opnfake"
	"github.com/paykit/paykit/provider/stripe/stripefake"
)

// forwarder relays the fakes' webhooks to the example server, whose
// address is known only once it runs.
type forwarder struct{ target atomic.Pointer[url.URL] }

func (f *forwarder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	u := f.target.Load()
	if u == nil {
		http.Error(w, "not yet", http.StatusServiceUnavailable)
		return
	}
	httputil.NewSingleHostReverseProxy(u).ServeHTTP(w, r)
}

// payerLink matches paykit's payer links: a leak check skips them, as
// their signed tokens may hold any letters.
var payerLink = regexp.MustCompile(`/pay/(continue|qr)/[0-9A-Za-z_.-]+`)

// paykitID matches paykit's own ids (evt_1k8kk3opn7…), whose random
// characters may spell a Provider's name.
var paykitID = regexp.MustCompile(`\b[a-z]{2,5}_[0-9a-z]{20,32}\b`)

// scrubbed is raw without payer links and paykit's ids: what remains
// must name no Provider.
func scrubbed(raw []byte) []byte { return paykitID.ReplaceAll(payerLink.ReplaceAll(raw, nil), nil) }

// TestRealProvidersEndToEnd runs the example server with a configuration
// file that routes FPX to Stripe and PromptPay and Thai payouts to Opn
// (both fakes of the Providers' APIs over real HTTP). A payment at each,
// a refund and a payout reach their final status through signed webhooks
// only (the worker never runs), and the merchant sees only paykit's
// projections.
func TestRealProvidersEndToEnd(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	hooks := &forwarder{}
	hookSrv := httptest.NewServer(hooks)
	t.Cleanup(hookSrv.Close)

	opnSecret := base64.StdEncoding.EncodeToString([]byte("opn-webhook-secret-e2e-0123456789"))
	stripeFake := stripefake.New(stripefake.Options{
		SecretKey: "sk_test_e2e", AccountCountry: "MY", WebhookSecret: "whsec_e2e",
		WebhookURL: hookSrv.URL + "/providers/stripe_my/webhooks",
	})
	opnFake := opnfake.New(opnfake.Options{
		SecretKey: "skey_test_e2e", WebhookSecret: opnSecret,
		WebhookURL: hookSrv.URL + "/providers/opn_th/webhooks",
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
	  ],
	  "payout_routes": [{"environment": "test", "country": "TH", "currency": "THB", "provider": "opn_th"}]
	}`)
	s := startEnv(t, map[string]string{
		"STRIPE_MY_SECRET_KEY": "sk_test_e2e", "STRIPE_MY_WEBHOOK_SECRETS": "whsec_old, whsec_e2e",
		"OPN_TH_SECRET_KEY": "skey_test_e2e", "OPN_TH_WEBHOOK_SECRETS": opnSecret,
	}, "-db", "memory", "-addr", "127.0.0.1:0", "-worker-interval", "1h", "-approval-threshold", "0", "-providers", path)
	target, err := url.Parse(s.url)
	is.NoErr(err)
	hooks.target.Store(target)

	// What the merchant sees must name no Provider, no Provider host, no
	// Provider object id.
	leak := regexp.MustCompile(`(?i)stripe|omise|opn|chrg_|rfnd_|trsf_|recp_|src_|cs_test|` +
		regexp.QuoteMeta(strings.TrimPrefix(stripeSrv.URL, "http://")) + `|` + regexp.QuoteMeta(strings.TrimPrefix(opnSrv.URL, "http://")))
	get := func(path string) map[string]any {
		t.Helper()
		status, _, raw := call(t, "GET", s.url+"/v1"+path, "", basicAuth(s.public, s.secret))
		is.Equal(status, http.StatusOK)
		if m := leak.Find(scrubbed(raw)); m != nil {
			t.Errorf("GET %s shows %q: %s", path, m, raw)
		}
		var v map[string]any
		is.NoErr(json.Unmarshal(raw, &v))
		return v
	}
	post := func(path, key, body string) map[string]any {
		t.Helper()
		status, _, raw := call(t, "POST", s.url+"/v1"+path, body, func(r *http.Request) {
			r.SetBasicAuth(s.public, s.secret)
			r.Header.Set("Idempotency-Key", key)
		})
		if status != http.StatusCreated {
			t.Fatalf("POST %s: %d %s", path, status, raw)
		}
		if m := leak.Find(scrubbed(raw)); m != nil {
			t.Errorf("POST %s shows %q: %s", path, m, raw)
		}
		var v map[string]any
		is.NoErr(json.Unmarshal(raw, &v))
		return v
	}

	// The methods offered are the configured routes'.
	methods := get("/payment_methods?amount=15000&currency=MYR&country=MY")["data"].([]any)
	is.Equal(len(methods), 1)
	is.Equal(methods[0].(map[string]any)["payment_method"], "FPX")

	// FPX at Stripe: a redirect behind paykit's continuation URL.
	fpx := post("/payment_intents", "fpx-1", `{"amount":"15000","currency":"MYR","country":"MY","merchant_reference":"order-fpx",
		"payment_method":"FPX","payment_method_options":{"bank":"MAYBANK"},"customer":{"name":"Aisyah","email":"aisyah@example.com"}}`)
	is.Equal(fpx["status"], "requires_action")
	next := fpx["next_action"].(map[string]any)
	is.Equal(next["type"], "redirect_to_url")
	is.True(strings.HasPrefix(next["url"].(string), s.url+"/pay/continue/"))
	// The continuation sends the payer on to the Provider's page.
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noRedirect.Get(next["url"].(string))
	is.NoErr(err)
	resp.Body.Close()
	is.Equal(resp.StatusCode/100, 3)
	is.True(resp.Header.Get("Location") != "")

	fpxID := fpx["id"].(string)
	is.NoErr(stripeFake.Approve(fpxID)) // the payer pays; Stripe posts payment_intent.succeeded
	got := get("/payment_intents/" + fpxID)
	is.Equal(got["status"], "succeeded")
	is.Equal(got["receipt"].(map[string]any)["payment_method"], "FPX")

	// A refund of part of it, settled by Stripe's webhook.
	re := post("/refunds", "re-1", `{"payment_intent":"`+fpxID+`","merchant_reference":"refund-1","amount":"5000"}`)
	is.Equal(re["status"], "pending")
	is.NoErr(stripeFake.SettleRefund(re["id"].(string)))
	is.Equal(get("/refunds/" + re["id"].(string))["status"], "succeeded")
	is.Equal(get("/payment_intents/" + fpxID)["refunded_amount"], "5000")

	// PromptPay at Opn: paykit's own QR image of the EMVCo payload.
	pp := post("/payment_intents", "pp-1", `{"amount":"25000","currency":"THB","country":"TH","merchant_reference":"order-pp",
		"payment_method":"PROMPTPAY","customer":{"name":"Somchai"}}`)
	is.Equal(pp["status"], "requires_action")
	qr := pp["next_action"].(map[string]any)
	is.Equal(qr["type"], "display_qr_code")
	is.True(strings.HasPrefix(qr["qr_data"].(string), "000201")) // EMVCo
	is.True(strings.HasPrefix(qr["image_url"].(string), s.url+"/pay/qr/"))
	img, err := http.Get(qr["image_url"].(string))
	is.NoErr(err)
	body, _ := io.ReadAll(img.Body)
	img.Body.Close()
	is.Equal(img.Header.Get("Content-Type"), "image/png")
	is.True(len(body) > 100)
	is.NoErr(opnFake.Approve(pp["id"].(string))) // Opn posts charge.complete
	is.Equal(get("/payment_intents/" + pp["id"].(string))["status"], "succeeded")

	// A Thai payout by Opn transfer, paid by Opn's webhook.
	po := post("/payout_intents", "po-1", `{"amount":"250000","currency":"THB","country":"TH","merchant_reference":"payout-1",
		"recipient":{"type":"bank_account","account_number":"123456789012","bank_code":"KBANK","holder_name":"Somchai Jaidee","holder_name_th":"สมชาย ใจดี"}}`)
	is.Equal(po["status"], "processing")
	amount, currency, ok := opnFake.Received(po["id"].(string))
	is.True(ok)
	is.Equal(amount, int64(250000))
	is.Equal(currency, "THB")
	is.NoErr(opnFake.PayTransfer(po["id"].(string))) // Opn posts transfer.pay
	is.Equal(get("/payout_intents/" + po["id"].(string))["status"], "succeeded")

	// The events the merchant's webhooks carry are paykit's.
	types := map[string]bool{}
	for _, e := range get("/events?limit=100")["data"].([]any) {
		types[e.(map[string]any)["type"].(string)] = true
	}
	for _, want := range []string{"payment_intent.succeeded", "refund.succeeded", "payout_intent.succeeded"} {
		is.True(types[want])
	}
	// A forged webhook is refused and changes nothing.
	status, _, _ := call(t, "POST", s.url+"/providers/stripe_my/webhooks", `{"type":"payment_intent.succeeded"}`, func(r *http.Request) {
		r.Header.Set("Stripe-Signature", "t=1,v1=00")
	})
	is.Equal(status, http.StatusBadRequest)
}
