package memory_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/store/memory"
	"github.com/paykit/paykit/store/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, func(*testing.T) paykit.Store { return memory.New() })
}

// TestNoMapSharedWithCallers: the intent's maps, which its row, its
// events and its stored answer share inside the Store, are the Store's
// own: changing the maps written, or those read back, changes nothing
// stored.
func TestNoMapSharedWithCallers(t *testing.T) {
	ctx := context.Background()
	s := memory.New()
	scope := paykit.Scope{MerchantID: "mch_1", Environment: paykit.Test}
	now := time.Date(2026, 11, 24, 23, 0, 0, 0, time.UTC)
	pi := &paykit.PaymentIntent{ID: "pi_1", MerchantID: scope.MerchantID, Environment: scope.Environment,
		Status: paykit.PaymentProcessing, Amount: 100, Currency: "MYR", Country: "MY", MerchantReference: "r1",
		PaymentMethod: "FPX", Customer: map[string]string{"name": "A"}, ProviderAttempt: paykit.ProviderAttempt{ProviderOptions: map[string]string{"bank": "B"}},
		ExpiresAt: now.Add(time.Hour), CreatedAt: now, UpdatedAt: now}
	write := func(pi *paykit.PaymentIntent, n int) {
		t.Helper()
		err := s.InTx(ctx, func(tx paykit.Tx) error {
			if n == 0 {
				if err := tx.CreatePaymentIntent(ctx, pi); err != nil {
					return err
				}
				if err := tx.CreateIdempotencyRecord(ctx, &paykit.IdempotencyRecord{Scope: scope, Key: "k",
					State: paykit.IdempotencyComplete, Answer: &paykit.StoredAnswer{Kind: paykit.AnswerCreated, Resource: pi},
					CreatedAt: now, UpdatedAt: now, ExpiresAt: now.Add(time.Hour)}); err != nil {
					return err
				}
			} else if err := tx.UpdatePaymentIntent(ctx, pi); err != nil {
				return err
			}
			return tx.CreateEvent(ctx, &paykit.Event{ID: fmt.Sprint("evt_", n), MerchantID: scope.MerchantID,
				Environment: scope.Environment, Type: "payment_intent.processing", ObjectID: pi.ID, Resource: pi, CreatedAt: now})
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	read := func() []map[string]string {
		t.Helper()
		got, err := s.GetPaymentIntent(ctx, scope, "pi_1")
		if err != nil {
			t.Fatal(err)
		}
		r, err := s.GetIdempotencyRecord(ctx, scope, "k")
		if err != nil {
			t.Fatal(err)
		}
		maps := []map[string]string{got.Customer, got.ProviderOptions, r.Answer.Resource.(*paykit.PaymentIntent).Customer, r.Answer.Resource.(*paykit.PaymentIntent).ProviderOptions}
		for _, id := range []string{"evt_0", "evt_1"} {
			e, err := s.GetEvent(ctx, scope, id)
			if err != nil {
				t.Fatal(err)
			}
			maps = append(maps, e.Resource.(*paykit.PaymentIntent).Customer, e.Resource.(*paykit.PaymentIntent).ProviderOptions)
		}
		return maps
	}
	write(pi, 0)
	write(pi, 1) // the same maps again
	pi.Customer["name"], pi.ProviderOptions["bank"] = "changed", "changed"
	for _, m := range read() {
		m["name"], m["bank"] = "changed too", "changed too"
	}
	for i, m := range read() {
		if m["name"] == "changed" || m["name"] == "changed too" || m["bank"] == "changed" || m["bank"] == "changed too" {
			t.Errorf("map %d changed from outside the Store: %v", i, m)
		}
	}
}
