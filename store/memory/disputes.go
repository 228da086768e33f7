package memory

import (
	"context"

	"github.com/paykit/paykit"
)

// --- disputes ---

// disputeKey is a dispute's intentKey. It has no merchant reference: its
// id, unique anyway, stands in for one. Its Provider and the Provider's
// id of it are an attempt's, so that the intents' index by attempt finds
// it.
func disputeKey(d *paykit.Dispute) intentKey {
	return intentKey{d.ID, d.Scope(), d.ID, d.CreatedAt, &d.Version,
		&paykit.ProviderAttempt{Provider: d.Provider, ProviderRef: d.ProviderRef}}
}

func copyDispute(d paykit.Dispute) paykit.Dispute {
	d.EvidenceSubmittedAt = copyTime(d.EvidenceSubmittedAt)
	d.ClosedAt = copyTime(d.ClosedAt)
	return d
}

// disputeRefTaken reports whether another dispute than d holds d's
// Provider reference.
func (t *txn) disputeRefTaken(d *paykit.Dispute) bool {
	if d.ProviderRef == "" {
		return false
	}
	id, _, ok := t.d.disputes.byProviderRef(d.Provider, d.ProviderRef)
	return ok && id != d.ID
}

// CreateDispute implements paykit.Tx.
func (t *txn) CreateDispute(_ context.Context, d *paykit.Dispute) error {
	if _, ok := t.d.disputes.rows[d.ID]; !ok && t.disputeRefTaken(d) {
		return conflict("dispute", "provider_ref")
	}
	return t.d.disputes.create(t, d)
}

// GetDispute implements paykit.Tx.
func (t *txn) GetDispute(_ context.Context, scope paykit.Scope, id string) (*paykit.Dispute, error) {
	return t.d.disputes.get(&scope, id)
}

// FindDisputeByProviderRef implements paykit.Tx.
func (t *txn) FindDisputeByProviderRef(_ context.Context, provider, ref string) (*paykit.Dispute, error) {
	if ref == "" {
		return nil, paykit.ErrNotFound
	}
	id, _, ok := t.d.disputes.byProviderRef(provider, ref)
	if !ok {
		return nil, paykit.ErrNotFound
	}
	return t.d.disputes.get(nil, id)
}

// UpdateDispute implements paykit.Tx.
func (t *txn) UpdateDispute(_ context.Context, d *paykit.Dispute) error {
	// The Version rule's answers come first, as for a Store that writes
	// and then finds the unique key taken.
	if old, ok := t.d.disputes.rows[d.ID]; ok && old.Scope() == d.Scope() && old.Version == d.Version && t.disputeRefTaken(d) {
		return conflict("dispute", "provider_ref")
	}
	return t.d.disputes.update(t, d)
}

// ListDisputes implements paykit.Tx.
func (t *txn) ListDisputes(_ context.Context, q paykit.ListQuery[paykit.DisputeListParams]) ([]paykit.Dispute, error) {
	f := q.Filter.ListParams
	f.Country, f.MerchantReference = "", "" // a dispute has neither
	return t.d.disputes.list(func(d *paykit.Dispute) bool {
		return d.Scope() == q.Scope && (q.Filter.PaymentIntent == "" || d.PaymentIntentID == q.Filter.PaymentIntent) &&
			matches(f, d.Status, d.Currency, "", "", d.CreatedAt)
	}, q.After, q.Limit), nil
}

// CreateDispute implements paykit.Tx in its own transaction.
func (s *Store) CreateDispute(ctx context.Context, d *paykit.Dispute) error {
	return s.run(ctx, func(t *txn) error { return t.CreateDispute(ctx, d) })
}

// GetDispute implements paykit.Tx in its own transaction.
func (s *Store) GetDispute(ctx context.Context, scope paykit.Scope, id string) (*paykit.Dispute, error) {
	return call(s, ctx, func(t *txn) (*paykit.Dispute, error) { return t.GetDispute(ctx, scope, id) })
}

// FindDisputeByProviderRef implements paykit.Tx in its own transaction.
func (s *Store) FindDisputeByProviderRef(ctx context.Context, provider, ref string) (*paykit.Dispute, error) {
	return call(s, ctx, func(t *txn) (*paykit.Dispute, error) { return t.FindDisputeByProviderRef(ctx, provider, ref) })
}

// UpdateDispute implements paykit.Tx in its own transaction.
func (s *Store) UpdateDispute(ctx context.Context, d *paykit.Dispute) error {
	return s.run(ctx, func(t *txn) error { return t.UpdateDispute(ctx, d) })
}

// ListDisputes implements paykit.Tx in its own transaction.
func (s *Store) ListDisputes(ctx context.Context, q paykit.ListQuery[paykit.DisputeListParams]) ([]paykit.Dispute, error) {
	return call(s, ctx, func(t *txn) ([]paykit.Dispute, error) { return t.ListDisputes(ctx, q) })
}
