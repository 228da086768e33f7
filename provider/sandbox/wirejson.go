package sandbox

import (
	"encoding/json"
	"slices"
	"sync"
	"time"

	"github.com/paykit/paykit/internal/jsonappend"
)

// marshal is json.Marshal, byte for byte, with paymentCreate (the body of
// every payment create, encoded by the adapter and again for the PSP's
// fingerprint) written without reflection.
func marshal(v any) ([]byte, error) {
	buf := wireBuffers.Get().(*[]byte)
	defer wireBuffers.Put(buf)
	if b, ok := appendWire((*buf)[:0], v); ok {
		*buf = b
		return slices.Clone(b), nil
	}
	return json.Marshal(v)
}

// wireBuffers holds the buffers marshal and fingerprint encode into.
var wireBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

// appendWire appends json.Marshal(v) when v is a paymentCreate or a
// paymentView that its appendJSON encodes.
func appendWire(b []byte, v any) ([]byte, bool) {
	switch v := v.(type) {
	case paymentCreate:
		return v.appendJSON(b)
	case paymentView:
		return v.appendJSON(b)
	}
	return nil, false
}

// appendJSON appends what json.Marshal makes of in; false when it is not
// sure to (the caller then uses json.Marshal).
func (in *paymentCreate) appendJSON(b []byte) (_ []byte, ok bool) {
	b = jsonappend.IntMember(b, `{"amount_minor":`, in.AmountMinor)
	b = jsonappend.Member(b, `,"ccy":`, in.Ccy)
	b = jsonappend.Member(b, `,"country":`, in.Country)
	b = jsonappend.Member(b, `,"channel":`, in.Channel)
	if in.Bank != "" {
		b = jsonappend.Member(b, `,"bank":`, in.Bank)
	}
	if len(in.Payer) > 0 {
		b = append(b, `,"payer":`...)
		b = jsonappend.StringMap(b, in.Payer)
	}
	if in.ReturnURL != "" {
		b = jsonappend.Member(b, `,"return_url":`, in.ReturnURL)
	}
	if in.ExpiresAt != nil {
		if b, ok = jsonappend.TimeMember(b, `,"expires_at":`, *in.ExpiresAt); !ok {
			return nil, false
		}
	}
	return append(b, '}'), true
}

// appendJSON appends what json.Marshal makes of v; false when it is not
// sure to.
func (v *paymentView) appendJSON(b []byte) (_ []byte, ok bool) {
	b = jsonappend.Member(b, `{"id":`, v.ID)
	b = jsonappend.Member(b, `,"idempotency_key":`, v.Key)
	b = jsonappend.Member(b, `,"state":`, v.State)
	b = jsonappend.IntMember(b, `,"amount_minor":`, v.AmountMinor)
	b = jsonappend.Member(b, `,"ccy":`, v.Ccy)
	b = jsonappend.Member(b, `,"country":`, v.Country)
	b = jsonappend.Member(b, `,"channel":`, v.Channel)
	for _, f := range [...]struct{ name, value string }{
		{`,"bank":`, v.Bank}, {`,"error_code":`, v.ErrorCode}, {`,"error_message":`, v.ErrorMessage},
	} {
		if f.value != "" {
			b = jsonappend.Member(b, f.name, f.value)
		}
	}
	if a := v.PayerAction; a != nil {
		b = jsonappend.Member(b, `,"payer_action":{"kind":`, a.Kind)
		if a.URL != "" {
			b = jsonappend.Member(b, `,"url":`, a.URL)
		}
		if a.QRString != "" {
			b = jsonappend.Member(b, `,"qr_string":`, a.QRString)
		}
		if va := a.VA; va != nil {
			b = jsonappend.Member(b, `,"va":{"bank_name":`, va.BankName)
			b = jsonappend.Member(b, `,"number":`, va.Number)
			b = jsonappend.Member(b, `,"holder":`, va.Holder)
			b = jsonappend.Member(b, `,"reference":`, va.Reference)
			b = append(b, '}')
		}
		b = append(b, '}')
	}
	for _, f := range [...]struct {
		name string
		t    *time.Time
	}{{`,"created_at":`, &v.CreatedAt}, {`,"updated_at":`, &v.UpdatedAt}, {`,"expires_at":`, &v.ExpiresAt}, {`,"cancel_requested_at":`, v.CancelRequestedAt}} {
		if f.t == nil {
			continue // cancel_requested_at, omitempty
		}
		if b, ok = jsonappend.TimeMember(b, f.name, *f.t); !ok {
			return nil, false
		}
	}
	return append(b, '}'), true
}
