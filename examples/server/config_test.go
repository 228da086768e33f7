package main

import (
	"errors"
	"flag"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"
)

func env(vars map[string]string) func(string) string {
	return func(name string) string { return vars[name] }
}

func TestConfigDefaults(t *testing.T) {
	is := is.New(t)
	c, err := parseConfig(nil, env(nil), io.Discard)
	is.NoErr(err)
	is.Equal(c, config{
		Addr: "127.0.0.1:8080", DB: "sqlite:paykit.db", Demo: true, RateLimit: 100,
		WorkerInterval: time.Second, SandboxDelay: 2 * time.Second, PaymentTTL: 30 * time.Minute,
		CheckoutTTL: 24 * time.Hour, ApprovalTTL: 72 * time.Hour, ApprovalThreshold: 1_000_000, DBMaxConns: 16, DBWorkerConns: 4,
		SandboxSettlementInterval: 24 * time.Hour, ReconciliationSLA: 72 * time.Hour,
	})
}

func TestConfigEveryFlagFromEnvironmentAndCommandLine(t *testing.T) {
	is := is.New(t)
	want := config{
		Addr: "0.0.0.0:9000", DB: "postgres://u:p@db:5432/paykit?sslmode=disable",
		PublicURL: "https://pay.example.com", OperatorToken: "0123456789abcdef-token", Demo: false,
		WorkerInterval: 250 * time.Millisecond, SandboxDelay: 0, PaymentTTL: 10 * time.Minute,
		CheckoutTTL: time.Hour, ApprovalTTL: 2 * time.Hour, ApprovalThreshold: 0, RateLimit: 2.5, DBMaxConns: 3, DBWorkerConns: 2,
		Providers: "/etc/paykit/providers.json", PprofAddr: "127.0.0.1:6060", SandboxSettlementInterval: 90 * time.Minute,
		ReconciliationSLA: 48 * time.Hour,
	}
	values := map[string]string{
		"addr": "0.0.0.0:9000", "db": want.DB, "public-url": "https://pay.example.com/",
		"operator-token": want.OperatorToken, "demo": "false", "worker-interval": "250ms",
		"sandbox-delay": "0s", "payment-ttl": "10m", "checkout-ttl": "1h", "approval-ttl": "2h",
		"approval-threshold": "0", "rate-limit": "2.5", "db-max-conns": "3", "db-worker-conns": "2",
		"providers": "/etc/paykit/providers.json", "pprof-addr": "127.0.0.1:6060", "sandbox-settlement-interval": "1h30m",
		"reconciliation-sla": "48h",
	}
	vars := map[string]string{}
	var args []string
	for name, v := range values {
		vars[envName(name)] = v
		args = append(args, "-"+name+"="+v)
	}
	is.Equal(envName("worker-interval"), "PAYKIT_WORKER_INTERVAL")

	fromEnv, err := parseConfig(nil, env(vars), io.Discard)
	is.NoErr(err)
	is.Equal(fromEnv, want)
	fromFlags, err := parseConfig(args, env(nil), io.Discard)
	is.NoErr(err)
	is.Equal(fromFlags, want)
}

func TestConfigFlagWinsOverEnvironment(t *testing.T) {
	is := is.New(t)
	c, err := parseConfig([]string{"-db", "memory", "-rate-limit", "0"},
		env(map[string]string{"PAYKIT_DB": "sqlite:other.db", "PAYKIT_RATE_LIMIT": "5", "PAYKIT_ADDR": "127.0.0.1:0"}), io.Discard)
	is.NoErr(err)
	is.Equal(c.DB, "memory")
	is.Equal(c.RateLimit, 0.0)
	is.Equal(c.Addr, "127.0.0.1:0") // from the environment: no flag given
}

