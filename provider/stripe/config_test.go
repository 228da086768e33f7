package stripe_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/matryer/is"
	"github.com/paykit/paykit"
	"github.com/paykit/paykit/internal/enums"
	"github.com/paykit/paykit/provider/stripe"
)

// New refuses a bad config with an error naming the field or the method.
func TestNewRefusesBadConfig(t *testing.T) {
	t.Parallel()
	good := stripe.Config{SecretKey: "sk_test_x", WebhookSecrets: []string{"whsec_x"}, AccountCountry: "MY"}
	cases := []struct {
		name string
		mod  func(*stripe.Config)
		want string
	}{
		{"missing secret key", func(c *stripe.Config) { c.SecretKey = "" }, "SecretKey"},
		{"no webhook secret", func(c *stripe.Config) { c.WebhookSecrets = nil }, "WebhookSecrets"},
		{"empty webhook secret", func(c *stripe.Config) { c.WebhookSecrets = []string{"whsec_x", ""} }, "WebhookSecrets[1]"},
		{"bad account country", func(c *stripe.Config) { c.AccountCountry = "my" }, "AccountCountry"},
		{"PromptPay on a MY account", func(c *stripe.Config) { c.Methods = []string{"FPX", "PROMPTPAY"} }, "PROMPTPAY"},
		{"FPX on a TH account", func(c *stripe.Config) { c.AccountCountry, c.Methods = "TH", []string{"FPX"} }, "FPX"},
		{"WeChat Pay on a MY account", func(c *stripe.Config) { c.Methods = []string{"WECHAT_PAY"} }, "WECHAT_PAY"},
		{"a method the adapter does not serve", func(c *stripe.Config) { c.Methods = []string{"TNG"} }, "TNG"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			cfg := good
			c.mod(&cfg)
			_, err := stripe.New(cfg)
			is.True(err != nil)
			is.True(strings.Contains(err.Error(), c.want)) // names the field or method
		})
	}
	is := is.New(t)
	p, err := stripe.New(good)
	is.NoErr(err)
	is.Equal(p.Methods(), []string{"FPX", "CARD", "GRABPAY", "ALIPAY"}) // all a MY account serves
	is.Equal(p.Capabilities(), paykit.CapPayments|paykit.CapCancel|paykit.CapRefunds|paykit.CapDisputes)
	good.SettlementReports = true
	reports, err := stripe.New(good)
	is.NoErr(err)
	is.Equal(reports.Capabilities(), paykit.CapPayments|paykit.CapCancel|paykit.CapRefunds|paykit.CapDisputes|paykit.CapSettlement)
	th, err := stripe.New(stripe.Config{SecretKey: "sk", WebhookSecrets: []string{"w"}, AccountCountry: "TH"})
	is.NoErr(err)
	is.Equal(th.Methods(), []string{"PROMPTPAY", "CARD"})
}

// Route templates: FPX with paykit's canonical banks mapped to Stripe's
// codes, PromptPay with a QR and the email Stripe requires.
func TestRoutes(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	fpx, ok := stripe.Route("FPX", "MY")
	is.True(ok)
	is.Equal(fpx.Currency, "MYR")
	is.Equal(fpx.NextAction, paykit.NextActionRedirectToURL)
	is.Equal(fpx.Options, []string{"bank"})
	want := map[string]string{"MAYBANK": "maybank2u", "CIMB": "cimb", "PUBLIC": "public_bank", "RHB": "rhb",
		"HLB": "hong_leong_bank", "AMBANK": "ambank", "BSN": "bsn", "BIMB": "bank_islam"}
	for code, local := range want {
		b, ok := fpx.Bank(code)
		is.True(ok)
		is.Equal(b.ProviderCode, local)
	}
	for _, b := range fpx.Banks {
		is.Equal(b.Code, strings.ToUpper(b.Code)) // canonical codes are uppercase
	}
	pp, ok := stripe.Route("PROMPTPAY", "TH")
	is.True(ok)
	is.Equal(pp.Currency, "THB")
	is.Equal(pp.NextAction, paykit.NextActionDisplayQRCode)
	is.Equal(pp.CustomerFields, []string{"email"})
	card, ok := stripe.Route("CARD", "SG")
	is.True(ok)
	is.Equal(card.Currency, "SGD")
	is.True(!card.NoRefunds)
	_, ok = stripe.Route("FPX", "TH")
	is.True(!ok)
	_, ok = stripe.Route("TNG", "MY")
	is.True(!ok)
	for _, m := range stripe.Methods() {
		is.True(slices.Contains(enums.PaymentMethods, m))
	}
	is.True(stripe.AccountServes("SG", "GRABPAY"))
	is.True(!stripe.AccountServes("TH", "GRABPAY"))
}
