// Package paykittest gives a host's tests, and paykit's own, a running
// paykit in one call: a Service on a chosen Store (memory, SQLite in a
// temporary directory, or PostgreSQL on a schema of its own), the sandbox
// PSP on a real loopback HTTP server with PSP callbacks reaching the
// Service, a ManualClock both share, a merchant with test API keys, a
// worker to drain, and a payer to act at the sandbox.
//
// Everything New starts is stopped, and everything it creates is removed,
// when the test ends. Envs share no state, so tests using them may call
// t.Parallel.
package paykittest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" database/sql driver

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/internal/newid"
	"github.com/paykit/paykit/internal/pgtest"
	"github.com/paykit/paykit/internal/sqlitetest"
	"github.com/paykit/paykit/keyring"
	"github.com/paykit/paykit/provider/sandbox"
	"github.com/paykit/paykit/store/memory"
	"github.com/paykit/paykit/store/sqlstore"
)

// StoreKind names a Store New can open.
type StoreKind string

// The Stores New can open.
const (
	// Memory is store/memory: fast, and the default.
	Memory StoreKind = "memory"
	// SQLite is store/sqlstore on a SQLite file in t.TempDir().
	SQLite StoreKind = "sqlite"
	// Postgres is store/sqlstore on a fresh schema of the PostgreSQL
	// server at $PAYKIT_TEST_POSTGRES_URL (default DefaultPostgresURL),
	// dropped when the test ends.
	Postgres StoreKind = "postgres"
)

// Stores lists every StoreKind, memory first.
var Stores = []StoreKind{Memory, SQLite, Postgres}

// DefaultPostgresURL is the server used when PAYKIT_TEST_POSTGRES_URL is
// unset.
const DefaultPostgresURL = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"

// Start is where every Env's clock starts.
var Start = time.Date(2026, 6, 1, 8, 0, 0, 0, time.UTC)

// Sandbox settings of every Env (a PSPConfig option may change the PSP's).
const (
	// PSPAPIKey is the PSP's API key; it also signs its callbacks.
	PSPAPIKey = "paykittest-psp-secret"
	// PSPDelay is how long the PSP takes to settle asynchronous outcomes
	// (on the Env's clock).
	PSPDelay = 2 * time.Second
	// PSPHold is how long the PSP holds a request of a "timeout" magic
	// value (in real time).
	PSPHold = 5 * time.Second
	// ProviderTimeout is how long the sandbox adapter waits for the PSP.
	ProviderTimeout = 300 * time.Millisecond
)

// SigningKey signs cursors and payer links of every Env's Service.
var SigningKey = []byte("paykittest-signing-key-32-bytes!")

// T is the part of testing.TB an Env uses: *testing.T, *testing.B and
// *testing.F are Ts.
type T interface {
	Helper()
	Errorf(format string, args ...any)
	Fatalf(format string, args ...any)
	Cleanup(func())
	TempDir() string
}

var _ T = testing.TB(nil)

// Option configures New.
type Option func(*options)

type options struct {
	kind        StoreKind
	open        func(t T) paykit.Store
	config      []func(*paykit.Config)
	psp         []func(*sandbox.PSPConfig)
	provider    []func(*sandbox.Config)
	callbackURL string
}

// WithStore opens a Store of kind.
func WithStore(kind StoreKind) Option { return func(o *options) { o.kind = kind } }

// WithStoreFunc uses the Store open returns (for instance a wrapper of
// OpenStore's that injects failures).
func WithStoreFunc(open func(t T) paykit.Store) Option {
	return func(o *options) { o.open = open }
}

// WithConfig lets fn change the Service's Config before New uses it.
func WithConfig(fn func(*paykit.Config)) Option {
	return func(o *options) { o.config = append(o.config, fn) }
}

// WithPSPConfig lets fn change the sandbox PSP's config.
func WithPSPConfig(fn func(*sandbox.PSPConfig)) Option {
	return func(o *options) { o.psp = append(o.psp, fn) }
}

// WithProviderConfig lets fn change the sandbox adapter's config (its
// Client, to put a transport of the test's between adapter and PSP).
func WithProviderConfig(fn func(*sandbox.Config)) Option {
	return func(o *options) { o.provider = append(o.provider, fn) }
}

// WithCallbackURL makes the PSP send its callbacks to url (for instance a
// host's own /providers/sandbox/webhooks route) instead of the Env's
// endpoint, which hands them to Service.HandleProviderCallback.
func WithCallbackURL(url string) Option { return func(o *options) { o.callbackURL = url } }

