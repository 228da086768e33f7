package providerconfig

import (
	"slices"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/provider/opn"
	"github.com/paykit/paykit/provider/sandbox"
	"github.com/paykit/paykit/provider/stripe"
)

// DefaultKinds are the kinds paykit ships with real adapters: "opn"
// (Opn Payments) and "stripe" (Stripe). The sandbox kind is the host's: see
// SandboxKind.
//
// Their secrets: opn reads secret_key (required), public_key and
// webhook_secrets (the base64 secrets Opn shows, comma-separated during a
// rotation); stripe reads secret_key and webhook_secrets (whsec_…, the
// same), both required.
func DefaultKinds() map[string]Kind {
	return map[string]Kind{
		"opn":    opnKind(),
		"stripe": stripeKind(),
	}
}

// stripeKind needs account_country: what a Stripe account can accept
// depends on its country (stripe.AccountServes).
func stripeKind() Kind {
	return Kind{
		Secrets:        []Secret{{Role: "secret_key", Required: true}, {Role: "webhook_secrets", Required: true}},
		AccountCountry: true,
		New: func(a Adapter) (paykit.Provider, error) {
			return stripe.New(stripe.Config{
				SecretKey: a.Secrets["secret_key"], WebhookSecrets: WebhookSecrets(a.Secrets["webhook_secrets"]),
				BaseURL: a.Entry.BaseURL, Timeout: a.Timeout, AccountCountry: a.Entry.AccountCountry, Methods: a.Methods,
			})
		},
		Route: stripe.Route,
		Methods: func(country string) []string {
			var out []string
			for _, m := range servedIn(stripe.Methods, stripe.Route)(country) {
				if stripe.AccountServes(country, m) {
					out = append(out, m)
				}
			}
			return out
		},
	}
}

func opnKind() Kind {
	return Kind{
		Secrets: []Secret{{Role: "secret_key", Required: true}, {Role: "public_key"}, {Role: "webhook_secrets", Required: true}},
		New: func(a Adapter) (paykit.Provider, error) {
			return opn.New(opn.Config{
				SecretKey: a.Secrets["secret_key"], PublicKey: a.Secrets["public_key"],
				WebhookSecrets: WebhookSecrets(a.Secrets["webhook_secrets"]),
				BaseURL:        a.Entry.BaseURL, Timeout: a.Timeout, Methods: a.Methods,
			})
		},
		Route:   opn.Route,
		Methods: servedIn(opn.Methods, opn.Route),
		PayoutBanks: func(country string) (string, []paykit.PayoutBank, bool) {
			if country != "TH" {
				return "", nil, false
			}
			return "THB", opn.ThaiPayoutBanks(), true
		},
	}
}

// servedIn lists the methods of all that route serves in a country.
func servedIn(all func() []string, route func(method, country string) (paykit.PaymentRoute, bool)) func(string) []string {
	return func(country string) []string {
		var out []string
		for _, m := range all() {
			if _, ok := route(m, country); ok {
				out = append(out, m)
			}
		}
		return out
	}
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
