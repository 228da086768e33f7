package memory

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"time"

	"github.com/paykit/paykit"
)

// --- reconciliation ---

// lineKey is a settlement line's identity: its Provider, type and
// reference.
type lineKey struct{ provider, typ, ref string }

// breakKey is what FindOpenBreak looks a break up by.
type breakKey struct {
	provider string
	typ      paykit.BreakType
	ref      string
}

// reconciliation holds the settlement lines read, the runs and the
// breaks, with the indexes the reconciliation's lookups need.
type reconciliation struct {
	lines map[lineKey]paykit.SettledLine
	// named holds the (Provider, reference) pairs a line of any type
	// named: what ListUnsettled leaves out.
	named  map[attemptRef]bool
	runs   map[string]paykit.ReconciliationRun
	breaks map[string]paykit.ReconciliationBreak
	// open lists the ids of the open breaks of each key, oldest first.
	// A slice is never changed where it is: a write puts a new one.
	open map[breakKey][]string
	// missing holds the (Provider, reference) pairs of every
	// missing_in_report break, open or resolved: what ListUnsettled
	// leaves out.
	missing map[attemptRef]bool
}

func newReconciliation() reconciliation {
	return reconciliation{
		lines:  map[lineKey]paykit.SettledLine{},
		named:  map[attemptRef]bool{},
		runs:   map[string]paykit.ReconciliationRun{},
		breaks: map[string]paykit.ReconciliationBreak{},
		open:   map[breakKey][]string{},

		missing: map[attemptRef]bool{},
	}
}

// RecordSettledLines implements paykit.Tx.
func (t *txn) RecordSettledLines(_ context.Context, lines []paykit.SettledLine) ([]paykit.SettledLine, error) {
	r := &t.d.recon
	out := make([]paykit.SettledLine, len(lines))
	for i, l := range lines {
		k := lineKey{l.Provider, l.Type, l.Reference}
		held, ok := r.lines[k]
		if !ok {
			held = l
			put(t, r.lines, k, l)
			if a := (attemptRef{l.Provider, l.Reference}); !r.named[a] {
				put(t, r.named, a, true)
			}
		}
		out[i] = held
	}
	return out, nil
}

// CreateReconciliationRun implements paykit.Tx.
func (t *txn) CreateReconciliationRun(_ context.Context, run *paykit.ReconciliationRun) error {
	if _, ok := t.d.recon.runs[run.ID]; ok {
		return conflict("reconciliation_run", "id")
	}
	put(t, t.d.recon.runs, run.ID, *run)
	return nil
}

// LastReconciliationRun implements paykit.Tx.
func (t *txn) LastReconciliationRun(_ context.Context, provider string) (*paykit.ReconciliationRun, error) {
	var last *paykit.ReconciliationRun
	for _, run := range t.d.recon.runs {
		if run.Provider == provider && (last == nil || newestFirst(run.StartedAt, run.ID, last.StartedAt, last.ID) < 0) {
			last = &run
		}
	}
	if last == nil {
		return nil, paykit.ErrNotFound
	}
	return last, nil
}

// ListReconciliationRuns implements paykit.Tx: newest first by
// (StartedAt, ID).
func (t *txn) ListReconciliationRuns(_ context.Context, q paykit.ListQuery[paykit.RunListParams]) ([]paykit.ReconciliationRun, error) {
	var out []paykit.ReconciliationRun
	for _, run := range t.d.recon.runs {
		if q.Filter.Provider == "" || run.Provider == q.Filter.Provider {
			out = append(out, run)
		}
	}
	return page(out, func(r *paykit.ReconciliationRun) (time.Time, string) { return r.StartedAt, r.ID }, q.After, q.Limit), nil
}

func copyBreak(b paykit.ReconciliationBreak) paykit.ReconciliationBreak {
	if b.Expected != nil {
		e := *b.Expected
		b.Expected = &e
	}
	if b.Reported != nil {
		r := *b.Reported
		b.Reported = &r
	}
	b.ResolvedAt = copyTime(b.ResolvedAt)
	return b
}

func keyOfBreak(b *paykit.ReconciliationBreak) breakKey {
	return breakKey{b.Provider, b.Type, b.Reference}
}

