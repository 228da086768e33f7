package httpadapter_test

import (
	"bytes"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/paykit/paykit"
)

// The payment intent routes, end to end against the real sandbox PSP.

// forEachSandbox runs fn per Store with a fresh sandbox env and a merchant
// with a test key pair.
func forEachSandbox(t *testing.T, fn func(t *testing.T, e *sandboxEnv, k keys)) {
	forEachStore(t, func(t *testing.T, open func(t *testing.T) paykit.Store) {
		e := newSandboxEnv(t, open)
		fn(t, e, e.merchant(paykit.Test))
	})
}

func idem(key string) header { return withHeader("Idempotency-Key", key) }

func withoutHeader(name string) header { return func(h http.Header) { h.Del(name) } }

// fpxBody is a valid FPX create request.
func fpxBody(amount, ref string) map[string]any {
	return map[string]any{
		"amount": amount, "currency": "MYR", "country": "MY", "merchant_reference": ref, "payment_method": "FPX",
		"customer": map[string]any{"name": "Aisyah Rahman", "email": "aisyah@example.com"},
	}
}

// methodBody is a valid create request of method in country (MY or TH).
func methodBody(method, country, amount, ref string) map[string]any {
	b := fpxBody(amount, ref)
	b["payment_method"], b["country"], b["currency"] = method, country, map[string]string{"MY": "MYR", "TH": "THB"}[country]
	return b
}

// with returns a copy of body with the members of set replaced (a nil
// value removes the member).
func with(body map[string]any, set map[string]any) map[string]any {
	out := maps.Clone(body)
	for k, v := range set {
		if v == nil {
			delete(out, k)
		} else {
			out[k] = v
		}
	}
	return out
}

// create posts a create request and returns the answer.
func (e *sandboxEnv) create(k keys, key string, body any) response {
	e.t.Helper()
	return e.do("POST", "/v1/payment_intents", body, basic(k), idem(key))
}

// created posts a create request that must answer 201 and returns the
// intent.
func (e *sandboxEnv) created(k keys, key string, body any) map[string]any {
	e.t.Helper()
	r := e.create(k, key, body)
	if r.status != http.StatusCreated {
		e.t.Fatalf("create: status %d: %s", r.status, r.body)
	}
	e.assertNoProviderDetail(r.body)
	return r.json(e.t)
}

// concurrently runs n requests at once (request i sent by send(i)) and
// returns their answers in order.
func (e *sandboxEnv) concurrently(n int, send func(i int) (response, error)) []response {
	e.t.Helper()
	answers := make([]response, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			answers[i], errs[i] = send(i)
		})
	}
	close(start)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			e.t.Fatal(err)
		}
	}
	return answers
}

// get reads an intent, which must exist.
func (e *sandboxEnv) get(k keys, id string) map[string]any {
	e.t.Helper()
	r := e.do("GET", "/v1/payment_intents/"+id, nil, basic(k))
	if r.status != http.StatusOK {
		e.t.Fatalf("get %s: status %d: %s", id, r.status, r.body)
	}
	e.assertNoProviderDetail(r.body)
	return r.json(e.t)
}

// listIDs returns the ids of GET /payment_intents?query (one page of 100).
func (e *sandboxEnv) listIDs(k keys, query string) []string {
	e.t.Helper()
	r := e.do("GET", "/v1/payment_intents?limit=100&"+query, nil, basic(k))
	if r.status != http.StatusOK {
		e.t.Fatalf("list: status %d: %s", r.status, r.body)
	}
	ids := []string{}
	for _, item := range r.json(e.t)["data"].([]any) {
		ids = append(ids, item.(map[string]any)["id"].(string))
	}
	return ids
}

// assertNoProviderDetail checks that a merchant-facing body names nothing
// of the Provider: not its URL, nor its local codes and states.
func (e *sandboxEnv) assertNoProviderDetail(body []byte) {
	e.t.Helper()
	for _, s := range []string{e.pspURL, "/api/payments", "fpx_b2c", "qr_promptpay", "MBB0228", "BSN0601", "PAYER_ACTION", "ERR_", "sandbox"} {
		if bytes.Contains(body, []byte(s)) {
			e.t.Errorf("body reveals the Provider (%q): %s", s, body)
		}
	}
}

func TestCreatePaymentIntent(t *testing.T) {
	forEachSandbox(t, func(t *testing.T, e *sandboxEnv, k keys) {
		is := is.New(t)
		body := with(fpxBody("15000", "order-1"), map[string]any{
			"payment_method_options": map[string]any{"bank": "MAYBANK"},
			"return_url":             "https://shop.example/return?order=1",
		})
		r := e.create(k, "create-1", body)
		is.Equal(r.status, http.StatusCreated)
		is.Equal(r.header.Get("Idempotent-Replayed"), "")
		e.assertNoProviderDetail(r.body)
		pi := r.json(t)
		id, _ := pi["id"].(string)
		is.True(strings.HasPrefix(id, "pi_"))
		na, _ := pi["next_action"].(map[string]any)
		next, _ := na["url"].(string)
		is.True(strings.HasPrefix(next, e.srv.URL+"/pay/continue/")) // a service continuation, not the PSP's page
		is.Equal(pi, map[string]any{
			"object": "payment_intent", "id": id, "status": "requires_action",
			"amount": "15000", "captured_amount": "0", "refunded_amount": "0", "disputed_amount": "0", "currency": "MYR", "country": "MY",
			"merchant_reference": "order-1", "payment_method": "FPX", "environment": "test",
			"next_action":  map[string]any{"type": "redirect_to_url", "url": next, "expires_at": "2026-06-01T08:30:00.000Z"},
			"failure_code": nil, "receipt": nil,
			"expires_at": "2026-06-01T08:30:00.000Z", "completed_at": nil,
			"created_at": "2026-06-01T08:00:00.000Z", "updated_at": "2026-06-01T08:00:00.000Z",
		})
		is.Equal(e.get(k, id), pi) // the read projection is the create projection

		// A retry gets the stored answer byte for byte, marked as a replay.
		rep := e.create(k, "create-1", body)
		is.Equal(rep.status, http.StatusCreated)
		is.Equal(rep.header.Get("Idempotent-Replayed"), "true")
		is.Equal(string(rep.body), string(r.body))
		// Semantically equal JSON (other member order, white space) is the
		// same request.
		raw := ` { "return_url": "https://shop.example/return?order=1", "payment_method_options": { "bank": "MAYBANK" },
			"customer": {"email": "aisyah@example.com", "name": "Aisyah Rahman"}, "payment_method": "FPX",
			"merchant_reference": "order-1", "country": "MY", "currency": "MYR", "amount": "15000" } `
		rep = e.create(k, "create-1", raw)
		is.Equal(rep.status, http.StatusCreated)
		is.Equal(rep.header.Get("Idempotent-Replayed"), "true")
		is.Equal(string(rep.body), string(r.body))

		// The replay is the first answer even after the intent moved on.
		e.do("POST", "/v1/test_helpers/payment_intents/"+id+"/approve", nil, basic(k))
		is.Equal(e.get(k, id)["status"], "succeeded")
		rep = e.create(k, "create-1", body)
		is.Equal(string(rep.body), string(r.body))
		is.Equal(rep.header.Get("Idempotent-Replayed"), "true")

		// One Provider attempt for all of it; the longest key is fine.
		is.Equal(e.psp.CreateCalls(id), 1)
		is.Equal(e.psp.PaymentCount(), 1)
		e.clock.Advance(time.Millisecond)
		long := e.created(k, strings.Repeat("~", 255), fpxBody("100", "order-2"))
		is.Equal(long["status"], "requires_action")
		is.Equal(e.listIDs(k, ""), []string{long["id"].(string), id})
	})
}

