package paykit_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/keyring"
	"github.com/paykit/paykit/paykittest"
	"github.com/paykit/paykit/store/memory"
)

// Jobs with a life: host job kinds, the attempt limit past which a job
// needs attention, completed jobs kept for the retention, and the purge on
// one instance at a time. Every Store: memory, SQLite and PostgreSQL.

var jobStores = []struct {
	name string
	open func(t *testing.T) paykit.Store
}{
	{"memory", func(t *testing.T) paykit.Store { return memory.New() }},
	{"sqlite", func(t *testing.T) paykit.Store { return paykittest.OpenStore(t, paykittest.SQLite) }},
	{"postgres", func(t *testing.T) paykit.Store { return paykittest.OpenStore(t, paykittest.Postgres) }},
}

func forEachJobStore(t *testing.T, fn func(t *testing.T, store paykit.Store)) {
	for _, b := range jobStores {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			fn(t, b.open(t))
		})
	}
}

func TestRegisterJobKind(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	clock := paykit.NewManualClock(time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC))
	svc := newWorkerService(t, memory.New(), clock, "w1")
	nop := func(context.Context, *paykit.Job) error { return nil }
	is.NoErr(svc.RegisterJobKind("host.report", nop, paykit.JobKindOptions{}))
	is.True(svc.RegisterJobKind("host.report", nop, paykit.JobKindOptions{}) != nil)     // twice
	is.True(svc.RegisterJobKind("payout.dispatch", nop, paykit.JobKindOptions{}) != nil) // paykit's own
	is.True(svc.RegisterJobKind("", nop, paykit.JobKindOptions{}) != nil)
	is.True(svc.RegisterJobKind("host.nil", nil, paykit.JobKindOptions{}) != nil)
	is.True(svc.RegisterJobKind("host.neg", nop, paykit.JobKindOptions{MaxAttempts: -1}) != nil)

	ctx := context.Background()
	is.True(svc.EnqueueJob(ctx, &paykit.Job{Kind: "host.unknown"}) != nil)    // not registered
	is.True(svc.EnqueueJob(ctx, &paykit.Job{Kind: "payout.dispatch"}) != nil) // not the host's
	page, err := svc.ListJobs(ctx, paykit.JobListParams{})
	is.NoErr(err)
	is.Equal(len(page.Data), 0)

	stats, err := svc.JobStats(ctx)
	is.NoErr(err)
	var kinds []string
	for _, k := range stats.Kinds {
		kinds = append(kinds, k.Kind)
	}
	is.True(strings.Contains(strings.Join(kinds, " "), "host.report")) // reported like paykit's own kinds
}

func TestHostJobsRunInTheCallersTransaction(t *testing.T) {
	t.Parallel()
	forEachJobStore(t, func(t *testing.T, store paykit.Store) {
		is := is.New(t)
		ctx := context.Background()
		clock := paykit.NewManualClock(time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC))
		svc := newWorkerService(t, store, clock, "w1")
		var got []string
		is.NoErr(svc.RegisterJobKind("host.report", func(_ context.Context, j *paykit.Job) error {
			got = append(got, j.TargetID+" "+string(j.Payload))
			return nil
		}, paykit.JobKindOptions{}))

		// Rolled back with the host's transaction: never runs.
		boom := errors.New("host write failed")
		err := store.InTx(ctx, func(tx paykit.Tx) error {
			if err := svc.EnqueueJobTx(ctx, tx, &paykit.Job{Kind: "host.report", TargetID: "rep_1", Payload: []byte(`{"n":1}`)}); err != nil {
				return err
			}
			return boom
		})
		is.True(errors.Is(err, boom))
		// Committed: runs once; the same dedup key again is no error and no
		// second job.
		is.NoErr(store.InTx(ctx, func(tx paykit.Tx) error {
			return svc.EnqueueJobTx(ctx, tx, &paykit.Job{Kind: "host.report", TargetID: "rep_2", Payload: []byte(`{"n":2}`), DedupKey: "report:2"})
		}))
		is.NoErr(svc.EnqueueJob(ctx, &paykit.Job{Kind: "host.report", TargetID: "rep_2b", DedupKey: "report:2"}))
		later := &paykit.Job{Kind: "host.report", TargetID: "rep_3", RunAt: clock.Now().Add(time.Hour)}
		is.NoErr(svc.EnqueueJob(ctx, later))
		is.True(later.ID != "")

		page, err := svc.ListJobs(ctx, paykit.JobListParams{State: paykit.JobAvailable})
		is.NoErr(err)
		is.Equal(len(page.Data), 2) // rep_2 due, rep_3 scheduled
		n, err := svc.ProcessDue(ctx)
		is.NoErr(err)
		is.Equal(n, 1)
		is.Equal(got, []string{`rep_2 {"n":2}`})

		clock.Advance(time.Hour)
		n, err = svc.ProcessDue(ctx)
		is.NoErr(err)
		is.Equal(n, 1)
		is.Equal(got, []string{`rep_2 {"n":2}`, "rep_3 "})
		done, err := store.GetJob(ctx, later.ID)
		is.NoErr(err)
		is.Equal(done.Status, paykit.JobCompleted)
		is.Equal(*done.CompletedAt, clock.Now())
		is.Equal(*done.AttemptedAt, clock.Now())
		is.Equal(done.Attempts, 1)
	})
}

