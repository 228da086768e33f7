package paykit_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/keyring"
)

// Job leases on every Store: a run whose lease lapsed and was taken over
// is fenced (no side effect, no end written), and a run whose lease is
// renewed keeps its job.

// lostLeases is how many of svc's runs of kind lost their lease.
func lostLeases(svc *paykit.Service, kind string) uint64 { return runCounts(svc, kind).LostLeases }

func TestLapsedLeaseFencesTheOldRun(t *testing.T) {
	t.Parallel()
	for _, checks := range []bool{true, false} {
		name := "handler checks the lease"
		if !checks {
			name = "handler ignores the lease"
		}
		t.Run(name, func(t *testing.T) {
			forEachJobStore(t, func(t *testing.T, store paykit.Store) {
				is := is.New(t)
				ctx := context.Background()
				clock := paykit.NewManualClock(time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC))
				old := newWorkerService(t, store, clock, "w-old")
				next := newWorkerService(t, store, clock, "w-next")
				var sideEffects atomic.Int32
				started, release := make(chan struct{}), make(chan struct{})
				var checked atomic.Value
				is.NoErr(old.RegisterJobKind("host.send", func(ctx context.Context, j *paykit.Job) error {
					close(started)
					<-release
					err := paykit.CheckJobLease(ctx)
					checked.Store(errors.Is(err, paykit.ErrLeaseLost))
					if checks && err != nil {
						return err
					}
					sideEffects.Add(1)
					return nil
				}, paykit.JobKindOptions{}))
				is.NoErr(next.RegisterJobKind("host.send", func(ctx context.Context, j *paykit.Job) error {
					is.NoErr(paykit.CheckJobLease(ctx))
					sideEffects.Add(1)
					return nil
				}, paykit.JobKindOptions{}))
				job := &paykit.Job{Kind: "host.send"}
				is.NoErr(old.EnqueueJob(ctx, job))

				done := make(chan error, 1)
				go func() { _, err := old.ProcessDue(ctx); done <- err }()
				<-started
				clock.Advance(2 * time.Minute) // the old run's lease lapses unrenewed
				n, err := next.ProcessDue(ctx)
				is.NoErr(err)
				is.Equal(n, 1)
				completedAt := clock.Now()
				clock.Advance(time.Second)
				close(release)
				is.NoErr(<-done)

				is.Equal(checked.Load(), true) // the old run was told
				want := int32(1)
				if !checks {
					want = 2 // its side effect happened, but not its end
				}
				is.Equal(sideEffects.Load(), want)
				got, err := store.GetJob(ctx, job.ID)
				is.NoErr(err)
				is.Equal(got.Status, paykit.JobCompleted)
				is.Equal(*got.CompletedAt, completedAt) // the new run's end
				is.Equal(got.Attempts, 2)
				is.Equal(lostLeases(old, "host.send"), uint64(1))
				is.Equal(lostLeases(next, "host.send"), uint64(0))
			})
		})
	}
}

func TestRenewedLeaseKeepsTheJob(t *testing.T) {
	t.Parallel()
	forEachJobStore(t, func(t *testing.T, store paykit.Store) {
		is := is.New(t)
		ctx := context.Background()
		clock := paykit.NewManualClock(time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC))
		owner := newWorkerService(t, store, clock, "w-owner")
		other := newWorkerService(t, store, clock, "w-other")
		paykit.SetLeaseRenewal(owner, 5*time.Millisecond)
		started, release := make(chan struct{}), make(chan struct{})
		var ran atomic.Int32
		is.NoErr(owner.RegisterJobKind("host.slow", func(ctx context.Context, j *paykit.Job) error {
			close(started)
			<-release
			ran.Add(1)
			return paykit.CheckJobLease(ctx)
		}, paykit.JobKindOptions{}))
		is.NoErr(other.RegisterJobKind("host.slow", func(context.Context, *paykit.Job) error {
			ran.Add(1)
			return nil
		}, paykit.JobKindOptions{}))
		job := &paykit.Job{Kind: "host.slow"}
		is.NoErr(owner.EnqueueJob(ctx, job))
		done := make(chan error, 1)
		go func() { _, err := owner.ProcessDue(ctx); done <- err }()
		<-started

		// Each step stays within the lease; the renewals carry it on.
		for range 4 {
			before := clock.Now()
			clock.Advance(40 * time.Second)
			waitFor(t, func() bool {
				j, err := store.GetJob(ctx, job.ID)
				is.NoErr(err)
				return j.LeaseUntil != nil && j.LeaseUntil.After(before.Add(time.Minute))
			})
			n, err := other.ProcessDue(ctx)
			is.NoErr(err)
			is.Equal(n, 0)
		}
		close(release)
		is.NoErr(<-done)
		is.Equal(ran.Load(), int32(1))
		got, err := store.GetJob(ctx, job.ID)
		is.NoErr(err)
		is.Equal(got.Status, paykit.JobCompleted)
		is.Equal(got.Attempts, 1)
		is.Equal(lostLeases(owner, "host.slow"), uint64(0))
	})
}

// Run starts a job enqueued while it waits at once, without waiting for
// its poll, and a job that hangs holds one slot, not the others.
func TestRunRefillsSlotsAndWakesOnEnqueue(t *testing.T) {
	t.Parallel()
	forEachJobStore(t, func(t *testing.T, store paykit.Store) {
		is := is.New(t)
		ctx, cancel := context.WithCancel(context.Background())
		clock := paykit.NewManualClock(time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC))
		svc, err := paykit.New(paykit.Config{Store: store, Now: clock.Now, WorkerID: "w1", WorkerConcurrency: 2,
			WorkerInterval: time.Hour, // no poll within the test: only wake-ups
			SigningKey:     []byte("worker-tests-signing-key"), AccountKeys: keyring.Random()})
		is.NoErr(err)
		hang := make(chan struct{})
		var quick atomic.Int32
		quickDone := make(chan struct{}, 16)
		is.NoErr(svc.RegisterJobKind("host.hang", func(ctx context.Context, _ *paykit.Job) error {
			select {
			case <-hang:
			case <-ctx.Done():
			}
			return nil
		}, paykit.JobKindOptions{}))
		is.NoErr(svc.RegisterJobKind("host.quick", func(context.Context, *paykit.Job) error {
			quick.Add(1)
			quickDone <- struct{}{}
			return nil
		}, paykit.JobKindOptions{}))
		done := make(chan error, 1)
		go func() { done <- svc.Run(ctx) }()

		is.NoErr(svc.EnqueueJob(ctx, &paykit.Job{Kind: "host.hang"}))
		for range 5 {
			is.NoErr(svc.EnqueueJob(ctx, &paykit.Job{Kind: "host.quick"}))
			select {
			case <-quickDone:
			case <-time.After(10 * time.Second):
				t.Fatal("a quick job waited behind the hanging one")
			}
		}
		is.Equal(quick.Load(), int32(5))
		close(hang)
		cancel()
		is.NoErr(<-done)
	})
}
