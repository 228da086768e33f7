package memory

import (
	"context"
	"slices"
	"time"

	"github.com/paykit/paykit"
)

// intents keeps one kind of intent (payment, payout) by id, with its
// merchant reference unique within its scope. A row is never changed
// where it is: an update puts a new one in its place, so the Store's
// events and stored answers may point at a row (see storePayment).
type intents[T any] struct {
	entity string // ConflictError.Entity
	rows   map[string]*T
	byRef  map[refKey]string
	// byAttempt finds an intent by the Provider's id of its attempt.
	byAttempt map[attemptRef]string
	key       func(*T) intentKey
	clone     func(T) T // a deep copy, so callers never share memory with the Store
	// share, when set, is clone for a value going into the Store, given
	// the version the Store holds (nil for a new row), whose maps it may
	// reuse.
	share func(v T, held *T) T
}

// intentKey is what the Store needs to know of an intent.
type intentKey struct {
	id        string
	scope     paykit.Scope
	ref       string
	createdAt time.Time
	version   *int64
	attempt   *paykit.ProviderAttempt // nil: the kind has no Provider attempt
}

// attemptRef is a Provider and its id of an attempt.
type attemptRef struct{ provider, ref string }

// attemptRefOf is k's attemptRef, and whether it has one.
func (k intentKey) attemptRefOf() (attemptRef, bool) {
	if k.attempt == nil || k.attempt.ProviderRef == "" {
		return attemptRef{}, false
	}
	return attemptRef{k.attempt.Provider, k.attempt.ProviderRef}, true
}

func newIntents[T any](entity string, key func(*T) intentKey, clone func(T) T) intents[T] {
	return intents[T]{entity: entity, rows: map[string]*T{}, byRef: map[refKey]string{}, byAttempt: map[attemptRef]string{}, key: key, clone: clone}
}

// create inserts v; a ConflictError when its id or reference is taken.
func (in *intents[T]) create(t *txn, v *T) error {
	k := in.key(v)
	if _, ok := in.rows[k.id]; ok {
		return conflict(in.entity, "id")
	}
	ref := refKey{k.scope, k.ref}
	if _, ok := in.byRef[ref]; ok {
		return conflict(in.entity, "merchant_reference")
	}
	c := in.own(*v, nil)
	put(t, in.rows, k.id, &c)
	put(t, in.byRef, ref, k.id)
	if a, ok := k.attemptRefOf(); ok {
		put(t, in.byAttempt, a, k.id)
	}
	return nil
}

// own copies v to store it in place of held (nil: none).
func (in *intents[T]) own(v T, held *T) T {
	if in.share != nil {
		return in.share(v, held)
	}
	return in.clone(v)
}

// get returns a copy of the intent id of scope (any scope when scope is
// nil) or ErrNotFound.
func (in *intents[T]) get(scope *paykit.Scope, id string) (*T, error) {
	v, ok := in.rows[id]
	if !ok || (scope != nil && in.key(v).scope != *scope) {
		return nil, paykit.ErrNotFound
	}
	c := in.clone(*v)
	return &c, nil
}

// byProviderRef returns the id and Provider state of the intent whose
// attempt at provider has the Provider's id ref.
func (in *intents[T]) byProviderRef(provider, ref string) (string, paykit.ProviderAttempt, bool) {
	id, ok := in.byAttempt[attemptRef{provider, ref}]
	if !ok {
		return "", paykit.ProviderAttempt{}, false
	}
	return id, *in.key(in.rows[id]).attempt, true
}

// update writes v under the Version rule.
func (in *intents[T]) update(t *txn, v *T) error {
	k := in.key(v)
	old, ok := in.rows[k.id]
	if !ok {
		return paykit.ErrNotFound
	}
	cur := in.key(old)
	if cur.scope != k.scope {
		return paykit.ErrNotFound
	}
	if *cur.version != *k.version {
		return paykit.ErrVersionConflict
	}
	if cur.ref != k.ref {
		ref := refKey{k.scope, k.ref}
		if _, taken := in.byRef[ref]; taken {
			return conflict(in.entity, "merchant_reference")
		}
		del(t, in.byRef, refKey{cur.scope, cur.ref})
		put(t, in.byRef, ref, k.id)
	}
	if a, ok := cur.attemptRefOf(); ok {
		del(t, in.byAttempt, a)
	}
	if a, ok := k.attemptRefOf(); ok {
		put(t, in.byAttempt, a, k.id)
	}
	*k.version++
	c := in.own(*v, old)
	put(t, in.rows, k.id, &c)
	return nil
}

// list returns copies of the intents that match, newest first, after pos,
// at most limit.
func (in *intents[T]) list(match func(*T) bool, pos *paykit.Position, limit int) []T {
	var out []T
	for _, v := range in.rows {
		if match(v) {
			out = append(out, in.clone(*v))
		}
	}
	return page(out, func(v *T) (time.Time, string) { k := in.key(v); return k.createdAt, k.id }, pos, limit)
}

// matches reports whether a row with these fields passes the filters of
// f; empty ones do not filter.
func matches[S ~string](f paykit.ListParams[S], status S, currency, country, ref string, created time.Time) bool {
	return (len(f.Statuses) == 0 || slices.Contains(f.Statuses, status)) &&
		(f.Currency == "" || currency == f.Currency) &&
		(f.Country == "" || country == f.Country) &&
		(f.MerchantReference == "" || ref == f.MerchantReference) &&
		(f.CreatedAfter == nil || !created.Before(*f.CreatedAfter)) &&
		(f.CreatedBefore == nil || created.Before(*f.CreatedBefore))
}

// FindByProviderRef implements paykit.Tx.
func (t *txn) FindByProviderRef(_ context.Context, provider, ref string) (paykit.AttemptOwner, error) {
	if ref == "" {
		return paykit.AttemptOwner{}, paykit.ErrNotFound
	}
	if id, a, ok := t.d.payments.byProviderRef(provider, ref); ok {
		p := t.d.payments.rows[id]
		return paykit.AttemptOwner{Object: "payment_intent", Scope: p.Scope(), ID: id, Attempt: a.Attempt}, nil
	}
	if id, a, ok := t.d.payouts.byProviderRef(provider, ref); ok {
		p := t.d.payouts.rows[id]
		return paykit.AttemptOwner{Object: "payout_intent", Scope: p.Scope(), ID: id, Attempt: a.Attempt}, nil
	}
	if id, a, ok := t.d.refunds.byProviderRef(provider, ref); ok {
		r := t.d.refunds.rows[id]
		return paykit.AttemptOwner{Object: "refund", Scope: r.Scope(), ID: id, Attempt: a.Attempt}, nil
	}
	return paykit.AttemptOwner{}, paykit.ErrNotFound
}

// FindByProviderRef implements paykit.Tx in its own transaction.
func (s *Store) FindByProviderRef(ctx context.Context, provider, ref string) (paykit.AttemptOwner, error) {
	return call(s, ctx, func(t *txn) (paykit.AttemptOwner, error) { return t.FindByProviderRef(ctx, provider, ref) })
}