func TestCreatePaymentIntentNextActions(t *testing.T) {
	forEachSandbox(t, func(t *testing.T, e *sandboxEnv, k keys) {
		cases := []struct {
			method, country, action string
		}{
			{"PROMPTPAY", "TH", "display_qr_code"},
			{"DUITNOW_QR", "MY", "display_qr_code"},
			{"BANK_TRANSFER", "MY", "bank_transfer_instructions"},
			{"BANK_TRANSFER", "TH", "bank_transfer_instructions"},
			{"TNG", "MY", "redirect_to_url"},
			{"TRUEMONEY", "TH", "redirect_to_url"},
			{"CARD", "TH", "redirect_to_url"},
		}
		for i, c := range cases {
			t.Run(c.method+" "+c.country, func(t *testing.T) {
				is := is.New(t)
				pi := e.created(k, fmt.Sprintf("na-%d", i), methodBody(c.method, c.country, "25000", fmt.Sprintf("na-%d", i)))
				is.Equal(pi["status"], "requires_action")
				na := pi["next_action"].(map[string]any)
				is.Equal(na["type"], c.action)
				is.Equal(na["expires_at"], "2026-06-01T08:30:00.000Z")
				switch c.action {
				case "display_qr_code":
					is.True(strings.HasPrefix(na["qr_data"].(string), "000201")) // EMVCo payload format indicator
					img := na["image_url"].(string)
					is.True(strings.HasPrefix(img, e.srv.URL+"/pay/qr/") && strings.HasSuffix(img, ".png"))
				case "bank_transfer_instructions":
					for _, f := range []string{"bank_name", "account_number", "account_holder", "reference"} {
						is.True(na[f].(string) != "")
					}
					is.Equal(na["amount"], "25000")
					is.Equal(na["currency"], pi["currency"])
				case "redirect_to_url":
					is.True(strings.HasPrefix(na["url"].(string), e.srv.URL+"/pay/continue/"))
				}
			})
		}
	})
}

