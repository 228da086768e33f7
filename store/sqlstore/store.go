package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"
	"github.com/uptrace/bun/dialect/pgdialect"
	"github.com/uptrace/bun/dialect/sqlitedialect"
	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver

	"github.com/paykit/paykit"
)

// Store is a paykit.Store on SQLite or PostgreSQL. Its paykit.Tx methods each
// run as one statement (or, where noted, a few) outside any transaction; InTx
// runs the same methods inside one.
type Store struct {
	tx
	db *bun.DB
}

// tx implements paykit.Tx on a bun.IDB: the *bun.DB for the Store itself, a
// bun.Tx inside InTx.
type tx struct {
	db bun.IDB
	pg bool // PostgreSQL; otherwise SQLite
}

var (
	_ paykit.Store = (*Store)(nil)
	_ paykit.Tx    = tx{}
)

// sqliteParams are the connection settings of every SQLite connection:
// writers wait up to 5 s for the lock instead of failing, WAL lets readers
// run beside the writer, synchronous(FULL) makes a commit durable on power
// loss, and _txlock=immediate takes the write lock at BEGIN.
const sqliteParams = "_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)&_pragma=foreign_keys(1)" +
	"&_pragma=synchronous(FULL)&_txlock=immediate"

// Open connects to the database named by dsn and returns a Store. It does
// not create tables: call Migrate.
//
// dsn is one of:
//   - "sqlite:PATH": a SQLite database file, created if missing;
//   - "sqlite::memory:": a private in-memory SQLite database on a single
//     connection (calls queue for it; lost on Close);
//   - a "postgres://" or "postgresql://" URL, as libpq and pgx read it
//     (for example postgres://user:pass@host:5432/db?sslmode=disable).
func Open(ctx context.Context, dsn string) (*Store, error) {
	var db *bun.DB
	switch {
	case dsn == "sqlite::memory:":
		sqldb, err := sql.Open("sqlite", ":memory:?"+sqliteParams)
		if err != nil {
			return nil, fmt.Errorf("sqlstore: open: %w", err)
		}
		// Every connection to ":memory:" is a separate empty database, so
		// keep exactly one and never let it expire.
		sqldb.SetMaxOpenConns(1)
		sqldb.SetMaxIdleConns(1)
		sqldb.SetConnMaxLifetime(0)
		sqldb.SetConnMaxIdleTime(0)
		db = bun.NewDB(sqldb, sqlitedialect.New())
	case strings.HasPrefix(dsn, "sqlite:"):
		path := strings.TrimPrefix(dsn, "sqlite:")
		if path == "" {
			return nil, errors.New("sqlstore: open: empty SQLite path")
		}
		// The path becomes a file: URI, where these three characters are special.
		path = strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(path)
		sqldb, err := sql.Open("sqlite", "file:"+path+"?"+sqliteParams)
		if err != nil {
			return nil, fmt.Errorf("sqlstore: open: %w", err)
		}
		db = bun.NewDB(sqldb, sqlitedialect.New())
	case strings.HasPrefix(dsn, "postgres://"), strings.HasPrefix(dsn, "postgresql://"):
		cfg, err := pgx.ParseConfig(dsn)
		if err != nil {
			return nil, fmt.Errorf("sqlstore: open: %w", err)
		}
		// bun inlines every argument into the SQL text, so preparing
		// statements would only fill pgx's cache with one-off statements.
		cfg.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
		// When ctx ends, ask the server to cancel the statement (releasing
		// its locks at once); cut the connection if that takes over 1 s.
		cfg.BuildContextWatcherHandler = func(c *pgconn.PgConn) ctxwatch.Handler {
			return &pgconn.CancelRequestContextWatcherHandler{Conn: c, DeadlineDelay: time.Second}
		}
		db = bun.NewDB(stdlib.OpenDB(*cfg), pgdialect.New())
	default:
		return nil, errors.New(`sqlstore: open: dsn must start with "sqlite:", "postgres://" or "postgresql://"`)
	}
	if err := db.PingContext(ctx); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("sqlstore: open: %w", err)
	}
	return New(db), nil
}

// New returns a Store on a host's bun.DB, which must use sqlitedialect (on
// modernc.org/sqlite, with the settings described in the package doc) or
// pgdialect. It panics on another dialect. Close closes db.
func New(db *bun.DB) *Store {
	var pg bool
	switch name := db.Dialect().Name(); name {
	case dialect.PG:
		pg = true
	case dialect.SQLite:
	default:
		panic(fmt.Sprintf("sqlstore: unsupported dialect %s", name))
	}
	return &Store{tx: tx{db: db, pg: pg}, db: db}
}

// DB returns the underlying bun.DB, for hosts that keep their own tables
// beside paykit's.
func (s *Store) DB() *bun.DB { return s.db }

// InTx runs fn in one database transaction and commits when fn returns nil.
// When fn returns an error or panics, the transaction is rolled back and the
// error (unchanged) or the panic is passed on.
func (s *Store) InTx(ctx context.Context, fn func(tx paykit.Tx) error) error {
	return runTx(ctx, s.db, s.pg, func(t tx) error { return fn(t) })
}

// runTx runs fn in a new transaction on db; see InTx.
func runTx(ctx context.Context, db *bun.DB, pg bool, fn func(t tx) error) error {
	btx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return mapError("begin", err)
	}
	done := false
	defer func() {
		if !done { // fn failed or panicked
			_ = btx.Rollback()
		}
	}()
	if err := fn(tx{db: btx, pg: pg}); err != nil {
		return err
	}
	done = true
	if err := btx.Commit(); err != nil {
		return mapError("commit", err)
	}
	return nil
}

// atomic runs fn as one transaction: in t's own inside InTx, else in a
// new one, for the methods that need more than one statement.
func (t tx) atomic(ctx context.Context, fn func(t tx) error) error {
	if db, ok := t.db.(*bun.DB); ok {
		return runTx(ctx, db, t.pg, fn)
	}
	return fn(t)
}

// Ping reports whether the database answers.
func (s *Store) Ping(ctx context.Context) error { return s.db.PingContext(ctx) }

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }
