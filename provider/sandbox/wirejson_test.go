package sandbox

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http/httptest"
	"testing"
	"time"
)

// TestMarshalPaymentCreateAsEncodingJSON: the hand-written encoding of
// paymentCreate is json.Marshal's, byte for byte, so fingerprints the PSP
// stored before it still match.
func TestMarshalPaymentCreateAsEncodingJSON(t *testing.T) {
	strs := []string{"", "MYR", "fpx", "a b", `q"uote`, `back\slash`, "<tag>", "a&b", "tab\t", "nl\n", "\x00", "\x7f",
		"é", "\u2028", "bad\xff", "https://shop.example/return?a=1&b=2"}
	times := []*time.Time{nil}
	for _, tm := range []time.Time{
		time.Date(2026, 11, 24, 23, 0, 0, 0, time.UTC),
		time.Date(2026, 11, 24, 23, 0, 0, 123456789, time.UTC),
		time.Date(2026, 11, 24, 23, 0, 0, 120000000, time.UTC),
		time.Date(2026, 11, 24, 23, 0, 0, 0, time.FixedZone("x", 7*3600)),
		time.Date(2026, 11, 24, 23, 0, 0, 0, time.FixedZone("y", 7*3600+30)),
		time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC),
		{},
	} {
		times = append(times, &tm)
	}
	var cases []paymentCreate
	for _, s := range strs {
		cases = append(cases,
			paymentCreate{AmountMinor: 15000, Ccy: s, Country: "MY", Channel: "fpx"},
			paymentCreate{AmountMinor: -1, Ccy: "MYR", Country: s, Channel: s, Bank: s, ReturnURL: s},
			paymentCreate{Payer: map[string]string{s: s}},
			paymentCreate{Payer: map[string]string{"name": s, "email": "a@example.com", "zz": "1", "a": "2", "m": "3"}},
		)
	}
	cases = append(cases, paymentCreate{Payer: map[string]string{}})
	for _, tm := range times {
		cases = append(cases, paymentCreate{AmountMinor: 1 << 62, Ccy: "THB", ExpiresAt: tm})
	}
	for _, in := range cases {
		want, wantErr := json.Marshal(in)
		got, err := marshal(in)
		if !bytes.Equal(got, want) || (err == nil) != (wantErr == nil) {
			t.Errorf("%+v:\nmarshal      %s %v\njson.Marshal %s %v", in, got, err, want, wantErr)
		}
		if sum := sha256.Sum256(want); fingerprint(in) != hex.EncodeToString(sum[:]) {
			t.Errorf("%+v: fingerprint is not the hash of json.Marshal's encoding", in)
		}
	}
}

// TestWritePaymentViewAsEncodingJSON: the PSP writes its payment answers
// byte for byte as json.Encoder did.
func TestWritePaymentViewAsEncodingJSON(t *testing.T) {
	at := time.Date(2026, 11, 24, 23, 0, 0, 123000000, time.UTC)
	local := time.Date(2026, 11, 24, 23, 0, 0, 0, time.FixedZone("ICT", 7*3600))
	odd := time.Date(2026, 11, 24, 23, 0, 0, 0, time.FixedZone("LMT", 6*3600+42*60+4))
	far := time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)
	base := paymentView{ID: "pay_1", Key: "k-1", State: statePayerAction, AmountMinor: 15000, Ccy: "MYR", Country: "MY",
		Channel: "fpx", CreatedAt: at, UpdatedAt: at, ExpiresAt: at.Add(time.Hour)}
	var views []paymentView
	for _, s := range []string{"", "x", `q"`, "<&>", "é", "bad\xff", "https://psp.example/pay/pay_1?a=1&b=2"} {
		v := base
		v.Bank, v.ErrorCode, v.ErrorMessage = s, s, s
		views = append(views, v)
		v = base
		v.PayerAction = &payerActionView{Kind: s, URL: s}
		views = append(views, v)
		v.PayerAction = &payerActionView{Kind: "QR", QRString: s}
		views = append(views, v)
		v.PayerAction = &payerActionView{Kind: "VA", VA: &vaView{BankName: s, Number: "123", Holder: s, Reference: s}}
		views = append(views, v)
	}
	for _, tm := range []time.Time{at, local, odd, far, {}, time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC)} {
		v := base
		v.CreatedAt, v.CancelRequestedAt = tm, &tm
		views = append(views, v)
	}
	for _, v := range views {
		var want bytes.Buffer
		_ = json.NewEncoder(&want).Encode(v)
		got := httptest.NewRecorder()
		writeJSON(got, 200, v)
		if !bytes.Equal(got.Body.Bytes(), want.Bytes()) {
			t.Errorf("%+v:\nwriteJSON    %s\njson.Encoder %s", v, got.Body.Bytes(), want.Bytes())
		}
	}
}
