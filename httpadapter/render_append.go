package httpadapter

import (
	"github.com/paykit/paykit"
	"github.com/paykit/paykit/internal/jsonappend"
)

// The projection of a payment intent is written on every create and
// retrieve: these write what json.Marshal makes of it, byte for byte,
// without reflection (a test holds them to it).

func (p *paymentIntentJSON) appendJSON(b []byte) []byte {
	b = jsonappend.Member(b, `{"object":`, p.Object)
	b = jsonappend.Member(b, `,"id":`, p.ID)
	b = jsonappend.Member(b, `,"status":`, string(p.Status))
	b = jsonappend.Member(b, `,"amount":`, p.Amount)
	b = jsonappend.Member(b, `,"captured_amount":`, p.CapturedAmount)
	b = jsonappend.Member(b, `,"refunded_amount":`, p.RefundedAmount)
	b = jsonappend.Member(b, `,"currency":`, p.Currency)
	b = jsonappend.Member(b, `,"country":`, p.Country)
	b = jsonappend.Member(b, `,"merchant_reference":`, p.MerchantReference)
	b = append(b, `,"payment_method":`...)
	b = appendStringPtr(b, p.PaymentMethod)
	b = jsonappend.Member(b, `,"environment":`, string(p.Environment))
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
	b = jsonappend.Member(b, `,"expires_at":`, p.ExpiresAt)
	b = append(b, `,"completed_at":`...)
	b = appendStringPtr(b, p.CompletedAt)
	b = jsonappend.Member(b, `,"created_at":`, p.CreatedAt)
	b = jsonappend.Member(b, `,"updated_at":`, p.UpdatedAt)
	return append(b, '}')
}

func (n *nextActionJSON) appendJSON(b []byte) []byte {
	b = jsonappend.Member(b, `{"type":`, n.Type)
	for _, f := range [...]struct{ name, v string }{
		{`,"url":`, n.URL}, {`,"qr_data":`, n.QRData}, {`,"image_url":`, n.ImageURL}, {`,"bank_name":`, n.BankName},
		{`,"account_number":`, n.Account}, {`,"account_holder":`, n.Holder}, {`,"reference":`, n.Reference},
		{`,"currency":`, n.Currency}, {`,"amount":`, n.Amount},
	} {
		if f.v != "" { // omitempty
			b = jsonappend.Member(b, f.name, f.v)
		}
	}
	b = jsonappend.Member(b, `,"expires_at":`, n.ExpiresAt)
	return append(b, '}')
}

func (r *receiptJSON) appendJSON(b []byte) []byte {
	b = jsonappend.Member(b, `{"number":`, r.Number)
	b = jsonappend.Member(b, `,"paid_at":`, r.PaidAt)
	b = jsonappend.Member(b, `,"amount":`, r.Amount)
	b = jsonappend.Member(b, `,"currency":`, r.Currency)
	b = jsonappend.Member(b, `,"payment_method":`, r.PaymentMethod)
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
