package sqlstore

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/paykit/paykit"
)

// TestDisputePlansUseIndexes checks that a deep keyset page of a tenant's
// disputes, plain, by status and by payment intent, is an index range
// scan on PostgreSQL (no sort, no sequential scan), and that a Provider's
// callback finds its dispute through the (provider, provider_ref) index.
func TestDisputePlansUseIndexes(t *testing.T) {
	t.Parallel()
	s := openPostgres(t)
	ctx := context.Background()
	// 20,000 disputes of 10 merchants, one in 4 lost, two per payment
	// intent; one in 5 not named by the Provider yet.
	_, err := s.db.ExecContext(ctx, `INSERT INTO paykit_disputes (id, merchant_id, environment, payment_intent_id,
		amount, currency, fee, reason, status, evidence, evidence_due_by, provider, provider_ref, created_at,
		updated_at, version)
		SELECT 'dp_' || lpad(i::text, 8, '0'), 'mch_' || (i % 10), 'live', 'pi_' || (i / 20) || '_' || (i % 10),
		1000, 'MYR', 1500, 'general', CASE WHEN i % 4 = 0 THEN 'lost' ELSE 'won' END, '', t, 'sandbox',
		CASE WHEN i % 5 = 0 THEN '' ELSE 'dpr_' || i END, t, t, 0
		FROM generate_series(1, 20000) AS i, LATERAL (SELECT TIMESTAMPTZ '2026-01-01 00:00:00+00' + i * INTERVAL '1 millisecond' AS t) x`)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.db.ExecContext(ctx, "ANALYZE paykit_disputes"); err != nil {
		t.Fatal(err)
	}
	scope := paykit.Scope{MerchantID: "mch_3", Environment: paykit.Live}
	deep := &paykit.Position{CreatedAt: time.Date(2026, 1, 1, 0, 0, 2, 0, time.UTC), ID: "dp_00002000"}
	type q = paykit.ListQuery[paykit.DisputeListParams]
	for name, c := range map[string]struct {
		q     q
		index string
	}{
		"deep page":      {q{Scope: scope, After: deep, Limit: 26}, "paykit_disputes_list_idx"},
		"status filter":  {q{Scope: scope, Filter: paykit.DisputeListParams{ListParams: paykit.ListParams[paykit.DisputeStatus]{Statuses: []paykit.DisputeStatus{paykit.DisputeLost}}}, After: deep, Limit: 26}, "paykit_disputes_"},
		"payment intent": {q{Scope: scope, Filter: paykit.DisputeListParams{PaymentIntent: "pi_150_3"}, Limit: 26}, "paykit_disputes_payment_intent_idx"},
	} {
		var rows []disputeRow
		checkIndexScan(t, s, name, s.tx.listDisputesQuery(&rows, c.q).String(), c.index)
	}

	var plan []string
	query := s.db.NewSelect().Model((*disputeRow)(nil)).Where(disputeByProviderRef, "sandbox", "dpr_77").String()
	if err := s.db.NewRaw("EXPLAIN "+query).Scan(ctx, &plan); err != nil {
		t.Fatal(err)
	}
	if text := strings.Join(plan, "\n"); !strings.Contains(text, "paykit_disputes_provider_ref_key") || strings.Contains(text, "Seq Scan") {
		t.Errorf("finding a dispute by the Provider's id does not read its index:\n%s", text)
	}
	got, err := s.FindDisputeByProviderRef(ctx, "sandbox", "dpr_77")
	if err != nil || got.ID != "dp_00000077" || got.Scope() != (paykit.Scope{MerchantID: "mch_7", Environment: paykit.Live}) {
		t.Errorf("FindDisputeByProviderRef(sandbox, dpr_77) = %+v, %v", got, err)
	}
}
