package paykit_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/internal/answertest"
	"github.com/paykit/paykit/keyring"
	"github.com/paykit/paykit/store/memory"
)

// A payment whose create call is resumed after a restart on an edited
// configuration sends the Provider the bank code of the route chosen at
// create: the stored route, not today's.
func TestResumedPaymentUsesTheRouteChosenAtCreate(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	clock := paykit.NewManualClock(time.Date(2026, 6, 1, 8, 0, 0, 0, time.UTC))
	store := memory.New()
	keys := keyring.Random()
	prov := newFakeProvider()
	boot := func(routing paykit.Routing) *paykit.Service {
		svc, err := paykit.New(paykit.Config{Store: store, Now: clock.Now, Routing: routing, AccountKeys: keys,
			Providers: map[string]paykit.Provider{"fake": prov}, PublicURL: "https://pay.example/"})
		is.NoErr(err)
		return svc
	}
	p := paykit.Principal{Scope: paykit.Scope{MerchantID: "mch_1", Environment: paykit.Test}}
	first := boot(fakeRouting)

	// The create request dies in the Provider call: the intent is stored,
	// its attempt still creating.
	prov.block = make(chan struct{})
	hung, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	req := fpx(5000, "o-route")
	req.PaymentMethodOptions = map[string]string{"bank": "MAYBANK"}
	go func() {
		defer close(done)
		_, _, _ = first.CreatePaymentIntent(hung, p, "route-key", req)
	}()
	waitFor(t, func() bool { return prov.createCalls(firstIntentID(ctx, first, p)) == 1 })
	stop()
	<-done
	prov.block = nil

	// The operator gives Maybank another Provider code and restarts.
	edited := paykit.Routing{Payments: slices.Clone(fakeRouting.Payments)}
	edited.Payments[0].Banks = slices.Clone(edited.Payments[0].Banks)
	edited.Payments[0].Banks[0].ProviderCode = "MBB9999"
	second := boot(edited)
	clock.Advance(31 * time.Second) // the dead request's lock expires
	for range 5 {
		_, err := second.ProcessDue(ctx)
		is.NoErr(err)
	}
	resp, err := answertest.From(second.CreatePaymentIntent(ctx, p, "route-key", req))
	is.NoErr(err)
	is.Equal(resp.Status, 201)
	is.Equal(len(prov.options), 2)
	for _, o := range prov.options {
		is.Equal(o["bank"], "MBB0228") // both calls: the code at create
	}
}

// firstIntentID is the id of the only payment intent of p, or "".
func firstIntentID(ctx context.Context, svc *paykit.Service, p paykit.Principal) string {
	page, err := svc.ListPaymentIntents(ctx, p, paykit.ListParams[paykit.PaymentStatus]{})
	if err != nil || len(page.Data) == 0 {
		return ""
	}
	return page.Data[0].ID
}
