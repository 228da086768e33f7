package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/paykit/paykit/store/sqlstore"
)

// config is the command line of the example server (the README's
// configuration table). Every flag can also come from the environment variable
// PAYKIT_<NAME> (-worker-interval: PAYKIT_WORKER_INTERVAL); a flag given on
// the command line wins.
type config struct {
	Addr          string
	DB            string
	OperatorToken string // empty: a random one is drawn and printed
	Keys          string // key file; empty: defaultKeysPath(DB)
	KeysInDB      bool   // PostgreSQL: keep the keys in clear in the database (demos)
	DBMaxConns    int    // database connections at most; 0: sqlstore's default
	DBWorkerConns int    // the worker's own connections, beyond DBMaxConns
	Demo          bool
	Version       bool // print the version and exit
	RateLimit     float64
	// WorkerInterval is how often the background worker polls.
	WorkerInterval time.Duration
	// Providers is the Provider configuration file (provider/providerconfig);
	// empty: the sandbox in test, nothing in live.
	Providers string
	// PprofAddr is the loopback address of the net/http/pprof listener;
	// empty: none.
	PprofAddr string

	// Parsed and validated now; the payments, checkout, sandbox and payout
	// features that use them wire them up.
	PublicURL         string // empty: http://<listen address>
	SandboxDelay      time.Duration
	PaymentTTL        time.Duration
	CheckoutTTL       time.Duration
	ApprovalTTL       time.Duration
	ApprovalThreshold int64

	// SandboxSettlementInterval is how often the sandbox PSP settles each
	// merchant's funds.
	SandboxSettlementInterval time.Duration
	// ReconciliationSLA is how long a succeeded payment or refund may
	// wait for its settlement line before it is a missing_in_report break.
	ReconciliationSLA time.Duration
}

// envName is the environment variable of a flag.
func envName(flagName string) string {
	return "PAYKIT_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// parseConfig reads args over the environment (getenv) over the defaults.
func parseConfig(args []string, getenv func(string) string, stderr io.Writer) (config, error) {
	var c config
	fs := flag.NewFlagSet("server", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.Addr, "addr", "127.0.0.1:8080", "listen `address`; port 0 picks a free port")
	fs.StringVar(&c.DB, "db", "sqlite:paykit.db", "store: memory, sqlite:PATH, or a postgres:// URL")
	fs.IntVar(&c.DBMaxConns, "db-max-conns", sqlstore.DefaultMaxConns, "database connections at most, all kept open for reuse; a request that finds none free within 2s answers 503")
	fs.IntVar(&c.DBWorkerConns, "db-worker-conns", sqlstore.DefaultWorkerConns, "database connections of the background worker, beyond -db-max-conns, so requests and the worker cannot starve each other")
	fs.StringVar(&c.PublicURL, "public-url", "", "base `URL` of checkout and continuation links (default http://<addr>)")
	fs.StringVar(&c.OperatorToken, "operator-token", "", "bearer `token` of the operator API, at least 16 characters (default random, printed)")
	fs.StringVar(&c.Keys, "keys", "", "`file` keeping the link-signing and account-encryption keys, created on first start (default <sqlite path>.keys; for PostgreSQL the keys are kept in the database wrapped under $PAYKIT_KEY_ENCRYPTION_KEY, shared by every instance; none for memory)")
	fs.BoolVar(&c.KeysInDB, "keys-in-db", false, "PostgreSQL without -keys or $PAYKIT_KEY_ENCRYPTION_KEY: keep the keys IN CLEAR in the database, beside the data they protect (demos only; warned at every start)")
	fs.BoolVar(&c.Demo, "demo", true, "create a demo merchant (mch_demo) with a test balance on first start and print a fresh test key pair for it")
	fs.DurationVar(&c.WorkerInterval, "worker-interval", time.Second, "how often background work is polled")
	fs.DurationVar(&c.SandboxDelay, "sandbox-delay", 2*time.Second, "how long the sandbox Provider takes to settle an asynchronous outcome")
	fs.DurationVar(&c.SandboxSettlementInterval, "sandbox-settlement-interval", 24*time.Hour, "how often the sandbox Provider settles each merchant's funds in a batch")
	fs.DurationVar(&c.PaymentTTL, "payment-ttl", 30*time.Minute, "expiry of payments")
	fs.DurationVar(&c.CheckoutTTL, "checkout-ttl", 24*time.Hour, "expiry of checkouts")
	fs.DurationVar(&c.ApprovalTTL, "approval-ttl", 72*time.Hour, "expiry of payout approval holds")
	fs.DurationVar(&c.ReconciliationSLA, "reconciliation-sla", 72*time.Hour, "how long a payment or refund may wait for its settlement line before it is a missing_in_report break")
	fs.Int64Var(&c.ApprovalThreshold, "approval-threshold", 1_000_000, "payouts of at least this many minor units wait for operator approval (0 = never)")
	fs.StringVar(&c.Providers, "providers", "", "Provider configuration `file` (JSON: Providers, the environment variables of their secrets, and routes); default the sandbox in test, nothing in live")
	fs.StringVar(&c.PprofAddr, "pprof-addr", "", "loopback `address` of a net/http/pprof listener, as in 127.0.0.1:6060 (default none)")
	fs.BoolVar(&c.Version, "version", false, "print the version and exit")
	fs.Float64Var(&c.RateLimit, "rate-limit", 100, "requests per second per API key, burst twice that (0 = off)")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: server [flags]\n\nRuns paykit's example server. Every flag can also be set with the\nenvironment variable PAYKIT_<NAME> (for -worker-interval, PAYKIT_WORKER_INTERVAL);\na flag on the command line wins.\n\n")
		fs.PrintDefaults()
	}

	var envErr error
	fs.VisitAll(func(f *flag.Flag) {
		if f.Name == "version" { // a command, not a setting
			return
		}
		name := envName(f.Name)
		if v := getenv(name); v != "" && envErr == nil {
			if err := fs.Set(f.Name, v); err != nil {
				envErr = fmt.Errorf("environment variable %s=%q: %v", name, v, err)
			}
		}
	})
	if envErr != nil {
		return c, envErr
	}
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	return c, c.validate()
}

