package httpadapter_test

import (
	"bytes"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/provider/sandbox"
	"github.com/paykit/paykit/store/storetest"
)

// paidPayment makes a succeeded FPX payment of amount through the API and
// the sandbox PSP, settles its funds, and returns its id.
func (e *sandboxEnv) paidPayment(k keys, amount, ref string) string {
	e.t.Helper()
	pi := e.created(k, "pay-"+ref, fpxBody(amount, ref))
	id := pi["id"].(string)
	if r := e.do("POST", "/v1/test_helpers/payment_intents/"+id+"/approve", nil, basic(k)); r.status != http.StatusOK {
		e.t.Fatalf("approve: %d %s", r.status, r.body)
	}
	e.settle()
	if got := e.get(k, id); got["status"] != "succeeded" {
		e.t.Fatalf("payment %s is %v", id, got["status"])
	}
	// Refunds draw on available funds: the sandbox settles the payment's.
	if r := e.do("POST", "/v1/test_helpers/settlements", nil, basic(k)); r.status != http.StatusOK {
		e.t.Fatalf("settle: %d %s", r.status, r.body)
	}
	e.t.Cleanup(func() {
		storetest.CheckLedger(e.t, e.store, paykit.Scope{MerchantID: k.merchantID, Environment: paykit.Test})
	})
	return id
}

// settle lets the sandbox settle what is due, delivers its callbacks, and
// runs recovery for a few minutes of the clock.
func (e *sandboxEnv) settle() {
	e.t.Helper()
	e.clock.Advance(sandboxDelay)
	if _, err := e.psp.SendCallbacks(e.ctx); err != nil {
		e.t.Fatal(err)
	}
	e.drain()
	for range 5 {
		e.clock.Advance(time.Minute)
		e.drain()
	}
}

func (e *sandboxEnv) refund(k keys, key string, body map[string]any) response {
	e.t.Helper()
	return e.do("POST", "/v1/refunds", body, basic(k), idem(key))
}

// myrBalance is the merchant's MYR balance: available and reserved.
func (e *sandboxEnv) myrBalance(k keys) (string, string) {
	e.t.Helper()
	r := e.do("GET", "/v1/balances", nil, basic(k))
	for _, b := range r.json(e.t)["data"].([]any) {
		if b := b.(map[string]any); b["currency"] == "MYR" {
			return b["available"].(string), b["reserved"].(string)
		}
	}
	return "0", "0"
}

