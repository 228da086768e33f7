package httpadapter_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx", to create the test database
	"github.com/prometheus/client_golang/prometheus"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/httpadapter"
	"github.com/paykit/paykit/internal/oapitest"
	"github.com/paykit/paykit/provider/sandbox"
	"github.com/paykit/paykit/store/memory"
	"github.com/paykit/paykit/store/sqlstore"
)

// Every HTTP test runs once per Store: memory, SQLite and PostgreSQL.

type backend struct {
	name string
	open func(t *testing.T) paykit.Store
}

var backends = []backend{
	{"memory", func(t *testing.T) paykit.Store { return memory.New() }},
	{"sqlite", func(t *testing.T) paykit.Store {
		return openSQL(t, "sqlite:"+filepath.Join(t.TempDir(), "paykit.db"))
	}},
	{"postgres", func(t *testing.T) paykit.Store { return openSQL(t, postgresURL(t)) }},
}

// forEachStore runs fn as a subtest per backend.
func forEachStore(t *testing.T, fn func(t *testing.T, open func(t *testing.T) paykit.Store)) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) { fn(t, b.open) })
	}
}

func openSQL(t *testing.T, dsn string) paykit.Store {
	t.Helper()
	ctx := context.Background()
	s, err := sqlstore.Open(ctx, dsn)
	if err != nil {
		t.Fatalf("open %s store: %v", strings.SplitN(dsn, ":", 2)[0], err)
	}
	t.Cleanup(func() { s.Close() })
	if err := s.Migrate(ctx); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	return s
}

// The PostgreSQL tests of one run share a fresh database, created on first
// use and dropped by TestMain. Tests keep apart by using their own
// merchants (ids are random).
var pg struct {
	once  sync.Once
	admin string // URL of the server's maintenance database
	url   string // URL of the test database
	name  string
	err   error
}

func postgresURL(t *testing.T) string {
	t.Helper()
	pg.once.Do(func() {
		pg.admin = os.Getenv("PAYKIT_TEST_POSTGRES_URL")
		if pg.admin == "" {
			pg.admin = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"
		}
		u, err := url.Parse(pg.admin)
		if err != nil {
			pg.err = err
			return
		}
		pg.name = fmt.Sprintf("paykit_httpadapter_%d", time.Now().UnixNano())
		db, err := sql.Open("pgx", pg.admin)
		if err != nil {
			pg.err = err
			return
		}
		defer db.Close()
		if _, err := db.Exec("CREATE DATABASE " + pg.name); err != nil {
			pg.err = fmt.Errorf("create database (set PAYKIT_TEST_POSTGRES_URL): %w", err)
			return
		}
		u.Path = "/" + pg.name
		pg.url = u.String()
	})
	if pg.err != nil {
		t.Fatalf("postgres: %v", pg.err)
	}
	return pg.url
}

func TestMain(m *testing.M) {
	code := m.Run()
	if pg.name != "" {
		if db, err := sql.Open("pgx", pg.admin); err == nil {
			if _, err := db.Exec("DROP DATABASE IF EXISTS " + pg.name + " WITH (FORCE)"); err != nil {
				fmt.Fprintln(os.Stderr, "drop test database:", err)
			}
			db.Close()
		}
	}
	os.Exit(code)
}

// spec is the validator of the embedded document, shared by all tests.
var spec = sync.OnceValue(func() *oapitest.Validator {
	return oapitest.New(&panicTB{}, httpadapter.OpenAPIDocument())
})

// panicTB lets a package-level value use oapitest.New: any failure panics.
type panicTB struct{ testing.TB }

func (panicTB) Helper()                           {}
func (panicTB) Fatalf(format string, args ...any) { panic(fmt.Sprintf(format, args...)) }

// env is one running server: the merchant API under /v1 and the operator
// API under /operator, as examples/server mounts them.
type env struct {
	t        *testing.T
	ctx      context.Context
	svc      *paykit.Service
	store    paykit.Store
	srv      *httptest.Server
	client   *http.Client // checks every response against the OpenAPI document
	logs     *syncBuffer
	registry *prometheus.Registry
	opToken  string
}

type envConfig struct {
	rateLimit float64
	now       func() time.Time
	extra     func(mux *http.ServeMux)
	routing   paykit.Routing             // default: no routes
	providers map[string]paykit.Provider // by the names routing uses
	// approvalThreshold holds payouts of at least this amount for an
	// operator (0: never).
	approvalThreshold int64
	// webhookTimeout bounds a webhook delivery attempt (0: the default).
	webhookTimeout time.Duration
	// server, when set, is the unstarted server to use (its address is
	// known before the env starts).
	server *httptest.Server
}

const operatorToken = "op-token-alice-0123456789"

