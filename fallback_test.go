package paykit_test

import (
	"context"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/internal/monitor"
	"github.com/paykit/paykit/provider/sandbox"
	"github.com/paykit/paykit/store/memory"
	"github.com/paykit/paykit/store/storetest"
)

// twoRouteEnv serves FPX in MY through Provider "a" (priority 1) and "b"
// (priority 2); b's route lacks the BSN bank.
type twoRouteEnv struct {
	svc   *paykit.Service
	store paykit.Store
	clock *paykit.ManualClock
	a, b  *fakeProvider
	p     paykit.Principal
}

func newTwoRouteEnv(t *testing.T, cfg func(*paykit.Config)) *twoRouteEnv {
	t.Helper()
	route := func(provider string, priority int, banks ...paykit.Bank) paykit.PaymentRoute {
		return paykit.PaymentRoute{Environment: paykit.Test, Method: "FPX", Country: "MY", Currency: "MYR",
			Provider: provider, Priority: priority, NextAction: paykit.NextActionRedirectToURL,
			CustomerFields: []string{"name", "email"}, Options: []string{"bank"}, Banks: banks}
	}
	maybank := func(code string) paykit.Bank {
		return paykit.Bank{Code: "MAYBANK", Name: "Maybank2u", ProviderCode: code, Available: true}
	}
	e := &twoRouteEnv{
		store: memory.New(), clock: paykit.NewManualClock(time.Date(2026, 6, 1, 8, 0, 0, 0, time.UTC)),
		a: newFakeProvider(), b: newFakeProvider(),
		p: paykit.Principal{Scope: paykit.Scope{MerchantID: "mch_1", Environment: paykit.Test}},
	}
	c := paykit.Config{
		Store: e.store, Now: e.clock.Now, PublicURL: "https://pay.example/",
		Routing: paykit.Routing{Payments: []paykit.PaymentRoute{
			// Listed out of order: priority decides.
			route("b", 2, maybank("b-maybank")),
			route("a", 1, maybank("a-maybank"), paykit.Bank{Code: "BSN", Name: "BSN", ProviderCode: "a-bsn", Available: true}),
		}},
		Providers: map[string]paykit.Provider{"a": e.a, "b": e.b},
	}
	if cfg != nil {
		cfg(&c)
	}
	svc, err := paykit.New(c)
	if err != nil {
		t.Fatal(err)
	}
	e.svc = svc
	return e
}

func (e *twoRouteEnv) create(t *testing.T, amount int64, ref string, bank string) *paykit.PaymentIntent {
	t.Helper()
	req := fpx(amount, ref)
	if bank != "" {
		req.PaymentMethodOptions = map[string]string{"bank": bank}
	}
	pi, _, err := e.svc.CreatePaymentIntent(context.Background(), e.p, "key-"+ref, req)
	if err != nil {
		t.Fatal(err)
	}
	return pi
}

// stored is the intent as the Store holds it, with its internal route.
func (e *twoRouteEnv) stored(t *testing.T, id string) *paykit.PaymentIntent {
	t.Helper()
	pi, err := e.store.GetPaymentIntent(context.Background(), e.p.Scope, id)
	if err != nil {
		t.Fatal(err)
	}
	return pi
}

func TestRefusedAttemptMovesToTheNextRoute(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	e := newTwoRouteEnv(t, nil)
	e.a.refuse = true
	pi := e.create(t, 15000, "order-1", "MAYBANK")
	is.Equal(pi.Status, paykit.PaymentRequiresAction)
	is.Equal(e.a.createCalls(pi.ID), 1) // refused once
	is.Equal(e.b.createCalls(pi.ID), 1) // then served by b, same key
	st := e.stored(t, pi.ID)
	is.Equal(st.Provider, "b")
	is.Equal(st.ProviderOptions["bank"], "b-maybank") // b's own bank code
	is.Equal(e.b.options[0]["bank"], "b-maybank")

	// Everything after belongs to b: the payer pays there.
	e.b.approve(pi.ID)
	e.clock.Advance(30 * time.Second) // the inquiry that polls b
	drainWorker(t, e.svc)
	got, err := e.svc.GetPaymentIntent(context.Background(), e.p, pi.ID)
	is.NoErr(err)
	is.Equal(got.Status, paykit.PaymentSucceeded)
	is.Equal(e.a.createCalls(pi.ID), 1)
}

