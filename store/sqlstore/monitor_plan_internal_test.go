package sqlstore

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/paykit/paykit"
)

// TestOperatorListPlansUseIndex checks that deep pages of the operator's
// merchant and job lists are ordered index scans on PostgreSQL (the indexes
// of migration 0008), whatever the table size.
func TestOperatorListPlansUseIndex(t *testing.T) {
	t.Parallel()
	s := openPostgres(t)
	ctx := context.Background()
	for _, stmt := range []string{
		`INSERT INTO merchants (id, name, created_at, version)
		SELECT 'mch_' || lpad(i::text, 8, '0'), 'Kedai ' || i, TIMESTAMPTZ '2026-01-01 00:00:00+00' + i * INTERVAL '1 millisecond', 0
		FROM generate_series(1, 20000) AS i`,
		`INSERT INTO jobs (id, kind, merchant_id, environment, target_id, run_at, attempts, lease_owner, last_error, created_at, version, state)
		SELECT 'job_' || lpad(i::text, 8, '0'), CASE WHEN i % 3 = 0 THEN 'payout.inquire' ELSE 'webhook.deliver' END,
		'mch_' || (i % 20), 'live', 'po_' || i, t, i % 2, '', '', t, 0,
		CASE WHEN i % 4 = 1 THEN 'waiting' WHEN i % 4 = 3 THEN 'retrying' ELSE 'available' END
		FROM generate_series(1, 20000) AS i, LATERAL (SELECT TIMESTAMPTZ '2026-01-01 00:00:00+00' + i * INTERVAL '1 millisecond' AS t) x`,
		"ANALYZE merchants",
		"ANALYZE jobs",
	} {
		if _, err := s.db.ExecContext(ctx, stmt); err != nil {
			t.Fatal(err)
		}
	}
	deep := &paykit.Position{CreatedAt: time.Date(2026, 1, 1, 0, 0, 2, 0, time.UTC), ID: "x"}
	now := time.Date(2026, 1, 1, 0, 0, 30, 0, time.UTC)

	var merchants []merchantRow
	checkIndexScan(t, s, "merchants", s.tx.listMerchantsQuery(&merchants, deep, 26).String(), "merchants_list_idx")
	for name, c := range map[string]struct {
		q     paykit.ListQuery[paykit.JobListParams]
		index string
	}{
		"all":            {paykit.ListQuery[paykit.JobListParams]{After: deep, Limit: 26}, "jobs_list_idx"},
		"retrying":       {paykit.ListQuery[paykit.JobListParams]{Filter: paykit.JobListParams{State: paykit.JobRetrying}, After: deep, Limit: 26}, "jobs_list_idx"},
		"waiting":        {paykit.ListQuery[paykit.JobListParams]{Filter: paykit.JobListParams{State: paykit.JobWaiting}, After: deep, Limit: 26}, "jobs_list_idx"},
		"merchant":       {paykit.ListQuery[paykit.JobListParams]{Filter: paykit.JobListParams{MerchantID: "mch_7"}, After: deep, Limit: 26}, "jobs_merchant_list_idx"},
		"kind and state": {paykit.ListQuery[paykit.JobListParams]{Filter: paykit.JobListParams{Kind: "payout.inquire", State: paykit.JobDue}, After: deep, Limit: 26}, "jobs_"}, // by kind or by time, as the planner likes
	} {
		var rows []jobRow
		checkIndexScan(t, s, name, s.tx.listJobsQuery(&rows, c.q, now).String(), c.index)
	}
}

// TestPausedEndpointsCountUsesIndex: the gauge of paused webhook endpoints
// reads the partial index of paused ones (migration 0016), not every
// endpoint.
func TestPausedEndpointsCountUsesIndex(t *testing.T) {
	t.Parallel()
	s := openPostgres(t)
	ctx := context.Background()
	for _, stmt := range []string{
		`INSERT INTO webhook_endpoints (id, merchant_id, environment, url, secrets, status, disabled_reason, created_at, updated_at, paused_until)
		SELECT 'we_' || lpad(i::text, 8, '0'), 'mch_' || (i % 500), 'live', 'https://hooks.example.com/' || i, '[]', 'enabled', '', t, t,
			CASE WHEN i % 1000 = 0 THEN t + INTERVAL '1 hour' END
		FROM generate_series(1, 20000) AS i, LATERAL (SELECT TIMESTAMPTZ '2026-01-01 00:00:00+00' + i * INTERVAL '1 millisecond' AS t) x`,
		"ANALYZE webhook_endpoints",
	} {
		if _, err := s.db.ExecContext(ctx, stmt); err != nil {
			t.Fatal(err)
		}
	}
	now := time.Date(2026, 1, 1, 0, 30, 0, 0, time.UTC)
	n, err := s.CountPausedWebhookEndpoints(ctx, now)
	if err != nil || n != 20 {
		t.Fatalf("count = %d, %v; want 20", n, err)
	}
	var plan []string
	if err := s.db.NewRaw("EXPLAIN "+s.tx.pausedEndpointsQuery(now).String()).Scan(ctx, &plan); err != nil {
		t.Fatal(err)
	}
	text := strings.Join(plan, "\n")
	if !strings.Contains(text, "webhook_endpoints_paused_idx") || strings.Contains(text, "Seq Scan") {
		t.Errorf("the count does not read webhook_endpoints_paused_idx:\n%s", text)
	}
}
