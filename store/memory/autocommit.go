package memory

import (
	"context"
	"time"

	"github.com/paykit/paykit"
)

// call runs f as one transaction and returns its result.
func call[T any](s *Store, ctx context.Context, f func(t *txn) (T, error)) (T, error) {
	var out T
	err := s.run(ctx, func(t *txn) error {
		var err error
		out, err = f(t)
		return err
	})
	return out, err
}

// CreateMerchant implements paykit.Tx in its own transaction.
func (s *Store) CreateMerchant(ctx context.Context, m *paykit.Merchant) error {
	return s.run(ctx, func(t *txn) error { return t.CreateMerchant(ctx, m) })
}

// GetMerchant implements paykit.Tx in its own transaction.
func (s *Store) GetMerchant(ctx context.Context, id string) (*paykit.Merchant, error) {
	return call(s, ctx, func(t *txn) (*paykit.Merchant, error) { return t.GetMerchant(ctx, id) })
}

// CreateAPIKey implements paykit.Tx in its own transaction.
func (s *Store) CreateAPIKey(ctx context.Context, k *paykit.APIKey) error {
	return s.run(ctx, func(t *txn) error { return t.CreateAPIKey(ctx, k) })
}

// GetAPIKey implements paykit.Tx in its own transaction.
func (s *Store) GetAPIKey(ctx context.Context, id string) (*paykit.APIKey, error) {
	return call(s, ctx, func(t *txn) (*paykit.APIKey, error) { return t.GetAPIKey(ctx, id) })
}

// GetAPIKeyByPublicKey implements paykit.Tx in its own transaction.
func (s *Store) GetAPIKeyByPublicKey(ctx context.Context, publicKey string) (*paykit.APIKey, error) {
	return call(s, ctx, func(t *txn) (*paykit.APIKey, error) { return t.GetAPIKeyByPublicKey(ctx, publicKey) })
}

// UpdateAPIKey implements paykit.Tx in its own transaction.
func (s *Store) UpdateAPIKey(ctx context.Context, k *paykit.APIKey) error {
	return s.run(ctx, func(t *txn) error { return t.UpdateAPIKey(ctx, k) })
}

// ListAPIKeys implements paykit.Tx in its own transaction.
func (s *Store) ListAPIKeys(ctx context.Context, merchantID string) ([]paykit.APIKey, error) {
	return call(s, ctx, func(t *txn) ([]paykit.APIKey, error) { return t.ListAPIKeys(ctx, merchantID) })
}

// CreateAuditEvent implements paykit.Tx in its own transaction.
func (s *Store) CreateAuditEvent(ctx context.Context, e *paykit.AuditEvent) error {
	return s.run(ctx, func(t *txn) error { return t.CreateAuditEvent(ctx, e) })
}

// ListAuditEvents implements paykit.Tx in its own transaction.
func (s *Store) ListAuditEvents(ctx context.Context, q paykit.ListQuery[paykit.AuditListParams]) ([]paykit.AuditEvent, error) {
	return call(s, ctx, func(t *txn) ([]paykit.AuditEvent, error) { return t.ListAuditEvents(ctx, q) })
}

// CreatePaymentIntent implements paykit.Tx in its own transaction.
func (s *Store) CreatePaymentIntent(ctx context.Context, p *paykit.PaymentIntent) error {
	return s.run(ctx, func(t *txn) error { return t.CreatePaymentIntent(ctx, p) })
}

// GetPaymentIntent implements paykit.Tx in its own transaction.
func (s *Store) GetPaymentIntent(ctx context.Context, scope paykit.Scope, id string) (*paykit.PaymentIntent, error) {
	return call(s, ctx, func(t *txn) (*paykit.PaymentIntent, error) { return t.GetPaymentIntent(ctx, scope, id) })
}

// UpdatePaymentIntent implements paykit.Tx in its own transaction.
func (s *Store) UpdatePaymentIntent(ctx context.Context, p *paykit.PaymentIntent) error {
	return s.run(ctx, func(t *txn) error { return t.UpdatePaymentIntent(ctx, p) })
}

// ListPaymentIntents implements paykit.Tx in its own transaction.
func (s *Store) ListPaymentIntents(ctx context.Context, q paykit.ListQuery[paykit.ListParams[paykit.PaymentStatus]]) ([]paykit.PaymentIntent, error) {
	return call(s, ctx, func(t *txn) ([]paykit.PaymentIntent, error) { return t.ListPaymentIntents(ctx, q) })
}

// CreateIdempotencyRecord implements paykit.Tx in its own transaction.
func (s *Store) CreateIdempotencyRecord(ctx context.Context, r *paykit.IdempotencyRecord) error {
	return s.run(ctx, func(t *txn) error { return t.CreateIdempotencyRecord(ctx, r) })
}

// GetIdempotencyRecord implements paykit.Tx in its own transaction.
func (s *Store) GetIdempotencyRecord(ctx context.Context, scope paykit.Scope, key string) (*paykit.IdempotencyRecord, error) {
	return call(s, ctx, func(t *txn) (*paykit.IdempotencyRecord, error) { return t.GetIdempotencyRecord(ctx, scope, key) })
}

// UpdateIdempotencyRecord implements paykit.Tx in its own transaction.
func (s *Store) UpdateIdempotencyRecord(ctx context.Context, r *paykit.IdempotencyRecord) error {
	return s.run(ctx, func(t *txn) error { return t.UpdateIdempotencyRecord(ctx, r) })
}

