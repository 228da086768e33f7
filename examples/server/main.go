// Command server is paykit's runnable example: it wires a Store, the
// Service, the sandbox Provider and the HTTP handlers together and serves
//
//	/v1        merchant API (OpenAPI document at /v1/openapi.json)
//	/pay       payer pages: continuation links, return pages, QR images
//	/sandbox   the sandbox PSP (its API and payer pages), standing in for a
//	           Provider's own host
//	/operator  operator API (bearer token)
//	/healthz   200 when the store answers, 503 otherwise
//	/metrics   Prometheus metrics
//
// go run ./examples/server starts on an embedded SQLite file, creates the
// demo merchant mch_demo on first start and prints the operator token and a
// fresh test key pair for the demo merchant on every start. Test-environment
// payments and payouts go to the sandbox, whose outcomes are chosen by
// magic amounts and account numbers (the constants of provider/sandbox,
// listed in the README). See `go run ./examples/server -h` for the flags.
package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"golang.org/x/sync/errgroup"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/httpadapter"
	"github.com/paykit/paykit/keyring"
	"github.com/paykit/paykit/provider/providerconfig"
	"github.com/paykit/paykit/provider/sandbox"
	"github.com/paykit/paykit/provider/sandbox/sandboxsql"
	"github.com/paykit/paykit/store/memory"
	"github.com/paykit/paykit/store/sqlstore"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "paykit:", err)
		os.Exit(1)
	}
}

// demoBalanceCurrencies are the currencies of the sandbox payout routes.
var demoBalanceCurrencies = []string{"MYR", "THB"}

// Demo merchant: a fixed id, so that a restart on the same database finds it.
const (
	demoMerchantID   = "mch_demo"
	demoMerchantName = "Demo merchant"
	demoBalance      = 100_000_000 // minor units, per currency, credited on first start
	setupActor       = "examples/server"
	operatorName     = "operator" // the actor of operator API calls in the audit log
)

// run is the whole server: it returns when ctx ends (after a graceful
// shutdown) or when serving fails. Credentials go to stdout, logs to stderr.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cfg, err := parseConfig(args, getenv, stderr)
	if err != nil {
		return err
	}
	if cfg.Version {
		fmt.Fprintln(stdout, "paykit", version())
		return nil
	}
	logger := slog.New(slog.NewTextHandler(stderr, nil))

	// Listen first: the sandbox adapter calls the PSP on this server, and
	// payer links need the address when -public-url is not set.
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return err
	}
	defer ln.Close() // when returning before Serve; harmless after
	baseURL := listenURL(ln.Addr())
	var pprofLn net.Listener
	if cfg.PprofAddr != "" {
		if pprofLn, err = listenPprof(cfg.PprofAddr); err != nil {
			return fmt.Errorf("-pprof-addr: %w", err)
		}
		defer pprofLn.Close()
	}
	if cfg.PublicURL == "" {
		cfg.PublicURL = baseURL
	}

	tel, err := newTelemetry(ctx, getenv)
	if err != nil {
		return fmt.Errorf("OpenTelemetry: %w", err)
	}
	defer func() {
		// Flush what the exporters hold, after the server stopped.
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := tel.shutdown(sctx); err != nil {
			logger.Warn("OpenTelemetry shutdown", "err", err)
		}
	}()
	a, closeApp, err := newApp(ctx, cfg, getenv, baseURL, logger, tel)
	if err != nil {
		return err
	}
	defer closeApp()
	svc, psp, token, demoKey := a.svc, a.psp, a.token, a.demoKey

	srv := &http.Server{
		Handler:           a.handler,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}

	fmt.Fprintf(stdout, "paykit listening on %s\n", baseURL)
	if cfg.OperatorToken == "" { // given tokens are the operator's own: never echoed
		fmt.Fprintf(stdout, "operator token:  %s\n", token)
	}
	if demoKey != nil {
		fmt.Fprintf(stdout, "demo merchant:   %s\n", demoKey.MerchantID)
		fmt.Fprintf(stdout, "test public key: %s\n", demoKey.PublicKey)
		fmt.Fprintf(stdout, "test secret key: %s\n", demoKey.SecretKey)
	}

	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return svc.Run(gctx) })
	g.Go(func() error { psp.Run(gctx, cfg.WorkerInterval); return nil })
	g.Go(func() error {
		if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	})
	if pprofLn != nil {
		fmt.Fprintf(stdout, "pprof listening on http://%s/debug/pprof/\n", pprofLn.Addr())
		ps := pprofServer()
		g.Go(func() error {
			if err := ps.Serve(pprofLn); !errors.Is(err, http.ErrServerClosed) {
				return err
			}
			return nil
		})
		g.Go(func() error {
			<-gctx.Done()
			return ps.Close() // a profile in progress is cut short
		})
	}
	g.Go(func() error {
		<-gctx.Done()
		shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 15*time.Second)
		defer cancel()
		// Requests in flight may still call the sandbox PSP (in this
		// process) until the server has stopped: its state closes after.
		// Its payer pages and callbacks use the listener.
		return srv.Shutdown(shutdownCtx)
	})
	err = g.Wait()
	logger.Info("paykit stopped")
	return err
}

