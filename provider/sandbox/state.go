package sandbox

import (
	"context"
	"slices"
	"sync"
	"time"
)

// The PSP's state: what it recorded of payments and transfers, how many
// create requests it received per idempotency key, and which final states
// a callback receiver acknowledged. It lives behind the state interface,
// in memory by default (newMemState) or in a State (PSPConfig.State, such
// as a database's sandbox_ tables), where it outlives the process and is
// shared by every PSP on it, as a real PSP's state is shared by its
// servers.
// Injected faults are test hooks and stay in each PSP's memory.

// state keeps the PSP's records. Each call is atomic on its own, across
// every PSP sharing the state.
type state interface {
	payments() table[*payment]
	transfers() table[*transfer]
	refunds() table[*refund]
	// countCreate counts one create request under key.
	countCreate(ctx context.Context, key string) error
	// createCalls returns how many create requests came under key.
	createCalls(ctx context.Context, key string) (int, error)
}

// table keeps the records of one kind.
type table[T record] interface {
	// insert stores rec unless a record under its key (or PSP id) exists,
	// and reports whether it did.
	insert(ctx context.Context, rec T) (bool, error)
	// update runs fn on the record l finds and keeps what fn changed, with
	// no other update of that record in between; it reports whether there
	// was a record.
	update(ctx context.Context, l lookup, fn func(T)) (bool, error)
	// list calls fn on every record, in creation order; fn only reads.
	list(ctx context.Context, fn func(T)) error
	// due returns the keys of records whose attention time is at or
	// before now, soonest first, at most dueBatch of them.
	due(ctx context.Context, now time.Time) ([]string, error)
}

// dueBatch bounds one round of due records; the rest come next round.
const dueBatch = 500

// lookup names one record: by idempotency key, or by the PSP's id.
type lookup struct {
	byID  bool
	value string
}

func byKey(key string) lookup { return lookup{value: key} }
func byID(id string) lookup   { return lookup{byID: true, value: id} }

// record is a payment, a transfer or a refund.
type record interface{ base() *lifecycle }

// lifecycle is what the PSP keeps of payments and transfers alike: who
// they are, and the state that requests and the passing of time move.
// Its fields are exported for the JSON form the SQL state stores.
type lifecycle struct {
	Key         string    `json:"key"` // the idempotency key
	ID          string    `json:"id"`  // the PSP's id
	Fingerprint string    `json:"fingerprint"`
	State       string    `json:"state"`
	ErrCode     string    `json:"error_code,omitempty"`
	Created     time.Time `json:"created"`
	Updated     time.Time `json:"updated"`
	// Expires is when a payment still waiting for its payer expires.
	Expires time.Time `json:"expires,omitzero"`
	// A PENDING payment or PROCESSING transfer becomes SettleTo (with
	// SettleErr) at SettleAt.
	SettleAt          time.Time  `json:"settle_at,omitzero"`
	SettleTo          string     `json:"settle_to,omitempty"`
	SettleErr         string     `json:"settle_error,omitempty"`
	CancelRequestedAt *time.Time `json:"cancel_requested_at,omitempty"`
	// Notified is the last final state a callback receiver acknowledged.
	Notified string `json:"notified,omitempty"`
}

func (l *lifecycle) base() *lifecycle { return l }

// settle applies what time alone decides: a pending payment or a transfer
// in flight settles, a payment whose payer never acted expires.
func (l *lifecycle) settle(now time.Time) {
	switch {
	case (l.State == statePending || l.State == stateProcessing) && !now.Before(l.SettleAt):
		l.State, l.ErrCode, l.Updated = l.SettleTo, l.SettleErr, l.SettleAt
	case l.State == statePayerAction && !now.Before(l.Expires):
		l.State, l.Updated = stateExpired, l.Expires
	}
}

// attention is when the record next needs a look that no request asks
// for: when time settles it, or (for a final state no receiver has
// acknowledged) now. A record that needs none reports false.
func (l *lifecycle) attention() (time.Time, bool) {
	switch {
	case final(l.State) && l.Notified != l.State:
		return l.Updated, true
	case l.State == statePending || l.State == stateProcessing:
		return l.SettleAt, true
	case l.State == statePayerAction:
		return l.Expires, true
	}
	return time.Time{}, false
}

// memState is the state in this process's memory.
type memState struct {
	pays  *memTable[*payment]
	trfs  *memTable[*transfer]
	rfds  *memTable[*refund]
	mu    sync.Mutex
	calls map[string]int
}

func newMemState() *memState {
	return &memState{pays: newMemTable[*payment](), trfs: newMemTable[*transfer](), rfds: newMemTable[*refund](), calls: map[string]int{}}
}

func (s *memState) payments() table[*payment]   { return s.pays }
func (s *memState) transfers() table[*transfer] { return s.trfs }
func (s *memState) refunds() table[*refund]     { return s.rfds }

func (s *memState) countCreate(_ context.Context, key string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls[key]++
	return nil
}

func (s *memState) createCalls(_ context.Context, key string) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[key], nil
}

// memTable keeps records in maps under one lock; update and list run fn
// on the stored record under it.
type memTable[T record] struct {
	mu    sync.Mutex
	byKey map[string]T
	byID  map[string]T
	order []T
}

func newMemTable[T record]() *memTable[T] {
	return &memTable[T]{byKey: map[string]T{}, byID: map[string]T{}}
}

func (m *memTable[T]) insert(_ context.Context, rec T) (bool, error) {
	b := rec.base()
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.byKey[b.Key]; ok {
		return false, nil
	}
	if _, ok := m.byID[b.ID]; ok {
		return false, nil
	}
	m.byKey[b.Key], m.byID[b.ID] = rec, rec
	m.order = append(m.order, rec)
	return true, nil
}

func (m *memTable[T]) update(_ context.Context, l lookup, fn func(T)) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	index := m.byKey
	if l.byID {
		index = m.byID
	}
	rec, ok := index[l.value]
	if ok {
		fn(rec)
	}
	return ok, nil
}

func (m *memTable[T]) list(_ context.Context, fn func(T)) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, rec := range m.order {
		fn(rec)
	}
	return nil
}

func (m *memTable[T]) due(_ context.Context, now time.Time) ([]string, error) {
	type item struct {
		at  time.Time
		key string
	}
	m.mu.Lock()
	var items []item
	for _, rec := range m.order {
		if at, ok := rec.base().attention(); ok && !at.After(now) {
			items = append(items, item{at, rec.base().Key})
		}
	}
	m.mu.Unlock()
	slices.SortStableFunc(items, func(a, b item) int { return a.at.Compare(b.at) })
	keys := make([]string, 0, min(len(items), dueBatch))
	for _, it := range items[:min(len(items), dueBatch)] {
		keys = append(keys, it.key)
	}
	return keys, nil
}
