// Package periods cuts time into the settlement periods of the Provider
// adapters that make their own settlement batches out of a Provider's
// transactions (opn, xendit): a batch is a period, in one currency,
// named by the period's close.
package periods

import (
	"cmp"
	"strings"
	"time"
)

// Closing is the first boundary of period (a multiple of it since the
// zero time; for a day, midnight UTC) at or after t: the close of the
// period something at t belongs to.
func Closing(t time.Time, period time.Duration) time.Time {
	t = t.UTC()
	start := t.Truncate(period)
	if start.Equal(t) {
		return start
	}
	return start.Add(period)
}

// Key names a batch: the close of its period, and its currency.
type Key struct {
	Closes   time.Time
	Currency string
}

// Ref is the batch Reference of k: prefix, the close in RFC 3339 and the
// currency, joined by "_".
func (k Key) Ref(prefix string) string {
	return prefix + "_" + k.Closes.Format(time.RFC3339) + "_" + k.Currency
}

// Compare orders keys by close, then currency.
func (k Key) Compare(o Key) int {
	return cmp.Or(k.Closes.Compare(o.Closes), strings.Compare(k.Currency, o.Currency))
}

// Parse reads a batch Reference made by Ref with prefix.
func Parse(prefix, ref string) (Key, bool) {
	rest, ok := strings.CutPrefix(ref, prefix+"_")
	i := strings.LastIndexByte(rest, '_')
	if !ok || i < 0 {
		return Key{}, false
	}
	closes, err := time.Parse(time.RFC3339, rest[:i])
	ccy := rest[i+1:]
	if err != nil || len(ccy) != 3 || strings.ToUpper(ccy) != ccy {
		return Key{}, false
	}
	return Key{closes.UTC(), ccy}, true
}