// loadProviders reads the -providers file, in which a Provider of kind
// sandbox is this server's own sandbox; without the flag, the sandbox
// serves every test route and live has none.
func loadProviders(cfg config, getenv func(string) string, sb *sandbox.Provider) (*providerconfig.Setup, error) {
	if cfg.Providers == "" {
		return &providerconfig.Setup{
			Routing:   sandbox.DefaultRouting(),
			Providers: map[string]paykit.Provider{sandbox.Name: sb},
		}, nil
	}
	kinds := providerconfig.DefaultKinds()
	kind := providerconfig.SandboxKind(sb)
	newSandbox := kind.New
	kind.New = func(a providerconfig.Adapter) (paykit.Provider, error) {
		if a.Entry.Name != sandbox.Name {
			// Its PSP posts callbacks to /providers/sandbox/webhooks.
			return nil, fmt.Errorf("the sandbox Provider must be named %q", sandbox.Name)
		}
		return newSandbox(a)
	}
	kinds["sandbox"] = kind
	return providerconfig.Load(cfg.Providers, providerconfig.Options{Getenv: getenv, Kinds: kinds})
}

// Sandbox timings. The adapter gives up on a PSP call after
// sandboxTimeout, so a payment of a "timeout" magic amount (ending in 902
// or 903) answers 201 processing after about that long; the PSP holds such
// a request for sandboxHold (or until the adapter goes away).
const (
	sandboxTimeout = 3 * time.Second
	sandboxHold    = 10 * time.Second
)

// newSandbox builds the sandbox PSP, mounted at /sandbox, and its adapter.
// Payers reach the PSP's pages through the public URL; the adapter calls
// the PSP in this process. On a SQL store the PSP keeps its state in its
// own tables (see sandboxDB), over its own connections, as a real PSP
// keeps its own, so that a restarted server, or any server on the
// database, answers for what an earlier one's PSP recorded; on the memory
// store the state lives as long as the process. The API key, which the adapter sends and
// which signs the PSP's callbacks, is drawn at start and never stored: each
// server's adapter calls its own PSP, and that PSP posts callbacks to its
// own server.
func newSandbox(ctx context.Context, cfg config, baseURL string, store paykit.Store) (*sandbox.PSP, *sandbox.Provider, func(), error) {
	key, err := randomToken()
	if err != nil {
		return nil, nil, nil, err
	}
	delay := cfg.SandboxDelay
	if delay == 0 {
		delay = -1 // the PSP reads 0 as its default; -sandbox-delay 0 means at once
	}
	pspCfg := sandbox.PSPConfig{
		BaseURL: cfg.PublicURL + "/sandbox", APIKey: key, Delay: delay, Hold: sandboxHold,
		SettlementInterval: cfg.SandboxSettlementInterval,
		CallbackURL:        baseURL + "/providers/" + sandbox.Name + "/webhooks",
	}
	closeDB := func() {}
	if _, ok := store.(*sqlstore.Store); ok && store.Persistent() {
		// The PSP stands in for another service: it gets a small pool of
		// its own on the database, so its work never waits for, or takes,
		// paykit's connections.
		// A simulator's records need to survive a restart, not a power cut.
		db, err := sqlstore.OpenWith(ctx, sandboxDB(cfg.DB), sqlstore.Options{MaxConns: sandboxConns, SQLiteSynchronous: "NORMAL"})
		if err != nil {
			return nil, nil, nil, fmt.Errorf("sandbox: %w", err)
		}
		if err := sandboxsql.Migrate(ctx, db.DB()); err != nil {
			db.Close()
			return nil, nil, nil, err
		}
		st, err := sandboxsql.New(db.DB(), db.RunInTx)
		if err != nil {
			db.Close()
			return nil, nil, nil, err
		}
		pspCfg.State, closeDB = st, func() { db.Close() }
	}
	psp := sandbox.NewPSP(pspCfg)
	// The adapter calls the PSP in this process directly; payers and
	// the PSP's callbacks reach each other over HTTP.
	adapter := sandbox.New(sandbox.Config{PSP: psp, APIKey: key, Timeout: sandboxTimeout})
	return psp, adapter, closeDB, nil
}

