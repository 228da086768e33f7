package httpadapter_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/internal/enums"
)

// TestMerchantWebhookEndpoints: a merchant manages its own endpoints with
// its secret key, as the addendum's "Merchant webhook endpoints" says, and
// each gets only the event types it enables.
func TestMerchantWebhookEndpoints(t *testing.T) {
	forEachStore(t, func(t *testing.T, open func(t *testing.T) paykit.Store) {
		is := is.New(t)
		e, k := webhookEnv(t, open, 5*time.Second)
		ok := func(n int, w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) }
		rcA, rcB, rcC := newReceiver(t, e, ok), newReceiver(t, e, ok), newReceiver(t, e, ok)
		key := func(v string) header { return withHeader("Idempotency-Key", v) }

		// Rejections store nothing.
		r := e.do("POST", "/v1/webhook_endpoints", map[string]any{"url": rcA.srv.URL}, basic(k))
		is.Equal(r.status, http.StatusBadRequest)
		is.Equal(r.errorOf(t)["param"], "Idempotency-Key")
		r = e.do("POST", "/v1/webhook_endpoints", map[string]any{"url": rcA.srv.URL, "enabled_events": []string{"payment_intent.paid"}}, basic(k), key("a"))
		is.Equal(r.status, http.StatusBadRequest)
		is.Equal(r.errorOf(t)["code"], "invalid_request")
		is.Equal(r.errorOf(t)["param"], "enabled_events")
		r = e.do("POST", "/v1/webhook_endpoints", map[string]any{"url": "ftp://example.com/hooks"}, basic(k), key("a"))
		is.Equal(r.status, http.StatusBadRequest)
		is.Equal(r.errorOf(t)["param"], "url")

		bodyA := map[string]any{"url": rcA.srv.URL + "/a", "enabled_events": []string{paykit.EventPaymentRequiresAction}, "description": "orders"}
		r = e.do("POST", "/v1/webhook_endpoints", bodyA, basic(k), key("a"))
		is.Equal(r.status, http.StatusCreated)
		a := r.json(t)
		is.Equal(a["object"], "webhook_endpoint")
		is.True(strings.HasPrefix(a["id"].(string), "we_"))
		is.True(strings.HasPrefix(a["secret"].(string), "whsec_"))
		is.Equal(a["enabled_events"], []any{paykit.EventPaymentRequiresAction})
		is.Equal(a["description"], "orders")
		is.Equal(a["status"], "enabled")
		is.Equal(a["environment"], "test")
		is.True(a["created_at"] != nil)
		replay := e.do("POST", "/v1/webhook_endpoints", bodyA, basic(k), key("a"))
		is.Equal(replay.status, http.StatusCreated)
		is.Equal(replay.header.Get("Idempotent-Replayed"), "true")
		is.Equal(string(replay.body), string(r.body))
		r = e.do("POST", "/v1/webhook_endpoints", map[string]any{"url": rcA.srv.URL + "/other"}, basic(k), key("a"))
		is.Equal(r.status, http.StatusConflict)
		is.Equal(r.errorOf(t)["code"], "idempotency_conflict")
		// A used key with a body that would not validate is a conflict
		// too, as for payments: the key is checked first.
		r = e.do("POST", "/v1/webhook_endpoints", map[string]any{"url": "ftp://example.com/hooks"}, basic(k), key("a"))
		is.Equal(r.status, http.StatusConflict)
		is.Equal(r.errorOf(t)["code"], "idempotency_conflict")

		r = e.do("POST", "/v1/webhook_endpoints", map[string]any{"url": rcB.srv.URL, "enabled_events": []string{paykit.EventRefundSucceeded}}, basic(k), key("b"))
		is.Equal(r.status, http.StatusCreated)
		b := r.json(t)
		e.clock.Advance(time.Millisecond) // creation order is the list's
		r = e.do("POST", "/v1/webhook_endpoints", map[string]any{"url": rcC.srv.URL}, basic(k), key("c"))
		is.Equal(r.status, http.StatusCreated)
		c := r.json(t)
		is.Equal(c["enabled_events"], []any{"*"})
		is.Equal(c["description"], nil)

		// Reads: no secret, newest first, paged, scoped.
		got := e.do("GET", "/v1/webhook_endpoints/"+a["id"].(string), nil, basic(k)).json(t)
		is.Equal(got["secret"], nil)
		is.Equal(got["url"], bodyA["url"])
		page := e.do("GET", "/v1/webhook_endpoints?limit=2", nil, basic(k)).json(t)
		is.Equal(page["has_more"], true)
		ids := []any{page["data"].([]any)[0].(map[string]any)["id"], page["data"].([]any)[1].(map[string]any)["id"]}
		is.Equal(ids[0], c["id"])
		rest := e.do("GET", "/v1/webhook_endpoints?limit=2&cursor="+page["next_cursor"].(string), nil, basic(k)).json(t)
		is.Equal(rest["has_more"], false)
		is.Equal(len(rest["data"].([]any)), 1)
		other := e.merchant(paykit.Test)
		is.Equal(e.do("GET", "/v1/webhook_endpoints/"+a["id"].(string), nil, basic(other)).status, http.StatusNotFound)
		is.Equal(e.do("POST", "/v1/webhook_endpoints/"+a["id"].(string), map[string]any{"disabled": true}, basic(other)).status, http.StatusNotFound)
		is.Equal(e.do("DELETE", "/v1/webhook_endpoints/"+a["id"].(string), nil, basic(other)).status, http.StatusNotFound)
		is.Equal(e.do("POST", "/v1/webhook_endpoints/"+a["id"].(string)+"/rotate_secret", nil, basic(other)).status, http.StatusNotFound)
		is.Equal(len(e.do("GET", "/v1/webhook_endpoints", nil, basic(other)).json(t)["data"].([]any)), 0)
		live := e.keyFor(k.merchantID, paykit.Live)
		is.Equal(e.do("GET", "/v1/webhook_endpoints/"+a["id"].(string), nil, basic(live)).status, http.StatusNotFound)

		// Only the types an endpoint enables reach it.
		e.created(k, "p1", fpxBody("15000", "mwh-1"))
		e.drain()
		is.Equal(len(rcA.deliveries()), 1)
		is.Equal(len(rcB.deliveries()), 0)
		is.Equal(len(rcC.deliveries()), 1)
		is.NoErr(verify(t, a["secret"].(string), rcA.deliveries()[0]))

		// Updates: B takes every type, C is disabled.
		r = e.do("POST", "/v1/webhook_endpoints/"+b["id"].(string), map[string]any{"enabled_events": []string{"*"}, "description": "all"}, basic(k))
		is.Equal(r.status, http.StatusOK)
		is.Equal(r.json(t)["enabled_events"], []any{"*"})
		is.Equal(r.json(t)["description"], "all")
		r = e.do("POST", "/v1/webhook_endpoints/"+c["id"].(string), map[string]any{"disabled": true}, basic(k))
		is.Equal(r.status, http.StatusOK)
		is.Equal(r.json(t)["status"], "disabled")
		is.Equal(r.json(t)["disabled_reason"], "merchant")
		r = e.do("POST", "/v1/webhook_endpoints/"+b["id"].(string), map[string]any{"enabled_events": []string{"nope"}}, basic(k))
		is.Equal(r.status, http.StatusBadRequest)

		// Rotation: both secrets sign for 24 hours.
		r = e.do("POST", "/v1/webhook_endpoints/"+a["id"].(string)+"/rotate_secret", nil, basic(k))
		is.Equal(r.status, http.StatusOK)
		newSecret := r.json(t)["secret"].(string)
		is.True(strings.HasPrefix(newSecret, "whsec_") && newSecret != a["secret"])
		e.created(k, "p2", fpxBody("15000", "mwh-2"))
		e.drain()
		is.Equal(len(rcA.deliveries()), 2)
		is.Equal(len(rcB.deliveries()), 1)
		is.Equal(len(rcC.deliveries()), 1) // disabled
		d := rcA.deliveries()[1]
		is.Equal(len(strings.Fields(d.header.Get("webhook-signature"))), 2)
		is.NoErr(verify(t, a["secret"].(string), d))
		is.NoErr(verify(t, newSecret, d))
		e.clock.Advance(24*time.Hour + time.Second)
		e.drain()
		n := len(rcA.deliveries())
		e.created(k, "p3", fpxBody("15000", "mwh-3"))
		e.drain()
		d = rcA.deliveries()[n]
		is.Equal(len(strings.Fields(d.header.Get("webhook-signature"))), 1)
		is.NoErr(verify(t, newSecret, d))

		// Deletion: the delivery already pending stops.
		n = len(rcA.deliveries())
		e.created(k, "p4", fpxBody("15000", "mwh-4"))
		r = e.do("DELETE", "/v1/webhook_endpoints/"+a["id"].(string), nil, basic(k))
		is.Equal(r.status, http.StatusOK)
		is.Equal(r.json(t), map[string]any{"id": a["id"], "object": "webhook_endpoint", "deleted": true})
		e.drain()
		is.Equal(len(rcA.deliveries()), n)
		is.Equal(e.do("GET", "/v1/webhook_endpoints/"+a["id"].(string), nil, basic(k)).status, http.StatusNotFound)
		is.Equal(e.do("DELETE", "/v1/webhook_endpoints/"+a["id"].(string), nil, basic(k)).status, http.StatusNotFound)
		is.Equal(len(e.do("GET", "/v1/webhook_endpoints", nil, basic(k)).json(t)["data"].([]any)), 2)

		// Operators still see every endpoint, the deleted one too.
		r = e.do("GET", "/operator/merchants/"+k.merchantID+"/webhook_endpoints", nil, bearer(e.opToken))
		is.Equal(r.status, http.StatusOK)
		seen := map[any]map[string]any{}
		for _, x := range r.json(t)["data"].([]any) {
			seen[x.(map[string]any)["id"]] = x.(map[string]any)
		}
		is.Equal(seen[a["id"]]["disabled_reason"], "deleted")
		is.Equal(seen[b["id"]]["description"], "all")
		is.Equal(seen[c["id"]]["enabled_events"], []any{"*"})
		for _, s := range []string{a["secret"].(string), newSecret, b["secret"].(string), c["secret"].(string)} {
			is.True(!strings.Contains(e.logs.String(), s))
		}
	})
}

