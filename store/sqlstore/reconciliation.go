package sqlstore

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"github.com/paykit/paykit"
)

// settledLineRow is a row of paykit_settled_lines.
type settledLineRow struct {
	bun.BaseModel `bun:"table:paykit_settled_lines"`

	Provider  string    `bun:"provider,pk"`
	Type      string    `bun:"type,pk"`
	Reference string    `bun:"reference,pk"`
	Batch     string    `bun:"batch"`
	Source    string    `bun:"source"`
	CreatedAt time.Time `bun:"created_at"`
}

func (r *settledLineRow) line() paykit.SettledLine {
	return paykit.SettledLine{Provider: r.Provider, Type: r.Type, Reference: r.Reference, Batch: r.Batch,
		Source: r.Source, CreatedAt: r.CreatedAt.UTC()}
}

// lineKey is a settlement line's identity.
type lineKey struct{ provider, typ, ref string }

// settledLinesQueries are the statements of RecordSettledLines: the
// insert of the lines whose key is not recorded (the first line of each
// key), the update that marks the refunds the lines name (see
// ListUnsettled), and the select of the records that hold the lines'
// keys into held.
func (t tx) settledLinesQueries(lines []paykit.SettledLine, held *[]settledLineRow) (*bun.InsertQuery, *bun.UpdateQuery, *bun.SelectQuery) {
	rows := make([]settledLineRow, 0, len(lines))
	seen := make(map[lineKey]bool, len(lines))
	var providers []string
	refs := map[string][]string{} // the distinct references of each Provider
	named := map[[2]string]bool{}
	for _, l := range lines {
		k := lineKey{l.Provider, l.Type, l.Reference}
		if seen[k] {
			continue
		}
		seen[k] = true
		rows = append(rows, settledLineRow{Provider: l.Provider, Type: l.Type, Reference: l.Reference, Batch: l.Batch,
			Source: l.Source, CreatedAt: l.CreatedAt.UTC()})
		if _, ok := refs[l.Provider]; !ok {
			providers = append(providers, l.Provider)
		}
		if pr := [2]string{l.Provider, l.Reference}; !named[pr] {
			named[pr] = true
			refs[l.Provider] = append(refs[l.Provider], l.Reference)
		}
	}
	// naming is the condition that the column col holds one of the
	// references of the lines' Provider, read through the primary key of
	// the lines and the (provider, provider_ref) index of the refunds: each
	// Provider with each reference of the lines, and when the lines are of
	// several Providers, only its own references kept. (An OR of each
	// Provider's own would have SQLite scan the index.)
	var all []string
	for _, p := range providers {
		all = append(all, refs[p]...)
	}
	naming := func(col string) (string, []any) {
		cond := "provider IN (?) AND " + col + " IN (?)"
		args := []any{bun.List(providers), bun.List(all)}
		if len(providers) == 1 {
			return cond, args
		}
		var b strings.Builder
		for i, p := range providers {
			if i > 0 {
				b.WriteString(" OR ")
			}
			b.WriteString("(provider = ? AND " + col + " IN (?))")
			args = append(args, p, bun.List(refs[p]))
		}
		return cond + " AND (" + b.String() + ")", args
	}
	insert := t.db.NewInsert().Model(&rows).On("CONFLICT DO NOTHING")
	cond, args := naming("provider_ref")
	mark := t.db.NewUpdate().Table("paykit_refunds").Set("in_settlement = TRUE").
		Where("NOT in_settlement AND provider_ref <> ''").Where(cond, args...)
	cond, args = naming("reference")
	return insert, mark, t.db.NewSelect().Model(held).Where(cond, args...)
}

