package oapitest_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/paykit/paykit/httpadapter"
	"github.com/paykit/paykit/internal/oapitest"
)

// The validator must reject responses that drift from the document, or it
// proves nothing.
func TestCheckRejectsDrift(t *testing.T) {
	v := oapitest.New(t, httpadapter.OpenAPIDocument())
	intent := func(change func(m map[string]any)) string {
		m := map[string]any{
			"object": "payment_intent", "id": "pi_1", "status": "requires_action", "amount": "100",
			"captured_amount": "0", "refunded_amount": "0", "disputed_amount": "0", "currency": "MYR", "country": "MY", "merchant_reference": "r",
			"payment_method": "FPX", "environment": "test",
			"next_action":  map[string]any{"type": "redirect_to_url", "url": "http://h/pay/x", "expires_at": "2026-01-01T00:30:00.000Z"},
			"failure_code": nil, "receipt": nil, "expires_at": "2026-01-01T00:30:00.000Z", "completed_at": nil,
			"created_at": "2026-01-01T00:00:00.000Z", "updated_at": "2026-01-01T00:00:00.000Z",
		}
		if change != nil {
			change(m)
		}
		b, _ := json.Marshal(m)
		return string(b)
	}
	errBody := func(code, id string) string {
		return `{"error":{"code":"` + code + `","message":"m","request_id":"` + id + `"}}`
	}
	type tc struct {
		name, path string
		status     int
		headers    map[string]string
		body       string
		ok         bool
	}
	std := map[string]string{"Request-Id": "req_1", "Content-Type": "application/json"}
	with := func(extra map[string]string) map[string]string {
		h := map[string]string{}
		for k, v := range std {
			h[k] = v
		}
		for k, v := range extra {
			h[k] = v
		}
		return h
	}
	cases := []tc{
		{"valid intent", "/v1/payment_intents/pi_1", 200, std, intent(nil), true},
		{"nulls where allowed", "/v1/payment_intents/pi_1", 200, std, intent(func(m map[string]any) { m["next_action"], m["payment_method"] = nil, nil }), true},
		{"missing field", "/v1/payment_intents/pi_1", 200, std, intent(func(m map[string]any) { delete(m, "receipt") }), false},
		{"amount as number", "/v1/payment_intents/pi_1", 200, std, intent(func(m map[string]any) { m["amount"] = 100 }), false},
		{"extra field", "/v1/payment_intents/pi_1", 200, std, intent(func(m map[string]any) { m["provider"] = "x" }), false},
		{"unknown status", "/v1/payment_intents/pi_1", 200, std, intent(func(m map[string]any) { m["status"] = "paid" }), false},
		{"seconds precision", "/v1/payment_intents/pi_1", 200, std, intent(func(m map[string]any) { m["created_at"] = "2026-01-01T00:00:00Z" }), false},
		{"null status", "/v1/payment_intents/pi_1", 200, std, intent(func(m map[string]any) { m["status"] = nil }), false},
		{"bad next action", "/v1/payment_intents/pi_1", 200, std, intent(func(m map[string]any) { m["next_action"] = map[string]any{"type": "redirect_to_url"} }), false},
		{"no Request-Id", "/v1/payment_intents/pi_1", 200, map[string]string{"Content-Type": "application/json"}, intent(nil), false},
		{"undocumented status", "/v1/payment_intents/pi_1", 418, std, errBody("not_found", "req_1"), false},
		{"404", "/v1/payment_intents/pi_1", 404, std, errBody("not_found", "req_1"), true},
		{"request_id differs", "/v1/payment_intents/pi_1", 404, std, errBody("not_found", "req_2"), false},
		{"unknown code", "/v1/payment_intents/pi_1", 404, std, errBody("gone", "req_1"), false},
		{"401 without challenge", "/v1/payment_intents", 401, std, errBody("unauthorized", "req_1"), false},
		{"401 with challenge", "/v1/payment_intents", 401, with(map[string]string{"WWW-Authenticate": `Basic realm="paykit"`}), errBody("unauthorized", "req_1"), true},
		{"401 with the operator challenge", "/v1/payment_intents", 401, with(map[string]string{"WWW-Authenticate": `Bearer realm="paykit-operator"`}), errBody("unauthorized", "req_1"), false},
		{"429 without Retry-After", "/v1/payment_intents", 429, std, errBody("rate_limited", "req_1"), false},
		{"429", "/v1/payment_intents", 429, with(map[string]string{"Retry-After": "1"}), errBody("rate_limited", "req_1"), true},
		{"unknown route 404", "/v1/nope", 404, std, errBody("not_found", "req_1"), true},
		{"unknown route 200", "/v1/nope", 200, std, `{}`, false},
		{"unknown route, bad body", "/v1/nope", 404, std, `{"error":"x"}`, false},
		{"405", "DELETE /v1/payment_intents", 405, with(map[string]string{"Allow": "GET, HEAD, POST"}), errBody("method_not_allowed", "req_1"), true},
		{"405 on a path with a parameter", "POST /v1/payment_intents/pi_1", 405, with(map[string]string{"Allow": "GET, HEAD"}), errBody("method_not_allowed", "req_1"), true},
		{"405 without Allow", "DELETE /v1/payment_intents", 405, std, errBody("method_not_allowed", "req_1"), false},
		{"405 with an Allow that differs from the document", "DELETE /v1/payment_intents", 405, with(map[string]string{"Allow": "GET, HEAD"}), errBody("method_not_allowed", "req_1"), false},
		{"405 with another code", "DELETE /v1/payment_intents", 405, with(map[string]string{"Allow": "GET, HEAD, POST"}), errBody("not_found", "req_1"), false},
		{"wrong method answered 404", "DELETE /v1/payment_intents", 404, std, errBody("not_found", "req_1"), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			method, path, ok := strings.Cut(c.path, " ") // "DELETE /v1/...", or a path to GET
			if !ok {
				method, path = "GET", c.path
			}
			req := httptest.NewRequest(method, "http://paykit.test"+path, nil)
			rec := &http.Response{StatusCode: c.status, Header: http.Header{}, Body: io.NopCloser(strings.NewReader(c.body))}
			for k, v := range c.headers {
				rec.Header.Set(k, v)
			}
			err := v.Check(req, rec)
			if (err == nil) != c.ok {
				t.Errorf("Check = %v, want ok=%v", err, c.ok)
			}
			if b, _ := io.ReadAll(rec.Body); string(b) != c.body {
				t.Errorf("body not restored")
			}
		})
	}
}

