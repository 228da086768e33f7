package stripefake_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"
	"github.com/paykit/paykit/provider/stripe/stripefake"
)

func post(t *testing.T, srv *httptest.Server, path, key, apiKey string, form url.Values) (*http.Response, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, srv.URL+path, strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(apiKey, "")
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: not JSON: %s", path, b)
	}
	return resp, m
}

// The fake answers as Stripe documents: 401 for a bad key, the saved
// answer for a replayed Idempotency-Key, 400 idempotency_error for the key
// with other parameters, JSON 404 for unknown URLs.
func TestFakeProtocol(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	srv := httptest.NewServer(stripefake.New(stripefake.Options{SecretKey: "sk_test_1", WebhookSecret: "whsec_1"}))
	defer srv.Close()
	form := url.Values{"amount": {"5000"}, "currency": {"myr"}, "confirm": {"true"}, "payment_method_types[0]": {"grabpay"},
		"payment_method_data[type]": {"grabpay"}, "return_url": {"https://x.example"}, "metadata[paykit_key]": {"k1"}}

	resp, body := post(t, srv, "/v1/payment_intents", "k1", "sk_test_wrong", form)
	is.Equal(resp.StatusCode, 401)
	is.Equal(body["error"].(map[string]any)["type"], "invalid_request_error")

	resp, first := post(t, srv, "/v1/payment_intents", "k1", "sk_test_1", form)
	is.Equal(resp.StatusCode, 200)
	is.Equal(first["status"], "requires_action")
	is.Equal(first["object"], "payment_intent")
	resp, again := post(t, srv, "/v1/payment_intents", "k1", "sk_test_1", form)
	is.Equal(resp.Header.Get("Idempotent-Replayed"), "true")
	is.Equal(again["id"], first["id"])

	form.Set("amount", "6000")
	resp, body = post(t, srv, "/v1/payment_intents", "k1", "sk_test_1", form)
	is.Equal(resp.StatusCode, 400)
	is.Equal(body["error"].(map[string]any)["type"], "idempotency_error")

	// A request that fails validation saves nothing under its key.
	form.Del("return_url")
	resp, _ = post(t, srv, "/v1/payment_intents", "k2", "sk_test_1", form)
	is.Equal(resp.StatusCode, 400)
	form.Set("return_url", "https://x.example")
	resp, _ = post(t, srv, "/v1/payment_intents", "k2", "sk_test_1", form)
	is.Equal(resp.StatusCode, 200)

	resp, body = post(t, srv, "/v1/nothing", "", "sk_test_1", nil)
	is.Equal(resp.StatusCode, 404)
	is.True(strings.Contains(body["error"].(map[string]any)["message"].(string), "Unrecognized request URL"))
}

// Webhook requests are signed over "t.payload" and name the key.
func TestFakeWebhook(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	f := stripefake.New(stripefake.Options{SecretKey: "sk_test_1", WebhookSecret: "whsec_1"})
	_, err := f.Webhook("payment_intent.succeeded", "none")
	is.Equal(err, stripefake.ErrNotFound)
	is.Equal(f.Approve("none"), stripefake.ErrNotFound)
	srv := httptest.NewServer(f)
	defer srv.Close()
	form := url.Values{"amount": {"5000"}, "currency": {"myr"}, "confirm": {"true"}, "payment_method_types[0]": {"fpx"},
		"payment_method_data[type]": {"fpx"}, "payment_method_data[fpx][bank]": {"cimb"}, "return_url": {"https://x.example"}, "metadata[paykit_key]": {"wk"}}
	resp, _ := post(t, srv, "/v1/payment_intents", "wk", "sk_test_1", form)
	is.Equal(resp.StatusCode, 200)
	r, err := f.Webhook("payment_intent.requires_action", "wk")
	is.NoErr(err)
	b, _ := io.ReadAll(r.Body)
	is.True(strings.Contains(string(b), `"paykit_key":"wk"`))
	sig := r.Header.Get("Stripe-Signature")
	ts := strings.TrimPrefix(strings.Split(sig, ",")[0], "t=")
	tm, _ := strconvParse(ts)
	is.Equal(stripefake.Sign(b, "whsec_1", tm), sig)
	is.Equal(f.Events(), []string{"payment_intent.created", "payment_intent.requires_action"})
}

func strconvParse(s string) (time.Time, error) {
	n, err := strconv.ParseInt(s, 10, 64)
	return time.Unix(n, 0), err
}