// The refund tests run on every Store: they reserve and settle on the
// ledger, count what is refundable under concurrency, and list.
func TestRefundProjectionAndLedger(t *testing.T) {
	forEachSandbox(t, func(t *testing.T, e *sandboxEnv, k keys) {
		is := is.New(t)
		pi := e.paidPayment(k, "10000", "order-1")
		is.Equal(e.get(k, pi)["refunded_amount"], "0")
		// The sandbox kept 290 of it; an operator's credit covers the fee so
		// that the whole payment can be refunded.
		is.Equal(e.do("POST", "/operator/merchants/"+k.merchantID+"/balance_adjustments", map[string]any{
			"environment": "test", "currency": "MYR", "amount": "290", "reason": "fee cover",
		}, bearer(e.opToken)).status, http.StatusCreated)

		r := e.refund(k, "rf-1", map[string]any{"payment_intent": pi, "merchant_reference": "rf-1", "amount": "3000", "reason": "damaged"})
		is.Equal(r.status, http.StatusCreated)
		e.assertNoProviderDetail(r.body)
		re := r.json(t)
		id := re["id"].(string)
		is.True(strings.HasPrefix(id, "re_"))
		is.Equal(re, map[string]any{
			"object": "refund", "id": id, "payment_intent": pi, "amount": "3000", "currency": "MYR", "status": "pending",
			"reason": "damaged", "merchant_reference": "rf-1", "environment": "test", "failure_code": nil,
			"created_at": re["created_at"], "updated_at": re["updated_at"], "completed_at": nil,
		})
		avail, reserved := e.myrBalance(k)
		is.Equal([]string{avail, reserved}, []string{"7000", "3000"})

		// A replay is the first answer byte for byte.
		again := e.refund(k, "rf-1", map[string]any{"payment_intent": pi, "merchant_reference": "rf-1", "amount": "3000", "reason": "damaged"})
		is.Equal(again.status, http.StatusCreated)
		is.Equal(again.header.Get("Idempotent-Replayed"), "true")
		is.True(bytes.Equal(again.body, r.body))

		// The rest, by default; nothing is left after it.
		rest := e.refund(k, "rf-2", map[string]any{"payment_intent": pi, "merchant_reference": "rf-2"})
		is.Equal(rest.status, http.StatusCreated)
		is.Equal(rest.json(t)["amount"], "7000")
		is.Equal(rest.json(t)["reason"], nil)
		none := e.refund(k, "rf-3", map[string]any{"payment_intent": pi, "merchant_reference": "rf-3"})
		is.Equal(none.status, http.StatusUnprocessableEntity)
		is.Equal(none.errorOf(t)["code"], "amount_exceeds_refundable")

		e.settle()
		got := e.do("GET", "/v1/refunds/"+id, nil, basic(k)).json(t)
		is.Equal(got["status"], "succeeded")
		is.True(got["completed_at"] != nil)
		is.Equal(e.get(k, pi)["refunded_amount"], "10000")
		is.Equal(e.get(k, pi)["status"], "succeeded")
		avail, reserved = e.myrBalance(k)
		is.Equal([]string{avail, reserved}, []string{"0", "0"})

		// Events: pending then succeeded, the refund's projection as data.
		is.Equal(e.eventsOf(k, id), []string{"refund.pending", "refund.succeeded"})

		// Lists: by payment intent and status.
		list := e.do("GET", "/v1/refunds?payment_intent="+pi+"&status=succeeded", nil, basic(k))
		is.Equal(list.status, http.StatusOK)
		is.Equal(len(list.json(t)["data"].([]any)), 2)
		is.Equal(len(e.do("GET", "/v1/refunds?status=pending", nil, basic(k)).json(t)["data"].([]any)), 0)
		is.Equal(e.do("GET", "/v1/refunds?status=open", nil, basic(k)).status, http.StatusBadRequest)
		is.Equal(e.do("GET", "/v1/refunds?refund=x", nil, basic(k)).status, http.StatusBadRequest)
		for _, q := range []string{"currency=myr", "country=Malaysia", "merchant_reference=%00", "payment_intent=%00"} {
			r := e.do("GET", "/v1/refunds?"+q, nil, basic(k))
			is.Equal(r.status, http.StatusBadRequest) // the shared list filters are checked as on the other lists
		}
	})
}

