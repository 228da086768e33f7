package sqlstore

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/paykit/paykit"
)

// A payment intent's snapshot is written as json.Marshal writes it, byte
// for byte: with and without each optional part, every kind of next
// action, maps nil, empty and full, text that encoding/json escapes, and
// times in other zones. A field added to the intent changes json.Marshal's
// bytes and fails it.
func TestPaymentSnapshotAsEncodingJSON(t *testing.T) {
	at := time.Date(2026, 11, 25, 4, 41, 2, 345678901, time.UTC)
	bkk := at.Add(time.Minute).In(time.FixedZone("", 7*3600))
	texts := []string{"", "ref-1", `q"b\s`, "<a>&b", "é\u2028\n\x01", "\xff"}
	maps := []map[string]string{nil, {}, {"name": "A", "email": "a@example.com"}, {"<k>": "v\"", "b": "", "a": "é"}}
	actions := []*paykit.NextAction{nil,
		{Type: paykit.NextActionRedirectToURL, URL: "https://pay.example/continue?x=1&y=<2>", ExpiresAt: at},
		{Type: paykit.NextActionDisplayQRCode, QRData: "000201010212", ImageURL: "https://pay.example/qr.png", ExpiresAt: bkk},
		{Type: paykit.NextActionBankTransferInstructions, BankName: "Maybank", Account: "8812345678", Holder: "SANDBOX", Reference: "REF", Amount: 15000, Currency: "MYR", ExpiresAt: at},
		{},
	}
	receipts := []*paykit.Receipt{nil, {Number: "R-1", PaidAt: bkk, Amount: 15000, Currency: "MYR", PaymentMethod: "FPX"}}
	n := 0
	for i, s := range texts {
		for j, na := range actions {
			for k, rc := range receipts {
				p := &paykit.PaymentIntent{
					ID: "pi_" + s, MerchantID: s, Environment: paykit.Test, Status: paykit.PaymentStatuses[(i+j)%len(paykit.PaymentStatuses)],
					Amount: int64(i*j*1000 + k), Currency: "MYR", Country: s, MerchantReference: s, PaymentMethod: texts[(i+j)%len(texts)],
					Customer: maps[(i+k)%len(maps)], PaymentMethodOptions: maps[(j+k)%len(maps)], ReturnURL: s, CheckoutID: s,
					NextAction: na, FailureCode: texts[(i+k)%len(texts)], Receipt: rc, Provider: s, ProviderOptions: maps[i%len(maps)],
					ProviderRef: s, Attempt: paykit.AttemptState(s), ProviderURL: s, RefundedAmount: int64(i), RefundPendingAmount: -int64(j),
					ExpiresAt: at, CreatedAt: bkk, UpdatedAt: at, Version: int64(n),
				}
				if k == 1 {
					p.CompletedAt, p.CancelRequestedAt = &at, &bkk
				}
				for _, kind := range []paykit.AnswerKind{"", paykit.AnswerCreated} {
					want, err := json.Marshal(snapshotDoc{V: snapshotVersion, Kind: kind, PaymentIntent: p})
					if err != nil {
						t.Fatal(err)
					}
					got, ok := appendPaymentSnapshot(nil, kind, p)
					if !ok || !bytes.Equal(got, want) {
						t.Errorf("appendPaymentSnapshot (ok %t):\n%s\njson.Marshal:\n%s", ok, got, want)
					}
					n++
				}
			}
		}
	}
	if n != len(texts)*len(actions)*len(receipts)*2 {
		t.Fatal("not every intent was checked")
	}
	// A time json cannot encode is left to json.Marshal, which refuses it.
	far := &paykit.PaymentIntent{ID: "pi_far", ExpiresAt: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}
	if _, ok := appendPaymentSnapshot(nil, "", far); ok {
		t.Error("a year past 9999 was written")
	}
	if _, err := encodeSnapshot(snapshotDoc{PaymentIntent: far}); err == nil {
		t.Error("encodeSnapshot wrote a year past 9999")
	}
}
