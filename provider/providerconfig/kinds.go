package providerconfig

import (
	"slices"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/provider/sandbox"
)

// DefaultKinds are the kinds paykit ships with real adapters. The sandbox
// kind is the host's: see SandboxKind.
func DefaultKinds() map[string]Kind {
	return map[string]Kind{}
}

// SandboxKind is the kind of the sandbox Provider p (already built by the
// host, which runs its PSP), serving the test environment with the
// routes of sandbox.DefaultRouting.
func SandboxKind(p *sandbox.Provider) Kind {
	rt := sandbox.DefaultRouting()
	return Kind{
		Environments: []paykit.Environment{paykit.Test},
		New:          func(Adapter) (paykit.Provider, error) { return p, nil },
		Route: func(method, country string) (paykit.PaymentRoute, bool) {
			for _, r := range rt.Payments {
				if r.Method == method && r.Country == country {
					r.Environment, r.Provider = "", ""
					return r, true
				}
			}
			return paykit.PaymentRoute{}, false
		},
		Methods: func(country string) []string {
			var out []string
			for _, r := range rt.Payments {
				if r.Country == country && !slices.Contains(out, r.Method) {
					out = append(out, r.Method)
				}
			}
			return out
		},
		PayoutBanks: func(country string) (string, []paykit.PayoutBank, bool) {
			for _, r := range rt.Payouts {
				if r.Country == country {
					return r.Currency, slices.Clone(r.Banks), true
				}
			}
			return "", nil, false
		},
	}
}
