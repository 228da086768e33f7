package paykit

import (
	"context"
	"slices"
)

// Payment methods of the contract.
var PaymentMethods = []string{
	"FPX", "PROMPTPAY", "TRUEMONEY", "BANK_TRANSFER", "TNG", "BOOST", "CARD",
	"GRABPAY", "ALIPAY", "UMOBILE", "EMONEI", "DUITNOW_QR", "WECHAT_PAY", "UNIONPAY",
}

// ValidPaymentMethod reports whether m is one of PaymentMethods.
func ValidPaymentMethod(m string) bool { return slices.Contains(PaymentMethods, m) }

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

// Routing is the operational configuration the host fills. The first
// matching route wins. An environment with no routes offers nothing.
type Routing struct {
	Payments []PaymentRoute
	Payouts  []PayoutRoute
}

// ThaiBankCodes are the service's canonical Thai payout bank codes.
var ThaiBankCodes = []string{
	"BAAC", "BAY", "BBL", "CIMB", "CLICX", "EXIM", "GHB", "GSB", "ISLAMIC", "KBANK",
	"KKP", "KTB", "LHBANK", "SCB", "SCBT", "SME", "TCR", "TISCO", "TTB", "UOB",
}

// PromptPayBankCode is the bank code of a PromptPay destination; the
// PromptPay id (phone number or national id) is the account number.
const PromptPayBankCode = "promptpay"

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
}

// PayoutRoute resolves a payout to its route and bank.
func (rt *Routing) PayoutRoute(env Environment, country, currency, bankCode string, amount int64) (*PayoutRoute, PayoutBank, bool) {
	for i := range rt.Payouts {
		r := &rt.Payouts[i]
		if r.Environment != env || r.Country != country || r.Currency != currency ||
			amount < r.MinAmount || (r.MaxAmount != 0 && amount > r.MaxAmount) {
			continue
		}
		for _, b := range r.Banks {
			if b.Code == bankCode {
				return r, b, true
			}
		}
	}
	return nil, PayoutBank{}, false
}

// RecognisedBankCode reports whether code is a canonical payout bank code
// of country: the Thai list and promptpay for TH, elsewhere any bank a
// configured route of that country names. Provider-local codes are not.
func (rt *Routing) RecognisedBankCode(country, code string) bool {
	if country == "TH" && (code == PromptPayBankCode || slices.Contains(ThaiBankCodes, code)) {
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
// to a route.
func (rt *Routing) PaymentRoute(env Environment, method, country, currency string, amount int64) (*PaymentRoute, bool) {
	for i := range rt.Payments {
		r := &rt.Payments[i]
		if r.Environment == env && r.Method == method && r.Country == country && r.Currency == currency && r.Accepts(amount) {
			return r, true
		}
	}
	return nil, false
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
	if err := Validate(&req); err != nil {
		return nil, err
	}
	amount := req.Amount
	page := &Page[PaymentMethod]{Data: []PaymentMethod{}}
	for _, m := range PaymentMethods {
		r, ok := s.routing.PaymentRoute(p.Environment, m, req.Country, req.Currency, amount)
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
