package paykit_test

import (
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/store/memory"
)

// declared overrides what a fake declares, whatever methods it has.
type declared struct {
	paykit.Provider
	caps paykit.Capabilities
}

func (d declared) Capabilities() paykit.Capabilities { return d.caps }

// bankDeclaring keeps the fake bank's payout methods and overrides what it
// declares.
type bankDeclaring struct {
	*fakeBank
	caps paykit.Capabilities
}

func (b bankDeclaring) Capabilities() paykit.Capabilities { return b.caps }

// New finds an adapter's capabilities by its declaration: a route needs
// its Provider to declare what it serves, and an adapter that declares a
// capability needs its methods.
func TestNewChecksDeclaredCapabilities(t *testing.T) {
	t.Parallel()
	payment := paykit.PaymentRoute{Environment: paykit.Test, Method: "TNG", Country: "MY", Currency: "MYR", Provider: "p"}
	payout := thPayoutRouting().Payouts[0]
	payout.Provider = "p"
	bank := newFakeBank()
	for _, c := range []struct {
		name    string
		routing paykit.Routing
		prov    paykit.Provider
		want    string // "" when New must succeed
	}{
		{"payment route, all declared", paykit.Routing{Payments: []paykit.PaymentRoute{payment}}, newFakeProvider(), ""},
		{"payment route, no payments declared", paykit.Routing{Payments: []paykit.PaymentRoute{payment}},
			declared{newFakeProvider(), paykit.CapCancel}, `names Provider "p", which cannot serve payments: the route needs payments|cancel and the Provider declares cancel`},
		{"payment route, no cancel declared", paykit.Routing{Payments: []paykit.PaymentRoute{payment}},
			declared{newFakeProvider(), paykit.CapPayments}, "cannot serve payments"},
		{"payout route, has the methods but does not declare them", paykit.Routing{Payouts: []paykit.PayoutRoute{payout}},
			bankDeclaring{bank, paykit.CapPayments | paykit.CapCancel}, `payout route test TH/THB names Provider "p", which cannot pay out`},
		{"payout route, declared", paykit.Routing{Payouts: []paykit.PayoutRoute{payout}}, bank, ""},
		{"declares payouts without the methods", paykit.Routing{},
			declared{newFakeProvider(), paykit.CapPayments | paykit.CapPayouts}, `Provider "p" declares payouts but lacks its methods (paykit.PayoutProvider)`},
		{"declares refunds without the methods", paykit.Routing{},
			declared{newFakeProvider(), paykit.CapPayments | paykit.CapRefunds}, `Provider "p" declares refunds but lacks its methods (paykit.RefundProvider)`},
		{"declares payer simulation without the methods", paykit.Routing{},
			declared{newFakeProvider(), paykit.CapPayerSimulation}, "declares payer simulation but lacks its methods (paykit.PayerSimulator)"},
		{"declares returns without the methods", paykit.Routing{},
			bankDeclaring{bank, paykit.CapPayouts | paykit.CapReturns}, "declares returns but lacks its methods (paykit.ReturnSimulator)"},
		{"nil Provider", paykit.Routing{}, nil, `Config.Providers["p"] is nil`},
	} {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			_, err := paykit.New(paykit.Config{Store: memory.New(), Routing: c.routing, Providers: map[string]paykit.Provider{"p": c.prov}})
			if c.want == "" {
				is.NoErr(err)
				return
			}
			is.True(err != nil)
			if !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %q does not say %q", err, c.want)
			}
		})
	}
}

func TestCapabilitiesString(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	is.Equal(paykit.Capabilities(0).String(), "none")
	is.Equal((paykit.CapPayments | paykit.CapPayouts | paykit.CapReturns).String(), "payments|payouts|returns")
	is.True((paykit.CapPayments | paykit.CapCancel).Has(paykit.CapCancel))
	is.True(!paykit.CapPayments.Has(paykit.CapPayments | paykit.CapCancel))
}
