package httpadapter_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/internal/webhooks/send"
)

// Webhook delivery to real receivers on loopback (test environment), on
// every Store, with the sandbox clock standing in for time.

// delivery is one request a receiver got.
type delivery struct {
	at     time.Time // the sandbox clock when it came
	header http.Header
	body   []byte
}

// receiver is a merchant's webhook endpoint: answer decides each response
// from the number of the request (1-based). Every delivery must match the
// OpenAPI document's webhooks section.
type receiver struct {
	srv    *httptest.Server
	mu     sync.Mutex
	got    []delivery
	answer func(n int, w http.ResponseWriter, r *http.Request)
}

func newReceiver(t *testing.T, e *sandboxEnv, answer func(n int, w http.ResponseWriter, r *http.Request)) *receiver {
	rc := &receiver{answer: answer}
	rc.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if err := spec().CheckWebhook(r.Header, body); err != nil {
			t.Errorf("delivery against the document's webhooks: %v", err)
		}
		rc.mu.Lock()
		rc.got = append(rc.got, delivery{e.clock.Now(), r.Header.Clone(), body})
		n := len(rc.got)
		rc.mu.Unlock()
		rc.answer(n, w, r)
	}))
	t.Cleanup(rc.srv.Close)
	return rc
}

func (rc *receiver) deliveries() []delivery {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]delivery(nil), rc.got...)
}

// of returns the deliveries of one message (webhook-id); the first
// delivery's when msgID is "".
func (rc *receiver) of(msgID string) []delivery {
	var out []delivery
	for _, d := range rc.deliveries() {
		if msgID == "" {
			msgID = d.header.Get("webhook-id")
		}
		if d.header.Get("webhook-id") == msgID {
			out = append(out, d)
		}
	}
	return out
}

// endpoint registers url for k's merchant in the test environment and
// returns its id and secret.
func (e *sandboxEnv) endpoint(k keys, url string) (string, string) {
	e.t.Helper()
	r := e.do("POST", "/operator/merchants/"+k.merchantID+"/webhook_endpoints", map[string]any{"environment": "test", "url": url}, bearer(e.opToken))
	if r.status != http.StatusCreated {
		e.t.Fatalf("register endpoint: %d %s", r.status, r.body)
	}
	m := r.json(e.t)
	return m["id"].(string), m["secret"].(string)
}

// verify checks a delivery with the official Standard Webhooks library.
func verify(t *testing.T, secret string, d delivery) error {
	t.Helper()
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	return wh.VerifyIgnoringTimestamp(d.body, d.header) // the sandbox clock is not the wall clock
}

// webhookEnv is a sandbox env whose webhook attempts time out after
// timeout: short where a receiver never answers, roomy where it does.
func webhookEnv(t *testing.T, open func(t *testing.T) paykit.Store, timeout time.Duration) (*sandboxEnv, keys) {
	e := newSandboxEnvConfig(t, open, envConfig{webhookTimeout: timeout})
	return e, e.merchant(paykit.Test)
}