// TestCheckWebhook: a delivery is held to the webhooks section: the
// operation of its type, its headers and its body.
func TestCheckWebhook(t *testing.T) {
	v := oapitest.New(t, httpadapter.OpenAPIDocument())
	refund := map[string]any{
		"object": "refund", "id": "re_1", "payment_intent": "pi_1", "status": "pending", "amount": "100", "currency": "MYR",
		"merchant_reference": "r-1", "reason": nil, "failure_code": nil, "environment": "test",
		"created_at": "2026-01-01T00:00:00.000Z", "updated_at": "2026-01-01T00:00:00.000Z", "completed_at": nil,
	}
	event := func(typ string, data any) []byte {
		b, _ := json.Marshal(map[string]any{"id": "evt_1", "object": "event", "type": typ, "environment": "test",
			"created_at": "2026-01-01T00:00:00.000Z", "data": data})
		return b
	}
	header := func(sig string) http.Header {
		return http.Header{"Content-Type": {"application/json"}, "Webhook-Id": {"evt_1"}, "Webhook-Timestamp": {"1767225600"},
			"Webhook-Signature": {sig}}
	}
	two := "v1,Zm9v v1,YmFy"
	if err := v.CheckWebhook(header(two), event("refund.pending", refund)); err != nil {
		t.Fatalf("a valid delivery: %v", err)
	}
	bad := map[string]struct {
		h    http.Header
		body []byte
	}{
		"unknown type":         {header(two), event("refund.paid", refund)},
		"data of another type": {header(two), event("payment_intent.succeeded", refund)},
		"no signature":         {header(""), event("refund.pending", refund)},
		"bad signature":        {header("sha256=abc"), event("refund.pending", refund)},
		"extra member":         {header(two), []byte(strings.Replace(string(event("refund.pending", refund)), `"object":"event"`, `"object":"event","x":1`, 1))},
	}
	for name, c := range bad {
		if err := v.CheckWebhook(c.h, c.body); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
