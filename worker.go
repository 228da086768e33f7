package paykit

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
)

// enqueue writes a job in tx, to run at runAt. A job with the same DedupKey
// already pending is not an error: the work is already scheduled.
func (s *Service) enqueue(ctx context.Context, tx Tx, j *Job) error {
	s.jobDefaults(j)
	return enqueued(j, tx.EnqueueJob(ctx, j))
}

// enqueued is the answer of enqueue given the Store's: a deduplicated job
// already pending is not an error.
func enqueued(j *Job, err error) error {
	if j.DedupKey != "" && errors.Is(err, ErrAlreadyExists) {
		return nil
	}
	return err
}

// jobDefaults fills in j's id, times and status.
func (s *Service) jobDefaults(j *Job) {
	if j.ID == "" {
		j.ID = s.newID("job")
	}
	if j.CreatedAt.IsZero() {
		j.CreatedAt = s.Now()
	}
	if j.RunAt.IsZero() {
		j.RunAt = j.CreatedAt
	}
	if j.Status == "" {
		j.Status = JobAvailable
	}
}

// enqueueSoon is enqueue for work that should run at j.RunAt even when the
// same deduplicated job is already scheduled later.
func (s *Service) enqueueSoon(ctx context.Context, tx Tx, j *Job) error {
	if err := s.enqueue(ctx, tx, j); err != nil {
		return err
	}
	if j.DedupKey == "" {
		return nil
	}
	err := tx.ExpediteJob(ctx, j.DedupKey, j.RunAt)
	if errors.Is(err, ErrNotFound) {
		return nil
	}
	return err
}

