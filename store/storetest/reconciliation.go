package storetest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/paykit/paykit"
)

func settledLine(provider, typ, ref, batch, source string, created time.Time) paykit.SettledLine {
	return paykit.SettledLine{Provider: provider, Type: typ, Reference: ref, Batch: batch, Source: source, CreatedAt: created}
}

func mustRecordLines(t *testing.T, s paykit.Tx, lines ...paykit.SettledLine) []paykit.SettledLine {
	t.Helper()
	held, err := s.RecordSettledLines(context.Background(), lines)
	if err != nil {
		t.Fatalf("record %d settled lines: %v", len(lines), err)
	}
	return held
}

func reconRun(id, provider, batch string, started time.Time) *paykit.ReconciliationRun {
	return &paykit.ReconciliationRun{ID: id, Provider: provider, Batch: batch, Lines: 12, Matched: 10, Breaks: 2,
		StartedAt: started, FinishedAt: started.Add(1500 * time.Millisecond)}
}

func runIDs(rows []paykit.ReconciliationRun) []string {
	return ids(rows, func(r paykit.ReconciliationRun) string { return r.ID })
}

func runPosition(r paykit.ReconciliationRun) paykit.Position {
	return paykit.Position{CreatedAt: r.StartedAt, ID: r.ID}
}

// reconBreak is an open amount_mismatch break of a payment of scope.
func reconBreak(scope paykit.Scope, id, ref string, created time.Time) *paykit.ReconciliationBreak {
	return &paykit.ReconciliationBreak{
		ID: id, Type: paykit.BreakAmountMismatch, Status: paykit.BreakOpen, Provider: "sandbox",
		MerchantID: scope.MerchantID, Environment: scope.Environment, Source: "pi_" + ref,
		LineType: "payment", Reference: ref, Batch: "stl_1",
		Expected:  &paykit.SettlementAmounts{Amount: 10_000, Fee: 390, Currency: "MYR"},
		Reported:  &paykit.SettlementAmounts{Amount: 9_000, Fee: 390, Currency: "MYR"},
		CreatedAt: created,
	}
}

func mustCreateBreak(t *testing.T, s paykit.Tx, b *paykit.ReconciliationBreak) {
	t.Helper()
	if err := s.CreateReconciliationBreak(context.Background(), b); err != nil {
		t.Fatalf("create break %s: %v", b.ID, err)
	}
}

func breakIDs(rows []paykit.ReconciliationBreak) []string {
	return ids(rows, func(b paykit.ReconciliationBreak) string { return b.ID })
}

func breakPosition(b paykit.ReconciliationBreak) paykit.Position {
	return paykit.Position{CreatedAt: b.CreatedAt, ID: b.ID}
}

// resolveBreak resolves the break id with accept_paykit.
func resolveBreak(t *testing.T, s paykit.Tx, id string, at time.Time) {
	t.Helper()
	ctx := context.Background()
	b, err := s.GetReconciliationBreak(ctx, id)
	if err != nil {
		t.Fatalf("get break %s: %v", id, err)
	}
	b.Status, b.Resolution, b.Note, b.ResolvedAt = paykit.BreakResolved, paykit.ResolveAcceptPaykit, "checked", &at
	if err := s.UpdateReconciliationBreak(ctx, b); err != nil {
		t.Fatalf("resolve break %s: %v", id, err)
	}
}

// testSettledLines: a line is recorded once by its Provider, type and
// reference; every call answers, in the order of its lines, the record
// that holds each key.
func testSettledLines(t *testing.T, s paykit.Store) {
	is := is.New(t)
	ctx := context.Background()
	held, err := s.RecordSettledLines(ctx, nil)
	is.NoErr(err)
	is.Equal(len(held), 0)

	l1 := settledLine("sandbox", "payment", "ch_1", "stl_1", "pi_1", base)
	l2 := settledLine("sandbox", "refund", "ch_1", "stl_1", "re_1", base)        // same reference, another type
	l3 := settledLine("xendit", "payment", "ch_1", "stl_x", "", at(time.Second)) // another Provider, no match
	l1again := settledLine("sandbox", "payment", "ch_1", "stl_1", "pi_other", at(time.Minute))
	l4 := settledLine("sandbox", "payment", "ch_4", "stl_1", "pi_4", base)
	// The key twice in one call: the second line's holder is the first.
	is.Equal(mustRecordLines(t, s, l1, l2, l3, l1again, l4), []paykit.SettledLine{l1, l2, l3, l1, l4})
	for _, l := range mustRecordLines(t, s, l3) {
		is.Equal(l.CreatedAt.Location(), time.UTC)
	}

	// A batch read again, with its lines in another order and one new:
	// the new line is recorded, the others answer as first recorded.
	l1late := settledLine("sandbox", "payment", "ch_1", "stl_2", "", at(time.Hour))
	l5 := settledLine("sandbox", "dispute", "dp_5", "stl_2", "dp_1", at(time.Hour))
	l4late := settledLine("sandbox", "payment", "ch_4", "stl_2", "pi_x", at(time.Hour))
	is.Equal(mustRecordLines(t, s, l4late, l5, l1late), []paykit.SettledLine{l4, l5, l1})

	// Many lines at once, half of them repeated: each answers its holder.
	var many, want []paykit.SettledLine
	for i := range 1200 {
		l := settledLine("sandbox", "payment", fmt.Sprintf("ch_m%04d", i), "stl_3", fmt.Sprintf("pi_m%04d", i), at(2*time.Hour))
		if i%2 == 1 {
			l.Reference = fmt.Sprintf("ch_m%04d", i-1) // the line before's key: a duplicate
			want = append(want, want[len(want)-1])
		} else {
			want = append(want, l)
		}
		many = append(many, l)
	}
	many, want = append(many, l4late), append(want, l4)
	is.Equal(mustRecordLines(t, s, many...), want)
	is.Equal(mustRecordLines(t, s, many...), want)

	// Lines recorded in a transaction that fails are not recorded.
	l6 := settledLine("sandbox", "payment", "ch_6", "stl_4", "pi_6", at(3*time.Hour))
	err = s.InTx(ctx, func(tx paykit.Tx) error {
		held, err := tx.RecordSettledLines(ctx, []paykit.SettledLine{l6, l1late})
		if err != nil {
			return err
		}
		is.Equal(held, []paykit.SettledLine{l6, l1}) // seen inside the transaction
		return errBoom
	})
	is.True(errors.Is(err, errBoom))
	l6late := l6
	l6late.Batch, l6late.CreatedAt = "stl_5", at(4*time.Hour)
	is.Equal(mustRecordLines(t, s, l6late), []paykit.SettledLine{l6late})
}

