// Package monitor holds what a Service knows of its own process and shows
// only through httpadapter's metrics and dashboard: its job counters, its
// create calls to Providers and the Providers' states at this instance.
// Package paykit sets the hooks in its init; svc is always a
// *paykit.Service.
package monitor

import "time"

// ProcessingStaleAfter is how long a payment or payout intent may stay
// processing before it is stale: recovery then escalates it (an error-level
// log line on every later inquiry), a checkout shows the moment as
// processing_stale_at, and JobStats counts it. Time is measured from the
// intent's last change (UpdatedAt).
const ProcessingStaleAfter = 15 * time.Minute

// JobErrorKind classifies how a job attempt failed.
type JobErrorKind string

// Job error kinds.
const (
	// JobErrorHandler: the handler returned an error; the job is retried
	// with backoff.
	JobErrorHandler JobErrorKind = "handler_error"
	// JobErrorPanic: the handler panicked; the job is retried with backoff.
	JobErrorPanic JobErrorKind = "panic"
	// JobErrorNoHandler: no handler is registered for the job's kind (a job
	// of another version); it is retried with backoff.
	JobErrorNoHandler JobErrorKind = "no_handler"
	// JobErrorNotYet: the outcome is not final yet (a payer who has not
	// paid, a Provider still working on an attempt); the job waits
	// (JobWaiting) and asks again later. A wait is not counted as an
	// error; it is the LastError of a waiting job that needs attention.
	JobErrorNotYet JobErrorKind = "not_yet"
	// JobErrorRescheduled: the attempt failed and the handler chose when
	// to try again (a webhook delivery on its own schedule).
	JobErrorRescheduled JobErrorKind = "rescheduled"
)

// JobRunCounts counts the attempts of one job kind a Service ran since
// New, and how the failed ones failed (waits are attempts, not failures).
type JobRunCounts struct {
	Kind     string
	Attempts uint64
	Errors   map[JobErrorKind]uint64
	// LostLeases counts runs that lost their job's lease before they
	// ended (it lapsed unrenewed, or another run claimed the job); their
	// ends were not written.
	LostLeases uint64
}

// ProviderCallCount is how many calls of one kind this process made to a
// Provider that ended with one outcome.
type ProviderCallCount struct {
	Provider string
	Call     string // create_payment, create_payout
	Outcome  string // a paykit.Outcome
	Count    uint64
}

// ProviderState is what one instance knows of a configured Provider.
type ProviderState struct {
	Name     string
	Disabled bool // Config.DisabledProviders: no new attempts
	// CircuitOpen: calls failed in a row; no new attempts until
	// OpenUntil.
	CircuitOpen bool
	OpenUntil   time.Time
}

// Hooks, set by package paykit.
var (
	// JobRuns returns svc's job counters by kind: attempts run and
	// failures by error kind since New. They count this process only;
	// every instance reports its own.
	JobRuns func(svc any) []JobRunCounts
	// ProviderCalls reports this process's create calls to each Provider
	// by call and outcome (the unreachable ones have outcome
	// unacknowledged or unknown), sorted.
	ProviderCalls func(svc any) []ProviderCallCount
	// ProviderStates reports each configured Provider's state at this
	// instance, by name.
	ProviderStates func(svc any) []ProviderState
)
