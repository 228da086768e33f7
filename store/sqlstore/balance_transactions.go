package sqlstore

import (
	"context"
	"time"

	"github.com/uptrace/bun"

	"github.com/paykit/paykit"
)

// balanceTxnRow is a row of paykit_balance_transactions.
type balanceTxnRow struct {
	bun.BaseModel `bun:"table:paykit_balance_transactions"`

	ID          string    `bun:"id,pk"`
	MerchantID  string    `bun:"merchant_id"`
	Environment string    `bun:"environment"`
	Type        string    `bun:"type"`
	Source      string    `bun:"source"`
	Amount      int64     `bun:"amount"`
	Fee         int64     `bun:"fee"`
	Net         int64     `bun:"net"`
	Currency    string    `bun:"currency"`
	Status      string    `bun:"status"`
	AvailableOn time.Time `bun:"available_on"`
	CreatedAt   time.Time `bun:"created_at"`
	UpdatedAt   time.Time `bun:"updated_at"`
	Version     int64     `bun:"version"`
}

func toBalanceTxnRow(b *paykit.BalanceTransaction) *balanceTxnRow {
	return &balanceTxnRow{
		ID: b.ID, MerchantID: b.MerchantID, Environment: string(b.Environment), Type: string(b.Type),
		Source: b.Source, Amount: b.Amount, Fee: b.Fee, Net: b.Net, Currency: b.Currency, Status: string(b.Status),
		AvailableOn: b.AvailableOn.UTC(), CreatedAt: b.CreatedAt.UTC(), UpdatedAt: b.UpdatedAt.UTC(), Version: b.Version,
	}
}

func (r *balanceTxnRow) balanceTxn() paykit.BalanceTransaction {
	return paykit.BalanceTransaction{
		ID: r.ID, MerchantID: r.MerchantID, Environment: paykit.Environment(r.Environment),
		Type: paykit.BalanceTransactionType(r.Type), Source: r.Source, Amount: r.Amount, Fee: r.Fee, Net: r.Net,
		Currency: r.Currency, Status: paykit.BalanceTransactionStatus(r.Status), AvailableOn: r.AvailableOn.UTC(),
		CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC(), Version: r.Version,
	}
}

// CreateBalanceTransaction implements paykit.Tx.
func (t tx) CreateBalanceTransaction(ctx context.Context, b *paykit.BalanceTransaction) error {
	return t.insert(ctx, "paykit_balance_transactions", toBalanceTxnRow(b), uniqueKey{"id", "id = ?", []any{b.ID}})
}

// GetBalanceTransaction implements paykit.Tx.
func (t tx) GetBalanceTransaction(ctx context.Context, scope paykit.Scope, id string) (*paykit.BalanceTransaction, error) {
	var row balanceTxnRow
	if err := ofScope(t.db.NewSelect().Model(&row).Where("id = ?", id), scope).Scan(ctx); err != nil {
		return nil, mapError("get balance transaction", err)
	}
	b := row.balanceTxn()
	return &b, nil
}

// UpdateBalanceTransaction implements paykit.Tx.
func (t tx) UpdateBalanceTransaction(ctx context.Context, b *paykit.BalanceTransaction) error {
	row := toBalanceTxnRow(b)
	row.Version++
	err := t.updateIntent(ctx, "update balance transaction", "paykit_balance_transactions", row, b.ID, b.Scope(), b.Version)
	if err == nil {
		b.Version = row.Version
	}
	return err
}

// listBalanceTxnsQuery selects one keyset page of q into rows. Of the two
// filters that take several values, the types' are read one by one when
// there are several, else the statuses'.
func (t tx) listBalanceTxnsQuery(rows *[]balanceTxnRow, q paykit.ListQuery[paykit.BalanceTransactionListParams]) *bun.SelectQuery {
	f := q.Filter
	page := func(sel *bun.SelectQuery, types []paykit.BalanceTransactionType, statuses []paykit.BalanceTransactionStatus) *bun.SelectQuery {
		sel = inScope(sel, q.Scope)
		if len(types) > 0 {
			sel = sel.Where("type IN (?)", bun.List(types))
		}
		if f.Source != "" {
			sel = sel.Where("source = ?", f.Source)
		}
		sel = filterIntents(sel, statuses, f.Currency, "", "", f.CreatedAfter, f.CreatedBefore)
		return newestFirst(sel, q.After, q.Limit)
	}
	if len(f.Types) > 1 || len(f.Statuses) < 2 {
		return pagePerValue(t, rows, f.Types, q.Limit, func(sel *bun.SelectQuery, types []paykit.BalanceTransactionType) *bun.SelectQuery {
			return page(sel, types, f.Statuses)
		})
	}
	return pagePerValue(t, rows, f.Statuses, q.Limit, func(sel *bun.SelectQuery, statuses []paykit.BalanceTransactionStatus) *bun.SelectQuery {
		return page(sel, f.Types, statuses)
	})
}

// ListBalanceTransactions implements paykit.Tx.
func (t tx) ListBalanceTransactions(ctx context.Context, q paykit.ListQuery[paykit.BalanceTransactionListParams]) ([]paykit.BalanceTransaction, error) {
	var rows []balanceTxnRow
	if err := t.listBalanceTxnsQuery(&rows, q).Scan(ctx); err != nil {
		return nil, mapError("list balance transactions", err)
	}
	out := make([]paykit.BalanceTransaction, len(rows))
	for i := range rows {
		out[i] = rows[i].balanceTxn()
	}
	return out, nil
}