func testReconciliationRuns(t *testing.T, s paykit.Store) {
	is := is.New(t)
	ctx := context.Background()
	_, err := s.LastReconciliationRun(ctx, "sandbox")
	is.True(errors.Is(err, paykit.ErrNotFound))

	// Runs of two Providers over 4 instants, ties broken by id.
	var all, ofSandbox []string
	for i := 11; i >= 0; i-- {
		provider := "sandbox"
		if i%3 == 2 {
			provider = "xendit"
		}
		id := fmt.Sprintf("rr_%02d", i)
		run := reconRun(id, provider, "stl_"+id, at(time.Duration(i/3)*time.Minute))
		is.NoErr(s.CreateReconciliationRun(ctx, run))
		all = append(all, id)
		if provider == "sandbox" {
			ofSandbox = append(ofSandbox, id)
		}
	}
	err = s.CreateReconciliationRun(ctx, reconRun("rr_05", "sandbox", "stl_again", at(time.Hour)))
	is.True(errors.Is(err, paykit.ErrAlreadyExists))
	var c *paykit.ConflictError
	is.True(errors.As(err, &c))
	is.Equal(c.Entity, "reconciliation_run")
	is.Equal(c.Key, "id")

	last, err := s.LastReconciliationRun(ctx, "sandbox")
	is.NoErr(err)
	is.Equal(*last, *reconRun("rr_10", "sandbox", "stl_rr_10", at(3*time.Minute)))
	is.Equal(last.StartedAt.Location(), time.UTC)
	is.Equal(last.FinishedAt.Location(), time.UTC)
	last, err = s.LastReconciliationRun(ctx, "xendit")
	is.NoErr(err)
	is.Equal(last.ID, "rr_11")
	_, err = s.LastReconciliationRun(ctx, "stripe")
	is.True(errors.Is(err, paykit.ErrNotFound))
	// A later run that started earlier is not the last.
	is.NoErr(s.CreateReconciliationRun(ctx, reconRun("rr_99", "sandbox", "stl_old", at(-time.Hour))))
	ofSandbox = append(ofSandbox, "rr_99")
	all = append(all, "rr_99")
	last, err = s.LastReconciliationRun(ctx, "sandbox")
	is.NoErr(err)
	is.Equal(last.ID, "rr_10")

	page := func(provider string) func(after *paykit.Position, limit int) ([]paykit.ReconciliationRun, error) {
		return func(after *paykit.Position, limit int) ([]paykit.ReconciliationRun, error) {
			return s.ListReconciliationRuns(ctx, paykit.ListQuery[paykit.RunListParams]{
				Scope: scopeA, Filter: paykit.RunListParams{Provider: provider}, After: after, Limit: limit}) // the scope is ignored
		}
	}
	for _, limit := range []int{1, 2, 3, 5, 13, 50} {
		is.Equal(walkPages(t, limit, page(""), runPosition), all)
		is.Equal(walkPages(t, limit, page("sandbox"), runPosition), ofSandbox)
	}
	rows, err := page("")(nil, 0)
	is.NoErr(err)
	is.Equal(runIDs(rows), all)
	is.Equal(rows[0], *reconRun("rr_11", "xendit", "stl_rr_11", at(3*time.Minute)))
	rows, err = page("")(&paykit.Position{CreatedAt: at(2 * time.Minute), ID: "rr_07"}, 2)
	is.NoErr(err)
	is.Equal(runIDs(rows), []string{"rr_06", "rr_05"})
	rows, err = page("stripe")(nil, 10)
	is.NoErr(err)
	is.Equal(len(rows), 0)
}

