// Package shapes holds values of every shape an encoder must handle, for
// the tests that hold hand-written encoders to encoding/json.
package shapes

import (
	"maps"
	"time"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/internal/enums"
)

// PaymentIntents returns payment intents of every shape an encoder
// must handle: each kind of next action and none, with and without a
// receipt, completion and a pending cancel, maps nil, empty and full,
// every status, text that JSON escapes (quotes, HTML, U+2028, control
// bytes, invalid UTF-8), negative amounts, and times in another zone.
// They are new on each call.
func PaymentIntents() []*paykit.PaymentIntent {
	at := time.Date(2026, 11, 25, 4, 41, 2, 345678901, time.UTC)
	bkk := at.Add(time.Minute).In(time.FixedZone("", 7*3600))
	texts := []string{"", "ref-1", `q"b\s`, "<a>&b", "é\u2028\n\x01", "\xff"}
	tables := []map[string]string{nil, {}, {"name": "A", "email": "a@example.com"}, {"<k>": "v\"", "b": "", "a": "é"}}
	actions := []func() *paykit.NextAction{
		func() *paykit.NextAction { return nil },
		func() *paykit.NextAction {
			return &paykit.NextAction{Type: paykit.NextActionRedirectToURL, URL: "https://pay.example/continue?x=1&y=<2>", ExpiresAt: at}
		},
		func() *paykit.NextAction {
			return &paykit.NextAction{Type: paykit.NextActionDisplayQRCode, QRData: "000201010212", ImageURL: "https://pay.example/qr.png", ExpiresAt: bkk}
		},
		func() *paykit.NextAction {
			return &paykit.NextAction{Type: paykit.NextActionBankTransferInstructions, BankName: "Maybank", Account: "8812345678",
				Holder: "SANDBOX", Reference: "REF", Amount: 15000, Currency: "MYR", ExpiresAt: at}
		},
		func() *paykit.NextAction { return &paykit.NextAction{} },
	}
	var out []*paykit.PaymentIntent
	for i, s := range texts {
		for j, action := range actions {
			for k := range 2 {
				p := &paykit.PaymentIntent{
					ID: "pi_" + s, MerchantID: s, Environment: paykit.Test, Status: paykit.PaymentStatus(enums.PaymentStatuses[(i+j)%len(enums.PaymentStatuses)]),
					Amount: int64(i*j*1000 + k), Currency: "MYR", Country: s, MerchantReference: s, PaymentMethod: texts[(i+j)%len(texts)],
					Customer: maps.Clone(tables[(i+k)%len(tables)]), PaymentMethodOptions: maps.Clone(tables[(j+k)%len(tables)]), ReturnURL: s, CheckoutID: s,
					NextAction: action(), FailureCode: texts[(i+k)%len(texts)], ProviderAttempt: paykit.ProviderAttempt{Provider: s, ProviderOptions: maps.Clone(tables[i%len(tables)]),
						ProviderRef: s, Attempt: paykit.AttemptState(s), ProviderURL: s}, RefundedAmount: int64(i), RefundPendingAmount: -int64(j),
					ExpiresAt: at, CreatedAt: bkk, UpdatedAt: at, Version: int64(len(out)),
				}
				if k == 1 {
					done, asked := at.Add(time.Hour), bkk
					p.Receipt = &paykit.Receipt{Number: "R-1", PaidAt: bkk, Amount: 15000, Currency: "MYR", PaymentMethod: "FPX"}
					p.CompletedAt, p.CancelRequestedAt = &done, &asked
				}
				out = append(out, p)
			}
		}
	}
	return out
}
