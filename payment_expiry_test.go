package paykit_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/internal/answertest"
	"github.com/paykit/paykit/keyring"
	"github.com/paykit/paykit/paykittest"
	"github.com/paykit/paykit/provider/sandbox"
	"github.com/paykit/paykit/store/storetest"
)

// sandboxEnv is a Service with the sandbox Provider, whose PSP (state in
// memory) a test can replace: a fresh one has forgotten every attempt, as
// the PSP of a restarted server did before its state was kept in the
// database. PSP callbacks reach the Service.
type sandboxEnv struct {
	svc    *paykit.Service
	store  paykit.Store
	clock  *paykit.ManualClock
	prov   *racingProvider
	p      paykit.Principal
	newPSP func() *sandbox.PSP

	mu  sync.Mutex
	psp http.Handler // nil: the PSP's host is down (503)
}

const expiryTestKey = "expiry-test-psp-key"

// racingProvider is the sandbox adapter that runs beforeCancel (when set)
// before each cancel call, to let something race the job that cancels.
type racingProvider struct {
	*sandbox.Provider
	beforeCancel func()
}

func (r *racingProvider) CancelPayment(ctx context.Context, ref paykit.AttemptRef) paykit.Result {
	key := ref.Key
	if r.beforeCancel != nil {
		r.beforeCancel()
	}
	return r.Provider.CancelPayment(ctx, paykit.AttemptRef{Key: key})
}

func newSandboxEnv(t *testing.T, store paykit.Store) *sandboxEnv {
	t.Helper()
	ctx := context.Background()
	e := &sandboxEnv{clock: paykit.NewManualClock(time.Date(2026, 6, 1, 8, 0, 0, 0, time.UTC)), store: store}
	keys, err := keyring.New("k1", map[string][]byte{"k1": []byte("0123456789abcdef0123456789abcdef")})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/callbacks" {
			if err := e.svc.HandleProviderCallback(r.Context(), sandbox.Name, r); err != nil {
				w.WriteHeader(http.StatusBadRequest)
			}
			return
		}
		e.mu.Lock()
		psp := e.psp
		e.mu.Unlock()
		if psp == nil {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		http.StripPrefix("/sandbox", psp).ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	e.newPSP = func() *sandbox.PSP {
		return sandbox.NewPSP(sandbox.PSPConfig{
			BaseURL: srv.URL + "/sandbox", APIKey: expiryTestKey, Now: e.clock.Now, CallbackURL: srv.URL + "/callbacks",
		})
	}
	e.prov = &racingProvider{Provider: sandbox.New(sandbox.Config{BaseURL: srv.URL + "/sandbox", APIKey: expiryTestKey, Timeout: 5 * time.Second})}
	e.svc, err = paykit.New(paykit.Config{
		Store: e.store, Now: e.clock.Now, Routing: sandbox.DefaultRouting(),
		Providers: map[string]paykit.Provider{sandbox.Name: e.prov},
		PublicURL: "https://pay.example", SigningKey: []byte("expiry-test-signing-key"), AccountKeys: keys,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	m, err := e.svc.CreateMerchant(ctx, "ops:test", "Kedai Kopi")
	if err != nil {
		t.Fatal(err)
	}
	key, err := e.svc.CreateAPIKey(ctx, "ops:test", m.ID, paykit.Test)
	if err != nil {
		t.Fatal(err)
	}
	if e.p, err = e.svc.Authenticate(ctx, key.PublicKey, key.SecretKey); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { storetest.CheckLedger(t, e.store, e.p.Scope) })
	return e
}

// usePSP puts psp (nil: none, the host answers 503) behind the PSP's URL.
func (e *sandboxEnv) usePSP(psp *sandbox.PSP) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.psp = nil // a nil *PSP in the interface would not read as none
	if psp != nil {
		e.psp = psp
	}
}

// drain runs the worker until nothing is due.
func (e *sandboxEnv) drain(t *testing.T) {
	t.Helper()
	for range 50 {
		n, err := e.svc.ProcessDue(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			return
		}
	}
	t.Fatal("the worker never ran out of due jobs")
}

// waitingPayment creates a TNG payment that waits for its payer.
func (e *sandboxEnv) waitingPayment(t *testing.T, ref string) string {
	t.Helper()
	resp, err := answertest.From(e.svc.CreatePaymentIntent(context.Background(), e.p, ref, paykit.CreatePaymentIntentRequest{
		Amount: 2000, Currency: "MYR", Country: "MY", MerchantReference: ref, PaymentMethod: "TNG",
		Customer: map[string]string{"name": "Aisyah"},
	}))
	if err != nil {
		t.Fatal(err)
	}
	pi := decodeIntent(t, resp)
	if pi["status"] != "requires_action" {
		t.Fatalf("payment is %v, want requires_action", pi["status"])
	}
	return pi["id"].(string)
}

func (e *sandboxEnv) intent(t *testing.T, id string) *paykit.PaymentIntent {
	t.Helper()
	pi, err := e.svc.GetPaymentIntent(context.Background(), e.p, id)
	if err != nil {
		t.Fatal(err)
	}
	return pi
}

