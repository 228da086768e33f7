package paykit

import (
	"cmp"
	"context"
	"slices"

	"github.com/paykit/paykit/internal/enums"
	"github.com/paykit/paykit/internal/wire"
)

// validPaymentMethod reports whether m is one of the contract's payment
// methods.
func validPaymentMethod(m string) bool { return slices.Contains(enums.PaymentMethods, m) }

// Bank is a bank choice of a route. Code is the service's canonical code,
// the only one merchants see; ProviderCode is what the Provider expects.
type Bank struct {
	Code         string
	Name         string
	ProviderCode string
	Available    bool
}

// PaymentRoute is one line of the operational configuration: in this
// environment, this method for this country and currency, within these
// amounts, goes to this Provider and needs these payer fields.
type PaymentRoute struct {
	Environment    Environment
	Method         string
	Country        string
	Currency       string
	MinAmount      int64 // 0: no minimum
	MaxAmount      int64 // 0: no maximum
	Provider       string
	NextAction     string   // the next_action type the method answers with
	CustomerFields []string // required keys of customer
	Options        []string // accepted payment_method_options keys
	Banks          []Bank   // bank choices, for methods that take one ("bank" option)
	// NoRefunds: payments of this route cannot be refunded (bank
	// transfers), even when the Provider declares CapRefunds.
	NoRefunds bool
	// Priority orders the routes that serve the same request: lower first,
	// equal ones in configuration order. A payment goes to the first whose
	// Provider takes new attempts, and moves to the next only when its
	// Provider refused it with OutcomeRefused (nothing was created there).
	Priority int
}

// Accepts reports whether the route serves the amount.
func (r *PaymentRoute) Accepts(amount int64) bool {
	return amount >= r.MinAmount && (r.MaxAmount == 0 || amount <= r.MaxAmount)
}

// Bank returns the route's bank with canonical code, if any.
func (r *PaymentRoute) Bank(code string) (Bank, bool) {
	i := slices.IndexFunc(r.Banks, func(b Bank) bool { return b.Code == code })
	if i < 0 {
		return Bank{}, false
	}
	return r.Banks[i], true
}

// providerOptions maps a payment's options to what the route's Provider
// takes: a bank choice becomes the bank's ProviderCode. Nil without
// options.
func (r *PaymentRoute) providerOptions(options map[string]string) map[string]string {
	if len(options) == 0 {
		return nil
	}
	out := make(map[string]string, len(options))
	for k, v := range options {
		if b, ok := r.Bank(v); k == "bank" && ok {
			v = b.ProviderCode
		}
		out[k] = v
	}
	return out
}

// Routing is the operational configuration the host fills. Of the routes
// that match a request, the first by Priority wins. An environment with no
// routes offers nothing.
type Routing struct {
	Payments []PaymentRoute
	Payouts  []PayoutRoute
}

// PayoutBank is a bank a payout route reaches: the canonical Code, the
// Provider's code for it, and whether the recipient's Thai-language name is
// required.
type PayoutBank struct {
	Code                 string
	ProviderCode         string
	RequiresHolderNameTH bool
}

// PayoutRoute sends payouts of one environment, country and currency to the
// listed banks through a Provider.
type PayoutRoute struct {
	Environment Environment
	Country     string
	Currency    string
	MinAmount   int64 // 0: no minimum
	MaxAmount   int64 // 0: no maximum
	Provider    string
	Banks       []PayoutBank
	// Priority orders the routes that reach the same bank, as
	// PaymentRoute.Priority does.
	Priority int
}

// PayoutRoute resolves a payout to its first route by priority, and the
// bank there.
func (rt *Routing) PayoutRoute(env Environment, country, currency, bankCode string, amount int64) (*PayoutRoute, PayoutBank, bool) {
	routes := rt.PayoutRoutes(env, country, currency, bankCode, amount)
	if len(routes) == 0 {
		return nil, PayoutBank{}, false
	}
	b, _ := routes[0].Bank(bankCode)
	return routes[0], b, true
}

// PayoutRoutes returns every route that reaches bankCode with the payout,
// lowest Priority first.
func (rt *Routing) PayoutRoutes(env Environment, country, currency, bankCode string, amount int64) []*PayoutRoute {
	var out []*PayoutRoute
	for i := range rt.Payouts {
		r := &rt.Payouts[i]
		if r.Environment != env || r.Country != country || r.Currency != currency ||
			amount < r.MinAmount || (r.MaxAmount != 0 && amount > r.MaxAmount) {
			continue
		}
		if _, ok := r.Bank(bankCode); ok {
			out = append(out, r)
		}
	}
	slices.SortStableFunc(out, func(a, b *PayoutRoute) int { return cmp.Compare(a.Priority, b.Priority) })
	return out
}

// Bank returns the route's bank with canonical code, if any.
func (r *PayoutRoute) Bank(code string) (PayoutBank, bool) {
	i := slices.IndexFunc(r.Banks, func(b PayoutBank) bool { return b.Code == code })
	if i < 0 {
		return PayoutBank{}, false
	}
	return r.Banks[i], true
}

