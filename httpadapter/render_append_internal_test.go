package httpadapter

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/internal/shapes"
)

// The payment intent's projection is written as json.Marshal writes it,
// byte for byte, for intents of every shape.
func TestPaymentIntentJSONAsEncodingJSON(t *testing.T) {
	view, _ := paykit.Projection(&paykit.PaymentIntent{})
	pit := reflect.TypeOf(view)
	field := func(name string) reflect.Type { f, _ := pit.FieldByName(name); return f.Type.Elem() }
	for typ, n := range map[reflect.Type]int{pit: 18, field("NextAction"): 11, field("Receipt"): 5} {
		if typ.NumField() != n {
			t.Fatalf("%s has %d fields; appendPaymentIntent writes %d", typ, typ.NumField(), n)
		}
	}
	intents := shapes.PaymentIntents()
	for _, pi := range intents {
		var want bytes.Buffer
		if err := json.NewEncoder(&want).Encode(project(pi, nil)); err != nil {
			t.Fatal(err)
		}
		if got := append(appendPaymentIntent(nil, pi), '\n'); !bytes.Equal(got, want.Bytes()) {
			t.Errorf("appendPaymentIntent:\n%s\nencoding/json:\n%s", got, want.Bytes())
		}
	}
	if len(intents) < 60 {
		t.Fatalf("%d intents checked", len(intents))
	}
	if paymentIntentOf(paykit.PaymentIntent{ID: "pi_v"}).ID != "pi_v" || paymentIntentOf((*paykit.PaymentIntent)(nil)) != nil || paymentIntentOf("pi") != nil {
		t.Error("paymentIntentOf does not pick the payment intents")
	}
}
