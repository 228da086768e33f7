package paykit_test

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/internal/pgtest"
	"github.com/paykit/paykit/store/memory"
	"github.com/paykit/paykit/store/sqlstore"
)

// benchStores opens each Store once for a benchmark.
func benchStores(b *testing.B) map[string]paykit.Store {
	b.Helper()
	ctx := context.Background()
	out := map[string]paykit.Store{"memory": memory.New()}
	for name, dsn := range map[string]string{
		"sqlite":   "sqlite:" + filepath.Join(b.TempDir(), "bench.db"),
		"postgres": pgtest.Database(b),
	} {
		s, err := sqlstore.Open(ctx, dsn)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { s.Close() })
		if err := s.Migrate(ctx); err != nil {
			b.Fatal(err)
		}
		out[name] = s
	}
	return out
}

// BenchmarkCreatePaymentIntent measures POST /payment_intents in the Go API
// on each Store: validation, routing, the idempotency record, the intent, the
// Provider call (an in-process Provider, so the figure is paykit's own cost)
// and the stored answer. "parallel" runs GOMAXPROCS creators at once.
func BenchmarkCreatePaymentIntent(b *testing.B) {
	ctx := context.Background()
	stores := benchStores(b)
	for _, name := range []string{"memory", "sqlite", "postgres"} {
		svc, err := paykit.New(paykit.Config{
			Store: stores[name], Logger: slog.New(slog.DiscardHandler), Routing: fakeRouting, PublicURL: "https://pay.example/",
			Providers: map[string]paykit.Provider{"fake": newFakeProvider()},
		})
		if err != nil {
			b.Fatal(err)
		}
		p := paykit.Principal{Scope: paykit.Scope{MerchantID: "mch_bench", Environment: paykit.Test}}
		var n atomic.Int64
		create := func(b *testing.B) {
			i := n.Add(1)
			ref := fmt.Sprintf("%s-%d", name, i)
			resp, err := svc.CreatePaymentIntent(ctx, p, "key-"+ref, fpx("5000", ref))
			if err != nil || resp.Status != 201 {
				b.Errorf("create: %v", err)
			}
		}
		b.Run(name+"/serial", func(b *testing.B) {
			for b.Loop() {
				create(b)
			}
		})
		b.Run(name+"/parallel", func(b *testing.B) {
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					create(b)
				}
			})
		})
	}
}
