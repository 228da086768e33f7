// Command paykit-noop is paykit's side of bench/backoffice.sh's no-op job
// suite, the counterpart of river-anchor: paykit used as a library on a
// fresh PostgreSQL database (store/sqlstore), a host job kind whose handler
// does nothing, -n jobs enqueued in transactions of -batch jobs
// (Store().InTx and EnqueueJobTx), then Service.Run with the Service's
// defaults, timed from its start until the handler has run every job.
//
//	paykit-noop -db postgres://postgres@127.0.0.1:5432/perf_noop_pk?sslmode=disable -n 20000
//
// It uses only paykit's public API, so it measures whatever worker the
// repository has. It prints one line of key=value.
package main

import (
	"context"
	"crypto/rand"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"sync/atomic"
	"time"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/keyring"
	"github.com/paykit/paykit/store/sqlstore"
)

const kind = "bench.noop"

func main() {
	dsn := flag.String("db", "", "PostgreSQL URL of a fresh database")
	n := flag.Int("n", 20000, "jobs")
	batch := flag.Int("batch", 1000, "jobs per transaction")
	maxWait := flag.Duration("max", 10*time.Minute, "give up after")
	conc := flag.Int("concurrency", 0, "Config.WorkerConcurrency (0: the Service's default)")
	flag.Parse()
	if err := run(*dsn, *n, *batch, *conc, *maxWait); err != nil {
		fmt.Fprintln(os.Stderr, "paykit-noop:", err)
		os.Exit(1)
	}
}

func run(dsn string, n, batch, conc int, maxWait time.Duration) error {
	ctx := context.Background()
	st, err := sqlstore.Open(ctx, dsn)
	if err != nil {
		return err
	}
	defer st.Close()
	if err := st.Migrate(ctx); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	signing := make([]byte, 32)
	if _, err := rand.Read(signing); err != nil {
		return err
	}
	svc, err := paykit.New(paykit.Config{
		Store: st, SigningKey: signing, AccountKeys: keyring.Random(), WorkerConcurrency: conc,
		Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
	if err != nil {
		return err
	}
	var ran atomic.Int64
	done := make(chan struct{})
	err = svc.RegisterJobKind(kind, func(context.Context, *paykit.Job) error {
		if ran.Add(1) == int64(n) {
			close(done)
		}
		return nil
	}, paykit.JobKindOptions{})
	if err != nil {
		return err
	}

	t0 := time.Now()
	for i := 0; i < n; i += batch {
		err := svc.Store().InTx(ctx, func(tx paykit.Tx) error {
			for j := i; j < min(i+batch, n); j++ {
				if err := svc.EnqueueJobTx(ctx, tx, &paykit.Job{Kind: kind, TargetID: fmt.Sprintf("noop_%d", j)}); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("enqueue: %w", err)
		}
	}
	inserted := time.Since(t0)

	runCtx, stop := context.WithCancel(ctx)
	stopped := make(chan error, 1)
	t1 := time.Now()
	go func() { stopped <- svc.Run(runCtx) }()
	var worked time.Duration
	select {
	case <-done:
		worked = time.Since(t1)
	case <-time.After(maxWait):
		worked = time.Since(t1)
		fmt.Fprintf(os.Stderr, "paykit-noop: %d of %d jobs ran within %s\n", ran.Load(), n, maxWait)
	}
	stop()
	if err := <-stopped; err != nil {
		return fmt.Errorf("run: %w", err)
	}
	got := ran.Load()
	fmt.Printf("jobs=%d ran=%d insert_s=%.3f inserts_per_s=%.1f work_s=%.3f jobs_per_s=%.1f\n",
		n, got, inserted.Seconds(), float64(n)/inserted.Seconds(), worked.Seconds(), float64(got)/worked.Seconds())
	return nil
}