// RecordSettledLines implements paykit.Tx in three statements whatever the
// number of lines (see settledLinesQueries). In a batched transaction the
// insert and the update go with the select, in one round trip.
func (t tx) RecordSettledLines(ctx context.Context, lines []paykit.SettledLine) ([]paykit.SettledLine, error) {
	if len(lines) == 0 {
		return []paykit.SettledLine{}, nil
	}
	var held []settledLineRow
	insert, mark, sel := t.settledLinesQueries(lines, &held)
	if t.b != nil {
		t.b.hold(insert.String())
		t.b.hold(mark.String())
	} else {
		if _, err := insert.Exec(ctx); err != nil {
			return nil, mapError("record settled lines", err)
		}
		if _, err := mark.Exec(ctx); err != nil {
			return nil, mapError("record settled lines", err)
		}
	}
	if err := sel.Scan(ctx); err != nil {
		return nil, mapError("record settled lines", err)
	}
	byKey := make(map[lineKey]*settledLineRow, len(held))
	for i := range held {
		r := &held[i]
		byKey[lineKey{r.Provider, r.Type, r.Reference}] = r
	}
	out := make([]paykit.SettledLine, len(lines))
	for i, l := range lines {
		r := byKey[lineKey{l.Provider, l.Type, l.Reference}]
		if r == nil { // lines are never deleted
			return nil, fmt.Errorf("sqlstore: record settled lines: no record holds %s %s of %s", l.Type, l.Reference, l.Provider)
		}
		out[i] = r.line()
	}
	return out, nil
}

// reconciliationRunRow is a row of paykit_reconciliation_runs.
type reconciliationRunRow struct {
	bun.BaseModel `bun:"table:paykit_reconciliation_runs"`

	ID         string    `bun:"id,pk"`
	Provider   string    `bun:"provider"`
	Batch      string    `bun:"batch"`
	Lines      int       `bun:"lines"`
	Matched    int       `bun:"matched"`
	Breaks     int       `bun:"breaks"`
	StartedAt  time.Time `bun:"started_at"`
	FinishedAt time.Time `bun:"finished_at"`
}

func toRunRow(r *paykit.ReconciliationRun) *reconciliationRunRow {
	return &reconciliationRunRow{ID: r.ID, Provider: r.Provider, Batch: r.Batch, Lines: r.Lines, Matched: r.Matched,
		Breaks: r.Breaks, StartedAt: r.StartedAt.UTC(), FinishedAt: r.FinishedAt.UTC()}
}

func (r *reconciliationRunRow) run() paykit.ReconciliationRun {
	return paykit.ReconciliationRun{ID: r.ID, Provider: r.Provider, Batch: r.Batch, Lines: r.Lines, Matched: r.Matched,
		Breaks: r.Breaks, StartedAt: r.StartedAt.UTC(), FinishedAt: r.FinishedAt.UTC()}
}

// CreateReconciliationRun implements paykit.Tx.
func (t tx) CreateReconciliationRun(ctx context.Context, r *paykit.ReconciliationRun) error {
	return t.insert(ctx, "paykit_reconciliation_runs", toRunRow(r), uniqueKey{"id", "id = ?", []any{r.ID}})
}

// newestRunsFirst orders q by (started_at, id) descending, strictly after
// pos, at most limit (0: all).
func newestRunsFirst(q *bun.SelectQuery, pos *paykit.Position, limit int) *bun.SelectQuery {
	if pos != nil {
		q = q.Where("(started_at, id) < (?, ?)", pos.CreatedAt.UTC(), pos.ID)
	}
	q = q.OrderExpr("started_at DESC, id DESC")
	if limit > 0 {
		q = q.Limit(int64(limit))
	}
	return q
}

// LastReconciliationRun implements paykit.Tx.
func (t tx) LastReconciliationRun(ctx context.Context, provider string) (*paykit.ReconciliationRun, error) {
	var row reconciliationRunRow
	if err := newestRunsFirst(t.db.NewSelect().Model(&row).Where("provider = ?", provider), nil, 1).Scan(ctx); err != nil {
		return nil, mapError("last reconciliation run", err)
	}
	r := row.run()
	return &r, nil
}

// listRunsQuery selects one keyset page of q into rows.
func (t tx) listRunsQuery(rows *[]reconciliationRunRow, q paykit.ListQuery[paykit.RunListParams]) *bun.SelectQuery {
	sel := t.db.NewSelect().Model(rows)
	if q.Filter.Provider != "" {
		sel = sel.Where("provider = ?", q.Filter.Provider)
	}
	return newestRunsFirst(sel, q.After, q.Limit)
}