func TestCreatePaymentIntentRejections(t *testing.T) {
	forEachSandbox(t, func(t *testing.T, e *sandboxEnv, k keys) {
		live := e.keyFor(k.merchantID, paykit.Live)
		base := fpxBody("15000", "order-1")
		const key = "reused-after-every-rejection"
		cases := []struct {
			name    string
			body    any
			headers []header
			status  int
			code    string
			param   string
		}{
			// Headers.
			{name: "no Idempotency-Key", body: base, headers: []header{withoutHeader("Idempotency-Key")}, param: "Idempotency-Key"},
			{name: "empty Idempotency-Key", body: base, headers: []header{idem("")}, param: "Idempotency-Key"},
			{name: "Idempotency-Key with a space", body: base, headers: []header{idem("a b")}, param: "Idempotency-Key"},
			{name: "Idempotency-Key not ASCII", body: base, headers: []header{idem("clé")}, param: "Idempotency-Key"},
			{name: "Idempotency-Key of 256", body: base, headers: []header{idem(strings.Repeat("k", 256))}, param: "Idempotency-Key"},
			{name: "Idempotency-Key twice", body: base, headers: []header{func(h http.Header) { h.Add("Idempotency-Key", "other") }}, param: "Idempotency-Key"},
			{name: "no Content-Type", body: base, headers: []header{withoutHeader("Content-Type")}, param: "Content-Type"},
			{name: "form Content-Type", body: base, headers: []header{withHeader("Content-Type", "application/x-www-form-urlencoded")}, param: "Content-Type"},
			{name: "Latin-1 charset", body: base, headers: []header{withHeader("Content-Type", "application/json; charset=iso-8859-1")}, param: "Content-Type"},
			// The body's shape.
			{name: "empty body", body: "", param: ""},
			{name: "not JSON", body: `{"amount":`, param: ""},
			{name: "array", body: `[]`, param: ""},
			{name: "two objects", body: `{} {}`, param: ""},
			{name: "checkout_mode", body: with(base, map[string]any{"checkout_mode": "direct"}), param: "checkout_mode"},
			{name: "provider", body: with(base, map[string]any{"provider": "sandbox"}), param: "provider"},
			{name: "metadata", body: with(base, map[string]any{"metadata": map[string]any{}}), param: "metadata"},
			{name: "amount a number", body: with(base, map[string]any{"amount": 15000}), param: "amount"},
			{name: "customer a string", body: with(base, map[string]any{"customer": "Aisyah"}), param: "customer"},
			{name: "customer value a number", body: with(base, map[string]any{"customer": map[string]any{"name": 7, "email": "a@example.com"}}), param: "customer.name"},
			{name: "options value a bool", body: with(base, map[string]any{"payment_method_options": map[string]any{"bank": true}}), param: "payment_method_options.bank"},
			// Field rules.
			{name: "amount missing", body: with(base, map[string]any{"amount": nil}), param: "amount"},
			{name: "amount zero", body: with(base, map[string]any{"amount": "0"}), param: "amount"},
			{name: "amount leading zero", body: with(base, map[string]any{"amount": "015000"}), param: "amount"},
			{name: "amount negative", body: with(base, map[string]any{"amount": "-15000"}), param: "amount"},
			{name: "amount decimal", body: with(base, map[string]any{"amount": "150.00"}), param: "amount"},
			{name: "amount of 19 digits", body: with(base, map[string]any{"amount": strings.Repeat("9", 19)}), param: "amount"},
			{name: "currency lowercase", body: with(base, map[string]any{"currency": "myr"}), param: "currency"},
			{name: "currency short", body: with(base, map[string]any{"currency": "MY"}), param: "currency"},
			{name: "country alpha-3", body: with(base, map[string]any{"country": "MYS"}), param: "country"},
			{name: "country missing", body: with(base, map[string]any{"country": nil}), param: "country"},
			{name: "merchant_reference empty", body: with(base, map[string]any{"merchant_reference": ""}), param: "merchant_reference"},
			{name: "merchant_reference of 257", body: with(base, map[string]any{"merchant_reference": strings.Repeat("r", 257)}), param: "merchant_reference"},
			{name: "payment_method unknown", body: with(base, map[string]any{"payment_method": "PAYPAL"}), param: "payment_method"},
			{name: "payment_method lowercase", body: with(base, map[string]any{"payment_method": "fpx"}), param: "payment_method"},
			{name: "payment_method missing", body: with(base, map[string]any{"payment_method": nil}), param: "payment_method"},
			{name: "customer missing", body: with(base, map[string]any{"customer": nil}), param: "customer"},
			{name: "customer value too long", body: with(base, map[string]any{"customer": map[string]any{"name": strings.Repeat("n", 513), "email": "a@example.com"}}), param: "customer.name"},
			{name: "customer email malformed", body: with(base, map[string]any{"customer": map[string]any{"name": "A", "email": "not-an-email"}}), param: "customer.email"},
			{name: "return_url not http", body: with(base, map[string]any{"return_url": "ftp://shop.example/x"}), param: "return_url"},
			{name: "return_url relative", body: with(base, map[string]any{"return_url": "/return"}), param: "return_url"},
			{name: "return_url of 2049", body: with(base, map[string]any{"return_url": "https://shop.example/" + strings.Repeat("r", 2049-21)}), param: "return_url"},
			{name: "bank unknown", body: with(base, map[string]any{"payment_method_options": map[string]any{"bank": "MBB0228"}}), param: "payment_method_options.bank"},
			{name: "FPX option unknown", body: with(base, map[string]any{"payment_method_options": map[string]any{"channel": "fpx_b2c"}}), param: "payment_method_options.channel"},
			{name: "TNG takes no option", body: with(methodBody("TNG", "MY", "100", "r"), map[string]any{"payment_method_options": map[string]any{"bank": "MAYBANK"}}), param: "payment_method_options.bank"},
			{name: "unknown query parameter", body: base, headers: []header{}, param: "expand"},
			// The route: 422.
			{name: "method not offered in country", body: methodBody("TNG", "TH", "100", "r"), status: 422, code: paykit.CodePaymentMethodUnavailable, param: "payment_method"},
			{name: "currency not of the route", body: with(base, map[string]any{"currency": "THB"}), status: 422, code: paykit.CodePaymentMethodUnavailable, param: "payment_method"},
			{name: "country without routes", body: with(base, map[string]any{"country": "SG", "currency": "SGD"}), status: 422, code: paykit.CodePaymentMethodUnavailable, param: "payment_method"},
			{name: "live key", body: base, headers: []header{basic(live)}, status: 422, code: paykit.CodePaymentMethodUnavailable, param: "payment_method"},
			{name: "bank offline", body: with(base, map[string]any{"payment_method_options": map[string]any{"bank": "BSN"}}), status: 422, code: paykit.CodePaymentMethodUnavailable, param: "payment_method_options.bank"},
			{name: "FPX without email", body: with(base, map[string]any{"customer": map[string]any{"name": "Aisyah"}}), status: 422, code: paykit.CodeMissingRequiredField, param: "customer.email"},
			{name: "CARD without email", body: with(methodBody("CARD", "MY", "100", "r"), map[string]any{"customer": map[string]any{"name": "Aisyah"}}), status: 422, code: paykit.CodeMissingRequiredField, param: "customer.email"},
			{name: "TNG without name", body: with(methodBody("TNG", "MY", "100", "r"), map[string]any{"customer": map[string]any{}}), status: 422, code: paykit.CodeMissingRequiredField, param: "customer.name"},
			{name: "empty name", body: with(base, map[string]any{"customer": map[string]any{"name": "", "email": "a@example.com"}}), status: 422, code: paykit.CodeMissingRequiredField, param: "customer.name"},
			// Size.
			{name: "body over 64 KiB", body: with(base, map[string]any{"customer": map[string]any{"name": "A", "email": "a@example.com", "note": strings.Repeat("x", 64<<10)}}), status: 413, code: paykit.CodeRequestTooLarge},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				hs := append([]header{basic(k), idem(key)}, c.headers...)
				path := "/v1/payment_intents"
				if c.param == "expand" {
					path += "?expand=next_action"
				}
				status, code := c.status, c.code
				if status == 0 {
					status, code = http.StatusBadRequest, paykit.CodeInvalidRequest
				}
				r := e.do("POST", path, c.body, hs...)
				assertError(t, r, status, code, c.param)
			})
		}

		// Nothing was stored: no intent, no Provider attempt, and the key
		// works with a corrected request.
		is := is.New(t)
		is.Equal(e.listIDs(k, ""), []string{})
		is.Equal(e.listIDs(live, ""), []string{})
		is.Equal(e.psp.PaymentCount(), 0)
		r := e.create(k, key, base)
		is.Equal(r.status, http.StatusCreated)
		is.Equal(r.header.Get("Idempotent-Replayed"), "")
		is.Equal(len(e.listIDs(k, "")), 1)
	})
}