func testReconciliationBreakRoundTrip(t *testing.T, s paykit.Store) {
	is := is.New(t)
	ctx := context.Background()
	// A line unknown to paykit: no merchant, no source, nothing expected.
	unknown := &paykit.ReconciliationBreak{ID: "rb_unknown", Type: paykit.BreakUnknownToPaykit, Status: paykit.BreakOpen,
		Provider: "sandbox", LineType: "payment", Reference: "ch_404", Batch: "stl_1",
		Reported: &paykit.SettlementAmounts{Amount: 5_000, Fee: 245, Currency: "MYR"}, CreatedAt: base}
	// A payment missing in the reports: nothing reported, no batch.
	missing := &paykit.ReconciliationBreak{ID: "rb_missing", Type: paykit.BreakMissingInReport, Status: paykit.BreakOpen,
		Provider: "sandbox", MerchantID: "mch_a", Environment: paykit.Test, Source: "pi_1", LineType: "payment",
		Reference: "ch_1", Expected: &paykit.SettlementAmounts{Amount: 12_345, Fee: 458, Currency: "MYR"}, CreatedAt: at(time.Second)}
	// Every field set, none left at its zero value.
	full := &paykit.ReconciliationBreak{ID: "rb_full", Type: paykit.BreakFeeMismatch, Status: paykit.BreakResolved,
		Provider: "xendit", MerchantID: "mch_b", Environment: paykit.Live, Source: "re_1", LineType: "refund",
		Reference: "rf_1", Batch: "stl_9",
		Expected:   &paykit.SettlementAmounts{Amount: -9_000_000_000_000_000, Fee: 9_000_000_000_000_001, Currency: "THB"},
		Reported:   &paykit.SettlementAmounts{Amount: -8_999_999_999_999_999, Fee: -1, Currency: "MYR"},
		Resolution: paykit.ResolveAcceptProvider, Note: "Confirmed with the Provider: ยืนยันแล้ว",
		CreatedAt: at(2 * time.Second), ResolvedAt: ptr(at(2500 * time.Millisecond))}
	zero := &paykit.ReconciliationBreak{ID: "rb_zero", Type: paykit.BreakDuplicateLine, Status: paykit.BreakOpen,
		Provider: "sandbox", LineType: "payment", Reference: "ch_2", Batch: "stl_2",
		Expected: &paykit.SettlementAmounts{}, Reported: &paykit.SettlementAmounts{}, CreatedAt: at(3 * time.Second)}
	for _, b := range []*paykit.ReconciliationBreak{unknown, missing, full, zero} {
		is.NoErr(s.CreateReconciliationBreak(ctx, b))
	}
	full.Expected.Amount, *full.ResolvedAt = 1, base // the Store kept its own copies
	full.Expected = &paykit.SettlementAmounts{Amount: -9_000_000_000_000_000, Fee: 9_000_000_000_000_001, Currency: "THB"}
	full.ResolvedAt = ptr(at(2500 * time.Millisecond))

	for _, want := range []*paykit.ReconciliationBreak{unknown, missing, full, zero} {
		reads := []func() (*paykit.ReconciliationBreak, error){
			func() (*paykit.ReconciliationBreak, error) { return s.GetReconciliationBreak(ctx, want.ID) },
			func() (*paykit.ReconciliationBreak, error) {
				rows, err := s.ListReconciliationBreaks(ctx, paykit.ListQuery[paykit.BreakListParams]{
					Filter: paykit.BreakListParams{Type: want.Type, Provider: want.Provider}})
				if err != nil || len(rows) != 1 {
					return nil, fmt.Errorf("list: %d rows, %v", len(rows), err)
				}
				return &rows[0], nil
			},
		}
		if want.Status == paykit.BreakOpen {
			reads = append(reads, func() (*paykit.ReconciliationBreak, error) {
				return s.FindOpenBreak(ctx, want.Provider, want.Type, want.Reference)
			})
		}
		for _, read := range reads {
			got, err := read()
			is.NoErr(err)
			is.Equal(got.CreatedAt.Location(), time.UTC)
			is.Equal(got.Expected == nil, want.Expected == nil)
			is.Equal(got.Reported == nil, want.Reported == nil)
			if want.Expected != nil {
				is.Equal(*got.Expected, *want.Expected)
			}
			if want.Reported != nil {
				is.Equal(*got.Reported, *want.Reported)
			}
			is.Equal(got.ResolvedAt == nil, want.ResolvedAt == nil)
			if want.ResolvedAt != nil {
				is.Equal(*got.ResolvedAt, *want.ResolvedAt)
				is.Equal(got.ResolvedAt.Location(), time.UTC)
			}
			g := *got
			g.Expected, g.Reported, g.ResolvedAt = want.Expected, want.Reported, want.ResolvedAt
			is.Equal(g, *want)
			// Returned values are copies.
			if got.Expected != nil {
				got.Expected.Amount = 7
			}
			if got.Reported != nil {
				got.Reported.Currency = "XXX"
			}
			if got.ResolvedAt != nil {
				*got.ResolvedAt = base
			}
		}
	}
	again, err := s.GetReconciliationBreak(ctx, "rb_full")
	is.NoErr(err)
	is.Equal(*again.Expected, *full.Expected)
	is.Equal(*again.Reported, *full.Reported)
	is.Equal(*again.ResolvedAt, *full.ResolvedAt)

	err = s.CreateReconciliationBreak(ctx, reconBreak(scopeA, "rb_missing", "ch_9", base))
	is.True(errors.Is(err, paykit.ErrAlreadyExists))
	var c *paykit.ConflictError
	is.True(errors.As(err, &c))
	is.Equal(c.Entity, "reconciliation_break")
	is.Equal(c.Key, "id")
	_, err = s.FindOpenBreak(ctx, "sandbox", paykit.BreakAmountMismatch, "ch_9")
	is.True(errors.Is(err, paykit.ErrNotFound)) // the failed insert left nothing

	_, err = s.GetReconciliationBreak(ctx, "rb_nothing")
	is.True(errors.Is(err, paykit.ErrNotFound))
}

