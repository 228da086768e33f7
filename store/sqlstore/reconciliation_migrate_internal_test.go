package sqlstore

import (
	"context"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/paykit/paykit"
)

// TestReconciliationMigration upgrades a database whose refunds predate
// migration 0024: a succeeded one reads back as before and is unsettled
// until a line names it.
func TestReconciliationMigration(t *testing.T) {
	t.Parallel()
	onOldSchemas(t, 24, func(t *testing.T, s *Store) {
		is := is.New(t)
		ctx := context.Background()
		then := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		_, err := s.db.ExecContext(ctx, `INSERT INTO paykit_refunds (id, merchant_id, environment, payment_intent_id,
			amount, currency, status, reason, merchant_reference, failure_code, provider, provider_ref, attempt,
			completed_at, created_at, updated_at, version)
			VALUES ('re_old', 'mch_1', 'test', 'pi_old', 700, 'MYR', 'succeeded', '', 'ref_old', '', 'sandbox', 'rf_old',
			'closed', ?, ?, ?, 2)`, then, then, then)
		is.NoErr(err)
		is.NoErr(s.Migrate(ctx))

		scope := paykit.Scope{MerchantID: "mch_1", Environment: paykit.Test}
		r, err := s.GetRefund(ctx, scope, "re_old")
		is.NoErr(err)
		is.Equal(r.Amount, int64(700))
		is.Equal(r.Version, int64(2))
		q := paykit.UnsettledQuery{Provider: "sandbox", Before: then.Add(time.Hour)}
		rows, err := s.ListUnsettled(ctx, q)
		is.NoErr(err)
		is.Equal(rows, []paykit.Unsettled{{Object: "refund", Scope: scope, ID: "re_old", Reference: "rf_old", Amount: -700,
			Currency: "MYR", CompletedAt: then}})

		_, err = s.RecordSettledLines(ctx, []paykit.SettledLine{{Provider: "sandbox", Type: "refund", Reference: "rf_old",
			Batch: "stl_1", Source: "re_old", CreatedAt: then.Add(time.Hour)}})
		is.NoErr(err)
		rows, err = s.ListUnsettled(ctx, q)
		is.NoErr(err)
		is.Equal(len(rows), 0)
	})
}