// testSigningKey signs cursors and payer links in tests; a persistent
// Store refuses to start without one.
var testSigningKey = []byte("httpadapter-tests-signing-key-32")

func newEnv(t *testing.T, open func(t *testing.T) paykit.Store, cfg envConfig) *env {
	t.Helper()
	store := open(t)
	logs := &syncBuffer{}
	logger := slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	// The listener exists before the server starts, so the Service knows
	// its public URL (the base of next_action URLs).
	srv := cfg.server
	if srv == nil {
		srv = httptest.NewUnstartedServer(nil)
	}
	svc, err := paykit.New(paykit.Config{
		Store: store, Now: cfg.now, Logger: logger, Routing: cfg.routing, Providers: cfg.providers,
		PublicURL: "http://" + srv.Listener.Addr().String(), ApprovalThreshold: cfg.approvalThreshold,
		WebhookTimeout: cfg.webhookTimeout, SigningKey: testSigningKey, AccountKeys: paykit.RandomKeyring(),
	})
	if err != nil {
		srv.Close()
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	mux := http.NewServeMux()
	mux.Handle("/v1/", http.StripPrefix("/v1", httpadapter.NewMerchantAPI(svc, httpadapter.Options{
		Logger: logger, RateLimit: cfg.rateLimit, Registerer: reg,
	})))
	mux.Handle("/operator/", http.StripPrefix("/operator", httpadapter.NewOperatorAPI(svc, httpadapter.OperatorOptions{
		Tokens: map[string]string{"alice": operatorToken, "bob": "op-token-bob-9876543210"}, Logger: logger, Registerer: reg,
	})))
	mux.Handle("/providers/", http.StripPrefix("/providers", httpadapter.NewProviderCallbacks(svc, httpadapter.CallbackOptions{
		Logger: logger, Registerer: reg,
	})))
	if cfg.extra != nil {
		cfg.extra(mux)
	}
	srv.Config.Handler = mux
	srv.Start()
	t.Cleanup(srv.Close)
	return &env{
		t: t, ctx: context.Background(), svc: svc, store: store, srv: srv,
		client: spec().Client(t), logs: logs, registry: reg, opToken: operatorToken,
	}
}

// sandboxEnv is an env whose Service routes payments to the real sandbox
// PSP (on its own server, as a Provider's own host) through the sandbox
// adapter. The Service and the PSP share a manual clock.
type sandboxEnv struct {
	*env
	clock  *paykit.ManualClock
	psp    *sandbox.PSP
	pspURL string // the PSP's base URL: it must never reach a merchant
}

// Sandbox timings: the adapter gives up on a call after sandboxTimeout;
// the PSP holds a "timeout" request (amounts ending in 902 and 903) for 5s
// and settles asynchronous outcomes sandboxDelay after creation.
const (
	sandboxTimeout = 300 * time.Millisecond
	sandboxDelay   = 2 * time.Second
	sandboxAPIKey  = "psp-secret-for-tests"
)

func newSandboxEnv(t *testing.T, open func(t *testing.T) paykit.Store) *sandboxEnv {
	t.Helper()
	return newSandboxEnvConfig(t, open, envConfig{})
}

// newSandboxEnvConfig is newSandboxEnv with cfg's settings; its clock,
// routing and providers are the sandbox's.
func newSandboxEnvConfig(t *testing.T, open func(t *testing.T) paykit.Store, cfg envConfig) *sandboxEnv {
	t.Helper()
	clock := paykit.NewManualClock(time.Date(2026, 6, 1, 8, 0, 0, 0, time.UTC))
	pspSrv := httptest.NewUnstartedServer(nil)
	pspURL := "http://" + pspSrv.Listener.Addr().String()
	if cfg.server == nil {
		cfg.server = httptest.NewUnstartedServer(nil)
	}
	psp := sandbox.NewPSP(sandbox.PSPConfig{BaseURL: pspURL, APIKey: sandboxAPIKey, Delay: sandboxDelay, Hold: 5 * time.Second, Now: clock.Now,
		CallbackURL: "http://" + cfg.server.Listener.Addr().String() + "/providers/" + sandbox.Name + "/webhooks"})
	pspSrv.Config.Handler = psp
	pspSrv.Start()
	t.Cleanup(pspSrv.Close)
	prov := sandbox.New(sandbox.Config{BaseURL: pspURL, APIKey: sandboxAPIKey, Timeout: sandboxTimeout})
	cfg.now, cfg.routing, cfg.providers = clock.Now, sandbox.DefaultRouting(), map[string]paykit.Provider{sandbox.Name: prov}
	e := newEnv(t, open, cfg)
	return &sandboxEnv{env: e, clock: clock, psp: psp, pspURL: pspURL}
}

// drain runs the worker until nothing is due.
func (e *sandboxEnv) drain() {
	e.t.Helper()
	for range 20 {
		n, err := e.svc.ProcessDue(e.ctx)
		if err != nil {
			e.t.Fatal(err)
		}
		if n == 0 {
			return
		}
	}
	e.t.Fatal("the worker keeps finding due jobs")
}

// keys is an API key pair.
type keys struct {
	merchantID, keyID, public, secret string
}

// merchant creates a merchant with a key pair of env through the Service.
func (e *env) merchant(environment paykit.Environment) keys {
	e.t.Helper()
	m, err := e.svc.CreateMerchant(e.ctx, "test", "Kedai "+paykit.RandomID("m"))
	if err != nil {
		e.t.Fatal(err)
	}
	return e.keyFor(m.ID, environment)
}

func (e *env) keyFor(merchantID string, environment paykit.Environment) keys {
	e.t.Helper()
	k, err := e.svc.CreateAPIKey(e.ctx, "test", merchantID, environment)
	if err != nil {
		e.t.Fatal(err)
	}
	return keys{merchantID, k.ID, k.PublicKey, k.SecretKey}
}

// response is a received response with its body read.
type response struct {
	status int
	header http.Header
	body   []byte
}

// json decodes the body into a generic map.
func (r response) json(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("body %q: %v", r.body, err)
	}
	return m
}

