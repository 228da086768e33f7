package httpadapter_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/provider/sandbox"
)

// The event log and inbound Provider callbacks, end to end on every Store.

// events returns the types and bodies of GET /events?query, newest first.
func (e *sandboxEnv) events(k keys, query string) ([]string, []map[string]any) {
	e.t.Helper()
	r := e.do("GET", "/v1/events?limit=100&"+query, nil, basic(k))
	if r.status != http.StatusOK {
		e.t.Fatalf("events: %d %s", r.status, r.body)
	}
	var types []string
	var data []map[string]any
	for _, item := range r.json(e.t)["data"].([]any) {
		ev := item.(map[string]any)
		types = append(types, ev["type"].(string))
		data = append(data, ev)
	}
	return types, data
}

// eventsOf returns the types of the events about one resource, oldest first.
func (e *sandboxEnv) eventsOf(k keys, id string) []string {
	e.t.Helper()
	_, all := e.events(k, "")
	var out []string
	for i := len(all) - 1; i >= 0; i-- {
		if all[i]["data"].(map[string]any)["id"] == id {
			out = append(out, all[i]["type"].(string))
		}
	}
	return out
}

func TestPaymentEvents(t *testing.T) {
	forEachSandbox(t, func(t *testing.T, e *sandboxEnv, k keys) {
		is := is.New(t)
		pi := e.created(k, "k1", fpxBody("15000", "ev-1"))
		id := pi["id"].(string)
		types, evs := e.events(k, "")
		is.Equal(types, []string{"payment_intent.requires_action"}) // the create's own processing is not an event
		ev := evs[0]
		is.Equal(ev["object"], "event")
		is.Equal(ev["environment"], "test")
		is.True(strings.HasPrefix(ev["id"].(string), "evt_"))
		is.Equal(ev["data"], e.get(k, id)) // the projection GET shows

		r := e.do("POST", "/v1/test_helpers/payment_intents/"+id+"/approve", nil, basic(k))
		is.Equal(r.status, http.StatusOK)
		e.drain()
		is.Equal(e.eventsOf(k, id), []string{"payment_intent.requires_action", "payment_intent.succeeded"})
		_, evs = e.events(k, "type=payment_intent.succeeded")
		is.Equal(len(evs), 1)
		data := evs[0]["data"].(map[string]any)
		is.Equal(data["status"], "succeeded")
		is.Equal(data, e.get(k, id))

		declined := e.created(k, "k2", fpxBody("15901", "ev-2"))
		is.Equal(e.eventsOf(k, declined["id"].(string)), []string{"payment_intent.failed"})

		cancel := e.created(k, "k3", fpxBody("15000", "ev-3"))
		r = e.do("POST", "/v1/payment_intents/"+cancel["id"].(string)+"/cancel", nil, basic(k), idem("k3c"))
		is.Equal(r.status, http.StatusAccepted)
		e.drain()
		is.Equal(e.eventsOf(k, cancel["id"].(string)), []string{"payment_intent.requires_action", "payment_intent.cancelled"})

		// Read one, filter, page.
		r = e.do("GET", "/v1/events/"+ev["id"].(string), nil, basic(k))
		is.Equal(r.status, http.StatusOK)
		is.Equal(r.json(t)["type"], "payment_intent.requires_action")
		types, _ = e.events(k, "type=payment_intent.failed,payment_intent.cancelled")
		is.Equal(types, []string{"payment_intent.cancelled", "payment_intent.failed"})
		page := e.do("GET", "/v1/events?limit=2", nil, basic(k)).json(t)
		is.Equal(page["has_more"], true)
		rest := e.do("GET", "/v1/events?limit=2&cursor="+page["next_cursor"].(string), nil, basic(k)).json(t)
		is.Equal(len(rest["data"].([]any)), 2) // five events in all
		for _, bad := range []string{"type=payment_intent.paid", "type=", "limit=0", "cursor=x", "colour=red"} {
			r := e.do("GET", "/v1/events?"+bad, nil, basic(k))
			is.Equal(r.status, http.StatusBadRequest)
		}
		// Another merchant or environment sees none of it.
		other := e.merchant(paykit.Test)
		is.Equal(e.do("GET", "/v1/events/"+ev["id"].(string), nil, basic(other)).status, http.StatusNotFound)
		live := e.keyFor(k.merchantID, paykit.Live)
		is.Equal(e.do("GET", "/v1/events/"+ev["id"].(string), nil, basic(live)).status, http.StatusNotFound)
		types, _ = e.events(other, "")
		is.Equal(len(types), 0)
	})
}

