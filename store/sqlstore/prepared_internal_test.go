package sqlstore

import (
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"
	"github.com/uptrace/bun"

	"github.com/paykit/paykit"
)

// TestPreparedWritesMatchText checks, on PostgreSQL and SQLite, that a
// prepared insert or versioned update (PostgreSQL: EXECUTE in a batched
// transaction; SQLite: a statement with parameters) leaves the same row as
// the statement bun writes as text, for rows with every field set and rows
// with every field that can be zero at its zero value.
func TestPreparedWritesMatchText(t *testing.T) {
	t.Parallel()
	for name, open := range map[string]func(t *testing.T) *Store{
		"postgres": func(t *testing.T) *Store { return openPostgres(t) },
		"sqlite":   func(t *testing.T) *Store { return openSQLite(t) },
	} {
		t.Run(name, func(t *testing.T) { testPreparedWrites(t, open(t)) })
	}
}

func testPreparedWrites(t *testing.T, s *Store) {
	is := is.New(t)
	ctx := context.Background()
	is.True(s.prep != nil)
	when := time.Date(2026, 3, 4, 5, 6, 7, 890_000_000, time.UTC)

	// fill sets every field of the row at v: strings to a JSON object
	// naming the column and tag (valid text and JSON), numbers to n,
	// times to when; sparse leaves the zero value in all but the key and
	// the numbers (amounts may not be 0).
	fill := func(v reflect.Value, tag string, n int64, sparse bool) {
		for i := 0; i < v.NumField(); i++ {
			f, sf := v.Field(i), v.Type().Field(i)
			col, _, _ := strings.Cut(sf.Tag.Get("bun"), ",")
			key := col == "id" || col == "merchant_id" || col == "environment" || col == "key"
			if sf.Anonymous {
				continue
			}
			if _, num := f.Interface().(int64); sparse && !key && !num && f.Kind() != reflect.Int {
				continue
			}
			switch f.Interface().(type) {
			case string:
				f.SetString(fmt.Sprintf(`{"%s":"%s"}`, col, tag))
			case int64, int:
				f.SetInt(n)
			case []byte:
				f.SetBytes([]byte(`{"b":"` + col + `"}`))
			case time.Time:
				f.Set(reflect.ValueOf(when))
			case *time.Time:
				w := when.Add(time.Hour)
				f.Set(reflect.ValueOf(&w))
			}
		}
	}
	// read is the row of table whose id (or key) is tag (PostgreSQL: as
	// JSON; SQLite: each column quoted), with tag written TAG.
	read := func(typ reflect.Type, table, tag string) string {
		var out string
		q := `SELECT to_jsonb(x) :: text FROM ? x WHERE ` + whereTag(table)
		if !s.pg {
			var cols []string
			for _, f := range s.db.Table(typ).Fields {
				cols = append(cols, "quote("+string(f.SQLName)+")")
			}
			q = `SELECT ` + strings.Join(cols, " || '|' || ") + ` FROM ? x WHERE ` + whereTag(table)
		}
		is.NoErr(s.db.NewRaw(q, bun.Ident(table), tag).Scan(ctx, &out))
		return strings.ReplaceAll(out, tag, "TAG")
	}
	batched := func(fn func(t tx) error) {
		is.NoErr(s.InTx(ctx, func(ptx paykit.Tx) error {
			t := ptx.(tx)
			is.True(t.prep != nil) // the transaction has them prepared
			return fn(t)
		}))
	}
	// text runs fn in a transaction with nothing prepared.
	text := func(fn func(t tx) error) {
		is.NoErr(s.db.RunInTx(ctx, nil, func(ctx context.Context, btx bun.Tx) error { return fn(tx{db: btx, pg: s.pg}) }))
	}
	batched(func(tx) error { return nil }) // builds the statements

	for _, m := range preparedInserts {
		typ := reflect.TypeOf(m).Elem()
		table := s.db.Table(typ).Name
		for _, sparse := range []bool{false, true} {
			name := fmt.Sprintf("%s sparse=%v", table, sparse)
			t.Run(name, func(t *testing.T) {
				is := is.New(t)
				tags := [2]string{"p_" + table + fmt.Sprint(sparse), "t_" + table + fmt.Sprint(sparse)}
				rows := [2]reflect.Value{reflect.New(typ), reflect.New(typ)}
				for i := range rows {
					fill(rows[i].Elem(), tags[i], 5, sparse)
					setTag(rows[i].Elem(), tags[i])
				}
				ok := prepares(s, rows[0].Interface(), false)
				if sparse && !ok {
					t.Skip("sent as text") // a NULL of its own in a column with a default
				}
				is.True(ok)
				batched(func(t tx) error { return t.insert(ctx, table, rows[0].Interface()) })
				text(func(t tx) error { return t.insert(ctx, table, rows[1].Interface()) })
				is.Equal(read(typ, table, tags[0]), read(typ, table, tags[1]))

				where, ok := preparedUpdates[m]
				if !ok {
					return
				}
				// Update both to the other variant, version 5 -> 6.
				for i := range rows {
					next := reflect.New(typ)
					fill(next.Elem(), tags[i]+"u", 6, !sparse)
					setTag(next.Elem(), tags[i])
					for _, f := range []string{"MerchantID", "Environment"} { // its scope stays
						next.Elem().FieldByName(f).Set(rows[i].Elem().FieldByName(f))
					}
					rows[i] = next
				}
				ok = prepares(s, rows[0].Interface(), true)
				is.True(ok || !sparse) // only a sparse row may need text
				update := func(t tx, row reflect.Value, tag string) error {
					if where == keyWhere {
						r := row.Elem().Addr().Interface().(*idempotencyRow)
						scope := paykit.Scope{MerchantID: r.MerchantID, Environment: paykit.Environment(r.Environment)}
						return t.updateIdempotencyRow(ctx, r, scope, tag, 5)
					}
					scope := paykit.Scope{
						MerchantID:  row.Elem().FieldByName("MerchantID").String(),
						Environment: paykit.Environment(row.Elem().FieldByName("Environment").String()),
					}
					return t.updateIntent(ctx, "update", table, row.Interface(), tag, scope, 5)
				}
				batched(func(t tx) error { return update(t, rows[0], tags[0]) })
				text(func(t tx) error { return update(t, rows[1], tags[1]) })
				is.Equal(read(typ, table, tags[0]), read(typ, table, tags[1]))

				// A stale version fails the prepared update, as the text one.
				err := s.InTx(ctx, func(ptx paykit.Tx) error { return update(ptx.(tx), rows[0], tags[0]) })
				is.True(err != nil)
			})
		}
	}
}

