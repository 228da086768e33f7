package httpadapter

import (
	"github.com/paykit/paykit"
	"github.com/paykit/paykit/internal/jsonappend"
)

// The projection of a payment intent is written on every create and
// retrieve: these write what json.Marshal makes of it, byte for byte,
// without reflection (a test holds them to it).

func (p *paymentIntentJSON) appendJSON(b []byte) []byte {
	b = append(b, `{"object":`...)
	b = jsonappend.String(b, p.Object)
	b = append(b, `,"id":`...)
	b = jsonappend.String(b, p.ID)
	b = append(b, `,"status":`...)
	b = jsonappend.String(b, string(p.Status))
	b = append(b, `,"amount":`...)
	b = jsonappend.String(b, p.Amount)
	b = append(b, `,"captured_amount":`...)
	b = jsonappend.String(b, p.CapturedAmount)
	b = append(b, `,"refunded_amount":`...)
	b = jsonappend.String(b, p.RefundedAmount)
	b = append(b, `,"currency":`...)
	b = jsonappend.String(b, p.Currency)
	b = append(b, `,"country":`...)
	b = jsonappend.String(b, p.Country)
	b = append(b, `,"merchant_reference":`...)
	b = jsonappend.String(b, p.MerchantReference)
	b = append(b, `,"payment_method":`...)
	b = appendStringPtr(b, p.PaymentMethod)
	b = append(b, `,"environment":`...)
	b = jsonappend.String(b, string(p.Environment))
	b = append(b, `,"next_action":`...)
	if p.NextAction == nil {
		b = append(b, "null"...)
	} else {
		b = p.NextAction.appendJSON(b)
	}
	b = append(b, `,"failure_code":`...)
	b = appendStringPtr(b, p.FailureCode)
	b = append(b, `,"receipt":`...)
	if p.Receipt == nil {
		b = append(b, "null"...)
	} else {
		b = p.Receipt.appendJSON(b)
	}
	b = append(b, `,"expires_at":`...)
	b = jsonappend.String(b, p.ExpiresAt)
	b = append(b, `,"completed_at":`...)
	b = appendStringPtr(b, p.CompletedAt)
	b = append(b, `,"created_at":`...)
	b = jsonappend.String(b, p.CreatedAt)
	b = append(b, `,"updated_at":`...)
	b = jsonappend.String(b, p.UpdatedAt)
	return append(b, '}')
}

func (n *nextActionJSON) appendJSON(b []byte) []byte {
	b = append(b, `{"type":`...)
	b = jsonappend.String(b, n.Type)
	for _, f := range [...]struct{ name, v string }{
		{`,"url":`, n.URL}, {`,"qr_data":`, n.QRData}, {`,"image_url":`, n.ImageURL}, {`,"bank_name":`, n.BankName},
		{`,"account_number":`, n.Account}, {`,"account_holder":`, n.Holder}, {`,"reference":`, n.Reference},
		{`,"currency":`, n.Currency}, {`,"amount":`, n.Amount},
	} {
		if f.v != "" { // omitempty
			b = append(b, f.name...)
			b = jsonappend.String(b, f.v)
		}
	}
	b = append(b, `,"expires_at":`...)
	b = jsonappend.String(b, n.ExpiresAt)
	return append(b, '}')
}

func (r *receiptJSON) appendJSON(b []byte) []byte {
	b = append(b, `{"number":`...)
	b = jsonappend.String(b, r.Number)
	b = append(b, `,"paid_at":`...)
	b = jsonappend.String(b, r.PaidAt)
	b = append(b, `,"amount":`...)
	b = jsonappend.String(b, r.Amount)
	b = append(b, `,"currency":`...)
	b = jsonappend.String(b, r.Currency)
	b = append(b, `,"payment_method":`...)
	b = jsonappend.String(b, r.PaymentMethod)
	return append(b, '}')
}

// appendStringPtr appends *s, or null.
func appendStringPtr(b []byte, s *string) []byte {
	if s == nil {
		return append(b, "null"...)
	}
	return jsonappend.String(b, *s)
}

// paymentIntentOf is v when it is a payment intent (or points to one);
// nil otherwise.
func paymentIntentOf(v any) *paykit.PaymentIntent {
	switch v := v.(type) {
	case *paykit.PaymentIntent:
		return v
	case paykit.PaymentIntent:
		return &v
	}
	return nil
}
