package sandbox

import (
	"encoding/json"
	"slices"
	"strconv"
	"sync"
	"time"
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
	b = append(b, `{"amount_minor":`...)
	b = strconv.AppendInt(b, in.AmountMinor, 10)
	b = append(b, `,"ccy":`...)
	b = appendJSONString(b, in.Ccy)
	b = append(b, `,"country":`...)
	b = appendJSONString(b, in.Country)
	b = append(b, `,"channel":`...)
	b = appendJSONString(b, in.Channel)
	if in.Bank != "" {
		b = append(b, `,"bank":`...)
		b = appendJSONString(b, in.Bank)
	}
	if len(in.Payer) > 0 {
		b = append(b, `,"payer":{`...)
		var arr [4]string
		keys := arr[:0]
		for k := range in.Payer {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, k)
			b = append(b, ':')
			b = appendJSONString(b, in.Payer[k])
		}
		b = append(b, '}')
	}
	if in.ReturnURL != "" {
		b = append(b, `,"return_url":`...)
		b = appendJSONString(b, in.ReturnURL)
	}
	if in.ExpiresAt != nil {
		b = append(b, `,"expires_at":`...)
		if b, ok = appendJSONTime(b, *in.ExpiresAt); !ok {
			return nil, false
		}
	}
	return append(b, '}'), true
}

// appendJSON appends what json.Marshal makes of v; false when it is not
// sure to.
func (v *paymentView) appendJSON(b []byte) (_ []byte, ok bool) {
	b = append(b, `{"id":`...)
	b = appendJSONString(b, v.ID)
	b = append(b, `,"idempotency_key":`...)
	b = appendJSONString(b, v.Key)
	b = append(b, `,"state":`...)
	b = appendJSONString(b, v.State)
	b = append(b, `,"amount_minor":`...)
	b = strconv.AppendInt(b, v.AmountMinor, 10)
	b = append(b, `,"ccy":`...)
	b = appendJSONString(b, v.Ccy)
	b = append(b, `,"country":`...)
	b = appendJSONString(b, v.Country)
	b = append(b, `,"channel":`...)
	b = appendJSONString(b, v.Channel)
	for _, f := range [...]struct{ name, value string }{
		{`,"bank":`, v.Bank}, {`,"error_code":`, v.ErrorCode}, {`,"error_message":`, v.ErrorMessage},
	} {
		if f.value != "" {
			b = appendJSONString(append(b, f.name...), f.value)
		}
	}
	if a := v.PayerAction; a != nil {
		b = append(b, `,"payer_action":{"kind":`...)
		b = appendJSONString(b, a.Kind)
		if a.URL != "" {
			b = appendJSONString(append(b, `,"url":`...), a.URL)
		}
		if a.QRString != "" {
			b = appendJSONString(append(b, `,"qr_string":`...), a.QRString)
		}
		if va := a.VA; va != nil {
			b = appendJSONString(append(b, `,"va":{"bank_name":`...), va.BankName)
			b = appendJSONString(append(b, `,"number":`...), va.Number)
			b = appendJSONString(append(b, `,"holder":`...), va.Holder)
			b = appendJSONString(append(b, `,"reference":`...), va.Reference)
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
		if b, ok = appendJSONTime(append(b, f.name...), *f.t); !ok {
			return nil, false
		}
	}
	return append(b, '}'), true
}

// appendJSONTime appends t as Time.MarshalJSON does, for the years and
// whole-minute offsets it takes without an error; false for others.
func appendJSONTime(b []byte, t time.Time) ([]byte, bool) {
	if _, off := t.Zone(); t.Year() < 0 || t.Year() > 9999 || off%60 != 0 || off <= -24*3600 || off >= 24*3600 {
		return nil, false
	}
	b = append(b, '"')
	b = t.AppendFormat(b, time.RFC3339Nano)
	return append(b, '"'), true
}

// appendJSONString appends s as encoding/json quotes it: printable ASCII
// but for the characters it escapes is copied, anything else goes
// through json.Marshal.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // a string always encodes
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}
