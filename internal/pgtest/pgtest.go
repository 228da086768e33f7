// Package pgtest gives tests a fresh PostgreSQL database on the server at
// $PAYKIT_TEST_POSTGRES_URL (default postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable).
// It fails the test when the server cannot be reached: CI must run it.
package pgtest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" database/sql driver
)

// DefaultURL is the server used when PAYKIT_TEST_POSTGRES_URL is unset.
const DefaultURL = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"

// Database creates a database with a random name, drops it when the test
// ends, and returns its URL.
func Database(t TB) string {
	t.Helper()
	return create(t, baseURL(), "")
}

// baseURL is the server's URL the tests use.
func baseURL() string {
	if base := os.Getenv("PAYKIT_TEST_POSTGRES_URL"); base != "" {
		return base
	}
	return DefaultURL
}

// create creates a database with a random name and the CREATE DATABASE
// options opts, drops it when the test ends, and returns its URL.
func create(t TB, base, opts string) string {
	t.Helper()
	admin, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	name := "paykit_test_" + strings.ToLower(rand.Text()[:12])
	for try := 0; ; try++ {
		_, err = admin.Exec("CREATE DATABASE " + name + opts)
		// Two copies of one template at the same moment: one waits.
		if err == nil || try == 50 || !strings.Contains(err.Error(), "is being accessed by other users") {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		admin.Close()
		t.Fatalf("pgtest: create database (is PostgreSQL running? set PAYKIT_TEST_POSTGRES_URL): %v", err)
	}
	t.Cleanup(func() {
		defer admin.Close()
		if _, err := admin.Exec("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)"); err != nil {
			t.Errorf("pgtest: drop database %s: %v", name, err)
		}
	})
	return withDatabase(base, name)
}

// withDatabase is base with its database replaced by name.
func withDatabase(base, name string) string {
	u, err := url.Parse(base)
	if err != nil {
		panic(fmt.Sprintf("pgtest: %v", err))
	}
	u.Path = "/" + name
	return u.String()
}

// Migrated is Database with the schema already in place: the new database
// is a copy of a template that migrate (given the template's URL) built
// once, shared by every test process through the template's name, which
// holds key (the schema's digest). Copying a template is much cheaper than
// migrating, and parallel tests do not queue on the migration lock.
// Templates of other keys are dropped when a new one is built.
func Migrated(t TB, key string, migrate func(url string) error) string {
	t.Helper()
	base := baseURL()
	tmpl := "paykit_tmpl_" + key[:16]
	v, _ := templates.LoadOrStore(tmpl, &template{})
	tp := v.(*template)
	tp.once.Do(func() { tp.err = buildTemplate(base, tmpl, migrate) })
	if tp.err != nil {
		t.Fatalf("pgtest: template %s: %v", tmpl, tp.err)
	}
	return create(t, base, " TEMPLATE "+tmpl)
}

// TB is the part of testing.TB the package uses.
type TB interface {
	Helper()
	Errorf(format string, args ...any)
	Fatalf(format string, args ...any)
	Cleanup(func())
	TempDir() string
}

var _ TB = testing.TB(nil)

// template is one process's knowledge of a template database.
type template struct {
	once sync.Once
	err  error
}

var templates sync.Map // name → *template

// buildTemplate makes sure the template database tmpl exists, migrated,
// under an advisory lock that serializes processes building it.
func buildTemplate(base, tmpl string, migrate func(url string) error) error {
	ctx := context.Background()
	admin, err := sql.Open("pgx", base)
	if err != nil {
		return err
	}
	defer admin.Close()
	conn, err := admin.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "SELECT pg_advisory_lock(hashtext($1))", tmpl); err != nil {
		return err
	}
	defer conn.ExecContext(ctx, "SELECT pg_advisory_unlock(hashtext($1))", tmpl) //nolint:errcheck // the session ends anyway
	var ready bool
	err = conn.QueryRowContext(ctx, "SELECT datistemplate FROM pg_database WHERE datname = $1", tmpl).Scan(&ready)
	if err == nil && ready {
		return nil
	}
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	// Left half-built by a process that died, or never built.
	if _, err := conn.ExecContext(ctx, "DROP DATABASE IF EXISTS "+tmpl+" WITH (FORCE)"); err != nil {
		return err
	}
	if _, err := conn.ExecContext(ctx, "CREATE DATABASE "+tmpl); err != nil {
		return err
	}
	if err := migrate(withDatabase(base, tmpl)); err != nil {
		return err
	}
	if _, err := conn.ExecContext(ctx, "ALTER DATABASE "+tmpl+" WITH IS_TEMPLATE true ALLOW_CONNECTIONS false"); err != nil {
		return err
	}
	// Templates of earlier schemas: dropped where no one copies them now.
	rows, err := conn.QueryContext(ctx, "SELECT datname FROM pg_database WHERE datname LIKE 'paykit\\_tmpl\\_%' AND datname <> $1", tmpl)
	if err != nil {
		return err
	}
	var stale []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			rows.Close()
			return err
		}
		stale = append(stale, name)
	}
	rows.Close()
	for _, name := range stale {
		_, _ = conn.ExecContext(ctx, "ALTER DATABASE "+name+" WITH IS_TEMPLATE false")
		_, _ = conn.ExecContext(ctx, "DROP DATABASE IF EXISTS "+name)
	}
	return nil
}