func TestWebhookDelivery(t *testing.T) {
	forEachStore(t, func(t *testing.T, open func(t *testing.T) paykit.Store) {
		is := is.New(t)
		e, k := webhookEnv(t, open, 5*time.Second)
		// The receiver fails twice, then takes it.
		rc := newReceiver(t, e, func(n int, w http.ResponseWriter, r *http.Request) {
			if n <= 2 {
				http.Error(w, "busy", http.StatusServiceUnavailable)
				return
			}
			w.WriteHeader(http.StatusNoContent)
		})
		epID, secret := e.endpoint(k, rc.srv.URL+"/hooks")
		is.True(strings.HasPrefix(secret, "whsec_"))

		pi := e.created(k, "k1", fpxBody("15000", "wh-1"))
		start := e.clock.Now()
		e.drain()
		is.Equal(len(rc.of("")), 1)
		// Each retry comes on the schedule: 5 s, then 5 min (±10%).
		for i, gap := range []time.Duration{5 * time.Second, 5 * time.Minute} {
			last := rc.of("")[i].at
			e.clock.Set(last.Add(gap * 89 / 100))
			e.drain()
			is.Equal(len(rc.of("")), i+1) // not yet
			e.clock.Set(last.Add(gap * 111 / 100))
			e.drain()
			is.Equal(len(rc.of("")), i+2)
		}
		e.clock.Advance(24 * time.Hour) // the payment expires meanwhile: another event
		e.drain()
		got := rc.of("")
		is.Equal(len(got), 3) // delivered: no more attempts
		is.Equal(got[0].at, start)

		// The same message every time, signed per Standard Webhooks.
		var ev map[string]any
		is.NoErr(json.Unmarshal(got[0].body, &ev))
		is.Equal(ev["type"], "payment_intent.requires_action")
		is.Equal(ev["data"].(map[string]any)["id"], pi["id"])
		for _, d := range got {
			is.Equal(d.header.Get("webhook-id"), ev["id"])
			is.Equal(string(d.body), string(got[0].body))
			is.Equal(d.header.Get("Content-Type"), "application/json")
			is.NoErr(verify(t, secret, d))
			is.Equal(d.header.Get("webhook-timestamp"), strconv.FormatInt(d.at.Unix(), 10))
		}
		stored := e.do("GET", "/v1/events/"+ev["id"].(string), nil, basic(k)).json(t)
		is.Equal(stored, ev)
		tampered := got[0]
		tampered.body = []byte(strings.Replace(string(tampered.body), "15000", "15001", 1))
		is.True(verify(t, secret, tampered) != nil)

		// Each attempt is recorded.
		r := e.do("GET", "/operator/webhook_endpoints/"+epID+"/attempts", nil, bearer(e.opToken))
		is.Equal(r.status, http.StatusOK)
		var codes []float64
		for _, a := range r.json(t)["data"].([]any) {
			m := a.(map[string]any)
			if m["event_id"] == ev["id"] {
				codes = append(codes, m["status_code"].(float64))
			}
		}
		is.Equal(codes, []float64{204, 503, 503})

		// Rotation: both secrets sign during the overlap.
		r = e.do("POST", "/operator/webhook_endpoints/"+epID+"/rotate_secret", map[string]any{"expire_previous_after": 3600}, bearer(e.opToken))
		is.Equal(r.status, http.StatusOK)
		newSecret := r.json(t)["secret"].(string)
		is.True(newSecret != secret)
		n := len(rc.deliveries())
		e.created(k, "k2", fpxBody("15000", "wh-2"))
		e.drain()
		d := rc.deliveries()[n]
		is.Equal(len(strings.Fields(d.header.Get("webhook-signature"))), 2)
		is.NoErr(verify(t, secret, d))
		is.NoErr(verify(t, newSecret, d))
		e.clock.Advance(2 * time.Hour) // the old secret has expired
		n = len(rc.deliveries())
		e.created(k, "k3", fpxBody("15000", "wh-3"))
		e.drain()
		d = rc.deliveries()[n]
		is.Equal(len(strings.Fields(d.header.Get("webhook-signature"))), 1)
		is.NoErr(verify(t, newSecret, d))
		is.True(verify(t, secret, d) != nil)
		is.True(!strings.Contains(e.logs.String(), secret) && !strings.Contains(e.logs.String(), newSecret))
	})
}

// cutOffSender is the Service's sender whose attempt ends, as a timeout
// would end it, when the receiver says it holds the request (cut): a
// receiver that never answers costs no waiting. Each attempt is cut by its
// own message id, so deliveries of other events running at the same time
// are left alone.
type cutOffSender struct {
	send.Sender
	mu       sync.Mutex
	inflight map[string]context.CancelFunc // by event id (webhook-id)
}

func (s *cutOffSender) Send(ctx context.Context, d send.Delivery) send.Attempt {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s.mu.Lock()
	s.inflight[d.ID] = cancel
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.inflight, d.ID)
		s.mu.Unlock()
	}()
	return s.Sender.Send(ctx, d)
}

