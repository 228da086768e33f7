package webhooks

import (
	"math/rand/v2"
	"time"
)

// Schedule is the delay before the next attempt after failed attempt 1, 2, …,
// 9 (about three days in all); after the 10th attempt (MaxAttempts) fails,
// delivery gives up. NextDelay adds jitter.
var Schedule = []time.Duration{
	5 * time.Second,
	5 * time.Minute,
	30 * time.Minute,
	2 * time.Hour,
	5 * time.Hour,
	10 * time.Hour,
	14 * time.Hour,
	20 * time.Hour,
	24 * time.Hour,
}

const (
	// MaxAttempts is the number of attempts (the first and nine retries)
	// before delivery gives up.
	MaxAttempts = 10
	// MaxRetryAfter caps the delay a receiver can ask for with Retry-After.
	MaxRetryAfter = 24 * time.Hour
	// Jitter is the relative spread NextDelay applies to the schedule (±10%).
	Jitter = 0.1
)

// NextDelay returns the delay before the next attempt after failedAttempts
// attempts have failed (1 after the first attempt fails): Schedule[failedAttempts-1]
// multiplied by a factor between 0.9 and 1.1 chosen by rnd (a function
// returning values in [0, 1), like math/rand/v2.Float64, which is used when
// rnd is nil; a value of 0.5 gives the exact schedule), or retryAfter capped
// at MaxRetryAfter when that is larger. It returns false when the schedule is
// exhausted (failedAttempts >= MaxAttempts): give up. A failedAttempts below 1
// is treated as 1.
func NextDelay(failedAttempts int, retryAfter time.Duration, rnd func() float64) (time.Duration, bool) {
	if failedAttempts > len(Schedule) {
		return 0, false
	}
	failedAttempts = max(failedAttempts, 1)
	if rnd == nil {
		rnd = rand.Float64
	}
	f := min(max(rnd(), 0), 1)
	d := time.Duration(float64(Schedule[failedAttempts-1]) * (1 - Jitter + 2*Jitter*f))
	if ra := min(retryAfter, MaxRetryAfter); ra > d {
		d = ra
	}
	return d, true
}
