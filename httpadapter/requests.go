package httpadapter

import (
	"context"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/internal/adapterhooks"
	"github.com/paykit/paykit/internal/contract"
	"github.com/paykit/paykit/internal/validated"
	"github.com/paykit/paykit/internal/wire"
)

// The request bodies of the API: amounts are decimal strings of minor
// units. Each converts to the Service's Go request. Their tags are the
// ones the Service validates its requests with, so both report the same
// errors under the same names.

// createPaymentIntentBody is the body of POST /payment_intents.
type createPaymentIntentBody struct {
	Amount               string            `json:"amount" validate:"required,amount"`
	Currency             string            `json:"currency" validate:"required,currency"`
	Country              string            `json:"country" validate:"required,country"`
	MerchantReference    string            `json:"merchant_reference" validate:"required,max=256"`
	PaymentMethod        string            `json:"payment_method" validate:"required,payment_method"`
	Customer             map[string]string `json:"customer" validate:"required,textmap=64:512"`
	PaymentMethodOptions map[string]string `json:"payment_method_options,omitempty" validate:"omitempty,textmap=64:256"`
	ReturnURL            string            `json:"return_url,omitempty" validate:"omitempty,max=2048,http_url"`
}

func (b *createPaymentIntentBody) amount() string { return b.Amount }

func (b *createPaymentIntentBody) request(amount int64) paykit.CreatePaymentIntentRequest {
	return paykit.CreatePaymentIntentRequest{Amount: amount, Currency: b.Currency, Country: b.Country,
		MerchantReference: b.MerchantReference, PaymentMethod: b.PaymentMethod, Customer: b.Customer,
		PaymentMethodOptions: b.PaymentMethodOptions, ReturnURL: b.ReturnURL}
}

// createCheckoutBody is the body of POST /checkouts.
type createCheckoutBody struct {
	Amount               string            `json:"amount" validate:"required,amount"`
	Currency             string            `json:"currency" validate:"required,currency"`
	Country              string            `json:"country" validate:"required,country"`
	MerchantReference    string            `json:"merchant_reference" validate:"required,max=256"`
	Customer             map[string]string `json:"customer,omitempty" validate:"omitempty,textmap=64:512"`
	ReturnURL            string            `json:"return_url,omitempty" validate:"omitempty,max=2048,http_url"`
	Metadata             map[string]string `json:"metadata,omitempty" validate:"omitempty,max=50,textmap=40:500"`
	PaymentMethod        string            `json:"payment_method,omitempty" validate:"omitempty,payment_method"`
	PaymentMethodOptions map[string]string `json:"payment_method_options,omitempty" validate:"omitempty,textmap=64:256"`
}

func (b *createCheckoutBody) amount() string { return b.Amount }

func (b *createCheckoutBody) request(amount int64) paykit.CreateCheckoutRequest {
	return paykit.CreateCheckoutRequest{Amount: amount, Currency: b.Currency, Country: b.Country,
		MerchantReference: b.MerchantReference, Customer: b.Customer, ReturnURL: b.ReturnURL, Metadata: b.Metadata,
		PaymentMethod: b.PaymentMethod, PaymentMethodOptions: b.PaymentMethodOptions}
}

// createPayoutIntentBody is the body of POST /payout_intents.
type createPayoutIntentBody struct {
	Amount            string           `json:"amount" validate:"required,amount"`
	Currency          string           `json:"currency" validate:"required,currency"`
	Country           string           `json:"country" validate:"required,country"`
	MerchantReference string           `json:"merchant_reference" validate:"required,max=256"`
	Recipient         paykit.Recipient `json:"recipient" validate:"required"`
}

func (b *createPayoutIntentBody) amount() string { return b.Amount }

func (b *createPayoutIntentBody) request(amount int64) paykit.CreatePayoutIntentRequest {
	return paykit.CreatePayoutIntentRequest{Amount: amount, Currency: b.Currency, Country: b.Country,
		MerchantReference: b.MerchantReference, Recipient: b.Recipient}
}

