package httpadapter_test

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/paykit/paykit"
)

// The merchant checkout routes (POST/GET /checkouts, GET /checkouts/{id},
// POST /checkouts/{id}/cancel) on every Store, against the sandbox PSP;
// every answer is validated against the OpenAPI document.

// forEachPay runs fn per Store with a fresh payer-pages env and a merchant
// with a test key pair.
func forEachPay(t *testing.T, fn func(t *testing.T, e *payEnv, k keys)) {
	forEachStore(t, func(t *testing.T, open func(t *testing.T) paykit.Store) {
		e := newPayEnv(t, open)
		fn(t, e, e.merchant(paykit.Test))
	})
}

// pay opens the checkout's form and submits values as the payer.
func (e *payEnv) pay(checkoutURL string, values url.Values) response {
	e.t.Helper()
	f := e.openForm(checkoutURL)
	r := e.submit(checkoutURL, f, f.cookie, values)
	if r.status != http.StatusSeeOther {
		e.t.Fatalf("pay: %d %s", r.status, r.body)
	}
	return r
}

func (e *payEnv) cancelCheckout(k keys, key, id string) response {
	e.t.Helper()
	return e.do("POST", "/v1/checkouts/"+id+"/cancel", nil, basic(k), idem(key))
}

// checkoutIDs returns the ids of GET /checkouts?query.
func (e *payEnv) checkoutIDs(k keys, query string) []string {
	e.t.Helper()
	r := e.do("GET", "/v1/checkouts?"+query, nil, basic(k))
	if r.status != http.StatusOK {
		e.t.Fatalf("list checkouts: %d %s", r.status, r.body)
	}
	ids := []string{}
	for _, item := range r.json(e.t)["data"].([]any) {
		ids = append(ids, item.(map[string]any)["id"].(string))
	}
	return ids
}

func TestCheckoutCreate(t *testing.T) {
	forEachPay(t, func(t *testing.T, e *payEnv, k keys) {
		is := is.New(t)
		body := with(checkoutBody("15000", "order-c1"), map[string]any{
			"return_url": "https://shop.example/done",
			"customer":   map[string]any{"name": "Aisyah Rahman"},
			"metadata":   map[string]any{"cart": "42"},
		})
		r := e.do("POST", "/v1/checkouts", body, basic(k), idem("c-1"))
		is.Equal(r.status, http.StatusCreated)
		is.Equal(r.header.Get("Idempotent-Replayed"), "")
		co := r.json(t)
		id := co["id"].(string)
		is.True(strings.HasPrefix(id, "co_"))
		is.Equal(co["object"], "checkout")
		is.Equal(co["status"], "open")
		is.Equal(co["amount"], "15000")
		is.Equal(co["currency"], "MYR")
		is.Equal(co["country"], "MY")
		is.Equal(co["merchant_reference"], "order-c1")
		is.Equal(co["payment_status"], "requires_payment_method")
		is.Equal(co["payment_method"], nil)
		is.Equal(co["failure_code"], nil)
		is.Equal(co["failure_message"], nil)
		is.Equal(co["provider_status"], nil)
		is.Equal(co["processing_stale_at"], nil)
		is.Equal(co["return_url"], "https://shop.example/done")
		is.Equal(co["metadata"], map[string]any{"cart": "42"})
		is.Equal(co["created_at"], "2026-06-01T08:00:00.000Z")
		is.Equal(co["updated_at"], "2026-06-01T08:00:00.000Z")
		is.Equal(co["expires_at"], "2026-06-02T08:00:00.000Z") // the default TTL, 24h
		is.True(strings.HasPrefix(co["checkout_url"].(string), e.srv.URL+"/pay/checkouts/"))
		e.assertNoProviderDetail(r.body)

		// The linked payment intent waits for the payer; no Provider was asked.
		pi := e.do("GET", "/v1/payment_intents/"+co["payment_intent_id"].(string), nil, basic(k)).json(t)
		is.Equal(pi["status"], "requires_payment_method")
		is.Equal(pi["payment_method"], nil)
		is.Equal(pi["merchant_reference"], "order-c1")
		is.Equal(pi["amount"], "15000")
		is.Equal(e.psp.PaymentCount(), 0)

		// GET answers the same projection; the same key replays it byte for
		// byte; a changed body under that key is a conflict.
		got := e.do("GET", "/v1/checkouts/"+id, nil, basic(k))
		is.Equal(got.status, http.StatusOK)
		is.Equal(string(got.body), string(r.body))
		again := e.do("POST", "/v1/checkouts", body, basic(k), idem("c-1"))
		is.Equal(again.status, http.StatusCreated)
		is.Equal(again.header.Get("Idempotent-Replayed"), "true")
		is.Equal(string(again.body), string(r.body))
		assertError(t, e.do("POST", "/v1/checkouts", with(body, map[string]any{"amount": "15001"}), basic(k), idem("c-1")),
			http.StatusConflict, paykit.CodeIdempotencyConflict, "Idempotency-Key")
		// The key of a checkout is not reusable on another endpoint.
		assertError(t, e.do("POST", "/v1/payment_intents", fpxBody("15000", "order-x"), basic(k), idem("c-1")),
			http.StatusConflict, paykit.CodeIdempotencyConflict, "Idempotency-Key")

		// The reference is taken, for checkouts and payment intents alike.
		assertError(t, e.do("POST", "/v1/checkouts", body, basic(k), idem("c-2")),
			http.StatusConflict, paykit.CodeDuplicateMerchantReference, "merchant_reference")
		e.createIntent(k, "pi-1", fpxBody("15000", "order-direct"))
		assertError(t, e.do("POST", "/v1/checkouts", checkoutBody("15000", "order-direct"), basic(k), idem("c-3")),
			http.StatusConflict, paykit.CodeDuplicateMerchantReference, "merchant_reference")
		// Those rejections stored nothing: the keys work with new requests.
		is.Equal(e.do("POST", "/v1/checkouts", checkoutBody("15000", "order-c2"), basic(k), idem("c-2")).status, http.StatusCreated)

		// A frozen method with its bank, and the payer details still to come.
		frozen := e.createCheckout(k, "c-4", with(checkoutBody("15000", "order-c4"), map[string]any{
			"payment_method": "FPX", "payment_method_options": map[string]any{"bank": "CIMB"},
		}))
		is.Equal(frozen["payment_method"], "FPX")
		is.Equal(frozen["metadata"], nil)
		is.Equal(frozen["return_url"], nil)
		is.Equal(e.psp.PaymentCount(), 1) // the direct payment's only
	})
}

