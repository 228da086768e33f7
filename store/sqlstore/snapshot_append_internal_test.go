package sqlstore

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/internal/shapes"
)

// A payment intent's snapshot is written as json.Marshal writes it, byte
// for byte, for intents of every shape. A field added to the intent
// changes json.Marshal's bytes and fails it.
func TestPaymentSnapshotAsEncodingJSON(t *testing.T) {
	intents := shapes.PaymentIntents()
	for _, p := range intents {
		for _, kind := range []paykit.AnswerKind{"", paykit.AnswerCreated} {
			want, err := json.Marshal(snapshotDoc{V: snapshotVersion, Kind: kind, PaymentIntent: p})
			if err != nil {
				t.Fatal(err)
			}
			got, ok := appendPaymentSnapshot(nil, kind, p)
			if !ok || !bytes.Equal(got, want) {
				t.Errorf("appendPaymentSnapshot (ok %t):\n%s\njson.Marshal:\n%s", ok, got, want)
			}
		}
	}
	if len(intents) < 60 {
		t.Fatalf("%d intents checked", len(intents))
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
