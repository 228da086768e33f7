package paykit

import (
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/paykit/paykit/internal/monitor"
)

// circuitBreaker is when a Provider's circuit opens (Config.CircuitFailures)
// and for how long (Config.CircuitCooldown), defaults applied.
type circuitBreaker struct {
	failures int
	cooldown time.Duration
}

// circuit is one Provider's breaker, on the Service's clock. It is local
// to the instance: each server judges the Providers it talks to.
type circuit struct {
	mu        sync.Mutex
	failures  int
	openUntil time.Time
}

// observe records the outcome of a call made at now.
func (c *circuit) observe(cfg circuitBreaker, o Outcome, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !o.Uncertain() {
		c.failures, c.openUntil = 0, time.Time{}
		return
	}
	c.failures++
	if c.failures >= cfg.failures {
		c.openUntil = now.Add(cfg.cooldown)
	}
}

// open reports whether the circuit refuses new attempts at now.
func (c *circuit) open(now time.Time) bool {
	_, open := c.openAt(now)
	return open
}

// openAt reports whether the circuit is open at now, and until when.
func (c *circuit) openAt(now time.Time) (time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.openUntil, now.Before(c.openUntil)
}

// providerStates is monitor.ProviderStates: each configured Provider's
// state at this instance, by name.
func (s *Service) providerStates() []monitor.ProviderState {
	now := s.Now()
	out := make([]monitor.ProviderState, 0, len(s.providers))
	for _, name := range slices.Sorted(maps.Keys(s.providers)) {
		a := s.providers[name]
		st := monitor.ProviderState{Name: name, Disabled: s.disabled[name]}
		if until, open := a.circuit.openAt(now); open {
			st.CircuitOpen, st.OpenUntil = true, until
		}
		out = append(out, st)
	}
	return out
}