func TestCheckoutCreateRejected(t *testing.T) {
	forEachPay(t, func(t *testing.T, e *payEnv, k keys) {
		is := is.New(t)
		base := checkoutBody("15000", "order-r")
		for _, tc := range []struct {
			name   string
			body   map[string]any
			status int
			code   string
			param  string
		}{
			{"options without a method", with(base, map[string]any{"payment_method_options": map[string]any{"bank": "MAYBANK"}}), 400, paykit.CodeInvalidRequest, "payment_method_options"},
			{"provider", with(base, map[string]any{"provider": "sandbox"}), 400, paykit.CodeInvalidRequest, "provider"},
			{"checkout_mode", with(base, map[string]any{"checkout_mode": "hosted"}), 400, paykit.CodeInvalidRequest, "checkout_mode"},
			{"unknown method", with(base, map[string]any{"payment_method": "PAYPAL"}), 400, paykit.CodeInvalidRequest, "payment_method"},
			{"missing amount", with(base, map[string]any{"amount": nil}), 400, paykit.CodeInvalidRequest, "amount"},
			{"zero amount", with(base, map[string]any{"amount": "0"}), 400, paykit.CodeInvalidRequest, "amount"},
			{"numeric amount", with(base, map[string]any{"amount": 15000}), 400, paykit.CodeInvalidRequest, "amount"},
			{"lowercase currency", with(base, map[string]any{"currency": "myr"}), 400, paykit.CodeInvalidRequest, "currency"},
			{"missing reference", with(base, map[string]any{"merchant_reference": nil}), 400, paykit.CodeInvalidRequest, "merchant_reference"},
			{"long reference", with(base, map[string]any{"merchant_reference": strings.Repeat("r", 257)}), 400, paykit.CodeInvalidRequest, "merchant_reference"},
			{"relative return_url", with(base, map[string]any{"return_url": "/done"}), 400, paykit.CodeInvalidRequest, "return_url"},
			{"bad email", with(base, map[string]any{"customer": map[string]any{"email": "not-an-email"}}), 400, paykit.CodeInvalidRequest, "customer.email"},
			{"customer not strings", with(base, map[string]any{"customer": map[string]any{"age": 7}}), 400, paykit.CodeInvalidRequest, "customer.age"},
			{"metadata not strings", with(base, map[string]any{"metadata": map[string]any{"n": true}}), 400, paykit.CodeInvalidRequest, "metadata.n"},
			{"frozen method not routed here", with(base, map[string]any{"payment_method": "PROMPTPAY"}), 422, paykit.CodePaymentMethodUnavailable, "payment_method"},
			{"frozen method, option it lacks", with(base, map[string]any{"payment_method": "TNG", "payment_method_options": map[string]any{"bank": "MAYBANK"}}), 400, paykit.CodeInvalidRequest, "payment_method_options.bank"},
			{"frozen method, unknown bank", with(base, map[string]any{"payment_method": "FPX", "payment_method_options": map[string]any{"bank": "MBB0228"}}), 400, paykit.CodeInvalidRequest, "payment_method_options.bank"},
			{"frozen method, bank offline", with(base, map[string]any{"payment_method": "FPX", "payment_method_options": map[string]any{"bank": "BSN"}}), 422, paykit.CodePaymentMethodUnavailable, "payment_method_options.bank"},
			{"frozen method, bad email", with(base, map[string]any{"payment_method": "FPX", "customer": map[string]any{"email": "x@"}}), 400, paykit.CodeInvalidRequest, "customer.email"},
			{"no method for the country", with(base, map[string]any{"country": "SG", "currency": "SGD"}), 422, paykit.CodePaymentMethodUnavailable, ""},
		} {
			t.Run(tc.name, func(t *testing.T) {
				assertError(t, e.do("POST", "/v1/checkouts", tc.body, basic(k), idem("r-key")), tc.status, tc.code, tc.param)
			})
		}
		assertError(t, e.do("POST", "/v1/checkouts", base, basic(k)), 400, paykit.CodeInvalidRequest, "Idempotency-Key")
		assertError(t, e.do("POST", "/v1/checkouts", base, basic(k), idem("has space")), 400, paykit.CodeInvalidRequest, "Idempotency-Key")
		assertError(t, e.do("POST", "/v1/checkouts", "[]", basic(k), idem("r-key")), 400, paykit.CodeInvalidRequest, "")
		assertError(t, e.do("POST", "/v1/checkouts?x=1", base, basic(k), idem("r-key")), 400, paykit.CodeInvalidRequest, "x")
		is.Equal(e.do("POST", "/v1/checkouts", base, withHeader("Authorization", "Basic eDp5"), idem("r-key")).status, http.StatusUnauthorized)
		// Nothing was stored: the key works for a valid request.
		is.Equal(e.do("POST", "/v1/checkouts", base, basic(k), idem("r-key")).status, http.StatusCreated)
		is.Equal(e.psp.PaymentCount(), 0)
	})
}

