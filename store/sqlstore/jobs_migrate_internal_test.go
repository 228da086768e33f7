package sqlstore

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/paykit/paykit"
)

// TestJobStatesMigration upgrades a database whose jobs predate migration
// 0012: jobs that ran before become retrying, the others available, and
// they keep their dedup keys.
func TestJobStatesMigration(t *testing.T) {
	t.Parallel()
	onOldSchemas(t, 12, func(t *testing.T, s *Store) {
		is := is.New(t)
		ctx := context.Background()
		runAt := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		for _, stmt := range []string{
			`INSERT INTO jobs (id, kind, merchant_id, environment, target_id, dedup_key, run_at, attempts, lease_owner, last_error, created_at, version)
			VALUES ('job_new', 'payout.dispatch', 'mch_1', 'test', 'po_1', 'dispatch:po_1', ?, 0, '', '', ?, 0)`,
			`INSERT INTO jobs (id, kind, merchant_id, environment, target_id, dedup_key, run_at, attempts, lease_owner, last_error, created_at, version)
			VALUES ('job_old', 'payout.inquire', 'mch_1', 'test', 'po_2', 'inquire:po_2', ?, 3, '', 'not_yet: provider outcome not final yet', ?, 4)`,
		} {
			_, err := s.db.ExecContext(ctx, stmt, runAt, runAt)
			is.NoErr(err)
		}
		is.NoErr(s.Migrate(ctx))

		fresh, err := s.GetJob(ctx, "job_new")
		is.NoErr(err)
		is.Equal(fresh.Status, paykit.JobAvailable)
		is.True(fresh.AttemptedAt == nil && fresh.CompletedAt == nil)
		old, err := s.GetJob(ctx, "job_old")
		is.NoErr(err)
		is.Equal(old.Status, paykit.JobRetrying)
		is.Equal(old.Attempts, 3)
		err = s.EnqueueJob(ctx, &paykit.Job{ID: "job_dup", Kind: "payout.inquire", DedupKey: "inquire:po_2", RunAt: runAt, CreatedAt: runAt})
		is.True(errors.Is(err, paykit.ErrAlreadyExists))
		claimed, err := s.Queue().ClaimJobs(ctx, paykit.ClaimParams{Owner: "w1", Now: runAt, LeaseUntil: runAt.Add(time.Minute), Limit: 10})
		is.NoErr(err)
		is.Equal(len(claimed), 2)
	})
}
