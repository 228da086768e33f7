package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/paykit/paykit"
)

// endJob ends owner's current run of job id as e says (its Attempts read
// from the Store): ErrNotFound when the run no longer holds the lease.
func endJob(ctx context.Context, s paykit.Store, id, owner string, e paykit.JobEnd) error {
	j, err := s.GetJob(ctx, id)
	if err != nil {
		return err
	}
	e.JobRun = paykit.JobRun{ID: id, Attempts: j.Attempts}
	lost, err := s.Queue().FinishJobs(ctx, owner, []paykit.JobEnd{e})
	if err != nil {
		return err
	}
	if len(lost) > 0 {
		return paykit.ErrNotFound
	}
	return nil
}

func completeJob(ctx context.Context, s paykit.Store, id, owner string, at time.Time) error {
	return endJob(ctx, s, id, owner, paykit.JobEnd{Status: paykit.JobCompleted, At: at})
}

func retryJob(ctx context.Context, s paykit.Store, id, owner string, runAt time.Time, lastError string) error {
	return endJob(ctx, s, id, owner, paykit.JobEnd{Status: paykit.JobRetrying, RunAt: runAt, LastError: lastError})
}

func flagJob(ctx context.Context, s paykit.Store, id, owner string, runAt time.Time, lastError string) error {
	return endJob(ctx, s, id, owner, paykit.JobEnd{Status: paykit.JobNeedsAttention, RunAt: runAt, LastError: lastError})
}

// testJobLeaseFencing: a run's lease is renewed while it is the job's, and
// a run whose lease lapsed and was claimed by a later run (of another
// owner or the same) can neither renew it nor write its end.
func testJobLeaseFencing(t *testing.T, s paykit.Store) {
	is := is.New(t)
	ctx := context.Background()
	q := s.Queue()
	for _, id := range []string{"job_a", "job_b", "job_c", "job_d"} {
		is.NoErr(s.EnqueueJob(ctx, &paykit.Job{ID: id, Kind: "k", RunAt: base, CreatedAt: base}))
	}
	claim := func(owner string, now time.Time, limit int) []paykit.Job {
		t.Helper()
		got, err := q.ClaimJobs(ctx, paykit.ClaimParams{Owner: owner, Now: now, LeaseUntil: now.Add(time.Minute), Limit: limit})
		is.NoErr(err)
		return got
	}
	first := claim("w1", base, 10)
	is.Equal(len(first), 4)
	run := func(j paykit.Job) paykit.JobRun { return paykit.JobRun{ID: j.ID, Attempts: j.Attempts} }
	runs := []paykit.JobRun{run(first[0]), run(first[1]), run(first[2]), run(first[3])}

	// Renewed while held: the lease moves on, so no one claims the jobs
	// after the first lease would have lapsed.
	lost, err := q.RenewJobLeases(ctx, "w1", runs, at(90*time.Second))
	is.NoErr(err)
	is.Equal(len(lost), 0)
	a, err := s.GetJob(ctx, "job_a")
	is.NoErr(err)
	is.Equal(*a.LeaseUntil, at(90*time.Second))
	is.Equal(len(claim("w2", at(80*time.Second), 10)), 0)
	lost, err = q.RenewJobLeases(ctx, "w2", runs[:1], at(3*time.Minute)) // not w2's
	is.NoErr(err)
	is.Equal(lost, runs[:1])

	// The leases lapse: w2 takes job_a, and w1 (the same owner) takes
	// job_b again in a new run.
	lapsed := at(2 * time.Minute)
	a2 := claim("w2", lapsed, 1)
	is.Equal(a2[0].ID, "job_a")
	is.Equal(a2[0].Attempts, 2)
	b2 := claim("w1", lapsed, 1)
	is.Equal(b2[0].ID, "job_b")

	// The first runs of job_a and job_b are fenced: no renewal, no end.
	lost, err = q.RenewJobLeases(ctx, "w1", runs, lapsed.Add(time.Minute))
	is.NoErr(err)
	is.Equal(lost, runs[:2])
	lost, err = q.FinishJobs(ctx, "w1", []paykit.JobEnd{
		{JobRun: runs[0], Status: paykit.JobCompleted, At: lapsed},
		{JobRun: runs[1], Status: paykit.JobRetrying, RunAt: at(time.Hour), LastError: "stale"},
		{JobRun: runs[2], Status: paykit.JobCompleted, At: lapsed},
		{JobRun: runs[3], Status: paykit.JobNeedsAttention, RunAt: at(time.Hour), LastError: "handler_error: down"},
	})
	is.NoErr(err)
	is.Equal(lost, runs[:2])
	a, err = s.GetJob(ctx, "job_a")
	is.NoErr(err)
	is.Equal(a.Status, paykit.JobRunning) // still w2's run
	is.Equal(a.LeaseOwner, "w2")
	b, err := s.GetJob(ctx, "job_b")
	is.NoErr(err)
	is.Equal(b.LastError, "")
	is.Equal(b.Attempts, 2)
	c, err := s.GetJob(ctx, "job_c")
	is.NoErr(err)
	is.Equal(c.Status, paykit.JobCompleted)
	is.Equal(*c.CompletedAt, lapsed)
	d, err := s.GetJob(ctx, "job_d")
	is.NoErr(err)
	is.Equal(d.Status, paykit.JobNeedsAttention)
	is.Equal(d.RunAt, at(time.Hour))
	is.Equal(d.LastError, "handler_error: down")
	is.True(d.LeaseUntil == nil)

	// The live runs end; an end is written once.
	end := []paykit.JobEnd{{JobRun: run(a2[0]), Status: paykit.JobCompleted, At: lapsed.Add(time.Second)}}
	lost, err = q.FinishJobs(ctx, "w2", end)
	is.NoErr(err)
	is.Equal(len(lost), 0)
	lost, err = q.FinishJobs(ctx, "w2", end)
	is.NoErr(err)
	is.Equal(lost, []paykit.JobRun{run(a2[0])})
	a, err = s.GetJob(ctx, "job_a")
	is.NoErr(err)
	is.Equal(a.Status, paykit.JobCompleted)
	is.Equal(*a.CompletedAt, lapsed.Add(time.Second))
	lost, err = q.RenewJobLeases(ctx, "w2", []paykit.JobRun{run(a2[0])}, at(time.Hour)) // completed
	is.NoErr(err)
	is.Equal(len(lost), 1)
}