// eventTypes lists the types of the events about id, oldest first.
func (e *sandboxEnv) eventTypes(t *testing.T, id string) []string {
	t.Helper()
	page, err := e.svc.ListEvents(context.Background(), e.p, paykit.EventListParams{PageParams: paykit.PageParams{Limit: 100}})
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for i := len(page.Data) - 1; i >= 0; i-- {
		if page.Data[i].ObjectID == id {
			types = append(types, page.Data[i].Type)
		}
	}
	return types
}

// credited is what the merchant's MYR balance was credited: available
// and pending (a payment's net waits there for its settlement).
func (e *sandboxEnv) credited(t *testing.T) int64 {
	t.Helper()
	page, err := e.svc.ListBalances(context.Background(), e.p)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range page.Data {
		if b.Currency == "MYR" {
			return b.Available + b.Pending
		}
	}
	return 0
}

// A payment waiting for its payer ends expired at expires_at when the
// Provider confirms it holds no attempt, or cancels it; until the Provider
// confirms either, it stays as it is. A callback of the PSP that forgot,
// racing the expiry job, makes the one transition.
func TestExpiryNeedsTheProvidersWord(t *testing.T) {
	t.Parallel()
	for _, kind := range paykittest.Stores {
		t.Run(string(kind), func(t *testing.T) {
			t.Parallel()
			testExpiryNeedsTheProvidersWord(t, func(t *testing.T) paykit.Store { return paykittest.OpenStore(t, kind) })
		})
	}
}

func testExpiryNeedsTheProvidersWord(t *testing.T, open func(t *testing.T) paykit.Store) {
	for _, tc := range []struct {
		name string
		// atExpiry is the PSP the expiry job meets: the one that took the
		// attempt, a fresh one that forgot it, or none (its host is down).
		atExpiry string
		// paid: the payer approved at the first PSP. race: the first PSP
		// sends its callbacks while the expiry job calls the Provider.
		paid, race bool
		status     paykit.PaymentStatus
		failure    string
		event      string
		credited   int64
	}{
		{"the PSP cancels the attempt", "same", false, false, paykit.PaymentExpired, paykit.FailureExpired, "payment_intent.expired", 0},
		{"the PSP has forgotten the attempt", "fresh", false, false, paykit.PaymentExpired, paykit.FailureExpired, "payment_intent.expired", 0},
		{"the PSP does not answer, then has forgotten it", "down", false, false, paykit.PaymentExpired, paykit.FailureExpired, "payment_intent.expired", 0},
		{"the forgotten attempt's callback says expired", "fresh", false, true, paykit.PaymentExpired, paykit.FailureExpired, "payment_intent.expired", 0},
		{"the forgotten attempt's callback says paid", "fresh", true, true, paykit.PaymentSucceeded, "", "payment_intent.succeeded", 2000 - 58}, // less the sandbox's fee
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			ctx := context.Background()
			e := newSandboxEnv(t, open(t))
			first := e.newPSP()
			e.usePSP(first)
			id := e.waitingPayment(t, "order-1")
			if tc.paid {
				is.NoErr(e.prov.Approve(ctx, id)) // its callback is not sent yet
			}
			switch tc.atExpiry {
			case "fresh":
				e.usePSP(e.newPSP())
			case "down":
				e.usePSP(nil)
			}
			var sent []int // callbacks acknowledged in each race (on the worker's goroutine)
			var sendErr error
			if tc.race {
				e.prov.beforeCancel = func() {
					n, err := first.SendCallbacks(ctx)
					sent, sendErr = append(sent, n), errors.Join(sendErr, err)
				}
			}
			e.clock.Advance(29 * time.Minute)
			e.drain(t)
			is.Equal(e.intent(t, id).Status, paykit.PaymentRequiresAction) // not before expires_at, whatever the PSP says

			e.clock.Advance(time.Minute)
			e.drain(t)
			if tc.atExpiry == "down" {
				is.Equal(e.intent(t, id).Status, paykit.PaymentRequiresAction) // no word from the Provider: no end
				e.clock.Advance(time.Hour)
				e.drain(t)
				is.Equal(e.intent(t, id).Status, paykit.PaymentRequiresAction)
				e.usePSP(e.newPSP())
				e.clock.Advance(time.Hour) // past the retry's backoff
				e.drain(t)
			}
			pi := e.intent(t, id)
			is.Equal(pi.Status, tc.status)
			is.Equal(pi.FailureCode, tc.failure)
			is.Equal(pi.Attempt, paykit.AttemptClosed)
			is.True(pi.NextAction == nil)
			is.True(pi.CompletedAt != nil)
			is.Equal(e.eventTypes(t, id), []string{"payment_intent.requires_action", tc.event}) // one transition
			is.Equal(e.credited(t), tc.credited)                                                // credited once, or not at all
			if tc.race {
				is.NoErr(sendErr)
				is.Equal(sent, []int{1}) // one race, in which the callback was applied
			}

			e.clock.Advance(24 * time.Hour) // nothing changes it any more
			e.drain(t)
			is.Equal(e.intent(t, id).Status, tc.status)
			is.Equal(len(e.eventTypes(t, id)), 2)
		})
	}
}
