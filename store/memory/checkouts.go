package memory

import (
	"context"
	"maps"

	"github.com/paykit/paykit"
)

func checkoutKey(c *paykit.Checkout) intentKey {
	return intentKey{c.ID, c.Scope(), c.MerchantReference, c.CreatedAt, &c.Version, nil}
}

// copyCheckout deep-copies the stored fields of c; projection fields are
// not stored.
func copyCheckout(c paykit.Checkout) paykit.Checkout {
	c.Customer = maps.Clone(c.Customer)
	c.Metadata = maps.Clone(c.Metadata)
	c.PaymentMethodOptions = maps.Clone(c.PaymentMethodOptions)
	c.URL, c.PaymentStatus, c.ChosenMethod, c.ProviderStatus, c.ProcessingStaleAt, c.FailureCode = "", "", "", "", nil, ""
	return c
}

// CreateCheckout implements paykit.Tx.
func (t *txn) CreateCheckout(_ context.Context, c *paykit.Checkout) error {
	return t.d.checkouts.create(t, c)
}

// GetCheckout implements paykit.Tx.
func (t *txn) GetCheckout(_ context.Context, scope paykit.Scope, id string) (*paykit.Checkout, error) {
	return t.d.checkouts.get(&scope, id)
}

// UpdateCheckout implements paykit.Tx.
func (t *txn) UpdateCheckout(_ context.Context, c *paykit.Checkout) error {
	return t.d.checkouts.update(t, c)
}

// ListCheckouts implements paykit.Tx.
func (t *txn) ListCheckouts(_ context.Context, q paykit.ListQuery[paykit.ListParams[paykit.CheckoutStatus]]) ([]paykit.Checkout, error) {
	return t.d.checkouts.list(func(c *paykit.Checkout) bool {
		return c.Scope() == q.Scope && matches(q.Filter, c.Status, c.Currency, c.Country, c.MerchantReference, c.CreatedAt)
	}, q.After, q.Limit), nil
}

// CreateCheckout implements paykit.Tx in its own transaction.
func (s *Store) CreateCheckout(ctx context.Context, c *paykit.Checkout) error {
	return s.run(ctx, func(t *txn) error { return t.CreateCheckout(ctx, c) })
}

// GetCheckout implements paykit.Tx in its own transaction.
func (s *Store) GetCheckout(ctx context.Context, scope paykit.Scope, id string) (*paykit.Checkout, error) {
	return call(s, ctx, func(t *txn) (*paykit.Checkout, error) { return t.GetCheckout(ctx, scope, id) })
}

// UpdateCheckout implements paykit.Tx in its own transaction.
func (s *Store) UpdateCheckout(ctx context.Context, c *paykit.Checkout) error {
	return s.run(ctx, func(t *txn) error { return t.UpdateCheckout(ctx, c) })
}

// ListCheckouts implements paykit.Tx in its own transaction.
func (s *Store) ListCheckouts(ctx context.Context, q paykit.ListQuery[paykit.ListParams[paykit.CheckoutStatus]]) ([]paykit.Checkout, error) {
	return call(s, ctx, func(t *txn) ([]paykit.Checkout, error) { return t.ListCheckouts(ctx, q) })
}