// createRefundBody is the body of POST /refunds. Amount and reason are
// optional; a reason given must not be empty.
type createRefundBody struct {
	PaymentIntent     string  `json:"payment_intent" validate:"required,max=64"`
	MerchantReference string  `json:"merchant_reference" validate:"required,max=256"`
	Amount            *string `json:"amount,omitempty" validate:"omitempty,amount"`
	Reason            *string `json:"reason,omitempty" validate:"omitempty,min=1,max=512"`
}

func (b *createRefundBody) amount() string {
	if b.Amount == nil {
		return ""
	}
	return *b.Amount
}

func (b *createRefundBody) amountOmitted() bool { return b.Amount == nil }

func (b *createRefundBody) request(amount int64) paykit.CreateRefundRequest {
	req := paykit.CreateRefundRequest{PaymentIntent: b.PaymentIntent, MerchantReference: b.MerchantReference, Amount: amount}
	if b.Reason != nil {
		req.Reason = *b.Reason
	}
	return req
}

// check refuses what the Go request cannot tell apart: a reason given
// empty.
func (b *createRefundBody) check() error {
	if b.Reason != nil && *b.Reason == "" {
		return invalidRequest("reason", "reason has the wrong length (min 1).")
	}
	return nil
}

// createBody is a create request's body.
type createBody[Req any] interface {
	amount() string
	request(amount int64) Req
}

// toRequest converts a create body to the Service's request. An amount
// that does not parse cannot match the request stored under a key already
// used, so such a key answers idempotency_conflict, as the Service does for
// any other request that differs; otherwise the body's own validation
// error (the amount's, the first field) is the answer.
func toRequest[Req any, B createBody[Req]](ctx context.Context, svc *paykit.Service, p paykit.Principal, key string, body B) (Req, error) {
	var zero Req
	if c, ok := any(body).(interface{ check() error }); ok {
		if err := c.check(); err != nil {
			return zero, err
		}
	}
	if o, ok := any(body).(interface{ amountOmitted() bool }); ok && o.amountOmitted() {
		return body.request(0), nil // the Service's default
	}
	amount, err := wire.ParseAmount(body.amount())
	if err == nil {
		return body.request(amount), nil
	}
	if err := adapterhooks.IdempotencyKeyConflict(svc, ctx, p.MerchantID, string(p.Environment), key); err != nil {
		return zero, err
	}
	if err := validated.Check(body); err != nil {
		return zero, err
	}
	return zero, invalidRequest("amount", "amount is invalid.")
}

// paymentMethodsQuery is the query of GET /payment_methods.
type paymentMethodsQuery struct {
	Amount   string `json:"amount" validate:"required,amount"`
	Currency string `json:"currency" validate:"required,currency"`
	Country  string `json:"country" validate:"required,country"`
}

// balanceAdjustmentBody is the body of POST
// /operator/merchants/{id}/balance_adjustments.
type balanceAdjustmentBody struct {
	Environment string `json:"environment" validate:"required,environment"`
	Currency    string `json:"currency" validate:"required,currency"`
	Amount      string `json:"amount" validate:"required"` // signed minor units: "5000" credits, "-5000" debits
	Reason      string `json:"reason" validate:"required,min=1,max=512"`
}

// request validates the body and converts it.
func (b *balanceAdjustmentBody) request() (paykit.BalanceAdjustmentRequest, error) {
	if err := validated.Check(b); err != nil {
		return paykit.BalanceAdjustmentRequest{}, err
	}
	raw := b.Amount
	negative := len(raw) > 0 && raw[0] == '-'
	if negative {
		raw = raw[1:]
	}
	amount, err := wire.ParseAmount(raw)
	if err != nil {
		return paykit.BalanceAdjustmentRequest{}, invalidRequest("amount", contract.AdjustmentAmountMessage)
	}
	if negative {
		amount = -amount
	}
	return paykit.BalanceAdjustmentRequest{Environment: paykit.Environment(b.Environment), Currency: b.Currency, Amount: amount, Reason: b.Reason}, nil
}
