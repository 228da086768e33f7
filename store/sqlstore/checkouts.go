package sqlstore

import (
	"context"
	"errors"
	"time"

	"github.com/uptrace/bun"

	"github.com/paykit/paykit"
)

// checkoutRow is a row of checkouts. JSON columns hold "" as NULL.
type checkoutRow struct {
	bun.BaseModel `bun:"table:checkouts"`

	ID                   string    `bun:"id,pk"`
	MerchantID           string    `bun:"merchant_id"`
	Environment          string    `bun:"environment"`
	Status               string    `bun:"status"`
	Amount               int64     `bun:"amount"`
	Currency             string    `bun:"currency"`
	Country              string    `bun:"country"`
	MerchantReference    string    `bun:"merchant_reference"`
	PaymentIntentID      string    `bun:"payment_intent_id"`
	Customer             string    `bun:"customer,nullzero"`
	Metadata             string    `bun:"metadata,nullzero"`
	PaymentMethod        string    `bun:"payment_method"`
	PaymentMethodOptions string    `bun:"payment_method_options,nullzero"`
	ReturnURL            string    `bun:"return_url"`
	ExpiresAt            time.Time `bun:"expires_at"`
	CreatedAt            time.Time `bun:"created_at"`
	UpdatedAt            time.Time `bun:"updated_at"`
	Version              int64     `bun:"version"`
}

func toCheckoutRow(c *paykit.Checkout) (*checkoutRow, error) {
	customer, err1 := mapToJSON(c.Customer)
	metadata, err2 := mapToJSON(c.Metadata)
	options, err3 := mapToJSON(c.PaymentMethodOptions)
	if err := errors.Join(err1, err2, err3); err != nil {
		return nil, err
	}
	return &checkoutRow{
		ID: c.ID, MerchantID: c.MerchantID, Environment: string(c.Environment), Status: string(c.Status),
		Amount: c.Amount, Currency: c.Currency, Country: c.Country, MerchantReference: c.MerchantReference,
		PaymentIntentID: c.PaymentIntentID, Customer: customer, Metadata: metadata, PaymentMethod: c.PaymentMethod,
		PaymentMethodOptions: options, ReturnURL: c.ReturnURL, ExpiresAt: c.ExpiresAt.UTC(),
		CreatedAt: c.CreatedAt.UTC(), UpdatedAt: c.UpdatedAt.UTC(), Version: c.Version,
	}, nil
}

func (r *checkoutRow) checkout() (paykit.Checkout, error) {
	customer, err1 := fromJSONMap(r.Customer)
	metadata, err2 := fromJSONMap(r.Metadata)
	options, err3 := fromJSONMap(r.PaymentMethodOptions)
	return paykit.Checkout{
		ID: r.ID, MerchantID: r.MerchantID, Environment: paykit.Environment(r.Environment),
		Status: paykit.CheckoutStatus(r.Status), Amount: r.Amount, Currency: r.Currency, Country: r.Country,
		MerchantReference: r.MerchantReference, PaymentIntentID: r.PaymentIntentID, Customer: customer,
		Metadata: metadata, PaymentMethod: r.PaymentMethod, PaymentMethodOptions: options, ReturnURL: r.ReturnURL,
		ExpiresAt: r.ExpiresAt.UTC(), CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC(), Version: r.Version,
	}, errors.Join(err1, err2, err3)
}

// CreateCheckout implements paykit.Tx.
func (t tx) CreateCheckout(ctx context.Context, c *paykit.Checkout) error {
	row, err := toCheckoutRow(c)
	if err != nil {
		return mapError("create checkout", err)
	}
	return t.insert(ctx, "checkouts", row, intentKeys(c.ID, c.Scope(), c.MerchantReference)...)
}

// GetCheckout implements paykit.Tx.
func (t tx) GetCheckout(ctx context.Context, scope paykit.Scope, id string) (*paykit.Checkout, error) {
	var row checkoutRow
	if err := ofScope(t.db.NewSelect().Model(&row).Where("id = ?", id), scope).Scan(ctx); err != nil {
		return nil, mapError("get checkout", err)
	}
	c, err := row.checkout()
	if err != nil {
		return nil, mapError("get checkout", err)
	}
	return &c, nil
}

// UpdateCheckout implements paykit.Tx.
func (t tx) UpdateCheckout(ctx context.Context, c *paykit.Checkout) error {
	row, err := toCheckoutRow(c)
	if err != nil {
		return mapError("update checkout", err)
	}
	row.Version++
	err = t.updateIntent(ctx, "update checkout", "checkouts", row, c.ID, c.Scope(), c.Version)
	if err == nil {
		c.Version = row.Version
	}
	return err
}

// listCheckoutsQuery selects one keyset page of q into rows.
func (t tx) listCheckoutsQuery(rows *[]checkoutRow, q paykit.ListQuery[paykit.ListParams[paykit.CheckoutStatus]]) *bun.SelectQuery {
	f := q.Filter
	return pagePerValue(t, rows, f.Statuses, q.Limit, func(sel *bun.SelectQuery, statuses []paykit.CheckoutStatus) *bun.SelectQuery {
		sel = filterIntents(inScope(sel, q.Scope), statuses, f.Currency, f.Country, f.MerchantReference, f.CreatedAfter, f.CreatedBefore)
		return newestFirst(sel, q.After, q.Limit)
	})
}

// ListCheckouts implements paykit.Tx.
func (t tx) ListCheckouts(ctx context.Context, q paykit.ListQuery[paykit.ListParams[paykit.CheckoutStatus]]) ([]paykit.Checkout, error) {
	var rows []checkoutRow
	if err := t.listCheckoutsQuery(&rows, q).Scan(ctx); err != nil {
		return nil, mapError("list checkouts", err)
	}
	out := make([]paykit.Checkout, len(rows))
	for i := range rows {
		c, err := rows[i].checkout()
		if err != nil {
			return nil, mapError("list checkouts", err)
		}
		out[i] = c
	}
	return out, nil
}
