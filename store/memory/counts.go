package memory

import (
	"context"
	"fmt"
	"time"

	"github.com/paykit/paykit"
)

// CountStatuses implements paykit.MonitorStore.
func (t *txn) CountStatuses(_ context.Context, kind paykit.ResourceKind, scope paykit.Scope, since time.Time) (map[string]int, error) {
	out := map[string]int{}
	count := func(s paykit.Scope, status string, created time.Time) {
		if s == scope && !created.Before(since) {
			out[status]++
		}
	}
	switch kind {
	case paykit.KindPaymentIntent:
		for _, v := range t.d.payments.rows {
			count(v.Scope(), string(v.Status), v.CreatedAt)
		}
	case paykit.KindPayoutIntent:
		for _, v := range t.d.payouts.rows {
			count(v.Scope(), string(v.Status), v.CreatedAt)
		}
	case paykit.KindCheckout:
		for _, v := range t.d.checkouts.rows {
			count(v.Scope(), string(v.Status), v.CreatedAt)
		}
	case paykit.KindRefund:
		for _, v := range t.d.refunds.rows {
			count(v.Scope(), string(v.Status), v.CreatedAt)
		}
	default:
		return nil, fmt.Errorf("memory: count statuses of %q", kind)
	}
	return out, nil
}

// CountStatuses implements paykit.Tx in its own transaction.
func (s *Store) CountStatuses(ctx context.Context, kind paykit.ResourceKind, scope paykit.Scope, since time.Time) (map[string]int, error) {
	return call(s, ctx, func(t *txn) (map[string]int, error) { return t.CountStatuses(ctx, kind, scope, since) })
}
