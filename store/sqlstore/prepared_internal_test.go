package sqlstore

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"
	"github.com/uptrace/bun"

	"github.com/paykit/paykit"
)

// TestPreparedWritesMatchText checks that a prepared insert or versioned
// update (EXECUTE, in a batched transaction) leaves the same row as the
// statement bun writes as text, for rows with every field set and rows
// with every field that can be zero at its zero value.
func TestPreparedWritesMatchText(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	s := openPostgres(t)
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
	// read is the row of table whose id (or key) is tag, as JSON, with
	// tag written TAG.
	read := func(table, tag string) string {
		var out string
		err := s.db.NewRaw(`SELECT to_jsonb(x) :: text FROM ? x WHERE `+whereTag(table), bun.Ident(table), tag).Scan(ctx, &out)
		is.NoErr(err)
		return strings.ReplaceAll(out, tag, "TAG")
	}
	batched := func(fn func(t tx) error) {
		is.NoErr(s.InTx(ctx, func(ptx paykit.Tx) error {
			t := ptx.(tx)
			is.True(t.prep != nil) // the batched transaction has them prepared
			return fn(t)
		}))
	}
	text := func(fn func(t tx) error) { is.NoErr(s.runOne(ctx, fn)) }
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
				_, ok := s.prep.insert(rows[0].Interface())
				if sparse && !ok {
					t.Skip("sent as text") // a NULL of its own in a column with a default
				}
				is.True(ok)
				batched(func(t tx) error { return t.insert(ctx, table, rows[0].Interface()) })
				text(func(t tx) error { return t.insert(ctx, table, rows[1].Interface()) })
				is.Equal(read(table, tags[0]), read(table, tags[1]))

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
				_, ok = s.prep.update(rows[0].Interface(), "", "", "", int64(5))
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
				is.Equal(read(table, tags[0]), read(table, tags[1]))

				// A stale version fails the prepared update, as the text one.
				err := s.InTx(ctx, func(ptx paykit.Tx) error { return update(ptx.(tx), rows[0], tags[0]) })
				is.True(err != nil)
			})
		}
	}
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
