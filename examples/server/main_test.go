package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/paykittest"
	"github.com/paykit/paykit/store/memory"
)

// server is a run of the example server in-process.
type server struct {
	url, token, merchant, public, secret string
	printed                              map[string]string // stdout, by label
	stderr                               *paykittest.LogBuffer
	stop                                 func() error
}

// start runs the server with args and reads what it prints.
func start(t *testing.T, args ...string) *server {
	t.Helper()
	return startEnv(t, nil, args...)
}

// startEnv is start with the environment vars.
func startEnv(t *testing.T, vars map[string]string, args ...string) *server {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	out, pw := io.Pipe()
	s := &server{stderr: &paykittest.LogBuffer{}}
	done := make(chan error, 1)
	go func() {
		err := run(ctx, args, func(k string) string { return vars[k] }, pw, s.stderr)
		pw.Close()
		done <- err
	}()
	var once sync.Once
	var stopErr error
	s.stop = func() error {
		once.Do(func() {
			cancel()
			select {
			case stopErr = <-done:
			case <-time.After(20 * time.Second):
				stopErr = errors.New("server did not stop")
			}
		})
		return stopErr
	}
	t.Cleanup(func() { _ = s.stop() })

	// The server prints its URL, the operator token unless it was given,
	// and the demo merchant's id and keys.
	lines := 5
	for i, a := range args {
		if a == "-operator-token" && i+1 < len(args) {
			lines, s.token = lines-1, args[i+1]
		}
		if a == "-pprof-addr" {
			lines++
		}
	}
	printed := map[string]string{}
	sc := bufio.NewScanner(out)
	for len(printed) < lines && sc.Scan() {
		label, value, _ := strings.Cut(sc.Text(), ":")
		if rest, ok := strings.CutPrefix(sc.Text(), "paykit listening on "); ok {
			label, value = "url", rest
		}
		if rest, ok := strings.CutPrefix(sc.Text(), "pprof listening on "); ok {
			label, value = "pprof", rest
		}
		printed[label] = strings.TrimSpace(value)
	}
	if len(printed) < lines {
		t.Fatalf("server printed %v; stderr:\n%s", printed, s.stderr.String())
	}
	go io.Copy(io.Discard, out) //nolint:errcheck // nothing more is expected
	if tok, ok := printed["operator token"]; ok {
		s.token = tok
	}
	s.url, s.merchant, s.printed = printed["url"], printed["demo merchant"], printed
	s.public, s.secret = printed["test public key"], printed["test secret key"]
	return s
}

// call sends a request and returns status, headers and body.
func call(t *testing.T, method, url, body string, set func(r *http.Request)) (int, http.Header, []byte) {
	t.Helper()
	return callWith(t, http.DefaultClient, method, url, body, set)
}

// callWith is call through client.
func callWith(t *testing.T, client *http.Client, method, url, body string, set func(r *http.Request)) (int, http.Header, []byte) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if set != nil {
		set(req)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, b
}

func basicAuth(pk, sk string) func(*http.Request) {
	return func(r *http.Request) { r.SetBasicAuth(pk, sk) }
}

func bearerAuth(token string) func(*http.Request) {
	return func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+token) }
}

