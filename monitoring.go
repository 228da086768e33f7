package paykit

import (
	"cmp"
	"context"
	"errors"
	"maps"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/paykit/paykit/internal/monitor"
	"github.com/paykit/paykit/internal/wire"
)

// Background work that keeps retrying must be visible: a payout whose
// Provider keeps answering 5xx is never failed by giving up, so an operator
// has to be able to see it, and a job past its kind's attempt limit is
// flagged as needing attention. This file holds what the operator API and
// the metrics show of it: the state of each job (ListJobs), counts by kind
// and the payments and payouts past their stale time (JobStats), and
// this process's counters of job attempts and errors (monitor.JobRuns). The root
// package knows nothing of Prometheus; httpadapter adapts these values.

// staleAt is when an intent last changed at updatedAt becomes stale
// (monitor.ProcessingStaleAfter later), while processing is true; nil
// otherwise.
func staleAt(processing bool, updatedAt time.Time) *time.Time {
	if !processing {
		return nil
	}
	t := updatedAt.Add(monitor.ProcessingStaleAfter)
	return &t
}

// JobKindStats counts the pending (not completed) jobs of one kind at one
// moment.
type JobKindStats struct {
	Kind string
	// Due: jobs not leased whose RunAt has come (retrying ones included).
	Due int
	// Running: jobs under a live lease.
	Running int
	// Retrying: jobs not leased that ran before (Attempts > 0), those that
	// need attention included, but not those waiting.
	Retrying int
	// Waiting: jobs not leased whose last run waited (Status JobWaiting):
	// their purpose is not met yet, and nothing failed.
	Waiting int
	// NeedsAttention: jobs past their kind's attempt limit (Status
	// JobNeedsAttention), leased or not.
	NeedsAttention int
	// OldestDue is the RunAt of the longest-waiting due job; nil when none
	// is due.
	OldestDue *time.Time
}

// OldestDueAge is how long the oldest due job has waited at now; zero when
// none is due.
func (k JobKindStats) OldestDueAge(now time.Time) time.Duration {
	if k.OldestDue == nil || k.OldestDue.After(now) {
		return 0
	}
	return now.Sub(*k.OldestDue)
}

// StaleCounts counts the intents that are processing past their stale time.
type StaleCounts struct {
	PaymentIntents int
	PayoutIntents  int
}

// StatusCounts returns how many resources of the type object names
// ("payment_intent", "payout_intent", "checkout" or "refund", as
// Resource.Object does) the principal's scope created at or after since,
// by status. Another object is invalid_request.
func (s *Service) StatusCounts(ctx context.Context, p Principal, object string, since time.Time) (map[string]int, error) {
	switch object {
	case "payment_intent", "payout_intent", "checkout", "refund":
	default:
		return nil, invalidRequest("kind", "kind %q is not a resource with statuses.", object)
	}
	counts, err := s.store.CountStatuses(ctx, object, p.Scope, since.UTC())
	if err != nil {
		return nil, asServiceError(err)
	}
	return counts, nil
}

// JobStats is a snapshot of the background work a Store holds, for
// monitoring.
type JobStats struct {
	// At is when the snapshot was taken (the Service's clock).
	At time.Time
	// Kinds has one entry for every job kind the Service handles (zero when
	// none is pending) and for any other kind that has pending jobs, by kind.
	Kinds []JobKindStats
	// Stale counts the payments and payouts processing for longer than 15
	// minutes since their last change.
	Stale StaleCounts
	// PausedWebhookEndpoints counts the webhook endpoints paused at At.
	PausedWebhookEndpoints int
}

// JobStats reads from the Store how much background work is due, running,
// waiting and retrying, by kind, how many intents are past their stale
// time, and how many webhook endpoints are paused.
func (s *Service) JobStats(ctx context.Context) (*JobStats, error) {
	now := s.Now()
	kinds, err := s.store.Queue().JobStats(ctx, now)
	if err != nil {
		return nil, err
	}
	stale, err := s.store.CountStaleProcessing(ctx, now.Add(-monitor.ProcessingStaleAfter))
	if err != nil {
		return nil, err
	}
	paused, err := s.store.CountPausedWebhookEndpoints(ctx, now)
	if err != nil {
		return nil, err
	}
	byKind := map[string]JobKindStats{}
	s.jobsMu.RLock()
	for kind := range s.jobs {
		byKind[kind] = JobKindStats{Kind: kind}
	}
	s.jobsMu.RUnlock()
	for _, k := range kinds {
		byKind[k.Kind] = k
	}
	out := &JobStats{At: now, Stale: stale, PausedWebhookEndpoints: paused}
	for _, kind := range slices.Sorted(maps.Keys(byKind)) {
		out.Kinds = append(out.Kinds, byKind[kind])
	}
	return out, nil
}

// jobCounters are the Service's in-process job counters. The zero value
// is ready to use.
type jobCounters struct {
	mu sync.Mutex
	m  map[string]*monitor.JobRunCounts
}

// record counts one attempt of kind, failed with errKind unless it is "".
func (c *jobCounters) record(kind string, errKind monitor.JobErrorKind) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r := c.of(kind)
	r.Attempts++
	if errKind != "" {
		r.Errors[errKind]++
	}
}

// recordLost counts a run of kind that lost its lease.
func (c *jobCounters) recordLost(kind string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.of(kind).LostLeases++
}

// of returns the counters of kind; c.mu is held.
func (c *jobCounters) of(kind string) *monitor.JobRunCounts {
	if c.m == nil {
		c.m = map[string]*monitor.JobRunCounts{}
	}
	r := c.m[kind]
	if r == nil {
		r = &monitor.JobRunCounts{Kind: kind, Errors: map[monitor.JobErrorKind]uint64{}}
		c.m[kind] = r
	}
	return r
}

