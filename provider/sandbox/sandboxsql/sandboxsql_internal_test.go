package sandboxsql

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/sqlitedialect"
	_ "modernc.org/sqlite"

	"github.com/paykit/paykit/provider/sandbox"
)

// TestSQLiteCreateIsPrepared: on SQLite with inTx a create's count and
// record go through statements prepared once, and both are kept; a second
// create under the key counts without a second record.
func TestSQLiteCreateIsPrepared(t *testing.T) {
	ctx := context.Background()
	// sqlstore's settings (see New): the write lock at BEGIN.
	sqldb, err := sql.Open("sqlite", "file:"+filepath.Join(t.TempDir(), "sandbox.db")+
		"?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_txlock=immediate")
	if err != nil {
		t.Fatal(err)
	}
	db := bun.NewDB(sqldb, sqlitedialect.New())
	t.Cleanup(func() { _ = db.Close() })
	if err := Migrate(ctx, db); err != nil {
		t.Fatal(err)
	}
	inTx := func(ctx context.Context, fn func(ctx context.Context, tx bun.Tx) error) error {
		return db.RunInTx(ctx, nil, fn)
	}
	st, err := New(db, inTx)
	if err != nil {
		t.Fatal(err)
	}
	pays := st.tables["payments"]
	due := time.Date(2026, 11, 25, 8, 0, 0, 0, time.UTC)
	for i, id := range []string{"pay_1", "pay_2"} {
		r := sandbox.Record{Key: "k1", ID: id, State: "PAYER_ACTION", Due: due, Data: []byte(`{"id":"` + id + `"}`)}
		stored, counted, err := pays.Insert(ctx, r, true)
		if err != nil {
			t.Fatal(err)
		}
		if stored != (i == 0) || !counted {
			t.Fatalf("create %d stored: %v, counted: %v", i+1, stored, counted)
		}
	}
	if pays.countStmt == nil || pays.insertStmt == nil {
		t.Fatal("the create's statements were not prepared")
	}
	calls, err := st.CreateCalls(ctx, "k1")
	if err != nil || calls != 2 {
		t.Fatalf("calls %d, %v", calls, err)
	}
	var got []string
	if err := pays.List(ctx, func(data []byte) error { got = append(got, string(data)); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0] != `{"id":"pay_1"}` {
		t.Fatalf("records %v", got)
	}
	keys, err := pays.Due(ctx, due, 10)
	if err != nil || len(keys) != 1 || keys[0] != "k1" {
		t.Fatalf("due %v, %v", keys, err)
	}
}
