package providerconfig_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/provider/providerconfig"
	"github.com/paykit/paykit/provider/sandbox"
	"github.com/paykit/paykit/store/memory"
)

// kinds are the sandbox kind and a stand-in "bank" kind with secrets,
// FPX with two banks, and Thai payouts.
func kinds(built *[]providerconfig.Adapter) map[string]providerconfig.Kind {
	sb := sandbox.New(sandbox.Config{BaseURL: "http://127.0.0.1:1", APIKey: "k"})
	return map[string]providerconfig.Kind{
		"sandbox": providerconfig.SandboxKind(sb),
		"bank": {
			Secrets: []providerconfig.Secret{{Role: "secret_key", Required: true}, {Role: "webhook_secrets"}},
			New: func(a providerconfig.Adapter) (paykit.Provider, error) {
				*built = append(*built, a)
				return sb, nil
			},
			Route: func(method, country string) (paykit.PaymentRoute, bool) {
				if method != "FPX" || country != "MY" {
					return paykit.PaymentRoute{}, false
				}
				return paykit.PaymentRoute{Method: "FPX", Country: "MY", Currency: "MYR", NextAction: paykit.NextActionRedirectToURL,
					CustomerFields: []string{"name", "email"}, Options: []string{"bank"},
					Banks: []paykit.Bank{{Code: "MAYBANK", Name: "Maybank2u", ProviderCode: "mb", Available: true}, {Code: "CIMB", Name: "CIMB Clicks", ProviderCode: "cimb", Available: true}}}, true
			},
			PayoutBanks: func(country string) (string, []paykit.PayoutBank, bool) {
				if country != "TH" {
					return "", nil, false
				}
				return "THB", []paykit.PayoutBank{{Code: "KBANK", ProviderCode: "kbank", RequiresHolderNameTH: true}, {Code: "SCB", ProviderCode: "scb", RequiresHolderNameTH: true}}, true
			},
		},
	}
}

const good = `{
  "providers": [
    {"name": "bank_my", "kind": "bank", "environment": "live", "base_url": "https://api.bank.example",
     "secrets": {"secret_key": "BANK_KEY", "webhook_secrets": "BANK_WHSEC"}, "timeout": "5s"},
    {"name": "backup", "kind": "bank", "environment": "live", "secrets": {"secret_key": "BACKUP_KEY"}, "disabled": true},
    {"name": "sandbox", "kind": "sandbox", "environment": "test", "default_routes": true}
  ],
  "routes": [
    {"environment": "live", "method": "FPX", "country": "MY", "currency": "MYR", "provider": "backup", "priority": 2},
    {"environment": "live", "method": "FPX", "country": "MY", "currency": "MYR", "provider": "bank_my", "priority": 1,
     "min_amount": "100", "max_amount": "3000000", "banks": {"MAYBANK": "MBB0228"}}
  ],
  "payout_routes": [
    {"environment": "live", "country": "TH", "currency": "THB", "provider": "bank_my", "banks": {"KBANK": ""}}
  ]
}`

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestParseBuildsRoutesAndAdapters(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	var built []providerconfig.Adapter
	s, err := providerconfig.Parse([]byte(good), providerconfig.Options{
		Kinds:  kinds(&built),
		Getenv: env(map[string]string{"BANK_KEY": "sk_1", "BANK_WHSEC": "whsec_new, whsec_old", "BACKUP_KEY": "sk_2"}),
	})
	is.NoErr(err)
	is.Equal(s.Webhooks, []string{"bank_my", "backup", "sandbox"})
	is.Equal(s.Disabled, []string{"backup"})
	is.Equal(len(s.Providers), 3)

	is.Equal(len(built), 2)
	is.Equal(built[0].Secrets["secret_key"], "sk_1")
	is.Equal(providerconfig.WebhookSecrets(built[0].Secrets["webhook_secrets"]), []string{"whsec_new", "whsec_old"})
	is.Equal(built[0].Methods, []string{"FPX"})
	is.Equal(built[0].Timeout.String(), "5s")
	is.Equal(built[0].Entry.BaseURL, "https://api.bank.example")

	rt := s.Routing
	live, ok := rt.PaymentRoute(paykit.Live, "FPX", "MY", "MYR", 15000)
	is.True(ok)
	is.Equal(live.Provider, "bank_my") // priority 1 before 2
	is.Equal(live.Banks, []paykit.Bank{{Code: "MAYBANK", Name: "Maybank2u", ProviderCode: "MBB0228", Available: true}})
	is.Equal(len(rt.PaymentRoutes(paykit.Live, "FPX", "MY", "MYR", 15000)), 2)
	is.Equal(len(rt.PaymentRoutes(paykit.Live, "FPX", "MY", "MYR", 3000001)), 1) // above bank_my's range
	_, ok = rt.PaymentRoute(paykit.Live, "PROMPTPAY", "TH", "THB", 15000)
	is.True(!ok)

	// The sandbox's default routes serve the test environment as before.
	for _, want := range sandbox.DefaultRouting().Payments {
		got, ok := rt.PaymentRoute(paykit.Test, want.Method, want.Country, want.Currency, 15000)
		is.True(ok)
		is.Equal(got.Provider, "sandbox")
		is.Equal(got.NextAction, want.NextAction)
	}
	r, bank, ok := rt.PayoutRoute(paykit.Live, "TH", "THB", "KBANK", 5000)
	is.True(ok)
	is.Equal(r.Provider, "bank_my")
	is.Equal(bank.ProviderCode, "kbank")
	_, _, ok = rt.PayoutRoute(paykit.Live, "TH", "THB", "SCB", 5000) // not listed in banks
	is.True(!ok)
	_, _, ok = rt.PayoutRoute(paykit.Test, "TH", "THB", "SCB", 5000) // the sandbox's
	is.True(ok)
}