func TestRefusalWithoutAnotherRouteFails(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	e := newTwoRouteEnv(t, nil)
	e.a.refuse, e.b.refuse = true, true
	pi := e.create(t, 15000, "order-1", "")
	is.Equal(pi.Status, paykit.PaymentFailed)
	is.Equal(pi.FailureCode, paykit.FailureProviderError)
	is.Equal(e.a.createCalls(pi.ID), 1)
	is.Equal(e.b.createCalls(pi.ID), 1)

	// A bank only a's route has: b cannot serve it, so nothing goes there.
	e.b.refuse = false
	pi = e.create(t, 15000, "order-2", "BSN")
	is.Equal(pi.Status, paykit.PaymentFailed)
	is.Equal(e.b.createCalls(pi.ID), 0)
}

func TestTimeoutIsRecoveredAtTheSameProvider(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	e := newTwoRouteEnv(t, nil)
	pi := e.create(t, 15902, "order-1", "") // a: the answer is lost (Unknown)
	is.Equal(pi.Status, paykit.PaymentProcessing)
	e.clock.Advance(2 * time.Second)
	drainWorker(t, e.svc)
	e.clock.Advance(2 * time.Second)
	drainWorker(t, e.svc)
	got, err := e.svc.GetPaymentIntent(context.Background(), e.p, pi.ID)
	is.NoErr(err)
	is.Equal(got.Status, paykit.PaymentSucceeded) // recovered at a
	is.Equal(e.stored(t, pi.ID).Provider, "a")
	is.Equal(e.stored(t, pi.ID).ProviderRef, "fake_"+pi.ID) // learnt from the inquiry, for later calls
	is.Equal(e.a.createCalls(pi.ID), 1)
	is.Equal(e.b.createCalls(pi.ID), 0) // never retried elsewhere
}

func TestUnacknowledgedCreatesOpenTheCircuit(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	e := newTwoRouteEnv(t, func(c *paykit.Config) {
		c.CircuitFailures, c.CircuitCooldown = 3, time.Minute
	})
	e.a.down = true
	var stuck []*paykit.PaymentIntent
	for i := range 3 {
		pi := e.create(t, 15000, "down-"+string(rune('a'+i)), "")
		is.Equal(pi.Status, paykit.PaymentProcessing) // unacknowledged: stays at a
		is.Equal(e.b.createCalls(pi.ID), 0)
		stuck = append(stuck, pi)
	}
	// a's circuit is open: a new payment goes to b, and a hears nothing of it.
	pi := e.create(t, 15000, "open", "")
	is.Equal(pi.Status, paykit.PaymentRequiresAction)
	is.Equal(e.a.createCalls(pi.ID), 0)
	is.Equal(e.stored(t, pi.ID).Provider, "b")
	methods, err := e.svc.ListPaymentMethods(context.Background(), e.p, paykit.PaymentMethodsRequest{Amount: 15000, Currency: "MYR", Country: "MY"})
	is.NoErr(err)
	is.Equal(len(methods.Data), 1)
	is.Equal(methods.Data[0].Banks[0].ProviderCode, "b-maybank") // what b's route offers

	is.Equal(monitor.ProviderStates(e.svc), []monitor.ProviderState{
		{Name: "a", CircuitOpen: true, OpenUntil: e.clock.Now().Add(time.Minute)}, {Name: "b"}})

	// The payments a may hold stay with a.
	for _, p := range stuck {
		is.Equal(e.stored(t, p.ID).Provider, "a")
	}

	// After the cool-down a is tried again, and its answer closes the circuit.
	e.a.down = false
	e.clock.Advance(time.Minute)
	pi = e.create(t, 15000, "again", "")
	is.Equal(e.stored(t, pi.ID).Provider, "a")
	is.Equal(pi.Status, paykit.PaymentRequiresAction)
	is.Equal(monitor.ProviderStates(e.svc)[0], monitor.ProviderState{Name: "a"}) // closed again
}