func TestServerEndToEnd(t *testing.T) {
	is := is.New(t)
	s := start(t, "-db", "memory", "-addr", "127.0.0.1:0", "-worker-interval", "50ms")

	u, err := url.Parse(s.url)
	is.NoErr(err)
	is.Equal(u.Hostname(), "127.0.0.1")
	is.True(u.Port() != "" && u.Port() != "0") // the real port
	is.Equal(s.merchant, "mch_demo")
	is.True(strings.HasPrefix(s.public, "pk_test_"))
	is.True(strings.HasPrefix(s.secret, "sk_test_"))
	is.True(len(s.token) >= 32)

	// The demo keys work.
	status, h, body := call(t, "GET", s.url+"/v1/payment_intents", "", basicAuth(s.public, s.secret))
	is.Equal(status, http.StatusOK)
	is.Equal(string(body), `{"object":"list","data":[],"has_more":false,"next_cursor":null}`+"\n")
	is.True(strings.HasPrefix(h.Get("Request-Id"), "req_"))

	// No credentials: 401 with the challenge.
	status, h, body = call(t, "GET", s.url+"/v1/payment_intents", "", nil)
	is.Equal(status, http.StatusUnauthorized)
	is.Equal(h.Get("WWW-Authenticate"), `Basic realm="paykit"`)
	var e struct {
		Error struct {
			Code      string `json:"code"`
			RequestID string `json:"request_id"`
		} `json:"error"`
	}
	is.NoErr(json.Unmarshal(body, &e))
	is.Equal(e.Error.Code, "unauthorized")
	is.Equal(e.Error.RequestID, h.Get("Request-Id"))

	// The operator creates a merchant and a key, which then authenticates.
	status, _, body = call(t, "POST", s.url+"/operator/merchants", `{"name":"Kedai Kopi"}`, bearerAuth(s.token))
	is.Equal(status, http.StatusCreated)
	var m struct{ ID string }
	is.NoErr(json.Unmarshal(body, &m))
	status, _, body = call(t, "POST", s.url+"/operator/merchants/"+m.ID+"/api_keys", `{"environment":"test"}`, bearerAuth(s.token))
	is.Equal(status, http.StatusCreated)
	var k struct {
		PublicKey string `json:"public_key"`
		SecretKey string `json:"secret_key"`
	}
	is.NoErr(json.Unmarshal(body, &k))
	status, _, _ = call(t, "GET", s.url+"/v1/payment_intents", "", basicAuth(k.PublicKey, k.SecretKey))
	is.Equal(status, http.StatusOK)
	status, h, _ = call(t, "GET", s.url+"/operator/audit_events", "", bearerAuth("wrong-token-0123456789"))
	is.Equal(status, http.StatusUnauthorized)
	is.Equal(h.Get("WWW-Authenticate"), `Bearer realm="paykit-operator"`)

	// The OpenAPI document, health and metrics.
	status, _, body = call(t, "GET", s.url+"/v1/openapi.json", "", nil)
	is.Equal(status, http.StatusOK)
	is.True(bytes.Contains(body, []byte(`"openapi": "3.1.0"`)))
	status, _, body = call(t, "GET", s.url+"/healthz", "", nil)
	is.Equal(status, http.StatusOK)
	is.Equal(string(body), `{"status":"ok"}`+"\n")
	status, _, body = call(t, "GET", s.url+"/metrics", "", nil)
	is.Equal(status, http.StatusOK)
	metrics := string(body)
	is.True(strings.Contains(metrics, `paykit_http_requests_total{api="merchant",route="GET /payment_intents",status="200"} 2`))
	is.True(strings.Contains(metrics, `paykit_http_requests_total{api="operator",route="POST /merchants",status="201"} 1`))
	is.True(strings.Contains(metrics, "go_goroutines "))
	is.True(strings.Contains(metrics, "process_start_time_seconds "))

	// Secrets stay out of the log.
	is.NoErr(s.stop())
	logs := s.stderr.String()
	is.True(strings.Contains(logs, "http request"))
	for _, secret := range []string{s.secret, k.SecretKey, s.token} {
		is.True(!strings.Contains(logs, secret))
	}
}

