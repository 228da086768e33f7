package paykit

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/paykit/paykit/internal/enums"
)

// JobState is the state of a job. A Store keeps one of JobAvailable,
// JobRunning, JobWaiting, JobRetrying, JobNeedsAttention and JobCompleted
// in Job.Status; Job.State tells where a job stands at a given moment, in
// exactly one of the states below but JobAvailable, the first that applies.
type JobState string

// Job states, in order of precedence.
const (
	// JobCompleted: the job ran to its end. It is kept for the Service's
	// JobRetention, then purged.
	JobCompleted JobState = "completed"
	// JobRunning: a worker holds a live lease on the job.
	JobRunning JobState = "running"
	// JobNeedsAttention: the job ran its kind's MaxAttempts times without
	// completing, failing or waiting. It keeps being tried at the longest
	// backoff interval: money is never failed by giving up, but an
	// operator should look.
	JobNeedsAttention JobState = "needs_attention"
	// JobWaiting: the job ran, its purpose is not met yet (a payer who has
	// not paid, a Provider that has not decided) and it runs again at
	// RunAt. Waiting is not failing: the run left no LastError. Its runs
	// still count towards its kind's MaxAttempts, so that work stuck for
	// hours needs attention.
	JobWaiting JobState = "waiting"
	// JobRetrying: the job ran before and failed (or its run ended without
	// an answer) and waits for its next attempt, which may be due already.
	JobRetrying JobState = "retrying"
	// JobDue: the job never ran and its time has come.
	JobDue JobState = "due"
	// JobScheduled: the job never ran and its time is still ahead.
	JobScheduled JobState = "scheduled"
	// JobAvailable: the job never ran (stored state). As a filter it
	// selects due and scheduled jobs.
	JobAvailable JobState = "available"
)

// jobStates lists the job states a list can be filtered by.
var jobStates = []JobState{JobDue, JobRunning, JobWaiting, JobRetrying, JobScheduled, JobAvailable, JobNeedsAttention, JobCompleted}

// Valid reports whether s is a known job state.
func (s JobState) Valid() bool { return slices.Contains(jobStates, s) }

// State returns j's state at now. A lease that ended without the job being
// completed or rescheduled (a worker that died) no longer counts as running.
func (j *Job) State(now time.Time) JobState {
	switch {
	case j.Status == JobCompleted:
		return JobCompleted
	case j.LeaseUntil != nil && j.LeaseUntil.After(now):
		return JobRunning
	case j.Status == JobNeedsAttention:
		return JobNeedsAttention
	case j.Status == JobWaiting:
		return JobWaiting
	case j.Attempts > 0:
		return JobRetrying
	case j.RunAt.After(now):
		return JobScheduled
	}
	return JobDue
}

// Matches reports whether j is in state s at now, as a list filter reads
// it: empty matches every job not completed, JobAvailable matches due and
// scheduled jobs.
func (s JobState) Matches(j *Job, now time.Time) bool {
	got := j.State(now)
	switch s {
	case "":
		return got != JobCompleted
	case JobAvailable:
		return got == JobDue || got == JobScheduled
	}
	return got == s
}

// JobListParams are the filters of the operator's job list, across
// tenants; empty fields do not filter, but an empty State selects only
// jobs not completed (see JobState.Matches).
type JobListParams struct {
	PageParams
	Kind       string
	State      JobState // empty: every job not completed
	MerchantID string
}

// JobView is the operator projection of a job: the job and its
// state when it was read. LastError is scrubbed of anything that looks like
// a credential or an account number.
type JobView struct {
	Job
	State JobState
}

// ListJobs returns background jobs of every tenant, newest first, each
// with its state now: what is retrying, running, waiting or needs
// attention. Without a State it lists pending jobs; completed ones are
// listed with State JobCompleted, until purged.
func (s *Service) ListJobs(ctx context.Context, p JobListParams) (*Page[JobView], error) {
	if p.State != "" && !p.State.Valid() {
		return nil, invalidRequest("state", "state must be one of %s.", strings.Join(enums.JobStates, ", "))
	}
	limit, after, err := s.pageQuery("job", p.PageParams)
	if err != nil {
		return nil, err
	}
	now := s.Now()
	rows, err := s.store.Queue().ListJobs(ctx, ListQuery[JobListParams]{Filter: p, After: after, Limit: limit + 1}, now)
	if err != nil {
		return nil, internalError(err)
	}
	views := make([]JobView, len(rows))
	for i := range rows {
		views[i] = JobView{Job: rows[i], State: rows[i].State(now)}
		views[i].LastError = scrubJobError(views[i].LastError)
	}
	return makePage(s, "job", views, limit, func(v *JobView) Position { return Position{v.CreatedAt, v.ID} }), nil
}