// sandboxConns is the size of the sandbox PSP's own connection pool.
const sandboxConns = 4

// sandboxDB is where the sandbox PSP keeps its state: the PostgreSQL
// database itself, which every server on it shares; beside a SQLite file,
// a file of its own (paykit.db: paykit.sandbox.db), so that the PSP's
// writes never queue for paykit's write lock. As with SQLite's NORMAL
// synchronous, the PSP's PostgreSQL sessions commit without waiting for the
// disk (synchronous_commit off): its records survive a restart of either
// server, and only a crash of the database's machine may lose the last
// fraction of a second of them.
func sandboxDB(db string) string {
	if path, ok := strings.CutPrefix(db, "sqlite:"); ok {
		return "sqlite:" + strings.TrimSuffix(path, ".db") + ".sandbox.db"
	}
	u, err := url.Parse(db)
	if err != nil {
		return db // OpenWith reports it
	}
	q := u.Query()
	q.Set("synchronous_commit", "off")
	u.RawQuery = q.Encode()
	return u.String()
}

// serverKeys are the signing and account keys: from the -keys file (by
// default beside a SQLite database), fresh for the memory store, and on
// PostgreSQL without -keys kept in the database, so that every instance on
// it shares them, wrapped under PAYKIT_KEY_ENCRYPTION_KEY (in clear only
// with -keys-in-db). paykit.New then checks them against the data.
func serverKeys(ctx context.Context, cfg config, getenv func(string) string, store paykit.Store, logger *slog.Logger) ([]byte, *keyring.Keyring, error) {
	w, err := keyWrapper(getenv)
	if err != nil {
		return nil, nil, err
	}
	path := cfg.Keys
	if path == "" {
		path = defaultKeysPath(cfg.DB)
	}
	ss, ok := store.(*sqlstore.Store)
	if !ok || !ss.Persistent() || !ss.Postgres() {
		if w != nil || cfg.KeysInDB {
			return nil, nil, fmt.Errorf("%s and -keys-in-db are for keys kept in a PostgreSQL database; this store keeps them in %s",
				keyEncryptionKeyEnv, describeKeys(path))
		}
		return loadKeys(path)
	}
	if path == "" {
		if _, err := os.Stat(legacyKeysFile); err == nil {
			// Where servers before keys-in-the-database kept them.
			logger.InfoContext(ctx, "using the keys of "+legacyKeysFile)
			path = legacyKeysFile
		}
	}
	if path != "" {
		if w != nil || cfg.KeysInDB {
			return nil, nil, fmt.Errorf("-keys %s and %s or -keys-in-db are alternatives: choose one", path, keyEncryptionKeyEnv)
		}
		return loadKeys(path)
	}
	if w == nil && !cfg.KeysInDB {
		// The key that wraps them lives outside the database: a file of
		// this machine's, shared by the instances it runs.
		path, err := defaultKEKPath(cfg.DB, getenv)
		if err != nil {
			return nil, nil, err
		}
		if w, err = machineKeyWrapper(path); err != nil {
			return nil, nil, err
		}
		logger.WarnContext(ctx, "the keys in the database are wrapped under the key-encryption key in "+path+
			", a file of this machine: instances on other machines need "+keyEncryptionKeyEnv+" set to its content")
	}
	return loadDBKeys(ctx, ss.DB(), w, logger)
}