// While a Provider's circuit is open, the jobs that would call it wait
// out the cool-down without calling it; after it they recover their
// payments there.
func TestOpenCircuitDefersJobsAtItsProvider(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	e := newTwoRouteEnv(t, func(c *paykit.Config) {
		c.CircuitFailures, c.CircuitCooldown = 3, time.Minute
	})
	var stuck []*paykit.PaymentIntent
	for i := range 3 {
		pi := e.create(t, 15902, "lost-"+string(rune('a'+i)), "") // a: the answer is lost
		is.Equal(pi.Status, paykit.PaymentProcessing)
		stuck = append(stuck, pi)
	}
	is.True(monitor.ProviderStates(e.svc)[0].CircuitOpen)
	opened := e.clock.Now()
	inquiries := func() (n int) {
		e.a.mu.Lock()
		defer e.a.mu.Unlock()
		for _, c := range e.a.inquired {
			n += c
		}
		return n
	}
	for range 5 {
		e.clock.Advance(10 * time.Second)
		drainWorker(t, e.svc)
	}
	is.Equal(inquiries(), 0) // a heard nothing while its circuit was open
	jobs, err := e.store.Queue().ListJobs(context.Background(), paykit.ListQuery[paykit.JobListParams]{}, e.clock.Now())
	is.NoErr(err)
	is.True(len(jobs) >= len(stuck))
	for _, j := range jobs {
		is.Equal(j.LastError, "") // waiting, not failing
		is.Equal(j.State(e.clock.Now()), paykit.JobWaiting)
		is.True(!j.RunAt.Before(opened.Add(time.Minute)))                              // not before the cool-down ends
		is.True(j.RunAt.Before(opened.Add(time.Minute + time.Minute/2 + time.Second))) // spread over half of it at most
	}

	for range 10 {
		e.clock.Advance(10 * time.Second)
		drainWorker(t, e.svc)
	}
	is.True(inquiries() > 0)
	for _, p := range stuck {
		got, err := e.svc.GetPaymentIntent(context.Background(), e.p, p.ID)
		is.NoErr(err)
		is.Equal(got.Status, paykit.PaymentSucceeded) // recovered at a
	}
}

func TestDisabledProviderTakesNothingNew(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	e := newTwoRouteEnv(t, nil)
	held := e.create(t, 15000, "before", "") // at a, before it is disabled

	d := newTwoRouteEnv(t, func(c *paykit.Config) { c.DisabledProviders = []string{"a"} })
	is.Equal(monitor.ProviderStates(d.svc), []monitor.ProviderState{{Name: "a", Disabled: true}, {Name: "b"}})
	pi := d.create(t, 15000, "order-1", "")
	is.Equal(d.stored(t, pi.ID).Provider, "b")
	is.Equal(d.a.createCalls(pi.ID), 0)
	// BSN is only on a's route: not offered while a is disabled.
	_, _, err := d.svc.CreatePaymentIntent(ctx, d.p, "key-bsn", func() paykit.CreatePaymentIntentRequest {
		r := fpx(15000, "order-bsn")
		r.PaymentMethodOptions = map[string]string{"bank": "BSN"}
		return r
	}())
	is.Equal(paykit.ErrorCode(err), paykit.CodeInvalidRequest)

	both := newTwoRouteEnv(t, func(c *paykit.Config) { c.DisabledProviders = []string{"a", "b"} })
	methods, err := both.svc.ListPaymentMethods(ctx, both.p, paykit.PaymentMethodsRequest{Amount: 15000, Currency: "MYR", Country: "MY"})
	is.NoErr(err)
	is.Equal(len(methods.Data), 0)
	_, _, err = both.svc.CreatePaymentIntent(ctx, both.p, "key-x", fpx(15000, "order-x"))
	is.Equal(paykit.ErrorCode(err), paykit.CodePaymentMethodUnavailable)

	_, err = paykit.New(paykit.Config{Store: memory.New(), DisabledProviders: []string{"nope"}})
	is.True(err != nil) // names a Provider that is not configured
	is.Equal(held.Status, paykit.PaymentRequiresAction)
}

