package sqlstore

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/hex"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/stdlib"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/schema"

	"github.com/paykit/paykit/internal/sqltext"
)

// The writes of the create paths are prepared, so that the database does
// not parse and plan them every time (on PostgreSQL that had been about a
// third of the server's CPU per create, on SQLite a fifth of the
// process's). The values are bun's own, as it would write them in the
// statement's text.
//
// On PostgreSQL a batched transaction sends them as EXECUTE of statements
// prepared once per connection (PREPARE, in SQL, so that they still go in
// the batch's one multi-statement query). A column bun would set to
// DEFAULT gets NULL, which the prepared statement turns into the column's
// default (COALESCE) when it has one other than NULL; a row that would
// need a NULL of its own in such a column is sent as text.
//
// On SQLite they are database/sql statements with ? parameters (it keeps
// one per connection), bun's literals read back into the values they
// stand for (sqliteValue); bun writes no DEFAULT there, and a model that
// would make it (notnull or default tags) is not prepared.

// preparedInserts and preparedUpdates are the models whose writes are
// prepared: those of the create paths, and the balance transaction a
// succeeded payment writes.
var (
	preparedInserts = []any{
		(*paymentIntentRow)(nil), (*payoutIntentRow)(nil), (*checkoutRow)(nil), (*refundRow)(nil),
		(*idempotencyRow)(nil), (*jobRow)(nil), (*eventRow)(nil), (*ledgerEntryRow)(nil), (*balanceTxnRow)(nil),
	}
	// preparedUpdates are updated by updateIntent (scopeWhere) or by
	// updateIdempotencyRow (keyWhere).
	preparedUpdates = map[any]string{
		(*paymentIntentRow)(nil): scopeWhere, (*payoutIntentRow)(nil): scopeWhere,
		(*checkoutRow)(nil): scopeWhere, (*refundRow)(nil): scopeWhere,
		(*balanceTxnRow)(nil): scopeWhere, (*idempotencyRow)(nil): keyWhere,
	}
)

// preparedRaw are statements of SQLite's written by hand, prepared as they
// are (their ? placeholders become parameters).
var preparedRaw = []string{fanOutSQLite}

// The WHERE clauses of the prepared versioned updates, after the SET
// parameters: updateIntent's and updateIdempotencyRow's.
const (
	scopeWhere = `id = ? AND (merchant_id = ? AND environment = ?) IS TRUE AND version = ?`
	keyWhere   = `merchant_id = ? AND environment = ? AND "key" = ? AND version = ?`
)

// preparedKey marks, in a connection's pgconn CustomData, that the
// statements are prepared on it.
const preparedKey = "paykit.prepared"

// prepared is a Store's prepared statements.
type prepared struct {
	pg       bool
	mu       sync.Mutex
	gen      schema.QueryGen
	built    atomic.Bool // set once the statements are built; read without mu
	disabled bool        // they could not be prepared: everything goes as text
	retryAt  time.Time   // the tables were missing: not built again before then
	setup    string      // PostgreSQL: the PREPARE statements, one query
	stmts    map[stmtKey]*preparedStmt
	raw      map[string]*sql.Stmt // SQLite: preparedRaw's
}

type stmtKey struct {
	typ    reflect.Type // the model's struct type
	update bool
}

// preparedStmt is one prepared INSERT or versioned UPDATE of a model.
type preparedStmt struct {
	name     string          // PostgreSQL: the statement's name
	stmt     *sql.Stmt       // SQLite: a transaction takes it with StmtContext
	fields   []*schema.Field // the parameters, then the WHERE's for an update
	defaults []bool          // PostgreSQL: field i's column has a default other than NULL
}

// errNotMigrated: a table to prepare for is missing (Migrate has not run
// yet); the statements are built on a later transaction.
var errNotMigrated = errors.New("sqlstore: prepare: schema not migrated")

// notMigratedRetry is how long statements found unbuildable for missing
// tables wait before the next try (the catalog query is not free).
const notMigratedRetry = 10 * time.Second