// describeKeys says where keys without the database live.
func describeKeys(path string) string {
	if path == "" {
		return "the process (fresh at each start)"
	}
	return "the key file " + path
}

// version is the module's version from the build information; "devel"
// when unknown (go run, a build outside a module version).
func version() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "devel"
}

// logStart writes the start-up line: version, Store and schema version
// (the newest migration applied; none for the memory Store).
func logStart(ctx context.Context, store paykit.Store, logger *slog.Logger) error {
	kind, schema := "memory", "none"
	if ss, ok := store.(*sqlstore.Store); ok {
		kind = "sqlite"
		if ss.Postgres() {
			kind = "postgres"
		}
		v, err := ss.SchemaVersion(ctx)
		if err != nil {
			return err
		}
		schema = fmt.Sprintf("%04d", v)
	}
	logger.InfoContext(ctx, "paykit starting", "version", version(), "store", kind, "schema_version", schema)
	return nil
}

// openStore opens and migrates the store named by -db.
func openStore(ctx context.Context, db string, opts sqlstore.Options) (paykit.Store, error) {
	if db == "memory" {
		return memory.New(), nil
	}
	s, err := sqlstore.OpenWith(ctx, db, opts)
	if err != nil {
		return nil, err
	}
	if err := s.Migrate(ctx); err != nil {
		s.Close()
		return nil, fmt.Errorf("migrate: %w", err)
	}
	return s, nil
}

// setUpDemo creates the demo merchant, with a test balance, unless it
// exists, and issues a fresh test key pair for it; earlier pairs stay
// valid.
func setUpDemo(ctx context.Context, svc *paykit.Service) (*paykit.NewAPIKey, error) {
	_, created, err := svc.EnsureMerchant(ctx, setupActor, demoMerchantID, demoMerchantName)
	if err != nil {
		return nil, err
	}
	if created {
		// A test balance to pay out from, as an operator's adjustment.
		for _, currency := range demoBalanceCurrencies {
			if _, err := svc.AdjustBalance(ctx, setupActor, demoMerchantID, paykit.BalanceAdjustmentRequest{
				Environment: paykit.Test, Currency: currency, Amount: demoBalance, Reason: "demo float",
			}); err != nil {
				return nil, err
			}
		}
	}
	return svc.CreateAPIKey(ctx, setupActor, demoMerchantID, paykit.Test)
}

// healthz answers 200 when the store answers and 503 otherwise; the cause
// goes to the log only.
func healthz(svc *paykit.Service, logger *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		if err := svc.Ping(ctx); err != nil {
			logger.WarnContext(ctx, "health check failed", "err", err)
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprintln(w, `{"status":"unavailable"}`)
			return
		}
		fmt.Fprintln(w, `{"status":"ok"}`)
	})
}

// listenURL is the base URL of the listener, with the real port and a
// wildcard host shown as 127.0.0.1.
func listenURL(addr net.Addr) string {
	tcp, ok := addr.(*net.TCPAddr)
	if !ok {
		return "http://" + addr.String()
	}
	host := tcp.IP.String()
	if tcp.IP.IsUnspecified() {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, fmt.Sprint(tcp.Port))
}

func randomToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// app is the server's wiring: the Store, the sandbox PSP and its adapter,
// the Service and the HTTP handler of every mount.
type app struct {
	svc     *paykit.Service
	psp     *sandbox.PSP
	handler *http.ServeMux
	token   string            // the operator token
	demoKey *paykit.NewAPIKey // nil without -demo
}

