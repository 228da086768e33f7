package sqlstore

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/internal/pgtest"
	"github.com/paykit/paykit/internal/sqlitetest"
)

// seedPaymentIntents inserts n intents of scope (and n/10 of another
// merchant) in one statement, then refreshes the planner's statistics.
func seedPaymentIntents(tb testing.TB, s *Store, scope paykit.Scope, n int) {
	tb.Helper()
	ctx := context.Background()
	for _, m := range []struct {
		merchant string
		count    int
	}{{scope.MerchantID, n}, {"mch_other", n / 10}} {
		_, err := s.db.ExecContext(ctx, `INSERT INTO payment_intents (id, merchant_id, environment, status, amount,
			currency, country, merchant_reference, payment_method, return_url, checkout_id, failure_code, provider,
			provider_ref, attempt, provider_url, expires_at, created_at, updated_at, version)
			SELECT 'pi_' || ? || lpad(i::text, 8, '0'), ?, ?, CASE WHEN i % 7 = 0 THEN 'failed' ELSE 'succeeded' END,
			1000, 'MYR', 'MY', 'ref_' || i, 'FPX', '', '', '', 'sandbox', '', 'closed', '', t, t, t, 0
			FROM generate_series(1, ?) AS i, LATERAL (SELECT TIMESTAMPTZ '2026-01-01 00:00:00+00' + i * INTERVAL '1 millisecond' AS t) x`,
			m.merchant, m.merchant, scope.Environment, m.count)
		if err != nil {
			tb.Fatal(err)
		}
	}
	if _, err := s.db.ExecContext(ctx, "ANALYZE payment_intents"); err != nil {
		tb.Fatal(err)
	}
}

func openPostgres(tb testing.TB) *Store {
	return openMigrated(tb, pgtest.Migrated(tb, SchemaDigest(), migrateAt))
}

// openSQLite opens a migrated Store on a new SQLite file.
func openSQLite(tb testing.TB) *Store {
	return openMigrated(tb, "sqlite:"+sqlitetest.Migrated(tb, SchemaDigest(), func(path string) error { return migrateAt("sqlite:" + path) }))
}

// migrateAt migrates the database at dsn and closes it: the template the
// test databases are copied from.
func migrateAt(dsn string) error {
	s, err := Open(context.Background(), dsn)
	if err != nil {
		return err
	}
	if err := s.Migrate(context.Background()); err != nil {
		s.Close()
		return err
	}
	return s.Close()
}

// openMigrated opens a Store on dsn, migrated, closed when tb ends.
func openMigrated(tb testing.TB, dsn string) *Store {
	tb.Helper()
	s, err := Open(context.Background(), dsn)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Close() })
	if err := s.Migrate(context.Background()); err != nil {
		tb.Fatal(err)
	}
	return s
}

// TestListPlanUsesIndex checks, without timing anything, that a deep
// keyset page on PostgreSQL is an index range scan with no sort and no
// sequential scan: its cost does not grow with the table.
func TestListPlanUsesIndex(t *testing.T) {
	t.Parallel()
	s := openPostgres(t)
	scope := paykit.Scope{MerchantID: "mch_plan", Environment: paykit.Live}
	seedPaymentIntents(t, s, scope, 20_000)
	deep := &paykit.Position{CreatedAt: time.Date(2026, 1, 1, 0, 0, 2, 0, time.UTC), ID: "pi_mch_plan00002000"}
	for name, q := range map[string]paykit.ListQuery[paykit.ListParams[paykit.PaymentStatus]]{
		"deep page":     {Scope: scope, After: deep, Limit: 26},
		"status filter": {Scope: scope, Filter: paykit.ListParams[paykit.PaymentStatus]{Statuses: []paykit.PaymentStatus{paykit.PaymentFailed}}, After: deep, Limit: 26},
	} {
		var rows []paymentIntentRow
		checkIndexScan(t, s, name, s.tx.listPaymentIntentsQuery(&rows, q).String(), "payment_intents_")
	}
}

// TestPayoutListPlanUsesIndex checks the same of payout lists: a tenant's,
// and the approval queue across tenants, which reads its partial index.
func TestPayoutListPlanUsesIndex(t *testing.T) {
	t.Parallel()
	s := openPostgres(t)
	ctx := context.Background()
	// 20,000 payouts of 10 merchants, one in 50 waiting for approval.
	_, err := s.db.ExecContext(ctx, `INSERT INTO payout_intents (id, merchant_id, environment, status, approval_pending,
		amount, currency, country, merchant_reference, recipient_type, bank_code, holder_name, holder_name_th,
		account_last4, account_key_id, reserved_amount, completed_amount, returned_amount, failure_code,
		failure_message, cancel_reason, provider, provider_ref, attempt, created_at, updated_at, version)
		SELECT 'po_' || lpad(i::text, 8, '0'), 'mch_' || (i % 10), 'live',
		CASE WHEN i % 50 = 0 THEN 'requires_approval' ELSE 'succeeded' END, i % 50 = 0,
		1000, 'THB', 'TH', 'ref_' || i, 'bank_account', 'KBANK', 'S', '', '6789', 'k', 0, 1000, 0, '', '', '',
		'sandbox', '', 'closed', t, t, 0
		FROM generate_series(1, 20000) AS i, LATERAL (SELECT TIMESTAMPTZ '2026-01-01 00:00:00+00' + i * INTERVAL '1 millisecond' AS t) x`)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.db.ExecContext(ctx, "ANALYZE payout_intents"); err != nil {
		t.Fatal(err)
	}
	deep := &paykit.Position{CreatedAt: time.Date(2026, 1, 1, 0, 0, 2, 0, time.UTC), ID: "po_00002000"}
	for name, c := range map[string]struct {
		q     paykit.PayoutQuery
		index string
	}{
		"tenant deep page":     {paykit.PayoutQuery{ListQuery: paykit.ListQuery[paykit.ListParams[paykit.PayoutStatus]]{Scope: paykit.Scope{MerchantID: "mch_3", Environment: paykit.Live}, After: deep, Limit: 26}}, "payout_intents_list_idx"},
		"tenant status filter": {paykit.PayoutQuery{ListQuery: paykit.ListQuery[paykit.ListParams[paykit.PayoutStatus]]{Scope: paykit.Scope{MerchantID: "mch_3", Environment: paykit.Live}, Filter: paykit.ListParams[paykit.PayoutStatus]{Statuses: []paykit.PayoutStatus{paykit.PayoutSucceeded}}, After: deep, Limit: 26}}, "payout_intents_"},
		"approval queue":       {paykit.PayoutQuery{ListQuery: paykit.ListQuery[paykit.ListParams[paykit.PayoutStatus]]{After: deep, Limit: 26}, AllTenants: true, ApprovalPending: true}, "payout_intents_approval_list_idx"},
		"all tenants":          {paykit.PayoutQuery{ListQuery: paykit.ListQuery[paykit.ListParams[paykit.PayoutStatus]]{After: deep, Limit: 26}, AllTenants: true}, "payout_intents_all_list_idx"},
	} {
		var rows []payoutIntentRow
		checkIndexScan(t, s, name, s.tx.listPayoutIntentsQuery(&rows, c.q).String(), c.index)
	}
}