// ListReconciliationRuns implements paykit.Tx.
func (t tx) ListReconciliationRuns(ctx context.Context, q paykit.ListQuery[paykit.RunListParams]) ([]paykit.ReconciliationRun, error) {
	var rows []reconciliationRunRow
	if err := t.listRunsQuery(&rows, q).Scan(ctx); err != nil {
		return nil, mapError("list reconciliation runs", err)
	}
	out := make([]paykit.ReconciliationRun, len(rows))
	for i := range rows {
		out[i] = rows[i].run()
	}
	return out, nil
}

// reconciliationBreakRow is a row of paykit_reconciliation_breaks.
// Expected and Reported are NULL in their three columns when absent.
type reconciliationBreakRow struct {
	bun.BaseModel `bun:"table:paykit_reconciliation_breaks"`

	ID               string     `bun:"id,pk"`
	Type             string     `bun:"type"`
	Status           string     `bun:"status"`
	Provider         string     `bun:"provider"`
	MerchantID       string     `bun:"merchant_id"`
	Environment      string     `bun:"environment"`
	Source           string     `bun:"source"`
	LineType         string     `bun:"line_type"`
	Reference        string     `bun:"reference"`
	Batch            string     `bun:"batch"`
	ExpectedAmount   *int64     `bun:"expected_amount"`
	ExpectedFee      *int64     `bun:"expected_fee"`
	ExpectedCurrency *string    `bun:"expected_currency"`
	ReportedAmount   *int64     `bun:"reported_amount"`
	ReportedFee      *int64     `bun:"reported_fee"`
	ReportedCurrency *string    `bun:"reported_currency"`
	Resolution       string     `bun:"resolution"`
	Note             string     `bun:"note"`
	CreatedAt        time.Time  `bun:"created_at"`
	ResolvedAt       *time.Time `bun:"resolved_at"`
	Version          int64      `bun:"version"`
}

// amountColumns are a's three columns; all nil when a is.
func amountColumns(a *paykit.SettlementAmounts) (amount, fee *int64, currency *string) {
	if a == nil {
		return nil, nil, nil
	}
	return &a.Amount, &a.Fee, &a.Currency
}

// amountsOf is the SettlementAmounts of three columns: nil when amount is
// NULL.
func amountsOf(amount, fee *int64, currency *string) *paykit.SettlementAmounts {
	if amount == nil {
		return nil
	}
	a := paykit.SettlementAmounts{Amount: *amount}
	if fee != nil {
		a.Fee = *fee
	}
	if currency != nil {
		a.Currency = *currency
	}
	return &a
}

func toBreakRow(b *paykit.ReconciliationBreak) *reconciliationBreakRow {
	r := &reconciliationBreakRow{
		ID: b.ID, Type: string(b.Type), Status: string(b.Status), Provider: b.Provider, MerchantID: b.MerchantID,
		Environment: string(b.Environment), Source: b.Source, LineType: b.LineType, Reference: b.Reference,
		Batch: b.Batch, Resolution: string(b.Resolution), Note: b.Note, CreatedAt: b.CreatedAt.UTC(),
		ResolvedAt: utcPtr(b.ResolvedAt), Version: b.Version,
	}
	r.ExpectedAmount, r.ExpectedFee, r.ExpectedCurrency = amountColumns(b.Expected)
	r.ReportedAmount, r.ReportedFee, r.ReportedCurrency = amountColumns(b.Reported)
	return r
}

func (r *reconciliationBreakRow) reconciliationBreak() paykit.ReconciliationBreak {
	return paykit.ReconciliationBreak{
		ID: r.ID, Type: paykit.BreakType(r.Type), Status: paykit.BreakStatus(r.Status), Provider: r.Provider,
		MerchantID: r.MerchantID, Environment: paykit.Environment(r.Environment), Source: r.Source,
		LineType: r.LineType, Reference: r.Reference, Batch: r.Batch,
		Expected:   amountsOf(r.ExpectedAmount, r.ExpectedFee, r.ExpectedCurrency),
		Reported:   amountsOf(r.ReportedAmount, r.ReportedFee, r.ReportedCurrency),
		Resolution: paykit.BreakResolution(r.Resolution), Note: r.Note, CreatedAt: r.CreatedAt.UTC(),
		ResolvedAt: utcPtr(r.ResolvedAt), Version: r.Version,
	}
}