func TestPayoutEvents(t *testing.T) {
	forEachPayoutEnv(t, 1_000_000, func(t *testing.T, e *payoutEnv) {
		is := is.New(t)
		held := e.payout("k-held", thPayout("1000000", "held", plainAccount))
		id := held["id"].(string)
		r := e.do("POST", "/operator/payout_intents/"+id+"/approve", nil, bearer(e.opToken))
		is.Equal(r.status, http.StatusOK)
		e.settle()
		r = e.do("POST", "/v1/test_helpers/payout_intents/"+id+"/return", nil, basic(e.k))
		is.Equal(r.status, http.StatusOK)
		is.Equal(e.eventsOf(e.k, id), []string{"payout_intent.requires_approval", "payout_intent.processing",
			"payout_intent.succeeded", "payout_intent.returned"})
		_, evs := e.events(e.k, "type=payout_intent.returned")
		data := evs[0]["data"].(map[string]any)
		is.Equal(data["status"], "failed") // a return is a failed payout
		is.Equal(data["failure_code"], "funds_returned")
		is.Equal(data["returned_amount"], "1000000")
		is.Equal(data, e.getPayout(id))

		// The terminal event after a cancel carries the reason.
		slow := e.payout("k-slow", thPayout("4000", "slow", slowAccount))
		c := e.cancelPayout("k-cancel", slow["id"].(string), map[string]any{"reason": "paid twice by mistake"})
		is.Equal(c.status, http.StatusAccepted)
		e.settle()
		is.Equal(e.eventsOf(e.k, slow["id"].(string)), []string{"payout_intent.processing", "payout_intent.cancelled"})
		_, evs = e.events(e.k, "type=payout_intent.cancelled")
		data = evs[0]["data"].(map[string]any)
		is.Equal(data["status"], "cancelled")
		is.Equal(data["reason"], "paid twice by mistake")

		rej := e.payout("k-rej", thPayout("2000000", "rejected", plainAccount))
		e.do("POST", "/operator/payout_intents/"+rej["id"].(string)+"/reject", map[string]any{"reason": "no"}, bearer(e.opToken))
		is.Equal(e.eventsOf(e.k, rej["id"].(string)), []string{"payout_intent.requires_approval", "payout_intent.failed"})
		bad := e.payout("k-bad", thPayout("1000", "bad", invalidAccount))
		is.Equal(e.eventsOf(e.k, bad["id"].(string)), []string{"payout_intent.processing", "payout_intent.failed"})
		for _, ev := range evs {
			is.True(!strings.Contains(fmt.Sprint(ev), plainAccount))
		}
	})
}

// signCallback signs a sandbox PSP callback body as the PSP does.
func signCallback(body []byte) string {
	m := hmac.New(sha256.New, []byte(sandboxAPIKey))
	m.Write(body)
	return hex.EncodeToString(m.Sum(nil))
}

func TestProviderCallbacks(t *testing.T) {
	forEachSandbox(t, func(t *testing.T, e *sandboxEnv, k keys) {
		is := is.New(t)
		ctx := context.Background()
		// The payer approves on the PSP's own page: the PSP's callback
		// settles the payment before any inquiry runs.
		pi := e.created(k, "k1", fpxBody("15000", "cb-1"))
		id := pi["id"].(string)
		r := e.do("POST", "/v1/test_helpers/payment_intents/"+id+"/decline", nil, basic(k))
		is.Equal(r.status, http.StatusOK)
		is.Equal(e.get(k, id)["status"], "failed")
		n, err := e.psp.SendCallbacks(ctx)
		is.NoErr(err)
		is.Equal(n, 1) // acknowledged, and changes nothing
		is.Equal(e.eventsOf(k, id), []string{"payment_intent.requires_action", "payment_intent.failed"})

		// A timeout, then the callback alone resolves it.
		slow := e.created(k, "k2", fpxBody("15902", "cb-2"))
		sid := slow["id"].(string)
		is.Equal(slow["status"], "processing")
		e.clock.Advance(sandboxDelay)
		n, err = e.psp.SendCallbacks(ctx)
		is.NoErr(err)
		is.Equal(n, 1)
		is.Equal(e.get(k, sid)["status"], "succeeded")

		// The same callback twice: one transition, one event.
		body := []byte(`{"id":"evt_dup","kind":"payment","key":"` + sid + `","state":"SUCCESS"}`)
		for range 2 {
			r := e.do("POST", "/providers/sandbox/webhooks", body, withHeader(sandbox.SignatureHeader, signCallback(body)))
			is.Equal(r.status, http.StatusOK)
		}
		is.Equal(e.eventsOf(k, sid), []string{"payment_intent.processing", "payment_intent.succeeded"})

		// Refused: a bad signature, an unknown Provider. Unknown attempts
		// are acknowledged.
		r = e.do("POST", "/providers/sandbox/webhooks", body, withHeader(sandbox.SignatureHeader, signCallback([]byte("x"))))
		is.Equal(r.status, http.StatusBadRequest)
		is.Equal(r.errorOf(t)["code"], "invalid_request")
		r = e.do("POST", "/providers/other/webhooks", body, withHeader(sandbox.SignatureHeader, signCallback(body)))
		is.Equal(r.status, http.StatusNotFound)
		unknown := []byte(`{"id":"evt_u","kind":"payment","key":"pi_unknown","state":"SUCCESS"}`)
		r = e.do("POST", "/providers/sandbox/webhooks", unknown, withHeader(sandbox.SignatureHeader, signCallback(unknown)))
		is.Equal(r.status, http.StatusOK)
	})
}