// checkIndexScan fails t unless PostgreSQL plans query as a scan of an
// index whose name starts with index, with no sort and no sequential scan.
func checkIndexScan(t *testing.T, s *Store, name, query, index string) {
	t.Helper()
	var plan []string
	if err := s.db.NewRaw("EXPLAIN "+query).Scan(context.Background(), &plan); err != nil {
		t.Fatal(err)
	}
	text := strings.Join(plan, "\n")
	if !strings.Contains(text, "Index Scan using "+index) || strings.Contains(text, "Seq Scan") || strings.Contains(text, "Sort") {
		t.Errorf("%s: plan is not an ordered scan of %s*:\n%s", name, index, text)
	}
}

// BenchmarkListPaymentIntentsPostgres reads a page 90% deep at 1 k and at
// 1 M rows: with the keyset index the two cost the same.
func BenchmarkListPaymentIntentsPostgres(b *testing.B) {
	for _, n := range []int{1_000, 1_000_000} {
		s := openPostgres(b)
		scope := paykit.Scope{MerchantID: "mch_bench", Environment: paykit.Live}
		seedPaymentIntents(b, s, scope, n)
		i := n / 10 // the page after row i, counting from the oldest
		pos := &paykit.Position{
			CreatedAt: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Millisecond),
			ID:        fmt.Sprintf("pi_mch_bench%08d", i),
		}
		q := paykit.ListQuery[paykit.ListParams[paykit.PaymentStatus]]{Scope: scope, After: pos, Limit: 26}
		b.Run(fmt.Sprintf("rows=%d", n), func(b *testing.B) {
			for b.Loop() {
				page, err := s.ListPaymentIntents(context.Background(), q)
				if err != nil || len(page) != 26 {
					b.Fatalf("got %d rows, %v", len(page), err)
				}
			}
		})
	}
}

// TestByIDPlansUseThePrimaryKeyWithoutStatistics: a read or versioned
// update of one row by id, kept to its scope, goes through the primary key
// even before the table was ever analyzed (a new database under load),
// rather than through an index led by merchant_id, which would read every
// row of the merchant.
func TestByIDPlansUseThePrimaryKeyWithoutStatistics(t *testing.T) {
	t.Parallel()
	s := openPostgres(t)
	ctx := context.Background()
	scope := paykit.Scope{MerchantID: "mch_byid", Environment: paykit.Live}
	if _, err := s.db.ExecContext(ctx, "ALTER TABLE payment_intents SET (autovacuum_enabled = false)"); err != nil {
		t.Fatal(err)
	}
	_, err := s.db.ExecContext(ctx, `INSERT INTO payment_intents (id, merchant_id, environment, status, amount,
		currency, country, merchant_reference, payment_method, return_url, checkout_id, failure_code, provider,
		provider_ref, attempt, provider_url, expires_at, created_at, updated_at, version)
		SELECT 'pi_' || lpad(i::text, 8, '0'), ?, ?, 'requires_action', 1000, 'MYR', 'MY', 'ref_' || i, 'FPX', '', '',
		'', 'sandbox', '', 'open', '', now(), now(), now(), 0 FROM generate_series(1, 5000) AS i`, scope.MerchantID, scope.Environment)
	if err != nil {
		t.Fatal(err)
	}
	id := "pi_00004321"
	for name, query := range map[string]string{
		"get":    ofScope(s.db.NewSelect().Table("payment_intents").Where("id = ?", id), scope).String(),
		"update": ofScope(s.db.NewUpdate().Table("payment_intents").Set("status = 'succeeded'").Where("id = ?", id), scope).Where("version = ?", 0).String(),
	} {
		var plan []string
		if err := s.db.NewRaw("EXPLAIN "+query).Scan(ctx, &plan); err != nil {
			t.Fatal(err)
		}
		if text := strings.Join(plan, "\n"); !strings.Contains(text, "using payment_intents_pkey") {
			t.Errorf("%s: plan does not read the primary key:\n%s", name, text)
		}
	}
}
