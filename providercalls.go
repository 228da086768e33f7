package paykit

import (
	"cmp"
	"context"
	"log/slog"
	"slices"
	"strings"
	"sync"

	"github.com/paykit/paykit/internal/monitor"
)

// callCounts counts a Provider's calls by call and outcome.
type callCounts struct {
	mu sync.Mutex
	m  map[callKey]uint64
}

type callKey struct {
	call    string
	outcome Outcome
}

// unreachable reports whether an outcome means the Provider did not
// answer: a connection refused or dropped, a 5xx, a timeout.
func unreachable(o Outcome) bool {
	return o == OutcomeUnacknowledged || o == OutcomeUnknown
}

// providerCreated records a create call's result: the circuit breaker
// sees it, it is counted by outcome, and it is logged, at WARN when the
// Provider did not answer (so that one that is down on every create is
// seen), else at INFO. attrs name the resource.
func (s *Service) providerCreated(ctx context.Context, name, call string, r Result, attrs ...slog.Attr) {
	s.observe(name, r)
	if a, ok := s.providers[name]; ok {
		a.calls.mu.Lock()
		if a.calls.m == nil {
			a.calls.m = map[callKey]uint64{}
		}
		a.calls.m[callKey{call, r.Outcome}]++
		a.calls.mu.Unlock()
	}
	level, msg := slog.LevelInfo, "provider "+strings.ReplaceAll(call, "_", " ")
	if unreachable(r.Outcome) {
		level, msg = slog.LevelWarn, msg+": no answer"
	}
	attrs = append(attrs, slog.String("provider", name), slog.String("outcome", string(r.Outcome)), slog.String("detail", r.Detail))
	s.log.LogAttrs(ctx, level, msg, attrs...)
}

// providerCalls is monitor.ProviderCalls: this process's create calls to
// each Provider by call and outcome, sorted.
func (s *Service) providerCalls() []monitor.ProviderCallCount {
	var out []monitor.ProviderCallCount
	for name, a := range s.providers {
		a.calls.mu.Lock()
		for k, n := range a.calls.m {
			out = append(out, monitor.ProviderCallCount{Provider: name, Call: k.call, Outcome: string(k.outcome), Count: n})
		}
		a.calls.mu.Unlock()
	}
	slices.SortFunc(out, func(a, b monitor.ProviderCallCount) int {
		return cmp.Or(cmp.Compare(a.Provider, b.Provider), cmp.Compare(a.Call, b.Call), cmp.Compare(a.Outcome, b.Outcome))
	})
	return out
}