func testReconciliationBreakVersioning(t *testing.T, s paykit.Store) {
	is := is.New(t)
	ctx := context.Background()
	mustCreateBreak(t, s, reconBreak(scopeA, "rb_v", "ch_v", base))
	first, err := s.GetReconciliationBreak(ctx, "rb_v")
	is.NoErr(err)
	is.Equal(first.Version, int64(0))
	second := *first

	// Every mutable field changes; Reported is cleared.
	first.Status, first.Resolution, first.Note = paykit.BreakResolved, paykit.ResolveAcceptPaykit, "as recorded"
	first.ResolvedAt, first.Reported = ptr(at(time.Minute)), nil
	first.Expected = &paykit.SettlementAmounts{Amount: 1, Fee: 2, Currency: "SGD"}
	first.Type, first.Source, first.Batch = paykit.BreakCurrencyMismatch, "pi_other", "stl_7"
	is.NoErr(s.UpdateReconciliationBreak(ctx, first))
	is.Equal(first.Version, int64(1)) // a successful update increments the struct's version
	got, err := s.GetReconciliationBreak(ctx, "rb_v")
	is.NoErr(err)
	is.True(got.Reported == nil)
	is.Equal(*got.Expected, *first.Expected)
	is.Equal(*got.ResolvedAt, at(time.Minute))
	got.Expected, got.ResolvedAt = first.Expected, first.ResolvedAt
	is.Equal(*got, *first)

	second.Note = "stale"
	is.True(errors.Is(s.UpdateReconciliationBreak(ctx, &second), paykit.ErrVersionConflict))
	is.Equal(second.Version, int64(0)) // a failed update leaves the struct's version alone
	got, err = s.GetReconciliationBreak(ctx, "rb_v")
	is.NoErr(err)
	is.Equal(got.Note, "as recorded")
	is.Equal(got.Version, int64(1))

	// The next update from the fresh read succeeds; pointers can be
	// cleared and set again.
	got.Expected, got.Reported, got.ResolvedAt = nil, &paykit.SettlementAmounts{Amount: -5, Currency: "MYR"}, nil
	got.Status, got.Resolution = paykit.BreakOpen, ""
	is.NoErr(s.UpdateReconciliationBreak(ctx, got))
	is.Equal(got.Version, int64(2))
	again, err := s.GetReconciliationBreak(ctx, "rb_v")
	is.NoErr(err)
	is.True(again.Expected == nil && again.ResolvedAt == nil)
	is.Equal(*again.Reported, paykit.SettlementAmounts{Amount: -5, Currency: "MYR"})
	again.Reported = got.Reported
	is.Equal(*again, *got)

	is.True(errors.Is(s.UpdateReconciliationBreak(ctx, reconBreak(scopeA, "rb_missing", "ch_m", base)), paykit.ErrNotFound))

	// An update inside a failed transaction is undone.
	err = s.InTx(ctx, func(tx paykit.Tx) error {
		b, err := tx.GetReconciliationBreak(ctx, "rb_v")
		if err != nil {
			return err
		}
		b.Status, b.Note = paykit.BreakResolved, "undone"
		if err := tx.UpdateReconciliationBreak(ctx, b); err != nil {
			return err
		}
		return errBoom
	})
	is.True(errors.Is(err, errBoom))
	again, err = s.GetReconciliationBreak(ctx, "rb_v")
	is.NoErr(err)
	is.Equal(again.Status, paykit.BreakOpen)
	is.Equal(again.Version, int64(2))
	_, err = s.FindOpenBreak(ctx, "sandbox", paykit.BreakCurrencyMismatch, "ch_v")
	is.NoErr(err)
}

