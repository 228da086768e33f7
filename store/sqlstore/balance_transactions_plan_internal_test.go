package sqlstore

import (
	"context"
	"testing"
	"time"

	"github.com/paykit/paykit"
)

// TestBalanceTxnListPlanUsesIndex checks that a deep keyset page of a
// tenant's balance transactions, plain, by type, by status and by source,
// is an index range scan on PostgreSQL: no sort, no sequential scan.
func TestBalanceTxnListPlanUsesIndex(t *testing.T) {
	t.Parallel()
	s := openPostgres(t)
	ctx := context.Background()
	// 20,000 balance transactions of 10 merchants: payments, one in 4 a
	// refund, the newest tenth pending; two per source.
	_, err := s.db.ExecContext(ctx, `INSERT INTO paykit_balance_transactions (id, merchant_id, environment, type,
		source, amount, fee, net, currency, status, available_on, created_at, updated_at, version)
		SELECT 'txn_' || lpad(i::text, 8, '0'), 'mch_' || (i % 10), 'live',
		CASE WHEN i % 4 = 0 THEN 'refund' ELSE 'payment' END, 'pi_' || (i / 20) || '_' || (i % 10), 1000, 29, 971, 'MYR',
		CASE WHEN i > 18000 THEN 'pending' ELSE 'available' END, t, t, t, 0
		FROM generate_series(1, 20000) AS i, LATERAL (SELECT TIMESTAMPTZ '2026-01-01 00:00:00+00' + i * INTERVAL '1 millisecond' AS t) x`)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.db.ExecContext(ctx, "ANALYZE paykit_balance_transactions"); err != nil {
		t.Fatal(err)
	}
	scope := paykit.Scope{MerchantID: "mch_3", Environment: paykit.Live}
	deep := &paykit.Position{CreatedAt: time.Date(2026, 1, 1, 0, 0, 2, 0, time.UTC), ID: "txn_00002000"}
	type q = paykit.ListQuery[paykit.BalanceTransactionListParams]
	type f = paykit.BalanceTransactionListParams
	for name, c := range map[string]struct {
		q     q
		index string
	}{
		"deep page":     {q{Scope: scope, After: deep, Limit: 26}, "paykit_balance_transactions_list_idx"},
		"type filter":   {q{Scope: scope, Filter: f{Types: []paykit.BalanceTransactionType{paykit.BalanceTxnRefund}}, After: deep, Limit: 26}, "paykit_balance_transactions_"},
		"status filter": {q{Scope: scope, Filter: f{ListParams: paykit.ListParams[paykit.BalanceTransactionStatus]{Statuses: []paykit.BalanceTransactionStatus{paykit.BalanceTxnAvailable}}}, After: deep, Limit: 26}, "paykit_balance_transactions_"},
		"source":        {q{Scope: scope, Filter: f{Source: "pi_150_3"}, Limit: 26}, "paykit_balance_transactions_source_idx"},
	} {
		var rows []balanceTxnRow
		checkIndexScan(t, s, name, s.tx.listBalanceTxnsQuery(&rows, c.q).String(), c.index)
	}
}