// DeleteIdempotencyRecord implements paykit.Tx in its own transaction.
func (s *Store) DeleteIdempotencyRecord(ctx context.Context, scope paykit.Scope, key string) error {
	return s.run(ctx, func(t *txn) error { return t.DeleteIdempotencyRecord(ctx, scope, key) })
}

// PurgeIdempotencyRecords implements paykit.Tx in its own transaction.
func (s *Store) PurgeIdempotencyRecords(ctx context.Context, now time.Time) (int, error) {
	return call(s, ctx, func(t *txn) (int, error) { return t.PurgeIdempotencyRecords(ctx, now) })
}

// EnqueueJob implements paykit.Tx in its own transaction.
func (s *Store) EnqueueJob(ctx context.Context, j *paykit.Job) error {
	return s.run(ctx, func(t *txn) error { return t.EnqueueJob(ctx, j) })
}

// GetJob implements paykit.Tx in its own transaction.
func (s *Store) GetJob(ctx context.Context, id string) (*paykit.Job, error) {
	return call(s, ctx, func(t *txn) (*paykit.Job, error) { return t.GetJob(ctx, id) })
}

// DeferJobs implements paykit.Tx in its own transaction.
func (s *Store) DeferJobs(ctx context.Context, partition string, until time.Time) error {
	return s.run(ctx, func(t *txn) error { return t.DeferJobs(ctx, partition, until) })
}

// ResumeJobs implements paykit.Tx in its own transaction.
func (s *Store) ResumeJobs(ctx context.Context, partition string, until, now time.Time) error {
	return s.run(ctx, func(t *txn) error { return t.ResumeJobs(ctx, partition, until, now) })
}

// CompleteJobByDedupKey implements paykit.Tx in its own transaction.
func (s *Store) CompleteJobByDedupKey(ctx context.Context, dedupKey string, at time.Time) error {
	return s.run(ctx, func(t *txn) error { return t.CompleteJobByDedupKey(ctx, dedupKey, at) })
}

// ExpediteJob implements paykit.Tx in its own transaction.
func (s *Store) ExpediteJob(ctx context.Context, dedupKey string, runAt time.Time) error {
	return s.run(ctx, func(t *txn) error { return t.ExpediteJob(ctx, dedupKey, runAt) })
}

// CreatePayoutIntent implements paykit.Tx in its own transaction.
func (s *Store) CreatePayoutIntent(ctx context.Context, p *paykit.PayoutIntent) error {
	return s.run(ctx, func(t *txn) error { return t.CreatePayoutIntent(ctx, p) })
}

// GetPayoutIntent implements paykit.Tx in its own transaction.
func (s *Store) GetPayoutIntent(ctx context.Context, scope paykit.Scope, id string) (*paykit.PayoutIntent, error) {
	return call(s, ctx, func(t *txn) (*paykit.PayoutIntent, error) { return t.GetPayoutIntent(ctx, scope, id) })
}

// FindPayoutIntent implements paykit.Tx in its own transaction.
func (s *Store) FindPayoutIntent(ctx context.Context, id string) (*paykit.PayoutIntent, error) {
	return call(s, ctx, func(t *txn) (*paykit.PayoutIntent, error) { return t.FindPayoutIntent(ctx, id) })
}

// UpdatePayoutIntent implements paykit.Tx in its own transaction.
func (s *Store) UpdatePayoutIntent(ctx context.Context, p *paykit.PayoutIntent) error {
	return s.run(ctx, func(t *txn) error { return t.UpdatePayoutIntent(ctx, p) })
}

// ListPayoutIntents implements paykit.Tx in its own transaction.
func (s *Store) ListPayoutIntents(ctx context.Context, q paykit.PayoutQuery) ([]paykit.PayoutIntent, error) {
	return call(s, ctx, func(t *txn) ([]paykit.PayoutIntent, error) { return t.ListPayoutIntents(ctx, q) })
}

// PostLedger implements paykit.Tx in its own transaction.
func (s *Store) PostLedger(ctx context.Context, lt *paykit.LedgerTxn) error {
	return s.run(ctx, func(t *txn) error { return t.PostLedger(ctx, lt) })
}

// GetBalance implements paykit.Tx in its own transaction.
func (s *Store) GetBalance(ctx context.Context, scope paykit.Scope, currency string) (*paykit.Balance, error) {
	return call(s, ctx, func(t *txn) (*paykit.Balance, error) { return t.GetBalance(ctx, scope, currency) })
}

// ListBalances implements paykit.Tx in its own transaction.
func (s *Store) ListBalances(ctx context.Context, scope paykit.Scope) ([]paykit.Balance, error) {
	return call(s, ctx, func(t *txn) ([]paykit.Balance, error) { return t.ListBalances(ctx, scope) })
}

// ListLedgerEntries implements paykit.Tx in its own transaction.
func (s *Store) ListLedgerEntries(ctx context.Context, q paykit.LedgerQuery) ([]paykit.LedgerEntry, error) {
	return call(s, ctx, func(t *txn) ([]paykit.LedgerEntry, error) { return t.ListLedgerEntries(ctx, q) })
}

// FindPaymentIntent implements paykit.Tx in its own transaction.
func (s *Store) FindPaymentIntent(ctx context.Context, id string) (*paykit.PaymentIntent, error) {
	return call(s, ctx, func(t *txn) (*paykit.PaymentIntent, error) { return t.FindPaymentIntent(ctx, id) })
}