// TestOpenAPIWebhooksDescribeEveryEventType: the document's webhooks
// section has one operation per event type the Service sends, and no other.
func TestOpenAPIWebhooksDescribeEveryEventType(t *testing.T) {
	is := is.New(t)
	var got []string
	for typ, item := range spec().Doc().Webhooks {
		is.True(item.Post != nil)
		got = append(got, typ)
	}
	slices.Sort(got)
	want := slices.Sorted(slices.Values(enums.EventTypes))
	is.Equal(got, want)
}

// TestDashboardShowsMerchantEndpoints: the dashboard shows what a merchant
// set on its endpoint, and does not flag as needing attention what the
// merchant disabled or deleted itself.
func TestDashboardShowsMerchantEndpoints(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	e := newDashEnv(t, onMemory)
	k := e.merchant(paykit.Test)
	p, err := e.svc.Authenticate(e.ctx, k.public, k.secret)
	is.NoErr(err)
	mk := func(key, desc string) string {
		n, _, err := e.svc.CreateMerchantWebhookEndpoint(e.ctx, p, key, paykit.CreateMerchantWebhookEndpointRequest{
			URL: "http://127.0.0.1:9/" + key, EnabledEvents: []string{paykit.EventRefundFailed, paykit.EventRefundSucceeded}, Description: desc})
		is.NoErr(err)
		return n.Endpoint.ID
	}
	kept, gone := mk("kept", "ledger sync"), mk("gone", "old")
	_, err = e.svc.DeleteMerchantWebhookEndpoint(e.ctx, p, gone)
	is.NoErr(err)
	off := mk("off", "")
	_, err = e.svc.SetWebhookEndpointEnabled(e.ctx, "test", off, false)
	is.NoErr(err)
	e.csrf()
	r := e.get("/webhook_endpoints/" + kept)
	is.Equal(r.status, http.StatusOK)
	is.True(strings.Contains(string(r.body), "refund.failed, refund.succeeded"))
	is.True(strings.Contains(string(r.body), "ledger sync"))
	r = e.get("/")
	is.Equal(r.status, http.StatusOK)
	is.True(strings.Contains(string(r.body), off)) // an operator's: flagged
	is.True(!strings.Contains(string(r.body), gone))
}
