package paykit_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/uptrace/bun"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/paykittest"
	"github.com/paykit/paykit/store/sqlstore"
)

// statementLog records the statements bun sends while on. One query may
// carry several statements, joined by ";\n" (sqlstore's batched
// transactions on PostgreSQL): each is recorded, and the query counts as
// one round trip.
type statementLog struct {
	mu    sync.Mutex
	on    bool
	stmts []string
	trips int
}

func (l *statementLog) BeforeQuery(ctx context.Context, _ *bun.QueryEvent) context.Context {
	return ctx
}

func (l *statementLog) AfterQuery(_ context.Context, ev *bun.QueryEvent) {
	l.mu.Lock()
	defer l.mu.Unlock()
	// The Store's NOTIFY to other instances goes apart from the request,
	// at most once per 5 ms.
	if l.on && !strings.HasPrefix(ev.Query, "SELECT pg_notify(") {
		l.stmts = append(l.stmts, strings.Split(ev.Query, ";\n")...)
		l.trips++
	}
}

// record runs fn and returns the statements it sent.
func (l *statementLog) record(fn func()) []string {
	l.mu.Lock()
	l.on, l.stmts, l.trips = true, nil, 0
	l.mu.Unlock()
	fn()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.on = false
	return l.stmts
}

// TestRefundCreateStatements counts what a refund create sends to
// PostgreSQL, answered pending and answered final: two transactions,
// nothing outside them, no table read twice in one, none both inserted
// into and updated in one.
func TestRefundCreateStatements(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	log := &statementLog{}
	// A Store on the same database whose statements pass through log.
	store := sqlstore.New(paykittest.OpenSQL(t, paykittest.PostgresDSN(t)).DB().WithQueryHook(log))
	e := newFlowEnvOn(t, store)
	pi := e.paid(t, 10000, "order-1")
	for _, c := range []struct {
		amount int64
		status paykit.RefundStatus
		max    int // BEGIN and COMMIT included
	}{
		{3000, paykit.RefundPending, 17},
		{1911, paykit.RefundFailed, 23}, // the fake declines …911
	} {
		ref := fmt.Sprintf("r%d", c.amount)
		var (
			re  *paykit.Refund
			err error
		)
		stmts := log.record(func() { re, _, err = e.svc.CreateRefund(ctx, e.test, "k-"+ref, refundOf(pi, ref, c.amount)) })
		if err != nil || re.Status != c.status {
			t.Fatalf("refund %s: %v %v", ref, re, err)
		}
		checkTwoTransactions(t, ref, stmts, c.max, "")
	}
}

// checkTwoTransactions fails t unless stmts, what request name sent, are
// at most max (BEGIN and COMMIT included) in two transactions, with
// nothing outside them, no table read twice in one, and none but
// insertThenUpdate both inserted into and updated in one.
func checkTwoTransactions(t *testing.T, name string, stmts []string, max int, insertThenUpdate string) {
	t.Helper()
	var list strings.Builder
	txs := 0
	var seen map[string]bool // "verb table" in the current transaction
	for i, q := range stmts {
		fmt.Fprintf(&list, "\n%2d %.110s", i+1, q)
		switch {
		case q == "BEGIN":
			txs, seen = txs+1, map[string]bool{}
			continue
		case q == "COMMIT":
			seen = nil
			continue
		case seen == nil:
			t.Errorf("%s: statement %d outside a transaction: %.110s", name, i+1, q)
			continue
		}
		verb, table := statementTable(q)
		switch {
		case verb == "SELECT" && seen["SELECT "+table]:
			t.Errorf("%s: statement %d reads %s again", name, i+1, table)
		case verb == "UPDATE" && seen["INSERT "+table] && table != insertThenUpdate:
			t.Errorf("%s: statement %d updates %s after inserting into it", name, i+1, table)
		}
		seen[verb+" "+table] = true
	}
	t.Logf("%s: %d statements, %d transactions:%s", name, len(stmts), txs, list.String())
	if txs != 2 || len(stmts) > max {
		t.Errorf("%s: %d statements in %d transactions, want at most %d in 2", name, len(stmts), txs, max)
	}
}

// statementTable is the verb of q and the table it names first.
func statementTable(q string) (verb, table string) {
	f := strings.Fields(q)
	verb = strings.ToUpper(f[0])
	if verb == "WITH" && strings.Contains(q, " AS (UPDATE ") { // a batched versioned update
		verb = "UPDATE"
	}
	for i, w := range f[:len(f)-1] {
		if w := strings.ToUpper(w); w == "FROM" || w == "INTO" || w == "UPDATE" {
			return verb, strings.Trim(f[i+1], `"`)
		}
	}
	return verb, ""
}