func TestCreatePaymentIntentConflicts(t *testing.T) {
	forEachSandbox(t, func(t *testing.T, e *sandboxEnv, k keys) {
		is := is.New(t)
		first := e.created(k, "key-1", fpxBody("15000", "order-1"))
		id := first["id"].(string)

		// The same key with any changed field is a conflict.
		for name, body := range map[string]map[string]any{
			"amount":    fpxBody("15001", "order-1"),
			"reference": fpxBody("15000", "order-9"),
			"customer":  with(fpxBody("15000", "order-1"), map[string]any{"customer": map[string]any{"name": "Aisyah Rahman", "email": "other@example.com"}}),
			"added":     with(fpxBody("15000", "order-1"), map[string]any{"return_url": "https://shop.example/r"}),
		} {
			t.Run("changed "+name, func(t *testing.T) {
				assertError(t, e.create(k, "key-1", body), http.StatusConflict, paykit.CodeIdempotencyConflict, "Idempotency-Key")
			})
		}
		// ... and so is the same key on another endpoint, either way round.
		r := e.do("POST", "/v1/payment_intents/"+id+"/cancel", nil, basic(k), idem("key-1"))
		assertError(t, r, http.StatusConflict, paykit.CodeIdempotencyConflict, "Idempotency-Key")
		is.Equal(e.get(k, id)["status"], "requires_action") // the cancel did not happen
		other := e.created(k, "key-2", fpxBody("200", "order-2"))
		r = e.do("POST", "/v1/payment_intents/"+other["id"].(string)+"/cancel", nil, basic(k), idem("cancel-key"))
		is.Equal(r.status, http.StatusAccepted)
		assertError(t, e.create(k, "cancel-key", fpxBody("300", "order-3")), http.StatusConflict, paykit.CodeIdempotencyConflict, "Idempotency-Key")
		assertError(t, e.do("POST", "/v1/payment_intents/"+id+"/cancel", nil, basic(k), idem("cancel-key")),
			http.StatusConflict, paykit.CodeIdempotencyConflict, "Idempotency-Key") // another intent
		// Keys are per merchant and environment: another merchant's key-1 is new.
		k2 := e.merchant(paykit.Test)
		is.Equal(e.create(k2, "key-1", fpxBody("15001", "order-1")).status, http.StatusCreated)

		// A new key with a used merchant_reference is a duplicate, and
		// stores nothing: the key then works with another reference.
		assertError(t, e.create(k, "key-3", fpxBody("999", "order-1")), http.StatusConflict, paykit.CodeDuplicateMerchantReference, "merchant_reference")
		third := e.created(k, "key-3", fpxBody("999", "order-3"))
		is.Equal(third["merchant_reference"], "order-3")
		// The live environment has no routes: its answer is 422, not the
		// test environment's duplicate.
		live := e.keyFor(k.merchantID, paykit.Live)
		assertError(t, e.create(live, "key-3", fpxBody("999", "order-1")), 422, paykit.CodePaymentMethodUnavailable, "payment_method")

		is.Equal(len(e.listIDs(k, "")), 3)
		is.Equal(e.psp.PaymentCount(), 4)
	})
}

func TestConcurrentIdenticalCreates(t *testing.T) {
	forEachStore(t, func(t *testing.T, open func(t *testing.T) paykit.Store) {
		e := newSandboxEnvConfig(t, open, envConfig{providerTimeout: 10 * time.Second})
		k := e.merchant(paykit.Test)
		is := is.New(t)
		answers := e.concurrently(50, func(int) (response, error) {
			return e.send("POST", "/v1/payment_intents", fpxBody("7000", "order-same"), basic(k), idem("same-key"))
		})
		var first string
		created, fresh, inProgress := 0, 0, 0
		for i, r := range answers {
			switch r.status {
			case http.StatusCreated:
				created++
				if r.header.Get("Idempotent-Replayed") == "" {
					fresh++
				}
				if first == "" {
					first = string(r.body)
				}
				is.Equal(string(r.body), first) // every 201 is the same body
			case http.StatusConflict:
				inProgress++
				assertError(t, r, http.StatusConflict, paykit.CodeIdempotencyInProgress, "Idempotency-Key")
				is.True(r.header.Get("Retry-After") != "")
			default:
				t.Fatalf("answer %d: status %d: %s", i, r.status, r.body)
			}
		}
		t.Logf("%d created, %d in progress", created, inProgress)
		is.Equal(fresh, 1) // one request ran; the other 201s are replays
		ids := e.listIDs(k, "")
		is.Equal(len(ids), 1)
		is.Equal(e.psp.CreateCalls(ids[0]), 1)
		is.Equal(e.psp.PaymentCount(), 1)
		// Afterwards the key replays the one answer.
		r := e.create(k, "same-key", fpxBody("7000", "order-same"))
		is.Equal(r.header.Get("Idempotent-Replayed"), "true")
		is.Equal(string(r.body), first)
	})
}

func TestCreateWhileTheFirstRequestRuns(t *testing.T) {
	forEachSandbox(t, func(t *testing.T, e *sandboxEnv, k keys) {
		is := is.New(t)
		// An amount ending in 902 holds the Provider call until the
		// adapter gives up: the first request is persisted and waits.
		body := fpxBody("10902", "order-1")
		first := make(chan response, 1)
		go func() {
			r, err := e.send("POST", "/v1/payment_intents", body, basic(k), idem("slow-key"))
			if err != nil {
				t.Error(err)
			}
			first <- r
		}()
		deadline := time.Now().Add(5 * time.Second)
		for e.psp.PaymentCount() == 0 {
			if time.Now().After(deadline) {
				t.Fatal("the Provider never saw the create call")
			}
			time.Sleep(time.Millisecond)
		}
		r := e.create(k, "slow-key", body)
		assertError(t, r, http.StatusConflict, paykit.CodeIdempotencyInProgress, "Idempotency-Key")
		is.Equal(r.header.Get("Retry-After"), "30") // the first request's claim, on the frozen clock
		// A changed request is a conflict, in progress or not.
		assertError(t, e.create(k, "slow-key", fpxBody("10903", "order-1")), http.StatusConflict, paykit.CodeIdempotencyConflict, "Idempotency-Key")

		done := <-first
		is.Equal(done.status, http.StatusCreated)
		is.Equal(done.json(t)["status"], "processing")
		r = e.create(k, "slow-key", body)
		is.Equal(r.status, http.StatusCreated)
		is.Equal(r.header.Get("Idempotent-Replayed"), "true")
		is.Equal(string(r.body), string(done.body))
		is.Equal(e.psp.CreateCalls(done.json(t)["id"].(string)), 1)
	})
}

