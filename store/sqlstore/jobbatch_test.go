package sqlstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/store/sqlstore"
)

// TestEnqueueJobs checks the one-statement insert of several jobs: all new
// ones in one go, and, when one collides on its dedup key or id, each
// job's answer as EnqueueJob gives it, the others inserted.
func TestEnqueueJobs(t *testing.T) {
	for name, dsn := range sqlDSNs(t) {
		t.Run(name, func(t *testing.T) {
			is := is.New(t)
			ctx := context.Background()
			s := openWith(t, dsn, sqlstore.Options{})
			now := time.UnixMilli(1.8e12).UTC()
			job := func(id, dedup string) *paykit.Job {
				return &paykit.Job{ID: id, Kind: "k", DedupKey: dedup, RunAt: now, CreatedAt: now, Status: paykit.JobAvailable}
			}
			is.Equal(s.EnqueueJobs(ctx, []*paykit.Job{job("job_a", "a"), job("job_b", "")}), []error{nil, nil})
			errs := s.EnqueueJobs(ctx, []*paykit.Job{job("job_c", ""), job("job_d", "a"), job("job_b", ""), job("job_e", "e")})
			is.Equal(len(errs), 4)
			is.NoErr(errs[0])
			var ce *paykit.ConflictError
			is.True(errors.As(errs[1], &ce) && ce.Key == "dedup_key")
			is.True(errors.As(errs[2], &ce) && ce.Key == "id")
			is.NoErr(errs[3])
			for _, id := range []string{"job_a", "job_b", "job_c", "job_e"} {
				_, err := s.GetJob(ctx, id)
				is.NoErr(err)
			}
			_, err := s.GetJob(ctx, "job_d")
			is.True(errors.Is(err, paykit.ErrNotFound))
		})
	}
}
