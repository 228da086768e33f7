package memory

import (
	"cmp"
	"context"
	"maps"
	"slices"
	"time"

	"github.com/paykit/paykit"
)

// --- merchant list and background-work monitoring ---

// ListMerchants implements paykit.Tx.
func (t *txn) ListMerchants(_ context.Context, after *paykit.Position, limit int) ([]paykit.Merchant, error) {
	rows := slices.Collect(maps.Values(t.d.merchants))
	return page(rows, func(m *paykit.Merchant) (time.Time, string) { return m.CreatedAt, m.ID }, after, limit), nil
}

// ListJobs implements paykit.JobQueue.
func (t *txn) ListJobs(_ context.Context, q paykit.ListQuery[paykit.JobListParams], now time.Time) ([]paykit.Job, error) {
	var out []paykit.Job
	f := q.Filter
	rows := t.d.jobs
	if f.State == paykit.JobCompleted {
		rows = t.d.doneJobs
	}
	for _, j := range rows {
		if (f.Kind == "" || j.Kind == f.Kind) && (f.MerchantID == "" || j.Scope.MerchantID == f.MerchantID) &&
			f.State.Matches(&j, now) {
			out = append(out, copyJob(j))
		}
	}
	return page(out, func(j *paykit.Job) (time.Time, string) { return j.CreatedAt, j.ID }, q.After, q.Limit), nil
}

// JobStats implements paykit.JobQueue.
func (t *txn) JobStats(_ context.Context, now time.Time) ([]paykit.JobKindStats, error) {
	byKind := map[string]*paykit.JobKindStats{}
	for _, j := range t.d.jobs {
		k := byKind[j.Kind]
		if k == nil {
			k = &paykit.JobKindStats{Kind: j.Kind}
			byKind[j.Kind] = k
		}
		leased := j.LeaseUntil != nil && j.LeaseUntil.After(now)
		switch {
		case leased:
			k.Running++
		case !j.RunAt.After(now):
			k.Due++
			if k.OldestDue == nil || j.RunAt.Before(*k.OldestDue) {
				k.OldestDue = copyTime(&j.RunAt)
			}
		}
		switch {
		case leased:
		case j.Status == paykit.JobWaiting:
			k.Waiting++
		case j.Attempts > 0:
			k.Retrying++
		}
		if j.Status == paykit.JobNeedsAttention {
			k.NeedsAttention++
		}
	}
	out := make([]paykit.JobKindStats, 0, len(byKind))
	for _, k := range byKind {
		out = append(out, *k)
	}
	slices.SortFunc(out, func(a, b paykit.JobKindStats) int { return cmp.Compare(a.Kind, b.Kind) })
	return out, nil
}

// CountStaleProcessing implements paykit.Tx.
func (t *txn) CountStaleProcessing(_ context.Context, updatedBefore time.Time) (paykit.StaleCounts, error) {
	var c paykit.StaleCounts
	for _, p := range t.d.payments.rows {
		if p.Status == paykit.PaymentProcessing && !p.UpdatedAt.After(updatedBefore) {
			c.PaymentIntents++
		}
	}
	for _, p := range t.d.payouts.rows {
		if p.Status == paykit.PayoutProcessing && !p.UpdatedAt.After(updatedBefore) {
			c.PayoutIntents++
		}
	}
	return c, nil
}

// CountPausedWebhookEndpoints implements paykit.Tx.
func (t *txn) CountPausedWebhookEndpoints(_ context.Context, now time.Time) (int, error) {
	n := 0
	for _, w := range t.d.endpoints {
		if w.Paused(now) {
			n++
		}
	}
	return n, nil
}

// ListMerchants implements paykit.Tx in its own transaction.
func (s *Store) ListMerchants(ctx context.Context, after *paykit.Position, limit int) ([]paykit.Merchant, error) {
	return call(s, ctx, func(t *txn) ([]paykit.Merchant, error) { return t.ListMerchants(ctx, after, limit) })
}

// CountStaleProcessing implements paykit.Tx in its own transaction.
func (s *Store) CountStaleProcessing(ctx context.Context, updatedBefore time.Time) (paykit.StaleCounts, error) {
	return call(s, ctx, func(t *txn) (paykit.StaleCounts, error) { return t.CountStaleProcessing(ctx, updatedBefore) })
}

// CountPausedWebhookEndpoints implements paykit.Tx in its own transaction.
func (s *Store) CountPausedWebhookEndpoints(ctx context.Context, now time.Time) (int, error) {
	return call(s, ctx, func(t *txn) (int, error) { return t.CountPausedWebhookEndpoints(ctx, now) })
}