func TestConcurrentCreatesOfOneReference(t *testing.T) {
	forEachStore(t, func(t *testing.T, open func(t *testing.T) paykit.Store) {
		e := newSandboxEnvConfig(t, open, envConfig{providerTimeout: 10 * time.Second})
		k := e.merchant(paykit.Test)
		is := is.New(t)
		answers := e.concurrently(20, func(i int) (response, error) {
			return e.send("POST", "/v1/payment_intents", fpxBody("5000", "order-once"), basic(k), idem(fmt.Sprintf("key-%d", i)))
		})
		created := 0
		for _, r := range answers {
			if r.status == http.StatusCreated {
				created++
				continue
			}
			assertError(t, r, http.StatusConflict, paykit.CodeDuplicateMerchantReference, "merchant_reference")
		}
		is.Equal(created, 1) // merchant_reference is one business identity, whatever the keys
		is.Equal(len(e.listIDs(k, "")), 1)
		is.Equal(e.psp.PaymentCount(), 1)
	})
}

func TestPaymentIntentTenantIsolation(t *testing.T) {
	forEachSandbox(t, func(t *testing.T, e *sandboxEnv, a keys) {
		is := is.New(t)
		aLive := e.keyFor(a.merchantID, paykit.Live)
		b := e.merchant(paykit.Test)
		pi := e.created(a, "a-1", fpxBody("15000", "order-1"))
		id := pi["id"].(string)

		for name, k := range map[string]keys{"other merchant": b, "own live key": aLive} {
			t.Run(name, func(t *testing.T) {
				is := is.New(t)
				assertError(t, e.do("GET", "/v1/payment_intents/"+id, nil, basic(k)), http.StatusNotFound, paykit.CodeNotFound, "")
				r := e.do("POST", "/v1/payment_intents/"+id+"/cancel", nil, basic(k), idem("x-cancel"))
				assertError(t, r, http.StatusNotFound, paykit.CodeNotFound, "")
				is.Equal(r.errorOf(t)["message"], "No such payment_intent.") // as for an unknown id
				assertError(t, e.do("POST", "/v1/test_helpers/payment_intents/"+id+"/approve", nil, basic(k)), http.StatusNotFound, paykit.CodeNotFound, "")
				is.Equal(e.listIDs(k, ""), []string{})
				is.Equal(e.listIDs(k, "merchant_reference=order-1"), []string{})
			})
		}
		r := e.do("POST", "/v1/payment_intents/pi_unknown/cancel", nil, basic(a), idem("x-cancel"))
		assertError(t, r, http.StatusNotFound, paykit.CodeNotFound, "")
		is.Equal(r.errorOf(t)["message"], "No such payment_intent.")
		// None of that touched the intent; b may use the same reference.
		is.Equal(e.get(a, id)["status"], "requires_action")
		is.Equal(e.created(b, "a-1", fpxBody("15000", "order-1"))["status"], "requires_action")
	})
}

func TestCancelPaymentIntent(t *testing.T) {
	forEachSandbox(t, func(t *testing.T, e *sandboxEnv, k keys) {
		is := is.New(t)
		id := e.created(k, "c-1", fpxBody("15000", "order-1"))["id"].(string)
		path := "/v1/payment_intents/" + id + "/cancel"

		// Bad requests store nothing.
		for _, c := range []struct {
			name    string
			body    any
			headers []header
			param   string
		}{
			{"no Idempotency-Key", nil, nil, "Idempotency-Key"},
			{"malformed Idempotency-Key", nil, []header{idem("a key")}, "Idempotency-Key"},
			{"body without Content-Type", `{"reason":"x"}`, []header{idem("cancel-1"), withoutHeader("Content-Type")}, "Content-Type"},
			{"unknown member", map[string]any{"reason": "x", "cancellation_reason": "abandoned"}, []header{idem("cancel-1")}, "cancellation_reason"},
			{"empty reason", map[string]any{"reason": ""}, []header{idem("cancel-1")}, "reason"},
			{"reason of 513", map[string]any{"reason": strings.Repeat("r", 513)}, []header{idem("cancel-1")}, "reason"},
			{"reason a number", map[string]any{"reason": 5}, []header{idem("cancel-1")}, "reason"},
			{"not an object", `"abandoned"`, []header{idem("cancel-1")}, ""},
			{"unknown query parameter", nil, []header{idem("cancel-1")}, "force"},
		} {
			t.Run(c.name, func(t *testing.T) {
				p := path
				if c.param == "force" {
					p += "?force=true"
				}
				r := e.do("POST", p, c.body, append([]header{basic(k)}, c.headers...)...)
				assertError(t, r, http.StatusBadRequest, paykit.CodeInvalidRequest, c.param)
			})
		}
		is.Equal(e.get(k, id)["status"], "requires_action")

		// An empty body needs no Content-Type. The attempt is open at the
		// Provider, so the intent stays requires_action until the worker
		// has the Provider's confirmation.
		r := e.do("POST", path, nil, basic(k), idem("cancel-1"))
		is.Equal(r.status, http.StatusAccepted)
		is.Equal(r.header.Get("Idempotent-Replayed"), "")
		e.assertNoProviderDetail(r.body)
		accepted := r.json(t)
		is.Equal(accepted["status"], "requires_action")
		is.Equal(accepted["id"], id)
		rep := e.do("POST", path, nil, basic(k), idem("cancel-1"))
		is.Equal(rep.status, http.StatusAccepted)
		is.Equal(rep.header.Get("Idempotent-Replayed"), "true")
		is.Equal(string(rep.body), string(r.body))
		// {} is the same request as no body; a reason is another.
		rep = e.do("POST", path, "{}", basic(k), idem("cancel-1"))
		is.Equal(string(rep.body), string(r.body))
		assertError(t, e.do("POST", path, map[string]any{"reason": "customer left"}, basic(k), idem("cancel-1")),
			http.StatusConflict, paykit.CodeIdempotencyConflict, "Idempotency-Key")
		// A second cancel while the first waits for the Provider is accepted
		// and changes nothing.
		r = e.do("POST", path, map[string]any{"reason": "customer left"}, basic(k), idem("cancel-2"))
		is.Equal(r.status, http.StatusAccepted)
		is.Equal(r.json(t)["status"], "requires_action")

		// The worker makes the Provider call; reads alone never do.
		is.Equal(e.get(k, id)["status"], "requires_action")
		e.drain()
		pi := e.get(k, id)
		is.Equal(pi["status"], "cancelled")
		is.Equal(pi["next_action"], nil)
		is.Equal(pi["completed_at"], "2026-06-01T08:00:00.000Z")
		is.Equal(pi["captured_amount"], "0")
		is.Equal(pi["failure_code"], nil)

		// A terminal intent cannot be cancelled; nothing is stored, so the
		// key remains free.
		assertError(t, e.do("POST", path, nil, basic(k), idem("cancel-3")), 422, paykit.CodeInvalidState, "")
		paid := e.created(k, "c-2", fpxBody("2000", "order-2"))["id"].(string)
		is.Equal(e.do("POST", "/v1/test_helpers/payment_intents/"+paid+"/approve", nil, basic(k)).status, http.StatusOK)
		assertError(t, e.do("POST", "/v1/payment_intents/"+paid+"/cancel", nil, basic(k), idem("cancel-3")), 422, paykit.CodeInvalidState, "")
		declined := e.created(k, "c-3", fpxBody("3901", "order-3"))
		is.Equal(declined["status"], "failed")
		r = e.do("POST", "/v1/payment_intents/"+declined["id"].(string)+"/cancel", nil, basic(k), idem("cancel-3"))
		assertError(t, r, 422, paykit.CodeInvalidState, "")
		third := e.created(k, "c-4", fpxBody("4000", "order-4"))["id"].(string)
		r = e.do("POST", "/v1/payment_intents/"+third+"/cancel", "{}", basic(k), idem("cancel-3"))
		is.Equal(r.status, http.StatusAccepted)
	})
}

