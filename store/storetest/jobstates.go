package storetest

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/paykit/paykit"
)

// Jobs with a life: stored states and their transitions, completed jobs
// kept and then purged, and the named leases that let one instance at a
// time do shared work.

// stateIDs lists the ids of the jobs in state at now, newest first.
func stateIDs(t *testing.T, s paykit.Store, state paykit.JobState, now time.Time) []string {
	t.Helper()
	got, err := s.Queue().ListJobs(context.Background(), paykit.ListQuery[paykit.JobListParams]{Filter: paykit.JobListParams{State: state}}, now)
	if err != nil {
		t.Fatalf("list jobs %q: %v", state, err)
	}
	for _, j := range got {
		if !state.Matches(&j, now) {
			t.Errorf("job %s listed as %q is %q", j.ID, state, j.State(now))
		}
	}
	return jobIDs(got)
}

func testJobStates(t *testing.T, s paykit.Store) {
	is := is.New(t)
	ctx := context.Background()
	enqueue := func(id string, created, runAt time.Time, dedup string) {
		t.Helper()
		is.NoErr(s.EnqueueJob(ctx, &paykit.Job{ID: id, Kind: "payout.inquire", Scope: scopeA, TargetID: "po_" + id,
			DedupKey: dedup, RunAt: runAt, CreatedAt: created, Status: paykit.JobAvailable}))
	}
	claim := func(owner string, now time.Time, want ...string) []paykit.Job {
		t.Helper()
		got, err := s.Queue().ClaimJobs(ctx, paykit.ClaimParams{Owner: owner, Now: now, LeaseUntil: now.Add(time.Minute), Limit: 10})
		is.NoErr(err)
		is.Equal(jobIDs(got), want)
		return got
	}
	get := func(id string) *paykit.Job {
		t.Helper()
		j, err := s.GetJob(ctx, id)
		is.NoErr(err)
		return j
	}
	enqueue("job_money", base, base, "inquire:po_1")
	enqueue("job_done", at(time.Second), base, "")
	enqueue("job_later", at(2*time.Second), at(3*time.Hour), "")
	is.Equal(stateIDs(t, s, paykit.JobAvailable, base), []string{"job_later", "job_done", "job_money"})
	is.Equal(stateIDs(t, s, paykit.JobDue, base), []string{"job_done", "job_money"})

	// available -> running -> retrying
	c := claim("w1", at(time.Second), "job_done", "job_money")
	is.Equal(c[1].Status, paykit.JobRunning)
	is.Equal(*c[1].AttemptedAt, at(time.Second))
	is.NoErr(retryJob(ctx, s, "job_money", "w1", at(10*time.Second), "not_yet: provider outcome not final yet"))
	is.Equal(get("job_money").Status, paykit.JobRetrying)

	// running -> completed, kept with its time; listed only when asked for.
	is.NoErr(completeJob(ctx, s, "job_done", "w1", at(5*time.Second)))
	done := get("job_done")
	is.Equal(done.Status, paykit.JobCompleted)
	is.Equal(*done.CompletedAt, at(5*time.Second))
	is.Equal(*done.AttemptedAt, at(time.Second))
	now := at(6 * time.Second)
	is.Equal(stateIDs(t, s, "", now), []string{"job_later", "job_money"}) // pending only
	is.Equal(stateIDs(t, s, paykit.JobCompleted, now), []string{"job_done"})
	is.Equal(stateIDs(t, s, paykit.JobRetrying, now), []string{"job_money"})
	is.Equal(stateIDs(t, s, paykit.JobDue, now), []string(nil))
	is.True(errors.Is(retryJob(ctx, s, "job_done", "w1", now, "late"), paykit.ErrNotFound))
	is.True(errors.Is(flagJob(ctx, s, "job_done", "w1", now, "late"), paykit.ErrNotFound))

	// retrying -> needs attention: flagged, yet claimed again when due,
	// and still flagged while it runs and after its lease lapses.
	now = at(10 * time.Second)
	claim("w1", now, "job_money")
	is.NoErr(flagJob(ctx, s, "job_money", "w1", now.Add(time.Hour), "handler_error: provider answered 503"))
	flagged := get("job_money")
	is.Equal(flagged.Status, paykit.JobNeedsAttention)
	is.Equal(flagged.RunAt, now.Add(time.Hour))
	is.Equal(flagged.LastError, "handler_error: provider answered 503")
	is.Equal(flagged.Attempts, 2)
	is.True(errors.Is(flagJob(ctx, s, "job_money", "w1", now, "again"), paykit.ErrNotFound)) // lease released
	is.Equal(stateIDs(t, s, paykit.JobNeedsAttention, now), []string{"job_money"})
	is.Equal(stateIDs(t, s, paykit.JobRetrying, now), []string(nil))
	stats, err := s.Queue().JobStats(ctx, now)
	is.NoErr(err)
	is.Equal(stats, []paykit.JobKindStats{{Kind: "payout.inquire", Retrying: 1, NeedsAttention: 1}})

	claim("w2", now.Add(30*time.Minute)) // not before its time
	now = now.Add(time.Hour)
	again := claim("w2", now, "job_money")
	is.Equal(again[0].Status, paykit.JobNeedsAttention) // a claim keeps the flag
	is.Equal(again[0].Attempts, 3)
	is.Equal(stateIDs(t, s, paykit.JobRunning, now), []string{"job_money"})
	stats, err = s.Queue().JobStats(ctx, now)
	is.NoErr(err)
	is.Equal(stats, []paykit.JobKindStats{{Kind: "payout.inquire", Running: 1, NeedsAttention: 1}})
	lapsed := now.Add(2 * time.Minute) // w2 died
	is.Equal(stateIDs(t, s, paykit.JobNeedsAttention, lapsed), []string{"job_money"})
	is.Equal(stateIDs(t, s, paykit.JobRunning, lapsed), []string(nil))

	// A job that needs attention keeps its dedup key.
	err = s.EnqueueJob(ctx, &paykit.Job{ID: "job_dup", Kind: "payout.inquire", DedupKey: "inquire:po_1", RunAt: now, CreatedAt: now})
	is.True(errors.Is(err, paykit.ErrAlreadyExists))
	is.NoErr(s.ExpediteJob(ctx, "inquire:po_1", now.Add(-time.Minute)))
	is.Equal(get("job_money").RunAt, now.Add(-time.Minute))

	// needs attention -> completed: its outcome came at last.
	claim("w3", lapsed, "job_money")
	is.NoErr(completeJob(ctx, s, "job_money", "w3", lapsed))
	is.Equal(get("job_money").Status, paykit.JobCompleted)
	is.Equal(stateIDs(t, s, paykit.JobNeedsAttention, lapsed), []string(nil))
	is.Equal(stateIDs(t, s, paykit.JobCompleted, lapsed), []string{"job_done", "job_money"})
	stats, err = s.Queue().JobStats(ctx, lapsed)
	is.NoErr(err)
	is.Equal(stats, []paykit.JobKindStats{{Kind: "payout.inquire"}})                   // job_later, not due yet
	is.True(errors.Is(s.ExpediteJob(ctx, "inquire:po_1", lapsed), paykit.ErrNotFound)) // completed: no pending job has the key
	is.NoErr(s.EnqueueJob(ctx, &paykit.Job{ID: "job_next", Kind: "payout.inquire", DedupKey: "inquire:po_1", RunAt: lapsed, CreatedAt: lapsed}))
	claim("w3", at(3*time.Hour), "job_next", "job_later") // completed jobs are never claimed
}

