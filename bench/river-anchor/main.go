// Command river-anchor is the reference of bench/backoffice.sh's no-op job
// suite: River v0.51.2 (riverpgxv5) on a fresh PostgreSQL database inserts
// -n jobs whose worker does nothing, in batches of -batch (InsertMany, one
// statement each), then starts a client with River's default settings
// (FetchCooldown 100 ms, FetchPollInterval 1 s) and one queue of -workers
// workers, and reports how fast the jobs are worked: from Start until the
// workers have run all of them.
//
// River has no default queue size. -workers defaults to 1,000, about the
// best value River's own benchmark found; at 100 (its documentation's
// example) one fetch of at most 100 jobs per 100 ms cooldown caps no-op
// jobs at 1,000/s.
//
//	river-anchor -db postgres://postgres@127.0.0.1:5432/perf_noop_river?sslmode=disable -n 20000
//
// It migrates River's tables into the database first. It prints one line
// of key=value.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"
)

// noopArgs are the arguments of the no-op job.
type noopArgs struct {
	I int `json:"i"`
}

func (noopArgs) Kind() string { return "bench_noop" }

// noopWorker counts the jobs it ran and closes done at the n-th.
type noopWorker struct {
	river.WorkerDefaults[noopArgs]
	n    int64
	ran  atomic.Int64
	done chan struct{}
}

func (w *noopWorker) Work(context.Context, *river.Job[noopArgs]) error {
	if w.ran.Add(1) == w.n {
		close(w.done)
	}
	return nil
}

func main() {
	dsn := flag.String("db", "", "PostgreSQL URL of a fresh database")
	n := flag.Int("n", 20000, "jobs")
	batch := flag.Int("batch", 1000, "jobs per InsertMany")
	maxWait := flag.Duration("max", 10*time.Minute, "give up after")
	workers := flag.Int("workers", 1000, "MaxWorkers of the default queue")
	flag.Parse()
	if err := run(*dsn, *n, *batch, *workers, *maxWait); err != nil {
		fmt.Fprintln(os.Stderr, "river-anchor:", err)
		os.Exit(1)
	}
}

func run(dsn string, n, batch, maxWorkers int, maxWait time.Duration) error {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, dsn)
	if err != nil {
		return err
	}
	defer pool.Close()
	driver := riverpgxv5.New(pool)
	migrator, err := rivermigrate.New(driver, nil)
	if err != nil {
		return err
	}
	if _, err := migrator.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	w := &noopWorker{n: int64(n), done: make(chan struct{})}
	workers := river.NewWorkers()
	river.AddWorker(workers, w)
	c, err := river.NewClient(driver, &river.Config{
		Queues:  map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: maxWorkers}},
		Workers: workers,
		Logger:  slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
	if err != nil {
		return err
	}

	t0 := time.Now()
	params := make([]river.InsertManyParams, 0, batch)
	for i := 0; i < n; i += batch {
		params = params[:0]
		for j := i; j < min(i+batch, n); j++ {
			params = append(params, river.InsertManyParams{Args: noopArgs{I: j}})
		}
		if _, err := c.InsertMany(ctx, params); err != nil {
			return fmt.Errorf("insert: %w", err)
		}
	}
	inserted := time.Since(t0)

	t1 := time.Now()
	if err := c.Start(ctx); err != nil {
		return err
	}
	var worked time.Duration
	select {
	case <-w.done:
		worked = time.Since(t1)
	case <-time.After(maxWait):
		worked = time.Since(t1)
		fmt.Fprintf(os.Stderr, "river-anchor: %d of %d jobs ran within %s\n", w.ran.Load(), n, maxWait)
	}
	stopCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := c.Stop(stopCtx); err != nil {
		return fmt.Errorf("stop: %w", err)
	}
	ran := w.ran.Load()
	fmt.Printf("workers=%d jobs=%d ran=%d insert_s=%.3f inserts_per_s=%.1f work_s=%.3f jobs_per_s=%.1f\n",
		maxWorkers, n, ran, inserted.Seconds(), float64(n)/inserted.Seconds(), worked.Seconds(), float64(ran)/worked.Seconds())
	return nil
}
