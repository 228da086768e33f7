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
		jobs, err := s.ClaimJobs(ctx, paykit.ClaimParams{Owner: "w", Now: now, LeaseUntil: now.Add(time.Hour), Limit: 8})
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