// newApp opens the Store and wires the server on it; baseURL is the
// server's own address. closeAll releases the PSP's connection and database
// and the Store, in that order, once nothing is served any more.
func newApp(ctx context.Context, cfg config, getenv func(string) string, baseURL string, logger *slog.Logger, tel *telemetry) (a *app, closeAll func(), err error) {
	var closers []func()
	release := func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
	}
	defer func() {
		if err != nil {
			release()
		}
	}()
	store, err := openStore(ctx, cfg.DB, sqlstore.Options{MaxConns: cfg.DBMaxConns, WorkerConns: cfg.DBWorkerConns})
	if err != nil {
		return nil, nil, err
	}
	closers = append(closers, func() { store.Close() })
	if err := logStart(ctx, store, logger); err != nil {
		return nil, nil, err
	}
	psp, adapter, closePSP, err := newSandbox(ctx, cfg, baseURL, store)
	if err != nil {
		return nil, nil, err
	}
	closers = append(closers, closePSP)
	signingKey, accountKeys, err := serverKeys(ctx, cfg, getenv, store, logger)
	if err != nil {
		return nil, nil, err
	}
	providers, err := loadProviders(cfg, getenv, adapter)
	if err != nil {
		return nil, nil, err
	}
	svc, err := paykit.New(paykit.Config{
		Store: store, Logger: logger, WorkerInterval: cfg.WorkerInterval,
		SigningKey: signingKey, AccountKeys: accountKeys,
		Routing: providers.Routing, Providers: providers.Providers, DisabledProviders: providers.Disabled,
		PublicURL: cfg.PublicURL, PaymentTTL: cfg.PaymentTTL, CheckoutTTL: cfg.CheckoutTTL,
		ApprovalThreshold: cfg.ApprovalThreshold, ApprovalTTL: cfg.ApprovalTTL, ReconciliationSLA: cfg.ReconciliationSLA,
		TracerProvider: tel.tp, MeterProvider: tel.mp,
	})
	if errors.Is(err, keyring.ErrMismatch) {
		return nil, nil, fmt.Errorf("%w; start with the keys this database was first started with, adding new account keys beside the old ones to rotate", err)
	}
	if err != nil {
		if cfg.Providers != "" {
			return nil, nil, fmt.Errorf("providers file %s: %w", cfg.Providers, err)
		}
		return nil, nil, err
	}
	for _, name := range providers.Webhooks {
		logger.Info("provider webhooks", "provider", name, "url", cfg.PublicURL+"/providers/"+name+"/webhooks")
	}
	// A store that answers reads but refuses writes would fail every
	// request that changes anything: refuse to start on it.
	if err := svc.Ping(ctx); err != nil {
		return nil, nil, fmt.Errorf("the store does not accept writes: %w", err)
	}

	token := cfg.OperatorToken
	if token == "" {
		if token, err = randomToken(); err != nil {
			return nil, nil, err
		}
	}
	var demoKey *paykit.NewAPIKey
	if cfg.Demo {
		if demoKey, err = setUpDemo(ctx, svc); err != nil {
			return nil, nil, fmt.Errorf("demo merchant: %w", err)
		}
	}

	registry := prometheus.NewRegistry()
	registry.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	mux := http.NewServeMux()
	mux.Handle("/v1/", http.StripPrefix("/v1", httpadapter.NewMerchantAPI(svc, httpadapter.Options{
		Logger: logger, RateLimit: cfg.RateLimit, Registerer: registry,
	})))
	mux.Handle("/pay/", http.StripPrefix("/pay", httpadapter.NewPayHandler(svc, httpadapter.PayOptions{
		Logger: logger, Registerer: registry,
	})))
	mux.Handle("/sandbox/", http.StripPrefix("/sandbox", psp))
	mux.Handle("/providers/", http.StripPrefix("/providers", httpadapter.NewProviderCallbacks(svc, httpadapter.CallbackOptions{
		Logger: logger, Registerer: registry,
	})))
	mux.Handle("/operator/", http.StripPrefix("/operator", httpadapter.NewOperatorAPI(svc, httpadapter.OperatorOptions{
		Tokens: map[string]string{operatorName: token}, Logger: logger, Registerer: registry,
	})))
	mux.Handle("/dashboard/", http.StripPrefix("/dashboard", httpadapter.NewDashboard(svc, httpadapter.DashboardOptions{
		Tokens: map[string]string{operatorName: token}, SessionKey: signingKey,
		SecureCookie: strings.HasPrefix(cfg.PublicURL, "https://"), Logger: logger, Registerer: registry,
	})))
	mux.Handle("GET /healthz", healthz(svc, logger))
	mux.Handle("GET /metrics", promhttp.HandlerFor(registry, promhttp.HandlerOpts{Registry: registry}))
	return &app{svc: svc, psp: psp, handler: mux, token: token, demoKey: demoKey}, release, nil
}
