package sqlstore

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"reflect"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5/stdlib"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/schema"
)

// On PostgreSQL, a batched transaction sends the inserts and versioned
// updates of the tables a create writes as EXECUTE of statements
// prepared once per connection (PREPARE, in SQL, so that they still go in
// the batch's one multi-statement query). The server then parses a short
// EXECUTE and reuses its plan, where an INSERT or UPDATE sent as text is
// parsed, analysed and planned every time: about a third of the server's
// CPU per create. The values are bun's own, as it would write them in the
// statement; a column bun would set to DEFAULT gets NULL, which the
// prepared statement turns into the column's default (COALESCE) when it
// has one other than NULL. A row that would need a NULL of its own in such
// a column is sent as text, as is everything else.

// preparedInserts and preparedUpdates are the models whose writes are
// prepared: those of the create paths.
var (
	preparedInserts = []any{
		(*paymentIntentRow)(nil), (*payoutIntentRow)(nil), (*checkoutRow)(nil), (*refundRow)(nil),
		(*idempotencyRow)(nil), (*jobRow)(nil), (*eventRow)(nil), (*ledgerEntryRow)(nil),
	}
	// preparedUpdates are updated by updateIntent (scopeWhere) or by
	// UpdateIdempotencyRecord (keyWhere).
	preparedUpdates = map[any]string{
		(*paymentIntentRow)(nil): scopeWhere, (*payoutIntentRow)(nil): scopeWhere,
		(*checkoutRow)(nil): scopeWhere, (*refundRow)(nil): scopeWhere,
		(*idempotencyRow)(nil): keyWhere,
	}
)

// The WHERE clauses of the prepared versioned updates, after the SET
// parameters: updateIntent's and UpdateIdempotencyRecord's.
const (
	scopeWhere = `id = $%d AND (merchant_id = $%d AND environment = $%d) IS TRUE AND version = $%d`
	keyWhere   = `merchant_id = $%d AND environment = $%d AND "key" = $%d AND version = $%d`
)

// preparedKey marks, in a connection's pgconn CustomData, that the
// statements are prepared on it.
const preparedKey = "paykit.prepared"

// prepared is a Store's prepared statements.
type prepared struct {
	mu       sync.Mutex
	gen      schema.QueryGen
	built    bool
	disabled bool   // they could not be prepared: everything goes as text
	setup    string // the PREPARE statements, one query
	stmts    map[stmtKey]*preparedStmt
}

type stmtKey struct {
	typ    reflect.Type // the model's struct type
	update bool
}

// preparedStmt is one prepared INSERT or versioned UPDATE of a model.
type preparedStmt struct {
	name     string
	fields   []*schema.Field // the parameters, then the WHERE's for an update
	defaults []bool          // field i's column has a default other than NULL
}

// ready builds the statements on the first call, reading the catalog on
// conn (not through the Store's pool, whose connections may all be
// waiting here); it reports whether they can be used. A failure other
// than ctx's disables them for good.
func (p *prepared) ready(ctx context.Context, db *bun.DB, conn bun.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.built || p.disabled {
		return p.built
	}
	if err := p.build(ctx, db, conn); err != nil {
		if ctx.Err() == nil {
			p.disabled = true
		}
		return false
	}
	p.built = true
	return true
}

// build writes the PREPARE statements from the models and the columns'
// defaults in the database.
func (p *prepared) build(ctx context.Context, db *bun.DB, conn bun.Conn) error {
	tables := map[string]bool{}
	colDefaults := map[string]string{} // table.column -> its default, where it has one
	rows, err := conn.QueryContext(ctx, `SELECT table_name, column_name, column_default
		FROM information_schema.columns WHERE table_schema = current_schema()`)
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
	// value is the parameter n of field f: its column's default when NULL.
	value := func(t *schema.Table, f *schema.Field, n int) (string, bool) {
		if def, ok := colDefaults[t.Name+"."+f.Name]; ok {
			return fmt.Sprintf("COALESCE($%d, %s)", n, def), true
		}
		return fmt.Sprintf("$%d", n), false
	}
	for _, m := range preparedInserts {
		t := db.Table(reflect.TypeOf(m).Elem())
		if !tables[t.Name] {
			return fmt.Errorf("sqlstore: prepare: no table %s", t.Name)
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
		fmt.Fprintf(&setup, "PREPARE %s AS INSERT INTO %s (%s) VALUES (%s);\n",
			s.name, t.SQLName, strings.Join(cols, ", "), strings.Join(vals, ", "))
		p.stmts[stmtKey{t.Type, false}] = s
	}
	for m, where := range preparedUpdates {
		t := db.Table(reflect.TypeOf(m).Elem())
		if !tables[t.Name] {
			return fmt.Errorf("sqlstore: prepare: no table %s", t.Name)
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
		n := len(s.fields)
		fmt.Fprintf(&setup, "PREPARE %s AS WITH u AS (UPDATE %s SET %s WHERE %s RETURNING 1) SELECT 1 / count(*) FROM u;\n",
			s.name, t.SQLName, strings.Join(sets, ", "), fmt.Sprintf(where, n+1, n+2, n+3, n+4))
		p.stmts[stmtKey{t.Type, true}] = s
	}
	p.setup = setup.String()
	return nil
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
			p.disabled, p.built = true, false
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

// insert is the EXECUTE that inserts row, or false when row must go as
// text (or p is nil).
func (p *prepared) insert(row any) (string, bool) {
	// As bun's INSERT: DEFAULT for these.
	return p.execute(row, false, func(f *schema.Field, v reflect.Value) bool {
		return (f.IsPtr && f.HasNilValue(v)) || (f.HasZeroValue(v) && (f.NullZero || f.SQLDefault != ""))
	})
}

// update is the EXECUTE of the versioned update of row, whose WHERE
// takes where's values (updateIntent's id, scope and version, or
// UpdateIdempotencyRecord's scope, key and version), or false when row
// must go as text (or p is nil).
func (p *prepared) update(row any, where ...any) (string, bool) {
	// As bun's UPDATE: DEFAULT for these.
	return p.execute(row, true, func(f *schema.Field, v reflect.Value) bool {
		return (f.IsPtr && f.HasNilValue(v)) || (f.NullZero && f.HasZeroValue(v))
	}, where...)
}

// execute is the EXECUTE of row's prepared insert or update: NULL for
// the fields toDefault picks, bun's value for the others, then where's.
func (p *prepared) execute(row any, update bool, toDefault func(*schema.Field, reflect.Value) bool, where ...any) (string, bool) {
	if p == nil {
		return "", false
	}
	v := reflect.ValueOf(row).Elem()
	s := p.stmts[stmtKey{v.Type(), update}]
	if s == nil {
		return "", false
	}
	b := make([]byte, 0, 512)
	b = append(b, "EXECUTE "...)
	b = append(b, s.name...)
	b = append(b, '(')
	for i, f := range s.fields {
		if i > 0 {
			b = append(b, ", "...)
		}
		if toDefault(f, v) {
			b = append(b, "NULL"...)
			continue
		}
		n := len(b)
		b = f.AppendValue(p.gen, b, v)
		if s.defaults[i] && string(b[n:]) == "NULL" {
			return "", false // the prepared statement would write the default
		}
	}
	for _, w := range where {
		b = append(b, ", "...)
		b = p.gen.AppendQuery(b, "?", w)
	}
	return string(append(b, ')')), true
}