func TestCheckoutGetAndListScoped(t *testing.T) {
	forEachPay(t, func(t *testing.T, e *payEnv, k keys) {
		is := is.New(t)
		var ids []string
		for i, ref := range []string{"l-1", "l-2", "l-3", "l-4"} {
			body := checkoutBody("15000", ref)
			if i == 2 {
				body = map[string]any{"amount": "25000", "currency": "THB", "country": "TH", "merchant_reference": ref}
			}
			ids = append([]string{e.createCheckout(k, "l-"+ref, body)["id"].(string)}, ids...)
			e.clock.Advance(time.Second)
		}
		is.Equal(e.cancelCheckout(k, "l-cancel", ids[0]).status, http.StatusOK)

		is.Equal(e.checkoutIDs(k, ""), ids)
		is.Equal(e.checkoutIDs(k, "status=cancelled"), ids[:1])
		is.Equal(e.checkoutIDs(k, "status=open"), ids[1:])
		is.Equal(e.checkoutIDs(k, "status=open,cancelled"), ids)
		is.Equal(e.checkoutIDs(k, "status=completed"), []string{})
		is.Equal(e.checkoutIDs(k, "currency=THB"), ids[1:2])
		is.Equal(e.checkoutIDs(k, "country=MY&currency=MYR"), []string{ids[0], ids[2], ids[3]})
		is.Equal(e.checkoutIDs(k, "merchant_reference=l-2"), ids[2:3])
		is.Equal(e.checkoutIDs(k, "created_after=2026-06-01T08:00:01Z&created_before=2026-06-01T08:00:03Z"), ids[1:3])
		// Pages of one, filters sent again with the cursor.
		var walked []string
		q := "limit=1&status=open"
		for range 5 {
			r := e.do("GET", "/v1/checkouts?"+q, nil, basic(k)).json(t)
			for _, item := range r["data"].([]any) {
				walked = append(walked, item.(map[string]any)["id"].(string))
			}
			if r["has_more"] == false {
				is.Equal(r["next_cursor"], nil)
				break
			}
			q = "limit=1&status=open&cursor=" + url.QueryEscape(r["next_cursor"].(string))
		}
		is.Equal(walked, ids[1:])
		// List items are full projections.
		first := e.do("GET", "/v1/checkouts?limit=1", nil, basic(k)).json(t)["data"].([]any)[0].(map[string]any)
		is.Equal(first, e.checkout(k, ids[0]))

		assertError(t, e.do("GET", "/v1/checkouts?status=succeeded", nil, basic(k)), 400, paykit.CodeInvalidRequest, "status")
		assertError(t, e.do("GET", "/v1/checkouts?limit=101", nil, basic(k)), 400, paykit.CodeInvalidRequest, "limit")
		assertError(t, e.do("GET", "/v1/checkouts?cursor=forged", nil, basic(k)), 400, paykit.CodeInvalidRequest, "cursor")
		assertError(t, e.do("GET", "/v1/checkouts?sort=asc", nil, basic(k)), 400, paykit.CodeInvalidRequest, "sort")

		// Another merchant, and the same merchant's live key, see nothing.
		other := e.merchant(paykit.Test)
		live := e.keyFor(k.merchantID, paykit.Live)
		for _, kk := range []keys{other, live} {
			assertError(t, e.do("GET", "/v1/checkouts/"+ids[1], nil, basic(kk)), 404, paykit.CodeNotFound, "")
			assertError(t, e.cancelCheckout(kk, "x-cancel", ids[1]), 404, paykit.CodeNotFound, "")
			is.Equal(e.checkoutIDs(kk, ""), []string{})
		}
		assertError(t, e.do("GET", "/v1/checkouts/co_unknown", nil, basic(k)), 404, paykit.CodeNotFound, "")
		is.Equal(e.checkout(k, ids[1])["status"], "open")
	})
}

