package sqlstore

import (
	"context"
	"errors"
	"time"

	"github.com/uptrace/bun"

	"github.com/paykit/paykit"
)

// paymentIntentRow is a row of payment_intents. JSON columns hold "" as NULL.
type paymentIntentRow struct {
	bun.BaseModel `bun:"table:payment_intents"`

	ID                   string     `bun:"id,pk"`
	MerchantID           string     `bun:"merchant_id"`
	Environment          string     `bun:"environment"`
	Status               string     `bun:"status"`
	Amount               int64      `bun:"amount"`
	Currency             string     `bun:"currency"`
	Country              string     `bun:"country"`
	MerchantReference    string     `bun:"merchant_reference"`
	PaymentMethod        string     `bun:"payment_method"`
	Customer             string     `bun:"customer,nullzero"`
	PaymentMethodOptions string     `bun:"payment_method_options,nullzero"`
	ReturnURL            string     `bun:"return_url"`
	CheckoutID           string     `bun:"checkout_id"`
	NextAction           string     `bun:"next_action,nullzero"`
	FailureCode          string     `bun:"failure_code"`
	RefundedAmount       int64      `bun:"refunded_amount"`
	RefundPendingAmount  int64      `bun:"refund_pending_amount"`
	Fee                  int64      `bun:"fee"`
	SettledAt            *time.Time `bun:"settled_at"`
	DisputedAmount       int64      `bun:"disputed_amount"`
	OpenDisputes         int        `bun:"open_disputes"`
	Receipt              string     `bun:"receipt,nullzero"`
	Provider             string     `bun:"provider"`
	ProviderOptions      string     `bun:"provider_options,nullzero"`
	ProviderRef          string     `bun:"provider_ref"`
	Attempt              string     `bun:"attempt"`
	ProviderURL          string     `bun:"provider_url"`
	CancelRequestedAt    *time.Time `bun:"cancel_requested_at"`
	ExpiresAt            time.Time  `bun:"expires_at"`
	CompletedAt          *time.Time `bun:"completed_at"`
	CreatedAt            time.Time  `bun:"created_at"`
	UpdatedAt            time.Time  `bun:"updated_at"`
	Version              int64      `bun:"version"`
}

func toPaymentIntentRow(p *paykit.PaymentIntent) (*paymentIntentRow, error) {
	customer, err1 := mapToJSON(p.Customer)
	options, err2 := mapToJSON(p.PaymentMethodOptions)
	next, err3 := encodeNextAction(p.NextAction)
	receipt, err4 := encodeReceipt(p.Receipt)
	provOptions, err5 := mapToJSON(p.ProviderOptions)
	if err := errors.Join(err1, err2, err3, err4, err5); err != nil {
		return nil, err
	}
	return &paymentIntentRow{
		ID: p.ID, MerchantID: p.MerchantID, Environment: string(p.Environment), Status: string(p.Status),
		Amount: p.Amount, Currency: p.Currency, Country: p.Country, MerchantReference: p.MerchantReference,
		PaymentMethod: p.PaymentMethod, Customer: customer, PaymentMethodOptions: options,
		ReturnURL: p.ReturnURL, CheckoutID: p.CheckoutID, NextAction: next, FailureCode: p.FailureCode,
		RefundedAmount: p.RefundedAmount, RefundPendingAmount: p.RefundPendingAmount,
		Fee: p.Fee, SettledAt: utcPtr(p.SettledAt), DisputedAmount: p.DisputedAmount, OpenDisputes: p.OpenDisputes,
		Receipt: receipt, Provider: p.Provider, ProviderOptions: provOptions, ProviderRef: p.ProviderRef,
		Attempt: string(p.Attempt), ProviderURL: p.ProviderURL, CancelRequestedAt: utcPtr(p.CancelRequestedAt),
		ExpiresAt: p.ExpiresAt.UTC(), CompletedAt: utcPtr(p.CompletedAt),
		CreatedAt: p.CreatedAt.UTC(), UpdatedAt: p.UpdatedAt.UTC(), Version: p.Version,
	}, nil
}