// A callback and the recovery job racing for the same outcome: one
// transition, one event, one ledger credit.
func TestCallbackRacesRecovery(t *testing.T) {
	forEachSandbox(t, func(t *testing.T, e *sandboxEnv, k keys) {
		is := is.New(t)
		ctx := context.Background()
		var ids []string
		for i := range 4 {
			pi := e.created(k, fmt.Sprint("race-", i), fpxBody("20902", fmt.Sprint("race-", i)))
			is.Equal(pi["status"], "processing")
			ids = append(ids, pi["id"].(string))
		}
		e.clock.Advance(sandboxDelay + 2*time.Second) // past the first retry's backoff (at most 1 s)
		var wg sync.WaitGroup
		wg.Go(func() { _, _ = e.psp.SendCallbacks(ctx) })
		wg.Go(func() { _, _ = e.svc.ProcessDue(ctx) })
		wg.Go(func() { _, _ = e.svc.ProcessDue(ctx) })
		wg.Wait()
		e.drain()
		_, _ = e.psp.SendCallbacks(ctx)
		for _, id := range ids {
			is.Equal(e.get(k, id)["status"], "succeeded")
			is.Equal(e.eventsOf(k, id), []string{"payment_intent.processing", "payment_intent.succeeded"})
		}
		b := e.do("GET", "/v1/balances", nil, basic(k)).json(t)["data"].([]any)
		is.Equal(len(b), 1)
		is.Equal(b[0].(map[string]any)["available"], "0")
		is.Equal(b[0].(map[string]any)["pending"], "81184") // 4 × (20902 less the fee of 606), credited once each
		raw, _ := json.Marshal(b)
		is.True(!strings.Contains(string(raw), "sandbox"))
	})
}

func TestCheckoutEvents(t *testing.T) {
	forEachPay(t, func(t *testing.T, e *payEnv, k keys) {
		is := is.New(t)
		// Completed: the payer pays; the event carries the checkout's
		// projection as GET shows it.
		done := e.createCheckout(k, "ce-1", checkoutBody("15000", "order-ce1"))
		e.pay(done["checkout_url"].(string), fpxPayer("MAYBANK"))
		piID := done["payment_intent_id"].(string)
		is.Equal(e.do("POST", "/v1/test_helpers/payment_intents/"+piID+"/approve", nil, basic(k)).status, http.StatusOK)
		e.drain()
		is.Equal(e.eventsOf(k, done["id"].(string)), []string{"checkout.completed"})
		is.Equal(e.eventsOf(k, piID), []string{"payment_intent.requires_action", "payment_intent.succeeded"})
		_, evs := e.events(k, "type=checkout.completed")
		is.Equal(evs[0]["data"], e.checkout(k, done["id"].(string)))
		is.Equal(evs[0]["data"].(map[string]any)["payment_status"], "succeeded")

		// Cancelled by the merchant; an unstarted linked payment is
		// cancelled with it.
		c := e.createCheckout(k, "ce-2", checkoutBody("15000", "order-ce2"))
		is.Equal(e.cancelCheckout(k, "ce-2c", c["id"].(string)).status, http.StatusOK)
		is.Equal(e.eventsOf(k, c["id"].(string)), []string{"checkout.cancelled"})
		is.Equal(e.eventsOf(k, c["payment_intent_id"].(string)), []string{"payment_intent.cancelled"})

		// Expired by the worker.
		x := e.createCheckout(k, "ce-3", checkoutBody("15000", "order-ce3"))
		e.clock.Advance(24*time.Hour + time.Second)
		e.drain()
		is.Equal(e.eventsOf(k, x["id"].(string)), []string{"checkout.expired"})
		_, evs = e.events(k, "type=checkout.expired")
		is.Equal(evs[0]["data"].(map[string]any)["status"], "expired")
	})
}

// The PSP's callbacks settle payouts without an inquiry, and report
// returns; repeated ones change nothing.
func TestPayoutCallbacks(t *testing.T) {
	forEachPayoutEnv(t, 0, func(t *testing.T, e *payoutEnv) {
		is := is.New(t)
		ctx := context.Background()
		po := e.payout("k1", thPayout("5000", "cb-po", plainAccount))
		id := po["id"].(string)
		e.clock.Advance(sandboxDelay)
		n, err := e.psp.SendCallbacks(ctx)
		is.NoErr(err)
		is.Equal(n, 1)
		got := e.getPayout(id)
		is.Equal(got["status"], "succeeded")
		is.Equal(got["completed_amount"], "5000")

		r := e.do("POST", "/v1/test_helpers/payout_intents/"+id+"/return", nil, basic(e.k))
		is.Equal(r.status, http.StatusOK)
		n, err = e.psp.SendCallbacks(ctx) // REVERSED: already applied
		is.NoErr(err)
		is.Equal(n, 1)
		n, err = e.psp.SendCallbacks(ctx) // nothing left to tell
		is.NoErr(err)
		is.Equal(n, 0)
		e.drain()
		is.Equal(e.eventsOf(e.k, id), []string{"payout_intent.processing", "payout_intent.succeeded", "payout_intent.returned"})
	})
}
