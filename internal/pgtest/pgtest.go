// Package pgtest gives tests a fresh PostgreSQL database on the server at
// $PAYKIT_TEST_POSTGRES_URL (default postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable).
// It fails the test when the server cannot be reached: CI must run it.
package pgtest

import (
	"crypto/rand"
	"database/sql"
	"net/url"
	"os"
	"strings"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" database/sql driver
)

// DefaultURL is the server used when PAYKIT_TEST_POSTGRES_URL is unset.
const DefaultURL = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"

// Database creates a database with a random name, drops it when the test
// ends, and returns its URL.
func Database(t testing.TB) string {
	t.Helper()
	base := os.Getenv("PAYKIT_TEST_POSTGRES_URL")
	if base == "" {
		base = DefaultURL
	}
	admin, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	name := "paykit_test_" + strings.ToLower(rand.Text()[:12])
	if _, err := admin.Exec("CREATE DATABASE " + name); err != nil {
		admin.Close()
		t.Fatalf("pgtest: create database (is PostgreSQL running? set PAYKIT_TEST_POSTGRES_URL): %v", err)
	}
	t.Cleanup(func() {
		defer admin.Close()
		if _, err := admin.Exec("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)"); err != nil {
			t.Errorf("pgtest: drop database %s: %v", name, err)
		}
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	u.Path = "/" + name
	return u.String()
}
