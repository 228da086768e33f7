package memory

import (
	"context"

	"github.com/paykit/paykit"
)

// --- refunds ---

func refundKey(r *paykit.Refund) intentKey {
	return intentKey{r.ID, r.Scope(), r.MerchantReference, r.CreatedAt, &r.Version, &r.ProviderAttempt}
}

func copyRefund(r paykit.Refund) paykit.Refund {
	r.CompletedAt = copyTime(r.CompletedAt)
	return r
}

// CreateRefund implements paykit.Tx.
func (t *txn) CreateRefund(_ context.Context, r *paykit.Refund) error {
	return t.d.refunds.create(t, r)
}

// GetRefund implements paykit.Tx.
func (t *txn) GetRefund(_ context.Context, scope paykit.Scope, id string) (*paykit.Refund, error) {
	return t.d.refunds.get(&scope, id)
}

// FindRefund implements paykit.Tx.
func (t *txn) FindRefund(_ context.Context, id string) (*paykit.Refund, error) {
	return t.d.refunds.get(nil, id)
}

// UpdateRefund implements paykit.Tx.
func (t *txn) UpdateRefund(_ context.Context, r *paykit.Refund) error {
	return t.d.refunds.update(t, r)
}

// ListRefunds implements paykit.Tx.
func (t *txn) ListRefunds(_ context.Context, q paykit.ListQuery[paykit.RefundListParams]) ([]paykit.Refund, error) {
	f := q.Filter.ListParams
	f.Country = "" // a refund has no country
	return t.d.refunds.list(func(r *paykit.Refund) bool {
		return r.Scope() == q.Scope && (q.Filter.PaymentIntent == "" || r.PaymentIntentID == q.Filter.PaymentIntent) &&
			matches(f, r.Status, r.Currency, "", r.MerchantReference, r.CreatedAt)
	}, q.After, q.Limit), nil
}

// CreateRefund implements paykit.Tx in its own transaction.
func (s *Store) CreateRefund(ctx context.Context, r *paykit.Refund) error {
	return s.run(ctx, func(t *txn) error { return t.CreateRefund(ctx, r) })
}

// GetRefund implements paykit.Tx in its own transaction.
func (s *Store) GetRefund(ctx context.Context, scope paykit.Scope, id string) (*paykit.Refund, error) {
	return call(s, ctx, func(t *txn) (*paykit.Refund, error) { return t.GetRefund(ctx, scope, id) })
}

// FindRefund implements paykit.Tx in its own transaction.
func (s *Store) FindRefund(ctx context.Context, id string) (*paykit.Refund, error) {
	return call(s, ctx, func(t *txn) (*paykit.Refund, error) { return t.FindRefund(ctx, id) })
}

// UpdateRefund implements paykit.Tx in its own transaction.
func (s *Store) UpdateRefund(ctx context.Context, r *paykit.Refund) error {
	return s.run(ctx, func(t *txn) error { return t.UpdateRefund(ctx, r) })
}

// ListRefunds implements paykit.Tx in its own transaction.
func (s *Store) ListRefunds(ctx context.Context, q paykit.ListQuery[paykit.RefundListParams]) ([]paykit.Refund, error) {
	return call(s, ctx, func(t *txn) ([]paykit.Refund, error) { return t.ListRefunds(ctx, q) })
}