func TestDemoMerchantSurvivesRestart(t *testing.T) {
	is := is.New(t)
	db := "sqlite:" + filepath.Join(t.TempDir(), "paykit.db")
	first := start(t, "-db", db, "-addr", "127.0.0.1:0", "-operator-token", "fixed-operator-token-123")
	is.Equal(first.token, "fixed-operator-token-123")
	is.NoErr(first.stop())

	second := start(t, "-db", db, "-addr", "127.0.0.1:0", "-operator-token", "fixed-operator-token-123")
	is.Equal(second.merchant, "mch_demo")
	is.True(second.public != first.public) // a fresh pair on every start
	for _, k := range [][2]string{{first.public, first.secret}, {second.public, second.secret}} {
		status, _, _ := call(t, "GET", second.url+"/v1/payment_intents", "", basicAuth(k[0], k[1]))
		is.Equal(status, http.StatusOK) // old keys stay valid
	}
	// One merchant, created once, with two keys.
	status, _, body := call(t, "GET", second.url+"/operator/merchants/mch_demo/api_keys", "", bearerAuth(second.token))
	is.Equal(status, http.StatusOK)
	var keys struct{ Data []json.RawMessage }
	is.NoErr(json.Unmarshal(body, &keys))
	is.Equal(len(keys.Data), 2)
	status, _, body = call(t, "GET", second.url+"/operator/audit_events?merchant_id=mch_demo&action=merchant.create", "", bearerAuth(second.token))
	is.Equal(status, http.StatusOK)
	var events struct{ Data []struct{ Actor string } }
	is.NoErr(json.Unmarshal(body, &events))
	is.Equal(len(events.Data), 1)
	is.Equal(events.Data[0].Actor, "examples/server")
}

func TestNoDemo(t *testing.T) {
	is := is.New(t)
	ctx, cancel := context.WithCancel(context.Background())
	var stdout, stderr paykittest.LogBuffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"-db", "memory", "-addr", "127.0.0.1:0"}, func(name string) string {
			return map[string]string{"PAYKIT_DEMO": "false"}[name]
		}, &stdout, &stderr)
	}()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(stdout.String(), "operator token:") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	is.NoErr(<-done)
	is.True(strings.Contains(stdout.String(), "paykit listening on http://127.0.0.1:"))
	is.True(!strings.Contains(stdout.String(), "demo merchant"))
}

func TestRunFailsCleanly(t *testing.T) {
	is := is.New(t)
	noEnv := func(string) string { return "" }
	err := run(context.Background(), []string{"-db", "mysql://x"}, noEnv, io.Discard, io.Discard)
	is.True(err != nil && strings.Contains(err.Error(), "-db"))
	err = run(context.Background(), []string{"-db", "memory", "-addr", "256.0.0.1:99999"}, noEnv, io.Discard, io.Discard)
	is.True(err != nil)
	err = run(context.Background(), []string{"-h"}, noEnv, io.Discard, io.Discard)
	is.True(errors.Is(err, flag.ErrHelp))
}

// readOnlyStore is a Store that answers reads but refuses writes.
type readOnlyStore struct{ paykit.Store }

func (readOnlyStore) Heartbeat(context.Context, string, time.Time) error {
	return errors.New("attempt to write a readonly database")
}

func TestHealthz(t *testing.T) {
	is := is.New(t)
	for _, c := range []struct {
		store  paykit.Store
		status int
		body   string
	}{
		{memory.New(), 200, `{"status":"ok"}`},
		{readOnlyStore{memory.New()}, 503, `{"status":"unavailable"}`},
	} {
		svc, err := paykit.New(paykit.Config{Store: c.store})
		is.NoErr(err)
		rec := httptest.NewRecorder()
		healthz(svc, discardLogger()).ServeHTTP(rec, httptest.NewRequest("GET", "/healthz", nil))
		is.Equal(rec.Code, c.status)
		is.Equal(strings.TrimSpace(rec.Body.String()), c.body)
	}
}

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

// browser is the payer's browser: it shows redirects instead of following
// them, so that each hop can be checked.
var browser = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// visit sends a request as the payer's browser and returns status,
// headers and body.
func visit(t *testing.T, method, rawURL string) (int, http.Header, string) {
	t.Helper()
	status, h, b := callWith(t, browser, method, rawURL, "", nil)
	return status, h, string(b)
}

