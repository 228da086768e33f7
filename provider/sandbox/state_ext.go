package sandbox

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// State keeps a PSP's records outside the PSP (PSPConfig.State), where
// they outlive the process and are shared by every PSP on the same State,
// as a real PSP's state is shared by its servers. Package
// provider/sandbox/sandboxsql keeps them in a SQLite or PostgreSQL
// database. Each call is atomic on its own, across every PSP sharing it.
type State interface {
	// Records returns the records of one kind: "payments", "transfers"
	// or "refunds".
	Records(kind string) Records
	// CountCreate counts one create request under key.
	CountCreate(ctx context.Context, key string) error
	// CreateCalls returns how many create requests came under key.
	CreateCalls(ctx context.Context, key string) (int, error)
}

// Records are a State's records of one kind.
type Records interface {
	// Insert stores r unless a record under its Key or ID exists, and
	// reports whether it did. With count it may also count a create under
	// r.Key, as CountCreate does, in the same transaction as the record;
	// counted reports whether it did (the PSP counts it otherwise).
	Insert(ctx context.Context, r Record, count bool) (stored, counted bool, err error)
	// Update calls fn with the Data of the record whose ID (byID) or Key
	// is value and stores the record fn returns, with no other update of
	// that record in between. It reports whether there was a record.
	Update(ctx context.Context, byID bool, value string, fn func(data []byte) (Record, error)) (bool, error)
	// List calls fn with the Data of every record, in creation order.
	// fn does not use the State.
	List(ctx context.Context, fn func(data []byte) error) error
	// Due returns the Keys of the records whose Due is at or before now,
	// soonest first (then in creation order), at most limit of them.
	Due(ctx context.Context, now time.Time, limit int) ([]string, error)
}

// Record is one record as a State keeps it: the values that find it, and
// the PSP's JSON form of the whole record.
type Record struct {
	Key   string    // the idempotency key it was created under; unique
	ID    string    // the PSP's id; unique
	State string    // the PSP's local state
	Due   time.Time // when it needs attention (a callback); zero: never
	Data  []byte
}

// extState is the state on a State.
type extState struct {
	st   State
	pays extTable[*payment]
	trfs extTable[*transfer]
	rfds extTable[*refund]
}

func newExtState(st State) *extState {
	return &extState{st: st,
		pays: extTable[*payment]{st.Records("payments"), "payments"},
		trfs: extTable[*transfer]{st.Records("transfers"), "transfers"},
		rfds: extTable[*refund]{st.Records("refunds"), "refunds"},
	}
}

func (s *extState) payments() table[*payment]   { return s.pays }
func (s *extState) transfers() table[*transfer] { return s.trfs }
func (s *extState) refunds() table[*refund]     { return s.rfds }

func (s *extState) countCreate(ctx context.Context, key string) error {
	return s.st.CountCreate(ctx, key)
}

func (s *extState) createCalls(ctx context.Context, key string) (int, error) {
	return s.st.CreateCalls(ctx, key)
}

// extTable is a table on a State's Records, which keep each record as
// JSON.
type extTable[T record] struct {
	r    Records
	kind string
}

// toRecord is rec as a State keeps it.
func toRecord[T record](rec T) (Record, error) {
	b, err := json.Marshal(rec)
	if err != nil {
		return Record{}, err
	}
	l := rec.base()
	r := Record{Key: l.Key, ID: l.ID, State: l.State, Data: b}
	if at, ok := l.attention(); ok {
		r.Due = at
	}
	return r, nil
}

func (t extTable[T]) decode(data []byte) (T, error) {
	var rec T
	if err := json.Unmarshal(data, &rec); err != nil {
		return rec, fmt.Errorf("sandbox: %s record: %w", t.kind, err)
	}
	return rec, nil
}

func (t extTable[T]) insert(ctx context.Context, rec T) (bool, error) {
	r, err := toRecord(rec)
	if err != nil {
		return false, err
	}
	pc := countWith(ctx, r.Key)
	stored, counted, err := t.r.Insert(ctx, r, pc != nil)
	if err != nil {
		return false, err
	}
	if counted {
		pc.done = true
	}
	return stored, nil
}

func (t extTable[T]) update(ctx context.Context, l lookup, fn func(T)) (bool, error) {
	return t.r.Update(ctx, l.byID, l.value, func(data []byte) (Record, error) {
		rec, err := t.decode(data)
		if err != nil {
			return Record{}, err
		}
		fn(rec)
		return toRecord(rec)
	})
}

func (t extTable[T]) list(ctx context.Context, fn func(T)) error {
	var recs []T
	err := t.r.List(ctx, func(data []byte) error {
		rec, err := t.decode(data)
		recs = append(recs, rec)
		return err
	})
	if err != nil {
		return err
	}
	for _, rec := range recs {
		fn(rec)
	}
	return nil
}

func (t extTable[T]) due(ctx context.Context, now time.Time) ([]string, error) {
	return t.r.Due(ctx, now, dueBatch)
}
