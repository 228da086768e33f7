package paykit

import (
	"context"
	"fmt"
	"maps"
	"slices"
)

// adapter is a configured Provider with the method sets its declared
// capabilities promise, found once at New.
type adapter struct {
	Provider
	name    string
	caps    Capabilities
	payouts PayoutProvider  // set with CapPayouts
	refunds RefundProvider  // set with CapRefunds
	payer   PayerSimulator  // set with CapPayerSimulation
	returns ReturnSimulator // set with CapReturns
	// set with CapDisputes, CapDisputeSimulation, CapSettlement and
	// CapSettlementSimulation
	disputes   DisputeProvider
	disputeSim DisputeSimulator
	settlement SettlementReporter
	settleSim  SettlementSimulator
	circuit    circuit
	calls      callCounts // create calls by outcome
}

// newAdapters reads each Provider's declaration and checks that it has the
// methods of what it declares; t traces their calls.
func newAdapters(providers map[string]Provider, t *tel) (map[string]*adapter, error) {
	out := make(map[string]*adapter, len(providers))
	for _, name := range slices.Sorted(maps.Keys(providers)) {
		p := providers[name]
		if p == nil {
			return nil, fmt.Errorf("paykit: Config.Providers[%q] is nil", name)
		}
		a := &adapter{Provider: p, name: name, caps: p.Capabilities()}
		var ok bool
		lacks := func(c Capabilities, iface string) error {
			return fmt.Errorf("paykit: Provider %q declares %s but lacks its methods (%s)", name, c, iface)
		}
		if a.caps.Has(CapPayouts) {
			if a.payouts, ok = p.(PayoutProvider); !ok {
				return nil, lacks(CapPayouts, "paykit.PayoutProvider")
			}
		}
		if a.caps.Has(CapRefunds) {
			if a.refunds, ok = p.(RefundProvider); !ok {
				return nil, lacks(CapRefunds, "paykit.RefundProvider")
			}
		}
		if a.caps.Has(CapPayerSimulation) {
			if a.payer, ok = p.(PayerSimulator); !ok {
				return nil, lacks(CapPayerSimulation, "paykit.PayerSimulator")
			}
		}
		if a.caps.Has(CapReturns) {
			if a.returns, ok = p.(ReturnSimulator); !ok {
				return nil, lacks(CapReturns, "paykit.ReturnSimulator")
			}
		}
		if a.caps.Has(CapDisputes) {
			if a.disputes, ok = p.(DisputeProvider); !ok {
				return nil, lacks(CapDisputes, "paykit.DisputeProvider")
			}
		}
		if a.caps.Has(CapDisputeSimulation) {
			if a.disputeSim, ok = p.(DisputeSimulator); !ok {
				return nil, lacks(CapDisputeSimulation, "paykit.DisputeSimulator")
			}
		}
		if a.caps.Has(CapSettlement) {
			if a.settlement, ok = p.(SettlementReporter); !ok {
				return nil, lacks(CapSettlement, "paykit.SettlementReporter")
			}
		}
		if a.caps.Has(CapSettlementSimulation) {
			if a.settleSim, ok = p.(SettlementSimulator); !ok {
				return nil, lacks(CapSettlementSimulation, "paykit.SettlementSimulator")
			}
		}
		a.trace(t)
		out[name] = a
	}
	return out, nil
}

// paymentRouteNeeds is what a payment route needs of its Provider.
const paymentRouteNeeds = CapPayments | CapCancel

// checkRoutes refuses a route whose Provider is missing or does not
// declare what the route needs.
func checkRoutes(rt Routing, adapters map[string]*adapter) error {
	check := func(what, provider string, need Capabilities, cannot string) error {
		a, ok := adapters[provider]
		if !ok {
			return fmt.Errorf("paykit: %s names Provider %q, which is not in Config.Providers", what, provider)
		}
		if !a.caps.Has(need) {
			return fmt.Errorf("paykit: %s names Provider %q, which %s: the route needs %s and the Provider declares %s",
				what, provider, cannot, need, a.caps)
		}
		return nil
	}
	for _, r := range rt.Payments {
		if err := check(fmt.Sprintf("route %s %s %s/%s", r.Environment, r.Method, r.Country, r.Currency), r.Provider, paymentRouteNeeds, "cannot serve payments"); err != nil {
			return err
		}
	}
	for _, r := range rt.Payouts {
		if err := check(fmt.Sprintf("payout route %s %s/%s", r.Environment, r.Country, r.Currency), r.Provider, CapPayouts, "cannot pay out"); err != nil {
			return err
		}
	}
	return nil
}

// usable reports whether new attempts may go to the named Provider now:
// it is configured, not disabled, and its circuit is closed.
func (s *Service) usable(name string) bool {
	a, ok := s.providers[name]
	return ok && !s.disabled[name] && !a.circuit.open(s.Now())
}

// observe feeds the outcome of a call to the named Provider to its circuit.
func (s *Service) observe(name string, r Result) {
	if a, ok := s.providers[name]; ok {
		a.circuit.observe(s.breaker, r.Outcome, s.Now())
	}
}

// provider returns the adapter of the Provider a resource was routed to,
// if it is configured and declares need. In a job run that lost its lease
// it returns ErrLeaseLost instead: the run must not call the Provider.
func (s *Service) provider(ctx context.Context, name string, need Capabilities) (*adapter, error) {
	if err := CheckJobLease(ctx); err != nil {
		return nil, err
	}
	a, ok := s.providers[name]
	if !ok {
		return nil, fmt.Errorf("Provider %q is not configured", name)
	}
	if !a.caps.Has(need) {
		return nil, fmt.Errorf("Provider %q does not declare %s", name, need)
	}
	if inJobRun(ctx) {
		if until, open := a.circuit.openAt(s.Now()); open {
			// The job waits out the cool-down instead of calling a Provider
			// that keeps failing; spread so that one call decides first.
			return nil, retryAt{at: until.Add(jitterWith(s.breaker.cooldown/2, s.rnd)), wait: true}
		}
	}
	return a, nil
}

// clone copies the routing deeply, so that a host editing its Config
// after New changes nothing under the Service.
func (rt Routing) clone() Routing {
	out := Routing{Payments: slices.Clone(rt.Payments), Payouts: slices.Clone(rt.Payouts)}
	for i := range out.Payments {
		r := &out.Payments[i]
		r.CustomerFields, r.Options, r.Banks = slices.Clone(r.CustomerFields), slices.Clone(r.Options), slices.Clone(r.Banks)
	}
	for i := range out.Payouts {
		out.Payouts[i].Banks = slices.Clone(out.Payouts[i].Banks)
	}
	return out
}