// cut ends the attempt in flight for message id.
func (s *cutOffSender) cut(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if cancel, ok := s.inflight[id]; ok {
		cancel()
	}
}

// An endpoint that never answers is retried on the whole schedule, then
// disabled; the operator API shows it.
func TestWebhookEndpointThatNeverAnswers(t *testing.T) {
	forEachStore(t, func(t *testing.T, open func(t *testing.T) paykit.Store) {
		is := is.New(t)
		// The first attempt runs into a real timeout (2 s: a shorter one can
		// expire before a loaded machine hands the request to the
		// receiver); the sender cuts the later ones off as soon as the
		// receiver holds them.
		sender := &cutOffSender{Sender: send.NewSender(2 * time.Second), inflight: map[string]context.CancelFunc{}}
		e := newSandboxEnvConfig(t, open, envConfig{webhookSender: sender})
		k := e.merchant(paykit.Test)
		rc := newReceiver(t, e, func(n int, w http.ResponseWriter, r *http.Request) {
			if n > 1 {
				sender.cut(r.Header.Get("webhook-id"))
			}
			<-r.Context().Done()
		})
		epID, _ := e.endpoint(k, rc.srv.URL)
		e.created(k, "k1", fpxBody("15000", "silent"))
		e.drain()
		schedule := []time.Duration{5 * time.Second, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour, 5 * time.Hour,
			10 * time.Hour, 14 * time.Hour, 20 * time.Hour, 24 * time.Hour}
		for i, gap := range schedule {
			last := rc.of("")[i].at
			e.clock.Set(last.Add(gap * 89 / 100))
			e.drain()
			is.Equal(len(rc.of("")), i+1)
			e.clock.Set(last.Add(gap * 111 / 100))
			e.drain()
			is.Equal(len(rc.of("")), i+2)
		}
		e.clock.Advance(48 * time.Hour)
		e.drain()
		is.Equal(len(rc.of("")), 10) // ten attempts in all, about three days

		r := e.do("GET", "/operator/merchants/"+k.merchantID+"/webhook_endpoints", nil, bearer(e.opToken))
		ep := r.json(t)["data"].([]any)[0].(map[string]any)
		is.Equal(ep["id"], epID)
		is.Equal(ep["status"], "disabled")
		is.Equal(ep["disabled_reason"], "failing")
		attempts := e.do("GET", "/operator/webhook_endpoints/"+epID+"/attempts?limit=100", nil, bearer(e.opToken)).json(t)["data"].([]any)
		first := attempts[len(attempts)-1].(map[string]any)
		is.Equal(first["status_code"], nil)
		is.Equal(first["attempt"], float64(1))
		is.True(first["error"].(string) != "")

		// Disabled: new events are not sent; enabling resumes deliveries.
		sent := len(rc.deliveries())
		e.created(k, "k2", fpxBody("15000", "after"))
		e.drain()
		is.Equal(len(rc.deliveries()), sent)
		r = e.do("POST", "/operator/webhook_endpoints/"+epID+"/enable", nil, bearer(e.opToken))
		is.Equal(r.status, http.StatusOK)
		is.Equal(r.json(t)["status"], "enabled")
		rc.answer = func(n int, w http.ResponseWriter, r *http.Request) { w.WriteHeader(200) }
		e.created(k, "k3", fpxBody("15000", "enabled"))
		e.drain()
		is.Equal(len(rc.deliveries()), sent+1)
	})
}

