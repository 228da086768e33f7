package paykit

import (
	"maps"
	"slices"
	"sync"
	"time"
)

// CircuitBreaker configures when paykit stops offering a Provider new
// attempts: after Failures calls in a row without a trustworthy answer
// (timeouts, refused or dropped connections, 5xx), its circuit opens for
// Cooldown. While open, new payments go to the next route that serves them
// (a Provider whose circuit is open has received nothing of theirs);
// attempts already at the Provider keep being recovered there. After the
// cool-down, the next answer decides: a trustworthy one closes the
// circuit, another failure opens it again.
type CircuitBreaker struct {
	Failures int           // default 5
	Cooldown time.Duration // default 30s
}

// circuit is one Provider's breaker, on the Service's clock. It is local
// to the instance: each server judges the Providers it talks to.
type circuit struct {
	mu        sync.Mutex
	failures  int
	openUntil time.Time
}

// observe records the outcome of a call made at now.
func (c *circuit) observe(cfg CircuitBreaker, o Outcome, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !o.Uncertain() {
		c.failures, c.openUntil = 0, time.Time{}
		return
	}
	c.failures++
	if c.failures >= cfg.Failures {
		c.openUntil = now.Add(cfg.Cooldown)
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

// ProviderState is what this instance knows of a configured Provider.
type ProviderState struct {
	Name     string
	Disabled bool // Config.DisabledProviders: no new attempts
	// CircuitOpen: calls failed in a row; no new attempts until
	// OpenUntil.
	CircuitOpen bool
	OpenUntil   time.Time
}

// ProviderStates reports each configured Provider's state at this
// instance, by name.
func (s *Service) ProviderStates() []ProviderState {
	now := s.Now()
	out := make([]ProviderState, 0, len(s.providers))
	for _, name := range slices.Sorted(maps.Keys(s.providers)) {
		a := s.providers[name]
		st := ProviderState{Name: name, Disabled: s.disabled[name]}
		if until, open := a.circuit.openAt(now); open {
			st.CircuitOpen, st.OpenUntil = true, until
		}
		out = append(out, st)
	}
	return out
}
