package sandbox

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/paykit/paykit/store/sqlstore"
)

// TestSQLiteCreateIsPrepared: on SQLite with InTx a create's count and
// record go through statements prepared once, and both are kept; a second
// create under the key counts without a second record.
func TestSQLiteCreateIsPrepared(t *testing.T) {
	ctx := context.Background()
	store, err := sqlstore.Open(ctx, "sqlite:"+filepath.Join(t.TempDir(), "sandbox.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	if err := Migrate(ctx, store.DB()); err != nil {
		t.Fatal(err)
	}
	st := newSQLState(store.DB(), store.RunInTx)
	now := time.Date(2026, 11, 25, 8, 0, 0, 0, time.UTC)
	for i, id := range []string{"pay_1", "pay_2"} {
		rec := &payment{lifecycle: lifecycle{Key: "k1", ID: id, Fingerprint: "fp", State: statePayerAction,
			Created: now, Updated: now, Expires: now.Add(time.Hour)}}
		stored, err := st.pays.insert(context.WithValue(ctx, pendingCountKey{}, &pendingCount{key: "k1"}), rec)
		if err != nil {
			t.Fatal(err)
		}
		if stored != (i == 0) {
			t.Fatalf("create %d stored: %v", i+1, stored)
		}
	}
	if st.pays.countStmt == nil || st.pays.insertStmt == nil {
		t.Fatal("the create's statements were not prepared")
	}
	calls, err := st.createCalls(ctx, "k1")
	if err != nil || calls != 2 {
		t.Fatalf("calls %d, %v", calls, err)
	}
	var got []string
	if err := st.pays.list(ctx, func(p *payment) { got = append(got, p.ID+" "+p.State) }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0] != "pay_1 "+statePayerAction {
		t.Fatalf("records %v", got)
	}
}