func testPurgeCompletedJobs(t *testing.T, s paykit.Store) {
	is := is.New(t)
	ctx := context.Background()
	for _, id := range []string{"job_old", "job_edge", "job_new", "job_stuck", "job_fresh"} {
		is.NoErr(s.EnqueueJob(ctx, &paykit.Job{ID: id, Kind: "k", RunAt: base, CreatedAt: base}))
	}
	got, err := s.Queue().ClaimJobs(ctx, paykit.ClaimParams{Owner: "w1", Now: base, LeaseUntil: at(time.Minute), Limit: 10})
	is.NoErr(err)
	is.Equal(len(got), 5)
	is.NoErr(completeJob(ctx, s, "job_old", "w1", at(time.Second)))
	is.NoErr(completeJob(ctx, s, "job_edge", "w1", at(2*time.Second)))
	is.NoErr(completeJob(ctx, s, "job_new", "w1", at(3*time.Second)))
	is.NoErr(flagJob(ctx, s, "job_stuck", "w1", at(time.Hour), "handler_error: down")) // old, but not completed
	is.NoErr(retryJob(ctx, s, "job_fresh", "w1", at(time.Hour), "handler_error: down"))

	n, err := s.Queue().PurgeCompletedJobs(ctx, at(time.Second))
	is.NoErr(err)
	is.Equal(n, 0) // the bound is exclusive
	n, err = s.Queue().PurgeCompletedJobs(ctx, at(2*time.Second))
	is.NoErr(err)
	is.Equal(n, 1)
	_, err = s.GetJob(ctx, "job_old")
	is.True(errors.Is(err, paykit.ErrNotFound))
	is.Equal(stateIDs(t, s, paykit.JobCompleted, at(time.Hour)), []string{"job_new", "job_edge"})

	n, err = s.Queue().PurgeCompletedJobs(ctx, at(48*time.Hour))
	is.NoErr(err)
	is.Equal(n, 2)
	is.Equal(stateIDs(t, s, paykit.JobCompleted, at(time.Hour)), []string(nil))
	is.Equal(stateIDs(t, s, "", at(time.Minute)), []string{"job_stuck", "job_fresh"}) // pending jobs are never purged
	n, err = s.Queue().PurgeCompletedJobs(ctx, at(48*time.Hour))
	is.NoErr(err)
	is.Equal(n, 0)
}

