package sandbox

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/internal/sqltext"
)

// The SQL state keeps each record as JSON in a data column, beside the
// columns that find it: idem_key and id (both unique), seq (creation
// order) and due_at (attention time in Unix microseconds, NULL when none)
// for the callback round. Concurrency is the database's: a unique key
// decides which of two creates under one key wins, and an update runs in
// a transaction that locks the row (FOR UPDATE on PostgreSQL; on SQLite
// the write lock, taken at BEGIN with sqlstore's _txlock=immediate).

// sqlMigrations are the sandbox schema, in order; an applied one is never
// edited. %[1]s is the seq column's type, which differs per dialect.
var sqlMigrations = []string{
	`CREATE TABLE sandbox_payments (
		seq      %[1]s,
		idem_key TEXT   NOT NULL UNIQUE,
		id       TEXT   NOT NULL UNIQUE,
		state    TEXT   NOT NULL,
		due_at   BIGINT,
		data     TEXT   NOT NULL
	);
	CREATE INDEX sandbox_payments_due_at ON sandbox_payments (due_at);
	CREATE TABLE sandbox_transfers (
		seq      %[1]s,
		idem_key TEXT   NOT NULL UNIQUE,
		id       TEXT   NOT NULL UNIQUE,
		state    TEXT   NOT NULL,
		due_at   BIGINT,
		data     TEXT   NOT NULL
	);
	CREATE INDEX sandbox_transfers_due_at ON sandbox_transfers (due_at);
	CREATE TABLE sandbox_create_calls (
		idem_key TEXT   NOT NULL PRIMARY KEY,
		calls    BIGINT NOT NULL
	)`,
	`CREATE TABLE sandbox_refunds (
		seq      %[1]s,
		idem_key TEXT   NOT NULL UNIQUE,
		id       TEXT   NOT NULL UNIQUE,
		state    TEXT   NOT NULL,
		due_at   BIGINT,
		data     TEXT   NOT NULL
	);
	CREATE INDEX sandbox_refunds_due_at ON sandbox_refunds (due_at)`,
}

// migrateLockID is the PostgreSQL advisory lock that serializes Migrate
// calls of several processes.
const migrateLockID = 0x73616e64626f78 // "sandbox"

// Migrate creates or updates the sandbox_ tables that keep the PSP's
// state on db (SQLite or PostgreSQL). It is safe to call at every start
// and from several processes at once.
func Migrate(ctx context.Context, db *bun.DB) error {
	pg, err := isPG(db)
	if err != nil {
		return err
	}
	seq := "INTEGER PRIMARY KEY" // SQLite: the rowid, which grows with each insert
	if pg {
		seq = "BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY"
	}
	for i, m := range sqlMigrations {
		version := i + 1
		err := db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			if pg {
				// Held until commit: a concurrent Migrate waits, then
				// finds the version recorded.
				if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock(?)", migrateLockID); err != nil {
					return err
				}
			}
			if _, err := tx.ExecContext(ctx, "CREATE TABLE IF NOT EXISTS sandbox_schema_migrations (version INTEGER NOT NULL PRIMARY KEY)"); err != nil {
				return err
			}
			var n int
			if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM sandbox_schema_migrations WHERE version = ?", version).Scan(&n); err != nil || n > 0 {
				return err
			}
			for _, stmt := range strings.Split(fmt.Sprintf(m, seq), ";\n") {
				if _, err := tx.ExecContext(ctx, stmt); err != nil {
					return err
				}
			}
			_, err := tx.ExecContext(ctx, "INSERT INTO sandbox_schema_migrations (version) VALUES (?)", version)
			return err
		})
		if err != nil {
			return fmt.Errorf("sandbox: migration %d: %w", version, err)
		}
	}
	return nil
}

func isPG(db *bun.DB) (bool, error) {
	switch name := db.Dialect().Name(); name {
	case dialect.PG:
		return true, nil
	case dialect.SQLite:
		return false, nil
	default:
		return false, fmt.Errorf("sandbox: unsupported dialect %s", name)
	}
}

// sqlState is the state in a database migrated by Migrate.
type sqlState struct {
	db   *bun.DB
	pays *sqlTable[*payment]
	trfs *sqlTable[*transfer]
	rfds *sqlTable[*refund]
}

