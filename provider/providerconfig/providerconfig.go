// Package providerconfig reads paykit's Provider configuration file: the
// Providers (kind, environment, API base URL, and the names of the
// environment variables that hold their secrets, never the secrets) and
// the routes that send each payment method and payout to them. The example
// server reads it with -providers PATH; a host can use it the same way.
//
// A file routing FPX in Malaysia to Stripe, PromptPay and Thai payouts to
// Opn Payments:
//
//	{
//	  "providers": [
//	    {"name": "stripe_my", "kind": "stripe", "environment": "live", "account_country": "MY",
//	     "secrets": {"secret_key": "STRIPE_MY_SECRET_KEY", "webhook_secrets": "STRIPE_MY_WEBHOOK_SECRETS"}},
//	    {"name": "opn_th", "kind": "opn", "environment": "live",
//	     "secrets": {"public_key": "OPN_TH_PUBLIC_KEY", "secret_key": "OPN_TH_SECRET_KEY", "webhook_secrets": "OPN_TH_WEBHOOK_SECRETS"}}
//	  ],
//	  "routes": [
//	    {"environment": "live", "method": "FPX", "country": "MY", "currency": "MYR", "provider": "stripe_my"},
//	    {"environment": "live", "method": "PROMPTPAY", "country": "TH", "currency": "THB", "provider": "opn_th",
//	     "min_amount": "2000", "max_amount": "15000000"}
//	  ],
//	  "payout_routes": [
//	    {"environment": "live", "country": "TH", "currency": "THB", "provider": "opn_th"}
//	  ]
//	}
//
// Each route takes its template (next action, payer fields, bank list and
// Provider bank codes) from the Provider kind; "banks" narrows a route to
// the listed canonical bank codes and may override their Provider codes.
// Several routes may serve the same request: lower "priority" first (see
// paykit.PaymentRoute.Priority for when paykit moves to the next).
// A webhook secret variable may hold several secrets separated by commas,
// for rotation.
package providerconfig

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/internal/enums"
)

// File is the configuration file.
type File struct {
	Providers    []ProviderEntry    `json:"providers"`
	Routes       []RouteEntry       `json:"routes"`
	PayoutRoutes []PayoutRouteEntry `json:"payout_routes"`
}

// ProviderEntry configures one Provider account.
type ProviderEntry struct {
	// Name is the Provider's name in routes and in its webhook URL,
	// {public-url}/providers/{name}/webhooks.
	Name        string `json:"name"`
	Kind        string `json:"kind"`        // stripe, opn, xendit, or a kind of Options.Kinds
	Environment string `json:"environment"` // test or live: the merchant keys it serves
	BaseURL     string `json:"base_url"`    // empty: the kind's default
	// AccountCountry is the Provider account's country, where the kind's
	// method availability depends on it (Stripe).
	AccountCountry string `json:"account_country"`
	// Secrets maps each secret the kind reads (secret_key, public_key,
	// webhook_secrets) to the NAME of the environment variable holding it.
	Secrets map[string]string `json:"secrets"`
	Timeout string            `json:"timeout"` // a Go duration; empty: the kind's default
	// SettlementPeriod and SettlementDelay (Go durations) set how a kind
	// that cuts its own settlement batches (opn, xendit) cuts them: the
	// time a batch covers and how long after it closes it is reported;
	// empty: the kind's default.
	SettlementPeriod string `json:"settlement_period"`
	SettlementDelay  string `json:"settlement_delay"`
	// SettlementReports (stripe, opn, xendit) gates a payment's funds on the
	// Provider's settlement reports and reconciles every line; without it
	// the funds become available at the date the Provider states.
	SettlementReports bool `json:"settlement_reports"`
	// Disabled: the Provider takes no new attempts; those it has are still
	// recovered, cancelled and refunded through it.
	Disabled bool `json:"disabled"`
	// DefaultRoutes adds a route for every method the kind serves in
	// AccountCountry (every one, for kinds without account countries) in
	// the Provider's environment, at priority 0.
	DefaultRoutes bool `json:"default_routes"`
}

// RouteEntry sends a payment method of an environment, country and
// currency, within an amount range, to a Provider.
type RouteEntry struct {
	Environment string `json:"environment"`
	Method      string `json:"method"`
	Country     string `json:"country"`
	Currency    string `json:"currency"`
	MinAmount   string `json:"min_amount"` // minor units; empty: no minimum
	MaxAmount   string `json:"max_amount"` // minor units; empty: no maximum
	Provider    string `json:"provider"`
	Priority    int    `json:"priority"`
	// Banks, for methods with a bank choice: canonical code → Provider
	// code ("" keeps the kind's). Only these banks are offered.
	Banks map[string]string `json:"banks"`
}