// Env is a running paykit for one test.
type Env struct {
	// Service runs on Store with Clock, routes with
	// sandbox.DefaultRouting, and has the sandbox adapter as its Provider
	// named sandbox.Name.
	Service *paykit.Service
	Store   paykit.Store
	Kind    StoreKind
	Clock   *paykit.ManualClock
	// PSP is the sandbox PSP, served under PSPURL.
	PSP    *sandbox.PSP
	PSPURL string
	// Provider is the sandbox adapter the Service calls the PSP with.
	Provider *sandbox.Provider
	// Server serves the PSP under /sandbox/ and its callbacks to the
	// Service under /callbacks.
	Server *httptest.Server

	t        T
	pspDelay time.Duration
}

// New starts an Env on the memory Store unless an option says otherwise.
// It fails t when anything cannot be started.
func New(t T, opts ...Option) *Env {
	t.Helper()
	o := options{kind: Memory}
	for _, opt := range opts {
		opt(&o)
	}
	e := &Env{t: t, Kind: o.kind, Clock: paykit.NewManualClock(Start)}
	if o.open != nil {
		e.Store = o.open(t)
	} else {
		e.Store = OpenStore(t, o.kind)
	}

	e.Server = httptest.NewUnstartedServer(nil)
	base := "http://" + e.Server.Listener.Addr().String()
	e.PSPURL = base + "/sandbox"
	callbackURL := o.callbackURL
	if callbackURL == "" {
		callbackURL = base + "/callbacks"
	}
	pcfg := sandbox.PSPConfig{
		BaseURL: e.PSPURL, APIKey: PSPAPIKey, Delay: PSPDelay, Hold: PSPHold,
		Now: e.Clock.Now, CallbackURL: callbackURL,
	}
	for _, fn := range o.psp {
		fn(&pcfg)
	}
	e.PSP = sandbox.NewPSP(pcfg)
	switch e.pspDelay = pcfg.Delay; {
	case pcfg.Delay == 0:
		e.pspDelay = 2 * time.Second // the PSP's default
	case pcfg.Delay < 0:
		e.pspDelay = 0
	}
	acfg := sandbox.Config{BaseURL: e.PSPURL, APIKey: pcfg.APIKey, Timeout: ProviderTimeout}
	for _, fn := range o.provider {
		fn(&acfg)
	}
	e.Provider = sandbox.New(acfg)

	cfg := paykit.Config{
		Store: e.Store, Now: e.Clock.Now, Routing: sandbox.DefaultRouting(),
		Providers: map[string]paykit.Provider{sandbox.Name: e.Provider},
		PublicURL: base, SigningKey: SigningKey, AccountKeys: keyring.Random(),
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	for _, fn := range o.config {
		fn(&cfg)
	}
	svc, err := paykit.New(cfg)
	if err != nil {
		e.Server.Close()
		t.Fatalf("paykittest: %v", err)
	}
	e.Service = svc

	mux := http.NewServeMux()
	mux.Handle("/sandbox/", http.StripPrefix("/sandbox", e.PSP))
	mux.HandleFunc("POST /callbacks", func(w http.ResponseWriter, r *http.Request) {
		if err := svc.HandleProviderCallback(r.Context(), sandbox.Name, r); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
		}
	})
	e.Server.Config.Handler = mux
	e.Server.Start()
	t.Cleanup(e.Server.Close)
	return e
}

// OpenStore opens a fresh, migrated Store of kind, closed (and on
// PostgreSQL dropped) when the test ends.
func OpenStore(t T, kind StoreKind) paykit.Store {
	t.Helper()
	switch kind {
	case Memory, "":
		return memory.New()
	case SQLite, Postgres:
		return OpenSQL(t, MigratedDSN(t, kind))
	}
	t.Fatalf("paykittest: unknown store %q", kind)
	return nil
}

// MigratedDSN returns the DSN of a new SQLite file or PostgreSQL database
// (kind) with paykit's schema in place, removed when the test ends. It is
// a copy of a template migrated once (per schema, shared by test
// processes), which is much cheaper than migrating every test's database.
func MigratedDSN(t T, kind StoreKind) string {
	t.Helper()
	digest := sqlstore.SchemaDigest()
	switch kind {
	case SQLite:
		return "sqlite:" + sqlitetest.Migrated(t, digest, func(path string) error { return migrateAt("sqlite:" + path) })
	case Postgres:
		return pgtest.Migrated(t, digest, migrateAt)
	}
	t.Fatalf("paykittest: no SQL Store %q", kind)
	return ""
}

// migrateAt migrates the database at dsn and closes it.
func migrateAt(dsn string) error {
	ctx := context.Background()
	s, err := sqlstore.Open(ctx, dsn)
	if err != nil {
		return err
	}
	if err := s.Migrate(ctx); err != nil {
		s.Close()
		return err
	}
	return s.Close()
}

// OpenSQL opens and migrates the SQL Store at dsn, closed when the test
// ends.
func OpenSQL(t T, dsn string) *sqlstore.Store {
	t.Helper()
	ctx := context.Background()
	s, err := sqlstore.Open(ctx, dsn)
	if err != nil {
		t.Fatalf("paykittest: open %s: %v", strings.SplitN(dsn, ":", 2)[0], err)
	}
	t.Cleanup(func() { _ = s.Close() })
	if err := s.Migrate(ctx); err != nil {
		t.Fatalf("paykittest: migrate: %v", err)
	}
	return s
}

