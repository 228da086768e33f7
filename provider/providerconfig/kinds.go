package providerconfig

import (
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/provider/opn"
	"github.com/paykit/paykit/provider/sandbox"
	"github.com/paykit/paykit/provider/stripe"
	"github.com/paykit/paykit/provider/xendit"
)

// DefaultKinds are the kinds paykit ships with real adapters: "opn"
// (Opn Payments), "stripe" (Stripe) and "xendit" (Xendit). The sandbox
// kind is the host's: see SandboxKind.
//
// Their secrets: opn reads secret_key (required), public_key and
// webhook_secrets (the base64 secrets Opn shows, comma-separated during a
// rotation); stripe reads secret_key and webhook_secrets (whsec_…, the
// same), both required; xendit reads secret_key (xnd_…) and
// webhook_secrets (the webhook verification tokens Xendit's Dashboard
// shows, comma-separated during a rotation), both required.
func DefaultKinds() map[string]Kind {
	return map[string]Kind{
		"opn":    opnKind(),
		"stripe": stripeKind(),
		"xendit": xenditKind(),
	}
}

// xenditKind serves the methods of xendit.MethodsIn and pays out in MY
// and TH.
func xenditKind() Kind {
	return Kind{
		Secrets: []Secret{
			{Role: "secret_key", Required: true, Check: prefixed("a Xendit secret API key", "xnd_")},
			{Role: "webhook_secrets", Required: true, Check: eachSecret(func(string) error { return nil })},
		},
		New: func(a Adapter) (paykit.Provider, error) {
			return xendit.New(xendit.Config{
				SecretKey: a.Secrets["secret_key"], CallbackTokens: WebhookSecrets(a.Secrets["webhook_secrets"]),
				BaseURL: a.Entry.BaseURL, Timeout: a.Timeout, Methods: a.Methods,
				SettlementPeriod: a.SettlementPeriod, SettlementDelay: a.SettlementDelay,
				SettlementReports: a.Entry.SettlementReports,
			})
		},
		Route:       xendit.Route,
		Methods:     xendit.MethodsIn,
		PayoutBanks: xendit.PayoutBanks,
	}
}

// stripeKind needs account_country: what a Stripe account can accept
// depends on its country (stripe.AccountServes).
func stripeKind() Kind {
	return Kind{
		Secrets: []Secret{
			{Role: "secret_key", Required: true, Check: prefixed("a Stripe secret key", "sk_", "rk_")},
			{Role: "webhook_secrets", Required: true, Check: eachSecret(prefixed("a Stripe webhook signing secret", "whsec_"))},
		},
		AccountCountry: true,
		New: func(a Adapter) (paykit.Provider, error) {
			return stripe.New(stripe.Config{
				SecretKey: a.Secrets["secret_key"], WebhookSecrets: WebhookSecrets(a.Secrets["webhook_secrets"]),
				BaseURL: a.Entry.BaseURL, Timeout: a.Timeout, AccountCountry: a.Entry.AccountCountry, Methods: a.Methods,
				SettlementReports: a.Entry.SettlementReports,
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
		Secrets: []Secret{
			{Role: "secret_key", Required: true, Check: prefixed("an Opn secret key", "skey_")},
			{Role: "public_key", Check: prefixed("an Opn public key", "pkey_")},
			{Role: "webhook_secrets", Required: true, Check: eachSecret(base64Secret)},
		},
		New: func(a Adapter) (paykit.Provider, error) {
			return opn.New(opn.Config{
				SecretKey: a.Secrets["secret_key"], PublicKey: a.Secrets["public_key"],
				WebhookSecrets: WebhookSecrets(a.Secrets["webhook_secrets"]),
				BaseURL:        a.Entry.BaseURL, Timeout: a.Timeout, Methods: a.Methods,
				SettlementPeriod: a.SettlementPeriod, SettlementDelay: a.SettlementDelay,
				SettlementReports: a.Entry.SettlementReports,
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

// prefixed checks that a secret starts with one of prefixes, as the keys
// described by what do.
func prefixed(what string, prefixes ...string) func(string) error {
	return func(v string) error {
		for _, p := range prefixes {
			if strings.HasPrefix(strings.TrimSpace(v), p) {
				return nil
			}
		}
		return fmt.Errorf("is not %s (it starts with %s)", what, strings.Join(prefixes, " or "))
	}
}

// eachSecret checks every comma-separated secret of a webhook secret
// variable, which holds at least one.
func eachSecret(check func(string) error) func(string) error {
	return func(v string) error {
		secrets := WebhookSecrets(v)
		if len(secrets) == 0 {
			return errors.New("holds no secret")
		}
		for i, s := range secrets {
			if err := check(s); err != nil {
				return fmt.Errorf("holds a secret (%d of %d) that %w", i+1, len(secrets), err)
			}
		}
		return nil
	}
}

// base64Secret checks an Opn webhook secret: Opn shows it in base64, which
// the adapter decodes to the HMAC key.
func base64Secret(v string) error {
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if _, err := enc.DecodeString(v); err == nil {
			return nil
		}
	}
	return errors.New("is not base64: paste the webhook secret as Opn's dashboard shows it (base64)")
}