func testLeases(t *testing.T, s paykit.Store) {
	is := is.New(t)
	ctx := context.Background()
	take := func(name, owner string, now time.Time) bool {
		t.Helper()
		ok, err := s.TakeLease(ctx, paykit.Lease{Name: name, Owner: owner, Now: now, Until: now.Add(time.Minute)})
		is.NoErr(err)
		return ok
	}
	is.True(take("purge", "a", base))
	is.True(!take("purge", "b", at(time.Second)))    // held by a
	is.True(!take("purge", "a", at(59*time.Second))) // a holds it; no renewal before it lapses
	is.True(take("other", "b", at(time.Second)))     // leases are by name
	is.True(take("purge", "b", at(time.Minute)))     // lapsed at its Until
	is.True(!take("purge", "a", at(time.Minute+time.Second)))

	// Of many instances asking at once, one takes it.
	var wins atomic.Int32
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ok, err := s.TakeLease(ctx, paykit.Lease{Name: "race", Owner: string(rune('a' + i)), Now: base, Until: at(time.Minute)})
			if err != nil {
				t.Errorf("take lease: %v", err)
			}
			if ok {
				wins.Add(1)
			}
		}()
	}
	wg.Wait()
	is.Equal(wins.Load(), int32(1))

	held := func(name string, now time.Time) bool {
		t.Helper()
		ok, err := s.LeaseHeld(ctx, name, now)
		is.NoErr(err)
		return ok
	}
	is.True(held("purge", at(time.Minute+time.Second))) // b's, until 2m
	is.True(!held("purge", at(2*time.Minute)))          // lapsed at its Until
	is.True(!held("never", base))                       // never taken
	n, err := s.PurgeLeases(ctx, at(2*time.Minute))     // "other" lapsed at 1m1s, "race" at 1m
	is.NoErr(err)
	is.Equal(n, 2)
	is.True(held("purge", at(time.Minute+time.Second))) // lapses at 2m: not before it, kept
	n, err = s.PurgeLeases(ctx, at(3*time.Minute))
	is.NoErr(err)
	is.Equal(n, 1)
	is.True(take("purge", "c", at(3*time.Minute))) // a purged name can be taken again
}

func waitJob(ctx context.Context, s paykit.Store, id, owner string, runAt time.Time) error {
	return endJob(ctx, s, id, owner, paykit.JobEnd{Status: paykit.JobWaiting, RunAt: runAt})
}