func (c *config) validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }

	if _, _, err := net.SplitHostPort(c.Addr); err != nil {
		bad("-addr %q: %v", c.Addr, err)
	}
	switch {
	case c.DB == "memory":
	case strings.HasPrefix(c.DB, "sqlite:"):
		if strings.TrimPrefix(c.DB, "sqlite:") == "" {
			bad("-db sqlite: needs a path, as in sqlite:paykit.db")
		}
	case strings.HasPrefix(c.DB, "postgres://"), strings.HasPrefix(c.DB, "postgresql://"):
		if _, err := url.Parse(c.DB); err != nil {
			bad("-db: invalid PostgreSQL URL") // the URL may hold a password: not echoed
		}
	default:
		bad("-db must be memory, sqlite:PATH or a postgres:// URL")
	}
	if c.PublicURL != "" {
		u, err := url.Parse(c.PublicURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
			bad("-public-url %q must be an absolute http or https URL without query or fragment", c.PublicURL)
		}
		c.PublicURL = strings.TrimRight(c.PublicURL, "/")
	}
	if c.OperatorToken != "" && len(c.OperatorToken) < 16 {
		bad("-operator-token must be at least 16 characters")
	}
	if strings.ContainsAny(c.OperatorToken, " \t\r\n") {
		bad("-operator-token must not contain white space")
	}
	positive := map[string]time.Duration{
		"-worker-interval": c.WorkerInterval, "-payment-ttl": c.PaymentTTL,
		"-checkout-ttl": c.CheckoutTTL, "-approval-ttl": c.ApprovalTTL,
		"-sandbox-settlement-interval": c.SandboxSettlementInterval, "-reconciliation-sla": c.ReconciliationSLA,
	}
	for _, name := range []string{"-worker-interval", "-payment-ttl", "-checkout-ttl", "-approval-ttl", "-sandbox-settlement-interval", "-reconciliation-sla"} {
		if positive[name] <= 0 {
			bad("%s must be positive", name)
		}
	}
	if c.SandboxDelay < 0 {
		bad("-sandbox-delay must not be negative")
	}
	if c.DBMaxConns < 1 {
		bad("-db-max-conns must be at least 1")
	}
	if c.DBWorkerConns < 1 {
		bad("-db-worker-conns must be at least 1")
	}
	if c.ApprovalThreshold < 0 {
		bad("-approval-threshold must not be negative")
	}
	if c.PprofAddr != "" {
		if err := loopbackOnly(c.PprofAddr); err != nil {
			bad("-pprof-addr %q: %v", c.PprofAddr, err)
		}
	}
	if c.RateLimit < 0 || math.IsNaN(c.RateLimit) || math.IsInf(c.RateLimit, 0) {
		bad("-rate-limit must be a non-negative number")
	}
	return errors.Join(errs...)
}

// loopbackOnly accepts a listen address whose host is a loopback IP or
// "localhost": profiles reveal the process's internals.
func loopbackOnly(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return errors.New("must be a loopback address (127.0.0.1, [::1] or localhost): profiles expose the process's internals")
}
