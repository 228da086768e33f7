package sqlstore

import (
	"context"
	"strings"
	"testing"

	"github.com/paykit/paykit"
)

// TestFindByProviderRefPlanUsesIndexes checks that finding a resource by
// the Provider's id of its attempt reads the (provider, provider_ref)
// index of each table on PostgreSQL, with no sequential scan: a callback
// costs one lookup however many payments, payouts and refunds exist.
func TestFindByProviderRefPlanUsesIndexes(t *testing.T) {
	s := openPostgres(t)
	ctx := context.Background()
	seedPaymentIntents(t, s, paykit.Scope{MerchantID: "mch_plan", Environment: paykit.Live}, 20_000)
	for _, q := range []string{
		`UPDATE payment_intents SET provider_ref = 'p_' || id WHERE id LIKE '%0'`,
		`INSERT INTO payout_intents (id, merchant_id, environment, status, approval_pending,
		amount, currency, country, merchant_reference, recipient_type, bank_code, holder_name, holder_name_th,
		account_last4, account_key_id, reserved_amount, completed_amount, returned_amount, failure_code,
		failure_message, cancel_reason, provider, provider_ref, attempt, created_at, updated_at, version)
		SELECT 'po_' || i, 'mch_' || (i % 10), 'live', 'succeeded', false, 1000, 'THB', 'TH', 'ref_' || i,
		'bank_account', 'KBANK', 'S', '', '6789', 'k', 0, 1000, 0, '', '', '', 'sandbox', 'tr_' || i, 'closed', t, t, 0
		FROM generate_series(1, 20000) AS i, LATERAL (SELECT TIMESTAMPTZ '2026-01-01 00:00:00+00' + i * INTERVAL '1 millisecond' AS t) x`,
		`INSERT INTO paykit_refunds (id, merchant_id, environment, payment_intent_id,
		amount, currency, status, reason, merchant_reference, failure_code, provider, provider_ref, attempt,
		created_at, updated_at, version)
		SELECT 're_' || i, 'mch_' || (i % 10), 'live', 'pi_' || i, 100, 'MYR', 'succeeded', '', 'ref_' || i, '',
		'sandbox', CASE WHEN i % 2 = 0 THEN 'rf_' || i ELSE '' END, 'closed', t, t, 0
		FROM generate_series(1, 20000) AS i, LATERAL (SELECT TIMESTAMPTZ '2026-01-01 00:00:00+00' + i * INTERVAL '1 millisecond' AS t) x`,
		`ANALYZE payment_intents, payout_intents, paykit_refunds`,
	} {
		if _, err := s.db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	var plan []string
	query := s.db.QueryGen().FormatQuery(findByProviderRefSQL, "sandbox", "tr_77", "sandbox", "tr_77", "sandbox", "tr_77")
	if err := s.db.NewRaw("EXPLAIN "+query).Scan(ctx, &plan); err != nil {
		t.Fatal(err)
	}
	text := strings.Join(plan, "\n")
	for _, index := range []string{"payment_intents_provider_ref_idx", "payout_intents_provider_ref_idx", "paykit_refunds_provider_ref_idx"} {
		if !strings.Contains(text, index) {
			t.Errorf("the plan does not read %s:\n%s", index, text)
		}
	}
	if strings.Contains(text, "Seq Scan") {
		t.Errorf("the plan scans a table:\n%s", text)
	}
	got, err := s.FindByProviderRef(ctx, "sandbox", "tr_77")
	if err != nil || got.ID != "po_77" || got.Object != "payout_intent" {
		t.Errorf("FindByProviderRef(sandbox, tr_77) = %+v, %v", got, err)
	}
}
