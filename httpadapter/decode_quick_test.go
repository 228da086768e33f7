package httpadapter

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// TestDecodeQuickAgreesWithChecked decodes bodies, valid and not, both
// ways: decodeJSON (which tries decodeQuick first) answers the same
// error, or decodes the same value, as decodeJSONChecked alone; and the
// valid bodies take the quick path.
func TestDecodeQuickAgreesWithChecked(t *testing.T) {
	payment := `{"amount":"15000","currency":"MYR","country":"MY","merchant_reference":"r-1","payment_method":"FPX","customer":{"name":"A","email":"a@example.com"}}`
	quick := []string{
		validSample,
		payment,
		" \n" + payment + "\t\r\n",
		withField(t, "items", `[]`),
		withField(t, "items", `null`),
		withField(t, "recipient", `null`),
		withField(t, "metadata", `{"a\"b":"\u00e9\n","":"x"}`),
		withField(t, "amount", `"\u0031"`),
		withField(t, "items", `[{"sku":"a","quantity":1},{"quantity":-2,"sku":"b"}]`),
	}
	slow := []string{
		"", " ", "null", "[]", `"x"`, "1", "{", "}", `{"amount"}`, `{"amount":}`, `{"amount":"1",}`, `{,}`,
		payment + payment, payment + " x", payment + "{}",
		`{"AMOUNT":"1"}`, `{"Amount":"1"}`, `{"amount":"1","Amount":"2"}`, `{"am\u006funt":"1"}`,
		`{"amount":1}`, `{"amount":{}}`, `{"amount":[]}`, `{"amount":true}`,
		`{"customer":{"name":1}}`, `{"customer":[]}`, `{"customer":"x"}`, `{"customer":{"name":"A"},"customer":{"email":1}}`,
		`{"merchant_reference":"bad \xff"}`, `{"merchant_reference":"nul \u0000"}`, `{"x\u0000":1}`,
		withField(t, "Amount", `"1"`),
		withField(t, "recipient.bank", `"BBL"`),
		withField(t, "items.0.price", `"1"`),
		withField(t, "items.0.Quantity", `1`),
		withField(t, "items.0.quantity", `"2"`),
		withField(t, "items.0.quantity", `1.5`),
		`{"items":[{"sku":"a","quantity":1e2}]}`, `{"items":[{"sku":"a","quantity":99999999999999999999}]}`,
		withField(t, "items", `{}`),
		withField(t, "items", `[1]`),
		withField(t, "recipient", `"x"`),
		withField(t, "metadata.note", `1`),
		withField(t, "metadata", `[]`),
		withField(t, "customer", `{"name":"A","name":2}`),
		`{"items":[` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `]}`,
		`{"metadata":{"a":` + strings.Repeat(`{"a":`, 100) + `1` + strings.Repeat("}", 101) + `}`,
	}
	for _, c := range []struct {
		bodies []string
		quick  bool
	}{{quick, true}, {slow, false}} {
		for _, body := range c.bodies {
			for _, newDst := range []func() any{
				func() any { return new(sampleRequest) },
				func() any { return new(createPaymentIntentBody) },
			} {
				got, want := newDst(), newDst()
				gotErr, wantErr := decodeJSON([]byte(body), got), decodeJSONChecked([]byte(body), want)
				if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) || !reflect.DeepEqual(got, want) {
					t.Errorf("%T %s:\ndecodeJSON         %v %+v\ndecodeJSONChecked  %v %+v", got, body, gotErr, got, wantErr, want)
				}
				if wantErr == nil && c.quick != decodeQuick([]byte(body), newDst()) {
					t.Errorf("%T %s: quick %v, want %v", got, body, !c.quick, c.quick)
				}
			}
		}
	}
}
