// Package sandboxsql keeps the sandbox PSP's state in the sandbox_ tables
// of a SQLite or PostgreSQL database (sandbox.PSPConfig.State), where it
// outlives the process and is shared by every PSP on the database. It is a
// package of its own so that a host keeping the PSP in memory does not
// link the database drivers.
package sandboxsql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"

	"github.com/paykit/paykit/internal/sqltext"
	"github.com/paykit/paykit/internal/wire"
	"github.com/paykit/paykit/provider/sandbox"
)

// The SQL state keeps each record as JSON in a data column, beside the
// columns that find it: idem_key and id (both unique), seq (creation
// order), due_at (attention time in Unix microseconds, NULL when none)
// for the callback round, and merchant and line_at (the time of its first
// settlement line not yet settled, NULL when none) for settlement. The
// settlement batches are JSON too, in seq order. Concurrency is the
// database's: a unique key decides which of two creates under one key
// wins, and an update runs in a transaction that locks the row (FOR
// UPDATE on PostgreSQL; on SQLite the write lock, taken at BEGIN with
// sqlstore's _txlock=immediate); a settlement close also takes an
// advisory lock on PostgreSQL, so that closes run one at a time.

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
	// Settlement: each record's merchant and the time of its first line
	// not yet settled (Unix microseconds, NULL when none), the disputes,
	// and the batches in the order stored.
	`ALTER TABLE sandbox_payments ADD COLUMN merchant TEXT NOT NULL DEFAULT '';
	ALTER TABLE sandbox_payments ADD COLUMN line_at BIGINT;
	CREATE INDEX sandbox_payments_line_at ON sandbox_payments (line_at) WHERE line_at IS NOT NULL;
	CREATE INDEX sandbox_payments_merchant ON sandbox_payments (merchant) WHERE line_at IS NOT NULL;
	ALTER TABLE sandbox_transfers ADD COLUMN merchant TEXT NOT NULL DEFAULT '';
	ALTER TABLE sandbox_transfers ADD COLUMN line_at BIGINT;
	ALTER TABLE sandbox_refunds ADD COLUMN merchant TEXT NOT NULL DEFAULT '';
	ALTER TABLE sandbox_refunds ADD COLUMN line_at BIGINT;
	CREATE INDEX sandbox_refunds_line_at ON sandbox_refunds (line_at) WHERE line_at IS NOT NULL;
	CREATE INDEX sandbox_refunds_merchant ON sandbox_refunds (merchant) WHERE line_at IS NOT NULL;
	CREATE TABLE sandbox_disputes (
		seq      %[1]s,
		idem_key TEXT   NOT NULL UNIQUE,
		id       TEXT   NOT NULL UNIQUE,
		state    TEXT   NOT NULL,
		due_at   BIGINT,
		merchant TEXT   NOT NULL DEFAULT '',
		line_at  BIGINT,
		data     TEXT   NOT NULL
	);
	CREATE INDEX sandbox_disputes_due_at ON sandbox_disputes (due_at);
	CREATE INDEX sandbox_disputes_line_at ON sandbox_disputes (line_at) WHERE line_at IS NOT NULL;
	CREATE INDEX sandbox_disputes_merchant ON sandbox_disputes (merchant) WHERE line_at IS NOT NULL;
	CREATE TABLE sandbox_settlement_batches (
		seq      %[1]s,
		id       TEXT   NOT NULL UNIQUE,
		merchant TEXT   NOT NULL,
		data     TEXT   NOT NULL
	)`,
}

// settleLockID is the PostgreSQL advisory lock that runs Settles one at a
// time, so that batches commit in the order of their seq.
const settleLockID = 0x73616e64626f79

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

// State is the PSP's state in a database migrated by Migrate.
type State struct {
	db     *bun.DB
	inTx   TxRunner // nil: none
	pg     bool
	tables map[string]*table
}

// TxRunner runs fn as a write transaction, as sqlstore's Store.RunInTx
// does.
type TxRunner = func(ctx context.Context, fn func(ctx context.Context, tx bun.Tx) error) error

var _ sandbox.State = (*State)(nil)

// New returns the state on db (SQLite or PostgreSQL), migrated by
// Migrate. inTx, when not nil, runs its write transactions: give
// sqlstore's Store.RunInTx for a database that Store opened, so that on
// SQLite they queue and commit in groups with its other writers (a
// create's record and count then commit together); nil runs them with
// db.RunInTx. A SQLite database must be opened with sqlstore's settings
// (sqlstore.Open: transactions take the write lock at BEGIN, which the
// read-modify-writes rely on there).
func New(db *bun.DB, inTx TxRunner) (*State, error) {
	pg, err := isPG(db)
	if err != nil {
		return nil, err
	}
	return &State{db: db, inTx: inTx, pg: pg, tables: map[string]*table{
		"payments":  newTable(db, inTx, pg, "sandbox_payments", pg && isPgx(db)),
		"transfers": newTable(db, inTx, pg, "sandbox_transfers", false),
		"refunds":   newTable(db, inTx, pg, "sandbox_refunds", false),
		"disputes":  newTable(db, inTx, pg, "sandbox_disputes", false),
	}}, nil
}

