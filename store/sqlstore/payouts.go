package sqlstore

import (
	"context"
	"time"

	"github.com/uptrace/bun"

	"github.com/paykit/paykit"
)

// payoutIntentRow is a row of payout_intents.
type payoutIntentRow struct {
	bun.BaseModel `bun:"table:payout_intents"`

	ID                string     `bun:"id,pk"`
	MerchantID        string     `bun:"merchant_id"`
	Environment       string     `bun:"environment"`
	Status            string     `bun:"status"`
	ApprovalPending   bool       `bun:"approval_pending"`
	Amount            int64      `bun:"amount"`
	Currency          string     `bun:"currency"`
	Country           string     `bun:"country"`
	MerchantReference string     `bun:"merchant_reference"`
	RecipientType     string     `bun:"recipient_type"`
	BankCode          string     `bun:"bank_code"`
	ProviderBankCode  string     `bun:"provider_bank_code"`
	HolderName        string     `bun:"holder_name"`
	HolderNameTH      string     `bun:"holder_name_th"`
	AccountLast4      string     `bun:"account_last4"`
	AccountCiphertext []byte     `bun:"account_ciphertext"`
	AccountKeyID      string     `bun:"account_key_id"`
	ReservedAmount    int64      `bun:"reserved_amount"`
	CompletedAmount   int64      `bun:"completed_amount"`
	ReturnedAmount    int64      `bun:"returned_amount"`
	FailureCode       string     `bun:"failure_code"`
	FailureMessage    string     `bun:"failure_message"`
	CancelReason      string     `bun:"cancel_reason"`
	Provider          string     `bun:"provider"`
	ProviderRef       string     `bun:"provider_ref"`
	Attempt           string     `bun:"attempt"`
	CancelRequestedAt *time.Time `bun:"cancel_requested_at"`
	ApprovalExpiresAt *time.Time `bun:"approval_expires_at"`
	CreatedAt         time.Time  `bun:"created_at"`
	UpdatedAt         time.Time  `bun:"updated_at"`
	Version           int64      `bun:"version"`
}

func toPayoutIntentRow(p *paykit.PayoutIntent) *payoutIntentRow {
	return &payoutIntentRow{
		ID: p.ID, MerchantID: p.MerchantID, Environment: string(p.Environment), Status: string(p.Status),
		ApprovalPending: p.ApprovalPending, Amount: p.Amount, Currency: p.Currency, Country: p.Country,
		MerchantReference: p.MerchantReference, RecipientType: p.RecipientType, BankCode: p.BankCode, ProviderBankCode: p.ProviderBankCode,
		HolderName: p.HolderName, HolderNameTH: p.HolderNameTH, AccountLast4: p.AccountLast4,
		AccountCiphertext: p.AccountCiphertext, AccountKeyID: p.AccountKeyID, ReservedAmount: p.ReservedAmount,
		CompletedAmount: p.CompletedAmount, ReturnedAmount: p.ReturnedAmount, FailureCode: p.FailureCode,
		FailureMessage: p.FailureMessage, CancelReason: p.CancelReason, Provider: p.Provider,
		ProviderRef: p.ProviderRef, Attempt: string(p.Attempt), CancelRequestedAt: utcPtr(p.CancelRequestedAt),
		ApprovalExpiresAt: utcPtr(p.ApprovalExpiresAt), CreatedAt: p.CreatedAt.UTC(), UpdatedAt: p.UpdatedAt.UTC(),
		Version: p.Version,
	}
}