// indexBreak puts b's id in, or takes it out of, the open breaks of its key.
func (t *txn) indexBreak(b *paykit.ReconciliationBreak, open bool) {
	k := keyOfBreak(b)
	cur := t.d.recon.open[k]
	ids := slices.DeleteFunc(slices.Clone(cur), func(id string) bool { return id == b.ID })
	if open {
		ids = append(ids, b.ID)
		rows := t.d.recon.breaks
		slices.SortFunc(ids, func(a, b string) int { // oldest first
			return cmp.Or(rows[a].CreatedAt.Compare(rows[b].CreatedAt), strings.Compare(a, b))
		})
	}
	if len(ids) == 0 {
		del(t, t.d.recon.open, k)
		return
	}
	put(t, t.d.recon.open, k, ids)
}

// CreateReconciliationBreak implements paykit.Tx.
func (t *txn) CreateReconciliationBreak(_ context.Context, b *paykit.ReconciliationBreak) error {
	if _, ok := t.d.recon.breaks[b.ID]; ok {
		return conflict("reconciliation_break", "id")
	}
	put(t, t.d.recon.breaks, b.ID, copyBreak(*b))
	if b.Status == paykit.BreakOpen {
		t.indexBreak(b, true)
	}
	if b.Type == paykit.BreakMissingInReport {
		put(t, t.d.recon.missing, attemptRef{b.Provider, b.Reference}, true)
	}
	return nil
}

// GetReconciliationBreak implements paykit.Tx.
func (t *txn) GetReconciliationBreak(_ context.Context, id string) (*paykit.ReconciliationBreak, error) {
	b, ok := t.d.recon.breaks[id]
	if !ok {
		return nil, paykit.ErrNotFound
	}
	b = copyBreak(b)
	return &b, nil
}

// UpdateReconciliationBreak implements paykit.Tx.
func (t *txn) UpdateReconciliationBreak(_ context.Context, b *paykit.ReconciliationBreak) error {
	old, ok := t.d.recon.breaks[b.ID]
	if !ok {
		return paykit.ErrNotFound
	}
	if old.Version != b.Version {
		return paykit.ErrVersionConflict
	}
	b.Version++
	put(t, t.d.recon.breaks, b.ID, copyBreak(*b))
	if old.Status == paykit.BreakOpen {
		t.indexBreak(&old, false)
	}
	if b.Status == paykit.BreakOpen {
		t.indexBreak(b, true)
	}
	return nil
}

// ListReconciliationBreaks implements paykit.Tx.
func (t *txn) ListReconciliationBreaks(_ context.Context, q paykit.ListQuery[paykit.BreakListParams]) ([]paykit.ReconciliationBreak, error) {
	f := q.Filter
	var out []paykit.ReconciliationBreak
	for _, b := range t.d.recon.breaks {
		if (f.Status == "" || b.Status == f.Status) && (f.Type == "" || b.Type == f.Type) &&
			(f.MerchantID == "" || b.MerchantID == f.MerchantID) && (f.Provider == "" || b.Provider == f.Provider) {
			out = append(out, copyBreak(b))
		}
	}
	return page(out, func(b *paykit.ReconciliationBreak) (time.Time, string) { return b.CreatedAt, b.ID }, q.After, q.Limit), nil
}

// FindOpenBreak implements paykit.Tx: of several, the oldest.
func (t *txn) FindOpenBreak(ctx context.Context, provider string, typ paykit.BreakType, reference string) (*paykit.ReconciliationBreak, error) {
	ids := t.d.recon.open[breakKey{provider, typ, reference}]
	if len(ids) == 0 {
		return nil, paykit.ErrNotFound
	}
	return t.GetReconciliationBreak(ctx, ids[0])
}

// CountOpenBreaks implements paykit.Tx.
func (t *txn) CountOpenBreaks(context.Context) (map[paykit.BreakType]int, error) {
	out := map[paykit.BreakType]int{}
	for k, ids := range t.d.recon.open {
		out[k.typ] += len(ids)
	}
	return out, nil
}

// ListUnsettled implements paykit.Tx.
func (t *txn) ListUnsettled(_ context.Context, q paykit.UnsettledQuery) ([]paykit.Unsettled, error) {
	r := &t.d.recon
	pending := func(ref string, completed *time.Time) bool {
		a := attemptRef{q.Provider, ref}
		return ref != "" && completed != nil && completed.Before(q.Before) && !r.named[a] && !r.missing[a]
	}
	var out []paykit.Unsettled
	for _, p := range t.d.payments.rows {
		if p.Status == paykit.PaymentSucceeded && p.Provider == q.Provider && p.SettledAt == nil && pending(p.ProviderRef, p.CompletedAt) {
			out = append(out, paykit.Unsettled{Object: "payment_intent", Scope: p.Scope(), ID: p.ID, Reference: p.ProviderRef,
				Amount: p.Amount, Fee: p.Fee, Currency: p.Currency, CompletedAt: *p.CompletedAt})
		}
	}
	for _, re := range t.d.refunds.rows {
		if re.Status == paykit.RefundSucceeded && re.Provider == q.Provider && pending(re.ProviderRef, re.CompletedAt) {
			out = append(out, paykit.Unsettled{Object: "refund", Scope: re.Scope(), ID: re.ID, Reference: re.ProviderRef,
				Amount: -re.Amount, Currency: re.Currency, CompletedAt: *re.CompletedAt})
		}
	}
	slices.SortFunc(out, func(a, b paykit.Unsettled) int { // oldest first
		return cmp.Or(a.CompletedAt.Compare(b.CompletedAt), strings.Compare(a.ID, b.ID))
	})
	if q.Limit > 0 && len(out) > q.Limit {
		out = out[:q.Limit]
	}
	return out, nil
}

