package memory

import (
	"context"
	"slices"

	"github.com/paykit/paykit"
)

// --- balance transactions ---

// balanceTxnKey is a balance transaction's intentKey. It has no merchant
// reference: its id, unique anyway, stands in for one.
func balanceTxnKey(b *paykit.BalanceTransaction) intentKey {
	return intentKey{b.ID, b.Scope(), b.ID, b.CreatedAt, &b.Version, nil}
}

func copyBalanceTxn(b paykit.BalanceTransaction) paykit.BalanceTransaction { return b }

// CreateBalanceTransaction implements paykit.Tx.
func (t *txn) CreateBalanceTransaction(_ context.Context, b *paykit.BalanceTransaction) error {
	return t.d.balanceTxns.create(t, b)
}

// GetBalanceTransaction implements paykit.Tx.
func (t *txn) GetBalanceTransaction(_ context.Context, scope paykit.Scope, id string) (*paykit.BalanceTransaction, error) {
	return t.d.balanceTxns.get(&scope, id)
}

// UpdateBalanceTransaction implements paykit.Tx.
func (t *txn) UpdateBalanceTransaction(_ context.Context, b *paykit.BalanceTransaction) error {
	return t.d.balanceTxns.update(t, b)
}

// ListBalanceTransactions implements paykit.Tx.
func (t *txn) ListBalanceTransactions(_ context.Context, q paykit.ListQuery[paykit.BalanceTransactionListParams]) ([]paykit.BalanceTransaction, error) {
	f := q.Filter.ListParams
	f.Country, f.MerchantReference = "", "" // a balance transaction has neither
	return t.d.balanceTxns.list(func(b *paykit.BalanceTransaction) bool {
		return b.Scope() == q.Scope && (q.Filter.Source == "" || b.Source == q.Filter.Source) &&
			(len(q.Filter.Types) == 0 || slices.Contains(q.Filter.Types, b.Type)) &&
			matches(f, b.Status, b.Currency, "", "", b.CreatedAt)
	}, q.After, q.Limit), nil
}

// CreateBalanceTransaction implements paykit.Tx in its own transaction.
func (s *Store) CreateBalanceTransaction(ctx context.Context, b *paykit.BalanceTransaction) error {
	return s.run(ctx, func(t *txn) error { return t.CreateBalanceTransaction(ctx, b) })
}

// GetBalanceTransaction implements paykit.Tx in its own transaction.
func (s *Store) GetBalanceTransaction(ctx context.Context, scope paykit.Scope, id string) (*paykit.BalanceTransaction, error) {
	return call(s, ctx, func(t *txn) (*paykit.BalanceTransaction, error) { return t.GetBalanceTransaction(ctx, scope, id) })
}

// UpdateBalanceTransaction implements paykit.Tx in its own transaction.
func (s *Store) UpdateBalanceTransaction(ctx context.Context, b *paykit.BalanceTransaction) error {
	return s.run(ctx, func(t *txn) error { return t.UpdateBalanceTransaction(ctx, b) })
}

// ListBalanceTransactions implements paykit.Tx in its own transaction.
func (s *Store) ListBalanceTransactions(ctx context.Context, q paykit.ListQuery[paykit.BalanceTransactionListParams]) ([]paykit.BalanceTransaction, error) {
	return call(s, ctx, func(t *txn) ([]paykit.BalanceTransaction, error) { return t.ListBalanceTransactions(ctx, q) })
}
