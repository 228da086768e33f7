package httpadapter_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/internal/wire"
)

// A webhook endpoint that keeps failing pauses; operators see it (the
// endpoint's delivery state, the paused gauge) and resume it.

// objectKeys returns the member names of the JSON object body, in order.
func objectKeys(t *testing.T, body []byte) []string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(body))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("not an object: %s", body)
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, tok.(string))
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}

// endpointKeys are the members of a webhook endpoint, in order.
var endpointKeys = []string{"object", "id", "merchant_id", "environment", "url", "status", "disabled_reason", "enabled_events",
	"description", "created_at", "updated_at", "delivery_state", "consecutive_failures", "paused_until", "pause_reason"}

// failThrice makes three deliveries to rc fail in a row through the
// worker, on the schedule: the first attempt of a new event, then its
// retries 5 s and 5 min later. It returns when the third came.
func failThrice(t *testing.T, e *sandboxEnv, k keys, rc *receiver, ref string) time.Time {
	t.Helper()
	n := len(rc.deliveries())
	e.created(k, ref, fpxBody("15000", ref))
	e.drain()
	for _, gap := range []time.Duration{6 * time.Second, 6 * time.Minute} { // the schedule's 5 s and 5 min, +10% jitter at most
		e.clock.Advance(gap)
		e.drain()
	}
	got := rc.deliveries()
	if len(got) != n+3 {
		t.Fatalf("%d deliveries, want %d", len(got), n+3)
	}
	return got[len(got)-1].at
}

func TestWebhookEndpointPauseAndResume(t *testing.T) {
	forEachStore(t, func(t *testing.T, open func(t *testing.T) paykit.Store) {
		is := is.New(t)
		e, k := webhookEnv(t, open, 5*time.Second)
		op := bearer(e.opToken)
		var healthy atomic.Bool
		rc := newReceiver(t, e, func(n int, w http.ResponseWriter, r *http.Request) {
			if healthy.Load() {
				w.WriteHeader(http.StatusNoContent)
				return
			}
			http.Error(w, "broken", http.StatusInternalServerError)
		})
		created := e.do("POST", "/operator/merchants/"+k.merchantID+"/webhook_endpoints", map[string]any{"environment": "test", "url": rc.srv.URL}, op)
		is.Equal(created.status, http.StatusCreated)
		// The delivery state comes after the fields the endpoint had, and
		// after the secret.
		is.Equal(objectKeys(t, created.body), append(append(endpointKeys[:11:11], "secret"), endpointKeys[11:]...))
		epID := created.json(t)["id"].(string)
		get := func() map[string]any {
			t.Helper()
			r := e.do("GET", "/operator/webhook_endpoints/"+epID, nil, op)
			is.Equal(r.status, http.StatusOK)
			is.Equal(objectKeys(t, r.body), endpointKeys)
			return r.json(t)
		}
		ep := get()
		is.Equal(ep["id"], epID)
		is.Equal(ep["delivery_state"], "active")
		is.Equal(ep["consecutive_failures"], 0.0)
		is.Equal(ep["paused_until"], nil)
		is.Equal(ep["pause_reason"], nil)
		is.Equal(mustSample(t, metricsText(t, e.env), "paykit_webhook_endpoints_paused"), 0.0)

		// Two failures count; the third pauses the endpoint for a minute.
		third := failThrice(t, e, k, rc, "first")
		pausedUntil := wire.FormatTime(third.Add(time.Minute))
		ep = get()
		is.Equal(ep["delivery_state"], "paused")
		is.Equal(ep["consecutive_failures"], 3.0)
		is.Equal(ep["paused_until"], pausedUntil)
		is.Equal(ep["pause_reason"], "3 deliveries in a row failed; the last: answered 500")
		is.Equal(ep["status"], "enabled")
		list := e.do("GET", "/operator/merchants/"+k.merchantID+"/webhook_endpoints", nil, op).json(t)["data"].([]any)
		is.Equal(list[0], ep)
		is.Equal(mustSample(t, metricsText(t, e.env), "paykit_webhook_endpoints_paused"), 1.0)

		// A new event waits for the pause.
		e.created(k, "during", fpxBody("15000", "during"))
		e.drain()
		is.Equal(len(rc.deliveries()), 3)

		// Resuming lifts the pause: the waiting delivery goes out at once.
		healthy.Store(true)
		r := e.do("POST", "/operator/webhook_endpoints/"+epID+"/resume", nil, op)
		is.Equal(r.status, http.StatusOK)
		is.Equal(objectKeys(t, r.body), endpointKeys)
		ep = r.json(t)
		is.Equal(ep["delivery_state"], "active")
		is.Equal(ep["consecutive_failures"], 0.0)
		is.Equal(ep["paused_until"], nil)
		is.Equal(ep["pause_reason"], nil)
		is.Equal(get(), ep)
		is.Equal(mustSample(t, metricsText(t, e.env), "paykit_webhook_endpoints_paused"), 0.0)
		audit := e.do("GET", "/operator/audit_events?action=webhook_endpoint.resume", nil, op).json(t)["data"].([]any)
		is.Equal(len(audit), 1)
		is.Equal(audit[0].(map[string]any)["actor"], "alice")
		is.Equal(audit[0].(map[string]any)["target_id"], epID)
		is.Equal(audit[0].(map[string]any)["merchant_id"], k.merchantID)
		e.drain()
		got := rc.deliveries()
		is.Equal(len(got), 4) // the first event's retry keeps its schedule (30 min)
		is.Equal(got[3].at, e.clock.Now())
		is.True(got[3].header.Get("webhook-id") != got[0].header.Get("webhook-id"))

		// A pause that ended is no longer one, though its time and reason
		// stay until the next 2xx.
		healthy.Store(false)
		third = failThrice(t, e, k, rc, "again")
		is.Equal(get()["delivery_state"], "paused")
		e.clock.Set(third.Add(time.Minute))
		ep = get()
		is.Equal(ep["delivery_state"], "active")
		is.Equal(ep["consecutive_failures"], 3.0)
		is.Equal(ep["paused_until"], wire.FormatTime(third.Add(time.Minute)))
		is.Equal(mustSample(t, metricsText(t, e.env), "paykit_webhook_endpoints_paused"), 0.0)

		// Unknown ids: the 404 of every operator route.
		assertError(t, e.do("GET", "/operator/webhook_endpoints/we_unknown", nil, op), http.StatusNotFound, paykit.CodeNotFound, "")
		assertError(t, e.do("POST", "/operator/webhook_endpoints/we_unknown/resume", nil, op), http.StatusNotFound, paykit.CodeNotFound, "")
		is.Equal(len(e.do("GET", "/operator/audit_events?action=webhook_endpoint.resume", nil, op).json(t)["data"].([]any)), 1)
	})
}