// A job that keeps failing needs attention after its kind's MaxAttempts:
// it is flagged, counted and listed, and keeps being tried at the longest
// backoff interval until it completes.
func TestAttemptLimitNeedsAttention(t *testing.T) {
	t.Parallel()
	forEachJobStore(t, func(t *testing.T, store paykit.Store) {
		is := is.New(t)
		ctx := context.Background()
		clock := paykit.NewManualClock(time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC))
		svc, logs := newLoggedWorkerService(t, store, clock)
		var healthy atomic.Bool
		var runs atomic.Int32
		is.NoErr(svc.RegisterJobKind("host.sync", func(context.Context, *paykit.Job) error {
			runs.Add(1)
			if healthy.Load() {
				return nil
			}
			return errors.New("ledger service answered 503")
		}, paykit.JobKindOptions{MaxAttempts: 3}))
		job := &paykit.Job{Kind: "host.sync", TargetID: "sync_1"}
		is.NoErr(svc.EnqueueJob(ctx, job))

		stateOf := func() *paykit.Job {
			t.Helper()
			j, err := store.GetJob(ctx, job.ID)
			is.NoErr(err)
			return j
		}
		round := func() {
			t.Helper()
			n, err := svc.ProcessDue(ctx)
			is.NoErr(err)
			is.Equal(n, 1)
		}
		round()
		is.Equal(stateOf().Status, paykit.JobRetrying)
		clock.Advance(time.Minute)
		round()
		is.Equal(stateOf().Status, paykit.JobRetrying)
		is.True(!strings.Contains(logs.String(), "needs operator attention"))

		clock.Advance(time.Minute)
		round() // the third failure
		j := stateOf()
		is.Equal(j.Status, paykit.JobNeedsAttention)
		is.Equal(j.Attempts, 3)
		is.Equal(j.LastError, "handler_error: ledger service answered 503")
		wait := j.RunAt.Sub(clock.Now())
		is.True(wait >= 30*time.Minute && wait <= time.Hour) // the longest backoff interval
		is.Equal(strings.Count(logs.String(), "needs operator attention"), 1)

		page, err := svc.ListJobs(ctx, paykit.JobListParams{State: paykit.JobNeedsAttention})
		is.NoErr(err)
		is.Equal(len(page.Data), 1)
		is.Equal(page.Data[0].State, paykit.JobNeedsAttention)
		page, err = svc.ListJobs(ctx, paykit.JobListParams{State: paykit.JobRetrying})
		is.NoErr(err)
		is.Equal(len(page.Data), 0)
		stats, err := svc.JobStats(ctx)
		is.NoErr(err)
		is.Equal(kindStats(stats, "host.sync").NeedsAttention, 1)

		// Not given up: tried again at the longest interval, and flagged
		// without a second error line.
		clock.Advance(wait - time.Millisecond)
		n, err := svc.ProcessDue(ctx)
		is.NoErr(err)
		is.Equal(n, 0)
		clock.Advance(time.Millisecond)
		round()
		is.Equal(runs.Load(), int32(4))
		j = stateOf()
		is.Equal(j.Status, paykit.JobNeedsAttention)
		wait = j.RunAt.Sub(clock.Now())
		is.True(wait >= 30*time.Minute && wait <= time.Hour)
		is.Equal(strings.Count(logs.String(), "needs operator attention"), 1)

		// It completes at last, and is counted no more.
		healthy.Store(true)
		clock.Advance(time.Hour)
		round()
		is.Equal(stateOf().Status, paykit.JobCompleted)
		stats, err = svc.JobStats(ctx)
		is.NoErr(err)
		is.Equal(kindStats(stats, "host.sync"), paykit.JobKindStats{Kind: "host.sync"})
	})
}

func kindStats(s *paykit.JobStats, kind string) paykit.JobKindStats {
	for _, k := range s.Kinds {
		if k.Kind == kind {
			return k
		}
	}
	return paykit.JobKindStats{}
}

