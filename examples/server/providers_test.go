package main

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/provider/sandbox"
	"github.com/paykit/paykit/store/memory"
)

func writeFile(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "providers.json")
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestBadProvidersFileStopsTheServer(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ file, want string }{
		{`{"providers": [{"name": "sandbox", "kind": "sandbox", "environment": "live"}]}`, `providers[0] ("sandbox"): a sandbox Provider cannot serve the live environment`},
		{`{"providers": [{"name": "sim", "kind": "sandbox", "environment": "test"}]}`, `providers[0] ("sim"): the sandbox Provider must be named "sandbox"`},
		{`{"providers": [{"name": "sandbox", "kind": "sandbox", "environment": "test"}],
		   "routes": [{"environment": "test", "method": "FPX", "country": "TH", "currency": "THB", "provider": "sandbox"}]}`, `routes[0] (FPX TH test via "sandbox")`},
		{`{"providers": [`, "not a providers file"},
	} {
		path := writeFile(t, tc.file)
		err := run(context.Background(), []string{"-db", "memory", "-addr", "127.0.0.1:0", "-providers", path},
			func(string) string { return "" }, io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), "providers file "+path+": ") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("error %v: want the file and %q", err, tc.want)
		}
	}
	err := run(context.Background(), []string{"-db", "memory", "-addr", "127.0.0.1:0", "-providers", "/nonexistent/providers.json"},
		func(string) string { return "" }, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "providers file /nonexistent/providers.json") {
		t.Errorf("error %v: want the file named", err)
	}
}

func TestProvidersFileDecidesThePaymentMethods(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	path := writeFile(t, `{
	  "providers": [{"name": "sandbox", "kind": "sandbox", "environment": "test"}],
	  "routes": [
	    {"environment": "test", "method": "FPX", "country": "MY", "currency": "MYR", "provider": "sandbox", "banks": {"MAYBANK": "", "CIMB": ""}},
	    {"environment": "test", "method": "TNG", "country": "MY", "currency": "MYR", "provider": "sandbox", "max_amount": "10000"}
	  ]
	}`)
	s := start(t, "-db", "memory", "-addr", "127.0.0.1:0", "-providers", path)
	methods := func(amount string) []string {
		status, _, body := call(t, "GET", s.url+"/v1/payment_methods?amount="+amount+"&currency=MYR&country=MY", "", basicAuth(s.public, s.secret))
		is.Equal(status, 200)
		var page struct {
			Data []struct {
				Method string `json:"payment_method"`
				Banks  []struct {
					Code string `json:"code"`
				} `json:"banks"`
			} `json:"data"`
		}
		is.NoErr(json.Unmarshal(body, &page))
		var out []string
		for _, m := range page.Data {
			out = append(out, m.Method)
			for _, b := range m.Banks {
				out = append(out, m.Method+":"+b.Code)
			}
		}
		return out
	}
	is.Equal(methods("5000"), []string{"FPX", "FPX:CIMB", "FPX:MAYBANK", "TNG"})
	is.Equal(methods("20000"), []string{"FPX", "FPX:CIMB", "FPX:MAYBANK"}) // above TNG's range
	is.True(strings.Contains(s.stderr.String(), "/providers/sandbox/webhooks"))
}

// TestGoingLiveExample: the configuration file of the README's "Going
// live" section (examples/server/providers.example.json, the same text)
// loads, and the Service takes it.
func TestGoingLiveExample(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	file, err := os.ReadFile("providers.example.json")
	is.NoErr(err)
	readme, err := os.ReadFile("../../README.md")
	is.NoErr(err)
	is.True(strings.Contains(string(readme), "```json\n"+string(file)+"```")) // the README shows this very file

	vars := map[string]string{
		"STRIPE_MY_SECRET_KEY": "sk_live_x", "STRIPE_MY_WEBHOOK_SECRETS": "whsec_x",
		"OPN_MY_SECRET_KEY": "skey_x", "OPN_MY_WEBHOOK_SECRETS": "c2VjcmV0", "OPN_TH_SECRET_KEY": "skey_y",
		"OPN_TH_PUBLIC_KEY": "pkey_y", "OPN_TH_WEBHOOK_SECRETS": "c2VjcmV0",
	}
	sb := sandbox.New(sandbox.Config{BaseURL: "http://127.0.0.1:1", APIKey: "k"})
	setup, err := loadProviders(config{Providers: "providers.example.json"}, func(k string) string { return vars[k] }, sb)
	is.NoErr(err)
	is.Equal(setup.Webhooks, []string{"sandbox", "stripe_my", "opn_my", "opn_th"})
	fpx := setup.Routing.PaymentRoutes(paykit.Live, "FPX", "MY", "MYR", 10000)
	is.Equal(len(fpx), 2)
	is.Equal([]string{fpx[0].Provider, fpx[1].Provider}, []string{"stripe_my", "opn_my"})
	_, bank, ok := setup.Routing.PayoutRoute(paykit.Live, "TH", "THB", "KBANK", 500000)
	is.True(ok)
	is.True(bank.RequiresHolderNameTH)
	_, err = paykit.New(paykit.Config{Store: memory.New(), Routing: setup.Routing, Providers: setup.Providers})
	is.NoErr(err)
}

// TestGoingLiveMalaysianExample: the Malaysian file of the README's
// "Going live" section (examples/server/providers.malaysia.example.json)
// loads: Touch 'n Go through Opn first and Xendit second, payouts to
// Malaysian banks through Xendit.
func TestGoingLiveMalaysianExample(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	file, err := os.ReadFile("providers.malaysia.example.json")
	is.NoErr(err)
	readme, err := os.ReadFile("../../README.md")
	is.NoErr(err)
	is.True(strings.Contains(string(readme), "```json\n"+string(file)+"```"))

	vars := map[string]string{
		"OPN_MY_SECRET_KEY": "skey_x", "OPN_MY_WEBHOOK_SECRETS": "c2VjcmV0",
		"XENDIT_MY_SECRET_KEY": "xnd_production_x", "XENDIT_MY_WEBHOOK_TOKENS": "token",
	}
	sb := sandbox.New(sandbox.Config{BaseURL: "http://127.0.0.1:1", APIKey: "k"})
	setup, err := loadProviders(config{Providers: "providers.malaysia.example.json"}, func(k string) string { return vars[k] }, sb)
	is.NoErr(err)
	is.Equal(setup.Webhooks, []string{"sandbox", "opn_my", "xendit_my"})
	tng := setup.Routing.PaymentRoutes(paykit.Live, "TNG", "MY", "MYR", 15000)
	is.Equal(len(tng), 2)
	is.Equal([]string{tng[0].Provider, tng[1].Provider}, []string{"opn_my", "xendit_my"})
	route, bank, ok := setup.Routing.PayoutRoute(paykit.Live, "MY", "MYR", "MAYBANK", 500000)
	is.True(ok)
	is.Equal(route.Provider, "xendit_my")
	is.Equal(bank.ProviderCode, "MY_MAYBANK")
	is.True(setup.Providers["xendit_my"].Capabilities().Has(paykit.CapSettlement))
	_, err = paykit.New(paykit.Config{Store: memory.New(), Routing: setup.Routing, Providers: setup.Providers})
	is.NoErr(err)
}