// createPayout creates a 2,500.00 THB KBANK payout with the demo keys
// under ref (its merchant reference and Idempotency-Key) and returns its id
// and status.
func (s *server) createPayout(t *testing.T, ref string) (id, status string) {
	t.Helper()
	code, _, body := call(t, "POST", s.url+"/v1/payout_intents", `{"amount":"250000","currency":"THB","country":"TH",
		"merchant_reference":"`+ref+`","recipient":{"type":"bank_account","account_number":"123456789012","bank_code":"KBANK",
		"holder_name":"Somchai Jaidee","holder_name_th":"สมชาย ใจดี"}}`, func(r *http.Request) {
		r.SetBasicAuth(s.public, s.secret)
		r.Header.Set("Idempotency-Key", ref)
	})
	if code != http.StatusCreated {
		t.Fatalf("create payout %s: %d %s", ref, code, body)
	}
	var po struct{ ID, Status string }
	if err := json.Unmarshal(body, &po); err != nil {
		t.Fatal(err)
	}
	return po.ID, po.Status
}

// createPayment creates a payment intent with the demo keys and returns
// its projection.
func (s *server) createPayment(t *testing.T, key, body string) map[string]any {
	t.Helper()
	status, _, raw := call(t, "POST", s.url+"/v1/payment_intents", body, func(r *http.Request) {
		r.SetBasicAuth(s.public, s.secret)
		r.Header.Set("Idempotency-Key", key)
	})
	if status != http.StatusCreated {
		t.Fatalf("create payment: %d %s", status, raw)
	}
	var pi map[string]any
	if err := json.Unmarshal(raw, &pi); err != nil {
		t.Fatal(err)
	}
	return pi
}