func testReconciliationBreakList(t *testing.T, s paykit.Store) {
	is := is.New(t)
	ctx := context.Background()
	type row struct {
		id       string
		scope    paykit.Scope
		typ      paykit.BreakType
		provider string
		resolved bool
		offset   time.Duration
	}
	none := paykit.Scope{}
	for _, r := range []row{
		{"rb_1", scopeA, paykit.BreakFeeMismatch, "sandbox", false, 0},
		{"rb_2", scopeA, paykit.BreakFeeMismatch, "sandbox", true, time.Minute},
		{"rb_3", scopeB, paykit.BreakAmountMismatch, "xendit", false, 2 * time.Minute},
		{"rb_4", none, paykit.BreakUnknownToPaykit, "sandbox", false, 3 * time.Minute},
		{"rb_5", scopeALive, paykit.BreakMissingInReport, "xendit", true, 3 * time.Minute}, // ties rb_4
		{"rb_6", scopeA, paykit.BreakMissingInReport, "sandbox", false, 4 * time.Minute},
		{"rb_7", none, paykit.BreakDuplicateLine, "xendit", false, 5 * time.Minute},
	} {
		b := reconBreak(r.scope, r.id, "ref_"+r.id, at(r.offset))
		b.Type, b.Provider = r.typ, r.provider
		if r.resolved {
			b.Status, b.Resolution, b.ResolvedAt = paykit.BreakResolved, paykit.ResolveMatched, ptr(at(r.offset+time.Second))
		}
		mustCreateBreak(t, s, b)
	}
	type f = paykit.BreakListParams
	list := func(filter f) []string {
		t.Helper()
		rows, err := s.ListReconciliationBreaks(ctx, paykit.ListQuery[paykit.BreakListParams]{Scope: scopeB, Filter: filter, Limit: 100})
		is.NoErr(err)
		return breakIDs(rows)
	}
	is.Equal(list(f{}), []string{"rb_7", "rb_6", "rb_5", "rb_4", "rb_3", "rb_2", "rb_1"}) // every tenant, and none
	is.Equal(list(f{Status: paykit.BreakOpen}), []string{"rb_7", "rb_6", "rb_4", "rb_3", "rb_1"})
	is.Equal(list(f{Status: paykit.BreakResolved}), []string{"rb_5", "rb_2"})
	is.Equal(list(f{Type: paykit.BreakFeeMismatch}), []string{"rb_2", "rb_1"})
	is.Equal(list(f{Type: paykit.BreakCurrencyMismatch}), []string(nil))
	is.Equal(list(f{MerchantID: "mch_a"}), []string{"rb_6", "rb_5", "rb_2", "rb_1"}) // both environments
	is.Equal(list(f{MerchantID: "mch_z"}), []string(nil))
	is.Equal(list(f{Provider: "xendit"}), []string{"rb_7", "rb_5", "rb_3"})
	is.Equal(list(f{Status: paykit.BreakOpen, Type: paykit.BreakMissingInReport}), []string{"rb_6"})
	is.Equal(list(f{Status: paykit.BreakOpen, MerchantID: "mch_a", Provider: "sandbox"}), []string{"rb_6", "rb_1"})
	is.Equal(list(f{Status: paykit.BreakResolved, Type: paykit.BreakMissingInReport, MerchantID: "mch_a", Provider: "xendit"}), []string{"rb_5"})

	// Resolving a break moves it between the status filters.
	resolveBreak(t, s, "rb_3", at(time.Hour))
	is.Equal(list(f{Status: paykit.BreakOpen}), []string{"rb_7", "rb_6", "rb_4", "rb_1"})
	is.Equal(list(f{Status: paykit.BreakResolved, Provider: "xendit"}), []string{"rb_5", "rb_3"})
}

func testReconciliationBreakPagination(t *testing.T, s paykit.Store) {
	is := is.New(t)
	ctx := context.Background()
	// 24 breaks of three tenants over 8 timestamps, so ties are broken by
	// id across tenants.
	scopes := []paykit.Scope{scopeA, scopeB, {}}
	var all, open, ofA []string
	for i := 23; i >= 0; i-- {
		id := fmt.Sprintf("rb_%03d", i)
		b := reconBreak(scopes[i%3], id, "ref_"+id, at(time.Duration(i/3)*time.Second))
		if i%4 == 1 {
			b.Status, b.Resolution, b.ResolvedAt = paykit.BreakResolved, paykit.ResolveAcceptPaykit, ptr(at(time.Hour))
		} else {
			open = append(open, id)
		}
		mustCreateBreak(t, s, b)
		all = append(all, id)
		if i%3 == 0 {
			ofA = append(ofA, id)
		}
	}
	page := func(filter paykit.BreakListParams) func(after *paykit.Position, limit int) ([]paykit.ReconciliationBreak, error) {
		return func(after *paykit.Position, limit int) ([]paykit.ReconciliationBreak, error) {
			return s.ListReconciliationBreaks(ctx, paykit.ListQuery[paykit.BreakListParams]{Filter: filter, After: after, Limit: limit})
		}
	}
	for _, limit := range []int{1, 2, 3, 5, 24, 50} {
		is.Equal(walkPages(t, limit, page(paykit.BreakListParams{}), breakPosition), all)
		is.Equal(walkPages(t, limit, page(paykit.BreakListParams{Status: paykit.BreakOpen}), breakPosition), open)
		is.Equal(walkPages(t, limit, page(paykit.BreakListParams{MerchantID: "mch_a"}), breakPosition), ofA)
	}
	// Strictly after the position, which may lie between rows.
	rows, err := page(paykit.BreakListParams{})(&paykit.Position{CreatedAt: at(7 * time.Second), ID: "rb_022"}, 2)
	is.NoErr(err)
	is.Equal(breakIDs(rows), []string{"rb_021", "rb_020"})
	rows, err = page(paykit.BreakListParams{})(&paykit.Position{CreatedAt: at(7 * time.Second), ID: "rb_0205"}, 2)
	is.NoErr(err)
	is.Equal(breakIDs(rows), []string{"rb_020", "rb_019"})
	rows, err = page(paykit.BreakListParams{})(nil, 0) // no limit
	is.NoErr(err)
	is.Equal(breakIDs(rows), all)
}