// queryer reads the catalog.
type queryer interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// ready builds the statements on the first call, reading the catalog with
// q (on PostgreSQL the batch's connection, not the Store's pool, whose
// connections may all be waiting here); it reports whether they can be
// used. A failure other than ctx's disables them for good.
func (p *prepared) ready(ctx context.Context, db *bun.DB, q queryer) bool {
	if p.built.Load() {
		return true
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.built.Load() || p.disabled || time.Now().Before(p.retryAt) {
		return p.built.Load()
	}
	if err := p.build(ctx, db, q); err != nil {
		switch {
		case errors.Is(err, errNotMigrated):
			p.retryAt = time.Now().Add(notMigratedRetry)
		case ctx.Err() == nil:
			p.disabled = true
		}
		return false
	}
	p.built.Store(true)
	return true
}

// catalogQuery lists each table's columns with their defaults.
func (p *prepared) catalogQuery() string {
	if p.pg {
		return `SELECT table_name, column_name, column_default
			FROM information_schema.columns WHERE table_schema = current_schema()`
	}
	return `SELECT m.name, c.name, c.dflt_value FROM sqlite_master m, pragma_table_info(m.name) c
		WHERE m.type = 'table'`
}

// build writes the statements from the models and the columns' defaults
// in the database.
func (p *prepared) build(ctx context.Context, db *bun.DB, q queryer) error {
	tables := map[string]bool{}
	colDefaults := map[string]string{} // table.column -> its default, where it has one
	rows, err := q.QueryContext(ctx, p.catalogQuery())
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var table, column string
		var def sql.NullString
		if err := rows.Scan(&table, &column, &def); err != nil {
			return err
		}
		tables[table] = true
		if def.Valid {
			colDefaults[table+"."+column] = def.String
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}

	p.gen = db.QueryGen()
	p.stmts = map[stmtKey]*preparedStmt{}
	var setup strings.Builder
	// value is the parameter n of field f (on PostgreSQL its column's
	// default when NULL), and whether it is the default when NULL.
	value := func(t *schema.Table, f *schema.Field, n int) (string, bool) {
		if !p.pg {
			return "?", false
		}
		if def, ok := colDefaults[t.Name+"."+f.Name]; ok {
			return fmt.Sprintf("COALESCE($%d, %s)", n, def), true
		}
		return fmt.Sprintf("$%d", n), false
	}
	// add prepares query as s, for key.
	add := func(key stmtKey, s *preparedStmt, query string) error {
		if p.pg {
			fmt.Fprintf(&setup, "PREPARE %s AS %s;\n", s.name, query)
		} else {
			var err error
			if s.stmt, err = db.DB.PrepareContext(ctx, query); err != nil {
				return err
			}
		}
		p.stmts[key] = s
		return nil
	}
	// table is model m's table; skip when its writes go as text.
	table := func(m any) (t *schema.Table, skip bool, err error) {
		t = db.Table(reflect.TypeOf(m).Elem())
		if !tables[t.Name] {
			return nil, false, fmt.Errorf("%w: no table %s", errNotMigrated, t.Name)
		}
		return t, !p.pg && writesDefaults(t), nil
	}
	for _, m := range preparedInserts {
		t, skip, err := table(m)
		if err != nil {
			return err
		}
		if skip {
			continue
		}
		s := &preparedStmt{name: "paykit_insert_" + t.Name, fields: t.Fields}
		cols := make([]string, len(t.Fields))
		vals := make([]string, len(t.Fields))
		for i, f := range t.Fields {
			cols[i] = string(f.SQLName)
			var def bool
			vals[i], def = value(t, f, i+1)
			s.defaults = append(s.defaults, def)
		}
		query := fmt.Sprintf("INSERT INTO %s (%s) VALUES (%s)", t.SQLName, strings.Join(cols, ", "), strings.Join(vals, ", "))
		if !p.pg {
			query += " ON CONFLICT DO NOTHING" // as insert's unbatched run
		}
		if err := add(stmtKey{t.Type, false}, s, query); err != nil {
			return err
		}
	}
	for m, where := range preparedUpdates {
		t, skip, err := table(m)
		if err != nil {
			return err
		}
		if skip {
			continue
		}
		s := &preparedStmt{name: "paykit_update_" + t.Name}
		var sets []string
		for _, f := range t.DataFields {
			if f.SkipUpdate() {
				continue
			}
			v, def := value(t, f, len(s.fields)+1)
			sets = append(sets, string(f.SQLName)+" = "+v)
			s.fields = append(s.fields, f)
			s.defaults = append(s.defaults, def)
		}
		query := fmt.Sprintf("UPDATE %s SET %s WHERE %s", t.SQLName, strings.Join(sets, ", "), where)
		if p.pg {
			query = "WITH u AS (" + sqltext.Dollar(query, len(s.fields)) + " RETURNING 1) SELECT 1 / count(*) FROM u"
		}
		if err := add(stmtKey{t.Type, true}, s, query); err != nil {
			return err
		}
	}
	if !p.pg {
		p.raw = map[string]*sql.Stmt{}
		for _, query := range preparedRaw {
			st, err := db.DB.PrepareContext(ctx, query)
			if err != nil {
				return err
			}
			p.raw[query] = st
		}
	}
	p.setup = setup.String()
	return nil
}

// writesDefaults reports whether bun may write a column's default, not
// NULL or the value, for some field of t on SQLite: one with a default tag,
// or a not-null one (a primary key, or tagged notnull) that can be nil or
// nullzero.
func writesDefaults(t *schema.Table) bool {
	for _, f := range t.Fields {
		if f.SQLDefault != "" || (f.NotNull && (f.IsPtr || f.NullZero)) {
			return true
		}
	}
	return false
}

// onConn prepares the statements on conn unless they are already; it
// reports whether they are there. When preparing fails the statements are
// not used again.
func (p *prepared) onConn(ctx context.Context, conn bun.Conn) bool {
	var ok bool
	_ = conn.Raw(func(dc any) error {
		sc, isPgx := dc.(*stdlib.Conn)
		if !isPgx {
			return nil
		}
		data := sc.Conn().PgConn().CustomData()
		if data[preparedKey] == true {
			ok = true
			return nil
		}
		if _, err := sc.Conn().Exec(ctx, p.setup); err != nil {
			if ctx.Err() != nil {
				return driver.ErrBadConn // in an unknown state: discard it
			}
			p.mu.Lock()
			p.disabled = true
			p.built.Store(false)
			p.mu.Unlock()
			// The pool's connections prepare nothing else (simple
			// protocol): drop what the failed setup left.
			if _, err := sc.Conn().Exec(ctx, "DEALLOCATE ALL"); err != nil {
				return driver.ErrBadConn
			}
			return nil
		}
		data[preparedKey] = true
		ok = true
		return nil
	})
	return ok
}

// close closes SQLite's statements; p is not used again.
func (p *prepared) close() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, s := range p.stmts {
		if s.stmt != nil {
			_ = s.stmt.Close()
		}
	}
	for _, st := range p.raw {
		_ = st.Close()
	}
	p.disabled = true
	p.built.Store(false)
}

