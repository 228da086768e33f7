package memory

import (
	"context"
	"fmt"
	"time"

	"github.com/paykit/paykit"
)

// CountStatuses implements paykit.Tx.
func (t *txn) CountStatuses(_ context.Context, object string, scope paykit.Scope, since time.Time) (map[string]int, error) {
	switch object {
	case "payment_intent":
		return countStatuses(&t.d.payments, func(v *paykit.PaymentIntent) string { return string(v.Status) }, scope, since), nil
	case "payout_intent":
		return countStatuses(&t.d.payouts, func(v *paykit.PayoutIntent) string { return string(v.Status) }, scope, since), nil
	case "checkout":
		return countStatuses(&t.d.checkouts, func(v *paykit.Checkout) string { return string(v.Status) }, scope, since), nil
	case "refund":
		return countStatuses(&t.d.refunds, func(v *paykit.Refund) string { return string(v.Status) }, scope, since), nil
	}
	return nil, fmt.Errorf("memory: count statuses of %q", object)
}

// countStatuses counts the rows of scope created at or after since, by
// status.
func countStatuses[T any](in *intents[T], status func(*T) string, scope paykit.Scope, since time.Time) map[string]int {
	out := map[string]int{}
	for _, v := range in.rows {
		if k := in.key(v); k.scope == scope && !k.createdAt.Before(since) {
			out[status(v)]++
		}
	}
	return out
}

// CountStatuses implements paykit.Tx in its own transaction.
func (s *Store) CountStatuses(ctx context.Context, object string, scope paykit.Scope, since time.Time) (map[string]int, error) {
	return call(s, ctx, func(t *txn) (map[string]int, error) { return t.CountStatuses(ctx, object, scope, since) })
}
