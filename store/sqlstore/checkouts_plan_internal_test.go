package sqlstore

import (
	"context"
	"testing"
	"time"

	"github.com/paykit/paykit"
)

// TestCheckoutListPlanUsesIndex checks that a deep keyset page of a
// tenant's checkouts, with and without a status filter, is an index range
// scan on PostgreSQL: no sort, no sequential scan.
func TestCheckoutListPlanUsesIndex(t *testing.T) {
	t.Parallel()
	s := openPostgres(t)
	ctx := context.Background()
	// 20,000 checkouts of 10 merchants, one in 4 completed.
	_, err := s.db.ExecContext(ctx, `INSERT INTO checkouts (id, merchant_id, environment, status, amount, currency,
		country, merchant_reference, payment_intent_id, payment_method, return_url, expires_at, created_at,
		updated_at, version)
		SELECT 'co_' || lpad(i::text, 8, '0'), 'mch_' || (i % 10), 'live',
		CASE WHEN i % 4 = 0 THEN 'completed' ELSE 'expired' END, 1000, 'MYR', 'MY', 'ref_' || i,
		'pi_' || i, '', '', t, t, t, 0
		FROM generate_series(1, 20000) AS i, LATERAL (SELECT TIMESTAMPTZ '2026-01-01 00:00:00+00' + i * INTERVAL '1 millisecond' AS t) x`)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.db.ExecContext(ctx, "ANALYZE checkouts"); err != nil {
		t.Fatal(err)
	}
	scope := paykit.Scope{MerchantID: "mch_3", Environment: paykit.Live}
	deep := &paykit.Position{CreatedAt: time.Date(2026, 1, 1, 0, 0, 2, 0, time.UTC), ID: "co_00002000"}
	for name, q := range map[string]paykit.ListQuery[paykit.ListParams[paykit.CheckoutStatus]]{
		"deep page":     {Scope: scope, After: deep, Limit: 26},
		"status filter": {Scope: scope, Filter: paykit.ListParams[paykit.CheckoutStatus]{Statuses: []paykit.CheckoutStatus{paykit.CheckoutCompleted}}, After: deep, Limit: 26},
	} {
		var rows []checkoutRow
		checkIndexScan(t, s, name, s.tx.listCheckoutsQuery(&rows, q).String(), "checkouts_")
	}
}
