package memory

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/paykit/paykit"
)

// TestSamePaymentSeesEveryField: samePayment tells apart two intents that
// differ in any one field, so a snapshot is only ever shared with an
// equal row.
func TestSamePaymentSeesEveryField(t *testing.T) {
	now := time.Date(2026, 11, 25, 8, 0, 0, 0, time.UTC)
	base := paykit.PaymentIntent{}
	v := reflect.ValueOf(&base).Elem()
	// changed sets f to a value other than the one it holds (zero or not).
	var changed func(f reflect.Value)
	changed = func(f reflect.Value) {
		switch f.Kind() {
		case reflect.String:
			f.SetString(f.String() + "x")
		case reflect.Int64, reflect.Int:
			f.SetInt(f.Int() + 1)
		case reflect.Map:
			m := reflect.MakeMap(f.Type())
			for _, k := range f.MapKeys() {
				m.SetMapIndex(k, f.MapIndex(k))
			}
			m.SetMapIndex(reflect.ValueOf(fmt.Sprint("k", f.Len())), reflect.ValueOf("v"))
			f.Set(m)
		case reflect.Pointer:
			p := reflect.New(f.Type().Elem())
			if !f.IsNil() {
				p.Elem().Set(f.Elem())
				if p.Elem().Type() == reflect.TypeFor[time.Time]() {
					p.Elem().Set(reflect.ValueOf(p.Elem().Interface().(time.Time).Add(time.Second)))
				} else {
					changed(p.Elem().Field(0))
				}
			}
			f.Set(p)
		case reflect.Struct:
			if f.Type() == reflect.TypeFor[time.Time]() {
				f.Set(reflect.ValueOf(now.Add(time.Duration(f.Interface().(time.Time).Unix()))))
				return
			}
			t.Fatalf("no way to change a %s", f.Type())
		default:
			t.Fatalf("no way to change a %s", f.Type())
		}
	}
	// The fields to change: those of embedded structs (ProviderAttempt) one by one.
	var fields [][]int
	for _, f := range reflect.VisibleFields(v.Type()) {
		if !f.Anonymous {
			fields = append(fields, f.Index)
		}
	}
	for _, i := range fields {
		changed(v.FieldByIndex(i)) // every field set, so a second change differs from a set value
	}
	c := base
	if !samePayment(&base, &c) {
		t.Fatal("an intent differs from its copy")
	}
	for _, i := range fields {
		for _, from := range []paykit.PaymentIntent{base, {}} {
			other := from
			changed(reflect.ValueOf(&other).Elem().FieldByIndex(i))
			if samePayment(&from, &other) || samePayment(&other, &from) {
				t.Errorf("a change of %s goes unseen", v.Type().FieldByIndex(i).Name)
			}
		}
	}
	empty, nilMaps := paykit.PaymentIntent{Customer: map[string]string{}}, paykit.PaymentIntent{}
	if samePayment(&empty, &nilMaps) {
		t.Error("an empty map is taken for a nil one")
	}
}

// TestSnapshotsShareTheRow: an event's and a stored answer's intent equal
// to the row are that row, not copies; a later update leaves them as
// they were.
func TestSnapshotsShareTheRow(t *testing.T) {
	ctx := context.Background()
	s := New()
	scope := paykit.Scope{MerchantID: "mch_1", Environment: paykit.Test}
	now := time.Date(2026, 11, 25, 8, 0, 0, 0, time.UTC)
	pi := &paykit.PaymentIntent{ID: "pi_1", MerchantID: scope.MerchantID, Environment: scope.Environment,
		Status: paykit.PaymentProcessing, Amount: 100, Currency: "MYR", Country: "MY", MerchantReference: "r1",
		PaymentMethod: "FPX", Customer: map[string]string{"name": "A"}, CreatedAt: now, UpdatedAt: now}
	err := s.InTx(ctx, func(tx paykit.Tx) error {
		if err := tx.CreatePaymentIntent(ctx, pi); err != nil {
			return err
		}
		if err := tx.CreateEvent(ctx, &paykit.Event{ID: "evt_1", MerchantID: scope.MerchantID, Environment: scope.Environment,
			Type: "payment_intent.processing", ObjectID: pi.ID, Resource: pi, CreatedAt: now}); err != nil {
			return err
		}
		return tx.CreateIdempotencyRecord(ctx, &paykit.IdempotencyRecord{Scope: scope, Key: "k", State: paykit.IdempotencyComplete,
			Answer: &paykit.StoredAnswer{Kind: paykit.AnswerCreated, Resource: pi}, CreatedAt: now, UpdatedAt: now})
	})
	if err != nil {
		t.Fatal(err)
	}
	row := s.d.payments.rows["pi_1"]
	if s.d.events["evt_1"].Resource != paykit.Resource(row) || s.d.idempotency[refKey{scope, "k"}].Answer.Resource != paykit.Resource(row) {
		t.Fatal("a snapshot equal to the row is a copy of it")
	}

	pi.Status = paykit.PaymentSucceeded
	if err := s.InTx(ctx, func(tx paykit.Tx) error { return tx.UpdatePaymentIntent(ctx, pi) }); err != nil {
		t.Fatal(err)
	}
	e, err := s.GetEvent(ctx, scope, "evt_1")
	if err != nil {
		t.Fatal(err)
	}
	if e.Resource.(*paykit.PaymentIntent).Status != paykit.PaymentProcessing || e.Resource.(*paykit.PaymentIntent).Version != 0 {
		t.Errorf("the event's intent changed with the row: %s, version %d", e.Resource.(*paykit.PaymentIntent).Status, e.Resource.(*paykit.PaymentIntent).Version)
	}
	stale := *pi
	stale.Status = paykit.PaymentFailed // not what the row holds: copied
	err = s.InTx(ctx, func(tx paykit.Tx) error {
		return tx.CreateEvent(ctx, &paykit.Event{ID: "evt_2", MerchantID: scope.MerchantID, Environment: scope.Environment,
			Type: "payment_intent.failed", ObjectID: pi.ID, Resource: &stale, CreatedAt: now})
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := s.d.events["evt_2"].Resource.(*paykit.PaymentIntent); got == s.d.payments.rows["pi_1"] || got.Status != paykit.PaymentFailed {
		t.Error("a snapshot unlike the row was not kept as written")
	}
}
