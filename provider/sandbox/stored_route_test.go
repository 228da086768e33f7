package sandbox_test

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"github.com/matryer/is"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/keyring"
	"github.com/paykit/paykit/provider/sandbox"
	"github.com/paykit/paykit/store/memory"
)

// routeService is a Service on store with routing and keys, holding
// payouts of 1000 minor units and more, with the env's adapter as the
// sandbox.
func routeService(t *testing.T, e *env, store paykit.Store, keys *keyring.Keyring, routing paykit.Routing) *paykit.Service {
	t.Helper()
	svc, err := paykit.New(paykit.Config{
		Store: store, Now: e.clock.Now, Routing: routing, Providers: map[string]paykit.Provider{sandbox.Name: e.prov},
		PublicURL: "https://pay.example", SigningKey: []byte("sandbox-test-signing-key"), ApprovalThreshold: 1000,
		AccountKeys: keys,
		Logger:      slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

// setProviderCode edits, in place, the Provider code of a bank in every
// payout route of routing.
func setProviderCode(routing paykit.Routing, code, providerCode string) {
	for i := range routing.Payouts {
		for j := range routing.Payouts[i].Banks {
			if routing.Payouts[i].Banks[j].Code == code {
				routing.Payouts[i].Banks[j].ProviderCode = providerCode
			}
		}
	}
}

// A payout route edited between create and dispatch does not reach the
// payout: the PSP receives the bank code of the route chosen at create,
// whether the host edits the Config it started the Service with or starts
// another Service (a restart, a second instance) on the edited one.
func TestPayoutRouteEditedBeforeDispatchKeepsTheOriginalBankCode(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	e := newEnv(t)
	store := memory.New()
	keys := keyring.Random() // both Services open the same sealed account numbers
	routing := sandbox.DefaultRouting()
	first := routeService(t, e, store, keys, routing)
	m, err := first.CreateMerchant(ctx, "ops:test", "Kedai Kopi")
	is.NoErr(err)
	p := paykit.Principal{Scope: paykit.Scope{MerchantID: m.ID, Environment: paykit.Test}}
	_, err = first.AdjustBalance(ctx, "ops:test", m.ID, paykit.BalanceAdjustmentRequest{Environment: paykit.Test, Currency: "THB", Amount: 10000000, Reason: "float"})
	is.NoErr(err)

	held, _, err := first.CreatePayoutIntent(ctx, p, "k-held", thPayoutIntent("held", "123456789012")) // KBANK, TH-004 at create
	is.NoErr(err)
	is.Equal(held.Status, paykit.PayoutRequiresApproval)
	held2, _, err := first.CreatePayoutIntent(ctx, p, "k-held2", thPayoutIntent("held2", "123456789013"))
	is.NoErr(err)

	// The operator points KBANK at another code: in the Config the first
	// Service was built with, and in the one a second Service starts on.
	setProviderCode(routing, "KBANK", "TH-014")
	second := routeService(t, e, store, keys, routing)

	// Each Service approves (and so dispatches) one held payout.
	for _, c := range []struct {
		svc *paykit.Service
		id  string
	}{{first, held.ID}, {second, held2.ID}} {
		po, err := c.svc.ApprovePayout(ctx, "ops:test", c.id, "")
		is.NoErr(err)
		is.Equal(po.Status, paykit.PayoutProcessing)
	}
	trs := e.psp.Transfers()
	is.Equal(len(trs), 2)
	for _, tr := range trs {
		is.Equal(tr.Bank, "TH-004") // the route's code at create, not the edit
	}

	// A payout created after the edit takes the edited route.
	fresh, _, err := second.CreatePayoutIntent(ctx, p, "k-fresh", thPayoutIntent("fresh", "123456789014"))
	is.NoErr(err)
	_, err = second.ApprovePayout(ctx, "ops:test", fresh.ID, "")
	is.NoErr(err)
	is.Equal(e.psp.Transfers()[2].Bank, "TH-014")
}

// A payment keeps its Provider options as they were mapped at create: the
// route's Provider code of the bank the merchant chose.
func TestPaymentStoresItsProviderOptions(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	e := newEnv(t)
	svc, p := newService(t, e)
	pi, _, err := svc.CreatePaymentIntent(ctx, p, "k-fpx", paykit.CreatePaymentIntentRequest{
		Amount: 10000, Currency: "MYR", Country: "MY", MerchantReference: "fpx-1", PaymentMethod: "FPX",
		Customer: map[string]string{"name": "Aisyah", "email": "aisyah@example.com"}, PaymentMethodOptions: map[string]string{"bank": "MAYBANK"},
	})
	is.NoErr(err)
	stored, err := svc.Store().GetPaymentIntent(ctx, p.Scope, pi.ID)
	is.NoErr(err)
	is.Equal(stored.Provider, sandbox.Name)
	routing := sandbox.DefaultRouting()
	route, ok := routing.PaymentRoute(paykit.Test, "FPX", "MY", "MYR", 10000)
	is.True(ok)
	bank, ok := route.Bank("MAYBANK")
	is.True(ok)
	is.Equal(stored.ProviderOptions, map[string]string{"bank": bank.ProviderCode})
	is.Equal(stored.PaymentMethodOptions, map[string]string{"bank": "MAYBANK"}) // the merchant's own stay canonical
}