func TestCancelWhileProviderSettles(t *testing.T) {
	forEachSandbox(t, func(t *testing.T, e *sandboxEnv, k keys) {
		is := is.New(t)
		// The Provider times out: the payment is processing, the payer's
		// bank already has it.
		pi := e.created(k, "s-1", fpxBody("5902", "order-1"))
		is.Equal(pi["status"], "processing")
		id := pi["id"].(string)
		r := e.do("POST", "/v1/payment_intents/"+id+"/cancel", map[string]any{"reason": "too slow"}, basic(k), idem("cancel-1"))
		is.Equal(r.status, http.StatusAccepted)
		is.Equal(r.json(t)["status"], "processing")
		e.drain()
		is.Equal(e.get(k, id)["status"], "processing") // the Provider has not settled yet
		// It settles as it would have: the cancel came too late.
		e.clock.Advance(sandboxDelay + 30*time.Second)
		e.drain()
		pi = e.get(k, id)
		is.Equal(pi["status"], "succeeded")
		is.Equal(pi["captured_amount"], "5902")
	})
}

func TestPaymentTestHelpers(t *testing.T) {
	forEachSandbox(t, func(t *testing.T, e *sandboxEnv, k keys) {
		is := is.New(t)
		live := e.keyFor(k.merchantID, paykit.Live)
		approved := e.created(k, "h-1", fpxBody("15000", "order-1"))["id"].(string)
		declined := e.created(k, "h-2", methodBody("PROMPTPAY", "TH", "9900", "order-2"))["id"].(string)
		approve := "/v1/test_helpers/payment_intents/" + approved + "/approve"

		assertError(t, e.do("POST", approve, map[string]any{"amount": "1"}, basic(k)), 400, paykit.CodeInvalidRequest, "amount")
		assertError(t, e.do("POST", approve, "{}", basic(k), withHeader("Content-Type", "text/plain")), 400, paykit.CodeInvalidRequest, "Content-Type")
		assertError(t, e.do("POST", approve+"?outcome=paid", nil, basic(k)), 400, paykit.CodeInvalidRequest, "outcome")
		// A live key does not have the route at all.
		r := e.do("POST", approve, nil, basic(live))
		assertError(t, r, http.StatusNotFound, paykit.CodeNotFound, "")
		is.True(strings.HasPrefix(r.errorOf(t)["message"].(string), "Unrecognized request URL"))
		assertError(t, e.do("POST", "/v1/test_helpers/payment_intents/pi_unknown/approve", nil, basic(k)), 404, paykit.CodeNotFound, "")
		is.Equal(e.get(k, approved)["status"], "requires_action")

		r = e.do("POST", approve, "{}", basic(k))
		is.Equal(r.status, http.StatusOK)
		e.assertNoProviderDetail(r.body)
		pi := r.json(t)
		is.Equal(pi["status"], "succeeded")
		is.Equal(pi["captured_amount"], "15000")
		is.Equal(pi["next_action"], nil)
		is.Equal(pi["failure_code"], nil)
		is.Equal(pi["completed_at"], "2026-06-01T08:00:00.000Z")
		receipt := pi["receipt"].(map[string]any)
		is.True(receipt["number"].(string) != "")
		is.Equal(receipt, map[string]any{
			"number": receipt["number"], "paid_at": "2026-06-01T08:00:00.000Z", "amount": "15000", "currency": "MYR", "payment_method": "FPX",
		})
		is.Equal(e.get(k, approved), pi)
		// Once the payer acted there is nothing left to approve or decline.
		assertError(t, e.do("POST", approve, nil, basic(k)), 422, paykit.CodeInvalidState, "")
		assertError(t, e.do("POST", "/v1/test_helpers/payment_intents/"+approved+"/decline", nil, basic(k)), 422, paykit.CodeInvalidState, "")

		r = e.do("POST", "/v1/test_helpers/payment_intents/"+declined+"/decline", nil, basic(k))
		is.Equal(r.status, http.StatusOK)
		pi = r.json(t)
		is.Equal(pi["status"], "failed")
		is.Equal(pi["failure_code"], "provider_declined")
		is.Equal(pi["captured_amount"], "0")
		is.Equal(pi["receipt"], nil)
		is.Equal(pi["next_action"], nil)
		assertError(t, e.do("POST", "/v1/test_helpers/payment_intents/"+declined+"/approve", nil, basic(k)), 422, paykit.CodeInvalidState, "")

		// A processing payment does not wait for its payer.
		slow := e.created(k, "h-3", fpxBody("1902", "order-3"))["id"].(string)
		assertError(t, e.do("POST", "/v1/test_helpers/payment_intents/"+slow+"/approve", nil, basic(k)), 422, paykit.CodeInvalidState, "")

		// Nor does one whose payer ran out of time, even before the worker
		// noticed: the helper finds out from the Provider.
		late := e.created(k, "h-4", fpxBody("1000", "order-4"))["id"].(string)
		e.clock.Advance(31 * time.Minute)
		assertError(t, e.do("POST", "/v1/test_helpers/payment_intents/"+late+"/approve", nil, basic(k)), 422, paykit.CodeInvalidState, "")
		pi = e.get(k, late)
		is.Equal(pi["status"], "expired")
		is.Equal(pi["failure_code"], "expired")
	})
}