// RecognisedBankCode reports whether code is a canonical payout bank code
// of country: the Thai list and promptpay for TH, elsewhere any bank a
// configured route of that country names. Provider-local codes are not.
func (rt *Routing) RecognisedBankCode(country, code string) bool {
	if country == "TH" && (code == wire.PromptPayBankCode || slices.Contains(wire.ThaiBankCodes, code)) {
		return true
	}
	for _, r := range rt.Payouts {
		if r.Country != country {
			continue
		}
		for _, b := range r.Banks {
			if b.Code == code {
				return true
			}
		}
	}
	return false
}

// PaymentRoute resolves (environment, method, country, currency, amount)
// to its first route by priority.
func (rt *Routing) PaymentRoute(env Environment, method, country, currency string, amount int64) (*PaymentRoute, bool) {
	routes := rt.PaymentRoutes(env, method, country, currency, amount)
	if len(routes) == 0 {
		return nil, false
	}
	return routes[0], true
}

// PaymentRoutes returns every route that serves (environment, method,
// country, currency, amount), lowest Priority first.
func (rt *Routing) PaymentRoutes(env Environment, method, country, currency string, amount int64) []*PaymentRoute {
	var out []*PaymentRoute
	for i := range rt.Payments {
		r := &rt.Payments[i]
		if r.Environment == env && r.Method == method && r.Country == country && r.Currency == currency && r.Accepts(amount) {
			out = append(out, r)
		}
	}
	slices.SortStableFunc(out, func(a, b *PaymentRoute) int { return cmp.Compare(a.Priority, b.Priority) })
	return out
}

// paymentRoute picks the route of a new payment: the first by priority
// whose Provider takes new attempts; when every circuit is open, the first
// whose Provider is not disabled (its call will tell). Disabled Providers
// serve nothing new.
func (s *Service) paymentRoute(env Environment, method, country, currency string, amount int64) (*PaymentRoute, bool) {
	routes := s.routing.PaymentRoutes(env, method, country, currency, amount)
	for _, r := range routes {
		if s.usable(r.Provider) {
			return r, true
		}
	}
	for _, r := range routes {
		if !s.disabled[r.Provider] {
			return r, true
		}
	}
	return nil, false
}

// paymentRouteOf is the route a payment was sent by: the one of its
// Provider that serves it, if the configuration still has one.
func (s *Service) paymentRouteOf(pi *PaymentIntent) (*PaymentRoute, bool) {
	for _, r := range s.routing.PaymentRoutes(pi.Environment, pi.PaymentMethod, pi.Country, pi.Currency, pi.Amount) {
		if r.Provider == pi.Provider {
			return r, true
		}
	}
	return nil, false
}

// fallbackRoute is the route a payment moves to after its Provider
// refused it: the next by priority after the refusing Provider's, whose
// Provider takes new attempts and serves the payment's options (its bank).
func (s *Service) fallbackRoute(pi *PaymentIntent) (*PaymentRoute, bool) {
	routes := s.routing.PaymentRoutes(pi.Environment, pi.PaymentMethod, pi.Country, pi.Currency, pi.Amount)
	i := slices.IndexFunc(routes, func(r *PaymentRoute) bool { return r.Provider == pi.Provider })
	if i < 0 {
		return nil, false
	}
	for _, r := range routes[i+1:] {
		if r.Provider != pi.Provider && s.usable(r.Provider) && r.serves(pi.PaymentMethodOptions) {
			return r, true
		}
	}
	return nil, false
}

// serves reports whether the route takes the payment's options: each key
// is one of its options, and a chosen bank is one of its available banks.
func (r *PaymentRoute) serves(options map[string]string) bool {
	for k, v := range options {
		if !slices.Contains(r.Options, k) {
			return false
		}
		if b, ok := r.Bank(v); k == "bank" && (!ok || !b.Available) {
			return false
		}
	}
	return true
}

// PaymentMethod is one eligible method of GET /payment_methods.
type PaymentMethod struct {
	Method                 string
	NextActionType         string
	RequiredCustomerFields []string
	Banks                  []Bank // nil when the method takes no bank choice
}

// PaymentMethodsRequest asks which methods can pay an amount.
type PaymentMethodsRequest struct {
	Amount   int64  `json:"amount" validate:"minor_units"` // minor units
	Currency string `json:"currency" validate:"required,currency"`
	Country  string `json:"country" validate:"required,country"`
}

// ListPaymentMethods returns the methods (and bank choices) eligible for
// direct payment creation by the caller's environment for that amount,
// currency and country, in the contract's method order. It is empty when
// nothing is eligible.
func (s *Service) ListPaymentMethods(_ context.Context, p Principal, req PaymentMethodsRequest) (*Page[PaymentMethod], error) {
	if err := validateRequest(&req); err != nil {
		return nil, err
	}
	amount := req.Amount
	page := &Page[PaymentMethod]{Data: []PaymentMethod{}}
	for _, m := range enums.PaymentMethods {
		r, ok := s.paymentRoute(p.Environment, m, req.Country, req.Currency, amount)
		if !ok {
			continue
		}
		page.Data = append(page.Data, PaymentMethod{
			Method: m, NextActionType: r.NextAction,
			RequiredCustomerFields: slices.Clone(r.CustomerFields), Banks: slices.Clone(r.Banks),
		})
	}
	return page, nil
}
