package paykit

import (
	"crypto/rand"
	"encoding/base32"
	"errors"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"
)

// ManualClock is a clock that moves only when told; tests pass its Now to
// Config.Now.
type ManualClock struct {
	mu sync.Mutex
	t  time.Time
}

// NewManualClock returns a clock standing at t.
func NewManualClock(t time.Time) *ManualClock { return &ManualClock{t: t} }

// Now returns the clock's time.
func (c *ManualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Advance moves the clock forward by d.
func (c *ManualClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// Set moves the clock to t.
func (c *ManualClock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

var idEncoding = base32.NewEncoding("0123456789abcdefghjkmnpqrstvwxyz").WithPadding(base32.NoPadding)

// RandomID returns prefix + "_" + 24 characters of crypto randomness. It is
// the default Config.NewID.
func RandomID(prefix string) string {
	b := make([]byte, 15)
	if _, err := io.ReadFull(rand.Reader, b); err != nil {
		panic("paykit: crypto/rand failed: " + err.Error())
	}
	return prefix + "_" + idEncoding.EncodeToString(b)
}

// SequentialIDs returns a NewID function that makes predictable ids
// (prefix_000001, prefix_000002, ...) for tests.
func SequentialIDs() func(prefix string) string {
	var mu sync.Mutex
	n := 0
	return func(prefix string) string {
		mu.Lock()
		defer mu.Unlock()
		n++
		return prefix + "_" + strings.Repeat("0", max(0, 6-len(strconv.Itoa(n)))) + strconv.Itoa(n)
	}
}

var errAmount = errors.New("amount must be a string of a positive integer in minor units")

// ParseAmount parses a contract amount string (^[1-9]\d*$, at most 18
// digits so that it always fits an int64) into minor units.
func ParseAmount(s string) (int64, error) {
	if s == "" || s[0] < '1' || s[0] > '9' || len(s) > 18 {
		return 0, errAmount
	}
	for i := 1; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, errAmount
		}
	}
	return strconv.ParseInt(s, 10, 64)
}
