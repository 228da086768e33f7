package httpadapter

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/paykit/paykit"
)

// The payment intent's projection is written as json.Marshal writes it,
// byte for byte: for intents with and without each optional part, every
// kind of next action, and text that encoding/json escapes.
func TestPaymentIntentJSONAsEncodingJSON(t *testing.T) {
	for typ, n := range map[reflect.Type]int{
		reflect.TypeFor[paymentIntentJSON](): 18, reflect.TypeFor[nextActionJSON](): 11, reflect.TypeFor[receiptJSON](): 5,
	} {
		if typ.NumField() != n {
			t.Fatalf("%s has %d fields; appendPaymentIntent writes %d", typ, typ.NumField(), n)
		}
	}
	at := time.Date(2026, 11, 25, 4, 41, 2, 345678901, time.UTC)
	done := at.Add(time.Minute).In(time.FixedZone("", 8*3600)) // written in UTC
	texts := []string{"", "ref-1", `q"b\s`, "<a>&b", "é\u2028\n\x01", "\xff"}
	actions := []*paykit.NextAction{nil,
		{Type: paykit.NextActionRedirectToURL, URL: "https://pay.example/continue?x=1&y=<2>", ExpiresAt: at},
		{Type: paykit.NextActionDisplayQRCode, QRData: "000201010212", ImageURL: "https://pay.example/qr.png", ExpiresAt: at},
		{Type: paykit.NextActionBankTransferInstructions, BankName: "Maybank", Account: "8812345678", Holder: "SANDBOX", Reference: "REF", Amount: 15000, Currency: "MYR", ExpiresAt: at},
		{Type: "", ExpiresAt: time.Time{}},
	}
	receipts := []*paykit.Receipt{nil, {Number: "R-1", PaidAt: done, Amount: 15000, Currency: "MYR", PaymentMethod: "FPX"}}
	n := 0
	for i, s := range texts {
		for j, na := range actions {
			for k, rc := range receipts {
				pi := &paykit.PaymentIntent{
					ID: "pi_" + s, Status: paykit.PaymentStatuses[(i+j)%len(paykit.PaymentStatuses)], Amount: int64(i*j*1000 + k),
					Currency: "MYR", Country: s, MerchantReference: s, PaymentMethod: texts[(i+j)%len(texts)], Environment: paykit.Test,
					NextAction: na, FailureCode: texts[(i+k)%len(texts)], Receipt: rc, ExpiresAt: at, CreatedAt: at, UpdatedAt: done,
				}
				if k == 1 {
					pi.CompletedAt = &done
				}
				var want bytes.Buffer
				if err := json.NewEncoder(&want).Encode(project(pi)); err != nil {
					t.Fatal(err)
				}
				if got := append(appendPaymentIntent(nil, pi), '\n'); !bytes.Equal(got, want.Bytes()) {
					t.Errorf("appendPaymentIntent:\n%s\nencoding/json:\n%s", got, want.Bytes())
				}
				n++
			}
		}
	}
	if n != len(texts)*len(actions)*len(receipts) {
		t.Fatal("not every intent was checked")
	}
	if paymentIntentOf(paykit.PaymentIntent{ID: "pi_v"}).ID != "pi_v" || paymentIntentOf((*paykit.PaymentIntent)(nil)) != nil || paymentIntentOf("pi") != nil {
		t.Error("paymentIntentOf does not pick the payment intents")
	}
}
