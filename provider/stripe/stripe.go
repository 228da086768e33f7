package stripe

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/paykit/paykit"
	stripego "github.com/stripe/stripe-go/v85"
)

// DefaultBaseURL is Stripe's API.
const DefaultBaseURL = "https://api.stripe.com"

// DefaultTimeout is the call timeout when Config.Timeout is zero.
const DefaultTimeout = 10 * time.Second

// DefaultTolerance is the webhook timestamp tolerance Stripe's libraries use.
const DefaultTolerance = 300 * time.Second

// MetadataKey is the metadata key under which paykit's attempt Key is kept
// on PaymentIntents, Checkout Sessions and Refunds.
const MetadataKey = "paykit_key"

// Config configures the adapter.
type Config struct {
	// SecretKey is the Stripe secret (or restricted) API key. Required.
	SecretKey string
	// WebhookSecrets are the endpoint signing secrets (whsec_...). A
	// webhook verifies if any of them signed it (rotation). Required for
	// ParseCallback; New accepts none only if the host never parses
	// callbacks, so it refuses an empty list as well.
	WebhookSecrets []string
	// BaseURL of the API; DefaultBaseURL when empty.
	BaseURL string
	// HTTPClient sends the requests; a fresh client when nil. Its own
	// Timeout, if any, also applies.
	HTTPClient *http.Client
	// Timeout bounds every API call; DefaultTimeout when zero.
	Timeout time.Duration
	// AccountCountry is the Stripe account's business location (ISO
	// 3166-1 alpha-2): it decides which methods the account can serve.
	AccountCountry string
	// Methods are the paykit methods this account is set up for; every one
	// must be servable from AccountCountry. Empty: all it can serve.
	Methods []string
	// Tolerance is the webhook timestamp tolerance; DefaultTolerance when
	// zero.
	Tolerance time.Duration
	// Now is the clock of webhook verification; time.Now when nil.
	Now func() time.Time
	// SettlementReports makes the adapter declare paykit.CapSettlement:
	// paykit then makes a payment's funds available only when a
	// settlement report names it, and reconciles every line. Without it,
	// funds become available at the available date the Provider states.
	SettlementReports bool
}

// Provider is the Stripe adapter: a paykit.Provider,
// paykit.RefundProvider, paykit.DisputeProvider and
// paykit.SettlementReporter over the PaymentIntents, Checkout Sessions,
// Refunds, Disputes, Payouts and Balance Transactions APIs.
type Provider struct {
	cfg     Config
	backend stripego.RawRequestBackend
	methods []string
}

var (
	_ paykit.Provider        = (*Provider)(nil)
	_ paykit.RefundProvider  = (*Provider)(nil)
	_ paykit.DisputeProvider = (*Provider)(nil)

	_ paykit.SettlementReporter = (*Provider)(nil)
)

// availability lists, per paykit method, the business locations of Stripe
// accounts that can accept it (Stripe's payment method pages, "Business
// locations"; see doc.go). Nil means any account country.
var availability = map[string][]string{
	"FPX":       {"MY"},
	"GRABPAY":   {"MY", "SG"},
	"PROMPTPAY": {"TH"},
	"ALIPAY": {"AT", "AU", "BE", "BG", "CA", "CH", "CY", "CZ", "DE", "DK", "EE", "ES", "FI", "FR", "GB", "GR",
		"HK", "HU", "IE", "IT", "JP", "LT", "LU", "LV", "MT", "MY", "NL", "NO", "NZ", "PT", "RO", "SE", "SG", "SI", "SK", "US"},
	"WECHAT_PAY": {"AT", "AU", "BE", "BG", "CA", "CH", "CY", "CZ", "DE", "DK", "EE", "ES", "FI", "FR", "GB", "GR",
		"HK", "HU", "IE", "IT", "JP", "LT", "LU", "LV", "MT", "NL", "NO", "PL", "PT", "RO", "SE", "SG", "SI", "SK", "US"},
	"CARD": nil,
}

// methodOrder is the order Methods lists them in.
var methodOrder = []string{"FPX", "PROMPTPAY", "CARD", "GRABPAY", "ALIPAY", "WECHAT_PAY"}

// Methods returns the paykit methods the adapter serves (on an account
// whose country offers them).
func Methods() []string { return slices.Clone(methodOrder) }

// AccountServes reports whether a Stripe account in country can accept
// method.
func AccountServes(country, method string) bool {
	locs, ok := availability[method]
	if !ok {
		return false
	}
	return locs == nil || slices.Contains(locs, country)
}

