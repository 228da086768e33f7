package memory

import (
	"context"
	"slices"
	"time"

	"github.com/paykit/paykit"
)

// --- events ---

func copyEvent(e paykit.Event) paykit.Event {
	return copyEventWith(e, copyPaymentPtr)
}

// copyEventWith is copyEvent with copyPI copying a payment intent.
func copyEventWith(e paykit.Event, copyPI func(*paykit.PaymentIntent) *paykit.PaymentIntent) paykit.Event {
	e.Resource = copyResource(e.Resource, copyPI)
	return e
}

// CreateEvent implements paykit.Tx.
func (t *txn) CreateEvent(_ context.Context, e *paykit.Event) error {
	if _, ok := t.d.events[e.ID]; ok {
		return conflict("event", "id")
	}
	put(t, t.d.events, e.ID, copyEventWith(*e, t.storePayment))
	return nil
}

// GetEvent implements paykit.Tx.
func (t *txn) GetEvent(_ context.Context, scope paykit.Scope, id string) (*paykit.Event, error) {
	e, ok := t.d.events[id]
	if !ok || e.Scope() != scope {
		return nil, paykit.ErrNotFound
	}
	e = copyEvent(e)
	return &e, nil
}

// ListEvents implements paykit.Tx.
func (t *txn) ListEvents(_ context.Context, q paykit.ListQuery[paykit.EventListParams]) ([]paykit.Event, error) {
	var out []paykit.Event
	f := q.Filter
	for _, e := range t.d.events {
		if e.Scope() == q.Scope && (len(f.Types) == 0 || slices.Contains(f.Types, e.Type)) &&
			(f.CreatedAfter == nil || !e.CreatedAt.Before(*f.CreatedAfter)) &&
			(f.CreatedBefore == nil || e.CreatedAt.Before(*f.CreatedBefore)) {
			out = append(out, copyEvent(e))
		}
	}
	return page(out, func(e *paykit.Event) (time.Time, string) { return e.CreatedAt, e.ID }, q.After, q.Limit), nil
}

// --- webhook endpoints and attempts ---

func copyEndpoint(w paykit.WebhookEndpoint) paykit.WebhookEndpoint {
	w.Secrets = slices.Clone(w.Secrets)
	for i := range w.Secrets {
		w.Secrets[i].Sealed = slices.Clone(w.Secrets[i].Sealed)
		w.Secrets[i].ExpiresAt = copyTime(w.Secrets[i].ExpiresAt)
	}
	w.PausedUntil = copyTime(w.PausedUntil)
	w.EnabledEvents = slices.Clone(w.EnabledEvents)
	w.DeletedAt = copyTime(w.DeletedAt)
	return w
}

// CreateWebhookEndpoint implements paykit.Tx.
func (t *txn) CreateWebhookEndpoint(_ context.Context, w *paykit.WebhookEndpoint) error {
	if _, ok := t.d.endpoints[w.ID]; ok {
		return conflict("webhook_endpoint", "id")
	}
	put(t, t.d.endpoints, w.ID, copyEndpoint(*w))
	return nil
}

// GetWebhookEndpoint implements paykit.Tx.
func (t *txn) GetWebhookEndpoint(_ context.Context, id string) (*paykit.WebhookEndpoint, error) {
	w, ok := t.d.endpoints[id]
	if !ok {
		return nil, paykit.ErrNotFound
	}
	w = copyEndpoint(w)
	return &w, nil
}

// UpdateWebhookEndpoint implements paykit.Tx.
func (t *txn) UpdateWebhookEndpoint(_ context.Context, w *paykit.WebhookEndpoint) error {
	old, ok := t.d.endpoints[w.ID]
	if !ok || old.MerchantID != w.MerchantID || old.Environment != w.Environment {
		return paykit.ErrNotFound
	}
	if old.Version != w.Version {
		return paykit.ErrVersionConflict
	}
	w.Version++
	put(t, t.d.endpoints, w.ID, copyEndpoint(*w))
	return nil
}

