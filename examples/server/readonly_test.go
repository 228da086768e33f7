package main

import (
	"context"
	"database/sql"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx"
	"github.com/matryer/is"

	"github.com/paykit/paykit/internal/pgtest"
)

// setReadOnly makes new sessions of the database at dsn read-only (as on a
// standby) and ends the current ones, so that pooled connections reconnect
// into read-only sessions.
func setReadOnly(t *testing.T, dsn string) {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	name := strings.TrimPrefix(u.Path, "/")
	admin, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	for _, stmt := range []string{
		"ALTER DATABASE " + name + " SET default_transaction_read_only = on",
		"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '" + name + "' AND pid <> pg_backend_pid()",
	} {
		if _, err := admin.Exec(stmt); err != nil {
			t.Fatal(err)
		}
	}
}

// A database that answers reads but refuses writes fails /healthz and
// answers writes 503 service_unavailable, never 500.
func TestHealthzOnReadOnlyDatabase(t *testing.T) {
	is := is.New(t)
	dsn := pgtest.Database(t)
	// One connection: after the first call finds it ended, the next ones
	// run on a fresh, read-only session.
	s := startEnv(t, pgKeys, "-db", dsn, "-addr", "127.0.0.1:0", "-db-max-conns", "1")
	status, _, _ := call(t, "GET", s.url+"/healthz", "", nil)
	is.Equal(status, http.StatusOK)

	setReadOnly(t, dsn)
	for range 2 { // on the ended session, then on a read-only one
		status, _, body := call(t, "GET", s.url+"/healthz", "", nil)
		is.Equal(status, http.StatusServiceUnavailable)
		is.Equal(strings.TrimSpace(string(body)), `{"status":"unavailable"}`)
	}
	status, _, _ = call(t, "GET", s.url+"/v1/payment_intents", "", basicAuth(s.public, s.secret))
	is.Equal(status, http.StatusOK) // reads still work
	status, hdr, body := call(t, "POST", s.url+"/operator/merchants", `{"name":"Kedai"}`, bearerAuth(s.token))
	is.Equal(status, http.StatusServiceUnavailable)
	is.True(strings.Contains(string(body), `"code":"service_unavailable"`))
	is.True(hdr.Get("Retry-After") != "")
}

// The server refuses to start on a store it cannot write.
func TestRefusesReadOnlyDatabase(t *testing.T) {
	is := is.New(t)
	dsn := pgtest.Database(t)
	first := startEnv(t, pgKeys, "-db", dsn, "-addr", "127.0.0.1:0") // migrates
	is.NoErr(first.stop())
	setReadOnly(t, dsn)
	err := run(context.Background(), []string{"-db", dsn, "-addr", "127.0.0.1:0"}, func(k string) string { return pgKeys[k] }, io.Discard, io.Discard)
	is.True(err != nil)
	is.True(strings.Contains(err.Error(), "read-only"))
}
