package paykit

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/paykit/paykit/internal/telemetry"
	"github.com/paykit/paykit/internal/wire"
	"github.com/paykit/paykit/internal/workctx"
)

// enqueue writes a job in tx, to run at runAt. A job with the same DedupKey
// already pending is not an error: the work is already scheduled.
func (s *Service) enqueue(ctx context.Context, tx Tx, j *Job) error {
	s.jobDefaults(j)
	if j.TraceParent == "" {
		j.TraceParent = telemetry.TraceParent(ctx)
	}
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
	if k, ok := s.kind(j.Kind); ok {
		j.Priority = k.priority
	} else {
		j.Priority = JobPriorityDefault
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

// Run performs background work until ctx ends. It keeps up to
// WorkerConcurrency jobs running: whenever a slot is free it claims as many
// due jobs as there are free slots, without waiting for the others to end.
// It wakes when a job ends, when the Store signals new work (its
// JobQueue's Subscribe), and every WorkerInterval for work that came due.
// Each run's lease is renewed while it lasts. It returns nil when ctx is
// cancelled, after the runs in flight ended. Several instances may run
// against one shared Store: a job never runs on two at once while its
// lease is live.
func (s *Service) Run(ctx context.Context) error {
	ctx = workctx.With(ctx) // the Store's worker share serves it
	fin := s.newFinisher()
	defer fin.close()
	tick := time.NewTicker(s.interval)
	defer tick.Stop()
	work, unsubscribe := s.store.Queue().Subscribe()
	defer unsubscribe()
	var (
		active    atomic.Int32
		wg        sync.WaitGroup
		lastClaim time.Time
		cooldown  = claimCooldown
		parts     partitions
	)
	defer wg.Wait()
	for ctx.Err() == nil {
		if free := s.concurrency - int(active.Load()); free > 0 {
			if wait := cooldown - time.Since(lastClaim); wait > 0 {
				sleep(ctx, wait) // let more slots free up, more work come, for one claim
				free = s.concurrency - int(active.Load())
			}
			lastClaim = time.Now()
			jobs, err := s.claimFor(ctx, free, parts.full(s.partitionLimit), s.partitionLimit)
			if err != nil && ctx.Err() == nil {
				s.log.ErrorContext(ctx, "claim jobs failed", "err", err)
			}
			// A claim that found nothing makes the next one wait longer,
			// so that wake-ups without work cost few claims.
			if len(jobs) == 0 {
				cooldown = min(2*cooldown, maxClaimCooldown)
			} else {
				cooldown = claimCooldown
			}
			for i := range jobs {
				active.Add(1)
				wg.Add(1)
				parts.add(jobs[i].Partition, 1)
				go func() {
					defer wg.Done()
					fin.add(s.execute(ctx, &jobs[i]))
					parts.add(jobs[i].Partition, -1)
					active.Add(-1)
					s.slotFreed()
				}()
			}
			if err == nil && len(jobs) == free {
				// More may be due: claim again as soon as a slot frees.
				select {
				case <-ctx.Done():
				case <-s.freed:
				}
				continue
			}
		}
		if s.purgeDue(s.Now()) {
			if err := s.purge(ctx, s.Now()); err != nil && ctx.Err() == nil {
				s.log.ErrorContext(ctx, "purge failed", "err", err)
			}
		}
		if s.sweepDue(s.Now()) {
			if err := s.sweepSettlements(ctx, s.Now()); err != nil && ctx.Err() == nil {
				s.log.ErrorContext(ctx, "settlement sweep failed", "err", err)
			}
		}
		select {
		case <-ctx.Done():
		case <-s.freed:
		case <-work:
		case <-tick.C:
		}
	}
	return nil
}

// The least time between two claims of Run: so that the slots that free up
// in a burst, and the work enqueued in one, take one claim; longer after a
// claim that found nothing.
const (
	claimCooldown    = 2 * time.Millisecond
	maxClaimCooldown = 20 * time.Millisecond
)

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// slotFreed tells Run that a run ended.
func (s *Service) slotFreed() {
	select {
	case s.freed <- struct{}{}:
	default:
	}
}

// claim leases up to n due jobs to this instance.
func (s *Service) claim(ctx context.Context, n int) ([]Job, error) {
	return s.claimFor(ctx, n, nil, 0)
}

// claimFor leases up to n due jobs to this instance: none of the
// partitions in skip, at most perPartition (0: any number) of the others.
func (s *Service) claimFor(ctx context.Context, n int, skip []string, perPartition int) ([]Job, error) {
	now := s.Now()
	jobs, err := s.store.Queue().ClaimJobs(ctx, ClaimParams{Owner: s.workerID, Now: now, LeaseUntil: now.Add(s.lease), Limit: n,
		Skip: skip, PartitionLimit: perPartition})
	if err != nil {
		return nil, fmt.Errorf("claim jobs: %w", err)
	}
	return jobs, nil
}

// partitions counts Run's jobs in flight by partition.
type partitions struct {
	mu sync.Mutex
	n  map[string]int
}

func (p *partitions) add(name string, d int) {
	if name == "" {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.n == nil {
		p.n = map[string]int{}
	}
	if p.n[name] += d; p.n[name] <= 0 {
		delete(p.n, name)
	}
}

// full lists the partitions with limit jobs in flight.
func (p *partitions) full(limit int) []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	for name, n := range p.n {
		if n >= limit {
			out = append(out, name)
		}
	}
	return out
}

// ProcessDue runs one round of background work: it claims the jobs that are
// due now (at most 50), runs each once (WorkerConcurrency at a time), ends
// them in one write, and, at most once a minute across every instance on
// the Store, purges expired idempotency records and jobs completed longer
// than JobRetention ago. It returns how many jobs it ran, after all of them
// ended. Tests call it to drive the worker step by step.
func (s *Service) ProcessDue(ctx context.Context) (int, error) {
	ctx = workctx.With(ctx)
	now := s.Now()
	jobs, err := s.claim(ctx, 50)
	if err != nil {
		return 0, err
	}
	ends := make([]jobEnd, len(jobs))
	var g errgroup.Group
	g.SetLimit(s.concurrency)
	for i := range jobs {
		g.Go(func() error {
			ends[i] = s.execute(ctx, &jobs[i])
			return nil
		})
	}
	_ = g.Wait() // the runs report through ends
	// Ends are written even when ctx ended: a run that ended is not run
	// again, and an interrupted one is given back.
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), finishTimeout)
	defer cancel()
	errs := []error{s.finish(fctx, ends)}
	if s.purgeDue(now) {
		errs = append(errs, s.purge(ctx, now))
	}
	if s.sweepDue(now) {
		errs = append(errs, s.sweepSettlements(ctx, now))
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
	if _, err := s.store.Queue().PurgeCompletedJobs(ctx, now.Add(-s.jobRetain)); err != nil {
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

// jobEnd is how one run ended: what to write (zero when nothing is, the
// run having been interrupted by shutdown or having lost its lease) and
// the run to forget after.
type jobEnd struct {
	end JobEnd
	run *jobRun
}

// execute runs one claimed job under a lease that is renewed while it
// runs, within its kind's Timeout, and says how it ended. Every attempt is
// counted (monitor.JobRuns), and a failure leaves its kind and scrubbed text in the
// job's LastError for the operator; a job that waits (errNotYet) is no
// failure and leaves none. A job that ran its kind's MaxAttempts times,
// failing or waiting, needs attention: it is flagged and tried again at
// the longest backoff interval, never given up.
func (s *Service) execute(ctx context.Context, j *Job) jobEnd {
	k, ok := s.kind(j.Kind)
	r := s.runs.start(s, j)
	ctx, span := s.tel.startJob(ctx, j)
	var err error
	if !ok {
		err = fmt.Errorf("job kind %q: %w", j.Kind, errNoHandler)
	} else {
		rctx, cancel := context.WithTimeout(context.WithValue(ctx, runKey{}, r), k.timeout)
		r.setCancel(cancel)
		err = safeRun(rctx, k.handler, j)
		cancel()
	}
	r.ended.Store(true)
	var at retryAt
	// A job that waits (its purpose not met yet, or an endpoint paused)
	// did not fail: no error counted or kept, no warning.
	wait := errors.Is(err, errNotYet) || errors.As(err, &at) && at.wait
	s.tel.endJob(ctx, span, err != nil && !wait && ctx.Err() == nil, err)
	run := JobRun{ID: j.ID, Attempts: j.Attempts}
	if err == nil {
		s.jobCounts.record(j.Kind, "")
		return jobEnd{JobEnd{JobRun: run, Status: JobCompleted, At: s.Now()}, r}
	}
	if r.lost.Load() {
		return jobEnd{run: r} // logged and counted when it was lost
	}
	if ctx.Err() != nil {
		// Stopped by shutdown, not failed: the lease is given back, so
		// that any instance takes the job over at once.
		s.log.DebugContext(ctx, "job interrupted", "job_id", j.ID, "kind", j.Kind)
		status := JobRetrying
		if j.Status == JobNeedsAttention {
			status = JobNeedsAttention
		}
		return jobEnd{JobEnd{JobRun: run, Status: status, RunAt: s.Now().Truncate(time.Millisecond), LastError: j.LastError}, r}
	}
	kind := classifyJobError(err)
	counted := kind
	if wait {
		counted = ""
	}
	s.jobCounts.record(j.Kind, counted)
	limit := s.maxAttempts(j.Kind)
	flag := j.Attempts >= limit
	runAt := s.Now().Add(backoffWith(j.Attempts, s.rnd))
	if flag {
		runAt = s.Now().Add(backoffWith(maxBackoffAttempts, s.rnd))
	}
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
	status, lastError := JobRetrying, jobErrorText(kind, err)
	if wait {
		status, lastError = JobWaiting, ""
	}
	if flag {
		// Waits count too: work stuck for hours (a payout the Provider
		// never decides) needs attention, and says why.
		status, lastError = JobNeedsAttention, jobErrorText(kind, err)
		if j.Status != JobNeedsAttention {
			s.log.ErrorContext(ctx, "job failed its attempt limit; needs operator attention, will keep retrying",
				"job_id", j.ID, "kind", j.Kind, "attempts", j.Attempts, "max_attempts", limit, "target_id", j.TargetID)
		}
	}
	// Truncated to the contract's precision, as every stored time.
	return jobEnd{JobEnd{JobRun: run, Status: status, RunAt: runAt.Truncate(time.Millisecond), LastError: lastError}, r}
}

// finish writes the ends of runs in one write, then forgets the runs. A
// run whose lease was lost by then is logged and counted: another run
// owns the job.
func (s *Service) finish(ctx context.Context, ends []jobEnd) error {
	write := make([]JobEnd, 0, len(ends))
	for _, e := range ends {
		if e.end.ID != "" {
			write = append(write, e.end)
		}
	}
	var err error
	if len(write) > 0 {
		var lost []JobRun
		lost, err = s.store.Queue().FinishJobs(ctx, s.workerID, write)
		for _, l := range lost {
			s.runs.endLost(s, l)
		}
		if err != nil {
			err = fmt.Errorf("finish jobs: %w", err)
		}
	}
	for _, e := range ends {
		if e.run != nil {
			s.runs.forget(e.run)
		}
	}
	return err
}

// finisher batches the ends of Run's jobs: each write takes every end
// that queued while the previous one was being written.
type finisher struct {
	s    *Service
	in   chan jobEnd
	done chan struct{}
}

func (s *Service) newFinisher() *finisher {
	f := &finisher{s: s, in: make(chan jobEnd, 4*s.concurrency), done: make(chan struct{})}
	go f.loop()
	return f
}

func (f *finisher) add(e jobEnd) { f.in <- e }

// close writes what is queued and stops.
func (f *finisher) close() {
	close(f.in)
	<-f.done
}

func (f *finisher) loop() {
	defer close(f.done)
	batch := make([]jobEnd, 0, 256)
	for e := range f.in {
		batch = append(batch[:0], e)
	drain:
		for len(batch) < cap(batch) {
			select {
			case e, ok := <-f.in:
				if !ok {
					break drain
				}
				batch = append(batch, e)
			default:
				break drain
			}
		}
		// Ends are written even while the worker stops: a run that ended
		// is not run again.
		ctx, cancel := context.WithTimeout(workctx.With(context.Background()), finishTimeout)
		if err := f.s.finish(ctx, batch); err != nil {
			f.s.log.ErrorContext(ctx, "background work failed", "err", err)
		}
		cancel()
	}
}

// finishTimeout bounds one write of job ends.
const finishTimeout = 30 * time.Second

// maxBackoffAttempts is an attempt count whose backoff is the longest
// interval.
const maxBackoffAttempts = 64

// retryAt is a handler's answer asking for the job to run again at a time
// of its choosing rather than on the backoff schedule; wait: the job was
// not tried (its webhook endpoint is paused), it waits.
type retryAt struct {
	at   time.Time
	wait bool
}

func (r retryAt) Error() string { return "retry at " + wire.FormatTime(r.at) }

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

// backoff is the delay before retry number attempts (1-based): 1s doubling
// up to 1h, with jitter drawn from the upper half of the interval.
func backoff(attempts int) time.Duration { return backoffWith(attempts, nil) }

// backoffWith is backoff with its jitter drawn from rnd (see jitterWith).
func backoffWith(attempts int, rnd func() float64) time.Duration {
	d := time.Second
	for i := 1; i < attempts && d < time.Hour; i++ {
		d *= 2
	}
	return jitterWith(min(d, time.Hour), rnd)
}

// jitter returns a random duration in [d/2, d].
func jitter(d time.Duration) time.Duration { return jitterWith(d, nil) }

// jitterWith is jitter drawn from rnd, which returns values in [0, 1);
// nil draws from math/rand/v2.
func jitterWith(d time.Duration, rnd func() float64) time.Duration {
	if d <= 1 {
		return d
	}
	if rnd == nil {
		return d/2 + rand.N(d/2+1)
	}
	return min(d/2+time.Duration(rnd()*float64(d/2+1)), d)
}
