package paykit

import (
	"reflect"
	"regexp"
	"strings"
	"testing"
)

// apiPaymentBody has the tags of httpadapter's body of POST
// /payment_intents (a string amount).
type apiPaymentBody struct {
	Amount               string            `json:"amount" validate:"required,amount"`
	Currency             string            `json:"currency" validate:"required,currency"`
	Country              string            `json:"country" validate:"required,country"`
	MerchantReference    string            `json:"merchant_reference" validate:"required,max=256"`
	PaymentMethod        string            `json:"payment_method" validate:"required,payment_method"`
	Customer             map[string]string `json:"customer" validate:"required,dive,keys,min=1,max=64,endkeys,max=512"`
	PaymentMethodOptions map[string]string `json:"payment_method_options,omitempty" validate:"omitempty,dive,keys,min=1,max=64,endkeys,max=256"`
	ReturnURL            string            `json:"return_url,omitempty" validate:"omitempty,max=2048,http_url"`
}

// TestQuickValidNeverLaxer changes one field at a time of valid requests
// to values around every rule's edge: whatever the quick path accepts,
// the validator and checkText accept too, and the valid requests
// themselves take the quick path.
func TestQuickValidNeverLaxer(t *testing.T) {
	t.Parallel()
	customer := func() map[string]string { return map[string]string{"name": "A", "email": "a@example.com"} }
	valid := []any{
		&CreatePaymentIntentRequest{Amount: 15000, Currency: "MYR", Country: "MY", MerchantReference: "r-1",
			PaymentMethod: "FPX", Customer: customer()},
		&CreatePaymentIntentRequest{Amount: 1, Currency: "THB", Country: "TH", MerchantReference: "r",
			PaymentMethod: "PROMPTPAY", Customer: map[string]string{"name": "B"}, PaymentMethodOptions: map[string]string{"bank": "x"}},
		&apiPaymentBody{Amount: "15000", Currency: "MYR", Country: "MY", MerchantReference: "r-1",
			PaymentMethod: "FPX", Customer: customer()},
		&CancelPaymentIntentRequest{},
		&CancelPaymentIntentRequest{Reason: "changed my mind"},
	}
	strs := []string{"", "x", "MY", "MYR", "MYRMYR", "MYRMYRM", "myr", "15000", "0", "0123", "1234567890123456789",
		"FPX", "PROMPTPAY", "test", "live", "a@example.com", "https://shop.example/done", "bad\xff", "nul\x00",
		strings.Repeat("x", 40), strings.Repeat("é", 64), strings.Repeat("x", 65), strings.Repeat("é", 256),
		strings.Repeat("x", 257), strings.Repeat("x", 512), strings.Repeat("x", 513), strings.Repeat("x", 2049)}
	ints := []int64{-1, 0, 1, 15000, MaxAmount, MaxAmount + 1}
	var maps []map[string]string
	maps = append(maps, nil, map[string]string{})
	for _, s := range strs {
		maps = append(maps, map[string]string{s: "v"}, map[string]string{"k": s}, map[string]string{"name": "A", s: s})
	}
	for _, v := range valid {
		if !quickValid(v) {
			t.Errorf("%#v: not on the quick path", v)
		}
		if err := validateSlow(v); err != nil {
			t.Fatalf("%#v: %v", v, err)
		}
		rv := reflect.ValueOf(v).Elem()
		for i := range rv.NumField() {
			f := rv.Field(i)
			old := reflect.ValueOf(f.Interface())
			try := func(nv reflect.Value) {
				f.Set(nv)
				if quickValid(v) {
					if err := validateSlow(v); err != nil {
						t.Errorf("%s = %#v: quick path accepts what Validate refuses: %v", rv.Type().Field(i).Name, nv, err)
					}
				}
			}
			switch {
			case f.Kind() == reflect.String:
				for _, s := range strs {
					try(reflect.ValueOf(s).Convert(f.Type()))
				}
			case f.Kind() == reflect.Int64:
				for _, n := range ints {
					try(reflect.ValueOf(n).Convert(f.Type()))
				}
			case f.Type() == mapStringStringType:
				for _, m := range maps {
					try(reflect.ValueOf(m))
				}
			}
			f.Set(old)
		}
	}
}

func TestRulesMatchTheirPatterns(t *testing.T) {
	t.Parallel()
	rules := []struct {
		pattern string
		fn      func(string) bool
	}{
		{`^[A-Z]{3,6}$`, ValidCurrency},
		{`^[A-Z]{2}$`, ValidCountry},
		{`^[1-9][0-9]{0,17}$`, validAmountText},
	}
	var inputs []string
	for _, s := range []string{"", "A", "Z", "a", "@", "[", "0", "1", "9", ":", "/", "é", "\n", "\x00"} {
		for _, t := range []string{"", "A", "Z", "a", "0", "9", "\n"} {
			for n := range 20 {
				inputs = append(inputs, s+strings.Repeat(t, n), strings.Repeat(t, n)+s)
			}
		}
	}
	for _, r := range rules {
		re := regexp.MustCompile(r.pattern)
		for _, in := range inputs {
			if got, want := r.fn(in), re.MatchString(in); got != want {
				t.Errorf("%s on %q: %v, the pattern says %v", r.pattern, in, got, want)
			}
		}
	}
}
