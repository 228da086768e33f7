package sqlstore

import (
	"time"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/internal/jsonappend"
)

// A payment intent's snapshot is written on every create (its event and
// its stored answer): appendPaymentSnapshot writes what json.Marshal makes
// of a snapshotDoc holding only a payment intent, byte for byte, without
// reflection (a test holds it to it). ok is false for what it does not
// write as json.Marshal would (a time json cannot encode): the caller then
// uses json.Marshal.
func appendPaymentSnapshot(b []byte, kind paykit.AnswerKind, p *paykit.PaymentIntent) (_ []byte, ok bool) {
	b = jsonappend.IntMember(b, `{"v":`, snapshotVersion)
	if kind != "" {
		b = jsonappend.Member(b, `,"kind":`, string(kind))
	}
	b = jsonappend.Member(b, `,"payment_intent":{"ID":`, p.ID)
	b = jsonappend.Member(b, `,"MerchantID":`, p.MerchantID)
	b = jsonappend.Member(b, `,"Environment":`, string(p.Environment))
	b = jsonappend.Member(b, `,"Status":`, string(p.Status))
	b = jsonappend.IntMember(b, `,"Amount":`, p.Amount)
	b = jsonappend.Member(b, `,"Currency":`, p.Currency)
	b = jsonappend.Member(b, `,"Country":`, p.Country)
	b = jsonappend.Member(b, `,"MerchantReference":`, p.MerchantReference)
	b = jsonappend.Member(b, `,"PaymentMethod":`, p.PaymentMethod)
	b = jsonappend.StringMap(append(b, `,"Customer":`...), p.Customer)
	b = jsonappend.StringMap(append(b, `,"PaymentMethodOptions":`...), p.PaymentMethodOptions)
	b = jsonappend.Member(b, `,"ReturnURL":`, p.ReturnURL)
	b = jsonappend.Member(b, `,"CheckoutID":`, p.CheckoutID)
	b = append(b, `,"NextAction":`...)
	if n := p.NextAction; n == nil {
		b = append(b, "null"...)
	} else {
		b = jsonappend.Member(b, `{"Type":`, n.Type)
		b = jsonappend.Member(b, `,"URL":`, n.URL)
		b = jsonappend.Member(b, `,"QRData":`, n.QRData)
		b = jsonappend.Member(b, `,"ImageURL":`, n.ImageURL)
		b = jsonappend.Member(b, `,"BankName":`, n.BankName)
		b = jsonappend.Member(b, `,"Account":`, n.Account)
		b = jsonappend.Member(b, `,"Holder":`, n.Holder)
		b = jsonappend.Member(b, `,"Reference":`, n.Reference)
		b = jsonappend.IntMember(b, `,"Amount":`, n.Amount)
		b = jsonappend.Member(b, `,"Currency":`, n.Currency)
		if b, ok = jsonappend.TimeMember(b, `,"ExpiresAt":`, n.ExpiresAt); !ok {
			return nil, false
		}
		b = append(b, '}')
	}
	b = jsonappend.Member(b, `,"FailureCode":`, p.FailureCode)
	b = append(b, `,"Receipt":`...)
	if r := p.Receipt; r == nil {
		b = append(b, "null"...)
	} else {
		b = jsonappend.Member(b, `{"Number":`, r.Number)
		if b, ok = jsonappend.TimeMember(b, `,"PaidAt":`, r.PaidAt); !ok {
			return nil, false
		}
		b = jsonappend.IntMember(b, `,"Amount":`, r.Amount)
		b = jsonappend.Member(b, `,"Currency":`, r.Currency)
		b = jsonappend.Member(b, `,"PaymentMethod":`, r.PaymentMethod)
		b = append(b, '}')
	}
	b = jsonappend.Member(b, `,"Provider":`, p.Provider)
	b = jsonappend.StringMap(append(b, `,"ProviderOptions":`...), p.ProviderOptions)
	b = jsonappend.Member(b, `,"ProviderRef":`, p.ProviderRef)
	b = jsonappend.Member(b, `,"Attempt":`, string(p.Attempt))
	b = jsonappend.Member(b, `,"ProviderURL":`, p.ProviderURL)
	if b, ok = appendTimePtr(b, `,"CancelRequestedAt":`, p.CancelRequestedAt); !ok {
		return nil, false
	}
	b = jsonappend.IntMember(b, `,"RefundedAmount":`, p.RefundedAmount)
	b = jsonappend.IntMember(b, `,"RefundPendingAmount":`, p.RefundPendingAmount)
	for _, t := range [...]struct {
		name string
		t    *time.Time
	}{{`,"ExpiresAt":`, &p.ExpiresAt}, {`,"CompletedAt":`, p.CompletedAt}, {`,"CreatedAt":`, &p.CreatedAt}, {`,"UpdatedAt":`, &p.UpdatedAt}} {
		if b, ok = appendTimePtr(b, t.name, t.t); !ok {
			return nil, false
		}
	}
	b = jsonappend.IntMember(b, `,"Version":`, p.Version)
	return append(b, "}}"...), true
}

// appendTimePtr writes t as json.Marshal does a *time.Time: null for nil.
func appendTimePtr(b []byte, name string, t *time.Time) ([]byte, bool) {
	if t == nil {
		return append(append(b, name...), "null"...), true
	}
	return jsonappend.TimeMember(b, name, *t)
}
