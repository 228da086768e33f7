package paykit_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/paykit/paykit"
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
			SigningKey: benchSigningKey, AccountKeys: paykit.RandomKeyring()})
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
