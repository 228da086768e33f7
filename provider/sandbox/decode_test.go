package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
)

// decodeAsBefore is decode as it was before its quick path: a strict
// Decoder on the body.
func decodeAsBefore(body io.Reader, v any) error {
	dec := json.NewDecoder(io.LimitReader(body, maxBody+1))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("trailing data after the JSON value")
	}
	return nil
}

// TestDecodeAsBefore: decode answers every body, valid or not, with the
// value and the error the strict Decoder alone gave.
func TestDecodeAsBefore(t *testing.T) {
	create := `{"amount_minor":15000,"ccy":"MYR","country":"MY","channel":"fpx","payer":{"email":"a@example.com","name":"A"},"expires_at":"2026-11-24T23:00:00Z"}`
	bodies := []string{
		create, " " + create + "\n", create + " {}", create + "}", create + "]", create + " x",
		`{}`, ``, ` `, `null`, `[]`, `"x"`, `1`, `{`, `{"amount_minor":}`, `{"amount_minor":1,}`,
		`{"AMOUNT_MINOR":1}`, `{"Ccy":"MYR"}`, `{"amount_minor":1,"extra":2}`, `{"am\u006funt_minor":1}`,
		`{"amount_minor":"1"}`, `{"amount_minor":1.5}`, `{"amount_minor":1e2}`, `{"ccy":1}`,
		`{"payer":[]}`, `{"payer":{"a":1}}`, `{"payer":{"A":"1","a":"2"}}`, `{"expires_at":"yesterday"}`, `{"expires_at":null}`,
		`{"payment_key":"k","amount_minor":5,"ccy":"THB"}`, `{"beneficiary_account":"0001","bank":"BBL"}`,
		`{"ccy":"bad` + "\xff" + `"}`, `{"ccy":"MYR","ccy":"THB"}`,
		`{"amount_minor":1}` + strings.Repeat(" ", maxBody),
		`{"ccy":"` + strings.Repeat("x", maxBody) + `"}`,
	}
	types := []func() any{func() any { return new(paymentCreate) }, func() any { return new(payoutCreate) }, func() any { return new(refundCreate) }}
	for _, body := range bodies {
		for _, newV := range types {
			for _, broken := range []bool{false, true} {
				reader := func() io.Reader {
					if broken {
						return io.MultiReader(strings.NewReader(body), iotest.ErrReader(errors.New("connection reset")))
					}
					return iotest.HalfReader(strings.NewReader(body))
				}
				got, want := newV(), newV()
				r := httptest.NewRequest("POST", "/api/payments", reader())
				r.ContentLength = int64(len(body))
				gotErr, wantErr := decode(r, got), decodeAsBefore(reader(), want)
				if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) || !reflect.DeepEqual(got, want) {
					short := body
					if len(short) > 80 {
						short = short[:80] + "…"
					}
					t.Errorf("%T %q (read error %v):\ndecode %v %+v\nbefore %v %+v", got, short, broken, gotErr, got, wantErr, want)
				}
			}
		}
	}
}