// testFindOpenBreak: the open break of a Provider, type and reference,
// and none once resolved.
func testFindOpenBreak(t *testing.T, s paykit.Store) {
	is := is.New(t)
	ctx := context.Background()
	find := func(provider string, typ paykit.BreakType, ref string) string {
		t.Helper()
		b, err := s.FindOpenBreak(ctx, provider, typ, ref)
		if errors.Is(err, paykit.ErrNotFound) {
			return ""
		}
		is.NoErr(err)
		return b.ID
	}
	missing := func(id, provider, ref string, created time.Time) *paykit.ReconciliationBreak {
		b := reconBreak(scopeA, id, ref, created)
		b.Type, b.Provider = paykit.BreakMissingInReport, provider
		return b
	}
	mustCreateBreak(t, s, missing("rb_1", "sandbox", "ch_1", base))
	mustCreateBreak(t, s, missing("rb_2", "xendit", "ch_1", base))
	mustCreateBreak(t, s, reconBreak(scopeA, "rb_3", "ch_1", base)) // amount_mismatch
	done := missing("rb_4", "sandbox", "ch_4", base)
	done.Status, done.Resolution, done.ResolvedAt = paykit.BreakResolved, paykit.ResolveMatched, ptr(at(time.Second))
	mustCreateBreak(t, s, done)

	is.Equal(find("sandbox", paykit.BreakMissingInReport, "ch_1"), "rb_1")
	is.Equal(find("xendit", paykit.BreakMissingInReport, "ch_1"), "rb_2")
	is.Equal(find("sandbox", paykit.BreakAmountMismatch, "ch_1"), "rb_3")
	is.Equal(find("sandbox", paykit.BreakFeeMismatch, "ch_1"), "")
	is.Equal(find("stripe", paykit.BreakMissingInReport, "ch_1"), "")
	is.Equal(find("sandbox", paykit.BreakMissingInReport, "ch_4"), "") // only resolved
	is.Equal(find("sandbox", paykit.BreakMissingInReport, "ch"), "")

	// Resolved, it is no longer found; a new break of the key is.
	resolveBreak(t, s, "rb_1", at(time.Minute))
	is.Equal(find("sandbox", paykit.BreakMissingInReport, "ch_1"), "")
	mustCreateBreak(t, s, missing("rb_5", "sandbox", "ch_1", at(time.Hour)))
	is.Equal(find("sandbox", paykit.BreakMissingInReport, "ch_1"), "rb_5")

	// Of two open breaks of one key, the older is found.
	mustCreateBreak(t, s, missing("rb_8", "sandbox", "ch_8", at(2*time.Minute)))
	mustCreateBreak(t, s, missing("rb_7", "sandbox", "ch_8", at(3*time.Minute)))
	mustCreateBreak(t, s, missing("rb_9", "sandbox", "ch_8", at(time.Minute)))
	is.Equal(find("sandbox", paykit.BreakMissingInReport, "ch_8"), "rb_9")
	resolveBreak(t, s, "rb_9", at(time.Hour))
	is.Equal(find("sandbox", paykit.BreakMissingInReport, "ch_8"), "rb_8")

	// Inside a transaction, its own writes are seen; undone with it.
	err := s.InTx(ctx, func(tx paykit.Tx) error {
		resolveBreak(t, tx, "rb_5", at(2*time.Hour))
		if _, err := tx.FindOpenBreak(ctx, "sandbox", paykit.BreakMissingInReport, "ch_1"); !errors.Is(err, paykit.ErrNotFound) {
			return fmt.Errorf("resolved break still found: %v", err)
		}
		mustCreateBreak(t, tx, missing("rb_6", "sandbox", "ch_6", at(2*time.Hour)))
		b, err := tx.FindOpenBreak(ctx, "sandbox", paykit.BreakMissingInReport, "ch_6")
		if err != nil {
			return err
		}
		if b.ID != "rb_6" {
			return fmt.Errorf("found %s", b.ID)
		}
		return errBoom
	})
	is.True(errors.Is(err, errBoom))
	is.Equal(find("sandbox", paykit.BreakMissingInReport, "ch_1"), "rb_5")
	is.Equal(find("sandbox", paykit.BreakMissingInReport, "ch_6"), "")
}

func testCountOpenBreaks(t *testing.T, s paykit.Store) {
	is := is.New(t)
	ctx := context.Background()
	counts, err := s.CountOpenBreaks(ctx)
	is.NoErr(err)
	is.Equal(len(counts), 0)

	for i, typ := range []paykit.BreakType{paykit.BreakFeeMismatch, paykit.BreakFeeMismatch, paykit.BreakFeeMismatch,
		paykit.BreakMissingInReport, paykit.BreakUnknownToPaykit, paykit.BreakDuplicateLine} {
		b := reconBreak(scopeA, fmt.Sprintf("rb_%d", i), fmt.Sprintf("ch_%d", i), at(time.Duration(i)*time.Second))
		b.Type = typ
		if i%2 == 0 {
			b.MerchantID, b.Environment, b.Provider = "mch_b", paykit.Live, "xendit" // of every tenant and Provider
		}
		if typ == paykit.BreakDuplicateLine {
			b.Status, b.Resolution, b.ResolvedAt = paykit.BreakResolved, paykit.ResolveAcceptPaykit, ptr(at(time.Hour))
		}
		mustCreateBreak(t, s, b)
	}
	counts, err = s.CountOpenBreaks(ctx)
	is.NoErr(err)
	is.Equal(counts, map[paykit.BreakType]int{paykit.BreakFeeMismatch: 3, paykit.BreakMissingInReport: 1, paykit.BreakUnknownToPaykit: 1})

	resolveBreak(t, s, "rb_3", at(time.Hour))
	resolveBreak(t, s, "rb_0", at(time.Hour))
	counts, err = s.CountOpenBreaks(ctx)
	is.NoErr(err)
	is.Equal(counts, map[paykit.BreakType]int{paykit.BreakFeeMismatch: 2, paykit.BreakUnknownToPaykit: 1})
}

