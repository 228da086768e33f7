package sqlstore

import (
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"github.com/paykit/paykit"
)

// The merchant list and the operator's view of background work. Job states
// depend on the time of the question: the conditions below are those of
// paykit.Job.State, with now as an argument. Migration 0008 adds the
// indexes these lists and counts read.

// ListMerchants implements paykit.Tx.
func (t tx) ListMerchants(ctx context.Context, after *paykit.Position, limit int) ([]paykit.Merchant, error) {
	var rows []merchantRow
	if err := t.listMerchantsQuery(&rows, after, limit).Scan(ctx); err != nil {
		return nil, mapError("list merchants", err)
	}
	out := make([]paykit.Merchant, len(rows))
	for i, r := range rows {
		out[i] = paykit.Merchant{ID: r.ID, Name: r.Name, CreatedAt: r.CreatedAt.UTC()}
	}
	return out, nil
}

func (t tx) listMerchantsQuery(rows *[]merchantRow, after *paykit.Position, limit int) *bun.SelectQuery {
	return newestFirst(t.db.NewSelect().Model(rows), after, limit)
}

// notLeased is the condition of a job no worker holds at ?.
const notLeased = "(lease_until IS NULL OR lease_until <= ?)"

// ListJobs implements paykit.JobQueue.
func (t tx) ListJobs(ctx context.Context, q paykit.ListQuery[paykit.JobListParams], now time.Time) ([]paykit.Job, error) {
	var rows []jobRow
	if err := t.listJobsQuery(&rows, q, now).Scan(ctx); err != nil {
		return nil, mapError("list jobs", err)
	}
	out := make([]paykit.Job, len(rows))
	for i := range rows {
		out[i] = rows[i].job()
	}
	return out, nil
}

func (t tx) listJobsQuery(rows *[]jobRow, q paykit.ListQuery[paykit.JobListParams], now time.Time) *bun.SelectQuery {
	f := q.Filter
	sel := t.db.NewSelect().Model(rows)
	if f.Kind != "" {
		sel = sel.Where("kind = ?", f.Kind)
	}
	if f.MerchantID != "" {
		sel = sel.Where("merchant_id = ?", f.MerchantID)
	}
	now = now.UTC()
	if f.State == paykit.JobCompleted {
		return newestFirst(sel.Where("completed_at IS NOT NULL"), q.After, q.Limit)
	}
	sel = sel.Where(pendingJob)
	// idle: not leased, and neither flagged nor waiting (the states that
	// come before retrying, due and scheduled).
	idle := func(sel *bun.SelectQuery) *bun.SelectQuery {
		return sel.Where(notLeased, now).Where("state NOT IN ('needs_attention', 'waiting')")
	}
	switch f.State {
	case paykit.JobRunning:
		sel = sel.Where("lease_until > ?", now)
	case paykit.JobNeedsAttention:
		sel = sel.Where(notLeased, now).Where("state = 'needs_attention'")
	case paykit.JobWaiting:
		sel = sel.Where(notLeased, now).Where("state = 'waiting'")
	case paykit.JobRetrying:
		sel = idle(sel).Where("attempts > 0")
	case paykit.JobAvailable:
		sel = idle(sel).Where("attempts = 0")
	case paykit.JobDue:
		sel = idle(sel).Where("attempts = 0").Where("run_at <= ?", now)
	case paykit.JobScheduled:
		sel = idle(sel).Where("attempts = 0").Where("run_at > ?", now)
	}
	return newestFirst(sel, q.After, q.Limit)
}

// jobStatsRow is one kind's line of JobStats.
type jobStatsRow struct {
	Kind      string     `bun:"kind"`
	Due       int        `bun:"due"`
	Running   int        `bun:"running"`
	Retrying  int        `bun:"retrying"`
	Waiting   int        `bun:"waiting"`
	Attention int        `bun:"needs_attention"`
	OldestDue *time.Time `bun:"oldest_due"`
}

