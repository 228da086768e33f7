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
	// Records returns the records of one kind: "payments", "transfers",
	// "refunds" or "disputes".
	Records(kind string) Records
	// CountCreate counts one create request under key.
	CountCreate(ctx context.Context, key string) error
	// CreateCalls returns how many create requests came under key.
	CreateCalls(ctx context.Context, key string) (int, error)
	// Settle closes settlement lines into batches, as one transaction:
	// it calls fn with the Data of the records of kinds "payments",
	// "refunds" and "disputes" (in that order, each in creation order)
	// whose LineAt is set and before sel.Before or, when sel.Merchant is
	// set, whose Merchant is sel.Merchant and LineAt is set; it stores the
	// records fn returns and appends the batches fn returns to the stored
	// ones. Settles run one at a time across every PSP on the State (so
	// that batches are stored in the order they commit), and no Update of
	// the records fn is given runs in between.
	Settle(ctx context.Context, sel Selection, fn func(found []KindData) ([]KindRecord, []Batch, error)) error
	// Batches calls fn with the Data of the batches stored after the one
	// whose ID is after ("" from the first), in the order stored, at most
	// limit of them. It reports false when no batch has the ID after.
	Batches(ctx context.Context, after string, limit int, fn func(data []byte) error) (bool, error)
}

// Selection names the records a Settle looks at.
type Selection struct {
	// Before selects the records with a LineAt before it.
	Before time.Time
	// Merchant, when set, also selects every record of Merchant with a
	// LineAt.
	Merchant string
}

// KindData is the Data of a record of a kind ("payments", ...).
type KindData struct {
	Kind string
	Data []byte
}

// KindRecord is a record of a kind ("payments", ...).
type KindRecord struct {
	Kind   string
	Record Record
}

// Batch is one settlement batch as a State keeps it: the values that find
// it, and the PSP's JSON form of the whole batch.
type Batch struct {
	ID       string // unique
	Merchant string
	Data     []byte
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
	// Merchant is the sub-merchant its settlement lines are for, and
	// LineAt when its earliest line not yet settled arose (or will, as
	// time settles it); zero: it has none.
	Merchant string
	LineAt   time.Time
	Data     []byte
}

// extState is the state on a State.
type extState struct {
	st   State
	pays extTable[*payment]
	trfs extTable[*transfer]
	rfds extTable[*refund]
	dsps extTable[*dispute]
}

func newExtState(st State) *extState {
	return &extState{st: st,
		pays: extTable[*payment]{st.Records("payments"), "payments"},
		trfs: extTable[*transfer]{st.Records("transfers"), "transfers"},
		rfds: extTable[*refund]{st.Records("refunds"), "refunds"},
		dsps: extTable[*dispute]{st.Records("disputes"), "disputes"},
	}
}

func (s *extState) payments() table[*payment]   { return s.pays }
func (s *extState) transfers() table[*transfer] { return s.trfs }
func (s *extState) refunds() table[*refund]     { return s.rfds }
func (s *extState) disputes() table[*dispute]   { return s.dsps }

func (s *extState) settle(ctx context.Context, sel lineSelection, fn func([]settleable) ([]*batchView, error)) error {
	return s.st.Settle(ctx, Selection(sel), func(found []KindData) ([]KindRecord, []Batch, error) {
		recs := make([]settleable, len(found))
		for i, f := range found {
			var err error
			switch f.Kind {
			case "payments":
				recs[i], err = s.pays.decode(f.Data)
			case "refunds":
				recs[i], err = s.rfds.decode(f.Data)
			case "disputes":
				recs[i], err = s.dsps.decode(f.Data)
			default:
				err = fmt.Errorf("sandbox: no settleable records of kind %q", f.Kind)
			}
			if err != nil {
				return nil, nil, err
			}
		}
		batches, err := fn(recs)
		if err != nil {
			return nil, nil, err
		}
		var changed []KindRecord
		for i, rec := range recs {
			r, err := toRecord(rec)
			if err != nil {
				return nil, nil, err
			}
			if string(r.Data) != string(found[i].Data) {
				changed = append(changed, KindRecord{found[i].Kind, r})
			}
		}
		out := make([]Batch, len(batches))
		for i, b := range batches {
			data, err := json.Marshal(b)
			if err != nil {
				return nil, nil, err
			}
			out[i] = Batch{ID: b.ID, Merchant: b.Merchant, Data: data}
		}
		return changed, out, nil
	})
}

func (s *extState) batches(ctx context.Context, after string, limit int, fn func(*batchView)) (bool, error) {
	var out []*batchView
	found, err := s.st.Batches(ctx, after, limit, func(data []byte) error {
		b := &batchView{}
		if err := json.Unmarshal(data, b); err != nil {
			return fmt.Errorf("sandbox: settlement batch: %w", err)
		}
		b.withTotals()
		out = append(out, b)
		return nil
	})
	if err != nil {
		return false, err
	}
	for _, b := range out {
		fn(b)
	}
	return found, nil
}

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
	r := Record{Key: l.Key, ID: l.ID, State: l.State, Data: b, LineAt: firstLine(rec)}
	if at, ok := rec.attention(); ok {
		r.Due = at
	}
	if s, ok := any(rec).(settleable); ok {
		r.Merchant = s.merchant()
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