// toDefault reports whether bun writes field f of the row at v as DEFAULT
// (NULL on SQLite), not its value: its rule for an INSERT, or for an
// UPDATE's SET.
func toDefault(f *schema.Field, v reflect.Value, update bool) bool {
	if f.IsPtr && f.HasNilValue(v) {
		return true
	}
	if update {
		return f.NullZero && f.HasZeroValue(v)
	}
	return f.HasZeroValue(v) && (f.NullZero || f.SQLDefault != "")
}

// stmt is row's prepared insert (or update) with the row's struct value;
// nil when it has none.
func (p *prepared) stmt(row any, update bool) (*preparedStmt, reflect.Value) {
	v := reflect.ValueOf(row).Elem()
	return p.stmts[stmtKey{v.Type(), update}], v
}

// insert appends to b the EXECUTE that inserts row on PostgreSQL, or is
// false when row must go as text (or p is nil).
func (p *prepared) insert(b []byte, row any) ([]byte, bool) { return p.execute(b, row, false) }

// update appends to b the EXECUTE of the versioned update of row on
// PostgreSQL, whose WHERE takes where's values (scopeWhere's or
// keyWhere's), or is false when row must go as text (or p is nil).
func (p *prepared) update(b []byte, row any, where ...any) ([]byte, bool) {
	return p.execute(b, row, true, where...)
}