// ListWebhookEndpoints implements paykit.Tx.
func (t *txn) ListWebhookEndpoints(_ context.Context, merchantID string) ([]paykit.WebhookEndpoint, error) {
	var out []paykit.WebhookEndpoint
	for _, w := range t.d.endpoints {
		if w.MerchantID == merchantID {
			out = append(out, copyEndpoint(w))
		}
	}
	return page(out, func(w *paykit.WebhookEndpoint) (time.Time, string) { return w.CreatedAt, w.ID }, nil, 0), nil
}

// CreateWebhookAttempt implements paykit.Tx.
func (t *txn) CreateWebhookAttempt(_ context.Context, a *paykit.WebhookAttempt) error {
	if _, ok := t.d.attempts[a.ID]; ok {
		return conflict("webhook_attempt", "id")
	}
	put(t, t.d.attempts, a.ID, *a)
	return nil
}

// ListWebhookAttempts implements paykit.Tx.
func (t *txn) ListWebhookAttempts(_ context.Context, q paykit.WebhookAttemptQuery) ([]paykit.WebhookAttempt, error) {
	var out []paykit.WebhookAttempt
	for _, a := range t.d.attempts {
		if a.EndpointID == q.EndpointID && (q.EventID == "" || a.EventID == q.EventID) {
			out = append(out, a)
		}
	}
	return page(out, func(a *paykit.WebhookAttempt) (time.Time, string) { return a.CreatedAt, a.ID }, q.After, q.Limit), nil
}

// Autocommit forms.

// CreateEvent implements paykit.Tx in its own transaction.
func (s *Store) CreateEvent(ctx context.Context, e *paykit.Event) error {
	return s.run(ctx, func(t *txn) error { return t.CreateEvent(ctx, e) })
}

// GetEvent implements paykit.Tx in its own transaction.
func (s *Store) GetEvent(ctx context.Context, scope paykit.Scope, id string) (*paykit.Event, error) {
	return call(s, ctx, func(t *txn) (*paykit.Event, error) { return t.GetEvent(ctx, scope, id) })
}

// ListEvents implements paykit.Tx in its own transaction.
func (s *Store) ListEvents(ctx context.Context, q paykit.ListQuery[paykit.EventListParams]) ([]paykit.Event, error) {
	return call(s, ctx, func(t *txn) ([]paykit.Event, error) { return t.ListEvents(ctx, q) })
}

// CreateWebhookEndpoint implements paykit.Tx in its own transaction.
func (s *Store) CreateWebhookEndpoint(ctx context.Context, w *paykit.WebhookEndpoint) error {
	return s.run(ctx, func(t *txn) error { return t.CreateWebhookEndpoint(ctx, w) })
}

// GetWebhookEndpoint implements paykit.Tx in its own transaction.
func (s *Store) GetWebhookEndpoint(ctx context.Context, id string) (*paykit.WebhookEndpoint, error) {
	return call(s, ctx, func(t *txn) (*paykit.WebhookEndpoint, error) { return t.GetWebhookEndpoint(ctx, id) })
}

// UpdateWebhookEndpoint implements paykit.Tx in its own transaction.
func (s *Store) UpdateWebhookEndpoint(ctx context.Context, w *paykit.WebhookEndpoint) error {
	return s.run(ctx, func(t *txn) error { return t.UpdateWebhookEndpoint(ctx, w) })
}

// ListWebhookEndpoints implements paykit.Tx in its own transaction.
func (s *Store) ListWebhookEndpoints(ctx context.Context, merchantID string) ([]paykit.WebhookEndpoint, error) {
	return call(s, ctx, func(t *txn) ([]paykit.WebhookEndpoint, error) { return t.ListWebhookEndpoints(ctx, merchantID) })
}

// CreateWebhookAttempt implements paykit.Tx in its own transaction.
func (s *Store) CreateWebhookAttempt(ctx context.Context, a *paykit.WebhookAttempt) error {
	return s.run(ctx, func(t *txn) error { return t.CreateWebhookAttempt(ctx, a) })
}

// ListWebhookAttempts implements paykit.Tx in its own transaction.
func (s *Store) ListWebhookAttempts(ctx context.Context, q paykit.WebhookAttemptQuery) ([]paykit.WebhookAttempt, error) {
	return call(s, ctx, func(t *txn) ([]paykit.WebhookAttempt, error) { return t.ListWebhookAttempts(ctx, q) })
}