// TestRefundRejections: every rule answers before anything is persisted.
func TestRefundRejections(t *testing.T) {
	forEachSandbox(t, func(t *testing.T, e *sandboxEnv, k keys) {
		is := is.New(t)
		pi := e.paidPayment(k, "10000", "order-1")
		other := e.merchant(paykit.Test)
		live := e.keyFor(k.merchantID, paykit.Live)
		open := e.created(k, "open", fpxBody("5000", "open"))["id"].(string)
		bt := e.created(k, "bt", methodBody("BANK_TRANSFER", "MY", "5000", "bt"))["id"].(string)
		is.Equal(e.do("POST", "/v1/test_helpers/payment_intents/"+bt+"/approve", nil, basic(k)).status, http.StatusOK)
		e.settle()
		is.Equal(e.get(k, bt)["status"], "succeeded")
		availBefore, _ := e.myrBalance(k)

		cases := []struct {
			name   string
			k      keys
			body   map[string]any
			status int
			code   string
			param  string
		}{
			{"unknown payment", k, map[string]any{"payment_intent": "pi_nope", "merchant_reference": "x"}, 404, "not_found", ""},
			{"another merchant's", other, map[string]any{"payment_intent": pi, "merchant_reference": "x"}, 404, "not_found", ""},
			{"another environment's", live, map[string]any{"payment_intent": pi, "merchant_reference": "x"}, 404, "not_found", ""},
			{"not succeeded", k, map[string]any{"payment_intent": open, "merchant_reference": "x"}, 422, "invalid_state", ""},
			{"bank transfer", k, map[string]any{"payment_intent": bt, "merchant_reference": "x"}, 422, "refund_unsupported", ""},
			{"too much", k, map[string]any{"payment_intent": pi, "merchant_reference": "x", "amount": "10001"}, 422, "amount_exceeds_refundable", "amount"},
			{"no reference", k, map[string]any{"payment_intent": pi}, 400, "invalid_request", "merchant_reference"},
			{"no payment", k, map[string]any{"merchant_reference": "x"}, 400, "invalid_request", "payment_intent"},
			{"amount zero", k, map[string]any{"payment_intent": pi, "merchant_reference": "x", "amount": "0"}, 400, "invalid_request", "amount"},
			{"amount number", k, map[string]any{"payment_intent": pi, "merchant_reference": "x", "amount": 100}, 400, "invalid_request", "amount"},
			{"empty reason", k, map[string]any{"payment_intent": pi, "merchant_reference": "x", "reason": ""}, 400, "invalid_request", "reason"},
			{"long reason", k, map[string]any{"payment_intent": pi, "merchant_reference": "x", "reason": strings.Repeat("r", 513)}, 400, "invalid_request", "reason"},
			{"unknown field", k, map[string]any{"payment_intent": pi, "merchant_reference": "x", "currency": "MYR"}, 400, "invalid_request", ""},
		}
		for i, c := range cases {
			r := e.refund(c.k, fmt.Sprintf("bad-%d", i), c.body)
			is.Equal(r.status, c.status) // c.name
			is.Equal(r.errorOf(t)["code"], c.code)
			if c.param != "" {
				is.Equal(r.errorOf(t)["param"], c.param)
			}
		}
		is.Equal(e.do("POST", "/v1/refunds", map[string]any{"payment_intent": pi, "merchant_reference": "x"}, basic(k)).status, http.StatusBadRequest) // no key

		// A reference is unique per merchant and environment.
		is.Equal(e.refund(k, "ok-1", map[string]any{"payment_intent": pi, "merchant_reference": "dup", "amount": "100"}).status, http.StatusCreated)
		dup := e.refund(k, "ok-2", map[string]any{"payment_intent": pi, "merchant_reference": "dup", "amount": "100"})
		is.Equal(dup.status, http.StatusConflict)
		is.Equal(dup.errorOf(t)["code"], "duplicate_merchant_reference")

		// The balance cannot cover it: an operator took it away.
		r := e.do("POST", "/operator/merchants/"+k.merchantID+"/balance_adjustments", map[string]any{
			"environment": "test", "currency": "MYR", "amount": "-" + availBefore, "reason": "chargeback",
		}, bearer(e.opToken))
		if r.status != http.StatusCreated { // 100 of availBefore went into the refund of 100
			before, err := strconv.ParseInt(availBefore, 10, 64)
			is.NoErr(err)
			r = e.do("POST", "/operator/merchants/"+k.merchantID+"/balance_adjustments", map[string]any{
				"environment": "test", "currency": "MYR", "amount": strconv.FormatInt(100-before, 10), "reason": "chargeback",
			}, bearer(e.opToken))
		}
		is.Equal(r.status, http.StatusCreated)
		poor := e.refund(k, "poor", map[string]any{"payment_intent": pi, "merchant_reference": "poor", "amount": "500"})
		is.Equal(poor.status, http.StatusUnprocessableEntity)
		is.Equal(poor.errorOf(t)["code"], "insufficient_balance")

		list := e.do("GET", "/v1/refunds", nil, basic(k)).json(t)["data"].([]any)
		is.Equal(len(list), 1) // only the one refund that was accepted
		is.Equal(e.psp.Refunds()[0].AmountMinor, int64(100))
		is.Equal(len(e.psp.Refunds()), 1)
	})
}

