package httpadapter

import (
	"strconv"
	"time"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/internal/jsonappend"
)

// The projection of a payment intent is written on every create and
// retrieve: appendPaymentIntent writes what json.Marshal makes of
// paykit.Projection of the intent, byte for byte, from the intent itself: no reflection
// and no view with its formatted strings (a test holds it to it).

func appendPaymentIntent(b []byte, p *paykit.PaymentIntent) []byte {
	b = append(b, `{"object":"payment_intent"`...)
	b = jsonappend.Member(b, `,"id":`, p.ID)
	b = jsonappend.Member(b, `,"status":`, string(p.Status))
	b = appendAmount(b, `,"amount":`, p.Amount)
	b = appendAmount(b, `,"captured_amount":`, p.CapturedAmount())
	b = appendAmount(b, `,"refunded_amount":`, p.RefundedAmount)
	b = jsonappend.Member(b, `,"currency":`, p.Currency)
	b = jsonappend.Member(b, `,"country":`, p.Country)
	b = jsonappend.Member(b, `,"merchant_reference":`, p.MerchantReference)
	b = appendNullString(b, `,"payment_method":`, p.PaymentMethod)
	b = jsonappend.Member(b, `,"environment":`, string(p.Environment))
	b = append(b, `,"next_action":`...)
	if n := p.NextAction; n == nil {
		b = append(b, "null"...)
	} else {
		b = appendNextAction(b, n)
	}
	b = appendNullString(b, `,"failure_code":`, p.FailureCode)
	b = append(b, `,"receipt":`...)
	if r := p.Receipt; r == nil {
		b = append(b, "null"...)
	} else {
		b = jsonappend.Member(b, `{"number":`, r.Number)
		b = appendTime(b, `,"paid_at":`, r.PaidAt)
		b = appendAmount(b, `,"amount":`, r.Amount)
		b = jsonappend.Member(b, `,"currency":`, r.Currency)
		b = jsonappend.Member(b, `,"payment_method":`, r.PaymentMethod)
		b = append(b, '}')
	}
	b = appendTime(b, `,"expires_at":`, p.ExpiresAt)
	if p.CompletedAt == nil {
		b = append(b, `,"completed_at":null`...)
	} else {
		b = appendTime(b, `,"completed_at":`, *p.CompletedAt)
	}
	b = appendTime(b, `,"created_at":`, p.CreatedAt)
	b = appendTime(b, `,"updated_at":`, p.UpdatedAt)
	return append(b, '}')
}

// appendNextAction writes nextActionView(n).
func appendNextAction(b []byte, n *paykit.NextAction) []byte {
	b = jsonappend.Member(b, `{"type":`, n.Type)
	for _, f := range [...]struct{ name, v string }{
		{`,"url":`, n.URL}, {`,"qr_data":`, n.QRData}, {`,"image_url":`, n.ImageURL}, {`,"bank_name":`, n.BankName},
		{`,"account_number":`, n.Account}, {`,"account_holder":`, n.Holder}, {`,"reference":`, n.Reference},
		{`,"currency":`, n.Currency},
	} {
		if f.v != "" { // omitempty
			b = jsonappend.Member(b, f.name, f.v)
		}
	}
	if n.Type == paykit.NextActionBankTransferInstructions {
		b = appendAmount(b, `,"amount":`, n.Amount)
	}
	b = appendTime(b, `,"expires_at":`, n.ExpiresAt)
	return append(b, '}')
}

// appendAmount writes the member name with amount(v): digits need no
// escaping.
func appendAmount(b []byte, name string, v int64) []byte {
	b = append(append(b, name...), '"')
	return append(strconv.AppendInt(b, v, 10), '"')
}

// appendNullString writes the member name with nullString(s).
func appendNullString(b []byte, name, s string) []byte {
	if s == "" {
		return append(append(b, name...), "null"...)
	}
	return jsonappend.Member(b, name, s)
}

// appendTime writes the member name with formatTime(t): the layout's
// characters need no escaping.
func appendTime(b []byte, name string, t time.Time) []byte {
	b = append(append(b, name...), '"')
	return append(t.UTC().AppendFormat(b, paykit.TimeLayout), '"')
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
