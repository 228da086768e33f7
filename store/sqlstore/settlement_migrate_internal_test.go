package sqlstore

import (
	"context"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/paykit/paykit"
)

// TestSettlementMigration upgrades a database whose payment intents
// predate migration 0023: they read back with no fee, unsettled and
// undisputed, and take the new fields from there.
func TestSettlementMigration(t *testing.T) {
	t.Parallel()
	onOldSchemas(t, 23, func(t *testing.T, s *Store) {
		is := is.New(t)
		ctx := context.Background()
		then := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		_, err := s.db.ExecContext(ctx, `INSERT INTO payment_intents (id, merchant_id, environment, status, amount,
			currency, country, merchant_reference, payment_method, return_url, checkout_id, failure_code, provider,
			provider_ref, attempt, provider_url, refunded_amount, refund_pending_amount, expires_at, created_at,
			updated_at, version)
			VALUES ('pi_old', 'mch_1', 'test', 'succeeded', 10000, 'MYR', 'MY', 'ref_old', 'FPX', '', '', '', 'sandbox',
			'sbx_1', 'closed', '', 2000, 0, ?, ?, ?, 3)`, then, then, then)
		is.NoErr(err)
		is.NoErr(s.Migrate(ctx))

		scope := paykit.Scope{MerchantID: "mch_1", Environment: paykit.Test}
		p, err := s.GetPaymentIntent(ctx, scope, "pi_old")
		is.NoErr(err)
		is.Equal(p.Fee, int64(0))
		is.True(p.SettledAt == nil)
		is.Equal(p.DisputedAmount, int64(0))
		is.Equal(p.OpenDisputes, 0)
		is.Equal(p.RefundedAmount, int64(2_000))
		is.Equal(p.Version, int64(3))

		p.Fee, p.SettledAt, p.DisputedAmount, p.OpenDisputes = 390, &then, 8_000, 1
		is.NoErr(s.UpdatePaymentIntent(ctx, p))
		got, err := s.GetPaymentIntent(ctx, scope, "pi_old")
		is.NoErr(err)
		is.Equal(got.Fee, int64(390))
		is.Equal(*got.SettledAt, then)
		is.Equal(got.DisputedAmount, int64(8_000))
		is.Equal(got.OpenDisputes, 1)
	})
}
