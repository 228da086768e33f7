package httpadapter

import (
	"math"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/paykit/paykit"
)

// keyLimiter is a token bucket per API key: perSecond sustained, bursts of
// twice that.
type keyLimiter struct {
	limit rate.Limit
	burst int
	now   func() time.Time

	mu      sync.Mutex
	buckets map[string]*rate.Limiter
}

// maxIdleBuckets bounds the map: beyond it, full buckets (which behave
// exactly like new ones) are dropped.
const maxIdleBuckets = 4096

func newKeyLimiter(perSecond float64, now func() time.Time) *keyLimiter {
	if perSecond <= 0 {
		return nil
	}
	return &keyLimiter{
		limit:   rate.Limit(perSecond),
		burst:   max(1, int(math.Ceil(2*perSecond))),
		now:     now,
		buckets: map[string]*rate.Limiter{},
	}
}

// allow takes a token for key, or returns a 429 rate_limited whose
// RetryAfter says when one will be available.
func (l *keyLimiter) allow(key string) error {
	if l == nil {
		return nil
	}
	now := l.now()
	l.mu.Lock()
	b, ok := l.buckets[key]
	if !ok {
		if len(l.buckets) >= maxIdleBuckets {
			for k, other := range l.buckets {
				if other.TokensAt(now) >= float64(l.burst) {
					delete(l.buckets, k)
				}
			}
		}
		b = rate.NewLimiter(l.limit, l.burst)
		l.buckets[key] = b
	}
	l.mu.Unlock()

	res := b.ReserveN(now, 1)
	if delay := res.DelayFrom(now); delay > 0 {
		res.CancelAt(now)
		e := errorf(paykit.CodeRateLimited, "", "Too many requests for this API key; retry later.")
		e.RetryAfter = delay
		return e
	}
	return nil
}