// The projection follows the payment: the payer's choice, the Provider's
// progress and a decline; a failed payment leaves the checkout open.
func TestCheckoutFollowsPayment(t *testing.T) {
	forEachPay(t, func(t *testing.T, e *payEnv, k keys) {
		is := is.New(t)
		co := e.createCheckout(k, "f-1", checkoutBody("15000", "order-f1"))
		id := co["id"].(string)
		e.clock.Advance(time.Minute)
		e.pay(co["checkout_url"].(string), fpxPayer("MAYBANK"))
		got := e.checkout(k, id)
		is.Equal(got["status"], "open")
		is.Equal(got["payment_status"], "requires_action")
		is.Equal(got["payment_method"], "FPX")
		is.Equal(got["provider_status"], "pending")
		is.Equal(got["processing_stale_at"], nil)
		is.Equal(got["updated_at"], "2026-06-01T08:01:00.000Z") // the payment's progress
		is.Equal(got["created_at"], co["created_at"])
		is.Equal(e.psp.PaymentCount(), 1)

		piID := co["payment_intent_id"].(string)
		is.Equal(e.do("POST", "/v1/test_helpers/payment_intents/"+piID+"/decline", nil, basic(k)).status, http.StatusOK)
		e.drain()
		got = e.checkout(k, id)
		is.Equal(got["status"], "open")
		is.Equal(got["payment_status"], "failed")
		is.Equal(got["provider_status"], "failed")
		is.Equal(got["failure_code"], "provider_declined")
		is.Equal(got["failure_message"], "The payment was declined.")
		e.assertNoProviderDetail(e.do("GET", "/v1/checkouts/"+id, nil, basic(k)).body)
		// The payer cannot start a second attempt on the failed payment.
		page := e.visit("GET", co["checkout_url"].(string))
		is.Equal(page.status, http.StatusOK)
		is.True(strings.Contains(string(page.body), "Payment failed"))
		is.Equal(e.psp.PaymentCount(), 1)
	})
}