// errorOf returns the error member of an error body.
func (r response) errorOf(t *testing.T) map[string]any {
	t.Helper()
	e, ok := r.json(t)["error"].(map[string]any)
	if !ok {
		t.Fatalf("no error in %s", r.body)
	}
	return e
}

type header func(h http.Header)

func basic(k keys) header {
	return func(h http.Header) { h.Set("Authorization", basicValue(k.public, k.secret)) }
}

func bearer(token string) header {
	return func(h http.Header) { h.Set("Authorization", "Bearer "+token) }
}

func withHeader(name, value string) header { return func(h http.Header) { h.Set(name, value) } }

func basicValue(user, pass string) string {
	r, _ := http.NewRequest("GET", "/", nil)
	r.SetBasicAuth(user, pass)
	return r.Header.Get("Authorization")
}

// do sends a request through the validating client. A non-nil body is
// sent as JSON unless a header sets another Content-Type.
func (e *env) do(method, path string, body any, headers ...header) response {
	e.t.Helper()
	r, err := e.send(method, path, body, headers...)
	if err != nil {
		e.t.Fatal(err)
	}
	return r
}

// send is do for any goroutine: it returns the error instead of failing.
func (e *env) send(method, path string, body any, headers ...header) (response, error) {
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case []byte:
		rd = bytes.NewReader(b)
	case string:
		rd = strings.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			return response{}, err
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, e.srv.URL+path, rd)
	if err != nil {
		return response{}, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for _, h := range headers {
		h(req.Header)
	}
	resp, err := e.client.Do(req)
	if err != nil {
		return response{}, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return response{}, err
	}
	return response{resp.StatusCode, resp.Header, raw}, nil
}

// syncBuffer is a goroutine-safe log sink.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// seed stores a payment intent directly.
func (e *env) seed(k keys, env paykit.Environment, id, ref string, status paykit.PaymentStatus, created time.Time) *paykit.PaymentIntent {
	e.t.Helper()
	created = created.UTC().Truncate(time.Millisecond)
	pi := &paykit.PaymentIntent{
		ID: id, MerchantID: k.merchantID, Environment: env, Status: status,
		Amount: 12_345, Currency: "MYR", Country: "MY", MerchantReference: ref, PaymentMethod: "FPX",
		Customer:  map[string]string{"name": "Aisyah", "email": "a@example.com"},
		ExpiresAt: created.Add(30 * time.Minute), CreatedAt: created, UpdatedAt: created,
	}
	if status == paykit.PaymentRequiresAction {
		pi.NextAction = &paykit.NextAction{Type: paykit.NextActionRedirectToURL, URL: "http://127.0.0.1/pay/continue/" + id, ExpiresAt: pi.ExpiresAt}
	}
	if status == paykit.PaymentSucceeded {
		done := created.Add(time.Minute)
		pi.CompletedAt = &done
		pi.Receipt = &paykit.Receipt{Number: "R-" + id, PaidAt: done, Amount: pi.Amount, Currency: pi.Currency, PaymentMethod: pi.PaymentMethod}
	}
	if status == paykit.PaymentFailed {
		pi.FailureCode = paykit.FailureProviderDeclined
	}
	if err := e.store.CreatePaymentIntent(e.ctx, pi); err != nil {
		e.t.Fatal(err)
	}
	return pi
}