// testListUnsettled: the succeeded payments and refunds of a Provider
// that no settled line names, oldest first.
func testListUnsettled(t *testing.T, s paykit.Store) {
	is := is.New(t)
	ctx := context.Background()
	before := at(time.Hour)
	succeeded := func(scope paykit.Scope, id, provider, ref string, completed time.Time) *paykit.PaymentIntent {
		p := payment(scope, id, "ref_"+id, base)
		p.Status, p.Provider, p.ProviderRef, p.Attempt = paykit.PaymentSucceeded, provider, ref, paykit.AttemptClosed
		p.Fee, p.CompletedAt = 458, &completed
		return p
	}
	refunded := func(scope paykit.Scope, id, provider, ref string, completed time.Time) *paykit.Refund {
		r := refund(scope, id, "ref_"+id, "pi_x", base)
		r.Status, r.Provider, r.ProviderRef, r.Attempt = paykit.RefundSucceeded, provider, ref, paykit.AttemptClosed
		r.CompletedAt = &completed
		return r
	}
	missing := func(id, provider, ref string) *paykit.ReconciliationBreak {
		b := reconBreak(scopeA, id, ref, base)
		b.Type, b.Provider, b.Batch, b.Reported = paykit.BreakMissingInReport, provider, "", nil
		return b
	}

	// Listed.
	mustCreatePayment(t, s, succeeded(scopeA, "pi_1", "sandbox", "ch_1", at(10*time.Minute)))
	mustCreatePayment(t, s, succeeded(scopeB, "pi_2", "sandbox", "ch_2", at(5*time.Minute)))
	mustCreatePayment(t, s, succeeded(scopeALive, "pi_3", "sandbox", "ch_3", at(20*time.Minute)))
	mustCreateRefund(t, s, refunded(scopeA, "re_1", "sandbox", "rf_1", at(5*time.Minute))) // ties pi_2: by id
	mustCreateRefund(t, s, refunded(scopeB, "re_2", "sandbox", "rf_2", at(-time.Hour)))
	mustCreatePayment(t, s, succeeded(scopeA, "pi_resolved", "sandbox", "ch_resolved", at(30*time.Minute)))
	mustCreateBreak(t, s, missing("rb_resolved", "sandbox", "ch_resolved"))
	resolveBreak(t, s, "rb_resolved", at(time.Hour)) // a resolved break excludes too
	mustCreatePayment(t, s, succeeded(scopeA, "pi_other_line", "sandbox", "ch_other_line", at(31*time.Minute)))
	mustCreatePayment(t, s, succeeded(scopeA, "pi_other_break", "sandbox", "ch_other_break", at(32*time.Minute)))
	mustRecordLines(t, s, settledLine("xendit", "payment", "ch_other_line", "stl_x", "", base)) // another Provider's line
	mustCreateBreak(t, s, missing("rb_other", "xendit", "ch_other_break"))                      // another Provider's break
	mustCreateBreak(t, s, reconBreak(scopeA, "rb_amount", "ch_other_break", base))              // not missing_in_report

	// Not listed.
	mustCreatePayment(t, s, succeeded(scopeA, "pi_xendit", "xendit", "ch_x", at(time.Minute)))
	mustCreatePayment(t, s, succeeded(scopeA, "pi_late", "sandbox", "ch_late", before)) // Before is exclusive
	mustCreatePayment(t, s, succeeded(scopeA, "pi_noref", "sandbox", "", at(time.Minute)))
	processing := succeeded(scopeA, "pi_processing", "sandbox", "ch_processing", at(time.Minute))
	processing.Status, processing.CompletedAt = paykit.PaymentProcessing, nil
	mustCreatePayment(t, s, processing)
	failed := succeeded(scopeA, "pi_failed", "sandbox", "ch_failed", at(time.Minute))
	failed.Status = paykit.PaymentFailed
	mustCreatePayment(t, s, failed)
	mustCreatePayment(t, s, succeeded(scopeA, "pi_settled_line", "sandbox", "ch_settled_line", at(time.Minute)))
	mustRecordLines(t, s, settledLine("sandbox", "payment", "ch_settled_line", "stl_1", "pi_settled_line", base))
	// A fee_mismatch: its line was read, a break is open, its funds are
	// not settled.
	mustCreatePayment(t, s, succeeded(scopeA, "pi_fee", "sandbox", "ch_fee", at(time.Minute)))
	mustRecordLines(t, s, settledLine("sandbox", "payment", "ch_fee", "stl_1", "pi_fee", base))
	fee := reconBreak(scopeA, "rb_fee", "ch_fee", base)
	fee.Type = paykit.BreakFeeMismatch
	mustCreateBreak(t, s, fee)
	// A line of any type naming the reference.
	mustCreatePayment(t, s, succeeded(scopeA, "pi_any_line", "sandbox", "ch_any_line", at(time.Minute)))
	mustRecordLines(t, s, settledLine("sandbox", "dispute", "ch_any_line", "stl_1", "", base))
	// Settled otherwise (an operator's resolution).
	settled := succeeded(scopeA, "pi_settled", "sandbox", "ch_settled", at(time.Minute))
	settled.SettledAt = ptr(at(2 * time.Hour))
	mustCreatePayment(t, s, settled)
	mustCreatePayment(t, s, succeeded(scopeA, "pi_missing", "sandbox", "ch_missing", at(time.Minute)))
	mustCreateBreak(t, s, missing("rb_missing", "sandbox", "ch_missing"))
	pending := refunded(scopeA, "re_pending", "sandbox", "rf_pending", at(time.Minute))
	pending.Status, pending.CompletedAt = paykit.RefundPending, nil
	mustCreateRefund(t, s, pending)
	refundFailed := refunded(scopeA, "re_failed", "sandbox", "rf_failed", at(time.Minute))
	refundFailed.Status = paykit.RefundFailed
	mustCreateRefund(t, s, refundFailed)
	mustCreateRefund(t, s, refunded(scopeA, "re_xendit", "xendit", "rf_x", at(time.Minute)))
	mustCreateRefund(t, s, refunded(scopeA, "re_late", "sandbox", "rf_late", at(2*time.Hour)))
	mustCreateRefund(t, s, refunded(scopeA, "re_noref", "sandbox", "", at(time.Minute)))
	mustCreateRefund(t, s, refunded(scopeA, "re_line", "sandbox", "rf_line", at(time.Minute)))
	mustRecordLines(t, s, settledLine("sandbox", "refund", "rf_line", "stl_1", "re_line", base))
	mustCreateRefund(t, s, refunded(scopeA, "re_missing", "sandbox", "rf_missing", at(time.Minute)))
	mustCreateBreak(t, s, missing("rb_re_missing", "sandbox", "rf_missing"))

	list := func(provider string, before time.Time, limit int) []string {
		t.Helper()
		rows, err := s.ListUnsettled(ctx, paykit.UnsettledQuery{Provider: provider, Before: before, Limit: limit})
		is.NoErr(err)
		return ids(rows, func(u paykit.Unsettled) string { return u.ID })
	}
	all := []string{"re_2", "pi_2", "re_1", "pi_1", "pi_3", "pi_other_line", "pi_other_break"}
	is.Equal(list("sandbox", before, 0), all)
	is.Equal(list("sandbox", before, 100), all)
	is.Equal(list("sandbox", before, 3), all[:3])
	is.Equal(list("sandbox", at(10*time.Minute), 0), []string{"re_2", "pi_2", "re_1"})
	is.Equal(list("xendit", before, 0), []string{"pi_xendit", "re_xendit"})
	is.Equal(list("stripe", before, 0), []string(nil))

	rows, err := s.ListUnsettled(ctx, paykit.UnsettledQuery{Provider: "sandbox", Before: at(6 * time.Minute)})
	is.NoErr(err)
	is.Equal(rows, []paykit.Unsettled{
		{Object: "refund", Scope: scopeB, ID: "re_2", Reference: "rf_2", Amount: -5_000, Currency: "MYR", CompletedAt: at(-time.Hour)},
		{Object: "payment_intent", Scope: scopeB, ID: "pi_2", Reference: "ch_2", Amount: 12_345, Fee: 458, Currency: "MYR", CompletedAt: at(5 * time.Minute)},
		{Object: "refund", Scope: scopeA, ID: "re_1", Reference: "rf_1", Amount: -5_000, Currency: "MYR", CompletedAt: at(5 * time.Minute)},
	})
	for _, u := range rows {
		is.Equal(u.CompletedAt.Location(), time.UTC)
	}

	// A line, a missing_in_report break, a settlement each take one out;
	// a payment that succeeds comes in.
	mustRecordLines(t, s, settledLine("sandbox", "payment", "ch_1", "stl_2", "pi_1", at(time.Hour)))
	mustCreateBreak(t, s, missing("rb_re_2", "sandbox", "rf_2"))
	p3, err := s.GetPaymentIntent(ctx, scopeALive, "pi_3")
	is.NoErr(err)
	p3.SettledAt = ptr(at(time.Hour))
	is.NoErr(s.UpdatePaymentIntent(ctx, p3))
	p, err := s.GetPaymentIntent(ctx, scopeA, "pi_processing")
	is.NoErr(err)
	p.Status, p.CompletedAt = paykit.PaymentSucceeded, ptr(at(7*time.Minute))
	is.NoErr(s.UpdatePaymentIntent(ctx, p))
	is.Equal(list("sandbox", before, 0), []string{"pi_2", "re_1", "pi_processing", "pi_other_line", "pi_other_break"})
	// Resolving the break does not list the refund again.
	resolveBreak(t, s, "rb_re_2", at(2*time.Hour))
	is.Equal(list("sandbox", before, 2), []string{"pi_2", "re_1"})
}
