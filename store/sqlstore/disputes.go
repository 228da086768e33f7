package sqlstore

import (
	"context"
	"time"

	"github.com/uptrace/bun"

	"github.com/paykit/paykit"
)

// disputeRow is a row of paykit_disputes.
type disputeRow struct {
	bun.BaseModel `bun:"table:paykit_disputes"`

	ID                  string     `bun:"id,pk"`
	MerchantID          string     `bun:"merchant_id"`
	Environment         string     `bun:"environment"`
	PaymentIntentID     string     `bun:"payment_intent_id"`
	Amount              int64      `bun:"amount"`
	Currency            string     `bun:"currency"`
	Fee                 int64      `bun:"fee"`
	Reason              string     `bun:"reason"`
	Status              string     `bun:"status"`
	Evidence            string     `bun:"evidence"`
	EvidenceSubmittedAt *time.Time `bun:"evidence_submitted_at"`
	EvidenceDueBy       time.Time  `bun:"evidence_due_by"`
	Provider            string     `bun:"provider"`
	ProviderRef         string     `bun:"provider_ref"`
	ClosedAt            *time.Time `bun:"closed_at"`
	CreatedAt           time.Time  `bun:"created_at"`
	UpdatedAt           time.Time  `bun:"updated_at"`
	Version             int64      `bun:"version"`
}

func toDisputeRow(d *paykit.Dispute) *disputeRow {
	return &disputeRow{
		ID: d.ID, MerchantID: d.MerchantID, Environment: string(d.Environment), PaymentIntentID: d.PaymentIntentID,
		Amount: d.Amount, Currency: d.Currency, Fee: d.Fee, Reason: string(d.Reason), Status: string(d.Status),
		Evidence: d.Evidence, EvidenceSubmittedAt: utcPtr(d.EvidenceSubmittedAt), EvidenceDueBy: d.EvidenceDueBy.UTC(),
		Provider: d.Provider, ProviderRef: d.ProviderRef, ClosedAt: utcPtr(d.ClosedAt),
		CreatedAt: d.CreatedAt.UTC(), UpdatedAt: d.UpdatedAt.UTC(), Version: d.Version,
	}
}

func (r *disputeRow) dispute() paykit.Dispute {
	return paykit.Dispute{
		ID: r.ID, MerchantID: r.MerchantID, Environment: paykit.Environment(r.Environment),
		PaymentIntentID: r.PaymentIntentID, Amount: r.Amount, Currency: r.Currency, Fee: r.Fee,
		Reason: paykit.DisputeReason(r.Reason), Status: paykit.DisputeStatus(r.Status), Evidence: r.Evidence,
		EvidenceSubmittedAt: utcPtr(r.EvidenceSubmittedAt), EvidenceDueBy: r.EvidenceDueBy.UTC(),
		Provider: r.Provider, ProviderRef: r.ProviderRef, ClosedAt: utcPtr(r.ClosedAt),
		CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC(), Version: r.Version,
	}
}

// disputeByProviderRef is the condition that finds the dispute provider
// knows as ref, through the (provider, provider_ref) unique index (its
// predicate, a non-empty provider_ref, is repeated so that both dialects
// use it).
const disputeByProviderRef = "provider = ? AND provider_ref = ? AND provider_ref <> ''"

// CreateDispute implements paykit.Tx.
func (t tx) CreateDispute(ctx context.Context, d *paykit.Dispute) error {
	return t.insert(ctx, "paykit_disputes", toDisputeRow(d),
		uniqueKey{"id", "id = ?", []any{d.ID}},
		uniqueKey{"provider_ref", disputeByProviderRef, []any{d.Provider, d.ProviderRef}})
}

// GetDispute implements paykit.Tx.
func (t tx) GetDispute(ctx context.Context, scope paykit.Scope, id string) (*paykit.Dispute, error) {
	var row disputeRow
	if err := ofScope(t.db.NewSelect().Model(&row).Where("id = ?", id), scope).Scan(ctx); err != nil {
		return nil, mapError("get dispute", err)
	}
	d := row.dispute()
	return &d, nil
}

// FindDisputeByProviderRef implements paykit.Tx.
func (t tx) FindDisputeByProviderRef(ctx context.Context, provider, ref string) (*paykit.Dispute, error) {
	if ref == "" {
		return nil, paykit.ErrNotFound
	}
	var row disputeRow
	if err := t.db.NewSelect().Model(&row).Where(disputeByProviderRef, provider, ref).Scan(ctx); err != nil {
		return nil, mapError("find dispute by provider ref", err)
	}
	d := row.dispute()
	return &d, nil
}

// UpdateDispute implements paykit.Tx.
func (t tx) UpdateDispute(ctx context.Context, d *paykit.Dispute) error {
	row := toDisputeRow(d)
	row.Version++
	err := t.updateIntent(ctx, "update dispute", "paykit_disputes", row, d.ID, d.Scope(), d.Version)
	if err == nil {
		d.Version = row.Version
	}
	return err
}

// listDisputesQuery selects one keyset page of q into rows.
func (t tx) listDisputesQuery(rows *[]disputeRow, q paykit.ListQuery[paykit.DisputeListParams]) *bun.SelectQuery {
	f := q.Filter
	return pagePerValue(t, rows, f.Statuses, q.Limit, func(sel *bun.SelectQuery, statuses []paykit.DisputeStatus) *bun.SelectQuery {
		sel = inScope(sel, q.Scope)
		if f.PaymentIntent != "" {
			sel = sel.Where("payment_intent_id = ?", f.PaymentIntent)
		}
		sel = filterIntents(sel, statuses, f.Currency, "", "", f.CreatedAfter, f.CreatedBefore)
		return newestFirst(sel, q.After, q.Limit)
	})
}

// ListDisputes implements paykit.Tx.
func (t tx) ListDisputes(ctx context.Context, q paykit.ListQuery[paykit.DisputeListParams]) ([]paykit.Dispute, error) {
	var rows []disputeRow
	if err := t.listDisputesQuery(&rows, q).Scan(ctx); err != nil {
		return nil, mapError("list disputes", err)
	}
	out := make([]paykit.Dispute, len(rows))
	for i := range rows {
		out[i] = rows[i].dispute()
	}
	return out, nil
}