// testJobWaiting: a run that waits leaves the job waiting, without a last
// error (a failure's is cleared), listed and counted apart from retrying
// jobs while it waits and once it is due; a claim runs it again.
func testJobWaiting(t *testing.T, s paykit.Store) {
	is := is.New(t)
	ctx := context.Background()
	is.NoErr(s.EnqueueJob(ctx, &paykit.Job{ID: "job_w", Kind: "payment.inquire", Scope: scopeA, TargetID: "pi_1",
		DedupKey: "payment.inquire:pi_1", RunAt: base, CreatedAt: base}))
	claim := func(now time.Time) {
		t.Helper()
		got, err := s.Queue().ClaimJobs(ctx, paykit.ClaimParams{Owner: "w1", Now: now, LeaseUntil: now.Add(time.Minute), Limit: 10})
		is.NoErr(err)
		is.Equal(jobIDs(got), []string{"job_w"})
		is.Equal(got[0].Status, paykit.JobRunning)
	}
	stats := func(now time.Time) paykit.JobKindStats {
		t.Helper()
		got, err := s.Queue().JobStats(ctx, now)
		is.NoErr(err)
		is.Equal(len(got), 1)
		return got[0]
	}

	// A failure first, then a wait: the wait clears its error.
	claim(base)
	is.NoErr(retryJob(ctx, s, "job_w", "w1", at(time.Second), "handler_error: provider answered 502"))
	claim(at(time.Second))
	is.NoErr(waitJob(ctx, s, "job_w", "w1", at(30*time.Second)))
	j, err := s.GetJob(ctx, "job_w")
	is.NoErr(err)
	is.Equal(j.Status, paykit.JobWaiting)
	is.Equal(j.LastError, "")
	is.Equal(j.RunAt, at(30*time.Second))
	is.Equal(j.Attempts, 2)
	is.True(j.LeaseUntil == nil)

	for _, now := range []time.Time{at(10 * time.Second), at(30 * time.Second)} { // before and once due
		is.Equal(stateIDs(t, s, paykit.JobWaiting, now), []string{"job_w"})
		is.Equal(stateIDs(t, s, "", now), []string{"job_w"})
		for _, other := range []paykit.JobState{paykit.JobRetrying, paykit.JobDue, paykit.JobScheduled, paykit.JobAvailable, paykit.JobRunning, paykit.JobNeedsAttention} {
			is.Equal(stateIDs(t, s, other, now), []string(nil))
		}
	}
	is.Equal(stats(at(10*time.Second)), paykit.JobKindStats{Kind: "payment.inquire", Waiting: 1})
	is.Equal(stats(at(30*time.Second)), paykit.JobKindStats{Kind: "payment.inquire", Due: 1, Waiting: 1, OldestDue: ptr(at(30 * time.Second))})

	// Running again, it is running, not waiting; and may wait again.
	claim(at(30 * time.Second))
	is.Equal(stateIDs(t, s, paykit.JobRunning, at(40*time.Second)), []string{"job_w"})
	is.Equal(stateIDs(t, s, paykit.JobWaiting, at(40*time.Second)), []string(nil))
	is.Equal(stats(at(40*time.Second)), paykit.JobKindStats{Kind: "payment.inquire", Running: 1})
	is.NoErr(waitJob(ctx, s, "job_w", "w1", at(time.Hour)))
	is.Equal(stateIDs(t, s, paykit.JobWaiting, at(time.Minute)), []string{"job_w"})

	// A wait past the attempt limit is flagged like a failure.
	claim(at(time.Hour))
	is.NoErr(flagJob(ctx, s, "job_w", "w1", at(2*time.Hour), "not_yet: provider outcome not final yet"))
	is.Equal(stateIDs(t, s, paykit.JobNeedsAttention, at(time.Hour)), []string{"job_w"})
	is.Equal(stateIDs(t, s, paykit.JobWaiting, at(time.Hour)), []string(nil))
	is.Equal(stats(at(time.Hour)), paykit.JobKindStats{Kind: "payment.inquire", Retrying: 1, NeedsAttention: 1})
}