func TestMagicAmounts(t *testing.T) {
	forEachSandbox(t, func(t *testing.T, e *sandboxEnv, k keys) {
		is := is.New(t)

		declined := e.created(k, "m-901", fpxBody("12901", "order-901"))
		is.Equal(declined["status"], "failed")
		is.Equal(declined["failure_code"], "provider_declined")
		is.Equal(declined["next_action"], nil)
		is.Equal(declined["completed_at"], "2026-06-01T08:00:00.000Z")

		// 902 and 903: the Provider does not answer in time. The payments
		// are persisted and processing; the PSP recorded the attempts.
		began := time.Now()
		ok := e.created(k, "m-902", fpxBody("12902", "order-902"))
		fail := e.created(k, "m-903", methodBody("TNG", "MY", "903", "order-903"))
		is.True(time.Since(began) < 4*time.Second) // the adapter's timeout, not the PSP's hold
		for _, pi := range []map[string]any{ok, fail} {
			is.Equal(pi["status"], "processing")
			is.Equal(pi["next_action"], nil)
			is.Equal(pi["failure_code"], nil)
			is.Equal(e.psp.CreateCalls(pi["id"].(string)), 1)
		}
		// The replay of a processing answer is that answer.
		r := e.create(k, "m-902", fpxBody("12902", "order-902"))
		is.Equal(r.header.Get("Idempotent-Replayed"), "true")
		is.Equal(r.json(t), ok)

		// Before the sandbox delay the worker finds them still pending.
		e.clock.Advance(time.Second)
		e.drain()
		is.Equal(e.get(k, ok["id"].(string))["status"], "processing")
		// After it, reads alone change nothing: only the worker does.
		e.clock.Advance(sandboxDelay + time.Minute)
		is.Equal(e.get(k, ok["id"].(string))["status"], "processing")
		e.drain()
		got := e.get(k, ok["id"].(string))
		is.Equal(got["status"], "succeeded")
		is.Equal(got["captured_amount"], "12902")
		is.Equal(got["receipt"].(map[string]any)["amount"], "12902")
		got = e.get(k, fail["id"].(string))
		is.Equal(got["status"], "failed")
		is.Equal(got["failure_code"], "provider_declined")
		is.Equal(got["captured_amount"], "0")
		is.Equal(got["receipt"], nil)
		is.Equal(e.psp.PaymentCount(), 3)
		is.Equal(e.psp.CreateCalls(ok["id"].(string)), 1) // recovery asked, it did not create again
	})
}

func TestListPaymentMethods(t *testing.T) {
	forEachSandbox(t, func(t *testing.T, e *sandboxEnv, k keys) {
		is := is.New(t)
		live := e.keyFor(k.merchantID, paykit.Live)
		methods := func(k keys, query string) map[string]any {
			t.Helper()
			r := e.do("GET", "/v1/payment_methods?"+query, nil, basic(k))
			if r.status != http.StatusOK {
				t.Fatalf("status %d: %s", r.status, r.body)
			}
			e.assertNoProviderDetail(r.body)
			return r.json(t)
		}
		names := func(list map[string]any) []string {
			out := []string{}
			for _, m := range list["data"].([]any) {
				out = append(out, m.(map[string]any)["payment_method"].(string))
			}
			return out
		}

		my := methods(k, "amount=10000&currency=MYR&country=MY")
		is.Equal(my["object"], "list")
		is.Equal(my["has_more"], false)
		is.Equal(my["next_cursor"], nil)
		// The contract's method order.
		is.Equal(names(my), []string{"FPX", "BANK_TRANSFER", "TNG", "BOOST", "CARD", "GRABPAY", "ALIPAY", "UMOBILE", "EMONEI", "DUITNOW_QR", "WECHAT_PAY", "UNIONPAY"})
		data := my["data"].([]any)
		fpx := data[0].(map[string]any)
		is.Equal(fpx["object"], "payment_method")
		is.Equal(fpx["next_action_type"], "redirect_to_url")
		is.Equal(fpx["required_customer_fields"], []any{"name", "email"})
		banks := map[string]bool{}
		for _, b := range fpx["banks"].([]any) {
			b := b.(map[string]any)
			banks[b["code"].(string)] = b["available"].(bool)
			is.True(b["name"].(string) != "")
		}
		is.Equal(banks, map[string]bool{
			"MAYBANK": true, "CIMB": true, "PUBLIC": true, "RHB": true, "HLB": true, "AMBANK": true, "BSN": false, "BIMB": true,
		})
		for _, m := range data[1:] {
			m := m.(map[string]any)
			_, hasBanks := m["banks"]
			is.True(!hasBanks) // only a method with a bank choice lists banks
			want := []any{"name"}
			if m["payment_method"] == "CARD" {
				want = []any{"name", "email"}
			}
			is.Equal(m["required_customer_fields"], want)
		}
		is.Equal(data[1].(map[string]any)["next_action_type"], "bank_transfer_instructions")
		is.Equal(data[9].(map[string]any)["next_action_type"], "display_qr_code")

		th := methods(k, "amount=50000&currency=THB&country=TH")
		is.Equal(names(th), []string{"PROMPTPAY", "TRUEMONEY", "BANK_TRANSFER", "CARD"})
		is.Equal(th["data"].([]any)[0].(map[string]any)["next_action_type"], "display_qr_code")

		// Nothing eligible: an empty list.
		is.Equal(names(methods(live, "amount=10000&currency=MYR&country=MY")), []string{})
		is.Equal(names(methods(k, "amount=10000&currency=THB&country=MY")), []string{})
		is.Equal(names(methods(k, "amount=10000&currency=SGD&country=SG")), []string{})

		for _, c := range []struct{ query, param string }{
			{"currency=MYR&country=MY", "amount"},
			{"amount=10000&country=MY", "currency"},
			{"amount=10000&currency=MYR", "country"},
			{"", "amount"},
			{"amount=&currency=MYR&country=MY", "amount"},
			{"amount=0&currency=MYR&country=MY", "amount"},
			{"amount=10.00&currency=MYR&country=MY", "amount"},
			{"amount=1&amount=2&currency=MYR&country=MY", "amount"},
			{"amount=10000&currency=myr&country=MY", "currency"},
			{"amount=10000&currency=MYR&country=MYS", "country"},
			{"amount=10000&currency=MYR&country=MY&payment_method=FPX", "payment_method"},
		} {
			t.Run(c.query, func(t *testing.T) {
				assertError(t, e.do("GET", "/v1/payment_methods?"+c.query, nil, basic(k)), 400, paykit.CodeInvalidRequest, c.param)
			})
		}
		assertError(t, e.do("GET", "/v1/payment_methods?amount=1&currency=MYR&country=MY", nil), 401, paykit.CodeUnauthorized, "")
	})
}