func (r *paymentIntentRow) paymentIntent() (paykit.PaymentIntent, error) {
	customer, err1 := fromJSONMap(r.Customer)
	options, err2 := fromJSONMap(r.PaymentMethodOptions)
	next, err3 := decodeNextAction(r.NextAction)
	receipt, err4 := decodeReceipt(r.Receipt)
	provOptions, err5 := fromJSONMap(r.ProviderOptions)
	return paykit.PaymentIntent{
		ID: r.ID, MerchantID: r.MerchantID, Environment: paykit.Environment(r.Environment),
		Status: paykit.PaymentStatus(r.Status), Amount: r.Amount, Currency: r.Currency, Country: r.Country,
		MerchantReference: r.MerchantReference, PaymentMethod: r.PaymentMethod, Customer: customer,
		PaymentMethodOptions: options, ReturnURL: r.ReturnURL, CheckoutID: r.CheckoutID,
		NextAction: next, FailureCode: r.FailureCode, RefundedAmount: r.RefundedAmount, RefundPendingAmount: r.RefundPendingAmount,
		Fee: r.Fee, SettledAt: utcPtr(r.SettledAt), DisputedAmount: r.DisputedAmount, OpenDisputes: r.OpenDisputes,
		Receipt: receipt, ProviderAttempt: paykit.ProviderAttempt{Provider: r.Provider, ProviderOptions: provOptions,
			ProviderRef: r.ProviderRef, Attempt: paykit.AttemptState(r.Attempt), ProviderURL: r.ProviderURL},
		CancelRequestedAt: utcPtr(r.CancelRequestedAt), ExpiresAt: r.ExpiresAt.UTC(), CompletedAt: utcPtr(r.CompletedAt),
		CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC(), Version: r.Version,
	}, errors.Join(err1, err2, err3, err4, err5)
}

// CreatePaymentIntent implements paykit.Tx.
func (t tx) CreatePaymentIntent(ctx context.Context, p *paykit.PaymentIntent) error {
	row, err := toPaymentIntentRow(p)
	if err != nil {
		return mapError("create payment intent", err)
	}
	return t.insert(ctx, "payment_intents", row, intentKeys(p.ID, p.Scope(), p.MerchantReference)...)
}

// GetPaymentIntent implements paykit.Tx.
func (t tx) GetPaymentIntent(ctx context.Context, scope paykit.Scope, id string) (*paykit.PaymentIntent, error) {
	return t.getPaymentIntent(ctx, "get payment intent", &scope, id)
}

// FindPaymentIntent implements paykit.Tx.
func (t tx) FindPaymentIntent(ctx context.Context, id string) (*paykit.PaymentIntent, error) {
	return t.getPaymentIntent(ctx, "find payment intent", nil, id)
}

// getPaymentIntent reads the intent id of scope, or of any scope when
// scope is nil.
func (t tx) getPaymentIntent(ctx context.Context, op string, scope *paykit.Scope, id string) (*paykit.PaymentIntent, error) {
	var row paymentIntentRow
	sel := t.db.NewSelect().Model(&row).Where("id = ?", id)
	if scope != nil {
		sel = ofScope(sel, *scope)
	}
	if err := sel.Scan(ctx); err != nil {
		return nil, mapError(op, err)
	}
	p, err := row.paymentIntent()
	if err != nil {
		return nil, mapError(op, err)
	}
	return &p, nil
}

// UpdatePaymentIntent implements paykit.Tx.
func (t tx) UpdatePaymentIntent(ctx context.Context, p *paykit.PaymentIntent) error {
	row, err := toPaymentIntentRow(p)
	if err != nil {
		return mapError("update payment intent", err)
	}
	row.Version++
	err = t.updateIntent(ctx, "update payment intent", "payment_intents", row, p.ID, p.Scope(), p.Version)
	if err == nil {
		p.Version = row.Version
	}
	return err
}

// listPaymentIntentsQuery selects one keyset page of q into rows.
func (t tx) listPaymentIntentsQuery(rows *[]paymentIntentRow, q paykit.ListQuery[paykit.ListParams[paykit.PaymentStatus]]) *bun.SelectQuery {
	f := q.Filter
	return pagePerValue(t, rows, f.Statuses, q.Limit, func(sel *bun.SelectQuery, statuses []paykit.PaymentStatus) *bun.SelectQuery {
		sel = filterIntents(inScope(sel, q.Scope), statuses, f.Currency, f.Country, f.MerchantReference, f.CreatedAfter, f.CreatedBefore)
		return newestFirst(sel, q.After, q.Limit)
	})
}

// ListPaymentIntents implements paykit.Tx.
func (t tx) ListPaymentIntents(ctx context.Context, q paykit.ListQuery[paykit.ListParams[paykit.PaymentStatus]]) ([]paykit.PaymentIntent, error) {
	var rows []paymentIntentRow
	if err := t.listPaymentIntentsQuery(&rows, q).Scan(ctx); err != nil {
		return nil, mapError("list payment intents", err)
	}
	out := make([]paykit.PaymentIntent, len(rows))
	for i := range rows {
		p, err := rows[i].paymentIntent()
		if err != nil {
			return nil, mapError("list payment intents", err)
		}
		out[i] = p
	}
	return out, nil
}
