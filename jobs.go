package paykit

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Job kinds: paykit's own and those a host registers. Each kind has a
// handler and an attempt limit past which its jobs need attention.

// DefaultMaxAttempts is the attempt limit of a job kind that sets none:
// with Backoff, about half a day of failures.
const DefaultMaxAttempts = 25

// JobKindOptions configure a job kind.
type JobKindOptions struct {
	// MaxAttempts is how many attempts may fail before a job of this kind
	// needs attention (JobNeedsAttention, counted in JobStats); default
	// DefaultMaxAttempts. The job is not given up: it keeps being tried at
	// the longest backoff interval until it completes.
	MaxAttempts int
}

// jobKind is a registered job kind.
type jobKind struct {
	handler     JobHandler
	maxAttempts int
	host        bool // registered by the host with RegisterJobKind
}

// handle registers the handler of one of paykit's own job kinds.
func (s *Service) handle(kind string, h JobHandler) {
	s.jobsMu.Lock()
	defer s.jobsMu.Unlock()
	s.jobs[kind] = jobKind{handler: h, maxAttempts: DefaultMaxAttempts}
}

// kind returns the registration of a job kind.
func (s *Service) kind(name string) (jobKind, bool) {
	s.jobsMu.RLock()
	defer s.jobsMu.RUnlock()
	k, ok := s.jobs[name]
	return k, ok
}

// maxAttempts is the attempt limit of a job kind; an unknown kind has the
// default.
func (s *Service) maxAttempts(kind string) int {
	if k, ok := s.kind(kind); ok {
		return k.maxAttempts
	}
	return DefaultMaxAttempts
}

// RegisterJobKind makes kind a job kind of the host: the worker (Run,
// ProcessDue) runs its jobs with h, which completes a job by returning nil
// and asks for a retry with backoff by returning an error. Kinds are
// shared by every instance on one Store, so each should register the same
// ones. It fails when kind is empty, h is nil or the kind is registered
// already (paykit's own kinds included).
func (s *Service) RegisterJobKind(kind string, h JobHandler, opts JobKindOptions) error {
	if kind == "" || h == nil {
		return errors.New("paykit: RegisterJobKind needs a kind and a handler")
	}
	if opts.MaxAttempts < 0 {
		return fmt.Errorf("paykit: job kind %q: MaxAttempts %d is negative", kind, opts.MaxAttempts)
	}
	if opts.MaxAttempts == 0 {
		opts.MaxAttempts = DefaultMaxAttempts
	}
	s.jobsMu.Lock()
	defer s.jobsMu.Unlock()
	if _, ok := s.jobs[kind]; ok {
		return fmt.Errorf("paykit: job kind %q is registered already", kind)
	}
	s.jobs[kind] = jobKind{handler: h, maxAttempts: opts.MaxAttempts, host: true}
	return nil
}

// EnqueueJob writes a job of a kind the host registered, in a transaction
// of its own. See EnqueueJobTx.
func (s *Service) EnqueueJob(ctx context.Context, j *Job) error {
	return s.store.InTx(ctx, func(tx Tx) error { return s.EnqueueJobTx(ctx, tx, j) })
}

// EnqueueJobTx writes a job of a kind the host registered in tx, a
// transaction of the Service's Store (Store().InTx): the job runs only if
// tx commits. The host sets Kind, and as it needs Scope, TargetID,
// Payload, DedupKey and RunAt (empty: now); the Service sets ID (when
// empty), CreatedAt and a fresh state. A job whose DedupKey is held by a
// job not completed is not written, and that is not an error: the work is
// scheduled already.
func (s *Service) EnqueueJobTx(ctx context.Context, tx Tx, j *Job) error {
	k, ok := s.kind(j.Kind)
	if !ok || !k.host {
		return fmt.Errorf("paykit: job kind %q is not registered by the host (RegisterJobKind)", j.Kind)
	}
	j.CreatedAt = time.Time{}
	j.Attempts, j.LeaseOwner, j.LeaseUntil, j.LastError = 0, "", nil, ""
	j.Status, j.AttemptedAt, j.CompletedAt = JobAvailable, nil, nil
	if !j.RunAt.IsZero() {
		j.RunAt = j.RunAt.UTC().Truncate(time.Millisecond)
	}
	return s.enqueue(ctx, tx, j)
}