// PayoutRouteEntry sends payouts of an environment, country and currency
// to a Provider.
type PayoutRouteEntry struct {
	Environment string            `json:"environment"`
	Country     string            `json:"country"`
	Currency    string            `json:"currency"`
	MinAmount   string            `json:"min_amount"`
	MaxAmount   string            `json:"max_amount"`
	Provider    string            `json:"provider"`
	Priority    int               `json:"priority"`
	Banks       map[string]string `json:"banks"` // as RouteEntry.Banks
}

// Kind is what the configuration knows of a Provider kind.
type Kind struct {
	// Secrets are the secret roles the kind reads; Required ones must be
	// named in the entry and set in the environment.
	Secrets []Secret
	// New builds the adapter of an entry.
	New func(Adapter) (paykit.Provider, error)
	// Route returns the kind's route template of a method in a country.
	Route func(method, country string) (paykit.PaymentRoute, bool)
	// Methods lists the methods the kind serves in a country (for
	// default_routes); nil: none.
	Methods func(country string) []string
	// PayoutBanks returns the currency and banks the kind pays out to in a
	// country; nil when it does not pay out.
	PayoutBanks func(country string) (currency string, banks []paykit.PayoutBank, ok bool)
	// Environments the kind may serve; empty: both.
	Environments []paykit.Environment
	// AccountCountry: entries of the kind must name their account's
	// country, on which the methods it serves depend.
	AccountCountry bool
}

// Secret is one secret a kind reads.
type Secret struct {
	Role     string
	Required bool
	// Check, when set, checks a value's format; its error says what the
	// value should look like and never echoes it.
	Check func(value string) error
}

// Adapter is what Kind.New gets: the entry, its secrets read from the
// environment, and the methods its routes send it.
type Adapter struct {
	Entry   ProviderEntry
	Secrets map[string]string // role → value
	Timeout time.Duration     // 0: the kind's default
	Methods []string          // the methods routed to it, sorted
	// SettlementPeriod and SettlementDelay are the entry's; 0: the kind's
	// default.
	SettlementPeriod, SettlementDelay time.Duration
}

// WebhookSecrets splits a webhook secret variable's value at commas.
func WebhookSecrets(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// Options configure Load.
type Options struct {
	// Getenv reads secrets; default os.Getenv.
	Getenv func(string) string
	// Kinds are the Provider kinds by name; default DefaultKinds().
	Kinds map[string]Kind
}

// Setup is a loaded configuration, ready for paykit.Config.
type Setup struct {
	Routing   paykit.Routing
	Providers map[string]paykit.Provider
	Disabled  []string // paykit.Config.DisabledProviders
	// Webhooks are the Providers' names in file order: each receives its
	// webhooks at {public-url}/providers/{name}/webhooks.
	Webhooks []string
}

// Load reads and checks the file at path and builds its adapters. Every
// error names the file and the offending entry; none echoes a secret.
func Load(path string, opts Options) (*Setup, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("providers file %s: %w", path, err)
	}
	s, err := Parse(data, opts)
	if err != nil {
		return nil, fmt.Errorf("providers file %s: %w", path, err)
	}
	return s, nil
}

// Parse is Load of the file's contents.
func Parse(data []byte, opts Options) (*Setup, error) {
	if opts.Getenv == nil {
		opts.Getenv = os.Getenv
	}
	if opts.Kinds == nil {
		opts.Kinds = DefaultKinds()
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var f File
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("not a providers file: %w", jsonError(data, err))
	}
	if dec.More() {
		return nil, errors.New("not a providers file: more than one JSON value")
	}
	b := &builder{opts: opts, file: &f, byName: map[string]int{}, methods: map[string][]string{}}
	return b.build()
}

// jsonError adds the line of a syntax or type error.
func jsonError(data []byte, err error) error {
	var off int64
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		off = se.Offset
	case errors.As(err, &te):
		off = te.Offset
	default:
		return err
	}
	line := 1 + bytes.Count(data[:min(int(off), len(data))], []byte("\n"))
	return fmt.Errorf("line %d: %w", line, err)
}

type builder struct {
	opts    Options
	file    *File
	byName  map[string]int      // provider name → index
	methods map[string][]string // provider name → methods routed
	setup   Setup
}