func TestBadFilesNameTheEntry(t *testing.T) {
	t.Parallel()
	getenv := env(map[string]string{"BANK_KEY": "sk_1"})
	p := `{"name": "bank_my", "kind": "bank", "environment": "live", "secrets": {"secret_key": "BANK_KEY"}}`
	route := func(fields string) string {
		return `{"providers": [` + p + `], "routes": [{"environment": "live", "method": "FPX", "country": "MY", "currency": "MYR", "provider": "bank_my"` + fields + `}]}`
	}
	for _, tc := range []struct{ name, file, want string }{
		{"not JSON", `{"providers": [`, "not a providers file"},
		{"unknown field", `{"providers": [], "route": []}`, `unknown field "route"`},
		{"type error line", "{\n\"providers\": [\n{\"name\": 5}]}", "line 3"},
		{"no providers", `{"providers": []}`, "at least one Provider"},
		{"bad name", `{"providers": [{"name": "Bank My", "kind": "bank", "environment": "live"}]}`, `providers[0] ("Bank My"): name`},
		{"duplicate name", `{"providers": [` + p + `,` + p + `]}`, `providers[1] ("bank_my"): name is used`},
		{"unknown kind", `{"providers": [{"name": "x", "kind": "paypal", "environment": "live"}]}`, `kind "paypal" is not one of bank, sandbox`},
		{"bad environment", `{"providers": [{"name": "x", "kind": "bank", "environment": "prod"}]}`, "environment must be test or live"},
		{"sandbox live", `{"providers": [{"name": "x", "kind": "sandbox", "environment": "live"}]}`, "cannot serve the live environment"},
		{"http live", `{"providers": [{"name": "x", "kind": "bank", "environment": "live", "base_url": "http://api.bank.example", "secrets": {"secret_key": "BANK_KEY"}}]}`, "must be https"},
		{"bad timeout", `{"providers": [{"name": "x", "kind": "bank", "environment": "live", "timeout": "soon", "secrets": {"secret_key": "BANK_KEY"}}]}`, "timeout must be a positive duration"},
		{"secret in file", `{"providers": [{"name": "x", "kind": "bank", "environment": "live", "secrets": {"secret_key": "sk_live_abc123"}}]}`, "must name an environment variable"},
		{"unknown secret", `{"providers": [{"name": "x", "kind": "bank", "environment": "live", "secrets": {"secret_key": "BANK_KEY", "password": "PW"}}]}`, "secrets.password is not a secret"},
		{"missing secret", `{"providers": [{"name": "x", "kind": "bank", "environment": "live"}]}`, "secrets.secret_key is required"},
		{"unset secret", `{"providers": [{"name": "x", "kind": "bank", "environment": "live", "secrets": {"secret_key": "UNSET_KEY"}}]}`, "environment variable UNSET_KEY is not set"},
		{"unknown provider", `{"providers": [` + p + `], "routes": [{"environment": "live", "method": "FPX", "country": "MY", "currency": "MYR", "provider": "nope"}]}`, `routes[0] (FPX MY live via "nope"): provider "nope" is not in providers`},
		{"environment mismatch", `{"providers": [` + p + `], "routes": [{"environment": "test", "method": "FPX", "country": "MY", "currency": "MYR", "provider": "bank_my"}]}`, "differs from its Provider's (live)"},
		{"unknown method", `{"providers": [` + p + `], "routes": [{"environment": "live", "method": "PAYPAL", "country": "MY", "currency": "MYR", "provider": "bank_my"}]}`, `method "PAYPAL" is not one of`},
		{"method not served", `{"providers": [` + p + `], "routes": [{"environment": "live", "method": "TNG", "country": "MY", "currency": "MYR", "provider": "bank_my"}]}`, "does not serve TNG"},
		{"currency", route(`, "currency": "THB"`), "duplicate"},
		{"amount not a string", route(`, "min_amount": 100`), "line 1"},
		{"amount", route(`, "min_amount": "1.5"`), "min_amount must be a string of minor units"},
		{"range", route(`, "min_amount": "500", "max_amount": "100"`), "max_amount is below min_amount"},
		{"priority", route(`, "priority": -1`), "priority must not be negative"},
		{"unknown bank", route(`, "banks": {"BSN": ""}`), `banks: "BSN" is not a bank of FPX`},
		{"payouts", `{"providers": [` + p + `], "payout_routes": [{"environment": "live", "country": "MY", "currency": "MYR", "provider": "bank_my"}]}`, `payout_routes[0] (MY live via "bank_my"): a bank Provider does not pay out in "MY"`},
		{"payout bank", `{"providers": [` + p + `], "payout_routes": [{"environment": "live", "country": "TH", "currency": "THB", "provider": "bank_my", "banks": {"XYZ": ""}}]}`, `banks: "XYZ" is not a bank`},
		{"two values", `{"providers": [` + p + `]} {}`, "more than one JSON value"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var built []providerconfig.Adapter
			file := tc.file
			if tc.name == "currency" {
				file = strings.Replace(route(""), `"currency": "MYR"`, `"currency": "THB"`, 1)
				tc.want = `currency "THB": FPX in MY is paid in MYR`
			}
			path := filepath.Join(t.TempDir(), "providers.json")
			if err := os.WriteFile(path, []byte(file), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := providerconfig.Load(path, providerconfig.Options{Kinds: kinds(&built), Getenv: getenv})
			if err == nil {
				t.Fatalf("no error; want %q", tc.want)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, "providers file "+path+": ") || !strings.Contains(msg, tc.want) {
				t.Errorf("error %q: want the file and %q", msg, tc.want)
			}
			if strings.Contains(msg, "sk_live_abc123") || strings.Contains(msg, "sk_1") {
				t.Errorf("error %q echoes a secret", msg)
			}
		})
	}
}

