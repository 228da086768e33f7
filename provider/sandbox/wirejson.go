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
	if b, ok := appendPaymentCreate((*buf)[:0], v); ok {
		*buf = b
		return slices.Clone(b), nil
	}
	return json.Marshal(v)
}

// wireBuffers holds the buffers marshal and fingerprint encode into.
var wireBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

// appendPaymentCreate appends json.Marshal(v) when v is a paymentCreate
// that appendJSON encodes.
func appendPaymentCreate(b []byte, v any) ([]byte, bool) {
	in, ok := v.(paymentCreate)
	if !ok {
		return nil, false
	}
	return in.appendJSON(b)
}

// appendJSON appends what json.Marshal makes of in; false when it is not
// sure to (the caller then uses json.Marshal).
func (in *paymentCreate) appendJSON(b []byte) ([]byte, bool) {
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
		t := *in.ExpiresAt
		if t.Location() != time.UTC || t.Year() < 0 || t.Year() > 9999 {
			return nil, false // other offsets and years: Time.MarshalJSON's checks
		}
		b = append(b, `,"expires_at":"`...)
		b = t.AppendFormat(b, time.RFC3339Nano)
		b = append(b, '"')
	}
	return append(b, '}'), true
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
