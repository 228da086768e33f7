package memory

import (
	"context"
	"slices"

	"github.com/paykit/paykit"
)

// --- payout intents ---

func payoutKey(p *paykit.PayoutIntent) intentKey {
	return intentKey{p.ID, p.Scope(), p.MerchantReference, p.CreatedAt, &p.Version, &p.ProviderAttempt}
}

func copyPayout(p paykit.PayoutIntent) paykit.PayoutIntent {
	p.AccountCiphertext = slices.Clone(p.AccountCiphertext)
	p.CancelRequestedAt = copyTime(p.CancelRequestedAt)
	p.ApprovalExpiresAt = copyTime(p.ApprovalExpiresAt)
	return p
}

// CreatePayoutIntent implements paykit.Tx.
func (t *txn) CreatePayoutIntent(_ context.Context, p *paykit.PayoutIntent) error {
	return t.d.payouts.create(t, p)
}

// GetPayoutIntent implements paykit.Tx.
func (t *txn) GetPayoutIntent(_ context.Context, scope paykit.Scope, id string) (*paykit.PayoutIntent, error) {
	return t.d.payouts.get(&scope, id)
}

// FindPayoutIntent implements paykit.Tx.
func (t *txn) FindPayoutIntent(_ context.Context, id string) (*paykit.PayoutIntent, error) {
	return t.d.payouts.get(nil, id)
}

// UpdatePayoutIntent implements paykit.Tx.
func (t *txn) UpdatePayoutIntent(_ context.Context, p *paykit.PayoutIntent) error {
	return t.d.payouts.update(t, p)
}

// ListPayoutIntents implements paykit.Tx.
func (t *txn) ListPayoutIntents(_ context.Context, q paykit.PayoutQuery) ([]paykit.PayoutIntent, error) {
	return t.d.payouts.list(func(p *paykit.PayoutIntent) bool {
		return (q.AllTenants || p.Scope() == q.Scope) && (!q.ApprovalPending || p.ApprovalPending) &&
			matches(q.Filter, p.Status, p.Currency, p.Country, p.MerchantReference, p.CreatedAt)
	}, q.After, q.Limit), nil
}