func TestDefaultKindsBuildStripeAndOpn(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	vars := env(map[string]string{
		"STRIPE_KEY": "sk_test_x", "STRIPE_WHSEC": "whsec_a,whsec_b",
		"OPN_KEY": "skey_test_x", "OPN_WHSEC": "c2VjcmV0LXNlY3JldC1zZWNyZXQ=",
	})
	s, err := providerconfig.Parse([]byte(`{
	  "providers": [
	    {"name": "stripe_my", "kind": "stripe", "environment": "live", "account_country": "MY", "default_routes": true,
	     "secrets": {"secret_key": "STRIPE_KEY", "webhook_secrets": "STRIPE_WHSEC"}},
	    {"name": "opn_th", "kind": "opn", "environment": "live",
	     "secrets": {"secret_key": "OPN_KEY", "webhook_secrets": "OPN_WHSEC"}}
	  ],
	  "routes": [
	    {"environment": "live", "method": "PROMPTPAY", "country": "TH", "currency": "THB", "provider": "opn_th"},
	    {"environment": "live", "method": "FPX", "country": "MY", "currency": "MYR", "provider": "opn_th", "priority": 1}
	  ],
	  "payout_routes": [{"environment": "live", "country": "TH", "currency": "THB", "provider": "opn_th"}]
	}`), providerconfig.Options{Getenv: vars})
	is.NoErr(err)
	is.Equal(s.Providers["stripe_my"].Capabilities(), paykit.CapPayments|paykit.CapCancel|paykit.CapRefunds|paykit.CapDisputes) // no settlement_reports
	is.True(s.Providers["opn_th"].Capabilities().Has(paykit.CapPayouts | paykit.CapDisputes))
	fpx := s.Routing.PaymentRoutes(paykit.Live, "FPX", "MY", "MYR", 5000)
	is.Equal(len(fpx), 2)
	is.Equal(fpx[0].Provider, "stripe_my") // the default route, priority 0, before opn's
	is.Equal(fpx[1].Provider, "opn_th")
	b, ok := fpx[0].Bank("MAYBANK")
	is.True(ok)
	is.Equal(b.ProviderCode, "maybank2u")
	_, ok = s.Routing.PaymentRoute(paykit.Live, "PROMPTPAY", "MY", "MYR", 5000) // a MY account: no PromptPay
	is.True(!ok)
	_, bank, ok := s.Routing.PayoutRoute(paykit.Live, "TH", "THB", "KBANK", 5000)
	is.True(ok)
	is.True(bank.ProviderCode != "")

	// A paykit.Service takes the result as it is.
	_, err = paykit.New(paykit.Config{Store: memory.New(), Routing: s.Routing, Providers: s.Providers, DisabledProviders: s.Disabled})
	is.NoErr(err)

	for file, want := range map[string]string{
		`{"providers": [{"name": "s", "kind": "stripe", "environment": "live", "secrets": {"secret_key": "STRIPE_KEY", "webhook_secrets": "STRIPE_WHSEC"}}]}`:                                                                                                                                     "account_country is required",
		`{"providers": [{"name": "o", "kind": "opn", "environment": "live", "account_country": "TH", "secrets": {"secret_key": "OPN_KEY", "webhook_secrets": "OPN_WHSEC"}}]}`:                                                                                                                     "account_country is not a setting",
		`{"providers": [{"name": "s", "kind": "stripe", "environment": "live", "account_country": "TH", "secrets": {"secret_key": "STRIPE_KEY", "webhook_secrets": "STRIPE_WHSEC"}}], "routes": [{"environment": "live", "method": "FPX", "country": "MY", "currency": "MYR", "provider": "s"}]}`: `providers[0] ("s"): stripe`,
		`{"providers": [{"name": "s", "kind": "stripe", "environment": "live", "account_country": "MY", "secrets": {"secret_key": "STRIPE_KEY"}}]}`:                                                                                                                                               "secrets.webhook_secrets is required",
	} {
		_, err := providerconfig.Parse([]byte(file), providerconfig.Options{Getenv: vars})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want %q", file, err, want)
		}
	}
}