func TestRefusedTransferMovesToTheNextPayoutRoute(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	run := func(t *testing.T, refuseB bool) (*paykit.PayoutIntent, *fakeBank, *fakeBank, paykit.Store) {
		is := is.New(t)
		a, b := newFakeBank(), newFakeBank()
		a.refuse, b.refuse = true, refuseB
		store := memory.New()
		clock := paykit.NewManualClock(time.Date(2026, 6, 1, 8, 0, 0, 0, time.UTC))
		route := func(provider, code string, priority int) paykit.PayoutRoute {
			return paykit.PayoutRoute{Environment: paykit.Test, Country: "TH", Currency: "THB", Provider: provider, Priority: priority,
				Banks: []paykit.PayoutBank{{Code: "KBANK", ProviderCode: code, RequiresHolderNameTH: true}}}
		}
		svc, err := paykit.New(paykit.Config{
			Store: store, Now: clock.Now, PublicURL: "https://pay.example",
			Routing:   paykit.Routing{Payouts: []paykit.PayoutRoute{route("b", "b-kbank", 2), route("a", "a-kbank", 1)}},
			Providers: map[string]paykit.Provider{"a": a, "b": b},
		})
		is.NoErr(err)
		p := paykit.Principal{Scope: paykit.Scope{MerchantID: "mch_1", Environment: paykit.Test}}
		is.NoErr(store.CreateMerchant(ctx, &paykit.Merchant{ID: "mch_1", Name: "One", CreatedAt: clock.Now()}))
		_, err = svc.AdjustBalance(ctx, "ops", "mch_1", paykit.BalanceAdjustmentRequest{Environment: paykit.Test, Currency: "THB", Amount: 100000, Reason: "float"})
		is.NoErr(err)
		po, _, err := svc.CreatePayoutIntent(ctx, p, "key-1", thPayout(5000, "po-1", "000123456789"))
		is.NoErr(err)
		t.Cleanup(func() { storetest.CheckLedger(t, store, p.Scope) })
		return po, a, b, store
	}
	t.Run("served by the next route", func(t *testing.T) {
		is := is.New(t)
		po, a, b, store := run(t, false)
		is.Equal(po.Status, paykit.PayoutProcessing)
		is.Equal(a.calls(po.ID), 1)
		is.Equal(b.calls(po.ID), 1)
		is.Equal(b.transfers[po.ID].bank, "b-kbank") // b's own code for KBANK
		st, err := store.GetPayoutIntent(ctx, po.Scope(), po.ID)
		is.NoErr(err)
		is.Equal(st.Provider, "b")
	})
	t.Run("refused everywhere", func(t *testing.T) {
		is := is.New(t)
		po, a, b, store := run(t, true)
		is.Equal(po.Status, paykit.PayoutFailed)
		is.Equal(po.FailureCode, paykit.FailureProviderError)
		is.Equal(a.calls(po.ID)+b.calls(po.ID), 2)
		bal, err := store.GetBalance(ctx, po.Scope(), "THB")
		is.NoErr(err)
		is.Equal(bal.Reserved, int64(0)) // released
	})
}

// TestLostCreateAnswerIsRecoveredByKey: a Provider that finds attempts only
// by its own id cannot answer an inquiry of an attempt whose create answer
// was lost; recovery sends the create again under the same key and learns
// the id, with one attempt at the Provider.
func TestLostCreateAnswerIsRecoveredByKey(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	e := newTwoRouteEnv(t, nil)
	e.a.byID, e.a.lose = true, true
	pi := e.create(t, 15000, "order-1", "")
	is.Equal(pi.Status, paykit.PaymentProcessing)
	is.Equal(e.stored(t, pi.ID).ProviderRef, "")

	e.clock.Advance(2 * time.Second)
	drainWorker(t, e.svc)
	got := e.stored(t, pi.ID)
	is.Equal(got.Status, paykit.PaymentRequiresAction) // the attempt it had, with its action
	is.Equal(got.ProviderRef, "fake_"+pi.ID)
	is.Equal(e.a.createCalls(pi.ID), 2) // sent again under the same key
	is.Equal(len(e.a.attempts), 1)      // one attempt
	is.Equal(e.b.createCalls(pi.ID), 0)

	// From now on inquiries name the id, and the payment completes.
	e.a.approve(pi.ID)
	e.clock.Advance(10 * time.Second)
	drainWorker(t, e.svc)
	is.Equal(e.stored(t, pi.ID).Status, paykit.PaymentSucceeded)
	is.Equal(e.a.createCalls(pi.ID), 2)
}

// A Provider's circuit opens after CircuitFailures calls in a row without
// a trustworthy answer; with no other route a new payment still goes to
// it, and its trustworthy answer closes the circuit.
func TestCircuitWithoutOtherRouteClosesOnAnswer(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	e, clock := newTimedExample(paykit.Config{CircuitFailures: 2, CircuitCooldown: time.Minute})
	defer e.close()
	is.Equal(monitor.ProviderStates(e.svc), []monitor.ProviderState{{Name: "sandbox"}})

	e.psp.InjectFault(sandbox.Fault{Op: sandbox.OpCreatePayment, Kind: sandbox.FaultStatus500, Times: 2})
	for _, ref := range []string{"order-108", "order-109"} { // no trustworthy answer: processing
		e.order(ref)
	}
	is.Equal(monitor.ProviderStates(e.svc), []monitor.ProviderState{{Name: "sandbox", CircuitOpen: true, OpenUntil: clock.Now().Add(time.Minute)}})

	pi, _, err := e.svc.CreatePaymentIntent(context.Background(), e.p, "order-110", tngPayment("order-110"))
	is.NoErr(err)
	is.Equal(pi.Status, paykit.PaymentRequiresAction)
	is.Equal(monitor.ProviderStates(e.svc), []monitor.ProviderState{{Name: "sandbox"}})
}