func breaksOf(rows []reconciliationBreakRow) []paykit.ReconciliationBreak {
	out := make([]paykit.ReconciliationBreak, len(rows))
	for i := range rows {
		out[i] = rows[i].reconciliationBreak()
	}
	return out
}

// CreateReconciliationBreak implements paykit.Tx.
func (t tx) CreateReconciliationBreak(ctx context.Context, b *paykit.ReconciliationBreak) error {
	return t.insert(ctx, "paykit_reconciliation_breaks", toBreakRow(b), uniqueKey{"id", "id = ?", []any{b.ID}})
}

// GetReconciliationBreak implements paykit.Tx.
func (t tx) GetReconciliationBreak(ctx context.Context, id string) (*paykit.ReconciliationBreak, error) {
	var row reconciliationBreakRow
	if err := t.db.NewSelect().Model(&row).Where("id = ?", id).Scan(ctx); err != nil {
		return nil, mapError("get reconciliation break", err)
	}
	b := row.reconciliationBreak()
	return &b, nil
}

// UpdateReconciliationBreak implements paykit.Tx.
func (t tx) UpdateReconciliationBreak(ctx context.Context, b *paykit.ReconciliationBreak) error {
	row := toBreakRow(b)
	row.Version++
	err := t.versionedUpdate(ctx, "update reconciliation break", func() *bun.UpdateQuery {
		return t.db.NewUpdate().Model(row).Where("id = ?", b.ID).Where("version = ?", b.Version)
	}, func() *bun.SelectQuery {
		return t.db.NewSelect().Table("paykit_reconciliation_breaks").Where("id = ?", b.ID)
	}, row)
	if err == nil {
		b.Version = row.Version
	}
	return err
}

// listBreaksQuery selects one keyset page of q into rows.
func (t tx) listBreaksQuery(rows *[]reconciliationBreakRow, q paykit.ListQuery[paykit.BreakListParams]) *bun.SelectQuery {
	f := q.Filter
	sel := t.db.NewSelect().Model(rows)
	if f.Status != "" {
		sel = sel.Where("status = ?", f.Status)
	}
	if f.Type != "" {
		sel = sel.Where("type = ?", f.Type)
	}
	if f.MerchantID != "" {
		sel = sel.Where("merchant_id = ?", f.MerchantID)
	}
	if f.Provider != "" {
		sel = sel.Where("provider = ?", f.Provider)
	}
	return newestFirst(sel, q.After, q.Limit)
}

// ListReconciliationBreaks implements paykit.Tx.
func (t tx) ListReconciliationBreaks(ctx context.Context, q paykit.ListQuery[paykit.BreakListParams]) ([]paykit.ReconciliationBreak, error) {
	var rows []reconciliationBreakRow
	if err := t.listBreaksQuery(&rows, q).Scan(ctx); err != nil {
		return nil, mapError("list reconciliation breaks", err)
	}
	return breaksOf(rows), nil
}

// openBreak is the condition that finds the open breaks of a Provider,
// type and reference through the partial index of open breaks.
const openBreak = "status = 'open' AND provider = ? AND type = ? AND reference = ?"

// findOpenBreakQuery selects into row the oldest open break of provider,
// typ and reference.
func (t tx) findOpenBreakQuery(row *reconciliationBreakRow, provider string, typ paykit.BreakType, reference string) *bun.SelectQuery {
	return t.db.NewSelect().Model(row).Where(openBreak, provider, typ, reference).OrderExpr("created_at, id").Limit(1)
}

// FindOpenBreak implements paykit.Tx.
func (t tx) FindOpenBreak(ctx context.Context, provider string, typ paykit.BreakType, reference string) (*paykit.ReconciliationBreak, error) {
	var row reconciliationBreakRow
	if err := t.findOpenBreakQuery(&row, provider, typ, reference).Scan(ctx); err != nil {
		return nil, mapError("find open break", err)
	}
	b := row.reconciliationBreak()
	return &b, nil
}

// countOpenBreaksQuery counts the open breaks by type, reading the open
// ones only (through an index of theirs).
func (t tx) countOpenBreaksQuery() *bun.SelectQuery {
	return t.db.NewSelect().Table("paykit_reconciliation_breaks").ColumnExpr("type, count(*) AS count").
		Where("status = 'open'").Group("type")
}

