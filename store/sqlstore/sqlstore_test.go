package sqlstore_test

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/internal/pgtest"
	"github.com/paykit/paykit/store/sqlstore"
	"github.com/paykit/paykit/store/storetest"
)

func TestSQLite(t *testing.T) {
	t.Parallel()
	newStore := func(t *testing.T) paykit.Store {
		return open(t, "sqlite:"+filepath.Join(t.TempDir(), "paykit.db"))
	}
	storetest.Run(t, newStore)
	t.Run("UpdateUniqueViolation", func(t *testing.T) { testUpdateUniqueViolation(t, newStore(t)) })
	t.Run("LedgerRowsGuarded", func(t *testing.T) { testLedgerRowsGuarded(t, newStore(t).(*sqlstore.Store)) })
}

func TestSQLiteMemory(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T) paykit.Store { return open(t, "sqlite::memory:") })
}

// TestPostgres runs against a fresh database (dropped at the end) on the
// server at $PAYKIT_TEST_POSTGRES_URL, one schema per Store. It fails, never
// skips, when the server is unreachable.
func TestPostgres(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	u, err := url.Parse(pgtest.Database(t))
	if err != nil {
		t.Fatal(err)
	}
	db := open(t, u.String())

	var schemas atomic.Int32
	newStore := func(t *testing.T) paykit.Store {
		schema := fmt.Sprintf("s%d", schemas.Add(1))
		if _, err := db.DB().ExecContext(ctx, "CREATE SCHEMA "+schema); err != nil {
			t.Fatal(err)
		}
		q := u.Query()
		q.Set("search_path", schema)
		u := *u
		u.RawQuery = q.Encode()
		return open(t, u.String())
	}
	storetest.Run(t, newStore)
	t.Run("UpdateUniqueViolation", func(t *testing.T) { testUpdateUniqueViolation(t, newStore(t)) })
	t.Run("LedgerRowsGuarded", func(t *testing.T) { testLedgerRowsGuarded(t, newStore(t).(*sqlstore.Store)) })
}

// TestReopen checks that Migrate is idempotent and that data survives Close.
func TestReopen(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	dsn := "sqlite:" + filepath.Join(t.TempDir(), "dir with space", "paykit#1.db")
	is.NoErr(os.Mkdir(filepath.Dir(dsn[len("sqlite:"):]), 0o755))
	s := open(t, dsn)
	is.NoErr(s.CreateMerchant(ctx, &paykit.Merchant{ID: "mch_1", Name: "Kedai", CreatedAt: time.UnixMilli(1e12).UTC()}))
	is.NoErr(s.Close())

	again := open(t, dsn)
	m, err := again.GetMerchant(ctx, "mch_1")
	is.NoErr(err)
	is.Equal(m.Name, "Kedai")
	var applied int
	is.NoErr(again.DB().NewSelect().Table("paykit_schema_migrations").ColumnExpr("count(*)").Scan(ctx, &applied))
	files, err := os.ReadDir("migrations/sqlite")
	is.NoErr(err)
	is.Equal(applied, len(files)) // every migration, once
}

// open opens dsn and migrates it twice (the second run must be a no-op).
func open(t testing.TB, dsn string) *sqlstore.Store {
	t.Helper()
	ctx := context.Background()
	s, err := sqlstore.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	for range 2 {
		if err := s.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// testUpdateUniqueViolation covers the driver-error path of the conflict
// mapping: inserts avoid it with ON CONFLICT DO NOTHING, updates cannot.
func testUpdateUniqueViolation(t *testing.T, s paykit.Store) {
	is := is.New(t)
	ctx := context.Background()
	scope := paykit.Scope{MerchantID: "mch_a", Environment: paykit.Test}
	for _, ref := range []string{"ref-1", "ref-2"} {
		is.NoErr(s.CreatePaymentIntent(ctx, &paykit.PaymentIntent{
			ID: "pi_" + ref, MerchantID: scope.MerchantID, Environment: scope.Environment, MerchantReference: ref,
		}))
	}
	p, err := s.GetPaymentIntent(ctx, scope, "pi_ref-2")
	is.NoErr(err)
	p.MerchantReference = "ref-1"
	var c *paykit.ConflictError
	is.True(errors.As(s.UpdatePaymentIntent(ctx, p), &c))
	is.Equal(*c, paykit.ConflictError{Entity: "payment_intent", Key: "merchant_reference"})
	is.Equal(p.Version, int64(0))
}

// testLedgerRowsGuarded checks the schema's own guards, for writers that go
// around the Store: ledger entries cannot be changed or deleted, and a
// balance cannot pass int64 (on SQLite it would become a REAL). Whether a
// balance may go below zero is its account's rule in the chart, which
// PostLedger applies (storetest's ledger cases).
func testLedgerRowsGuarded(t *testing.T, s *sqlstore.Store) {
	is := is.New(t)
	ctx := context.Background()
	scope := paykit.Scope{MerchantID: "mch_a", Environment: paykit.Test}
	is.NoErr(s.PostLedger(ctx, &paykit.LedgerTxn{ID: "ltx_1", Scope: scope, Currency: "THB", Kind: "k", At: time.UnixMilli(1e12).UTC(),
		Postings: []paykit.Posting{{Account: paykit.AccountAdjustments, Amount: -5}, {Account: paykit.AccountAvailable, Amount: 5}}}))
	for _, stmt := range []string{
		"UPDATE ledger_entries SET amount = 7 WHERE id = 'ltx_1.1'",
		"DELETE FROM ledger_entries WHERE id = 'ltx_1.0'",
		"UPDATE balances SET amount = amount + 9223372036854775807",
	} {
		_, err := s.DB().ExecContext(ctx, stmt)
		is.True(err != nil) // refused
	}
	entries, err := s.ListLedgerEntries(ctx, paykit.LedgerQuery{Scope: scope})
	is.NoErr(err)
	is.Equal(len(entries), 2)
	is.Equal(entries[1].Amount, int64(5))
	storetest.CheckLedger(t, s, scope)
}