// A Provider timeout (amount ending in 902): processing with
// provider_status unknown and processing_stale_at; recovery settles it and
// the checkout completes.
func TestCheckoutProcessing(t *testing.T) {
	forEachPay(t, func(t *testing.T, e *payEnv, k keys) {
		is := is.New(t)
		co := e.createCheckout(k, "p-1", checkoutBody("15902", "order-p1"))
		id := co["id"].(string)
		e.pay(co["checkout_url"].(string), fpxPayer("MAYBANK"))
		got := e.checkout(k, id)
		is.Equal(got["status"], "open")
		is.Equal(got["payment_status"], "processing")
		is.Equal(got["provider_status"], "unknown")
		is.Equal(got["processing_stale_at"], "2026-06-01T08:15:00.000Z")
		// The payer's page waits, and never offers a second attempt.
		page := e.visit("GET", co["checkout_url"].(string))
		is.True(strings.Contains(string(page.body), "Confirming your payment"))

		e.clock.Advance(sandboxDelay + time.Minute)
		e.drain()
		got = e.checkout(k, id)
		is.Equal(got["status"], "completed")
		is.Equal(got["payment_status"], "succeeded")
		is.Equal(got["provider_status"], "succeeded")
		is.Equal(got["processing_stale_at"], nil)
		is.Equal(got["failure_code"], nil)
		is.Equal(e.checkoutIDs(k, "status=completed"), []string{id})
		assertError(t, e.cancelCheckout(k, "p-cancel", id), 422, paykit.CodeInvalidState, "")
		is.Equal(e.psp.PaymentCount(), 1)
	})
}

func TestCheckoutCancel(t *testing.T) {
	forEachPay(t, func(t *testing.T, e *payEnv, k keys) {
		is := is.New(t)
		// Before the payer started: checkout and payment cancelled at once.
		co := e.createCheckout(k, "x-1", checkoutBody("15000", "order-x1"))
		id, cu := co["id"].(string), co["checkout_url"].(string)
		e.clock.Advance(time.Second)
		r := e.cancelCheckout(k, "x-cancel-1", id)
		is.Equal(r.status, http.StatusOK)
		got := r.json(t)
		is.Equal(got["status"], "cancelled")
		is.Equal(got["payment_status"], "cancelled")
		is.Equal(got["provider_status"], nil)
		is.Equal(got["updated_at"], "2026-06-01T08:00:01.000Z")
		is.Equal(e.intentStatus(k, co["payment_intent_id"].(string)), "cancelled")
		// Replay, then a new cancel of a cancelled checkout.
		again := e.cancelCheckout(k, "x-cancel-1", id)
		is.Equal(again.status, http.StatusOK)
		is.Equal(again.header.Get("Idempotent-Replayed"), "true")
		is.Equal(string(again.body), string(r.body))
		assertError(t, e.cancelCheckout(k, "x-cancel-2", id), 422, paykit.CodeInvalidState, "")
		assertError(t, e.do("POST", "/v1/checkouts/"+id+"/cancel", map[string]any{"reason": "x"}, basic(k), idem("x-cancel-3")), 400, paykit.CodeInvalidRequest, "reason")
		is.Equal(e.do("POST", "/v1/checkouts/"+id+"/cancel", map[string]any{}, basic(k), idem("x-cancel-1")).status, http.StatusOK) // {} is no body
		assertError(t, e.do("POST", "/v1/checkouts/"+id+"/cancel", nil, basic(k)), 400, paykit.CodeInvalidRequest, "Idempotency-Key")
		// The payer link shows that nothing can be paid any more.
		page := e.visit("GET", cu)
		is.Equal(page.status, http.StatusOK)
		is.True(strings.Contains(string(page.body), "Payment cancelled"))
		is.True(!strings.Contains(string(page.body), "<form"))

		// Cancelling the linked payment intent cancels its open checkout.
		co = e.createCheckout(k, "x-4", checkoutBody("15000", "order-x4"))
		r = e.do("POST", "/v1/payment_intents/"+co["payment_intent_id"].(string)+"/cancel", nil, basic(k), idem("x-pi-cancel"))
		is.Equal(r.status, http.StatusAccepted)
		is.Equal(r.json(t)["status"], "cancelled")
		is.Equal(e.checkout(k, co["id"].(string))["status"], "cancelled")

		// The payer waits at the bank: the attempt is cancelled at the
		// Provider in the background.
		co = e.createCheckout(k, "x-2", checkoutBody("15000", "order-x2"))
		id = co["id"].(string)
		e.pay(co["checkout_url"].(string), fpxPayer("MAYBANK"))
		got = e.cancelCheckout(k, "x-cancel-4", id).json(t)
		is.Equal(got["status"], "cancelled")
		is.Equal(got["payment_status"], "requires_action") // until the Provider confirms
		e.drain()
		got = e.checkout(k, id)
		is.Equal(got["status"], "cancelled")
		is.Equal(got["payment_status"], "cancelled")
		is.Equal(got["provider_status"], "failed")

		// A processing attempt is never cut short; when it succeeds the
		// cancelled checkout is completed (the money moved).
		co = e.createCheckout(k, "x-3", checkoutBody("15902", "order-x3"))
		id = co["id"].(string)
		e.pay(co["checkout_url"].(string), fpxPayer("MAYBANK"))
		got = e.cancelCheckout(k, "x-cancel-5", id).json(t)
		is.Equal(got["status"], "cancelled")
		is.Equal(got["payment_status"], "processing")
		is.Equal(got["provider_status"], "unknown")
		e.clock.Advance(sandboxDelay + time.Minute)
		e.drain()
		got = e.checkout(k, id)
		is.Equal(got["payment_status"], "succeeded")
		is.Equal(got["status"], "completed")
	})
}