// Job is a unit of durable background work.
type Job struct {
	ID         string
	Kind       string
	Scope      Scope
	TargetID   string
	Payload    []byte // JSON, kind-specific; may be empty
	DedupKey   string // optional; unique among jobs not completed
	RunAt      time.Time
	Attempts   int
	LeaseOwner string
	LeaseUntil *time.Time
	LastError  string
	CreatedAt  time.Time
	// Status is the stored state: JobAvailable, JobRunning, JobWaiting,
	// JobRetrying, JobNeedsAttention or JobCompleted. Empty is
	// JobAvailable. State derives from it what an operator sees at a
	// given moment.
	Status JobState
	// AttemptedAt is when the last attempt began (nil before the first).
	AttemptedAt *time.Time
	// CompletedAt is when the job completed (nil while it is pending).
	CompletedAt *time.Time
	// Priority orders the due jobs of a claim, lowest first: paykit's
	// money-moving work (JobPriorityMoney) before notifications and host
	// jobs (JobPriorityDefault). The Service sets it from the kind.
	Priority int
	// Partition names what the job waits on, such as the webhook endpoint
	// a delivery goes to: a worker runs only a few jobs of one partition
	// at once (Config.PartitionConcurrency), so that one endpoint that
	// hangs holds few of its slots. Empty: none.
	Partition string
	// TraceParent is the W3C traceparent of the span that enqueued the
	// job, when it was sampled: the span of each run links to it. The
	// Service sets it.
	TraceParent string
}

// Job priorities.
const (
	JobPriorityMoney   = 0
	JobPriorityDefault = 1
)

// Job kinds: paykit's own and those a host registers. Each kind has a
// handler and an attempt limit past which its jobs need attention.

// defaultMaxAttempts is the attempt limit of a job kind that sets none:
// with backoff, about half a day of failures.
const defaultMaxAttempts = 25

// JobKindOptions configure a job kind.
type JobKindOptions struct {
	// MaxAttempts is how many attempts may fail before a job of this kind
	// needs attention (JobNeedsAttention, counted in JobStats); default 25,
	// about half a day of failures. The job is not given up: it keeps being
	// tried at the longest backoff interval until it completes.
	MaxAttempts int
	// Timeout bounds one run of a job of this kind: its context is
	// cancelled then, and the run counts as failed. Default 1 minute.
	Timeout time.Duration
}

// defaultJobTimeout bounds a run of a job kind that sets no Timeout.
const defaultJobTimeout = time.Minute

// jobKind is a registered job kind.
type jobKind struct {
	handler     JobHandler
	maxAttempts int
	timeout     time.Duration
	priority    int
	host        bool // registered by the host with RegisterJobKind
}

// handle registers the handler of one of paykit's own job kinds, whose
// runs take at most timeout.
func (s *Service) handle(kind string, h JobHandler, timeout time.Duration, priority int) {
	s.jobsMu.Lock()
	defer s.jobsMu.Unlock()
	s.jobs[kind] = jobKind{handler: h, maxAttempts: defaultMaxAttempts, timeout: timeout, priority: priority}
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
	return defaultMaxAttempts
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
		opts.MaxAttempts = defaultMaxAttempts
	}
	if opts.Timeout < 0 {
		return fmt.Errorf("paykit: job kind %q: Timeout %s is negative", kind, opts.Timeout)
	}
	if opts.Timeout == 0 {
		opts.Timeout = defaultJobTimeout
	}
	s.jobsMu.Lock()
	defer s.jobsMu.Unlock()
	if _, ok := s.jobs[kind]; ok {
		return fmt.Errorf("paykit: job kind %q is registered already", kind)
	}
	s.jobs[kind] = jobKind{handler: h, maxAttempts: opts.MaxAttempts, timeout: opts.Timeout, priority: JobPriorityDefault, host: true}
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

// completeJob completes, in tx, the pending job of kind about targetID
// (DedupKey kind:targetID), whose purpose tx met, so that it never runs
// for nothing. In a run of that kind it does nothing: a handler acts on
// its own target only, and the run completes its job when it returns.
func (s *Service) completeJob(ctx context.Context, tx Tx, kind, targetID string) error {
	if r, _ := ctx.Value(runKey{}).(*jobRun); r != nil && r.kind == kind {
		return nil
	}
	return tx.CompleteJobByDedupKey(ctx, kind+":"+targetID, s.Now())
}

// Timeouts of paykit's own job kinds: a job that calls a Provider may take
// its adapter's whole timeout, and its transactions around the call; a
// delivery takes the webhook timeout and its bookkeeping.
const (
	providerJobTimeout = 2 * time.Minute
	webhookJobSlack    = 30 * time.Second
)
