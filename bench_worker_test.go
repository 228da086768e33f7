package paykit_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/keyring"
)

// BenchmarkWorkerRound measures the worker's cost per job on each Store:
// enqueue, claim, run (a handler that does nothing) and complete, in
// rounds of 50 jobs.
func BenchmarkWorkerRound(b *testing.B) {
	ctx := context.Background()
	stores := benchStores(b)
	for _, name := range []string{"memory", "sqlite", "postgres"} {
		clock := paykit.NewManualClock(time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC))
		svc, err := paykit.New(paykit.Config{Store: stores[name], Now: clock.Now, Logger: slog.New(slog.DiscardHandler),
			SigningKey: benchSigningKey, AccountKeys: keyring.Random()})
		if err != nil {
			b.Fatal(err)
		}
		paykit.HandleJob(svc, "bench", func(context.Context, *paykit.Job) error { return nil })
		const round = 50
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				if err := stores[name].InTx(ctx, func(tx paykit.Tx) error {
					for range round {
						if err := paykit.EnqueueJob(ctx, svc, tx, &paykit.Job{Kind: "bench"}); err != nil {
							return err
						}
					}
					return nil
				}); err != nil {
					b.Fatal(err)
				}
				n, err := svc.ProcessDue(ctx)
				if err != nil || n != round {
					b.Fatalf("ran %d jobs: %v", n, err)
				}
				clock.Advance(time.Second)
			}
		})
	}
}

// drain runs the worker's rounds until none finds work, and returns the
// time they took.
func drain(b *testing.B, svc *paykit.Service) time.Duration {
	b.Helper()
	start := time.Now()
	for {
		n, err := svc.ProcessDue(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		if n == 0 {
			return time.Since(start)
		}
	}
}

// BenchmarkWorkerRecovery measures how fast the worker resolves payments
// whose create answer never came, on each Store: per round, 50 creates
// time out (the fake Provider's …902), then the worker's inquiries find
// them pending and then succeeded. recoveries/s counts payments resolved
// per second of the worker's time (the creates are not counted in it).
func BenchmarkWorkerRecovery(b *testing.B) {
	ctx := context.Background()
	stores := benchStores(b)
	p := paykit.Principal{Scope: paykit.Scope{MerchantID: "mch_bench", Environment: paykit.Test}}
	for _, name := range []string{"memory", "sqlite", "postgres"} {
		clock := paykit.NewManualClock(time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC))
		svc, err := paykit.New(paykit.Config{Store: stores[name], Now: clock.Now, Logger: slog.New(slog.DiscardHandler),
			Routing: fakeRouting, PublicURL: "https://pay.example/", Providers: map[string]paykit.Provider{"fake": newFakeProvider()},
			SigningKey: benchSigningKey, AccountKeys: keyring.Random()})
		if err != nil {
			b.Fatal(err)
		}
		const round = 50
		n := 0
		b.Run(name, func(b *testing.B) {
			var worked time.Duration
			recovered := 0
			for b.Loop() {
				ids := make([]string, 0, round)
				for range round {
					n++
					ref := fmt.Sprintf("rec-%d", n)
					pi, _, err := svc.CreatePaymentIntent(ctx, p, "key-"+ref, fpx(5902, ref))
					if err != nil || pi.Status != paykit.PaymentProcessing {
						b.Fatalf("create: %v", err)
					}
					ids = append(ids, pi.ID)
				}
				for range 2 { // pending, then succeeded
					clock.Advance(2 * time.Second)
					worked += drain(b, svc)
				}
				for _, id := range ids {
					pi, err := svc.GetPaymentIntent(ctx, p, id)
					if err != nil || pi.Status != paykit.PaymentSucceeded {
						b.Fatalf("%s: %v, %v", id, pi.Status, err)
					}
				}
				recovered += round
			}
			b.ReportMetric(float64(recovered)/worked.Seconds(), "recoveries/s")
		})
	}
}

// BenchmarkWorkerWebhooks measures how fast the worker delivers webhooks,
// on each Store: per round, 50 payments each emit one event to the one
// endpoint (a local server answering 204 at once, through httpadapter's sender), and the worker signs
// and posts them. deliveries/s counts deliveries per second of the
// worker's time.
func BenchmarkWorkerWebhooks(b *testing.B) {
	ctx := context.Background()
	stores := benchStores(b)
	var received atomic.Int64
	sink := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		received.Add(1)
		w.WriteHeader(http.StatusNoContent)
	}))
	defer sink.Close()
	p := paykit.Principal{Scope: paykit.Scope{MerchantID: "mch_bench", Environment: paykit.Test}}
	for _, name := range []string{"memory", "sqlite", "postgres"} {
		clock := paykit.NewManualClock(time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC))
		svc, err := paykit.New(paykit.Config{Store: stores[name], Now: clock.Now, Logger: slog.New(slog.DiscardHandler),
			Routing: fakeRouting, PublicURL: "https://pay.example/", Providers: map[string]paykit.Provider{"fake": newFakeProvider()},
			SigningKey: benchSigningKey, AccountKeys: keyring.Random(), WebhookTimeout: 5 * time.Second})
		if err != nil {
			b.Fatal(err)
		}
		if err := stores[name].CreateMerchant(ctx, &paykit.Merchant{ID: "mch_bench", Name: "Bench", CreatedAt: svc.Now()}); err != nil {
			b.Fatal(err)
		}
		if _, err := svc.CreateWebhookEndpoint(ctx, "bench", "mch_bench", paykit.CreateWebhookEndpointRequest{Environment: "test", URL: sink.URL}); err != nil {
			b.Fatal(err)
		}
		const round = 50
		n := 0
		b.Run(name, func(b *testing.B) {
			var worked time.Duration
			delivered := 0
			for b.Loop() {
				before := received.Load()
				for range round {
					n++
					ref := fmt.Sprintf("wh-%d", n)
					if _, _, err := svc.CreatePaymentIntent(ctx, p, "key-"+ref, fpx(5000, ref)); err != nil {
						b.Fatal(err)
					}
				}
				clock.Advance(time.Second)
				worked += drain(b, svc)
				if got := received.Load() - before; got < round {
					b.Fatalf("%d deliveries, want %d", got, round)
				}
				delivered += round
			}
			b.ReportMetric(float64(delivered)/worked.Seconds(), "deliveries/s")
		})
	}
}