// newTable is the table name, its statements written once.
func newTable(db *bun.DB, inTx TxRunner, pg bool, name string, cached bool) *table {
	t := &table{db: db, inTx: inTx, pg: pg, name: name, cached: cached}
	// A conflict means another create under the key (on any PSP sharing
	// the database) won: the caller answers with that record.
	t.insertSQL = "INSERT INTO " + name + " (idem_key, id, state, due_at, merchant, line_at, data) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING"
	t.countedSQL = "WITH counted AS (" + countCreate + "), inserted AS (" + t.insertSQL + " RETURNING 1) SELECT count(*) FROM inserted"
	if cached {
		t.countedSQL = sqltext.Dollar(t.countedSQL, 0)
	}
	return t
}

// Records implements sandbox.State. It panics on an unknown kind.
func (s *State) Records(kind string) sandbox.Records {
	t, ok := s.tables[kind]
	if !ok {
		panic("sandboxsql: no records of kind " + kind)
	}
	return t
}

// CountCreate implements sandbox.State.
func (s *State) CountCreate(ctx context.Context, key string) error {
	_, err := s.db.ExecContext(ctx, countCreate, key)
	return err
}

// CreateCalls implements sandbox.State.
func (s *State) CreateCalls(ctx context.Context, key string) (int, error) {
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

// table is one of the record tables.
type table struct {
	db   *bun.DB
	inTx TxRunner // nil: none
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

// runInTx runs fn as a transaction: with inTx when set.
func (t *table) runInTx(ctx context.Context, fn func(ctx context.Context, tx bun.Tx) error) error {
	if t.inTx != nil {
		return t.inTx(ctx, fn)
	}
	return t.db.RunInTx(ctx, nil, fn)
}

// dueAt is r's due_at column: Unix microseconds, or NULL.
func dueAt(r sandbox.Record) any { return micros(r.Due) }

// micros is t in Unix microseconds, or NULL for the zero time.
func micros(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UnixMicro()
}

// Insert implements sandbox.Records.
func (t *table) Insert(ctx context.Context, r sandbox.Record, count bool) (stored, counted bool, err error) {
	key, id, state, due, merchant, lineAt, data := r.Key, r.ID, r.State, dueAt(r), r.Merchant, micros(r.LineAt), string(r.Data)
	switch {
	case !count || (!t.pg && t.inTx == nil):
		// On SQLite, a statement outside a transaction queues for the
		// process's writer (sqlstore's pool) instead of polling the
		// file's lock as db.RunInTx would: the PSP counts after.
		res, err := t.db.ExecContext(ctx, t.insertSQL, key, id, state, due, merchant, lineAt, data)
		if err != nil {
			return false, false, err
		}
		n, err := res.RowsAffected()
		return n == 1, false, err
	case !t.pg:
		// SQLite with inTx: the count and the record in one transaction,
		// which queues for the process's writer.
		t.prepareOnce.Do(func() {
			t.countStmt, _ = t.db.DB.PrepareContext(context.WithoutCancel(ctx), countCreate)
			t.insertStmt, _ = t.db.DB.PrepareContext(context.WithoutCancel(ctx), t.insertSQL)
		})
		var n int64
		err := t.inTx(ctx, func(ctx context.Context, tx bun.Tx) error {
			if _, err := execIn(ctx, tx, t.countStmt, countCreate, key); err != nil {
				return err
			}
			res, err := execIn(ctx, tx, t.insertStmt, t.insertSQL, key, id, state, due, merchant, lineAt, data)
			if err != nil {
				return err
			}
			n, err = res.RowsAffected()
			return err
		})
		if err != nil {
			return false, false, err
		}
		return n == 1, true, nil
	}
	// On PostgreSQL the create's count goes in the same statement: one
	// round trip, and the count and the record commit together.
	var n int
	if t.cached {
		err = t.db.DB.QueryRowContext(ctx, t.countedSQL, pgx.QueryExecModeCacheStatement,
			key, key, id, state, due, merchant, lineAt, data).Scan(&n)
	} else {
		err = t.db.QueryRowContext(ctx, t.countedSQL, key, key, id, state, due, merchant, lineAt, data).Scan(&n)
	}
	if err != nil {
		return false, false, err
	}
	return n == 1, true, nil
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

// Update implements sandbox.Records.
func (t *table) Update(ctx context.Context, byID bool, value string, fn func(data []byte) (sandbox.Record, error)) (bool, error) {
	if !wire.ValidText(value) {
		return false, nil // a NUL or invalid UTF-8 names no record (and the database would refuse it)
	}
	col := "idem_key"
	if byID {
		col = "id"
	}
	lock := ""
	if t.pg {
		lock = " FOR UPDATE"
	}
	found := false
	err := t.runInTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		var before string
		err := tx.QueryRowContext(ctx, "SELECT data FROM "+t.name+" WHERE "+col+" = ?"+lock, value).Scan(&before)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		found = true
		r, err := fn([]byte(before))
		if err != nil || string(r.Data) == before {
			return err
		}
		return t.write(ctx, tx, r)
	})
	return found, err
}

// write stores r over the record under its key, in tx.
func (t *table) write(ctx context.Context, tx bun.Tx, r sandbox.Record) error {
	_, err := tx.ExecContext(ctx, "UPDATE "+t.name+" SET state = ?, due_at = ?, merchant = ?, line_at = ?, data = ? WHERE idem_key = ?",
		r.State, dueAt(r), r.Merchant, micros(r.LineAt), string(r.Data), r.Key)
	return err
}

// List implements sandbox.Records.
func (t *table) List(ctx context.Context, fn func(data []byte) error) error {
	rows, err := t.db.QueryContext(ctx, "SELECT data FROM "+t.name+" ORDER BY seq")
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var data []byte
		if err := rows.Scan(&data); err != nil {
			return err
		}
		if err := fn(data); err != nil {
			return err
		}
	}
	return rows.Err()
}