// TestRefundSandboxOutcomes: the sandbox's refund magic amounts over HTTP.
func TestRefundSandboxOutcomes(t *testing.T) {
	forEachSandbox(t, func(t *testing.T, e *sandboxEnv, k keys) {
		is := is.New(t)
		pi := e.paidPayment(k, "50000", "order-1")

		declined := e.refund(k, "d", map[string]any{"payment_intent": pi, "merchant_reference": "d", "amount": "1911"})
		is.Equal(declined.status, http.StatusCreated)
		is.Equal(declined.json(t)["status"], "failed")
		is.Equal(declined.json(t)["failure_code"], "provider_declined")
		is.True(declined.json(t)["completed_at"] != nil)

		timedOut := e.refund(k, "t", map[string]any{"payment_intent": pi, "merchant_reference": "t", "amount": "1912"})
		is.Equal(timedOut.status, http.StatusCreated)
		is.Equal(timedOut.json(t)["status"], "pending")
		normal := e.refund(k, "n", map[string]any{"payment_intent": pi, "merchant_reference": "n", "amount": "2000"})
		is.Equal(normal.status, http.StatusCreated)
		is.Equal(normal.json(t)["status"], "pending")
		avail, reserved := e.myrBalance(k)
		is.Equal([]string{avail, reserved}, []string{"44638", "3912"}) // 50000 less the fee of 1450; the declined one released at once

		e.settle()
		for _, r := range []response{timedOut, normal} {
			got := e.do("GET", "/v1/refunds/"+r.json(t)["id"].(string), nil, basic(k)).json(t)
			is.Equal(got["status"], "succeeded")
		}
		is.Equal(e.get(k, pi)["refunded_amount"], "3912")
		is.Equal(len(e.psp.Refunds()), 3)
		is.Equal(e.eventsOf(k, declined.json(t)["id"].(string)), []string{"refund.pending", "refund.failed"})

		// The answers as committed: the final one is what GET shows, and
		// replays after settling are the first answers byte for byte.
		is.True(bytes.Equal(e.do("GET", "/v1/refunds/"+declined.json(t)["id"].(string), nil, basic(k)).body, declined.body))
		for key, first := range map[string]response{"d": declined, "t": timedOut} {
			again := e.refund(k, key, map[string]any{"payment_intent": pi, "merchant_reference": key, "amount": first.json(t)["amount"]})
			is.Equal(again.status, http.StatusCreated)
			is.Equal(again.header.Get("Idempotent-Replayed"), "true")
			is.True(bytes.Equal(again.body, first.body))
		}
	})
}

// TestConcurrentRefundsOverHTTP: ten concurrent refunds of 30 % each on one
// payment: exactly three are created and reach the PSP; the rest are
// amount_exceeds_refundable.
func TestConcurrentRefundsOverHTTP(t *testing.T) {
	forEachSandbox(t, func(t *testing.T, e *sandboxEnv, k keys) {
		is := is.New(t)
		pi := e.paidPayment(k, "10000", "order-1")
		answers := e.concurrently(10, func(i int) (response, error) {
			ref := fmt.Sprintf("c-%d", i)
			return e.send("POST", "/v1/refunds", map[string]any{"payment_intent": pi, "merchant_reference": ref, "amount": "3000"}, basic(k), idem(ref))
		})
		created, exceeded := 0, 0
		for _, r := range answers {
			switch {
			case r.status == http.StatusCreated:
				created++
			case r.status == http.StatusUnprocessableEntity && r.errorOf(t)["code"] == "amount_exceeds_refundable":
				exceeded++
			default:
				t.Errorf("answer %d: %s", r.status, r.body)
			}
		}
		is.Equal([]int{created, exceeded}, []int{3, 7})
		is.Equal(len(e.psp.Refunds()), 3)
		e.settle()
		is.Equal(e.get(k, pi)["refunded_amount"], "9000")
	})
}

// TestRefundCallbacksOfUnknownOrRepeated: a verified callback about a
// refund paykit does not know, or repeated, answers 2xx and changes
// nothing.
func TestRefundCallbacksOfUnknownOrRepeated(t *testing.T) {
	forEachSandbox(t, func(t *testing.T, e *sandboxEnv, k keys) {
		is := is.New(t)
		pi := e.paidPayment(k, "10000", "order-1")
		r := e.refund(k, "r", map[string]any{"payment_intent": pi, "merchant_reference": "r", "amount": "2500"})
		id := r.json(t)["id"].(string)
		e.settle()
		before := e.do("GET", "/v1/refunds/"+id, nil, basic(k)).body

		for _, key := range []string{"re_unknown", id, id} {
			body := []byte(fmt.Sprintf(`{"id":"evt_%d","kind":"refund","key":%q,"state":"SUCCESS"}`, time.Now().UnixNano(), key))
			cb := e.do("POST", "/providers/sandbox/webhooks", body, withHeader(sandbox.SignatureHeader, signCallback(body)))
			is.True(cb.status >= 200 && cb.status < 300)
		}
		is.True(bytes.Equal(e.do("GET", "/v1/refunds/"+id, nil, basic(k)).body, before))
		is.Equal(e.eventsOf(k, id), []string{"refund.pending", "refund.succeeded"})
	})
}
