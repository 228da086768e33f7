package main

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/matryer/is"

	"github.com/paykit/paykit/provider/opn/opnfake"
	"github.com/paykit/paykit/provider/xendit/xenditfake"
)

// holding holds the answers to POST /charges while on: Opn receives and
// makes the charge, and the answer never comes (the adapter times out).
type holding struct {
	next http.Handler
	on   atomic.Bool
}

func (h *holding) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !h.on.Load() || r.Method != http.MethodPost || r.URL.Path != "/charges" {
		h.next.ServeHTTP(w, r)
		return
	}
	h.next.ServeHTTP(httptest.NewRecorder(), r)
	<-r.Context().Done()
}

// TestProvidersFallbackEndToEnd runs the example server with the README's
// Malaysian routing: Touch 'n Go through Opn first and Xendit second,
// Malaysian payouts through Xendit (both fakes over real HTTP). When Opn
// refuses a payment with its documented refusal (400 invalid_charge: the
// account is not enabled for Touch 'n Go), paykit sends it to Xendit,
// where the payer pays and Xendit's webhook (x-callback-token) settles it
// with Xendit's fee. When Opn receives a payment but its answer never
// comes (a timeout), the payment stays at Opn, is never sent to Xendit,
// and Opn's webhook settles it. A payout goes to Xendit's Payouts API
// under its Idempotency-key and succeeds by Xendit's webhook.
func TestProvidersFallbackEndToEnd(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	hooks := &forwarder{}
	hookSrv := httptest.NewServer(hooks)
	t.Cleanup(hookSrv.Close)

	opnSecret := base64.StdEncoding.EncodeToString([]byte("opn-webhook-secret-fallback-0123"))
	opnFake := opnfake.New(opnfake.Options{
		SecretKey: "skey_test_fb", WebhookSecret: opnSecret, WebhookURL: hookSrv.URL + "/providers/opn_my/webhooks",
	})
	xenditFake := xenditfake.New(xenditfake.Options{
		SecretKey: "xnd_development_fb", CallbackToken: "xendit-token-fb", WebhookURL: hookSrv.URL + "/providers/xendit_my/webhooks",
	})
	opnFront := &holding{next: opnFake}
	opnSrv, xenditSrv := httptest.NewServer(opnFront), httptest.NewServer(xenditFake)
	t.Cleanup(opnSrv.Close)
	t.Cleanup(xenditSrv.Close)

	path := writeFile(t, `{
	  "providers": [
	    {"name": "opn_my", "kind": "opn", "environment": "test", "base_url": "`+opnSrv.URL+`", "timeout": "1s",
	     "secrets": {"secret_key": "OPN_MY_SECRET_KEY", "webhook_secrets": "OPN_MY_WEBHOOK_SECRETS"}},
	    {"name": "xendit_my", "kind": "xendit", "environment": "test", "base_url": "`+xenditSrv.URL+`", "timeout": "5s",
	     "secrets": {"secret_key": "XENDIT_MY_SECRET_KEY", "webhook_secrets": "XENDIT_MY_WEBHOOK_TOKENS"}}
	  ],
	  "routes": [
	    {"environment": "test", "method": "TNG", "country": "MY", "currency": "MYR", "provider": "opn_my", "priority": 1},
	    {"environment": "test", "method": "TNG", "country": "MY", "currency": "MYR", "provider": "xendit_my", "priority": 2}
	  ],
	  "payout_routes": [{"environment": "test", "country": "MY", "currency": "MYR", "provider": "xendit_my"}]
	}`)
	s := startEnv(t, map[string]string{
		"OPN_MY_SECRET_KEY": "skey_test_fb", "OPN_MY_WEBHOOK_SECRETS": opnSecret,
		"XENDIT_MY_SECRET_KEY": "xnd_development_fb", "XENDIT_MY_WEBHOOK_TOKENS": "xendit-token-old, xendit-token-fb",
	}, "-db", "memory", "-addr", "127.0.0.1:0", "-worker-interval", "1h", "-approval-threshold", "0", "-providers", path)
	target, err := url.Parse(s.url)
	is.NoErr(err)
	hooks.target.Store(target)

	get := func(path string) map[string]any {
		t.Helper()
		status, _, raw := call(t, "GET", s.url+"/v1"+path, "", basicAuth(s.public, s.secret))
		is.Equal(status, http.StatusOK)
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
		if strings.Contains(strings.ToLower(string(raw)), "xendit") || strings.Contains(string(raw), "pr-") {
			t.Errorf("POST %s shows the Provider: %s", path, raw)
		}
		var v map[string]any
		is.NoErr(json.Unmarshal(raw, &v))
		return v
	}
	tng := func(ref string) string {
		return `{"amount":"15000","currency":"MYR","country":"MY","merchant_reference":"` + ref + `",
		  "payment_method":"TNG","customer":{"name":"Aisyah"}}`
	}

	// 1. Opn refuses Touch 'n Go: the payment goes to Xendit.
	opnFake.DisableSource("touch_n_go", true)
	pi := post("/payment_intents", "tng-refused", tng("order-refused"))
	id := pi["id"].(string)
	is.Equal(pi["status"], "requires_action")
	is.Equal(pi["next_action"].(map[string]any)["type"], "redirect_to_url")
	is.Equal(opnFake.Charges(id), 0)
	amount, currency, ok := xenditFake.Received(id)
	is.True(ok)
	is.Equal(amount, int64(15000))
	is.Equal(currency, "MYR")
	is.NoErr(xenditFake.Approve(id)) // Xendit posts payment.capture
	is.Equal(get("/payment_intents/" + id)["status"], "succeeded")
	fee, _ := xenditFake.Fee(id)
	txns := get("/balance_transactions?source=" + id)["data"].([]any)
	is.Equal(len(txns), 1)
	is.Equal(txns[0].(map[string]any)["fee"], strconv.FormatInt(fee, 10)) // Xendit's fee, as Xendit states it

	// 2. Opn receives the payment and its answer is lost: the payment is
	// recovered at Opn and never sent to Xendit.
	opnFake.DisableSource("touch_n_go", false)
	opnFront.on.Store(true)
	pi = post("/payment_intents", "tng-timeout", tng("order-timeout"))
	opnFront.on.Store(false)
	id = pi["id"].(string)
	is.Equal(pi["status"], "processing") // Unknown at Opn: not failed, not moved on
	is.Equal(opnFake.Charges(id), 1)
	_, _, ok = xenditFake.Received(id)
	is.True(!ok)
	is.NoErr(opnFake.Approve(id)) // Opn posts charge.complete
	is.Equal(get("/payment_intents/" + id)["status"], "succeeded")
	_, _, ok = xenditFake.Received(id)
	is.True(!ok)
	is.Equal(xenditFake.PaymentRequests(id), 0)

	// 3. A Malaysian payout goes to Xendit and succeeds by its webhook.
	po := post("/payout_intents", "po-my", `{"amount":"250000","currency":"MYR","country":"MY","merchant_reference":"payout-my",
		"recipient":{"type":"bank_account","account_number":"514012345678","bank_code":"MAYBANK","holder_name":"Aisyah binti Ahmad"}}`)
	is.Equal(po["status"], "processing")
	amount, currency, ok = xenditFake.Received(po["id"].(string))
	is.True(ok)
	is.Equal(amount, int64(250000))
	is.Equal(currency, "MYR")
	is.NoErr(xenditFake.CompletePayout(po["id"].(string))) // Xendit posts payout.succeeded
	is.Equal(get("/payout_intents/" + po["id"].(string))["status"], "succeeded")
}