// One start reports every missing or malformed secret, each by its
// environment variable (never a Go field, never the value), and the
// formats that can be checked are: Opn's webhook secrets are base64,
// Stripe's start with whsec_, the keys with their prefixes.
func TestSecretProblemsReportedTogether(t *testing.T) {
	t.Parallel()
	vars := map[string]string{
		"STRIPE_MY_WEBHOOK_SECRETS": "whsec_ok, wrong-secret-1", // the second is no whsec_
		"OPN_MY_SECRET_KEY":         "sk_live_mixedup",          // a Stripe key
		"OPN_MY_WEBHOOK_SECRETS":    "not*base64*at*all",
		"OPN_TH_SECRET_KEY":         "skey_live_ok",
		"OPN_TH_PUBLIC_KEY":         "pkey_live_ok",
		"OPN_TH_WEBHOOK_SECRETS":    "c2VjcmV0",
	}
	_, err := providerconfig.Parse([]byte(`{
	  "providers": [
	    {"name": "stripe_my", "kind": "stripe", "environment": "live", "account_country": "MY",
	     "secrets": {"secret_key": "STRIPE_MY_SECRET_KEY", "webhook_secrets": "STRIPE_MY_WEBHOOK_SECRETS"}},
	    {"name": "opn_my", "kind": "opn", "environment": "live",
	     "secrets": {"secret_key": "OPN_MY_SECRET_KEY", "webhook_secrets": "OPN_MY_WEBHOOK_SECRETS"}},
	    {"name": "opn_th", "kind": "opn", "environment": "live",
	     "secrets": {"secret_key": "OPN_TH_SECRET_KEY", "public_key": "OPN_TH_PUBLIC_KEY", "webhook_secrets": "OPN_TH_WEBHOOK_SECRETS"}},
	    {"name": "Bad Name", "kind": "opn", "environment": "live"}
	  ],
	  "routes": [{"environment": "live", "method": "FPX", "country": "MY", "currency": "MYR", "provider": "nowhere"}]
	}`), providerconfig.Options{Getenv: env(vars)})
	if err == nil {
		t.Fatal("no error")
	}
	msg := err.Error()
	for _, want := range []string{
		`providers[0] ("stripe_my"): environment variable STRIPE_MY_SECRET_KEY is not set (secrets.secret_key)`,
		`environment variable STRIPE_MY_WEBHOOK_SECRETS (secrets.webhook_secrets) holds a secret (2 of 2) that is not a Stripe webhook signing secret (it starts with whsec_)`,
		`providers[1] ("opn_my"): environment variable OPN_MY_SECRET_KEY (secrets.secret_key) is not an Opn secret key (it starts with skey_)`,
		`environment variable OPN_MY_WEBHOOK_SECRETS (secrets.webhook_secrets) holds a secret (1 of 1) that is not base64`,
		`providers[3] ("Bad Name"): name must be`,
		`routes[0] (FPX MY live via "nowhere"): provider "nowhere" is not in providers`,
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q\nlacks %q", msg, want)
		}
	}
	if strings.Contains(msg, "opn_th") || strings.Contains(msg, "Config.") {
		t.Errorf("error %q: a correct Provider or a Go field", msg)
	}
	for _, v := range vars {
		for _, secret := range providerconfig.WebhookSecrets(v) {
			if strings.Contains(msg, secret) {
				t.Errorf("error %q echoes %q", msg, secret)
			}
		}
	}
}

