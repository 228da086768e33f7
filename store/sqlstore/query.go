package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/uptrace/bun"

	"github.com/paykit/paykit"
)

// uniqueKey is one unique key of a table: the ConflictError.Key it reports
// and the condition that finds a row holding the inserted row's value.
type uniqueKey struct {
	key   string
	where string
	args  []any
}

// insert writes row into table with ON CONFLICT DO NOTHING and, when nothing
// was written, reports which of keys collided. Unlike a failed INSERT, this
// leaves a PostgreSQL transaction usable, so a caller may treat the conflict
// as an answer (an already-enqueued job) and go on.
func (t tx) insert(ctx context.Context, table string, row any, keys ...uniqueKey) error {
	if t.b != nil { // a collision fails the batch: the unbatched run reports it
		if t.b.holdPrepared(func(b []byte) ([]byte, bool) { return t.prep.insert(b, row) }) {
			return nil
		}
		t.b.hold(t.db.NewInsert().Model(row).String())
		return nil
	}
	st, args, prepared := t.sqlitePrepared(row, false)
	for range 3 {
		var res sql.Result
		var err error
		if prepared {
			res, err = t.execPrepared(ctx, st, args)
		} else {
			res, err = t.db.NewInsert().Model(row).On("CONFLICT DO NOTHING").Exec(ctx)
		}
		if err != nil {
			return mapError("insert into "+table, err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return mapError("insert into "+table, err)
		}
		if n > 0 {
			return nil
		}
		for _, k := range keys {
			found, err := exists(ctx, t.db.NewSelect().Table(table).Where(k.where, k.args...))
			if err != nil {
				return mapError("insert into "+table, err)
			}
			if found {
				return &paykit.ConflictError{Entity: entities[table], Key: k.key}
			}
		}
		// The row that collided was deleted in between: try again.
	}
	return fmt.Errorf("%w (insert into %s: the colliding row keeps changing)", paykit.ErrVersionConflict, table)
}

// exists reports whether q finds a row. Unlike bun's Exists it reads
// through QueryContext, whose wait for a connection the Store's pool bounds.
func exists(ctx context.Context, q *bun.SelectQuery) (bool, error) {
	var one int
	err := q.ColumnExpr("1").Limit(1).Scan(ctx, &one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}

// checkUpdated turns the result of a versioned UPDATE or a DELETE into the
// Store's answer: nil when one row changed; otherwise ErrNotFound when
// exists finds no row, else ErrVersionConflict.
func checkUpdated(ctx context.Context, op string, res interface{ RowsAffected() (int64, error) }, existing *bun.SelectQuery) error {
	n, err := res.RowsAffected()
	if err != nil {
		return mapError(op, err)
	}
	if n > 0 {
		return nil
	}
	if existing == nil {
		return paykit.ErrNotFound
	}
	found, err := exists(ctx, existing)
	if err != nil {
		return mapError(op, err)
	}
	if found {
		return paykit.ErrVersionConflict
	}
	return paykit.ErrNotFound
}

// intentKeys are the unique keys of payment and payout intents: the id,
// and the merchant reference within the scope.
func intentKeys(id string, scope paykit.Scope, ref string) []uniqueKey {
	return []uniqueKey{
		{"id", "id = ?", []any{id}},
		{"merchant_reference", "merchant_id = ? AND environment = ? AND merchant_reference = ?",
			[]any{scope.MerchantID, scope.Environment, ref}},
	}
}

// inScope keeps q to the rows of scope.
func inScope[Q interface {
	Where(string, ...any) Q
}](q Q, scope paykit.Scope) Q {
	return q.Where("merchant_id = ?", scope.MerchantID).Where("environment = ?", scope.Environment)
}

// ofScope keeps q, which names its row by primary key, to that row when it
// belongs to scope. The check is written so that no index can serve it
// (IS TRUE over the comparison), which leaves the primary key the only
// way in: without statistics, on a table that grew since its last
// ANALYZE (a new database, the first minute of a load), PostgreSQL would
// otherwise pick an index led by merchant_id and read every row of the
// merchant to find one.
func ofScope[Q interface {
	Where(string, ...any) Q
}](q Q, scope paykit.Scope) Q {
	return q.Where("(merchant_id = ? AND environment = ?) IS TRUE", scope.MerchantID, scope.Environment)
}

// updateIntent writes row, whose Version is already the next one, over the
// intent id of scope under the Version rule: only while the stored version
// is still version.
func (t tx) updateIntent(ctx context.Context, op, table string, row any, id string, scope paykit.Scope, version int64) error {
	q := func() *bun.UpdateQuery {
		return ofScope(t.db.NewUpdate().Model(row).Where("id = ?", id), scope).Where("version = ?", version)
	}
	return t.versionedUpdate(ctx, op, q, func() *bun.SelectQuery {
		return ofScope(t.db.NewSelect().Table(table).Where("id = ?", id), scope)
	}, row, id, scope.MerchantID, string(scope.Environment), version)
}

// versionedUpdate writes row by q's query, a versioned UPDATE whose WHERE
// takes where's values (in scopeWhere's or keyWhere's order), or by its
// prepared statement when the transaction has one (q is then not built).
// In a batched transaction it is held, and the batch learns its outcome;
// otherwise it runs, and its outcome is checkUpdated's with existing's
// query.
func (t tx) versionedUpdate(ctx context.Context, op string, q func() *bun.UpdateQuery, existing func() *bun.SelectQuery, row any, where ...any) error {
	if t.b != nil {
		if !t.b.holdPrepared(func(b []byte) ([]byte, bool) { return t.prep.update(b, row, where...) }) {
			t.b.hold(heldUpdate(q()))
		}
		return nil
	}
	var res sql.Result
	var err error
	if st, args, ok := t.sqlitePrepared(row, true, where...); ok {
		res, err = t.execPrepared(ctx, st, args)
	} else {
		res, err = q().Exec(ctx)
	}
	if err != nil {
		return mapError(op, err)
	}
	return checkUpdated(ctx, op, res, existing())
}

// sqlitePrepared is, in a SQLite transaction, row's prepared insert or
// versioned update (where's values after the row's) with its arguments;
// false when it goes as text.
func (t tx) sqlitePrepared(row any, update bool, where ...any) (*sql.Stmt, []any, bool) {
	if t.sqlTx == nil {
		return nil, nil, false
	}
	return t.prep.args(row, update, where...)
}

// execPrepared runs st with args in t's SQLite transaction.
func (t tx) execPrepared(ctx context.Context, st *sql.Stmt, args []any) (sql.Result, error) {
	if t.detach {
		ctx = context.WithoutCancel(ctx)
	}
	return t.sqlTx.StmtContext(ctx, st).ExecContext(ctx, args...)
}

// filterIntents adds the filters payment and payout lists share; empty
// ones do not filter. after is inclusive, before exclusive.
func filterIntents[S ~string](q *bun.SelectQuery, statuses []S, currency, country, ref string, after, before *time.Time) *bun.SelectQuery {
	if len(statuses) > 0 {
		q = q.Where("status IN (?)", bun.List(statuses))
	}
	if currency != "" {
		q = q.Where("currency = ?", currency)
	}
	if country != "" {
		q = q.Where("country = ?", country)
	}
	if ref != "" {
		q = q.Where("merchant_reference = ?", ref)
	}
	if after != nil {
		q = q.Where("created_at >= ?", after.UTC())
	}
	if before != nil {
		q = q.Where("created_at < ?", before.UTC())
	}
	return q
}

// newestFirst orders q by (created_at, id) descending and keeps the rows
// strictly after pos, at most limit (0: all). The row-value comparison is
// served by the (..., created_at DESC, id DESC) indexes on both backends.
func newestFirst(q *bun.SelectQuery, pos *paykit.Position, limit int) *bun.SelectQuery {
	if pos != nil {
		q = q.Where("(created_at, id) < (?, ?)", pos.CreatedAt.UTC(), pos.ID)
	}
	q = q.OrderExpr("created_at DESC, id DESC")
	if limit > 0 {
		q = q.Limit(int64(limit))
	}
	return q
}

// pagePerValue is the keyset page that page (a newestFirst query on the
// sel it is given, of the values given) selects into rows, for a filter
// that takes several values. With two or more, each value's page is
// selected on its own and the pages merged: each reads its value's index
// in list order, where one IN over the values would read every row of
// them and sort.
func pagePerValue[S ~string](t tx, rows any, values []S, limit int, page func(sel *bun.SelectQuery, values []S) *bun.SelectQuery) *bun.SelectQuery {
	if len(values) < 2 {
		return page(t.db.NewSelect().Model(rows), values)
	}
	var union *bun.SelectQuery
	for i := range values {
		// A subquery of its own: SQLite takes no ORDER BY or LIMIT in a
		// member of a UNION.
		member := t.db.NewSelect().TableExpr("(?) AS page", page(t.db.NewSelect().Model(rows), values[i:i+1]))
		if union == nil {
			union = member
		} else {
			union = union.UnionAll(member)
		}
	}
	sel := t.db.NewSelect().Model(rows).ModelTableExpr("(?) AS ?TableAlias", union).OrderExpr("created_at DESC, id DESC")
	if limit > 0 {
		sel = sel.Limit(int64(limit))
	}
	return sel
}

// utcPtr returns *t in UTC, or nil.
func utcPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

// toJSON encodes *v as JSON text; nil becomes "" (stored as NULL).
func toJSON[T any](v *T) (string, error) {
	if v == nil {
		return "", nil
	}
	b, err := json.Marshal(v)
	return string(b), err
}

// mapToJSON encodes m as a JSON object; a nil map becomes "" (NULL).
func mapToJSON(m map[string]string) (string, error) {
	if m == nil {
		return "", nil
	}
	// Each row write encodes a few of these: the object is framed here, in
	// key order as encoding/json has it, and each string quoted by jsontext.
	var kb [16]string
	keys := kb[:0]
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var ob [512]byte
	b := append(ob[:0], '{')
	var err error
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		if b, err = jsontext.AppendQuote(b, k); err != nil {
			return "", err
		}
		b = append(b, ':')
		if b, err = jsontext.AppendQuote(b, m[k]); err != nil {
			return "", err
		}
	}
	return string(append(b, '}')), nil
}

// fromJSON decodes JSON text into a new T; "" (NULL) gives nil.
func fromJSON[T any](s string) (*T, error) {
	if s == "" {
		return nil, nil
	}
	v := new(T)
	if err := json.Unmarshal([]byte(s), v); err != nil {
		return nil, err
	}
	return v, nil
}

// fromJSONMap decodes a JSON object; "" (NULL) gives a nil map.
func fromJSONMap(s string) (map[string]string, error) {
	m, err := fromJSON[map[string]string](s)
	if m == nil {
		return nil, err
	}
	return *m, err
}
