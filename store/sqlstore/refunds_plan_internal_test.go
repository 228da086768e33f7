package sqlstore

import (
	"context"
	"testing"
	"time"

	"github.com/paykit/paykit"
)

// TestRefundListPlanUsesIndex checks that a deep keyset page of a tenant's
// refunds, plain, by status and by payment intent, is an index range scan
// on PostgreSQL: no sort, no sequential scan.
func TestRefundListPlanUsesIndex(t *testing.T) {
	t.Parallel()
	s := openPostgres(t)
	ctx := context.Background()
	// 20,000 refunds of 10 merchants, one in 4 failed, ten per payment intent.
	_, err := s.db.ExecContext(ctx, `INSERT INTO paykit_refunds (id, merchant_id, environment, payment_intent_id,
		amount, currency, status, reason, merchant_reference, failure_code, provider, provider_ref, attempt,
		created_at, updated_at, version)
		SELECT 're_' || lpad(i::text, 8, '0'), 'mch_' || (i % 10), 'live', 'pi_' || (i / 100) || '_' || (i % 10),
		100, 'MYR', CASE WHEN i % 4 = 0 THEN 'failed' ELSE 'succeeded' END, '', 'ref_' || i, '', 'sandbox', '',
		'closed', t, t, 0
		FROM generate_series(1, 20000) AS i, LATERAL (SELECT TIMESTAMPTZ '2026-01-01 00:00:00+00' + i * INTERVAL '1 millisecond' AS t) x`)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.db.ExecContext(ctx, "ANALYZE paykit_refunds"); err != nil {
		t.Fatal(err)
	}
	scope := paykit.Scope{MerchantID: "mch_3", Environment: paykit.Live}
	deep := &paykit.Position{CreatedAt: time.Date(2026, 1, 1, 0, 0, 2, 0, time.UTC), ID: "re_00002000"}
	for name, c := range map[string]struct {
		q     paykit.ListQuery[paykit.RefundListParams]
		index string
	}{
		"deep page":      {paykit.ListQuery[paykit.RefundListParams]{Scope: scope, After: deep, Limit: 26}, "paykit_refunds_list_idx"},
		"status filter":  {paykit.ListQuery[paykit.RefundListParams]{Scope: scope, Filter: paykit.RefundListParams{ListParams: paykit.ListParams[paykit.RefundStatus]{Statuses: []paykit.RefundStatus{paykit.RefundFailed}}}, After: deep, Limit: 26}, "paykit_refunds_"},
		"payment intent": {paykit.ListQuery[paykit.RefundListParams]{Scope: scope, Filter: paykit.RefundListParams{PaymentIntent: "pi_150_3"}, Limit: 26}, "paykit_refunds_payment_intent_idx"},
	} {
		var rows []refundRow
		checkIndexScan(t, s, name, s.tx.listRefundsQuery(&rows, c.q).String(), c.index)
	}
}