func TestConfigRejectsBadValues(t *testing.T) {
	for _, c := range []struct {
		args []string
		vars map[string]string
		want string
	}{
		{[]string{"-addr", "localhost"}, nil, "-addr"},
		{[]string{"-db", "mysql://x"}, nil, "-db"},
		{[]string{"-db", "sqlite:"}, nil, "-db"},
		{[]string{"-db", ""}, nil, "-db"},
		{[]string{"-public-url", "ftp://x"}, nil, "-public-url"},
		{[]string{"-public-url", "/relative"}, nil, "-public-url"},
		{[]string{"-public-url", "http://x/?a=b"}, nil, "-public-url"},
		{[]string{"-operator-token", "short"}, nil, "-operator-token"},
		{[]string{"-operator-token", "has a space in it, long enough"}, nil, "-operator-token"},
		{[]string{"-demo=maybe"}, nil, "demo"},
		{[]string{"-worker-interval", "0s"}, nil, "-worker-interval"},
		{[]string{"-worker-interval", "soon"}, nil, "worker-interval"},
		{[]string{"-sandbox-delay", "-1s"}, nil, "-sandbox-delay"},
		{[]string{"-sandbox-settlement-interval", "0s"}, nil, "-sandbox-settlement-interval"},
		{[]string{"-payment-ttl", "0"}, nil, "-payment-ttl"},
		{[]string{"-checkout-ttl", "-1h"}, nil, "-checkout-ttl"},
		{[]string{"-approval-ttl", "0s"}, nil, "-approval-ttl"},
		{[]string{"-approval-threshold", "-1"}, nil, "-approval-threshold"},
		{[]string{"-approval-threshold", "1.5"}, nil, "approval-threshold"},
		{[]string{"-rate-limit", "-1"}, nil, "-rate-limit"},
		{[]string{"-rate-limit", "Inf"}, nil, "-rate-limit"},
		{[]string{"-pprof-addr", "0.0.0.0:6060"}, nil, "-pprof-addr"},
		{[]string{"-pprof-addr", ":6060"}, nil, "-pprof-addr"},
		{[]string{"-pprof-addr", "10.0.0.1:6060"}, nil, "-pprof-addr"},
		{[]string{"-pprof-addr", "example.com:6060"}, nil, "-pprof-addr"},
		{[]string{"-pprof-addr", "127.0.0.1"}, nil, "-pprof-addr"},
		{[]string{"-no-such-flag"}, nil, "no-such-flag"},
		{[]string{"extra"}, nil, "extra"},
		{nil, map[string]string{"PAYKIT_WORKER_INTERVAL": "fast"}, "PAYKIT_WORKER_INTERVAL"},
		{nil, map[string]string{"PAYKIT_DEMO": "yes please"}, "PAYKIT_DEMO"},
	} {
		t.Run(strings.Join(c.args, " ")+mapString(c.vars), func(t *testing.T) {
			_, err := parseConfig(c.args, env(c.vars), io.Discard)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err = %v, want one naming %s", err, c.want)
			}
		})
	}
}

func TestConfigDoesNotEchoDatabasePassword(t *testing.T) {
	_, err := parseConfig([]string{"-db", "postgres://u:s3cret@host:bad port/db"}, env(nil), io.Discard)
	if err == nil || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("err = %v", err)
	}
}

func TestConfigHelp(t *testing.T) {
	is := is.New(t)
	var out strings.Builder
	_, err := parseConfig([]string{"-h"}, env(nil), &out)
	is.True(errors.Is(err, flag.ErrHelp))
	for _, name := range []string{"-addr", "-db", "-public-url", "-operator-token", "-demo", "-worker-interval",
		"-sandbox-delay", "-sandbox-settlement-interval", "-payment-ttl", "-checkout-ttl", "-approval-ttl", "-approval-threshold", "-rate-limit", "-pprof-addr", "PAYKIT_"} {
		is.True(strings.Contains(out.String(), name))
	}
}

func mapString(m map[string]string) string {
	var parts []string
	for k, v := range m {
		parts = append(parts, k+"="+v)
	}
	return strings.Join(parts, " ")
}

func TestConfigPprofAddrLoopback(t *testing.T) {
	for _, addr := range []string{"127.0.0.1:6060", "[::1]:6060", "localhost:0", "127.0.0.2:0"} {
		c, err := parseConfig([]string{"-pprof-addr", addr}, env(nil), io.Discard)
		if err != nil || c.PprofAddr != addr {
			t.Errorf("-pprof-addr %s: %+v, %v", addr, c.PprofAddr, err)
		}
	}
	_, err := parseConfig(nil, env(map[string]string{"PAYKIT_PPROF_ADDR": "0.0.0.0:6060"}), io.Discard)
	if err == nil || !strings.Contains(err.Error(), "loopback") {
		t.Errorf("err = %v, want one asking for a loopback address", err)
	}
}