// New returns the adapter, or an error naming the bad Config field or
// method.
func New(cfg Config) (*Provider, error) {
	if cfg.SecretKey == "" {
		return nil, errors.New("stripe: Config.SecretKey is required")
	}
	if len(cfg.WebhookSecrets) == 0 {
		return nil, errors.New("stripe: Config.WebhookSecrets needs at least one endpoint signing secret")
	}
	for i, s := range cfg.WebhookSecrets {
		if s == "" {
			return nil, fmt.Errorf("stripe: Config.WebhookSecrets[%d] is empty", i)
		}
	}
	if len(cfg.AccountCountry) != 2 || strings.ToUpper(cfg.AccountCountry) != cfg.AccountCountry {
		return nil, fmt.Errorf("stripe: Config.AccountCountry %q must be an uppercase ISO 3166-1 alpha-2 code", cfg.AccountCountry)
	}
	if cfg.Timeout < 0 || cfg.Tolerance < 0 {
		return nil, errors.New("stripe: Config.Timeout and Config.Tolerance must not be negative")
	}
	base := strings.TrimRight(cfg.BaseURL, "/")
	if base == "" {
		base = DefaultBaseURL
	}
	p := &Provider{cfg: cfg, backend: newBackend(base, cfg.HTTPClient)}
	if p.cfg.Timeout == 0 {
		p.cfg.Timeout = DefaultTimeout
	}
	if p.cfg.Tolerance == 0 {
		p.cfg.Tolerance = DefaultTolerance
	}
	if p.cfg.Now == nil {
		p.cfg.Now = time.Now
	}
	if len(cfg.Methods) == 0 {
		for _, m := range methodOrder {
			if AccountServes(cfg.AccountCountry, m) {
				p.methods = append(p.methods, m)
			}
		}
		return p, nil
	}
	for _, m := range cfg.Methods {
		if _, ok := availability[m]; !ok {
			return nil, fmt.Errorf("stripe: Config.Methods: the adapter does not serve method %q (it serves %s)", m, strings.Join(methodOrder, ", "))
		}
		if !AccountServes(cfg.AccountCountry, m) {
			return nil, fmt.Errorf("stripe: Config.Methods: a Stripe account in %s cannot accept %s", cfg.AccountCountry, m)
		}
	}
	p.methods = slices.Clone(cfg.Methods)
	return p, nil
}

// Capabilities: payments, cancel, refunds, disputes and, with
// Config.SettlementReports, settlement (the account's payouts, as
// reports). Stripe payouts move the account's own balance to its own bank
// account, not to third parties, so the adapter is no
// paykit.PayoutProvider.
func (p *Provider) Capabilities() paykit.Capabilities {
	c := paykit.CapPayments | paykit.CapCancel | paykit.CapRefunds | paykit.CapDisputes
	if p.cfg.SettlementReports {
		c |= paykit.CapSettlement
	}
	return c
}

// Methods returns the paykit methods this adapter's account serves.
func (p *Provider) Methods() []string { return slices.Clone(p.methods) }

// currencies is the presentment currency of each route country.
var currencies = map[string]string{"MY": "MYR", "TH": "THB", "SG": "SGD"}

// routeCountries are the customer countries of each method's routes.
var routeCountries = map[string][]string{
	"FPX":        {"MY"},
	"PROMPTPAY":  {"TH"},
	"GRABPAY":    {"MY", "SG"},
	"ALIPAY":     {"MY", "SG"},
	"WECHAT_PAY": {"SG"},
	"CARD":       {"MY", "TH", "SG"},
}

// fpxBank is an FPX bank: paykit's canonical code, its name, Stripe's
// payment_method_data[fpx][bank] value.
type fpxBank struct{ code, name, stripe string }

// fpxBanks are the FPX banks Stripe lists for payment_method_data[fpx][bank]
// (B2C), by paykit's canonical code.
var fpxBanks = []fpxBank{
	{"MAYBANK", "Maybank2u", "maybank2u"},
	{"CIMB", "CIMB Clicks", "cimb"},
	{"PUBLIC", "Public Bank", "public_bank"},
	{"RHB", "RHB Bank", "rhb"},
	{"HLB", "Hong Leong Bank", "hong_leong_bank"},
	{"AMBANK", "AmBank", "ambank"},
	{"BSN", "BSN", "bsn"},
	{"BIMB", "Bank Islam", "bank_islam"},
	{"AFFIN", "Affin Bank", "affin_bank"},
	{"AGRO", "Agrobank", "agrobank"},
	{"ALLIANCE", "Alliance Bank", "alliance_bank"},
	{"MUAMALAT", "Bank Muamalat", "bank_muamalat"},
	{"RAKYAT", "Bank Rakyat", "bank_rakyat"},
	{"HSBC", "HSBC Bank", "hsbc"},
	{"KFH", "KFH", "kfh"},
	{"OCBC", "OCBC Bank", "ocbc"},
	{"SCB", "Standard Chartered", "standard_chartered"},
	{"UOB", "UOB Bank", "uob"},
}

// Route returns the route template of a paykit method in a customer
// country: method, country, currency, next action, required customer
// fields, options and (FPX) banks with Stripe's codes. Environment,
// Provider and amounts are the caller's.
func Route(method, country string) (paykit.PaymentRoute, bool) {
	if !slices.Contains(routeCountries[method], country) {
		return paykit.PaymentRoute{}, false
	}
	r := paykit.PaymentRoute{Method: method, Country: country, Currency: currencies[country], NextAction: paykit.NextActionRedirectToURL}
	switch method {
	case "FPX":
		r.Options = []string{"bank"}
		for _, b := range fpxBanks {
			r.Banks = append(r.Banks, paykit.Bank{Code: b.code, Name: b.name, ProviderCode: b.stripe, Available: true})
		}
	case "PROMPTPAY":
		// Stripe requires billing_details[email] to confirm PromptPay.
		r.NextAction, r.CustomerFields = paykit.NextActionDisplayQRCode, []string{"email"}
	}
	return r, true
}
