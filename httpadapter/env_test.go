package httpadapter_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx", to create the test database
	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/httpadapter"
	"github.com/paykit/paykit/internal/adapterhooks"
	"github.com/paykit/paykit/internal/newid"
	"github.com/paykit/paykit/internal/oapitest"
	"github.com/paykit/paykit/internal/webhooks/send"
	"github.com/paykit/paykit/paykittest"
	"github.com/paykit/paykit/provider/sandbox"
)

// Every HTTP test runs on the memory Store, in parallel with the others.
// The tests about what differs per Store run on SQLite and PostgreSQL too;
// each test has a Store of its own (a schema of its own on PostgreSQL).

type backend struct {
	name string
	open func(t *testing.T) paykit.Store
}

func opener(kind paykittest.StoreKind) func(t *testing.T) paykit.Store {
	return func(t *testing.T) paykit.Store { return paykittest.OpenStore(t, kind) }
}

var backends = []backend{
	{"memory", opener(paykittest.Memory)},
	{"sqlite", opener(paykittest.SQLite)},
	{"postgres", opener(paykittest.Postgres)},
}

// onMemory is the Store of tests whose behaviour does not depend on it.
var onMemory = backends[0].open

// everyStore names the tests that forEachStore runs on every Store: what
// the SQL Stores do differently from memory. True: the test races
// requests against the Store's locking, so its subtests run one at a time
// and alone (before the parallel tests), as contention from other tests
// would make SQLite's lock waits time out.
var everyStore = map[string]bool{
	// Text and time as each database stores them.
	"TestBadTextIsRefusedOnEveryRoute":  false,
	"TestBadTextPayerPagesAndCallbacks": false,
	"TestTimestampsOutOfRange":          false,
	"TestGetPaymentIntentProjection":    false,
	// Replays and events rendered from the Store's snapshots.
	"TestCreatePaymentIntent": false,
	"TestPaymentEvents":       false,
	// Queries cancelled when the client goes away.
	"TestClientDisconnectIsNotAnInternalError": false,
	// Listing queries: filters, order, paging, tenant scoping.
	"TestListPaymentIntentsFiltersAndPaging":        false,
	"TestListCreatedPaymentIntents":                 false,
	"TestSameMillisecondIntentsListInCreationOrder": false,
	"TestTenantScoping":                             false,
	"TestPaymentIntentTenantIsolation":              false,
	"TestCheckoutGetAndListScoped":                  false,
	"TestPayoutReadsAndLists":                       false,
	"TestOperatorListMerchants":                     false,
	"TestOperatorListJobs":                          false,
	"TestStuckPayoutIsVisible":                      false,
	"TestOperatorListJobStates":                     false,
	"TestStuckPayoutNeedsAttention":                 false,
	"TestWaitingPaymentIsNotRetrying":               false,
	"TestWebhookDelivery":                           false,
	"TestWebhookEndpointPauseAndResume":             false,
	"TestMerchantWebhookEndpoints":                  false,
	// The dashboard's scope: what a merchant's reads find.
	"TestDashboardActionsStayInScope":       false,
	"TestDashboardOpensOnTheActiveMerchant": false,
	"TestDashboardBalanceTransactions":      false,
	"TestDashboardDisputes":                 false,
	"TestDashboardBreakQueue":               false,
	"TestDashboardResolveBreak":             false,
	"TestDashboardPaymentOpenBreaks":        false,
	// Refunds: the ledger, the payment's refundable share, lists.
	"TestRefundProjectionAndLedger": false,
	"TestRefundRejections":          false,
	"TestRefundSandboxOutcomes":     false,
	// Money as the Provider holds it: fees, settlement, balance
	// transactions, disputes.
	"TestFeesPendingAndSettlementOverHTTP":     false,
	"TestSettlementFeeMismatchAndNeverSettled": false,
	"TestBalanceTransactionsListOverHTTP":      false,
	"TestDisputeTestHelperOverHTTP":            false,
	"TestDisputeEvidenceOverHTTP":              false,
	"TestDisputeEventsAndWebhooks":             false,
	"TestListDisputesOverHTTP":                 false,
	"TestReconciliationOverHTTP":               false,
	"TestRefundAfterDisputeClosed":             false,
	"TestDisputeDecidedWithoutCallbacks":       false,
	// Telemetry: transactions' spans per Store.
	"TestTracePaymentWithRecoveryAndWebhook": false,
	// Concurrency and locking.
	"TestConcurrentIdenticalCreates":          true,
	"TestConcurrentCreatesOfOneReference":     true,
	"TestCreateWhileTheFirstRequestRuns":      true,
	"TestConcurrentPayoutsOverHTTP":           true,
	"TestCallbackRacesRecovery":               true,
	"TestCancelWhileProviderSettles":          true,
	"TestConcurrentRefundsOverHTTP":           true,
	"TestConcurrentRefundsAndDisputeOverHTTP": true,
	"TestConcurrentDisputeResponsesOverHTTP":  true,
}

// forEachStore runs fn as a subtest on the memory Store, in parallel with
// other tests, or per Store when everyStore names the test.
func forEachStore(t *testing.T, fn func(t *testing.T, open func(t *testing.T) paykit.Store)) {
	alone, every := everyStore[t.Name()]
	if !alone {
		t.Parallel()
	}
	for _, b := range backends {
		if b.name != "memory" && !every {
			continue
		}
		t.Run(b.name, func(t *testing.T) {
			if !alone {
				t.Parallel()
			}
			fn(t, b.open)
		})
	}
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
	logs     *paykittest.LogBuffer
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
	// webhookSender, when set, delivers webhooks instead of the Service's.
	webhookSender send.Sender
	// providerTimeout bounds the sandbox adapter's calls (0: the tests'
	// short paykittest.ProviderTimeout). Tests that race many requests,
	// and are not about timeouts, give the PSP longer on a loaded machine.
	providerTimeout time.Duration
	// server, when set, is the unstarted server to use (its address is
	// known before the env starts).
	server *httptest.Server
	// tracerProvider and meterProvider, when set, are the Service's.
	tracerProvider trace.TracerProvider
	meterProvider  metric.MeterProvider
	// webhookTraceContext: webhook requests carry a traceparent.
	webhookTraceContext bool
}