// RecordSettledLines implements paykit.Tx in its own transaction.
func (s *Store) RecordSettledLines(ctx context.Context, lines []paykit.SettledLine) ([]paykit.SettledLine, error) {
	return call(s, ctx, func(t *txn) ([]paykit.SettledLine, error) { return t.RecordSettledLines(ctx, lines) })
}

// CreateReconciliationRun implements paykit.Tx in its own transaction.
func (s *Store) CreateReconciliationRun(ctx context.Context, r *paykit.ReconciliationRun) error {
	return s.run(ctx, func(t *txn) error { return t.CreateReconciliationRun(ctx, r) })
}

// LastReconciliationRun implements paykit.Tx in its own transaction.
func (s *Store) LastReconciliationRun(ctx context.Context, provider string) (*paykit.ReconciliationRun, error) {
	return call(s, ctx, func(t *txn) (*paykit.ReconciliationRun, error) { return t.LastReconciliationRun(ctx, provider) })
}

// ListReconciliationRuns implements paykit.Tx in its own transaction.
func (s *Store) ListReconciliationRuns(ctx context.Context, q paykit.ListQuery[paykit.RunListParams]) ([]paykit.ReconciliationRun, error) {
	return call(s, ctx, func(t *txn) ([]paykit.ReconciliationRun, error) { return t.ListReconciliationRuns(ctx, q) })
}

// CreateReconciliationBreak implements paykit.Tx in its own transaction.
func (s *Store) CreateReconciliationBreak(ctx context.Context, b *paykit.ReconciliationBreak) error {
	return s.run(ctx, func(t *txn) error { return t.CreateReconciliationBreak(ctx, b) })
}

// GetReconciliationBreak implements paykit.Tx in its own transaction.
func (s *Store) GetReconciliationBreak(ctx context.Context, id string) (*paykit.ReconciliationBreak, error) {
	return call(s, ctx, func(t *txn) (*paykit.ReconciliationBreak, error) { return t.GetReconciliationBreak(ctx, id) })
}

// UpdateReconciliationBreak implements paykit.Tx in its own transaction.
func (s *Store) UpdateReconciliationBreak(ctx context.Context, b *paykit.ReconciliationBreak) error {
	return s.run(ctx, func(t *txn) error { return t.UpdateReconciliationBreak(ctx, b) })
}

// ListReconciliationBreaks implements paykit.Tx in its own transaction.
func (s *Store) ListReconciliationBreaks(ctx context.Context, q paykit.ListQuery[paykit.BreakListParams]) ([]paykit.ReconciliationBreak, error) {
	return call(s, ctx, func(t *txn) ([]paykit.ReconciliationBreak, error) { return t.ListReconciliationBreaks(ctx, q) })
}

// FindOpenBreak implements paykit.Tx in its own transaction.
func (s *Store) FindOpenBreak(ctx context.Context, provider string, typ paykit.BreakType, reference string) (*paykit.ReconciliationBreak, error) {
	return call(s, ctx, func(t *txn) (*paykit.ReconciliationBreak, error) {
		return t.FindOpenBreak(ctx, provider, typ, reference)
	})
}

// CountOpenBreaks implements paykit.Tx in its own transaction.
func (s *Store) CountOpenBreaks(ctx context.Context) (map[paykit.BreakType]int, error) {
	return call(s, ctx, func(t *txn) (map[paykit.BreakType]int, error) { return t.CountOpenBreaks(ctx) })
}

// ListUnsettled implements paykit.Tx in its own transaction.
func (s *Store) ListUnsettled(ctx context.Context, q paykit.UnsettledQuery) ([]paykit.Unsettled, error) {
	return call(s, ctx, func(t *txn) ([]paykit.Unsettled, error) { return t.ListUnsettled(ctx, q) })
}