func TestListCreatedPaymentIntents(t *testing.T) {
	forEachSandbox(t, func(t *testing.T, e *sandboxEnv, k keys) {
		is := is.New(t)
		ids := map[string]string{}
		for _, c := range []struct {
			ref  string
			body map[string]any
		}{
			{"fpx", fpxBody("10000", "fpx")},
			{"declined", fpxBody("10901", "declined")},
			{"promptpay", methodBody("PROMPTPAY", "TH", "20000", "promptpay")},
			{"tng", methodBody("TNG", "MY", "30000", "tng")},
		} {
			e.clock.Advance(time.Minute)
			ids[c.ref] = e.created(k, "l-"+c.ref, c.body)["id"].(string)
		}
		is.Equal(e.do("POST", "/v1/test_helpers/payment_intents/"+ids["tng"]+"/approve", nil, basic(k)).status, http.StatusOK)
		e.clock.Advance(time.Minute)
		is.Equal(e.do("POST", "/v1/payment_intents/"+ids["promptpay"]+"/cancel", nil, basic(k), idem("l-cancel")).status, http.StatusAccepted)
		e.drain()

		for _, c := range []struct {
			query string
			want  []string
		}{
			{"", []string{ids["tng"], ids["promptpay"], ids["declined"], ids["fpx"]}},
			{"status=failed", []string{ids["declined"]}},
			{"status=succeeded,cancelled", []string{ids["tng"], ids["promptpay"]}},
			{"status=requires_action", []string{ids["fpx"]}},
			{"currency=THB", []string{ids["promptpay"]}},
			{"country=MY&status=requires_action,failed", []string{ids["declined"], ids["fpx"]}},
			{"merchant_reference=declined", []string{ids["declined"]}},
			{"created_after=2026-06-01T08:02:00Z", []string{ids["tng"], ids["promptpay"], ids["declined"]}},
			{"created_before=2026-06-01T08:03:00Z&created_after=2026-06-01T08:02:00Z", []string{ids["declined"]}},
		} {
			t.Run(c.query, func(t *testing.T) {
				is := is.New(t)
				is.Equal(e.listIDs(k, c.query), c.want)
			})
		}
		// Paging over created intents.
		r := e.do("GET", "/v1/payment_intents?limit=3", nil, basic(k))
		body := r.json(t)
		is.Equal(len(body["data"].([]any)), 3)
		is.Equal(body["has_more"], true)
		r = e.do("GET", "/v1/payment_intents?limit=3&cursor="+url.QueryEscape(body["next_cursor"].(string)), nil, basic(k))
		body = r.json(t)
		is.Equal(len(body["data"].([]any)), 1)
		is.Equal(body["data"].([]any)[0].(map[string]any)["id"], ids["fpx"])
		is.Equal(body["has_more"], false)
	})
}

// TestSameMillisecondIntentsListInCreationOrder: intents created in one
// millisecond (the clock stands still) list newest first in exactly the
// reverse of their creation order, across pages.
func TestSameMillisecondIntentsListInCreationOrder(t *testing.T) {
	forEachSandbox(t, func(t *testing.T, e *sandboxEnv, k keys) {
		is := is.New(t)
		var created []string
		for i := range 12 {
			ref := fmt.Sprintf("ms-%d", i)
			created = append(created, e.created(k, ref, methodBody("TNG", "MY", "1000", ref))["id"].(string))
		}
		slices.Reverse(created)
		is.Equal(e.listIDs(k, ""), created)
		var paged []string
		for cursor := ""; ; {
			body := e.do("GET", "/v1/payment_intents?limit=5"+cursor, nil, basic(k)).json(t)
			for _, item := range body["data"].([]any) {
				paged = append(paged, item.(map[string]any)["id"].(string))
			}
			if body["has_more"] != true {
				break
			}
			cursor = "&cursor=" + url.QueryEscape(body["next_cursor"].(string))
		}
		is.Equal(paged, created)
	})
}

// TestFirstAnswersAreNotReplays: the first answer under a key never says
// Idempotent-Replayed, the second always does, with the same body: payment
// create and cancel, refund create.
func TestFirstAnswersAreNotReplays(t *testing.T) {
	forEachSandbox(t, func(t *testing.T, e *sandboxEnv, k keys) {
		is := is.New(t)
		pair := func(send func() response) map[string]any {
			t.Helper()
			first, again := send(), send()
			is.True(first.status < 300)
			is.Equal(first.header.Get("Idempotent-Replayed"), "")
			is.Equal(again.header.Get("Idempotent-Replayed"), "true")
			is.Equal(string(again.body), string(first.body))
			return first.json(t)
		}
		waiting := pair(func() response { return e.create(k, "fa-1", fpxBody("15000", "fa-1")) })
		pair(func() response {
			return e.do("POST", "/v1/payment_intents/"+waiting["id"].(string)+"/cancel", nil, basic(k), idem("fa-cancel"))
		})
		paid := pair(func() response { return e.create(k, "fa-2", fpxBody("15000", "fa-2")) })
		is.Equal(e.do("POST", "/v1/test_helpers/payment_intents/"+paid["id"].(string)+"/approve", nil, basic(k)).status, http.StatusOK)
		is.Equal(e.do("POST", "/v1/test_helpers/settlements", nil, basic(k)).status, http.StatusOK) // refunds draw on settled funds
		pair(func() response {
			return e.refund(k, "fa-refund", map[string]any{"payment_intent": paid["id"], "merchant_reference": "fa-r", "amount": "3000"})
		})
	})
}
