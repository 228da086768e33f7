package sqlstore

import (
	"context"
	"time"

	"github.com/uptrace/bun"

	"github.com/paykit/paykit"
)

// refundRow is a row of paykit_refunds.
type refundRow struct {
	bun.BaseModel `bun:"table:paykit_refunds"`

	ID                string     `bun:"id,pk"`
	MerchantID        string     `bun:"merchant_id"`
	Environment       string     `bun:"environment"`
	PaymentIntentID   string     `bun:"payment_intent_id"`
	Amount            int64      `bun:"amount"`
	Currency          string     `bun:"currency"`
	Status            string     `bun:"status"`
	Reason            string     `bun:"reason"`
	MerchantReference string     `bun:"merchant_reference"`
	FailureCode       string     `bun:"failure_code"`
	Provider          string     `bun:"provider"`
	ProviderRef       string     `bun:"provider_ref"`
	Attempt           string     `bun:"attempt"`
	CompletedAt       *time.Time `bun:"completed_at"`
	CreatedAt         time.Time  `bun:"created_at"`
	UpdatedAt         time.Time  `bun:"updated_at"`
	Version           int64      `bun:"version"`
}

func toRefundRow(r *paykit.Refund) *refundRow {
	return &refundRow{
		ID: r.ID, MerchantID: r.MerchantID, Environment: string(r.Environment), PaymentIntentID: r.PaymentIntentID,
		Amount: r.Amount, Currency: r.Currency, Status: string(r.Status), Reason: r.Reason,
		MerchantReference: r.MerchantReference, FailureCode: r.FailureCode, Provider: r.Provider,
		ProviderRef: r.ProviderRef, Attempt: string(r.Attempt), CompletedAt: utcPtr(r.CompletedAt),
		CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC(), Version: r.Version,
	}
}

func (r *refundRow) refund() paykit.Refund {
	return paykit.Refund{
		ID: r.ID, MerchantID: r.MerchantID, Environment: paykit.Environment(r.Environment),
		PaymentIntentID: r.PaymentIntentID, Amount: r.Amount, Currency: r.Currency,
		Status: paykit.RefundStatus(r.Status), Reason: r.Reason, MerchantReference: r.MerchantReference,
		FailureCode:     r.FailureCode,
		ProviderAttempt: paykit.ProviderAttempt{Provider: r.Provider, ProviderRef: r.ProviderRef, Attempt: paykit.AttemptState(r.Attempt)},
		CompletedAt:     utcPtr(r.CompletedAt),
		CreatedAt:       r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC(), Version: r.Version,
	}
}

// CreateRefund implements paykit.Tx.
func (t tx) CreateRefund(ctx context.Context, r *paykit.Refund) error {
	return t.insert(ctx, "paykit_refunds", toRefundRow(r), intentKeys(r.ID, r.Scope(), r.MerchantReference)...)
}

// GetRefund implements paykit.Tx.
func (t tx) GetRefund(ctx context.Context, scope paykit.Scope, id string) (*paykit.Refund, error) {
	return t.getRefund(ctx, "get refund", &scope, id)
}

// FindRefund implements paykit.Tx.
func (t tx) FindRefund(ctx context.Context, id string) (*paykit.Refund, error) {
	return t.getRefund(ctx, "find refund", nil, id)
}

// getRefund reads the refund id of scope, or of any scope when scope is
// nil.
func (t tx) getRefund(ctx context.Context, op string, scope *paykit.Scope, id string) (*paykit.Refund, error) {
	var row refundRow
	sel := t.db.NewSelect().Model(&row).Where("id = ?", id)
	if scope != nil {
		sel = ofScope(sel, *scope)
	}
	if err := sel.Scan(ctx); err != nil {
		return nil, mapError(op, err)
	}
	r := row.refund()
	return &r, nil
}

// UpdateRefund implements paykit.Tx.
func (t tx) UpdateRefund(ctx context.Context, r *paykit.Refund) error {
	row := toRefundRow(r)
	row.Version++
	err := t.updateIntent(ctx, "update refund", "paykit_refunds", row, r.ID, r.Scope(), r.Version)
	if err == nil {
		r.Version = row.Version
	}
	return err
}

// listRefundsQuery selects one keyset page of q into rows.
func (t tx) listRefundsQuery(rows *[]refundRow, q paykit.ListQuery[paykit.RefundListParams]) *bun.SelectQuery {
	f := q.Filter
	return pagePerValue(t, rows, f.Statuses, q.Limit, func(sel *bun.SelectQuery, statuses []paykit.RefundStatus) *bun.SelectQuery {
		sel = inScope(sel, q.Scope)
		if f.PaymentIntent != "" {
			sel = sel.Where("payment_intent_id = ?", f.PaymentIntent)
		}
		sel = filterIntents(sel, statuses, f.Currency, "", f.MerchantReference, f.CreatedAfter, f.CreatedBefore)
		return newestFirst(sel, q.After, q.Limit)
	})
}

// ListRefunds implements paykit.Tx.
func (t tx) ListRefunds(ctx context.Context, q paykit.ListQuery[paykit.RefundListParams]) ([]paykit.Refund, error) {
	var rows []refundRow
	if err := t.listRefundsQuery(&rows, q).Scan(ctx); err != nil {
		return nil, mapError("list refunds", err)
	}
	out := make([]paykit.Refund, len(rows))
	for i := range rows {
		out[i] = rows[i].refund()
	}
	return out, nil
}