// waitForStatus polls the intent until it has status want.
func (s *server) waitForStatus(t *testing.T, id, want string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		_, _, raw := call(t, "GET", s.url+"/v1/payment_intents/"+id, "", basicAuth(s.public, s.secret))
		var pi struct{ Status string }
		if err := json.Unmarshal(raw, &pi); err != nil {
			t.Fatal(err)
		}
		if pi.Status == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("payment %s is %s, want %s", id, pi.Status, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// approveForm is the Approve form of the sandbox PSP's payer page.
var approveForm = regexp.MustCompile(`<form method="post" action="([^"]*/approve)"`)

// TestServerPaymentFlow walks a payer through an FPX payment over real
// HTTP: the merchant creates it, the payer follows next_action.url to the
// sandbox PSP's page, approves, comes back through /pay/return and sees
// the result, and the merchant reads it succeeded.
func TestServerPaymentFlow(t *testing.T) {
	is := is.New(t)
	s := start(t, "-db", "memory", "-addr", "127.0.0.1:0", "-worker-interval", "50ms", "-sandbox-delay", "100ms")

	pi := s.createPayment(t, "flow-1", `{"amount":"15000","currency":"MYR","country":"MY","merchant_reference":"order-flow-1",
		"payment_method":"FPX","customer":{"name":"Aisyah Rahman","email":"aisyah@example.com"},"payment_method_options":{"bank":"MAYBANK"}}`)
	is.Equal(pi["status"], "requires_action")
	id := pi["id"].(string)
	next := pi["next_action"].(map[string]any)["url"].(string)
	is.True(strings.HasPrefix(next, s.url+"/pay/continue/")) // the service's continuation, not the PSP's page

	status, h, _ := visit(t, "GET", next)
	is.Equal(status, http.StatusSeeOther)
	is.Equal(h.Get("Referrer-Policy"), "no-referrer")
	page := h.Get("Location")
	is.True(strings.HasPrefix(page, s.url+"/sandbox/pay/")) // the sandbox PSP's payer page

	status, _, body := visit(t, "GET", page)
	is.Equal(status, http.StatusOK)
	is.True(strings.Contains(body, "MYR 150.00"))
	m := approveForm.FindStringSubmatch(body)
	is.True(m != nil)
	pageURL, err := url.Parse(page)
	is.NoErr(err)
	approve, err := pageURL.Parse(m[1])
	is.NoErr(err)
	status, h, _ = visit(t, "POST", approve.String())
	is.Equal(status, http.StatusSeeOther)
	back := h.Get("Location")
	is.True(strings.HasPrefix(back, s.url+"/pay/return/"))

	// No return_url: the result page, which refreshes itself until final.
	deadline := time.Now().Add(15 * time.Second)
	for {
		status, h, body = visit(t, "GET", back)
		is.Equal(status, http.StatusOK)
		is.True(strings.Contains(h.Get("Content-Security-Policy"), "default-src 'none'"))
		if !strings.Contains(body, `http-equiv="refresh"`) {
			break
		}
		is.True(time.Now().Before(deadline))
		time.Sleep(100 * time.Millisecond) // a browser waits 2 s
	}
	is.True(strings.Contains(body, "Payment successful"))
	is.True(strings.Contains(body, "MYR 150.00"))
	s.waitForStatus(t, id, "succeeded")

	// A timeout magic amount answers processing after the adapter's
	// timeout, and recovery finds it succeeded.
	began := time.Now()
	pi = s.createPayment(t, "flow-902", `{"amount":"10902","currency":"MYR","country":"MY","merchant_reference":"order-flow-902",
		"payment_method":"TNG","customer":{"name":"Aisyah Rahman"}}`)
	is.Equal(pi["status"], "processing")
	took := time.Since(began)
	is.True(took >= 2*time.Second && took < 8*time.Second) // about sandboxTimeout
	s.waitForStatus(t, pi["id"].(string), "succeeded")

	// A QR method: the image link loads without credentials.
	pi = s.createPayment(t, "flow-qr", `{"amount":"2500","currency":"THB","country":"TH","merchant_reference":"order-flow-qr",
		"payment_method":"PROMPTPAY","customer":{"name":"Somchai"}}`)
	na := pi["next_action"].(map[string]any)
	is.Equal(na["type"], "display_qr_code")
	status, h, body = visit(t, "GET", na["image_url"].(string))
	is.Equal(status, http.StatusOK)
	is.Equal(h.Get("Content-Type"), "image/png")
	is.True(strings.HasPrefix(body, "\x89PNG"))
}

// The operator token is printed only when the server drew it: a token
// given on the command line or in the environment is never echoed.
func TestOperatorTokenPrintedOnlyWhenGenerated(t *testing.T) {
	is := is.New(t)
	given := start(t, "-db", "memory", "-addr", "127.0.0.1:0", "-operator-token", "given-operator-token-456")
	_, printed := given.printed["operator token"]
	is.True(!printed)
	is.True(!strings.Contains(given.stderr.String(), "given-operator-token-456"))
	status, _, _ := call(t, "GET", given.url+"/operator/audit_events", "", bearerAuth("given-operator-token-456"))
	is.Equal(status, http.StatusOK)
	is.NoErr(given.stop())

	drawn := start(t, "-db", "memory", "-addr", "127.0.0.1:0")
	is.True(len(drawn.printed["operator token"]) >= 16)
	status, _, _ = call(t, "GET", drawn.url+"/operator/audit_events", "", bearerAuth(drawn.token))
	is.Equal(status, http.StatusOK)
}

func TestPprofListener(t *testing.T) {
	is := is.New(t)
	s := start(t, "-db", "memory", "-addr", "127.0.0.1:0", "-pprof-addr", "127.0.0.1:0")
	base := s.printed["pprof"]
	is.True(strings.HasPrefix(base, "http://127.0.0.1:"))
	status, _, body := call(t, http.MethodGet, base+"goroutine?debug=1", "", nil)
	is.Equal(status, http.StatusOK)
	is.True(strings.Contains(string(body), "goroutine profile"))
	// Not on the API listener.
	status, _, _ = call(t, http.MethodGet, s.url+"/debug/pprof/", "", nil)
	is.True(status != http.StatusOK)
	is.NoErr(s.stop())
}