// Run performs background work until ctx ends: every WorkerInterval it runs
// ProcessDue until nothing is due. It returns nil when ctx is cancelled.
// Several instances may run against one shared Store; leases keep them from
// running the same job at once.
func (s *Service) Run(ctx context.Context) error {
	t := time.NewTicker(s.interval)
	defer t.Stop()
	for {
		for {
			n, err := s.ProcessDue(ctx)
			if err != nil && ctx.Err() == nil {
				s.log.ErrorContext(ctx, "background work failed", "err", err)
			}
			if n == 0 || err != nil {
				break
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// ProcessDue runs one round of background work: it claims the jobs that are
// due now, runs each once (WorkerConcurrency at a time), and, at most once
// a minute across every instance on the Store, purges expired idempotency
// records and jobs completed longer than JobRetention ago. It returns how
// many jobs it ran, after all of them ended. Tests call it to drive the
// worker step by step.
func (s *Service) ProcessDue(ctx context.Context) (int, error) {
	now := s.Now()
	jobs, err := s.store.ClaimJobs(ctx, ClaimParams{Owner: s.workerID, Now: now, LeaseUntil: now.Add(s.lease), Limit: 50})
	if err != nil {
		return 0, fmt.Errorf("claim jobs: %w", err)
	}
	var (
		mu   sync.Mutex
		errs []error
		g    errgroup.Group
	)
	g.SetLimit(s.concurrency)
	for i := range jobs {
		g.Go(func() error {
			if err := s.runJob(ctx, &jobs[i]); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
			return nil
		})
	}
	_ = g.Wait() // the goroutines report through errs

	if s.purgeDue(now) {
		errs = append(errs, s.purge(ctx, now))
	}
	return len(jobs), errors.Join(errs...)
}

// purgeEvery is how often expired idempotency records and old completed
// jobs are purged. Both are kept at least a day, so a minute late costs
// nothing, and the deletes stay out of most worker rounds.
const purgeEvery = time.Minute

// purgeLease names the Store lease of the purge: whichever instance takes
// it purges, the others skip until it lapses a minute later.
const purgeLease = "paykit.purge"

// purge deletes expired idempotency records and jobs completed before the
// retention, when this instance takes the purge lease.
func (s *Service) purge(ctx context.Context, now time.Time) error {
	mine, err := s.store.TakeLease(ctx, Lease{Name: purgeLease, Owner: s.workerID, Now: now, Until: now.Add(purgeEvery)})
	if err != nil {
		return fmt.Errorf("take purge lease: %w", err)
	}
	if !mine {
		return nil
	}
	var errs []error
	if _, err := s.store.PurgeIdempotencyRecords(ctx, now); err != nil {
		errs = append(errs, fmt.Errorf("purge idempotency records: %w", err))
	}
	if _, err := s.store.PurgeCompletedJobs(ctx, now.Add(-s.jobRetain)); err != nil {
		errs = append(errs, fmt.Errorf("purge completed jobs: %w", err))
	}
	if _, err := s.store.PurgeLeases(ctx, now.Add(-time.Hour)); err != nil {
		errs = append(errs, fmt.Errorf("purge leases: %w", err))
	}
	return errors.Join(errs...)
}

// purgeDue reports whether this instance tries to purge this round (and
// takes the Store's lease), and claims it.
func (s *Service) purgeDue(now time.Time) bool {
	last := s.purgedAt.Load()
	if last != 0 && now.Sub(time.UnixMilli(last)) < purgeEvery {
		return false
	}
	return s.purgedAt.CompareAndSwap(last, now.UnixMilli())
}

// runJob runs one claimed job and completes or reschedules it. Every
// attempt is counted (JobRuns), and a failure leaves its kind and scrubbed
// text in the job's LastError for the operator. A job that failed its
// kind's MaxAttempts times needs attention: it is flagged and tried again
// at the longest backoff interval, never given up.
func (s *Service) runJob(ctx context.Context, j *Job) (err error) {
	k, ok := s.kind(j.Kind)
	if !ok {
		err = fmt.Errorf("job kind %q: %w", j.Kind, errNoHandler)
	} else {
		err = safeRun(ctx, k.handler, j)
	}
	if err == nil {
		s.jobCounts.record(j.Kind, "")
		if cerr := s.store.CompleteJob(ctx, j.ID, s.workerID, s.Now()); cerr != nil && !errors.Is(cerr, ErrNotFound) {
			return fmt.Errorf("complete job %s: %w", j.ID, cerr)
		}
		return nil
	}
	if ctx.Err() != nil {
		// Stopped by shutdown, not failed: the lease lapses and any
		// instance takes the job over.
		s.log.DebugContext(ctx, "job interrupted", "job_id", j.ID, "kind", j.Kind)
		return nil
	}
	kind := classifyJobError(err)
	s.jobCounts.record(j.Kind, kind)
	limit := s.maxAttempts(j.Kind)
	flag := j.Attempts >= limit
	runAt := s.Now().Add(Backoff(j.Attempts))
	if flag {
		runAt = s.Now().Add(Backoff(maxBackoffAttempts))
	}
	var at retryAt
	var p panicError
	switch {
	case errors.As(err, &at):
		runAt = at.at // the handler chose its own schedule and logged why
	case errors.Is(err, errNotYet):
		var ny notYetAt
		if errors.As(err, &ny) && !flag {
			runAt = ny.at
		}
		s.log.DebugContext(ctx, "job waits", "job_id", j.ID, "kind", j.Kind, "attempts", j.Attempts)
	case errors.As(err, &p):
		s.log.ErrorContext(ctx, "job handler panicked, will retry", "job_id", j.ID, "kind", j.Kind, "attempts", j.Attempts, "panic", fmt.Sprint(p.value))
	default:
		s.log.WarnContext(ctx, "job failed, will retry", "job_id", j.ID, "kind", j.Kind, "attempts", j.Attempts, "err", err)
	}
	runAt = runAt.Truncate(time.Millisecond) // the contract's precision, as every stored time
	reschedule := s.store.RetryJob
	if flag {
		reschedule = s.store.FlagJob
		if j.Status != JobNeedsAttention {
			s.log.ErrorContext(ctx, "job failed its attempt limit; needs operator attention, will keep retrying",
				"job_id", j.ID, "kind", j.Kind, "attempts", j.Attempts, "max_attempts", limit, "target_id", j.TargetID)
		}
	}
	if rerr := reschedule(ctx, j.ID, s.workerID, runAt, jobErrorText(kind, err)); rerr != nil && !errors.Is(rerr, ErrNotFound) {
		return fmt.Errorf("reschedule job %s: %w", j.ID, rerr)
	}
	return nil
}

// maxBackoffAttempts is an attempt count whose Backoff is the longest
// interval.
const maxBackoffAttempts = 64

// retryAt is a handler's answer asking for the job to run again at a time
// of its choosing rather than on the backoff schedule.
type retryAt struct{ at time.Time }

func (r retryAt) Error() string { return "retry at " + FormatTime(r.at) }

// safeRun turns a handler panic into an error so one bad job cannot stop
// the worker.
func safeRun(ctx context.Context, h JobHandler, j *Job) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = panicError{r}
		}
	}()
	return h(ctx, j)
}

// Backoff is the delay before retry number attempts (1-based): 1s doubling
// up to 1h, with jitter drawn from the upper half of the interval.
func Backoff(attempts int) time.Duration {
	d := time.Second
	for i := 1; i < attempts && d < time.Hour; i++ {
		d *= 2
	}
	return jitter(min(d, time.Hour))
}

// jitter returns a random duration in [d/2, d].
func jitter(d time.Duration) time.Duration {
	if d <= 1 {
		return d
	}
	return d/2 + rand.N(d/2+1)
}