// newSQLState returns the state on db; inTx, when not nil, runs its write
// transactions (PSPConfig.InTx). It panics on a dialect other than SQLite
// or PostgreSQL, as a configuration error.
func newSQLState(db *bun.DB, inTx txRunner) *sqlState {
	pg, err := isPG(db)
	if err != nil {
		panic(err)
	}
	return &sqlState{
		db:   db,
		pays: newSQLTable[*payment](db, inTx, pg, "sandbox_payments", pg && isPgx(db)),
		trfs: newSQLTable[*transfer](db, inTx, pg, "sandbox_transfers", false),
		rfds: newSQLTable[*refund](db, inTx, pg, "sandbox_refunds", false),
	}
}

// newSQLTable is the table name, its statements written once.
func newSQLTable[T record](db *bun.DB, inTx txRunner, pg bool, name string, cached bool) *sqlTable[T] {
	t := &sqlTable[T]{db: db, inTx: inTx, pg: pg, name: name, cached: cached}
	// A conflict means another create under the key (on any PSP sharing
	// the database) won: the caller answers with that record.
	t.insertSQL = "INSERT INTO " + name + " (idem_key, id, state, due_at, data) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING"
	t.countedSQL = "WITH counted AS (" + countCreate + "), inserted AS (" + t.insertSQL + " RETURNING 1) SELECT count(*) FROM inserted"
	if cached {
		t.countedSQL = sqltext.Dollar(t.countedSQL, 0)
	}
	return t
}

// txRunner runs fn as a write transaction (PSPConfig.InTx).
type txRunner = func(ctx context.Context, fn func(ctx context.Context, tx bun.Tx) error) error

func (s *sqlState) payments() table[*payment]   { return s.pays }
func (s *sqlState) transfers() table[*transfer] { return s.trfs }
func (s *sqlState) refunds() table[*refund]     { return s.rfds }

func (s *sqlState) countCreate(ctx context.Context, key string) error {
	_, err := s.db.ExecContext(ctx, countCreate, key)
	return err
}

func (s *sqlState) createCalls(ctx context.Context, key string) (int, error) {
	var n int
	err := s.db.QueryRowContext(ctx, "SELECT calls FROM sandbox_create_calls WHERE idem_key = ?", key).Scan(&n)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	return n, err
}

// isPgx reports whether db's driver is pgx's database/sql driver.
func isPgx(db *bun.DB) bool {
	_, ok := db.DB.Driver().(*stdlib.Driver)
	return ok
}

// sqlTable is one of the record tables.
type sqlTable[T record] struct {
	db   *bun.DB
	inTx txRunner // PSPConfig.InTx; nil: none
	pg   bool
	name string
	// cached: insert's statement goes with parameters, prepared once per
	// connection by pgx (its statement cache), not as text to parse and
	// plan every time.
	cached bool
	// insertSQL inserts a record; countedSQL (PostgreSQL) also counts its
	// create, with $n placeholders when cached.
	insertSQL, countedSQL string
	// countStmt and insertStmt are a create's statements on SQLite with
	// inTx, prepared once on db (and once more on each connection's first
	// use) instead of parsed at every create; nil while not prepared, or
	// when preparing failed (they then go as text).
	prepareOnce           sync.Once
	countStmt, insertStmt *sql.Stmt
}

// runInTx runs fn as a transaction: with PSPConfig.InTx when set.
func (t *sqlTable[T]) runInTx(ctx context.Context, fn func(ctx context.Context, tx bun.Tx) error) error {
	if t.inTx != nil {
		return t.inTx(ctx, fn)
	}
	return t.db.RunInTx(ctx, nil, fn)
}

// columns are the values of a record's row.
func columns[T record](rec T) (key, id, state string, dueAt any, data string, err error) {
	b, err := json.Marshal(rec)
	if err != nil {
		return "", "", "", nil, "", err
	}
	l := rec.base()
	if at, ok := l.attention(); ok {
		dueAt = at.UnixMicro()
	}
	return l.Key, l.ID, l.State, dueAt, string(b), nil
}

