package paykit

import (
	"context"
	"time"
)

// Test-only access to unexported worker internals.

func HandleJob(s *Service, kind string, h JobHandler) {
	s.handle(kind, h, defaultJobTimeout, JobPriorityDefault)
}

// SetLeaseRenewal makes s renew its runs' leases every d of real time.
func SetLeaseRenewal(s *Service, d time.Duration) { s.runs.every = d }

func EnqueueJob(ctx context.Context, s *Service, tx Tx, j *Job) error { return s.enqueue(ctx, tx, j) }

func SetWorkerInterval(s *Service, d time.Duration) { s.interval = d }

// Backoff is the delay before retry number attempts (1-based).
func Backoff(attempts int) time.Duration { return backoff(attempts) }

// DefaultMaxAttempts is the attempt limit of a job kind that sets none.
const DefaultMaxAttempts = defaultMaxAttempts