// testCompleteJobByDedupKey: a transaction completes the pending job of a
// dedup key whose purpose it met, with its other writes or not at all; a
// job under a live lease is left to its run, one whose lease lapsed is
// completed and its run fenced; the key is free for a new job at once.
func testCompleteJobByDedupKey(t *testing.T, s paykit.Store) {
	is := is.New(t)
	ctx := context.Background()
	enqueue := func(id, dedup string, runAt time.Time) {
		t.Helper()
		is.NoErr(s.EnqueueJob(ctx, &paykit.Job{ID: id, Kind: "payout.expire", Scope: scopeA, TargetID: "po_" + id,
			DedupKey: dedup, RunAt: runAt, CreatedAt: base}))
	}
	get := func(id string) *paykit.Job {
		t.Helper()
		j, err := s.GetJob(ctx, id)
		is.NoErr(err)
		return j
	}
	enqueue("job_hold", "payout.expire:po_1", at(72*time.Hour))
	enqueue("job_kept", "payout.expire:po_2", at(72*time.Hour))
	enqueue("job_run", "payment.inquire:pi_1", base)
	enqueue("job_other", "", base)

	// Committed with the transaction's other writes.
	now := at(time.Minute)
	is.NoErr(s.InTx(ctx, func(tx paykit.Tx) error {
		if err := tx.CompleteJobByDedupKey(ctx, "payout.expire:po_1", now); err != nil {
			return err
		}
		return tx.EnqueueJob(ctx, &paykit.Job{ID: "job_next", Kind: "payout.dispatch", DedupKey: "payout.dispatch:po_1", RunAt: at(5 * time.Minute), CreatedAt: now})
	}))
	done := get("job_hold")
	is.Equal(done.Status, paykit.JobCompleted)
	is.Equal(*done.CompletedAt, now)
	is.Equal(done.Attempts, 0)
	is.Equal(stateIDs(t, s, paykit.JobCompleted, now), []string{"job_hold"})
	// Its key is free at once; no such key, or one completed, is no error.
	enqueue("job_again", "payout.expire:po_1", at(72*time.Hour))
	is.NoErr(s.CompleteJobByDedupKey(ctx, "payout.expire:po_9", now))
	is.NoErr(s.CompleteJobByDedupKey(ctx, "", now))

	// Rolled back with its transaction.
	is.True(errors.Is(s.InTx(ctx, func(tx paykit.Tx) error {
		if err := tx.CompleteJobByDedupKey(ctx, "payout.expire:po_2", now); err != nil {
			return err
		}
		return errBoom
	}), errBoom))
	is.Equal(get("job_kept").Status, paykit.JobAvailable)

	// A run under a live lease finishes the job itself; once its lease
	// lapsed, the job is completed and the run fenced.
	got, err := s.Queue().ClaimJobs(ctx, paykit.ClaimParams{Owner: "w1", Now: now, LeaseUntil: at(2 * time.Minute), Limit: 10})
	is.NoErr(err)
	is.Equal(jobIDs(got), []string{"job_other", "job_run"})
	is.NoErr(s.CompleteJobByDedupKey(ctx, "payment.inquire:pi_1", at(90*time.Second)))
	is.Equal(get("job_run").Status, paykit.JobRunning)
	is.NoErr(s.CompleteJobByDedupKey(ctx, "payment.inquire:pi_1", at(2*time.Minute)))
	is.Equal(get("job_run").Status, paykit.JobCompleted)
	is.True(get("job_run").LeaseUntil == nil)
	is.True(errors.Is(completeJob(ctx, s, "job_run", "w1", at(2*time.Minute)), paykit.ErrNotFound)) // fenced
	is.NoErr(completeJob(ctx, s, "job_other", "w1", at(90*time.Second)))

	// Completed jobs are never claimed.
	got, err = s.Queue().ClaimJobs(ctx, paykit.ClaimParams{Owner: "w2", Now: at(100 * time.Hour), LeaseUntil: at(101 * time.Hour), Limit: 10})
	is.NoErr(err)
	is.Equal(jobIDs(got), []string{"job_next", "job_again", "job_kept"})
}
