package paykit

import (
	"context"
	"encoding/json"
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

// Routing is the operational configuration the host fills. The first
// matching route wins. An environment with no routes offers nothing.
type Routing struct {
	Payments []PaymentRoute
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

// MarshalJSON renders the payment_method projection; Provider bank codes
// never appear.
func (m PaymentMethod) MarshalJSON() ([]byte, error) {
	type bank struct {
		Code      string `json:"code"`
		Name      string `json:"name"`
		Available bool   `json:"available"`
	}
	out := struct {
		Object         string   `json:"object"`
		Method         string   `json:"payment_method"`
		NextActionType string   `json:"next_action_type"`
		Required       []string `json:"required_customer_fields"`
		Banks          []bank   `json:"banks,omitempty"`
	}{Object: "payment_method", Method: m.Method, NextActionType: m.NextActionType, Required: m.RequiredCustomerFields}
	if out.Required == nil {
		out.Required = []string{}
	}
	for _, b := range m.Banks {
		out.Banks = append(out.Banks, bank{b.Code, b.Name, b.Available})
	}
	return json.Marshal(out)
}

// PaymentMethodsRequest is the query of GET /payment_methods.
type PaymentMethodsRequest struct {
	Amount   string `json:"amount" validate:"required,amount"`
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
	amount, err := ParseAmount(req.Amount)
	if err != nil {
		return nil, InvalidRequest("amount", "amount %s.", ruleMessages["amount"])
	}
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