// execute appends to b the EXECUTE of row's prepared insert or update:
// NULL for the fields bun writes as DEFAULT, bun's value for the others,
// then where's. When false, what it appended is to be dropped.
func (p *prepared) execute(b []byte, row any, update bool, where ...any) ([]byte, bool) {
	if p == nil || !p.pg {
		return b, false
	}
	s, v := p.stmt(row, update)
	if s == nil {
		return b, false
	}
	b = append(b, "EXECUTE "...)
	b = append(b, s.name...)
	b = append(b, '(')
	for i, f := range s.fields {
		if i > 0 {
			b = append(b, ", "...)
		}
		if toDefault(f, v, update) {
			b = append(b, "NULL"...)
			continue
		}
		n := len(b)
		b = f.AppendValue(p.gen, b, v)
		if s.defaults[i] && string(b[n:]) == "NULL" {
			return b, false // the prepared statement would write the default
		}
	}
	for _, w := range where {
		b = append(b, ", "...)
		b = p.gen.AppendQuery(b, "?", w)
	}
	return append(b, ')'), true
}

// args is row's prepared insert or update on SQLite with its arguments
// (where's last), or false when row must go as text (or p is nil).
func (p *prepared) args(row any, update bool, where ...any) (*sql.Stmt, []any, bool) {
	if p == nil || p.pg {
		return nil, nil, false
	}
	s, v := p.stmt(row, update)
	if s == nil {
		return nil, nil, false
	}
	args := make([]any, 0, len(s.fields)+len(where))
	var lit []byte
	for _, f := range s.fields {
		if toDefault(f, v, update) {
			args = append(args, nil)
			continue
		}
		lit = f.AppendValue(p.gen, lit[:0], v)
		a, ok := sqliteValue(lit)
		if !ok {
			return nil, nil, false
		}
		args = append(args, a)
	}
	return s.stmt, append(args, where...), true
}

// rawArgs is query's prepared statement on SQLite (one of preparedRaw)
// with values as its arguments, each as bun would write it; false when it
// goes as text (or p is nil).
func (p *prepared) rawArgs(query string, values ...any) (*sql.Stmt, []any, bool) {
	if p == nil || p.pg || p.raw[query] == nil {
		return nil, nil, false
	}
	args := make([]any, len(values))
	var lit []byte
	for i, v := range values {
		lit = p.gen.AppendQuery(lit[:0], "?", v)
		a, ok := sqliteValue(lit)
		if !ok {
			return nil, nil, false
		}
		args[i] = a
	}
	return p.raw[query], args, true
}

// sqliteValue is the value a literal of bun's SQLite dialect stands for:
// NULL, a string, a blob (X'…'), a boolean or an integer; false for
// anything else.
func sqliteValue(lit []byte) (any, bool) {
	n := len(lit)
	switch {
	case string(lit) == "NULL":
		return nil, true
	case n >= 2 && lit[0] == '\'' && lit[n-1] == '\'':
		return strings.ReplaceAll(string(lit[1:n-1]), "''", "'"), true
	case n >= 3 && lit[0] == 'X' && lit[1] == '\'' && lit[n-1] == '\'':
		b, err := hex.DecodeString(string(lit[2 : n-1]))
		return b, err == nil
	case string(lit) == "TRUE":
		return int64(1), true
	case string(lit) == "FALSE":
		return int64(0), true
	}
	i, err := strconv.ParseInt(string(lit), 10, 64)
	return i, err == nil
}