func TestWebhookAnswers(t *testing.T) {
	forEachStore(t, func(t *testing.T, open func(t *testing.T) paykit.Store) {
		is := is.New(t)
		e, k := webhookEnv(t, open, 5*time.Second)

		// 410 disables at once.
		gone := newReceiver(t, e, func(n int, w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusGone) })
		goneID, _ := e.endpoint(k, gone.srv.URL)
		// A redirect is a failure and is not followed.
		target := newReceiver(t, e, func(n int, w http.ResponseWriter, r *http.Request) { w.WriteHeader(200) })
		redirect := newReceiver(t, e, func(n int, w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, target.srv.URL, http.StatusFound)
		})
		redirectID, _ := e.endpoint(k, redirect.srv.URL)
		// Retry-After on 503 is honoured when longer than the schedule.
		busy := newReceiver(t, e, func(n int, w http.ResponseWriter, r *http.Request) {
			if n == 1 {
				w.Header().Set("Retry-After", "600")
				w.WriteHeader(http.StatusServiceUnavailable)
				return
			}
			w.WriteHeader(200)
		})
		e.endpoint(k, busy.srv.URL)

		e.created(k, "k1", fpxBody("15000", "answers"))
		e.drain()
		is.Equal(len(gone.deliveries()), 1)
		is.Equal(len(redirect.deliveries()), 1)
		is.Equal(len(target.deliveries()), 0)
		is.Equal(len(busy.deliveries()), 1)

		e.clock.Advance(6 * time.Second) // the schedule's 5 s, but Retry-After says 600
		e.drain()
		is.Equal(len(busy.deliveries()), 1)
		is.Equal(len(redirect.deliveries()), 2) // retried on the schedule
		e.clock.Advance(600 * time.Second)
		e.drain()
		is.Equal(len(busy.deliveries()), 2)
		is.Equal(len(gone.deliveries()), 1)
		is.Equal(len(target.deliveries()), 0)

		eps := map[string]map[string]any{}
		for _, ep := range e.do("GET", "/operator/merchants/"+k.merchantID+"/webhook_endpoints", nil, bearer(e.opToken)).json(t)["data"].([]any) {
			m := ep.(map[string]any)
			eps[m["id"].(string)] = m
		}
		is.Equal(eps[goneID]["status"], "disabled")
		is.Equal(eps[goneID]["disabled_reason"], "gone")
		is.Equal(eps[redirectID]["status"], "enabled")
		attempts := e.do("GET", "/operator/webhook_endpoints/"+redirectID+"/attempts", nil, bearer(e.opToken)).json(t)["data"].([]any)
		is.Equal(attempts[0].(map[string]any)["status_code"], float64(302))
		is.Equal(attempts[0].(map[string]any)["succeeded"], false)
	})
}

// Endpoint URLs: live takes only https URLs of public hosts; test takes
// loopback so local development works.
func TestWebhookEndpointURLs(t *testing.T) {
	forEachStore(t, func(t *testing.T, open func(t *testing.T) paykit.Store) {
		is := is.New(t)
		e, k := webhookEnv(t, open, 5*time.Second)
		for _, c := range []struct {
			env, url string
			status   int
		}{
			{"live", "http://127.0.0.1:9/hook", 400},
			{"live", "https://127.0.0.1/hook", 400},
			{"live", "https://10.0.0.8/hook", 400},
			{"live", "https://localhost/hook", 400},
			{"live", "https://[::1]/hook", 400},
			{"test", "http://127.0.0.1:9/hook", 201},
			{"test", "ftp://127.0.0.1/hook", 400},
			{"test", "http://user:pass@127.0.0.1/hook", 400},
			{"test", "/relative", 400},
		} {
			r := e.do("POST", "/operator/merchants/"+k.merchantID+"/webhook_endpoints", map[string]any{"environment": c.env, "url": c.url}, bearer(e.opToken))
			if r.status != c.status {
				t.Errorf("%s %s: %d, want %d: %s", c.env, c.url, r.status, c.status, r.body)
			}
			if c.status == 400 {
				is.Equal(r.errorOf(t)["param"], "url")
			}
		}
		r := e.do("POST", "/operator/merchants/mch_unknown/webhook_endpoints", map[string]any{"environment": "test", "url": "http://127.0.0.1:9/"}, bearer(e.opToken))
		is.Equal(r.status, http.StatusNotFound)
		audit := e.do("GET", "/operator/audit_events?action=webhook_endpoint.create&merchant_id="+k.merchantID, nil, bearer(e.opToken)).json(t)["data"].([]any)
		is.Equal(len(audit), 1)
	})
}