var (
	nameRE    = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,63}$`)
	envVarRE  = regexp.MustCompile(`^[A-Z_][A-Z0-9_]{0,127}$`)
	countryRE = regexp.MustCompile(`^[A-Z]{2}$`)
)

// build checks the whole file and reports every problem it finds at once
// (errors.Join), so that one start lists all that needs fixing.
func (b *builder) build() (*Setup, error) {
	if len(b.file.Providers) == 0 {
		return nil, errors.New("providers: at least one Provider is required")
	}
	var errs []error
	valid := map[string]bool{}
	for i := range b.file.Providers {
		if err := b.checkProvider(i); err != nil {
			errs = append(errs, err)
			continue
		}
		valid[b.file.Providers[i].Name] = true
	}
	for i := range b.file.Providers {
		if p := &b.file.Providers[i]; p.DefaultRoutes && valid[p.Name] {
			if err := b.defaultRoutes(i); err != nil {
				errs = append(errs, err)
			}
		}
	}
	for i, r := range b.file.Routes {
		if _, ok := b.byName[r.Provider]; ok && !valid[r.Provider] {
			continue // its Provider's problem is reported
		}
		route, err := b.route(r)
		if err != nil {
			errs = append(errs, fmt.Errorf("routes[%d] (%s %s %s via %q): %w", i, r.Method, r.Country, r.Environment, r.Provider, err))
			continue
		}
		b.add(route)
	}
	for i, r := range b.file.PayoutRoutes {
		if _, ok := b.byName[r.Provider]; ok && !valid[r.Provider] {
			continue
		}
		route, err := b.payoutRoute(r)
		if err != nil {
			errs = append(errs, fmt.Errorf("payout_routes[%d] (%s %s via %q): %w", i, r.Country, r.Environment, r.Provider, err))
			continue
		}
		b.setup.Routing.Payouts = append(b.setup.Routing.Payouts, route)
	}
	b.setup.Providers = map[string]paykit.Provider{}
	for i, p := range b.file.Providers {
		if !valid[p.Name] {
			continue
		}
		prov, err := b.adapter(p)
		if err != nil {
			errs = append(errs, fmt.Errorf("providers[%d] (%q): %w", i, p.Name, err))
			continue
		}
		b.setup.Providers[p.Name] = prov
		b.setup.Webhooks = append(b.setup.Webhooks, p.Name)
		if p.Disabled {
			b.setup.Disabled = append(b.setup.Disabled, p.Name)
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return &b.setup, nil
}

func (b *builder) checkProvider(i int) error {
	p := &b.file.Providers[i]
	fail := func(format string, args ...any) error {
		return fmt.Errorf("providers[%d] (%q): %s", i, p.Name, fmt.Sprintf(format, args...))
	}
	if !nameRE.MatchString(p.Name) {
		return fail("name must be 1 to 64 of a-z, 0-9, _ and -, starting with a letter or digit")
	}
	if _, dup := b.byName[p.Name]; dup {
		return fail("name is used by another Provider")
	}
	b.byName[p.Name] = i
	kind, ok := b.opts.Kinds[p.Kind]
	if !ok {
		return fail("kind %q is not one of %s", p.Kind, strings.Join(slices.Sorted(maps.Keys(b.opts.Kinds)), ", "))
	}
	env := paykit.Environment(p.Environment)
	if env != paykit.Test && env != paykit.Live {
		return fail("environment must be test or live")
	}
	if len(kind.Environments) > 0 && !slices.Contains(kind.Environments, env) {
		return fail("a %s Provider cannot serve the %s environment", p.Kind, env)
	}
	if p.BaseURL != "" {
		u, err := url.Parse(p.BaseURL)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
			return fail("base_url must be an absolute http or https URL")
		}
		if u.Scheme == "http" && env == paykit.Live && !loopback(u.Hostname()) {
			return fail("base_url of a live Provider must be https")
		}
	}
	if kind.AccountCountry && !countryRE.MatchString(p.AccountCountry) {
		return fail("account_country is required for a %s Provider: the account's country (ISO 3166-1 alpha-2, such as MY)", p.Kind)
	}
	if !kind.AccountCountry && p.AccountCountry != "" {
		return fail("account_country is not a setting of a %s Provider", p.Kind)
	}
	if p.Timeout != "" {
		d, err := time.ParseDuration(p.Timeout)
		if err != nil || d <= 0 {
			return fail("timeout must be a positive duration such as 10s")
		}
	}
	for name, v := range map[string]string{"settlement_period": p.SettlementPeriod, "settlement_delay": p.SettlementDelay} {
		if v == "" {
			continue
		}
		if p.Kind != "opn" && p.Kind != "xendit" {
			return fail("%s is not a setting of a %s Provider", name, p.Kind)
		}
		if d, err := time.ParseDuration(v); err != nil || d <= 0 {
			return fail("%s must be a positive duration such as 24h", name)
		}
	}
	roles := make([]string, 0, len(kind.Secrets))
	for _, s := range kind.Secrets {
		roles = append(roles, s.Role)
	}
	for _, role := range slices.Sorted(maps.Keys(p.Secrets)) {
		if !slices.Contains(roles, role) {
			return fail("secrets.%s is not a secret of a %s Provider (%s)", role, p.Kind, strings.Join(roles, ", "))
		}
		if !envVarRE.MatchString(p.Secrets[role]) {
			// Never echoed: it may be the secret itself.
			return fail("secrets.%s must name an environment variable (A-Z, 0-9 and _), not hold the secret", role)
		}
	}
	for _, s := range kind.Secrets {
		if s.Required && p.Secrets[s.Role] == "" {
			return fail("secrets.%s is required: the name of the environment variable holding it", s.Role)
		}
	}
	return nil
}

func loopback(host string) bool {
	return host == "localhost" || host == "127.0.0.1" || host == "::1"
}

func (b *builder) defaultRoutes(i int) error {
	p := b.file.Providers[i]
	kind := b.opts.Kinds[p.Kind]
	if kind.Methods == nil {
		return fmt.Errorf("providers[%d] (%q): default_routes: a %s Provider has no default routes", i, p.Name, p.Kind)
	}
	countries := []string{p.AccountCountry}
	if p.AccountCountry == "" {
		countries = []string{"MY", "TH"}
	}
	for _, country := range countries {
		for _, m := range kind.Methods(country) {
			r, ok := kind.Route(m, country)
			if !ok {
				continue
			}
			r.Environment, r.Provider = paykit.Environment(p.Environment), p.Name
			b.add(r)
		}
		if kind.PayoutBanks != nil {
			if cur, banks, ok := kind.PayoutBanks(country); ok {
				b.setup.Routing.Payouts = append(b.setup.Routing.Payouts, paykit.PayoutRoute{
					Environment: paykit.Environment(p.Environment), Country: country, Currency: cur,
					Provider: p.Name, Banks: banks,
				})
			}
		}
	}
	return nil
}

func (b *builder) add(r paykit.PaymentRoute) {
	b.setup.Routing.Payments = append(b.setup.Routing.Payments, r)
	if !slices.Contains(b.methods[r.Provider], r.Method) {
		b.methods[r.Provider] = append(b.methods[r.Provider], r.Method)
	}
}

// provider finds the entry a route names and checks the environment.
func (b *builder) provider(name, env string) (ProviderEntry, Kind, error) {
	i, ok := b.byName[name]
	if !ok {
		return ProviderEntry{}, Kind{}, fmt.Errorf("provider %q is not in providers", name)
	}
	p := b.file.Providers[i]
	if env != p.Environment {
		return ProviderEntry{}, Kind{}, fmt.Errorf("environment %q differs from its Provider's (%s)", env, p.Environment)
	}
	return p, b.opts.Kinds[p.Kind], nil
}

func (b *builder) route(e RouteEntry) (paykit.PaymentRoute, error) {
	p, kind, err := b.provider(e.Provider, e.Environment)
	if err != nil {
		return paykit.PaymentRoute{}, err
	}
	if !slices.Contains(enums.PaymentMethods, e.Method) {
		return paykit.PaymentRoute{}, fmt.Errorf("method %q is not one of %s", e.Method, strings.Join(enums.PaymentMethods, ", "))
	}
	r, ok := kind.Route(e.Method, e.Country)
	if !ok {
		return paykit.PaymentRoute{}, fmt.Errorf("a %s Provider does not serve %s in %q", p.Kind, e.Method, e.Country)
	}
	if e.Currency != r.Currency {
		return paykit.PaymentRoute{}, fmt.Errorf("currency %q: %s in %s is paid in %s", e.Currency, e.Method, e.Country, r.Currency)
	}
	if r.MinAmount, r.MaxAmount, err = amounts(e.MinAmount, e.MaxAmount); err != nil {
		return paykit.PaymentRoute{}, err
	}
	if e.Priority < 0 {
		return paykit.PaymentRoute{}, errors.New("priority must not be negative")
	}
	r.Environment, r.Provider, r.Priority = paykit.Environment(e.Environment), e.Provider, e.Priority
	if e.Banks != nil {
		if len(r.Banks) == 0 {
			return paykit.PaymentRoute{}, fmt.Errorf("banks: %s takes no bank choice", e.Method)
		}
		var banks []paykit.Bank
		for _, code := range slices.Sorted(maps.Keys(e.Banks)) {
			bank, ok := r.Bank(code)
			if !ok {
				return paykit.PaymentRoute{}, fmt.Errorf("banks: %q is not a bank of %s at a %s Provider", code, e.Method, p.Kind)
			}
			if e.Banks[code] != "" {
				bank.ProviderCode = e.Banks[code]
			}
			banks = append(banks, bank)
		}
		r.Banks = banks
	}
	return r, nil
}

func (b *builder) payoutRoute(e PayoutRouteEntry) (paykit.PayoutRoute, error) {
	p, kind, err := b.provider(e.Provider, e.Environment)
	if err != nil {
		return paykit.PayoutRoute{}, err
	}
	if kind.PayoutBanks == nil {
		return paykit.PayoutRoute{}, fmt.Errorf("a %s Provider does not pay out", p.Kind)
	}
	cur, banks, ok := kind.PayoutBanks(e.Country)
	if !ok {
		return paykit.PayoutRoute{}, fmt.Errorf("a %s Provider does not pay out in %q", p.Kind, e.Country)
	}
	if e.Currency != cur {
		return paykit.PayoutRoute{}, fmt.Errorf("currency %q: payouts in %s are in %s", e.Currency, e.Country, cur)
	}
	r := paykit.PayoutRoute{Environment: paykit.Environment(e.Environment), Country: e.Country, Currency: cur, Provider: e.Provider, Priority: e.Priority}
	if r.MinAmount, r.MaxAmount, err = amounts(e.MinAmount, e.MaxAmount); err != nil {
		return paykit.PayoutRoute{}, err
	}
	if e.Priority < 0 {
		return paykit.PayoutRoute{}, errors.New("priority must not be negative")
	}
	r.Banks = banks
	if e.Banks != nil {
		r.Banks = nil
		for _, code := range slices.Sorted(maps.Keys(e.Banks)) {
			i := slices.IndexFunc(banks, func(b paykit.PayoutBank) bool { return b.Code == code })
			if i < 0 {
				return paykit.PayoutRoute{}, fmt.Errorf("banks: %q is not a bank a %s Provider pays out to in %s", code, p.Kind, e.Country)
			}
			bank := banks[i]
			if e.Banks[code] != "" {
				bank.ProviderCode = e.Banks[code]
			}
			r.Banks = append(r.Banks, bank)
		}
	}
	return r, nil
}

// amounts parses a route's amount range.
func amounts(lo, hi string) (int64, int64, error) {
	parse := func(name, v string) (int64, error) {
		if v == "" {
			return 0, nil
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 || strconv.FormatInt(n, 10) != v {
			return 0, fmt.Errorf("%s must be a string of minor units, such as \"100\"", name)
		}
		return n, nil
	}
	min, err := parse("min_amount", lo)
	if err != nil {
		return 0, 0, err
	}
	max, err := parse("max_amount", hi)
	if err != nil {
		return 0, 0, err
	}
	if max != 0 && max < min {
		return 0, 0, errors.New("max_amount is below min_amount")
	}
	return min, max, nil
}

func (b *builder) adapter(p ProviderEntry) (paykit.Provider, error) {
	kind := b.opts.Kinds[p.Kind]
	a := Adapter{Entry: p, Secrets: map[string]string{}, Methods: slices.Sorted(slices.Values(b.methods[p.Name]))}
	if p.Timeout != "" {
		a.Timeout, _ = time.ParseDuration(p.Timeout) // checked
	}
	a.SettlementPeriod, _ = time.ParseDuration(p.SettlementPeriod) // checked; "" is 0
	a.SettlementDelay, _ = time.ParseDuration(p.SettlementDelay)
	var errs []error
	for _, s := range kind.Secrets {
		name := p.Secrets[s.Role]
		if name == "" {
			continue
		}
		v := b.opts.Getenv(name)
		switch {
		case v == "" && s.Required:
			errs = append(errs, fmt.Errorf("environment variable %s is not set (secrets.%s)", name, s.Role))
		case v != "" && s.Check != nil:
			if err := s.Check(v); err != nil {
				errs = append(errs, fmt.Errorf("environment variable %s (secrets.%s) %w", name, s.Role, err))
			}
		}
		a.Secrets[s.Role] = v
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return kind.New(a)
}
