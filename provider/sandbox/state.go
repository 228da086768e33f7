package sandbox

import (
	"context"
	"slices"
	"sync"
	"time"
)

// The PSP's state: what it recorded of payments, transfers, refunds and
// disputes, how many create requests it received per idempotency key,
// which final states a callback receiver acknowledged, and the settlement
// batches it closed. It lives behind the state interface,
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
	disputes() table[*dispute]
	// settle calls fn with the settleable records (payments, refunds,
	// disputes) that sel selects, in that order and each in creation
	// order, keeps what fn changed of them and stores the batches fn
	// returns, after every batch stored before; nothing else changes
	// those records or stores batches in between.
	settle(ctx context.Context, sel lineSelection, fn func(recs []settleable) ([]*batchView, error)) error
	// batches calls fn on the stored batches after the one with id after
	// ("" for the first), in the order stored, at most limit of them. It
	// reports false when there is no batch with id after.
	batches(ctx context.Context, after string, limit int, fn func(*batchView)) (bool, error)
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

// record is a payment, a transfer, a refund or a dispute.
type record interface {
	base() *lifecycle
	// settle applies what time alone decides.
	settle(now time.Time)
	// attention is when the record next needs a look that no request
	// asks for; false when it needs none.
	attention() (time.Time, bool)
	// callback is what a callback about its state says (but its id and
	// kind); interval is the PSP's settlement interval.
	callback(interval time.Duration) callbackView
}

// settleable is a record that brings settlement lines: a payment, a
// refund or a dispute.
type settleable interface {
	record
	// merchant is the paykit merchant its lines are for.
	merchant() string
	// openLines are its lines not yet settled, each with when it arose
	// (or, for a state time has yet to settle, will arise).
	openLines() []openLine
}

// openLine is one settlement line not yet settled.
type openLine struct {
	at   time.Time
	line lineView
	// settled records that the line was settled in batch at settledAt.
	settled func(batch string, settledAt time.Time)
}

// firstLine is when the earliest open line of rec arose (or arises); zero
// when it has none, or is not settleable.
func firstLine(rec record) time.Time {
	s, ok := rec.(settleable)
	if !ok {
		return time.Time{}
	}
	var first time.Time
	for _, l := range s.openLines() {
		if first.IsZero() || l.at.Before(first) {
			first = l.at
		}
	}
	return first
}

// lineSelection names the settleable records a settlement close looks
// at: those with an open line that arose before Before, and (when
// Merchant is set) every one of Merchant's with an open line.
type lineSelection struct {
	Before   time.Time
	Merchant string
}

// selects reports whether sel selects rec.
func (sel lineSelection) selects(rec settleable) bool {
	at := firstLine(rec)
	return !at.IsZero() && (at.Before(sel.Before) || sel.Merchant != "" && rec.merchant() == sel.Merchant)
}

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

// callback is the generic callback: the record's key, id, state and
// error code.
func (l *lifecycle) callback(time.Duration) callbackView {
	return callbackView{Key: l.Key, Ref: l.ID, State: l.State, ErrorCode: l.ErrCode}
}

// successAt is when the record succeeded, or (pending, to succeed) will;
// false when it has not and will not on its own.
func (l *lifecycle) successAt() (time.Time, bool) {
	switch {
	case l.State == stateSuccess:
		return l.Updated, true
	case (l.State == statePending || l.State == stateProcessing) && l.SettleTo == stateSuccess:
		return l.SettleAt, true
	}
	return time.Time{}, false
}

// memState is the state in this process's memory.
type memState struct {
	pays  *memTable[*payment]
	trfs  *memTable[*transfer]
	rfds  *memTable[*refund]
	dsps  *memTable[*dispute]
	mu    sync.Mutex
	calls map[string]int
	// closed are the batches, in the order stored, under settleMu; a
	// close holds it and the locks of pays, rfds and dsps, in that order.
	settleMu sync.Mutex
	closed   []*batchView
}

func newMemState() *memState {
	return &memState{
		pays: newMemTable[*payment](), trfs: newMemTable[*transfer](), rfds: newMemTable[*refund](),
		dsps: newMemTable[*dispute](), calls: map[string]int{},
	}
}

func (s *memState) payments() table[*payment]   { return s.pays }
func (s *memState) transfers() table[*transfer] { return s.trfs }
func (s *memState) refunds() table[*refund]     { return s.rfds }
func (s *memState) disputes() table[*dispute]   { return s.dsps }

func (s *memState) settle(_ context.Context, sel lineSelection, fn func([]settleable) ([]*batchView, error)) error {
	s.settleMu.Lock()
	defer s.settleMu.Unlock()
	s.pays.mu.Lock()
	defer s.pays.mu.Unlock()
	s.rfds.mu.Lock()
	defer s.rfds.mu.Unlock()
	s.dsps.mu.Lock()
	defer s.dsps.mu.Unlock()
	var recs []settleable
	recs = appendSelected(recs, s.pays, sel)
	recs = appendSelected(recs, s.rfds, sel)
	recs = appendSelected(recs, s.dsps, sel)
	// fn changes the stored records in place: a copy each, kept only
	// when fn succeeds.
	copies := make([]settleable, len(recs))
	for i, rec := range recs {
		copies[i] = cloneSettleable(rec)
	}
	batches, err := fn(copies)
	if err != nil {
		return err
	}
	for i, rec := range recs {
		restore(rec, copies[i])
	}
	for _, b := range batches {
		c := *b
		c.Lines = slices.Clone(b.Lines)
		s.closed = append(s.closed, &c)
	}
	return nil
}

// appendSelected appends the records of t that sel selects; t is locked.
func appendSelected[T settleable](recs []settleable, t *memTable[T], sel lineSelection) []settleable {
	for _, rec := range t.order {
		if sel.selects(rec) {
			recs = append(recs, rec)
		}
	}
	return recs
}

// cloneSettleable is a copy of rec that fn may change.
func cloneSettleable(rec settleable) settleable {
	switch r := rec.(type) {
	case *payment:
		c := *r
		return &c
	case *refund:
		c := *r
		return &c
	case *dispute:
		c := *r
		return &c
	}
	panic("sandbox: not settleable")
}

// restore writes the copy c over rec.
func restore(rec, c settleable) {
	switch r := rec.(type) {
	case *payment:
		*r = *c.(*payment)
	case *refund:
		*r = *c.(*refund)
	case *dispute:
		*r = *c.(*dispute)
	}
}

func (s *memState) batches(_ context.Context, after string, limit int, fn func(*batchView)) (bool, error) {
	s.settleMu.Lock()
	defer s.settleMu.Unlock()
	start := 0
	if after != "" {
		i := slices.IndexFunc(s.closed, func(b *batchView) bool { return b.ID == after })
		if i < 0 {
			return false, nil
		}
		start = i + 1
	}
	for _, b := range s.closed[start:min(len(s.closed), start+limit)] {
		c := *b
		c.Lines = slices.Clone(b.Lines)
		fn(&c)
	}
	return true, nil
}

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
		if at, ok := rec.attention(); ok && !at.After(now) {
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