// prepares reports whether s has row's insert (or update) prepared.
func prepares(s *Store, row any, update bool) bool {
	if s.pg && update {
		_, ok := s.prep.update(nil, row, "", "", "", int64(5))
		return ok
	}
	if s.pg {
		_, ok := s.prep.insert(nil, row)
		return ok
	}
	_, _, ok := s.prep.args(row, update)
	return ok
}

// setTag names the row: its id, or an idempotency record's key, is tag.
func setTag(v reflect.Value, tag string) {
	if f := v.FieldByName("Key"); f.IsValid() && !v.FieldByName("ID").IsValid() {
		f.SetString(tag)
		return
	}
	v.FieldByName("ID").SetString(tag)
}

func whereTag(table string) string {
	if table == "idempotency_records" {
		return `"key" = ?`
	}
	return "id = ?"
}

func TestSQLiteValue(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	for lit, want := range map[string]any{
		"NULL": nil, `'it''s'`: "it's", `''`: "", `X'00ff'`: []byte{0, 255},
		"42": int64(42), "-7": int64(-7), "TRUE": int64(1), "FALSE": int64(0),
	} {
		got, ok := sqliteValue([]byte(lit))
		is.True(ok)
		is.Equal(got, want)
	}
	for _, lit := range []string{"1.5", "now()", `X'0g'`, "?!(error)"} {
		_, ok := sqliteValue([]byte(lit))
		is.True(!ok) // sent as text
	}
}

// TestPreparedWaitsForMigrate checks that statements are not built before
// the tables exist, nor tried again on every transaction, and are built
// once they exist.
func TestPreparedWaitsForMigrate(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	s, err := Open(ctx, "sqlite:"+filepath.Join(t.TempDir(), "w.db"))
	is.NoErr(err)
	defer s.Close()
	is.True(!s.prep.ready(ctx, s.db, s.db.DB)) // no tables yet
	is.True(!s.prep.disabled)
	is.NoErr(s.Migrate(ctx))
	is.True(!s.prep.ready(ctx, s.db, s.db.DB)) // not before retryAt
	s.prep.retryAt = time.Time{}
	is.True(s.prep.ready(ctx, s.db, s.db.DB))
}