// Due implements sandbox.Records.
func (t *table) Due(ctx context.Context, now time.Time, limit int) ([]string, error) {
	rows, err := t.db.QueryContext(ctx, "SELECT idem_key FROM "+t.name+" WHERE due_at <= ? ORDER BY due_at, seq LIMIT ?",
		now.UnixMicro(), limit)
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

// settleKinds are the kinds of records that bring settlement lines, in
// the order Settle gives them.
var settleKinds = []string{"payments", "refunds", "disputes"}

// Settle implements sandbox.State.
func (s *State) Settle(ctx context.Context, sel sandbox.Selection, fn func([]sandbox.KindData) ([]sandbox.KindRecord, []sandbox.Batch, error)) error {
	lock := ""
	if s.pg {
		lock = " FOR UPDATE"
	}
	run := func(ctx context.Context, tx bun.Tx) error {
		if s.pg {
			// Held until commit: a concurrent Settle waits, and its
			// batches get later seqs and commit later.
			if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock(?)", settleLockID); err != nil {
				return err
			}
		}
		var found []sandbox.KindData
		for _, kind := range settleKinds {
			q := "SELECT data FROM " + s.tables[kind].name + " WHERE line_at < ?"
			args := []any{sel.Before.UnixMicro()}
			if sel.Merchant != "" {
				q += " OR (merchant = ? AND line_at IS NOT NULL)"
				args = append(args, sel.Merchant)
			}
			rows, err := tx.QueryContext(ctx, q+" ORDER BY seq"+lock, args...)
			if err != nil {
				return err
			}
			for rows.Next() {
				var data []byte
				if err := rows.Scan(&data); err != nil {
					rows.Close()
					return err
				}
				found = append(found, sandbox.KindData{Kind: kind, Data: data})
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return err
			}
		}
		changed, batches, err := fn(found)
		if err != nil {
			return err
		}
		for _, c := range changed {
			t, ok := s.tables[c.Kind]
			if !ok {
				return fmt.Errorf("sandboxsql: no records of kind %s", c.Kind)
			}
			if err := t.write(ctx, tx, c.Record); err != nil {
				return err
			}
		}
		for _, b := range batches {
			if _, err := tx.ExecContext(ctx, "INSERT INTO sandbox_settlement_batches (id, merchant, data) VALUES (?, ?, ?)",
				b.ID, b.Merchant, string(b.Data)); err != nil {
				return err
			}
		}
		return nil
	}
	if s.inTx != nil {
		return s.inTx(ctx, run)
	}
	return s.db.RunInTx(ctx, nil, run)
}

// Batches implements sandbox.State.
func (s *State) Batches(ctx context.Context, after string, limit int, fn func(data []byte) error) (bool, error) {
	var from int64
	if after != "" {
		if !wire.ValidText(after) {
			return false, nil
		}
		err := s.db.QueryRowContext(ctx, "SELECT seq FROM sandbox_settlement_batches WHERE id = ?", after).Scan(&from)
		if errors.Is(err, sql.ErrNoRows) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
	}
	rows, err := s.db.QueryContext(ctx, "SELECT data FROM sandbox_settlement_batches WHERE seq > ? ORDER BY seq LIMIT ?", from, limit)
	if err != nil {
		return false, err
	}
	defer rows.Close()
	for rows.Next() {
		var data []byte
		if err := rows.Scan(&data); err != nil {
			return false, err
		}
		if err := fn(data); err != nil {
			return false, err
		}
	}
	return true, rows.Err()
}
