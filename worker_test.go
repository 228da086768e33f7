package paykit_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/keyring"
	"github.com/paykit/paykit/store/memory"
)

// workerKeys are the account keys of every worker test Service: instances
// on one Store share their keys, as New checks.
var workerKeys = keyring.Random()

func newWorkerService(t *testing.T, store paykit.Store, clock *paykit.ManualClock, id string) *paykit.Service {
	t.Helper()
	s, err := paykit.New(paykit.Config{Store: store, Now: clock.Now, WorkerID: id, JobLease: time.Minute,
		SigningKey: []byte("worker-tests-signing-key"), AccountKeys: workerKeys})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// newLoggedWorkerService is newWorkerService with its log written to
// the returned buffer.
func newLoggedWorkerService(t *testing.T, store paykit.Store, clock *paykit.ManualClock) (*paykit.Service, *bytes.Buffer) {
	t.Helper()
	var logs bytes.Buffer
	s, err := paykit.New(paykit.Config{Store: store, Now: clock.Now, WorkerID: "w1", JobLease: time.Minute,
		SigningKey: []byte("worker-tests-signing-key"), AccountKeys: workerKeys,
		Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	return s, &logs
}

func TestBackoffGrowsAndIsCapped(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	for attempt, want := range map[int]time.Duration{1: time.Second, 2: 2 * time.Second, 5: 16 * time.Second, 30: time.Hour} {
		for range 20 {
			d := paykit.Backoff(attempt)
			is.True(d >= want/2 && d <= want) // jitter stays in the upper half
		}
	}
}

func TestProcessDueRunsRetriesAndRecoversPanics(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	clock := paykit.NewManualClock(time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC))
	store := memory.New()
	svc := newWorkerService(t, store, clock, "w1")

	var okRuns, flakyRuns, panicRuns atomic.Int32
	paykit.HandleJob(svc, "ok", func(context.Context, *paykit.Job) error { okRuns.Add(1); return nil })
	paykit.HandleJob(svc, "flaky", func(_ context.Context, j *paykit.Job) error {
		flakyRuns.Add(1)
		if j.Attempts < 3 {
			return errors.New("provider timeout")
		}
		return nil
	})
	paykit.HandleJob(svc, "panics", func(context.Context, *paykit.Job) error { panicRuns.Add(1); panic("bug") })

	is.NoErr(store.InTx(ctx, func(tx paykit.Tx) error {
		for _, kind := range []string{"ok", "flaky", "panics", "unknown"} {
			if err := paykit.EnqueueJob(ctx, svc, tx, &paykit.Job{Kind: kind, DedupKey: kind}); err != nil {
				return err
			}
		}
		// The same dedup key again is not an error: the work is already queued.
		return paykit.EnqueueJob(ctx, svc, tx, &paykit.Job{Kind: "ok", DedupKey: "ok"})
	}))

	n, err := svc.ProcessDue(ctx)
	is.NoErr(err)
	is.Equal(n, 4)
	is.Equal(okRuns.Load(), int32(1))
	is.Equal(flakyRuns.Load(), int32(1))
	is.Equal(panicRuns.Load(), int32(1)) // the panic did not escape

	n, err = svc.ProcessDue(ctx)
	is.NoErr(err)
	is.Equal(n, 0) // the failures wait for their backoff

	for range 3 {
		clock.Advance(2 * time.Second)
		_, err = svc.ProcessDue(ctx)
		is.NoErr(err)
	}
	is.Equal(flakyRuns.Load(), int32(3)) // succeeded on its third attempt
	is.Equal(okRuns.Load(), int32(1))    // completed jobs never run again
	_, err = store.GetJob(ctx, "missing")
	is.True(errors.Is(err, paykit.ErrNotFound))
}

func TestExpiredLeaseIsTakenOver(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	clock := paykit.NewManualClock(time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC))
	store := memory.New()
	crashed := newWorkerService(t, store, clock, "crashed")
	healthy := newWorkerService(t, store, clock, "healthy")
	var ran atomic.Int32
	paykit.HandleJob(healthy, "work", func(context.Context, *paykit.Job) error { ran.Add(1); return nil })

	var job paykit.Job
	is.NoErr(store.InTx(ctx, func(tx paykit.Tx) error {
		job = paykit.Job{Kind: "work"}
		return paykit.EnqueueJob(ctx, crashed, tx, &job)
	}))
	// The crashed worker claims the job and never finishes it.
	claimed, err := store.Queue().ClaimJobs(ctx, paykit.ClaimParams{Owner: "crashed", Now: clock.Now(), LeaseUntil: clock.Now().Add(time.Minute), Limit: 10})
	is.NoErr(err)
	is.Equal(len(claimed), 1)

	n, err := healthy.ProcessDue(ctx)
	is.NoErr(err)
	is.Equal(n, 0) // the lease is live
	clock.Advance(time.Minute)
	n, err = healthy.ProcessDue(ctx)
	is.NoErr(err)
	is.Equal(n, 1)
	is.Equal(ran.Load(), int32(1))
	done, err := store.GetJob(ctx, job.ID)
	is.NoErr(err)
	is.Equal(done.Status, paykit.JobCompleted) // kept, completed by the healthy worker
	is.Equal(*done.CompletedAt, clock.Now())
	is.Equal(done.Attempts, 2)
}

func TestRunStopsWithContext(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	clock := paykit.NewManualClock(time.Now())
	svc := newWorkerService(t, memory.New(), clock, "w")
	paykit.SetWorkerInterval(svc, time.Millisecond)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- svc.Run(ctx) }()
	cancel()
	is.NoErr(<-done)
}