func (t *sqlTable[T]) insert(ctx context.Context, rec T) (bool, error) {
	key, id, state, dueAt, data, err := columns(rec)
	if err != nil {
		return false, err
	}
	pc := countWith(ctx, key)
	switch {
	case pc == nil || (!t.pg && t.inTx == nil):
		// On SQLite, a statement outside a transaction queues for the
		// process's writer (sqlstore's pool) instead of polling the
		// file's lock as db.RunInTx would: the count follows.
		res, err := t.db.ExecContext(ctx, t.insertSQL, key, id, state, dueAt, data)
		if err != nil {
			return false, err
		}
		n, err := res.RowsAffected()
		return n == 1, err
	case !t.pg:
		// SQLite with PSPConfig.InTx: the count and the record in one
		// transaction, which queues for the process's writer.
		t.prepareOnce.Do(func() {
			t.countStmt, _ = t.db.DB.PrepareContext(context.WithoutCancel(ctx), countCreate)
			t.insertStmt, _ = t.db.DB.PrepareContext(context.WithoutCancel(ctx), t.insertSQL)
		})
		var n int64
		err := t.inTx(ctx, func(ctx context.Context, tx bun.Tx) error {
			if _, err := execIn(ctx, tx, t.countStmt, countCreate, key); err != nil {
				return err
			}
			res, err := execIn(ctx, tx, t.insertStmt, t.insertSQL, key, id, state, dueAt, data)
			if err != nil {
				return err
			}
			n, err = res.RowsAffected()
			return err
		})
		if err != nil {
			return false, err
		}
		pc.done = true
		return n == 1, nil
	}
	// On PostgreSQL the create's count goes in the same statement: one
	// round trip, and the count and the record commit together.
	var n int
	if t.cached {
		err = t.db.DB.QueryRowContext(ctx, t.countedSQL, pgx.QueryExecModeCacheStatement,
			key, key, id, state, dueAt, data).Scan(&n)
	} else {
		err = t.db.QueryRowContext(ctx, t.countedSQL, key, key, id, state, dueAt, data).Scan(&n)
	}
	if err != nil {
		return false, err
	}
	pc.done = true
	return n == 1, nil
}

// execIn runs query in tx: as stmt, its prepared form, when there is one.
func execIn(ctx context.Context, tx bun.Tx, stmt *sql.Stmt, query string, args ...any) (sql.Result, error) {
	if stmt != nil {
		return tx.Tx.StmtContext(ctx, stmt).ExecContext(ctx, args...)
	}
	return tx.ExecContext(ctx, query, args...)
}

// countCreate counts one create request under a key.
const countCreate = `INSERT INTO sandbox_create_calls (idem_key, calls) VALUES (?, 1)
		ON CONFLICT (idem_key) DO UPDATE SET calls = sandbox_create_calls.calls + 1`

func (t *sqlTable[T]) update(ctx context.Context, l lookup, fn func(T)) (bool, error) {
	if !paykit.ValidText(l.value) {
		return false, nil // a NUL or invalid UTF-8 names no record (and the database would refuse it)
	}
	col := "idem_key"
	if l.byID {
		col = "id"
	}
	lock := ""
	if t.pg {
		lock = " FOR UPDATE"
	}
	found := false
	err := t.runInTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		var before string
		err := tx.QueryRowContext(ctx, "SELECT data FROM "+t.name+" WHERE "+col+" = ?"+lock, l.value).Scan(&before)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		found = true
		var rec T
		if err := json.Unmarshal([]byte(before), &rec); err != nil {
			return fmt.Errorf("sandbox: %s record %s: %w", t.name, l.value, err)
		}
		fn(rec)
		key, _, state, dueAt, after, err := columns(rec)
		if err != nil || after == before {
			return err
		}
		_, err = tx.ExecContext(ctx, "UPDATE "+t.name+" SET state = ?, due_at = ?, data = ? WHERE idem_key = ?", state, dueAt, after, key)
		return err
	})
	return found, err
}

func (t *sqlTable[T]) list(ctx context.Context, fn func(T)) error {
	rows, err := t.db.QueryContext(ctx, "SELECT data FROM "+t.name+" ORDER BY seq")
	if err != nil {
		return err
	}
	defer rows.Close()
	var recs []T
	for rows.Next() {
		var data string
		if err := rows.Scan(&data); err != nil {
			return err
		}
		var rec T
		if err := json.Unmarshal([]byte(data), &rec); err != nil {
			return fmt.Errorf("sandbox: %s record: %w", t.name, err)
		}
		recs = append(recs, rec)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	rows.Close() // before fn, which may use the database (SQLite may have one connection)
	for _, rec := range recs {
		fn(rec)
	}
	return nil
}

func (t *sqlTable[T]) due(ctx context.Context, now time.Time) ([]string, error) {
	rows, err := t.db.QueryContext(ctx, "SELECT idem_key FROM "+t.name+" WHERE due_at <= ? ORDER BY due_at, seq LIMIT ?",
		now.UnixMicro(), dueBatch)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var keys []string
	for rows.Next() {
		var key string
		if err := rows.Scan(&key); err != nil {
			return nil, err
		}
		keys = append(keys, key)
	}
	return keys, rows.Err()
}
