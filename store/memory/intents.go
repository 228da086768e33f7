package memory

import (
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
	key    func(*T) intentKey
	clone  func(T) T // a deep copy, so callers never share memory with the Store
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
}

func newIntents[T any](entity string, key func(*T) intentKey, clone func(T) T) intents[T] {
	return intents[T]{entity: entity, rows: map[string]*T{}, byRef: map[refKey]string{}, key: key, clone: clone}
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

// listFilter holds the filters payment and payout lists share; empty
// fields do not filter. after is inclusive, before exclusive.
type listFilter[S comparable] struct {
	statuses      []S
	currency      string
	country       string
	ref           string
	after, before *time.Time
}

func (f listFilter[S]) match(status S, currency, country, ref string, created time.Time) bool {
	return (len(f.statuses) == 0 || slices.Contains(f.statuses, status)) &&
		(f.currency == "" || currency == f.currency) &&
		(f.country == "" || country == f.country) &&
		(f.ref == "" || ref == f.ref) &&
		(f.after == nil || !created.Before(*f.after)) &&
		(f.before == nil || created.Before(*f.before))
}