// Completed jobs are listed for JobRetention, then purged.
func TestCompletedJobsKeptForRetention(t *testing.T) {
	t.Parallel()
	forEachJobStore(t, func(t *testing.T, store paykit.Store) {
		is := is.New(t)
		ctx := context.Background()
		clock := paykit.NewManualClock(time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC))
		svc, err := paykit.New(paykit.Config{Store: store, Now: clock.Now, WorkerID: "w1", JobRetention: 48 * time.Hour,
			SigningKey: []byte("worker-tests-signing-key"), AccountKeys: keyring.Random()})
		is.NoErr(err)
		is.NoErr(svc.RegisterJobKind("host.ok", func(context.Context, *paykit.Job) error { return nil }, paykit.JobKindOptions{}))
		job := &paykit.Job{Kind: "host.ok"}
		is.NoErr(svc.EnqueueJob(ctx, job))
		_, err = svc.ProcessDue(ctx)
		is.NoErr(err)
		completedAt := clock.Now()

		completed := func() []string {
			t.Helper()
			page, err := svc.ListJobs(ctx, paykit.JobListParams{State: paykit.JobCompleted})
			is.NoErr(err)
			var ids []string
			for _, v := range page.Data {
				is.Equal(v.State, paykit.JobCompleted)
				ids = append(ids, v.ID)
			}
			return ids
		}
		is.Equal(completed(), []string{job.ID})
		pending, err := svc.ListJobs(ctx, paykit.JobListParams{})
		is.NoErr(err)
		is.Equal(len(pending.Data), 0) // the default list shows pending work only

		clock.Set(completedAt.Add(48 * time.Hour)) // not older than the retention yet
		_, err = svc.ProcessDue(ctx)
		is.NoErr(err)
		is.Equal(completed(), []string{job.ID})
		clock.Advance(time.Minute) // the next purge
		_, err = svc.ProcessDue(ctx)
		is.NoErr(err)
		is.Equal(completed(), []string(nil))
		_, err = store.GetJob(ctx, job.ID)
		is.True(errors.Is(err, paykit.ErrNotFound))
	})
}

// purgeTally counts one instance's purges of a shared Store.
type purgeTally struct {
	paykit.Store
	idem, jobs *atomic.Int32
}

func (p purgeTally) PurgeIdempotencyRecords(ctx context.Context, now time.Time) (int, error) {
	p.idem.Add(1)
	return p.Store.PurgeIdempotencyRecords(ctx, now)
}

func (p purgeTally) Queue() paykit.JobQueue { return queueTally{p.Store.Queue(), p.jobs} }

// queueTally counts one instance's purges of completed jobs.
type queueTally struct {
	paykit.JobQueue
	jobs *atomic.Int32
}

func (q queueTally) PurgeCompletedJobs(ctx context.Context, before time.Time) (int, error) {
	q.jobs.Add(1)
	return q.JobQueue.PurgeCompletedJobs(ctx, before)
}

// Of several instances on one Store, one purges per minute, not each of
// them every round.
func TestPurgeRunsOnOneInstance(t *testing.T) {
	t.Parallel()
	forEachJobStore(t, func(t *testing.T, store paykit.Store) {
		is := is.New(t)
		ctx := context.Background()
		clock := paykit.NewManualClock(time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC))
		var idem, jobs atomic.Int32
		var svcs []*paykit.Service
		for _, id := range []string{"a", "b", "c"} {
			svcs = append(svcs, newWorkerService(t, purgeTally{store, &idem, &jobs}, clock, id))
		}
		roundAll := func() {
			t.Helper()
			for _, svc := range svcs {
				_, err := svc.ProcessDue(ctx)
				is.NoErr(err)
			}
		}
		roundAll()
		roundAll()
		is.Equal(idem.Load(), int32(1))
		is.Equal(jobs.Load(), int32(1))
		for range 3 {
			clock.Advance(20 * time.Second)
			roundAll()
		}
		is.Equal(idem.Load(), int32(2)) // a minute on: one purge again
		is.Equal(jobs.Load(), int32(2))
		clock.Advance(30 * time.Second)
		roundAll()
		is.Equal(idem.Load(), int32(2))
	})
}

// Kinds may be registered while a worker round runs.
func TestRegisterJobKindWhileWorking(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	clock := paykit.NewManualClock(time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC))
	svc := newWorkerService(t, memory.New(), clock, "w1")
	is.NoErr(svc.RegisterJobKind("host.a", func(context.Context, *paykit.Job) error { return nil }, paykit.JobKindOptions{}))
	for range 20 {
		is.NoErr(svc.EnqueueJob(ctx, &paykit.Job{Kind: "host.a"}))
	}
	done := make(chan error)
	go func() {
		_, err := svc.ProcessDue(ctx)
		done <- err
	}()
	for i := range 20 {
		is.NoErr(svc.RegisterJobKind(fmt.Sprintf("host.b%d", i), func(context.Context, *paykit.Job) error { return nil }, paykit.JobKindOptions{}))
		_, err := svc.JobStats(ctx)
		is.NoErr(err)
	}
	is.NoErr(<-done)
}