// A job cut short by shutdown is not a failure: no warning, no error; its
// lease is given back and another instance runs it at once.
func TestShutdownInterruptsJobWithoutFailing(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	clock := paykit.NewManualClock(time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC))
	store := memory.New()
	var logs bytes.Buffer
	stopping, err := paykit.New(paykit.Config{Store: store, Now: clock.Now, WorkerID: "stopping", JobLease: time.Minute,
		Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))})
	is.NoErr(err)
	ctx, shutdown := context.WithCancel(context.Background())
	paykit.HandleJob(stopping, "work", func(ctx context.Context, _ *paykit.Job) error {
		shutdown() // the process is told to stop while the job runs
		<-ctx.Done()
		return ctx.Err()
	})
	var job paykit.Job
	is.NoErr(store.InTx(context.Background(), func(tx paykit.Tx) error {
		job = paykit.Job{Kind: "work"}
		return paykit.EnqueueJob(context.Background(), stopping, tx, &job)
	}))
	n, err := stopping.ProcessDue(ctx)
	is.True(err == nil || errors.Is(err, context.Canceled)) // the round ends with its context
	is.Equal(n, 1)
	is.True(!strings.Contains(logs.String(), "job failed")) // not logged as a failure
	left, err := store.GetJob(context.Background(), job.ID)
	is.NoErr(err)
	is.Equal(left.LeaseOwner, "") // the lease is given back
	is.True(left.LeaseUntil == nil)
	is.Equal(left.LastError, "")
	is.True(!left.RunAt.After(clock.Now())) // due again now

	next := newWorkerService(t, store, clock, "next")
	var ran atomic.Int32
	paykit.HandleJob(next, "work", func(context.Context, *paykit.Job) error { ran.Add(1); return nil })
	n, err = next.ProcessDue(context.Background()) // without waiting for the lease to lapse
	is.NoErr(err)
	is.Equal(n, 1)
	is.Equal(ran.Load(), int32(1))
}

// purgeCounter counts the Store's idempotency purges.
type purgeCounter struct {
	paykit.Store
	n atomic.Int32
}

func (p *purgeCounter) PurgeIdempotencyRecords(ctx context.Context, now time.Time) (int, error) {
	p.n.Add(1)
	return p.Store.PurgeIdempotencyRecords(ctx, now)
}

// Expired idempotency records are purged once a minute, not every round.
func TestIdempotencyPurgeOncePerMinute(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	clock := paykit.NewManualClock(time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC))
	store := &purgeCounter{Store: memory.New()}
	svc := newWorkerService(t, store, clock, "w")
	for range 3 {
		_, err := svc.ProcessDue(context.Background())
		is.NoErr(err)
	}
	is.Equal(store.n.Load(), int32(1)) // the first round only
	clock.Advance(59 * time.Second)
	_, err := svc.ProcessDue(context.Background())
	is.NoErr(err)
	is.Equal(store.n.Load(), int32(1))
	clock.Advance(time.Second)
	_, err = svc.ProcessDue(context.Background())
	is.NoErr(err)
	is.Equal(store.n.Load(), int32(2)) // a minute on
}
