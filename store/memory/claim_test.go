package memory_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/store/memory"
)

// TestClaimJobsTakesTheSoonest checks that a claim with fewer places than
// due jobs takes the soonest, in order (RunAt, then id), and leaves the
// rest and the jobs not yet due.
func TestClaimJobsTakesTheSoonest(t *testing.T) {
	ctx := context.Background()
	s := memory.New()
	base := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	var want []string
	for i, n := range rand.Perm(40) {
		j := &paykit.Job{ID: fmt.Sprintf("job_%02d", i), Kind: "k", RunAt: base.Add(time.Duration(n/2) * time.Second),
			CreatedAt: base, Status: paykit.JobAvailable}
		if err := s.EnqueueJob(ctx, j); err != nil {
			t.Fatal(err)
		}
		if n < 30 { // due at base+15s
			want = append(want, j.ID)
		}
	}
	slices.SortFunc(want, func(a, b string) int {
		ja, _ := s.GetJob(ctx, a)
		jb, _ := s.GetJob(ctx, b)
		if c := ja.RunAt.Compare(jb.RunAt); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	now := base.Add(14 * time.Second)
	var got []string
	for range 4 {
		jobs, err := s.Queue().ClaimJobs(ctx, paykit.ClaimParams{Owner: "w", Now: now, LeaseUntil: now.Add(time.Hour), Limit: 8})
		if err != nil {
			t.Fatal(err)
		}
		for _, j := range jobs {
			got = append(got, j.ID)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("claimed %v,\nwant %v", got, want)
	}
}

// TestClaimJobsFollowsRescheduleAndLease: a job claims when its RunAt, or
// its lapsed lease, comes; a rescheduled job at its new time only.
func TestClaimJobsFollowsRescheduleAndLease(t *testing.T) {
	ctx := context.Background()
	s := memory.New()
	base := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	claim := func(at time.Time) []string {
		t.Helper()
		jobs, err := s.Queue().ClaimJobs(ctx, paykit.ClaimParams{Owner: "w", Now: at, LeaseUntil: at.Add(time.Minute), Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, j := range jobs {
			ids = append(ids, j.ID)
		}
		return ids
	}
	for i := range 1000 { // jobs far off that no claim reaches
		if err := s.EnqueueJob(ctx, &paykit.Job{ID: fmt.Sprintf("job_later%04d", i), Kind: "k", RunAt: base.Add(time.Hour), CreatedAt: base}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.EnqueueJob(ctx, &paykit.Job{ID: "job_a", Kind: "k", RunAt: base.Add(time.Second), CreatedAt: base}); err != nil {
		t.Fatal(err)
	}
	if got := claim(base); len(got) != 0 {
		t.Fatalf("claimed %v before its time", got)
	}
	if got := claim(base.Add(time.Second)); !slices.Equal(got, []string{"job_a"}) {
		t.Fatalf("claimed %v, want job_a", got)
	}
	if got := claim(base.Add(30 * time.Second)); len(got) != 0 {
		t.Fatalf("claimed %v while leased", got)
	}
	if got := claim(base.Add(61 * time.Second)); !slices.Equal(got, []string{"job_a"}) { // the lease lapsed
		t.Fatalf("claimed %v, want job_a again", got)
	}
	lost, err := s.Queue().FinishJobs(ctx, "w", []paykit.JobEnd{{JobRun: paykit.JobRun{ID: "job_a", Attempts: 2},
		Status: paykit.JobRetrying, RunAt: base.Add(10 * time.Minute), LastError: "not yet"}})
	if err != nil || len(lost) > 0 {
		t.Fatal(lost, err)
	}
	if got := claim(base.Add(5 * time.Minute)); len(got) != 0 {
		t.Fatalf("claimed %v before its new time", got)
	}
	if got := claim(base.Add(10 * time.Minute)); !slices.Equal(got, []string{"job_a"}) {
		t.Fatalf("claimed %v at its new time, want job_a", got)
	}
}