// CountOpenBreaks implements paykit.Tx.
func (t tx) CountOpenBreaks(ctx context.Context) (map[paykit.BreakType]int, error) {
	var rows []struct {
		Type  string `bun:"type"`
		Count int    `bun:"count"`
	}
	if err := t.countOpenBreaksQuery().Scan(ctx, &rows); err != nil {
		return nil, mapError("count open breaks", err)
	}
	out := make(map[paykit.BreakType]int, len(rows))
	for _, r := range rows {
		out[paykit.BreakType(r.Type)] = r.Count
	}
	return out, nil
}

// unsettledRow is a row of ListUnsettled's query.
type unsettledRow struct {
	Object      string    `bun:"object"`
	MerchantID  string    `bun:"merchant_id"`
	Environment string    `bun:"environment"`
	ID          string    `bun:"id"`
	Reference   string    `bun:"reference"`
	Amount      int64     `bun:"amount"`
	Fee         int64     `bun:"fee"`
	Currency    string    `bun:"currency"`
	CompletedAt time.Time `bun:"completed_at"`
}

// unsettledSQL is a member of ListUnsettled's query: payments or refunds
// read oldest first from its partial index of the succeeded records not
// settled (payment_intents_unsettled_idx, paykit_refunds_unsettled_idx),
// skipping those a line names or a missing_in_report break (open or
// resolved) holds,
// and the two merged. %[1]s is the object, %[2]s the table, %[3]s the
// amount and fee, %[4]s the LIMIT, %[5]s the table's partial index's
// condition.
const unsettledSQL = `SELECT '%[1]s' AS object, merchant_id, environment, id, provider_ref AS reference, %[3]s,
		currency, completed_at
	FROM %[2]s AS u
	WHERE provider = ? AND %[5]s AND completed_at < ? AND provider_ref <> ''
		AND NOT EXISTS (SELECT 1 FROM paykit_settled_lines AS l
			WHERE l.provider = u.provider AND l.reference = u.provider_ref)
		AND NOT EXISTS (SELECT 1 FROM paykit_reconciliation_breaks AS b
			WHERE b.type = 'missing_in_report' AND b.provider = u.provider AND b.reference = u.provider_ref)
	ORDER BY completed_at, id%[4]s`

// unsettledQuery is the query of q.
func (t tx) unsettledQuery(q paykit.UnsettledQuery) *bun.RawQuery {
	limit := ""
	if q.Limit > 0 {
		limit = " LIMIT ?"
	}
	member := func(object, table, cond, money string) string {
		return "SELECT * FROM (" + fmt.Sprintf(unsettledSQL, object, table, money, limit, cond) + ") AS page"
	}
	query := member("payment_intent", "payment_intents", "status = 'succeeded' AND settled_at IS NULL", "amount, fee") +
		"\nUNION ALL\n" +
		member("refund", "paykit_refunds", "status = 'succeeded' AND NOT in_settlement", "-amount AS amount, 0 AS fee") +
		"\nORDER BY completed_at, id" + limit
	before := q.Before.UTC()
	args := []any{q.Provider, before}
	if q.Limit > 0 {
		args = append(args, q.Limit, q.Provider, before, q.Limit, q.Limit)
	} else {
		args = append(args, q.Provider, before)
	}
	return t.db.NewRaw(query, args...)
}

// ListUnsettled implements paykit.Tx.
func (t tx) ListUnsettled(ctx context.Context, q paykit.UnsettledQuery) ([]paykit.Unsettled, error) {
	var rows []unsettledRow
	if err := t.unsettledQuery(q).Scan(ctx, &rows); err != nil {
		return nil, mapError("list unsettled", err)
	}
	out := make([]paykit.Unsettled, len(rows))
	for i, r := range rows {
		out[i] = paykit.Unsettled{Object: r.Object, Scope: paykit.Scope{MerchantID: r.MerchantID, Environment: paykit.Environment(r.Environment)},
			ID: r.ID, Reference: r.Reference, Amount: r.Amount, Fee: r.Fee, Currency: r.Currency, CompletedAt: r.CompletedAt.UTC()}
	}
	return out, nil
}
