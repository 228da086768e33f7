package paykit

import "time"

// Test-only access to the errors by which handlers ask for a retry.

// ErrNotYet is the answer of a handler whose outcome is not final yet.
var ErrNotYet = errNotYet

// RetryAt is the answer of a handler that chooses its next run time.
func RetryAt(t time.Time) error { return retryAt{at: t} }

// WaitAt is the answer of a handler whose job waits, untried, until t (a
// paused webhook endpoint).
func WaitAt(t time.Time) error { return retryAt{at: t, wait: true} }
