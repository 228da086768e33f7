package sqlstore

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/paykit/paykit"
)

// TestReconciliationPlansUseIndexes checks that the operator's lists of
// breaks and runs, plain, deep and by each filter, are ordered index range
// scans on PostgreSQL (no sort, no sequential scan), and that the lookups
// of an open break, of open breaks by type and of a Provider's last run
// read indexes.
func TestReconciliationPlansUseIndexes(t *testing.T) {
	t.Parallel()
	s := openPostgres(t)
	ctx := context.Background()
	// 20,000 breaks of 10 merchants (one in 10 of none) and 3 Providers,
	// one in 50 open; 20,000 runs of 3 Providers.
	for _, q := range []string{
		`INSERT INTO paykit_reconciliation_breaks (id, type, status, provider, merchant_id, environment, source,
			line_type, reference, batch, expected_amount, expected_fee, expected_currency, resolution, note,
			created_at, resolved_at)
			SELECT 'rb_' || lpad(i::text, 8, '0'),
			(ARRAY['fee_mismatch', 'amount_mismatch', 'currency_mismatch', 'duplicate_line', 'unknown_to_paykit', 'missing_in_report'])[i % 6 + 1],
			CASE WHEN i % 50 = 0 THEN 'open' ELSE 'resolved' END, (ARRAY['sandbox', 'xendit', 'stripe'])[i % 3 + 1],
			CASE WHEN i % 10 = 0 THEN '' ELSE 'mch_' || (i % 7) END, 'live', 'pi_' || i, 'payment', 'ch_' || i,
			'stl_' || (i / 100), 1000, 39, 'MYR', CASE WHEN i % 50 = 0 THEN '' ELSE 'accept_paykit' END, '', t,
			CASE WHEN i % 50 = 0 THEN NULL ELSE t END
			FROM generate_series(1, 20000) AS i, LATERAL (SELECT TIMESTAMPTZ '2026-01-01 00:00:00+00' + i * INTERVAL '1 millisecond' AS t) x`,
		`INSERT INTO paykit_reconciliation_runs (id, provider, batch, lines, matched, breaks, started_at, finished_at)
			SELECT 'rr_' || lpad(i::text, 8, '0'), (ARRAY['sandbox', 'xendit', 'stripe'])[i % 3 + 1], 'stl_' || i,
			100, 99, 1, t, t + INTERVAL '1 second'
			FROM generate_series(1, 20000) AS i, LATERAL (SELECT TIMESTAMPTZ '2026-01-01 00:00:00+00' + i * INTERVAL '1 millisecond' AS t) x`,
		"ANALYZE paykit_reconciliation_breaks", "ANALYZE paykit_reconciliation_runs",
	} {
		if _, err := s.db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	deepBreak := &paykit.Position{CreatedAt: time.Date(2026, 1, 1, 0, 0, 2, 0, time.UTC), ID: "rb_00002000"}
	type bq = paykit.ListQuery[paykit.BreakListParams]
	type bf = paykit.BreakListParams
	for name, c := range map[string]struct {
		q     bq
		index string
	}{
		"breaks":          {bq{Limit: 26}, "paykit_reconciliation_breaks_list_idx"},
		"breaks deep":     {bq{After: deepBreak, Limit: 26}, "paykit_reconciliation_breaks_list_idx"},
		"breaks open":     {bq{Filter: bf{Status: paykit.BreakOpen}, After: deepBreak, Limit: 26}, "paykit_reconciliation_breaks_"},
		"breaks type":     {bq{Filter: bf{Type: paykit.BreakFeeMismatch}, After: deepBreak, Limit: 26}, "paykit_reconciliation_breaks_"},
		"breaks merchant": {bq{Filter: bf{MerchantID: "mch_3"}, After: deepBreak, Limit: 26}, "paykit_reconciliation_breaks_"},
		"breaks provider": {bq{Filter: bf{Provider: "xendit"}, After: deepBreak, Limit: 26}, "paykit_reconciliation_breaks_"},
		"breaks open of a merchant": {bq{Filter: bf{Status: paykit.BreakOpen, MerchantID: "mch_3"}, Limit: 26},
			"paykit_reconciliation_breaks_"},
	} {
		var rows []reconciliationBreakRow
		checkIndexScan(t, s, name, s.tx.listBreaksQuery(&rows, c.q).String(), c.index)
	}
	deepRun := &paykit.Position{CreatedAt: time.Date(2026, 1, 1, 0, 0, 2, 0, time.UTC), ID: "rr_00002000"}
	for name, c := range map[string]struct {
		q     paykit.ListQuery[paykit.RunListParams]
		index string
	}{
		"runs deep":     {paykit.ListQuery[paykit.RunListParams]{After: deepRun, Limit: 26}, "paykit_reconciliation_runs_list_idx"},
		"runs provider": {paykit.ListQuery[paykit.RunListParams]{Filter: paykit.RunListParams{Provider: "stripe"}, After: deepRun, Limit: 26}, "paykit_reconciliation_runs_"},
		"last run":      {paykit.ListQuery[paykit.RunListParams]{Filter: paykit.RunListParams{Provider: "stripe"}, Limit: 1}, "paykit_reconciliation_runs_provider_idx"},
	} {
		var rows []reconciliationRunRow
		checkIndexScan(t, s, name, s.tx.listRunsQuery(&rows, c.q).String(), c.index)
	}
	var row reconciliationBreakRow
	checkPlan(t, s, "find open break", s.tx.findOpenBreakQuery(&row, "xendit", paykit.BreakMissingInReport, "ch_550").String(),
		[]string{"paykit_reconciliation_breaks_open_idx"}, []string{"Seq Scan", "Sort"})
	checkPlan(t, s, "count open breaks", s.tx.countOpenBreaksQuery().String(), nil, []string{"Seq Scan"})

	last, err := s.LastReconciliationRun(ctx, "stripe")
	if err != nil || last.ID != "rr_00020000" {
		t.Errorf("LastReconciliationRun(stripe) = %+v, %v", last, err)
	}
	found, err := s.FindOpenBreak(ctx, "sandbox", paykit.BreakFeeMismatch, "ch_600")
	if err != nil || found.ID != "rb_00000600" {
		t.Errorf("FindOpenBreak(sandbox, fee_mismatch, ch_600) = %+v, %v", found, err)
	}
	want := map[paykit.BreakType]int{}
	for i := 50; i <= 20000; i += 50 {
		want[[]paykit.BreakType{paykit.BreakFeeMismatch, paykit.BreakAmountMismatch, paykit.BreakCurrencyMismatch,
			paykit.BreakDuplicateLine, paykit.BreakUnknownToPaykit, paykit.BreakMissingInReport}[i%6]]++
	}
	if counts, err := s.CountOpenBreaks(ctx); err != nil || !maps.Equal(counts, want) {
		t.Errorf("CountOpenBreaks = %v, %v; want %v", counts, err, want)
	}
}

// checkPlan fails t unless PostgreSQL's plan of query names each of want
// and none of not.
func checkPlan(t *testing.T, s *Store, name, query string, want, not []string) {
	t.Helper()
	var plan []string
	if err := s.db.NewRaw("EXPLAIN "+query).Scan(context.Background(), &plan); err != nil {
		t.Fatal(err)
	}
	text := strings.Join(plan, "\n")
	for _, w := range want {
		if !strings.Contains(text, w) {
			t.Errorf("%s: the plan does not read %s:\n%s", name, w, text)
		}
	}
	for _, n := range not {
		if strings.Contains(text, n) {
			t.Errorf("%s: the plan has a %s:\n%s", name, n, text)
		}
	}
}

// TestUnsettledPlanReadsPartialIndexes checks, on PostgreSQL, that
// ListUnsettled reads only the succeeded payments and refunds not settled
// yet, through their partial indexes, and looks their lines and breaks
// up by index: among 120,000 settled lines and 22,000 payments, it reads
// no table whole. And it lists what the seed leaves unsettled.
func TestUnsettledPlanReadsPartialIndexes(t *testing.T) {
	t.Parallel()
	s := openPostgres(t)
	ctx := context.Background()
	// 22,000 succeeded payments over 22 s, one in 10 of xendit, settled
	// with a line but for one in 500 with a line and an open fee_mismatch
	// break, one in 1,000 with an open missing_in_report break and no
	// line, and one in 2,000 with neither; 100,000 lines of earlier
	// payments; 20,000 resolved breaks; 4,000 succeeded refunds over 20 s,
	// named by a line but one in 400.
	for _, q := range []string{
		`INSERT INTO payment_intents (id, merchant_id, environment, status, amount, currency, country,
			merchant_reference, payment_method, return_url, checkout_id, failure_code, provider, provider_ref, attempt,
			provider_url, expires_at, completed_at, created_at, updated_at, version, fee, settled_at)
			SELECT 'pi_' || lpad(i::text, 8, '0'), 'mch_' || (i % 10), 'live', 'succeeded', 1000, 'MYR', 'MY',
			'ref_' || i, 'FPX', '', '', '', CASE WHEN i % 10 = 3 THEN 'xendit' ELSE 'sandbox' END, 'ch_' || i, 'closed', '',
			t, t, t, t, 0, 39, CASE WHEN i % 500 = 1 OR i % 1000 = 100 OR i % 2000 = 7 THEN NULL ELSE t END
			FROM generate_series(1, 22000) AS i, LATERAL (SELECT TIMESTAMPTZ '2026-01-01 00:00:00+00' + i * INTERVAL '1 millisecond' AS t) x`,
		`INSERT INTO paykit_settled_lines (provider, type, reference, batch, source, created_at)
			SELECT CASE WHEN i % 10 = 3 THEN 'xendit' ELSE 'sandbox' END, 'payment', 'ch_' || i, 'stl_' || (i / 1000),
			'pi_' || lpad(i::text, 8, '0'), TIMESTAMPTZ '2026-01-02 00:00:00+00'
			FROM generate_series(1, 22000) AS i WHERE i % 1000 <> 100 AND i % 2000 <> 7`,
		`INSERT INTO paykit_settled_lines (provider, type, reference, batch, source, created_at)
			SELECT 'sandbox', 'payment', 'old_' || i, 'stl_old', '', TIMESTAMPTZ '2025-01-01 00:00:00+00'
			FROM generate_series(1, 100000) AS i`,
		`INSERT INTO paykit_reconciliation_breaks (id, type, status, provider, merchant_id, environment, source,
			line_type, reference, batch, resolution, note, created_at)
			SELECT 'rb_' || lpad(i::text, 8, '0'), CASE WHEN i % 500 = 1 THEN 'fee_mismatch' ELSE 'missing_in_report' END,
			'open', 'sandbox', 'mch_' || (i % 10), 'live', 'pi_' || lpad(i::text, 8, '0'), 'payment', 'ch_' || i, '', '', '',
			TIMESTAMPTZ '2026-01-02 00:00:00+00'
			FROM generate_series(1, 22000) AS i WHERE i % 500 = 1 OR i % 1000 = 100`,
		`INSERT INTO paykit_reconciliation_breaks (id, type, status, provider, merchant_id, environment, source,
			line_type, reference, batch, resolution, note, created_at, resolved_at)
			SELECT 'rb_old_' || i, 'missing_in_report', 'resolved', 'sandbox', 'mch_1', 'live', '', 'payment', 'old_' || i,
			'', 'accept_paykit', '', TIMESTAMPTZ '2025-01-01 00:00:00+00', TIMESTAMPTZ '2025-01-02 00:00:00+00'
			FROM generate_series(1, 20000) AS i`,
		`INSERT INTO paykit_refunds (id, merchant_id, environment, payment_intent_id, amount, currency, status, reason,
			merchant_reference, failure_code, provider, provider_ref, attempt, completed_at, created_at, updated_at,
			version, in_settlement)
			SELECT 're_' || lpad(i::text, 8, '0'), 'mch_' || (i % 10), 'live', 'pi_' || lpad(i::text, 8, '0'), 100, 'MYR',
			'succeeded', '', 'rref_' || i, '', 'sandbox', 'rf_' || i, 'closed', t, t, t, 0, i % 400 <> 0
			FROM generate_series(1, 4000) AS i, LATERAL (SELECT TIMESTAMPTZ '2026-01-01 00:00:00+00' + i * INTERVAL '5 millisecond' AS t) x`,
		`INSERT INTO paykit_settled_lines (provider, type, reference, batch, source, created_at)
			SELECT 'sandbox', 'refund', 'rf_' || i, 'stl_r', 're_' || lpad(i::text, 8, '0'), TIMESTAMPTZ '2026-01-02 00:00:00+00'
			FROM generate_series(1, 4000) AS i WHERE i % 400 <> 0`,
		"ANALYZE payment_intents", "ANALYZE paykit_refunds", "ANALYZE paykit_settled_lines", "ANALYZE paykit_reconciliation_breaks",
	} {
		if _, err := s.db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	before := time.Date(2026, 1, 1, 0, 0, 21, 0, time.UTC)
	for _, limit := range []int{100, 0} {
		q := paykit.UnsettledQuery{Provider: "sandbox", Before: before, Limit: limit}
		checkPlan(t, s, fmt.Sprint("unsettled, limit ", limit), s.tx.unsettledQuery(q).String(),
			[]string{"payment_intents_unsettled_idx", "paykit_refunds_unsettled_idx", "paykit_settled_lines_pkey",
				"paykit_reconciliation_breaks_missing_idx"},
			[]string{"Seq Scan"})
	}

	// What is left unsettled before 21 s: the payments of i % 2000 = 7
	// (completed at i ms, i < 21,000) and the refunds of i % 400 = 0
	// (at 5i ms), oldest first.
	type entry struct {
		ms int64
		id string
	}
	var want, got []entry
	for i := 1; i < 21_000; i++ {
		if i%2000 == 7 {
			want = append(want, entry{int64(i), fmt.Sprintf("pi_%08d", i)})
		}
		if i <= 4000 && i%400 == 0 {
			want = append(want, entry{int64(i) * 5, fmt.Sprintf("re_%08d", i)})
		}
	}
	slices.SortFunc(want, func(a, b entry) int { return cmp.Or(cmp.Compare(a.ms, b.ms), cmp.Compare(a.id, b.id)) })
	rows, err := s.ListUnsettled(ctx, paykit.UnsettledQuery{Provider: "sandbox", Before: before})
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range rows {
		got = append(got, entry{u.CompletedAt.Sub(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)).Milliseconds(), u.ID})
	}
	if !slices.Equal(got, want) {
		t.Errorf("ListUnsettled = %v, want %v", got, want)
	}
}

// TestUnsettledPlanSQLite checks that SQLite reads ListUnsettled's
// records, lines and breaks, and RecordSettledLines's holders and
// refunds, by index.
func TestUnsettledPlanSQLite(t *testing.T) {
	t.Parallel()
	s := openSQLite(t)
	var held []settledLineRow
	lines := []paykit.SettledLine{{Provider: "sandbox", Type: "payment", Reference: "ch_5"},
		{Provider: "sandbox", Type: "refund", Reference: "rf_7"}, {Provider: "xendit", Type: "refund", Reference: "rf_7"}}
	_, mark, sel := s.tx.settledLinesQueries(lines, &held)
	for name, c := range map[string]struct {
		query string
		want  []string
	}{
		"unsettled": {s.tx.unsettledQuery(paykit.UnsettledQuery{Provider: "sandbox", Before: time.Now(), Limit: 100}).String(), []string{
			"SEARCH u USING INDEX payment_intents_unsettled_idx (provider=? AND completed_at<?)",
			"SEARCH u USING INDEX paykit_refunds_unsettled_idx (provider=? AND completed_at<?)",
			"SEARCH l USING PRIMARY KEY (provider=? AND reference=?)",
			"SEARCH b USING COVERING INDEX paykit_reconciliation_breaks_missing_idx (provider=? AND reference=?)"}},
		"mark refunds":  {mark.String(), []string{"SEARCH paykit_refunds USING INDEX paykit_refunds_provider_ref_idx (provider=? AND provider_ref=?)"}},
		"holders":       {sel.String(), []string{"USING PRIMARY KEY (provider=? AND reference=?)"}},
		"find open":     {s.tx.findOpenBreakQuery(new(reconciliationBreakRow), "sandbox", paykit.BreakMissingInReport, "ch_1").String(), []string{"USING INDEX paykit_reconciliation_breaks_open_idx"}},
		"count open":    {s.tx.countOpenBreaksQuery().String(), []string{"USING INDEX paykit_reconciliation_breaks_"}},
		"list breaks":   {s.tx.listBreaksQuery(new([]reconciliationBreakRow), paykit.ListQuery[paykit.BreakListParams]{Limit: 10}).String(), []string{"USING INDEX paykit_reconciliation_breaks_list_idx"}},
		"runs provider": {s.tx.listRunsQuery(new([]reconciliationRunRow), paykit.ListQuery[paykit.RunListParams]{Filter: paykit.RunListParams{Provider: "x"}, Limit: 1}).String(), []string{"USING INDEX paykit_reconciliation_runs_provider_idx"}},
	} {
		plan := sqlitePlan(t, s, c.query)
		for _, w := range c.want {
			if !strings.Contains(plan, w) {
				t.Errorf("%s: the plan does not read %q:\n%s", name, w, plan)
			}
		}
		for _, step := range strings.Split(plan, "\n") {
			if strings.HasPrefix(step, "SCAN ") && step != "SCAN page" && !strings.Contains(step, " USING ") {
				t.Errorf("%s: the plan scans a table:\n%s", name, plan)
			}
		}
	}
}

// sqlitePlan is SQLite's EXPLAIN QUERY PLAN of query, a line a step.
func sqlitePlan(t *testing.T, s *Store, query string) string {
	t.Helper()
	rows, err := s.db.QueryContext(context.Background(), "EXPLAIN QUERY PLAN "+query)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var b strings.Builder
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		b.WriteString(detail + "\n")
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// queryCounter counts the statements a Store sends.
type queryCounter struct {
	mu    sync.Mutex
	stmts []string
}

func (c *queryCounter) BeforeQuery(ctx context.Context, _ *bun.QueryEvent) context.Context {
	return ctx
}

func (c *queryCounter) AfterQuery(_ context.Context, ev *bun.QueryEvent) {
	if strings.HasPrefix(ev.Query, "SELECT pg_notify(") {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stmts = append(c.stmts, ev.Query)
}

func (c *queryCounter) take() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.stmts
	c.stmts = nil
	return out
}

// TestRecordSettledLinesStatements: recording lines takes three
// statements however many lines (and Providers) there are, on both
// backends, and marks the refunds the lines name, which their own
// updates keep.
func TestRecordSettledLinesStatements(t *testing.T) {
	t.Parallel()
	for name, open := range map[string]func(testing.TB) *Store{"postgres": openPostgres, "sqlite": openSQLite} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			count := &queryCounter{}
			s := New(open(t).db.WithQueryHook(count))
			at := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
			for i, ref := range []string{"rf_1", "rf_2", "rf_3"} {
				r := &paykit.Refund{ID: fmt.Sprint("re_", i), MerchantID: "mch_1", Environment: paykit.Test, PaymentIntentID: "pi_1",
					Amount: 100, Currency: "MYR", Status: paykit.RefundSucceeded, MerchantReference: ref,
					ProviderAttempt: paykit.ProviderAttempt{Provider: "sandbox", ProviderRef: ref, Attempt: paykit.AttemptClosed},
					CompletedAt:     &at, CreatedAt: at, UpdatedAt: at}
				if i == 2 {
					r.Provider = "xendit"
				}
				if err := s.CreateRefund(ctx, r); err != nil {
					t.Fatal(err)
				}
			}
			var lines []paykit.SettledLine
			for i := range 600 {
				lines = append(lines, paykit.SettledLine{Provider: "sandbox", Type: "payment", Reference: fmt.Sprint("ch_", i%500), Batch: "stl_1", CreatedAt: at})
			}
			lines = append(lines, paykit.SettledLine{Provider: "sandbox", Type: "refund", Reference: "rf_1", Batch: "stl_1", CreatedAt: at},
				paykit.SettledLine{Provider: "xendit", Type: "refund", Reference: "rf_2", Batch: "stl_x", CreatedAt: at})
			count.take()
			held, err := s.RecordSettledLines(ctx, lines)
			if err != nil {
				t.Fatal(err)
			}
			if stmts := count.take(); len(stmts) != 3 {
				t.Errorf("%d statements for %d lines: %q", len(stmts), len(lines), stmts)
			}
			if len(held) != len(lines) || held[550].Reference != "ch_50" || held[601].Provider != "xendit" {
				t.Errorf("holders: %d of %d lines", len(held), len(lines))
			}
			// rf_1 of sandbox is named; rf_2 of sandbox is not (xendit's
			// rf_2 is), nor rf_3 of xendit.
			inSettlement := func() string {
				var marks []string
				err := s.db.NewSelect().Table("paykit_refunds").ColumnExpr("id").Where("in_settlement").OrderExpr("id").Scan(ctx, &marks)
				if err != nil {
					t.Fatal(err)
				}
				return strings.Join(marks, ",")
			}
			if got := inSettlement(); got != "re_0" {
				t.Errorf("refunds in settlement: %q, want re_0", got)
			}
			r, err := s.GetRefund(ctx, paykit.Scope{MerchantID: "mch_1", Environment: paykit.Test}, "re_0")
			if err != nil {
				t.Fatal(err)
			}
			r.Reason = "updated"
			if err := s.UpdateRefund(ctx, r); err != nil {
				t.Fatal(err)
			}
			if got := inSettlement(); got != "re_0" {
				t.Errorf("after an update, refunds in settlement: %q, want re_0", got)
			}
		})
	}
}