// SQLiteDSN is the DSN of a new SQLite file in t.TempDir().
func SQLiteDSN(t T) string {
	return "sqlite:" + filepath.Join(t.TempDir(), "paykit.db")
}

// PostgresDSN creates a schema with a random name on the PostgreSQL
// server, drops it when the test ends, and returns a URL whose connections
// use only that schema. Advisory locks (Migrate's) are shared by the whole
// database, so schemas of parallel tests migrate one after the other.
func PostgresDSN(t T) string {
	t.Helper()
	base := os.Getenv("PAYKIT_TEST_POSTGRES_URL")
	if base == "" {
		base = DefaultPostgresURL
	}
	admin, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatalf("paykittest: %v", err)
	}
	name := "paykittest_" + strings.ToLower(rand.Text()[:12])
	if _, err := admin.Exec("CREATE SCHEMA " + name); err != nil {
		admin.Close()
		t.Fatalf("paykittest: create schema (is PostgreSQL running? set PAYKIT_TEST_POSTGRES_URL): %v", err)
	}
	t.Cleanup(func() {
		defer admin.Close()
		if _, err := admin.Exec("DROP SCHEMA IF EXISTS " + name + " CASCADE"); err != nil {
			t.Errorf("paykittest: drop schema %s: %v", name, err)
		}
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("paykittest: %v", err)
	}
	q := u.Query()
	q.Set("search_path", name)
	u.RawQuery = q.Encode()
	return u.String()
}

// Drain runs the worker (Service.ProcessDue) until no job is due, failing
// the test on an error or when jobs keep coming.
func (e *Env) Drain(ctx context.Context) {
	e.t.Helper()
	if _, err := e.RunJobs(ctx); err != nil {
		e.t.Fatalf("paykittest: %v", err)
	}
}

// RunJobs runs the worker until no job is due and returns how many jobs
// ran. It gives up after 50 rounds that all found work.
func (e *Env) RunJobs(ctx context.Context) (int, error) {
	total := 0
	for range 50 {
		n, err := e.Service.ProcessDue(ctx)
		total += n
		if err != nil {
			return total, err
		}
		if n == 0 {
			return total, nil
		}
	}
	return total, fmt.Errorf("the worker keeps finding due jobs (%d ran)", total)
}

// Merchant is a merchant with a test API key pair.
type Merchant struct {
	ID        string
	KeyID     string
	PublicKey string
	SecretKey string
	// Principal is what the key pair authenticates as.
	Principal paykit.Principal
}

// Merchant creates a merchant and a key pair in environment (paykit.Test
// unless given).
func (e *Env) Merchant(ctx context.Context, environment ...paykit.Environment) Merchant {
	e.t.Helper()
	m, err := e.Service.CreateMerchant(ctx, "paykittest", "Kedai "+newid.Random("m"))
	if err != nil {
		e.t.Fatalf("paykittest: %v", err)
	}
	return e.Key(ctx, m.ID, environment...)
}

// Key creates another key pair of merchant id in environment (paykit.Test
// unless given).
func (e *Env) Key(ctx context.Context, merchantID string, environment ...paykit.Environment) Merchant {
	e.t.Helper()
	env := paykit.Test
	if len(environment) > 0 {
		env = environment[0]
	}
	k, err := e.Service.CreateAPIKey(ctx, "paykittest", merchantID, env)
	if err != nil {
		e.t.Fatalf("paykittest: %v", err)
	}
	return Merchant{
		ID: merchantID, KeyID: k.ID, PublicKey: k.PublicKey, SecretKey: k.SecretKey,
		Principal: paykit.Principal{Scope: paykit.Scope{MerchantID: merchantID, Environment: env}, KeyID: k.ID},
	}
}

// Pay acts as the payer of payment intent id approving it at the
// sandbox. The PSP settles it PSPDelay later on the clock; SettleAndNotify
// then tells the Service.
func (e *Env) Pay(ctx context.Context, id string) error { return e.Provider.Approve(ctx, id) }

// Decline acts as the payer of payment intent id refusing it at the
// sandbox.
func (e *Env) Decline(ctx context.Context, id string) error { return e.Provider.Decline(ctx, id) }

// SettleAndNotify advances the clock by the PSP's settlement delay,
// makes the PSP send its due callbacks, and drains the worker. It returns
// how many callbacks the Service acknowledged.
func (e *Env) SettleAndNotify(ctx context.Context) int {
	e.t.Helper()
	e.Clock.Advance(e.pspDelay)
	n, err := e.PSP.SendCallbacks(ctx)
	if err != nil {
		e.t.Fatalf("paykittest: send callbacks: %v", err)
	}
	e.Drain(ctx)
	return n
}
