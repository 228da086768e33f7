package sqlstore

import (
	"context"
	"github.com/paykit/paykit"
	"strings"
	"testing"
	"time"
)

// TestJobPlansSkipCompleted checks that the worker's claim, the metrics'
// counts and the purge read the partial indexes of migration 0012 on
// PostgreSQL, not every completed job kept for the retention.
func TestJobPlansSkipCompleted(t *testing.T) {
	t.Parallel()
	s := openPostgres(t)
	ctx := context.Background()
	for _, stmt := range []string{
		`INSERT INTO jobs (id, kind, merchant_id, environment, target_id, run_at, attempts, lease_owner, last_error, created_at, version, state, completed_at)
		SELECT 'job_' || lpad(i::text, 8, '0'), CASE WHEN i % 3 = 0 THEN 'payout.inquire' ELSE 'webhook.deliver' END,
		'mch_' || (i % 20), 'live', 'po_' || i, t, 1, '', '', t, 0,
		CASE WHEN i % 1000 = 0 THEN 'retrying' ELSE 'completed' END, CASE WHEN i % 1000 = 0 THEN NULL ELSE t END
		FROM generate_series(1, 50000) AS i, LATERAL (SELECT TIMESTAMPTZ '2026-01-01 00:00:00+00' + i * INTERVAL '1 second' AS t) x`,
		"ANALYZE jobs",
	} {
		if _, err := s.db.ExecContext(ctx, stmt); err != nil {
			t.Fatal(err)
		}
	}
	now := time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)
	for name, c := range map[string]struct{ query, index string }{
		"claim": {s.tx.claimQuery(paykit.ClaimParams{Owner: "w", Now: now, LeaseUntil: now.Add(time.Minute), Limit: 50,
			Skip: []string{"we_hung"}, PartitionLimit: 2}).String(), "jobs_claim_idx"},
		"stats": {s.tx.jobStatsQuery(now).String(), "jobs_claim_idx"},
		"purge": {s.tx.purgeJobsQuery(time.Date(2026, 1, 1, 1, 0, 0, 0, time.UTC)).String(), "jobs_completed_idx"},
	} {
		var plan []string
		if err := s.db.NewRaw("EXPLAIN "+c.query).Scan(ctx, &plan); err != nil {
			t.Fatal(err)
		}
		text := strings.Join(plan, "\n")
		if !strings.Contains(text, c.index) || strings.Contains(text, "Seq Scan") {
			t.Errorf("%s: plan does not read %s:\n%s", name, c.index, text)
		}
	}
}