func init() {
	monitor.JobRuns = func(svc any) []monitor.JobRunCounts { return svc.(*Service).jobRuns() }
	monitor.ProviderCalls = func(svc any) []monitor.ProviderCallCount { return svc.(*Service).providerCalls() }
	monitor.ProviderStates = func(svc any) []monitor.ProviderState { return svc.(*Service).providerStates() }
}

// jobRuns is monitor.JobRuns: copies of the counters, by kind.
func (s *Service) jobRuns() []monitor.JobRunCounts {
	s.jobCounts.mu.Lock()
	defer s.jobCounts.mu.Unlock()
	out := make([]monitor.JobRunCounts, 0, len(s.jobCounts.m))
	for _, r := range s.jobCounts.m {
		out = append(out, monitor.JobRunCounts{Kind: r.Kind, Attempts: r.Attempts, Errors: maps.Clone(r.Errors), LostLeases: r.LostLeases})
	}
	slices.SortFunc(out, func(a, b monitor.JobRunCounts) int { return cmp.Compare(a.Kind, b.Kind) })
	return out
}

// panicError is a handler panic turned into an error.
type panicError struct{ value any }

func (p panicError) Error() string { return "job handler panicked" }

// errNoHandler is the error of a job whose kind has no handler.
var errNoHandler = errors.New("no handler for this job kind")

// classifyJobError tells how a job attempt failed.
func classifyJobError(err error) monitor.JobErrorKind {
	var at retryAt
	var p panicError
	switch {
	case errors.As(err, &p):
		return monitor.JobErrorPanic
	case errors.Is(err, errNoHandler):
		return monitor.JobErrorNoHandler
	case errors.As(err, &at):
		return monitor.JobErrorRescheduled
	case errors.Is(err, errNotYet):
		return monitor.JobErrorNotYet
	}
	return monitor.JobErrorHandler
}

// maxJobError bounds the stored last error, in bytes.
const maxJobError = 1000

// jobErrorText is what a failed attempt leaves in Job.LastError: its kind
// and the error's text, scrubbed (a panic's value is left to the log).
func jobErrorText(kind monitor.JobErrorKind, err error) string {
	return truncateUTF8(string(kind)+": "+scrubJobError(err.Error()), maxJobError)
}

// Patterns of what must never reach an operator through a job's last
// error, even if a handler or a dependency wrote it into an error message.
var (
	// The user information of a URL: scheme://user:password@host.
	urlUserinfo = regexp.MustCompile(`://[^\s/@]+@`)
	// Bearer tokens, then API keys, webhook secrets and key=value
	// credentials.
	bearerToken = regexp.MustCompile(`(?i)\bbearer\s+\S+`)
	secretToken = regexp.MustCompile(`(?i)\b(?:sk|pk|rk)_(?:test|live)_[A-Za-z0-9_-]+|\bwhsec_[A-Za-z0-9+/=_-]+|\b(?:password|passwd|pwd|secret|token|api_?key|authorization)\s*[=:]\s*\S+`)
	// Alphanumeric words without underscores (ids have one) that hold six
	// or more digits in a row: account numbers, PromptPay phone numbers and
	// national ids.
	longNumber = regexp.MustCompile(`[A-Za-z0-9]*[0-9]{6,}[A-Za-z0-9]*`)
)

// scrubJobError masks credentials and anything that may be an account
// number in an error text.
func scrubJobError(s string) string {
	if s == "" {
		return ""
	}
	s = urlUserinfo.ReplaceAllString(s, "://[redacted]@")
	s = bearerToken.ReplaceAllString(s, "[redacted]")
	s = secretToken.ReplaceAllString(s, "[redacted]")
	var b strings.Builder
	last := 0
	for _, m := range longNumber.FindAllStringIndex(s, -1) {
		if m[0] > 0 && isIDChar(s[m[0]-1]) || m[1] < len(s) && isIDChar(s[m[1]]) {
			continue // part of an id such as po_000001
		}
		b.WriteString(s[last:m[0]])
		b.WriteString("[redacted]")
		last = m[1]
	}
	b.WriteString(s[last:])
	return b.String()
}

// isIDChar reports whether c joins a word into an identifier.
func isIDChar(c byte) bool { return c == '_' }

// truncateUTF8 cuts s to at most n bytes without splitting a character.
func truncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// payoutStaleAt is when recovery escalates po, while it is processing (see
// staleAt).
func payoutStaleAt(po *PayoutIntent) *time.Time {
	return staleAt(po.Status == PayoutProcessing, po.UpdatedAt)
}

// logStalePayout escalates a payout that is processing past its stale time:
// an error-level line on every attempt of its dispatch or inquiry jobs.
func (s *Service) logStalePayout(ctx context.Context, po *PayoutIntent) {
	s.logStale(ctx, "payout_intent", po.ID, po.Provider, payoutStaleAt(po))
}

// logStale is the error-level line of an intent (kind "payment_intent" or
// "payout_intent") still processing at or after its stale time; nil: not
// processing.
func (s *Service) logStale(ctx context.Context, kind, id, provider string, stale *time.Time) {
	if stale != nil && !s.Now().Before(*stale) {
		s.log.ErrorContext(ctx, strings.TrimSuffix(kind, "_intent")+" still processing past its stale time; needs operator attention",
			kind, id, "provider", provider, "stale_at", wire.FormatTime(*stale))
	}
}