// The xendit kind: Touch 'n Go through Opn first and Xendit second, and
// Malaysian payouts through Xendit, as the README's Malaysian file does;
// Xendit's secret key and its webhook tokens are checked, and it cuts its
// own settlement batches.
func TestDefaultKindsBuildXendit(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	vars := env(map[string]string{
		"OPN_MY_SECRET_KEY": "skey_test_x", "OPN_MY_WEBHOOK_SECRETS": "c2VjcmV0LXNlY3JldC1zZWNyZXQ=",
		"XENDIT_MY_SECRET_KEY": "xnd_development_x", "XENDIT_MY_WEBHOOK_SECRETS": "token-new, token-old",
	})
	s, err := providerconfig.Parse([]byte(`{
	  "providers": [
	    {"name": "opn_my", "kind": "opn", "environment": "live",
	     "secrets": {"secret_key": "OPN_MY_SECRET_KEY", "webhook_secrets": "OPN_MY_WEBHOOK_SECRETS"}},
	    {"name": "xendit_my", "kind": "xendit", "environment": "live", "settlement_reports": true, "settlement_delay": "2h",
	     "secrets": {"secret_key": "XENDIT_MY_SECRET_KEY", "webhook_secrets": "XENDIT_MY_WEBHOOK_SECRETS"}}
	  ],
	  "routes": [
	    {"environment": "live", "method": "TNG", "country": "MY", "currency": "MYR", "provider": "opn_my", "priority": 1},
	    {"environment": "live", "method": "TNG", "country": "MY", "currency": "MYR", "provider": "xendit_my", "priority": 2},
	    {"environment": "live", "method": "FPX", "country": "MY", "currency": "MYR", "provider": "xendit_my", "banks": {"MAYBANK": "", "CIMB": ""}}
	  ],
	  "payout_routes": [{"environment": "live", "country": "MY", "currency": "MYR", "provider": "xendit_my"}]
	}`), providerconfig.Options{Getenv: vars})
	is.NoErr(err)
	is.True(s.Providers["xendit_my"].Capabilities().Has(paykit.CapPayouts | paykit.CapDisputes | paykit.CapSettlement))
	tng := s.Routing.PaymentRoutes(paykit.Live, "TNG", "MY", "MYR", 5000)
	is.Equal(len(tng), 2)
	is.Equal([]string{tng[0].Provider, tng[1].Provider}, []string{"opn_my", "xendit_my"})
	fpx, ok := s.Routing.PaymentRoute(paykit.Live, "FPX", "MY", "MYR", 5000)
	is.True(ok)
	b, ok := fpx.Bank("CIMB")
	is.True(ok)
	is.Equal(b.ProviderCode, "CIMB_FPX")
	_, bank, ok := s.Routing.PayoutRoute(paykit.Live, "MY", "MYR", "MAYBANK", 5000)
	is.True(ok)
	is.Equal(bank.ProviderCode, "MY_MAYBANK")
	_, err = paykit.New(paykit.Config{Store: memory.New(), Routing: s.Routing, Providers: s.Providers})
	is.NoErr(err)

	for file, want := range map[string]string{
		`{"providers": [{"name": "x", "kind": "xendit", "environment": "live", "secrets": {"secret_key": "OPN_MY_SECRET_KEY", "webhook_secrets": "XENDIT_MY_WEBHOOK_SECRETS"}}]}`: "is not a Xendit secret API key (it starts with xnd_)",
		`{"providers": [{"name": "x", "kind": "xendit", "environment": "live", "secrets": {"secret_key": "XENDIT_MY_SECRET_KEY"}}]}`:                                              "secrets.webhook_secrets is required",
		`{"providers": [{"name": "x", "kind": "xendit", "environment": "live", "secrets": {"secret_key": "XENDIT_MY_SECRET_KEY", "webhook_secrets": "XENDIT_MY_WEBHOOK_SECRETS"}}],
		  "routes": [{"environment": "live", "method": "CARD", "country": "MY", "currency": "MYR", "provider": "x"}]}`: "a xendit Provider does not serve CARD",
	} {
		_, err := providerconfig.Parse([]byte(file), providerconfig.Options{Getenv: vars})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want %q", file, err, want)
		}
	}
}