// Expiry by the worker at expires_at: an unstarted payment expires with the
// checkout; an attempt in flight is left to finish.
func TestCheckoutExpiry(t *testing.T) {
	forEachPay(t, func(t *testing.T, e *payEnv, k keys) {
		is := is.New(t)
		idle := e.createCheckout(k, "e-1", checkoutBody("15000", "order-e1"))
		slow := e.createCheckout(k, "e-2", checkoutBody("15902", "order-e2"))
		waiting := e.createCheckout(k, "e-3", checkoutBody("15000", "order-e3"))
		e.clock.Advance(24*time.Hour - 10*time.Second)
		e.pay(slow["checkout_url"].(string), fpxPayer("MAYBANK"))
		e.pay(waiting["checkout_url"].(string), fpxPayer("MAYBANK"))
		e.drain()
		is.Equal(e.checkout(k, idle["id"].(string))["status"], "open") // not yet

		e.clock.Advance(10 * time.Second)
		is.Equal(e.checkout(k, idle["id"].(string))["status"], "open") // reads change nothing
		e.drain()
		got := e.checkout(k, idle["id"].(string))
		is.Equal(got["status"], "expired")
		is.Equal(got["payment_status"], "expired")
		is.Equal(got["failure_code"], "expired")
		is.Equal(got["failure_message"], "The payment was not completed in time.")
		is.Equal(got["updated_at"], "2026-06-02T08:00:00.000Z")
		expired := e.checkoutIDs(k, "status=expired")
		slices.Sort(expired)
		is.Equal(expired, slices.Sorted(slices.Values([]string{waiting["id"].(string), idle["id"].(string)})))
		assertError(t, e.cancelCheckout(k, "e-cancel", idle["id"].(string)), 422, paykit.CodeInvalidState, "")
		page := e.visit("GET", idle["checkout_url"].(string))
		is.Equal(page.status, http.StatusNotFound)

		// The processing payment expires nothing; it succeeds later and
		// completes its checkout.
		got = e.checkout(k, slow["id"].(string))
		is.Equal(got["status"], "completed")
		is.Equal(got["payment_status"], "succeeded")
		// The payment waiting at the bank ends by its own expiry, at the
		// Provider: expired, never failed.
		got = e.checkout(k, waiting["id"].(string))
		is.Equal(got["status"], "expired")
		is.Equal(got["payment_status"], "expired")
		is.Equal(e.psp.PaymentCount(), 2)
	})
}