const operatorToken = "op-token-alice-0123456789"

// testSigningKey signs cursors and payer links in tests; a persistent
// Store refuses to start without one.
var testSigningKey = []byte("httpadapter-tests-signing-key-32")

func newEnv(t *testing.T, open func(t *testing.T) paykit.Store, cfg envConfig) *env {
	t.Helper()
	return newPaykitEnv(t, open, cfg, false).env
}

// newPaykitEnv starts a paykittest Env on open's Store with the APIs of
// httpadapter mounted on its Service. With withSandbox, the Service routes
// payments to the Env's sandbox PSP (on its own server, as a Provider's own
// host), which calls back through httpadapter, and Service and PSP share a
// manual clock; without, routing, providers and clock are cfg's.
func newPaykitEnv(t *testing.T, open func(t *testing.T) paykit.Store, cfg envConfig, withSandbox bool) *sandboxEnv {
	t.Helper()
	logs := &paykittest.LogBuffer{}
	logger := slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	// The listener exists before the server starts, so the Service knows
	// its public URL (the base of next_action URLs).
	srv := cfg.server
	if srv == nil {
		srv = httptest.NewUnstartedServer(nil)
	}
	base := "http://" + srv.Listener.Addr().String()
	pe := paykittest.New(t,
		paykittest.WithProviderConfig(func(c *sandbox.Config) {
			if cfg.providerTimeout > 0 {
				c.Timeout = cfg.providerTimeout
			}
		}),
		paykittest.WithStoreFunc(func(paykittest.T) paykit.Store { return open(t) }),
		paykittest.WithCallbackURL(base+"/providers/"+sandbox.Name+"/webhooks"),
		paykittest.WithPSPConfig(func(c *sandbox.PSPConfig) { c.APIKey, c.TracerProvider = sandboxAPIKey, cfg.tracerProvider }),
		paykittest.WithConfig(func(c *paykit.Config) {
			c.Logger, c.PublicURL, c.SigningKey = logger, base, testSigningKey
			c.ApprovalThreshold, c.WebhookTimeout = cfg.approvalThreshold, cfg.webhookTimeout
			c.TracerProvider, c.MeterProvider, c.WebhookTraceContext = cfg.tracerProvider, cfg.meterProvider, cfg.webhookTraceContext
			if !withSandbox {
				c.Now, c.Routing, c.Providers = cfg.now, cfg.routing, cfg.providers
			}
		}),
	)
	if cfg.webhookSender != nil {
		adapterhooks.SetWebhookSender(pe.Service, cfg.webhookSender)
	}
	reg := prometheus.NewRegistry()
	mux := http.NewServeMux()
	mux.Handle("/v1/", http.StripPrefix("/v1", httpadapter.NewMerchantAPI(pe.Service, httpadapter.Options{
		Logger: logger, RateLimit: cfg.rateLimit, Registerer: reg,
	})))
	mux.Handle("/operator/", http.StripPrefix("/operator", httpadapter.NewOperatorAPI(pe.Service, httpadapter.OperatorOptions{
		Tokens: map[string]string{"alice": operatorToken, "bob": "op-token-bob-9876543210"}, Logger: logger, Registerer: reg,
	})))
	mux.Handle("/providers/", http.StripPrefix("/providers", httpadapter.NewProviderCallbacks(pe.Service, httpadapter.CallbackOptions{
		Logger: logger, Registerer: reg,
	})))
	if cfg.extra != nil {
		cfg.extra(mux)
	}
	srv.Config.Handler = mux
	srv.Start()
	t.Cleanup(srv.Close)
	e := &env{
		t: t, ctx: context.Background(), svc: pe.Service, store: pe.Store, srv: srv,
		client: spec().Client(t), logs: logs, registry: reg, opToken: operatorToken,
	}
	return &sandboxEnv{env: e, pk: pe, clock: pe.Clock, psp: pe.PSP, pspURL: pe.PSPURL}
}

// sandboxEnv is an env whose Service routes payments to the real sandbox
// PSP through the sandbox adapter.
type sandboxEnv struct {
	*env
	pk     *paykittest.Env
	clock  *paykit.ManualClock
	psp    *sandbox.PSP
	pspURL string // the PSP's base URL: it must never reach a merchant
}

// Sandbox timings: the adapter gives up on a call after sandboxTimeout;
// the PSP holds a "timeout" request (amounts ending in 902 and 903) for 5s
// and settles asynchronous outcomes sandboxDelay after creation.
const (
	sandboxTimeout = paykittest.ProviderTimeout
	sandboxDelay   = paykittest.PSPDelay
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
	return newPaykitEnv(t, open, cfg, true)
}

// drain runs the worker until nothing is due.
func (e *sandboxEnv) drain() {
	e.t.Helper()
	e.pk.Drain(e.ctx)
}

// keys is an API key pair.
type keys struct {
	merchantID, keyID, public, secret string
}

// merchant creates a merchant with a key pair of env through the Service.
func (e *env) merchant(environment paykit.Environment) keys {
	e.t.Helper()
	m, err := e.svc.CreateMerchant(e.ctx, "test", "Kedai "+newid.Random("m"))
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