func (r *payoutIntentRow) payoutIntent() paykit.PayoutIntent {
	return paykit.PayoutIntent{
		ID: r.ID, MerchantID: r.MerchantID, Environment: paykit.Environment(r.Environment),
		Status: paykit.PayoutStatus(r.Status), ApprovalPending: r.ApprovalPending, Amount: r.Amount,
		Currency: r.Currency, Country: r.Country, MerchantReference: r.MerchantReference,
		RecipientType: r.RecipientType, BankCode: r.BankCode, ProviderBankCode: r.ProviderBankCode, HolderName: r.HolderName,
		HolderNameTH: r.HolderNameTH, AccountLast4: r.AccountLast4, AccountCiphertext: r.AccountCiphertext,
		AccountKeyID: r.AccountKeyID, ReservedAmount: r.ReservedAmount, CompletedAmount: r.CompletedAmount,
		ReturnedAmount: r.ReturnedAmount, FailureCode: r.FailureCode, FailureMessage: r.FailureMessage,
		CancelReason:      r.CancelReason,
		ProviderAttempt:   paykit.ProviderAttempt{Provider: r.Provider, ProviderRef: r.ProviderRef, Attempt: paykit.AttemptState(r.Attempt)},
		CancelRequestedAt: utcPtr(r.CancelRequestedAt),
		ApprovalExpiresAt: utcPtr(r.ApprovalExpiresAt), CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC(),
		Version: r.Version,
	}
}

// CreatePayoutIntent implements paykit.Tx.
func (t tx) CreatePayoutIntent(ctx context.Context, p *paykit.PayoutIntent) error {
	return t.insert(ctx, "payout_intents", toPayoutIntentRow(p), intentKeys(p.ID, p.Scope(), p.MerchantReference)...)
}

// GetPayoutIntent implements paykit.Tx.
func (t tx) GetPayoutIntent(ctx context.Context, scope paykit.Scope, id string) (*paykit.PayoutIntent, error) {
	return t.getPayoutIntent(ctx, "get payout intent", &scope, id)
}

// FindPayoutIntent implements paykit.Tx.
func (t tx) FindPayoutIntent(ctx context.Context, id string) (*paykit.PayoutIntent, error) {
	return t.getPayoutIntent(ctx, "find payout intent", nil, id)
}

// getPayoutIntent reads the payout id of scope, or of any scope when scope
// is nil.
func (t tx) getPayoutIntent(ctx context.Context, op string, scope *paykit.Scope, id string) (*paykit.PayoutIntent, error) {
	var row payoutIntentRow
	sel := t.db.NewSelect().Model(&row).Where("id = ?", id)
	if scope != nil {
		sel = ofScope(sel, *scope)
	}
	if err := sel.Scan(ctx); err != nil {
		return nil, mapError(op, err)
	}
	p := row.payoutIntent()
	return &p, nil
}

// UpdatePayoutIntent implements paykit.Tx.
func (t tx) UpdatePayoutIntent(ctx context.Context, p *paykit.PayoutIntent) error {
	row := toPayoutIntentRow(p)
	row.Version++
	err := t.updateIntent(ctx, "update payout intent", "payout_intents", row, p.ID, p.Scope(), p.Version)
	if err == nil {
		p.Version = row.Version
	}
	return err
}

// listPayoutIntentsQuery selects one keyset page of q into rows. The
// approval queue reads the partial index payout_intents_approval_list_idx,
// whose condition it repeats word for word (SQLite needs that).
func (t tx) listPayoutIntentsQuery(rows *[]payoutIntentRow, q paykit.PayoutQuery) *bun.SelectQuery {
	f := q.Filter
	return pagePerValue(t, rows, f.Statuses, q.Limit, func(sel *bun.SelectQuery, statuses []paykit.PayoutStatus) *bun.SelectQuery {
		if !q.AllTenants {
			sel = inScope(sel, q.Scope)
		}
		if q.ApprovalPending {
			sel = sel.Where("approval_pending")
		}
		sel = filterIntents(sel, statuses, f.Currency, f.Country, f.MerchantReference, f.CreatedAfter, f.CreatedBefore)
		return newestFirst(sel, q.After, q.Limit)
	})
}

// ListPayoutIntents implements paykit.Tx.
func (t tx) ListPayoutIntents(ctx context.Context, q paykit.PayoutQuery) ([]paykit.PayoutIntent, error) {
	var rows []payoutIntentRow
	if err := t.listPayoutIntentsQuery(&rows, q).Scan(ctx); err != nil {
		return nil, mapError("list payout intents", err)
	}
	out := make([]paykit.PayoutIntent, len(rows))
	for i := range rows {
		out[i] = rows[i].payoutIntent()
	}
	return out, nil
}
