package sqlstore_test

import (
	"context"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/internal/pgtest"
	"github.com/paykit/paykit/internal/sqlitetest"
	"github.com/paykit/paykit/store/sqlstore"
	"github.com/paykit/paykit/store/storetest"
)

func TestSQLite(t *testing.T) {
	t.Parallel()
	newStore := func(t *testing.T) paykit.Store {
		return open(t, "sqlite:"+sqlitetest.Migrated(t, sqlstore.SchemaDigest(), func(path string) error { return sqlstore.MigrateAt("sqlite:" + path) }))
	}
	storetest.Run(t, newStore)
	t.Run("UpdateUniqueViolation", func(t *testing.T) { testUpdateUniqueViolation(t, newStore(t)) })
	t.Run("LedgerRowsGuarded", func(t *testing.T) { testLedgerRowsGuarded(t, newStore(t).(*sqlstore.Store)) })
}

func TestSQLiteMemory(t *testing.T) {
	t.Parallel()
	image := sqlitetest.Image(t, sqlstore.SchemaDigest(), func(path string) error { return sqlstore.MigrateAt("sqlite:" + path) })
	// The file's format bytes say WAL (2), which a database in memory
	// cannot be: legacy (1).
	image[18], image[19] = 1, 1
	storetest.Run(t, func(t *testing.T) paykit.Store { return openMemoryImage(t, image) })
	t.Run("Migrates", func(t *testing.T) { open(t, "sqlite::memory:") })
}

// openMemoryImage opens a "sqlite::memory:" Store whose one connection
// holds a copy of image (a migrated template), then migrates it (a no-op).
func openMemoryImage(t *testing.T, image []byte) *sqlstore.Store {
	t.Helper()
	ctx := context.Background()
	s, err := sqlstore.OpenWith(ctx, "sqlite::memory:", sqlstore.Options{ConnWait: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	conn, err := s.DB().Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	err = conn.Raw(func(dc any) error {
		return dc.(interface{ Deserialize([]byte) error }).Deserialize(slices.Clone(image))
	})
	if cerr := conn.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestPostgres runs against fresh databases (dropped at the end) on the
// server at $PAYKIT_TEST_POSTGRES_URL, one per Store, copied from a
// migrated template. It fails, never skips, when the server is
// unreachable.
func TestPostgres(t *testing.T) {
	t.Parallel()
	newStore := func(t *testing.T) paykit.Store {
		return open(t, pgtest.Migrated(t, sqlstore.SchemaDigest(), sqlstore.MigrateAt))
	}
	storetest.Run(t, newStore)
	t.Run("UpdateUniqueViolation", func(t *testing.T) { testUpdateUniqueViolation(t, newStore(t)) })
	t.Run("LedgerRowsGuarded", func(t *testing.T) { testLedgerRowsGuarded(t, newStore(t).(*sqlstore.Store)) })
}

// TestPostgresSchemaInDSN: a Store whose DSN names a schema (search_path)
// migrates and works inside it, beside another schema's Store in the same
// database.
func TestPostgresSchemaInDSN(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	u, err := url.Parse(pgtest.Database(t))
	is.NoErr(err)
	admin := open(t, u.String())
	stores := map[string]*sqlstore.Store{}
	for _, schema := range []string{"shop_a", "shop_b"} {
		_, err := admin.DB().ExecContext(ctx, "CREATE SCHEMA "+schema)
		is.NoErr(err)
		q := u.Query()
		q.Set("search_path", schema)
		su := *u
		su.RawQuery = q.Encode()
		stores[schema] = open(t, su.String())
	}
	is.NoErr(stores["shop_a"].CreateMerchant(ctx, &paykit.Merchant{ID: "mch_a", Name: "A", CreatedAt: time.UnixMilli(1e12).UTC()}))
	_, err = stores["shop_b"].GetMerchant(ctx, "mch_a")
	is.True(errors.Is(err, paykit.ErrNotFound)) // another schema's tables
	var n int
	is.NoErr(admin.DB().QueryRowContext(ctx, "SELECT count(*) FROM shop_a.merchants").Scan(&n))
	is.Equal(n, 1)
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
// Operations wait up to 30 s for a connection: the conformance cases race
// more goroutines than the pool has connections, on a machine that runs
// every package's tests at once (the pool tests check the default wait).
func open(t testing.TB, dsn string) *sqlstore.Store {
	t.Helper()
	ctx := context.Background()
	s, err := sqlstore.OpenWith(ctx, dsn, sqlstore.Options{ConnWait: 30 * time.Second})
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
	is.NoErr(s.CreateBalanceTransaction(ctx, &paykit.BalanceTransaction{ID: "txn_1", MerchantID: scope.MerchantID, Environment: scope.Environment,
		Type: paykit.BalanceTxnAdjustment, Source: "adj_1", Amount: 5, Net: 5, Currency: "THB", Status: paykit.BalanceTxnAvailable,
		AvailableOn: time.UnixMilli(1e12).UTC(), CreatedAt: time.UnixMilli(1e12).UTC(), UpdatedAt: time.UnixMilli(1e12).UTC()}))
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
