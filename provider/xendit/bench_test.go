package xendit_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/internal/answertest"
	"github.com/paykit/paykit/keyring"
	"github.com/paykit/paykit/provider/xendit"
	"github.com/paykit/paykit/provider/xendit/xenditfake"
	"github.com/paykit/paykit/store/memory"
)

// BenchmarkCreatePaymentIntent measures POST /payment_intents in the Go
// API on the memory Store with a Touch 'n Go route to the Xendit adapter,
// which calls xenditfake over loopback HTTP: paykit's create (validation,
// routing, the idempotency record, the intent and its job, the stored
// answer) plus the adapter's two requests (the lookup by reference_id and
// the create) and the fake's work. "parallel" runs GOMAXPROCS creators
// at once.
func BenchmarkCreatePaymentIntent(b *testing.B) {
	ctx := context.Background()
	f := newFake(xenditfake.Options{})
	srv := httptest.NewServer(f)
	defer srv.Close()
	route, _ := xendit.Route("TNG", "MY")
	route.Environment, route.Provider = paykit.Test, xendit.Name
	svc, err := paykit.New(paykit.Config{
		Store: memory.New(), Logger: slog.New(slog.DiscardHandler), PublicURL: "https://pay.example/",
		Routing:    paykit.Routing{Payments: []paykit.PaymentRoute{route}},
		Providers:  map[string]paykit.Provider{xendit.Name: adapter(b, srv.URL, xendit.DefaultTimeout, nil)},
		SigningKey: []byte("paykit-benchmark-signing-key-32b"), AccountKeys: keyring.Random(),
	})
	if err != nil {
		b.Fatal(err)
	}
	p := paykit.Principal{Scope: paykit.Scope{MerchantID: "mch_bench", Environment: paykit.Test}}
	var n atomic.Int64
	create := func(b *testing.B) {
		ref := fmt.Sprintf("order-%d", n.Add(1))
		resp, err := answertest.From(svc.CreatePaymentIntent(ctx, p, "key-"+ref, paykit.CreatePaymentIntentRequest{
			Amount: 15000, Currency: "MYR", Country: "MY", MerchantReference: ref, PaymentMethod: "TNG",
			Customer: map[string]string{"name": "Aisyah"},
		}))
		if err != nil || resp.Status != 201 {
			b.Errorf("create: %v %+v", err, resp)
		}
	}
	b.Run("memory/serial", func(b *testing.B) {
		for b.Loop() {
			create(b)
		}
	})
	b.Run("memory/parallel", func(b *testing.B) {
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				create(b)
			}
		})
	})
}
