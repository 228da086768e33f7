package paykit

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/paykit/paykit/internal/workctx"
)

// ErrLeaseLost is the answer of CheckJobLease in a job run that no longer
// holds its job's lease: it lapsed before it was renewed, or another run
// claimed the job since. The run must stop without side effects; its end
// is not written, and the job runs again (or already does) elsewhere.
var ErrLeaseLost = errors.New("paykit: job lease lost")

// CheckJobLease reports whether the job run ctx belongs to still holds its
// job's lease: nil while it does (and outside a job run), ErrLeaseLost once
// it does not. A handler calls it before a side effect the Store cannot
// undo, such as a Provider call or a message sent; paykit's own handlers
// do. A run that lost its lease also finds ctx cancelled.
func CheckJobLease(ctx context.Context) error {
	r, _ := ctx.Value(runKey{}).(*jobRun)
	if r == nil {
		return nil
	}
	if r.lost.Load() {
		return ErrLeaseLost
	}
	if !r.s.Now().Before(time.UnixMilli(r.until.Load()).Add(-r.s.leaseMargin())) {
		r.s.runs.lose(r, "its lease lapsed before it was renewed")
		return ErrLeaseLost
	}
	return nil
}

// runKey is the context key of the job run a handler runs in.
type runKey struct{}

// inJobRun reports whether ctx is a job run's.
func inJobRun(ctx context.Context) bool { return ctx.Value(runKey{}) != nil }

// leaseMargin is how long before its lease ends a run stops counting on
// it: the time a side effect may take to start once checked, and the clock
// skew between instances it bears.
func (s *Service) leaseMargin() time.Duration { return s.lease / 6 }

// jobRun is one run of a claimed job on this instance.
type jobRun struct {
	s     *Service
	job   JobRun
	kind  string
	until atomic.Int64 // unix ms: the lease's end as last written
	lost  atomic.Bool  // the lease is no longer this run's
	ended atomic.Bool  // the handler returned; the end decides

	mu     sync.Mutex
	cancel context.CancelFunc // nil until the handler starts
}

// setCancel gives the run the cancellation of its handler's context,
// cancelling at once a run that lost its lease already.
func (r *jobRun) setCancel(cancel context.CancelFunc) {
	r.mu.Lock()
	r.cancel = cancel
	r.mu.Unlock()
	if r.lost.Load() {
		cancel()
	}
}

// runSet holds the runs in flight on this instance and renews their leases
// together, every lease/3 while any is in flight.
type runSet struct {
	mu       sync.Mutex
	m        map[string]*jobRun
	renewing bool
	every    time.Duration // 0: the lease / 3 (tests shorten it)
}

// start registers the run of a claimed job, starting the renewals if none
// run.
func (rs *runSet) start(s *Service, j *Job) *jobRun {
	r := &jobRun{s: s, job: JobRun{ID: j.ID, Attempts: j.Attempts}, kind: j.Kind}
	until := j.LeaseUntil
	if until == nil {
		t := s.Now().Add(s.lease)
		until = &t
	}
	r.until.Store(until.UnixMilli())
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.m == nil {
		rs.m = map[string]*jobRun{}
	}
	rs.m[j.ID] = r
	if !rs.renewing {
		rs.renewing = true
		go rs.renewLoop(s)
	}
	return r
}

// forget drops a run whose end was written (or needs none).
func (rs *runSet) forget(r *jobRun) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.m[r.job.ID] == r {
		delete(rs.m, r.job.ID)
	}
}

// lose marks r's lease lost and stops its handler, once.
func (rs *runSet) lose(r *jobRun, why string) {
	if r.lost.Swap(true) {
		return
	}
	r.s.jobCounts.recordLost(r.kind)
	r.s.log.Warn("job run lost its lease; it stops and its end is not written", "job_id", r.job.ID, "kind", r.kind, "attempts", r.job.Attempts, "why", why)
	r.mu.Lock()
	cancel := r.cancel
	r.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// endLost records that the end of a run was refused: another run had
// claimed the job.
func (rs *runSet) endLost(s *Service, run JobRun) {
	rs.mu.Lock()
	r := rs.m[run.ID]
	rs.mu.Unlock()
	kind := ""
	if r != nil && r.job == run {
		if r.lost.Swap(true) {
			return // counted when it was lost
		}
		kind = r.kind
	}
	s.jobCounts.recordLost(kind)
	s.log.Warn("job ended after another run claimed it; its end was not written", "job_id", run.ID, "kind", kind, "attempts", run.Attempts)
}

// renewLoop renews the leases of the runs in flight until none is left.
func (rs *runSet) renewLoop(s *Service) {
	every := rs.every
	if every <= 0 {
		every = s.lease / 3
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for range t.C {
		rs.mu.Lock()
		if len(rs.m) == 0 {
			rs.renewing = false
			rs.mu.Unlock()
			return
		}
		runs := make([]*jobRun, 0, len(rs.m))
		for _, r := range rs.m {
			if !r.lost.Load() && !r.ended.Load() {
				runs = append(runs, r)
			}
		}
		rs.mu.Unlock()
		rs.renew(s, runs)
	}
}

// renew extends the leases of runs in one write. A run whose lease is
// gone, or that cannot be renewed before its lease lapses, is lost.
func (rs *runSet) renew(s *Service, runs []*jobRun) {
	if len(runs) == 0 {
		return
	}
	now := s.Now()
	ids := make([]JobRun, len(runs))
	for i, r := range runs {
		ids[i] = r.job
	}
	until := now.Add(s.lease)
	ctx, cancel := context.WithTimeout(workctx.With(context.Background()), s.lease/3)
	defer cancel()
	lost, err := s.store.Queue().RenewJobLeases(ctx, s.workerID, ids, until)
	if err != nil {
		s.log.Warn("renewing job leases failed", "runs", len(runs), "err", err)
		for _, r := range runs {
			if !s.Now().Before(time.UnixMilli(r.until.Load()).Add(-s.leaseMargin())) {
				rs.lose(r, "its lease lapsed: it could not be renewed")
			}
		}
		return
	}
	gone := make(map[JobRun]bool, len(lost))
	for _, l := range lost {
		gone[l] = true
	}
	for _, r := range runs {
		switch {
		case !gone[r.job]:
			r.until.Store(until.UnixMilli())
		case !r.ended.Load():
			rs.lose(r, "another run claimed the job")
		}
	}
}
