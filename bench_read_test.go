package paykit_test

import (
	"context"
	"fmt"
	"log/slog"
	"testing"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/internal/contract"
	"github.com/paykit/paykit/keyring"
)

// benchPayments makes a Service on each Store with n payment intents of
// mch_bench, and returns the Services and the intents' ids.
func benchPayments(b *testing.B, n int) (map[string]*paykit.Service, map[string][]string) {
	b.Helper()
	ctx := context.Background()
	stores := benchStores(b)
	svcs, ids := map[string]*paykit.Service{}, map[string][]string{}
	p := paykit.Principal{Scope: paykit.Scope{MerchantID: "mch_bench", Environment: paykit.Test}}
	for name, store := range stores {
		svc, err := paykit.New(paykit.Config{
			Store: store, Logger: slog.New(slog.DiscardHandler), Routing: fakeRouting, PublicURL: "https://pay.example/",
			Providers: map[string]paykit.Provider{"fake": newFakeProvider()}, SigningKey: benchSigningKey, AccountKeys: keyring.Random(),
		})
		if err != nil {
			b.Fatal(err)
		}
		for i := range n {
			ref := fmt.Sprintf("%s-%d", name, i)
			pi, _, err := svc.CreatePaymentIntent(ctx, p, "key-"+ref, fpx(5000, ref))
			if err != nil {
				b.Fatal(err)
			}
			ids[name] = append(ids[name], pi.ID)
		}
		svcs[name] = svc
	}
	return svcs, ids
}

// BenchmarkGetPaymentIntent measures GET /payment_intents/{id} in the Go
// API on each Store, over 500 intents.
func BenchmarkGetPaymentIntent(b *testing.B) {
	ctx := context.Background()
	svcs, ids := benchPayments(b, 500)
	p := paykit.Principal{Scope: paykit.Scope{MerchantID: "mch_bench", Environment: paykit.Test}}
	for _, name := range []string{"memory", "sqlite", "postgres"} {
		get := func(b *testing.B, i int) {
			if _, err := svcs[name].GetPaymentIntent(ctx, p, ids[name][i%len(ids[name])]); err != nil {
				b.Error(err)
			}
		}
		b.Run(name+"/serial", func(b *testing.B) {
			i := 0
			for b.Loop() {
				get(b, i)
				i++
			}
		})
		b.Run(name+"/parallel", func(b *testing.B) {
			b.RunParallel(func(pb *testing.PB) {
				i := 0
				for pb.Next() {
					get(b, i)
					i += 7
				}
			})
		})
	}
}

// BenchmarkListPaymentIntents measures GET /payment_intents in the Go API
// on each Store: the first page (20) and a page further on by its cursor,
// over 500 intents.
func BenchmarkListPaymentIntents(b *testing.B) {
	ctx := context.Background()
	svcs, _ := benchPayments(b, 500)
	p := paykit.Principal{Scope: paykit.Scope{MerchantID: "mch_bench", Environment: paykit.Test}}
	for _, name := range []string{"memory", "sqlite", "postgres"} {
		svc := svcs[name]
		first, err := svc.ListPaymentIntents(ctx, p, paykit.ListParams[paykit.PaymentStatus]{})
		if err != nil || len(first.Data) != contract.DefaultPageLimit || first.NextCursor == "" {
			b.Fatalf("first page: %v", err)
		}
		for _, page := range []struct {
			name   string
			params paykit.ListParams[paykit.PaymentStatus]
		}{
			{"first", paykit.ListParams[paykit.PaymentStatus]{}},
			{"next", paykit.ListParams[paykit.PaymentStatus]{PageParams: paykit.PageParams{Cursor: first.NextCursor}}},
		} {
			b.Run(name+"/"+page.name, func(b *testing.B) {
				for b.Loop() {
					got, err := svc.ListPaymentIntents(ctx, p, page.params)
					if err != nil || len(got.Data) != contract.DefaultPageLimit {
						b.Fatalf("list: %v", err)
					}
				}
			})
		}
	}
}