// JobStats implements paykit.JobQueue in one pass over the pending
// jobs.
func (t tx) JobStats(ctx context.Context, now time.Time) ([]paykit.JobKindStats, error) {
	var rows []jobStatsRow
	if err := t.jobStatsQuery(now).Scan(ctx, &rows); err != nil {
		return nil, mapError("job stats", err)
	}
	out := make([]paykit.JobKindStats, len(rows))
	for i, r := range rows {
		out[i] = paykit.JobKindStats{Kind: r.Kind, Due: r.Due, Running: r.Running, Retrying: r.Retrying, Waiting: r.Waiting, NeedsAttention: r.Attention, OldestDue: utcPtr(r.OldestDue)}
	}
	return out, nil
}

func (t tx) jobStatsQuery(now time.Time) *bun.SelectQuery {
	now = now.UTC()
	return t.db.NewSelect().Table("jobs").
		Column("kind").
		ColumnExpr("SUM(CASE WHEN "+notLeased+" AND run_at <= ? THEN 1 ELSE 0 END) AS due", now, now).
		ColumnExpr("SUM(CASE WHEN lease_until > ? THEN 1 ELSE 0 END) AS running", now).
		ColumnExpr("SUM(CASE WHEN "+notLeased+" AND attempts > 0 AND state <> 'waiting' THEN 1 ELSE 0 END) AS retrying", now).
		ColumnExpr("SUM(CASE WHEN "+notLeased+" AND state = 'waiting' THEN 1 ELSE 0 END) AS waiting", now).
		ColumnExpr("SUM(CASE WHEN state = 'needs_attention' THEN 1 ELSE 0 END) AS needs_attention").
		ColumnExpr("MIN(CASE WHEN "+notLeased+" AND run_at <= ? THEN run_at END) AS oldest_due", now, now).
		Where(pendingJob).Group("kind").Order("kind")
}

// CountStaleProcessing implements paykit.Tx with two counts that
// read the partial indexes of processing intents.
func (t tx) CountStaleProcessing(ctx context.Context, updatedBefore time.Time) (paykit.StaleCounts, error) {
	var c paykit.StaleCounts
	for _, q := range []struct {
		table, status string
		n             *int
	}{
		{"payment_intents", string(paykit.PaymentProcessing), &c.PaymentIntents},
		{"payout_intents", string(paykit.PayoutProcessing), &c.PayoutIntents},
	} {
		err := t.db.NewSelect().Table(q.table).ColumnExpr("count(*)").
			Where("status = ?", q.status).Where("updated_at <= ?", updatedBefore.UTC()).
			Scan(ctx, q.n)
		if err != nil {
			return paykit.StaleCounts{}, mapError("count stale intents", err)
		}
	}
	return c, nil
}

// CountPausedWebhookEndpoints implements paykit.Tx with a count
// that reads the partial index of paused endpoints (migration 0016).
func (t tx) CountPausedWebhookEndpoints(ctx context.Context, now time.Time) (int, error) {
	var n int
	if err := t.pausedEndpointsQuery(now).Scan(ctx, &n); err != nil {
		return 0, mapError("count paused webhook endpoints", err)
	}
	return n, nil
}

func (t tx) pausedEndpointsQuery(now time.Time) *bun.SelectQuery {
	return t.db.NewSelect().Table("webhook_endpoints").ColumnExpr("count(*)").Where("paused_until > ?", now.UTC())
}

// statusTables are the tables of the resources CountStatuses counts.
var statusTables = map[string]string{
	"payment_intent": "payment_intents",
	"payout_intent":  "payout_intents",
	"checkout":       "checkouts",
	"refund":         "paykit_refunds",
}

// CountStatuses implements paykit.Tx with one grouped count that
// reads the (merchant_id, environment, created_at) range of the lists'
// indexes.
func (t tx) CountStatuses(ctx context.Context, object string, scope paykit.Scope, since time.Time) (map[string]int, error) {
	table, ok := statusTables[object]
	if !ok {
		return nil, fmt.Errorf("sqlstore: count statuses of %q", object)
	}
	var rows []struct {
		Status string `bun:"status"`
		N      int    `bun:"n"`
	}
	err := inScope(t.db.NewSelect().Table(table).ColumnExpr("status").ColumnExpr("count(*) AS n"), scope).
		Where("created_at >= ?", since.UTC()).Group("status").Scan(ctx, &rows)
	if err != nil {
		return nil, mapError("count statuses", err)
	}
	out := make(map[string]int, len(rows))
	for _, r := range rows {
		out[r.Status] = r.N
	}
	return out, nil
}
