package paykit_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/httpadapter"
	"github.com/paykit/paykit/internal/answertest"
	"github.com/paykit/paykit/keyring"
	"github.com/paykit/paykit/store/memory"
	"github.com/paykit/paykit/store/storetest"
)

// fakeProvider is an in-process Provider that dedups attempts by key, like
// a real one, and answers by the amount's last digits.
type fakeProvider struct {
	mu       sync.Mutex
	attempts map[string]*fakeAttempt
	creates  map[string]int      // create calls per key
	inquired map[string]int      // payment inquiries per key
	block    chan struct{}       // when set, CreatePayment and CreateRefund wait on it (a hung request)
	returns  []string            // return URLs received
	options  []map[string]string // options received, per create call

	refunds     map[string]*fakeRefund // by key
	refundCalls map[string]int         // create calls per key
	meanwhile   func()                 // when set, the next CreateRefund runs it before it answers

	refuse bool // creates are refused before anything exists (OutcomeRefused)
	byID   bool // inquiries find attempts only by the Provider's id
	lose   bool // the answer of every first create of a key is lost (the attempt is made)
	down   bool // every call goes unacknowledged (connection refused)
}

type fakeAttempt struct {
	amount int64
	state  paykit.Outcome
}

func newFakeProvider() *fakeProvider {
	return &fakeProvider{attempts: map[string]*fakeAttempt{}, creates: map[string]int{}, inquired: map[string]int{}}
}

func (f *fakeProvider) Capabilities() paykit.Capabilities {
	return paykit.CapPayments | paykit.CapCancel | paykit.CapRefunds
}

func (f *fakeProvider) CreatePayment(ctx context.Context, req paykit.PaymentRequest) paykit.Result {
	f.mu.Lock()
	f.creates[req.Key]++
	f.returns = append(f.returns, req.ReturnURL)
	f.options = append(f.options, req.Options)
	if f.refuse || f.down {
		defer f.mu.Unlock()
		if f.down {
			return paykit.Result{Outcome: paykit.OutcomeUnacknowledged, Detail: "connection refused"}
		}
		return paykit.Result{Outcome: paykit.OutcomeRefused, Detail: "LOCAL_INVALID_REQUEST"}
	}
	block := f.block
	a, seen := f.attempts[req.Key]
	if !seen {
		a = &fakeAttempt{amount: req.Amount, state: paykit.OutcomeRequiresAction}
		switch req.Amount % 1000 {
		case 901:
			a.state = paykit.OutcomeFailed
		case 902:
			a.state = paykit.OutcomePending
		}
		f.attempts[req.Key] = a
	}
	f.mu.Unlock()
	if block != nil {
		select {
		case <-block:
		case <-ctx.Done():
		}
	}
	if (req.Amount%1000 == 902 || f.lose) && !seen {
		return paykit.Result{Outcome: paykit.OutcomeUnknown, Detail: "timeout"}
	}
	return f.result(req.Key, a)
}

func (f *fakeProvider) result(key string, a *fakeAttempt) paykit.Result {
	r := paykit.Result{Outcome: a.state, Reference: "fake_" + key}
	switch a.state {
	case paykit.OutcomeRequiresAction:
		r.Action = &paykit.ProviderAction{Type: paykit.NextActionRedirectToURL, URL: "https://psp.invalid/pay/" + key}
	case paykit.OutcomeFailed:
		r.FailureCode, r.Detail = paykit.FailureProviderDeclined, "LOCAL_DECLINE_51"
	}
	return r
}

func (f *fakeProvider) InquirePayment(_ context.Context, ref paykit.AttemptRef) paykit.Result {
	key := ref.Key
	f.mu.Lock()
	defer f.mu.Unlock()
	f.inquired[key]++
	if f.byID && ref.Reference == "" {
		return paykit.Result{Outcome: paykit.OutcomeUnknown, Detail: "no id to look up"}
	}
	a, ok := f.attempts[key]
	if !ok {
		return paykit.Result{Outcome: paykit.OutcomeNotFound}
	}
	if a.state == paykit.OutcomePending {
		a.state = paykit.OutcomeSucceeded // settles by the next inquiry
		return paykit.Result{Outcome: paykit.OutcomePending}
	}
	return f.result(key, a)
}

func (f *fakeProvider) CancelPayment(_ context.Context, ref paykit.AttemptRef) paykit.Result {
	key := ref.Key
	f.mu.Lock()
	defer f.mu.Unlock()
	a, ok := f.attempts[key]
	if !ok {
		return paykit.Result{Outcome: paykit.OutcomeNotFound}
	}
	if a.state == paykit.OutcomeRequiresAction || a.state == paykit.OutcomePending {
		a.state = paykit.OutcomeCancelled
	}
	return f.result(key, a)
}

func (f *fakeProvider) approve(key string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.attempts[key].state = paykit.OutcomeSucceeded
}

func (f *fakeProvider) lastReturnToken(t *testing.T) string {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	u := f.returns[len(f.returns)-1]
	if !strings.HasPrefix(u, "https://pay.example/pay/return/") {
		t.Fatalf("return URL %q is not a service URL", u)
	}
	return strings.TrimPrefix(u, "https://pay.example/pay/return/")
}

func (f *fakeProvider) createCalls(key string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.creates[key]
}

// ParseCallback reads the events a test posts as a JSON array: the
// fake's callbacks are not signed.
func (f *fakeProvider) ParseCallback(_ context.Context, r *http.Request) ([]paykit.CallbackEvent, error) {
	var events []paykit.CallbackEvent
	if err := json.NewDecoder(r.Body).Decode(&events); err != nil {
		return nil, fmt.Errorf("fake callback: %w", err)
	}
	return events, nil
}

var fakeRouting = paykit.Routing{Payments: []paykit.PaymentRoute{
	{Environment: paykit.Test, Method: "FPX", Country: "MY", Currency: "MYR", Provider: "fake", NextAction: paykit.NextActionRedirectToURL,
		CustomerFields: []string{"name", "email"}, Options: []string{"bank"},
		Banks: []paykit.Bank{{Code: "MAYBANK", Name: "Maybank2u", ProviderCode: "MBB0228", Available: true}, {Code: "BSN", Name: "BSN", ProviderCode: "BSN0601"}}},
	{Environment: paykit.Test, Method: "TNG", Country: "MY", Currency: "MYR", Provider: "fake", NextAction: paykit.NextActionRedirectToURL,
		CustomerFields: []string{"name"}, MaxAmount: 500_000},
}}

type flowEnv struct {
	store    paykit.Store
	svc      *paykit.Service
	clock    *paykit.ManualClock
	provider *fakeProvider
	test     paykit.Principal
	live     paykit.Principal
}

func newFlowEnv(t *testing.T) *flowEnv { t.Helper(); return newFlowEnvOn(t, memory.New()) }

// newFlowEnvOn is newFlowEnv on store, with the keys a persistent Store
// needs.
func newFlowEnvOn(t *testing.T, store paykit.Store, configure ...func(*paykit.Config)) *flowEnv {
	t.Helper()
	clock := paykit.NewManualClock(time.Date(2026, 6, 1, 8, 0, 0, 0, time.UTC))
	prov := newFakeProvider()
	keys, err := keyring.New("k1", map[string][]byte{"k1": []byte("0123456789abcdef0123456789abcdef")})
	if err != nil {
		t.Fatal(err)
	}
	cfg := paykit.Config{
		Store: store, Now: clock.Now, Routing: fakeRouting,
		Providers: map[string]paykit.Provider{"fake": prov}, PublicURL: "https://pay.example/",
		SigningKey: []byte("flow-test-signing-key-32-bytes!!"), AccountKeys: keys,
	}
	for _, c := range configure {
		c(&cfg)
	}
	svc, err := paykit.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { storetest.CheckLedger(t, store, paykit.Scope{MerchantID: "mch_1", Environment: paykit.Test}) })
	return &flowEnv{svc: svc, clock: clock, provider: prov, store: store,
		test: paykit.Principal{Scope: paykit.Scope{MerchantID: "mch_1", Environment: paykit.Test}},
		live: paykit.Principal{Scope: paykit.Scope{MerchantID: "mch_1", Environment: paykit.Live}},
	}
}

func fpx(amount int64, ref string) paykit.CreatePaymentIntentRequest {
	return paykit.CreatePaymentIntentRequest{
		Amount: amount, Currency: "MYR", Country: "MY", MerchantReference: ref, PaymentMethod: "FPX",
		Customer: map[string]string{"name": "Aisyah", "email": "aisyah@example.com"},
	}
}

func decodeIntent(t *testing.T, r *answertest.Response) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.Body, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// drain runs the worker until nothing is due.
func (e *flowEnv) drain(t *testing.T) { t.Helper(); drainWorker(t, e.svc) }

// drainWorker runs svc's worker until nothing is due (at most 20 rounds).
func drainWorker(t *testing.T, svc *paykit.Service) {
	t.Helper()
	for range 20 {
		n, err := svc.ProcessDue(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			return
		}
	}
}

// TestWaitingPaymentPollSchedule: a payment waiting for its payer is asked
// about after as long as it has waited (30 s, 1 min, 2 min, 4 min, ...),
// not on the retry backoff, and a payer's success is found by the next
// inquiry.
func TestWaitingPaymentPollSchedule(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	e := newFlowEnv(t)
	pi, _, err := e.svc.CreatePaymentIntent(ctx, e.test, "poll-1", fpx(15000, "poll-1"))
	is.NoErr(err)
	is.Equal(pi.Status, paykit.PaymentRequiresAction)
	inquiries := func() int {
		e.provider.mu.Lock()
		defer e.provider.mu.Unlock()
		return e.provider.inquired[pi.ID]
	}
	var at []int // seconds after the create of each inquiry
	for sec := 1; sec <= 479; sec++ {
		e.clock.Advance(time.Second)
		before := inquiries()
		e.drain(t)
		if inquiries() > before {
			at = append(at, sec)
		}
	}
	is.Equal(at, []int{30, 60, 120, 240}) // the next is at 480 s
	got, err := e.svc.GetPaymentIntent(ctx, e.test, pi.ID)
	is.NoErr(err)
	is.Equal(got.Status, paykit.PaymentRequiresAction)

	e.provider.approve(pi.ID)
	e.clock.Advance(time.Second)
	e.drain(t)
	got, err = e.svc.GetPaymentIntent(ctx, e.test, pi.ID)
	is.NoErr(err)
	is.Equal(got.Status, paykit.PaymentSucceeded)
	is.Equal(inquiries(), 5)
}

func TestCreatePaymentIntentRequiresActionAndReplays(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	e := newFlowEnv(t)
	req := fpx(15000, "order-1")
	req.PaymentMethodOptions = map[string]string{"bank": "MAYBANK"}
	resp, err := answertest.From(e.svc.CreatePaymentIntent(ctx, e.test, "key-1", req))
	is.NoErr(err)
	is.Equal(resp.Status, 201)
	is.True(!resp.Replayed)
	body := decodeIntent(t, resp)
	is.Equal(body["status"], "requires_action")
	is.Equal(body["amount"], "15000")
	is.Equal(body["captured_amount"], "0")
	is.Equal(body["environment"], "test")
	na := body["next_action"].(map[string]any)
	is.Equal(na["type"], "redirect_to_url")
	is.True(strings.HasPrefix(na["url"].(string), "https://pay.example/pay/continue/"))
	is.True(!strings.Contains(string(resp.Body), "psp.invalid")) // the Provider's URL stays inside
	is.True(!strings.Contains(string(resp.Body), "MBB0228"))     // and so does its bank code
	id := body["id"].(string)
	is.Equal(e.provider.createCalls(id), 1)

	var typed paykit.PaymentIntent
	is.NoErr(resp.Decode(&typed)) // the Go API reads the same answer typed
	stored, err := e.svc.GetPaymentIntent(ctx, e.test, id)
	is.NoErr(err)
	is.Equal(typed.Status, stored.Status)
	is.Equal(typed.Amount, int64(15000))
	is.Equal(*typed.NextAction, *stored.NextAction)
	is.Equal(typed.ExpiresAt, stored.ExpiresAt)
	is.Equal(typed.ProviderURL, stored.ProviderURL) // the Go value is whole, internal fields included
	reencoded, err := httpadapter.Marshal(&typed)
	is.NoErr(err)
	is.Equal(string(reencoded), string(resp.Body)) // the API renders the Go value

	again, err := answertest.From(e.svc.CreatePaymentIntent(ctx, e.test, "key-1", req))
	is.NoErr(err)
	is.True(again.Replayed)
	is.Equal(string(again.Body), string(resp.Body)) // byte for byte
	is.Equal(e.provider.createCalls(id), 1)

	// Key order and map order do not matter; any changed field does.
	changed := req
	changed.Amount = 15001
	_, err = answertest.From(e.svc.CreatePaymentIntent(ctx, e.test, "key-1", changed))
	is.Equal(paykit.ErrorCode(err), paykit.CodeIdempotencyConflict)
	_, err = answertest.From(e.svc.CancelPaymentIntent(ctx, e.test, "key-1", id, paykit.CancelPaymentIntentRequest{}))
	is.Equal(paykit.ErrorCode(err), paykit.CodeIdempotencyConflict) // another endpoint

	// The same key in the live environment is a different key.
	_, err = answertest.From(e.svc.CreatePaymentIntent(ctx, e.live, "key-1", req))
	is.Equal(paykit.ErrorCode(err), paykit.CodePaymentMethodUnavailable) // live has no routes

	_, err = answertest.From(e.svc.CreatePaymentIntent(ctx, e.test, "key-2", req))
	is.Equal(paykit.ErrorCode(err), paykit.CodeDuplicateMerchantReference)
}

func TestCreatePaymentIntentRejectsBeforePersisting(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newFlowEnv(t)
	mod := func(f func(*paykit.CreatePaymentIntentRequest)) paykit.CreatePaymentIntentRequest {
		r := fpx(1000, "order-x")
		f(&r)
		return r
	}
	cases := []struct {
		name  string
		req   paykit.CreatePaymentIntentRequest
		code  string
		param string
	}{
		{"zero amount", mod(func(r *paykit.CreatePaymentIntentRequest) { r.Amount = 0 }), paykit.CodeInvalidRequest, "amount"},
		{"negative amount", mod(func(r *paykit.CreatePaymentIntentRequest) { r.Amount = -1050 }), paykit.CodeInvalidRequest, "amount"},
		{"amount over 18 digits", mod(func(r *paykit.CreatePaymentIntentRequest) { r.Amount = 1_000_000_000_000_000_000 }), paykit.CodeInvalidRequest, "amount"},
		{"lowercase currency", mod(func(r *paykit.CreatePaymentIntentRequest) { r.Currency = "myr" }), paykit.CodeInvalidRequest, "currency"},
		{"bad country", mod(func(r *paykit.CreatePaymentIntentRequest) { r.Country = "MYS" }), paykit.CodeInvalidRequest, "country"},
		{"no method", mod(func(r *paykit.CreatePaymentIntentRequest) { r.PaymentMethod = "" }), paykit.CodeInvalidRequest, "payment_method"},
		{"unknown method", mod(func(r *paykit.CreatePaymentIntentRequest) { r.PaymentMethod = "BITCOIN" }), paykit.CodeInvalidRequest, "payment_method"},
		{"no customer", mod(func(r *paykit.CreatePaymentIntentRequest) { r.Customer = nil }), paykit.CodeInvalidRequest, "customer"},
		{"long reference", mod(func(r *paykit.CreatePaymentIntentRequest) { r.MerchantReference = strings.Repeat("x", 257) }), paykit.CodeInvalidRequest, "merchant_reference"},
		{"bad return url", mod(func(r *paykit.CreatePaymentIntentRequest) { r.ReturnURL = "javascript:alert(1)" }), paykit.CodeInvalidRequest, "return_url"},
		{"bad email", mod(func(r *paykit.CreatePaymentIntentRequest) { r.Customer["email"] = "not-an-email" }), paykit.CodeInvalidRequest, "customer.email"},
		{"unknown option", mod(func(r *paykit.CreatePaymentIntentRequest) { r.PaymentMethodOptions = map[string]string{"issuer": "x"} }), paykit.CodeInvalidRequest, "payment_method_options.issuer"},
		{"provider bank code", mod(func(r *paykit.CreatePaymentIntentRequest) {
			r.PaymentMethodOptions = map[string]string{"bank": "MBB0228"}
		}), paykit.CodeInvalidRequest, "payment_method_options.bank"},
		{"unavailable bank", mod(func(r *paykit.CreatePaymentIntentRequest) { r.PaymentMethodOptions = map[string]string{"bank": "BSN"} }), paykit.CodePaymentMethodUnavailable, "payment_method_options.bank"},
		{"no route for method", mod(func(r *paykit.CreatePaymentIntentRequest) { r.PaymentMethod = "PROMPTPAY" }), paykit.CodePaymentMethodUnavailable, "payment_method"},
		{"no route for country", mod(func(r *paykit.CreatePaymentIntentRequest) { r.Country = "TH" }), paykit.CodePaymentMethodUnavailable, "payment_method"},
		{"over route maximum", mod(func(r *paykit.CreatePaymentIntentRequest) {
			r.PaymentMethod, r.Amount = "TNG", 500001
		}), paykit.CodePaymentMethodUnavailable, "payment_method"},
		{"missing email", mod(func(r *paykit.CreatePaymentIntentRequest) { delete(r.Customer, "email") }), paykit.CodeMissingRequiredField, "customer.email"},
		{"empty name", mod(func(r *paykit.CreatePaymentIntentRequest) { r.Customer["name"] = "" }), paykit.CodeMissingRequiredField, "customer.name"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			_, err := answertest.From(e.svc.CreatePaymentIntent(ctx, e.test, "reused-key", c.req))
			e := paykit.AsError(err)
			is.Equal(e.Code, c.code)
			is.Equal(e.Param, c.param)
		})
	}
	is := is.New(t)
	_, err := answertest.From(e.svc.CreatePaymentIntent(ctx, e.test, "bad key with spaces", fpx(1000, "order-x")))
	is.Equal(paykit.AsError(err).Param, "Idempotency-Key")
	// Nothing was stored, so the key works with a corrected request.
	page, err := e.svc.ListPaymentIntents(ctx, e.test, paykit.ListParams[paykit.PaymentStatus]{})
	is.NoErr(err)
	is.Equal(len(page.Data), 0)
	resp, err := answertest.From(e.svc.CreatePaymentIntent(ctx, e.test, "reused-key", fpx(1000, "order-x")))
	is.NoErr(err)
	is.Equal(resp.Status, 201)
}

func TestDeclinedAndUnknownOutcomes(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	e := newFlowEnv(t)
	declined, err := answertest.From(e.svc.CreatePaymentIntent(ctx, e.test, "k1", fpx(10901, "o1")))
	is.NoErr(err)
	body := decodeIntent(t, declined)
	is.Equal(declined.Status, 201)
	is.Equal(body["status"], "failed")
	is.Equal(body["failure_code"], "provider_declined")
	is.True(body["completed_at"] != nil)
	is.True(!strings.Contains(string(declined.Body), "LOCAL_DECLINE")) // Provider codes stay inside

	unknown, err := answertest.From(e.svc.CreatePaymentIntent(ctx, e.test, "k2", fpx(10902, "o2")))
	is.NoErr(err)
	body = decodeIntent(t, unknown)
	is.Equal(body["status"], "processing")
	is.Equal(body["next_action"], nil)
	id := body["id"].(string)

	// Reads never start Provider work.
	for range 3 {
		pi, err := e.svc.GetPaymentIntent(ctx, e.test, id)
		is.NoErr(err)
		is.Equal(pi.Status, paykit.PaymentProcessing)
	}
	e.clock.Advance(2 * time.Second)
	e.drain(t) // first inquiry: still pending
	pi, err := e.svc.GetPaymentIntent(ctx, e.test, id)
	is.NoErr(err)
	is.Equal(pi.Status, paykit.PaymentProcessing)
	e.clock.Advance(5 * time.Second)
	e.drain(t)
	pi, err = e.svc.GetPaymentIntent(ctx, e.test, id)
	is.NoErr(err)
	is.Equal(pi.Status, paykit.PaymentSucceeded)
	is.Equal(pi.CapturedAmount(), int64(10902))
	is.Equal(pi.Receipt.Amount, int64(10902))
	is.Equal(e.provider.createCalls(id), 1)

	// The stored answer stays the first one.
	replay, err := answertest.From(e.svc.CreatePaymentIntent(ctx, e.test, "k2", fpx(10902, "o2")))
	is.NoErr(err)
	is.Equal(string(replay.Body), string(unknown.Body))
}

func TestCrashedRequestResumesTheSameAttempt(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	for _, via := range []string{"retry", "worker"} {
		t.Run(via, func(t *testing.T) {
			e := newFlowEnv(t)
			die := e.hang(t, func(hung context.Context) {
				_, _ = answertest.From(e.svc.CreatePaymentIntent(hung, e.test, "crash-key", fpx(5000, "o-crash")))
			}, func() bool {
				page, _ := e.svc.ListPaymentIntents(ctx, e.test, paykit.ListParams[paykit.PaymentStatus]{})
				return len(page.Data) == 1
			})
			_, err := answertest.From(e.svc.CreatePaymentIntent(ctx, e.test, "crash-key", fpx(5000, "o-crash")))
			is.Equal(paykit.ErrorCode(err), paykit.CodeIdempotencyInProgress)
			is.True(paykit.AsError(err).RetryAfter > 0)
			die()

			page, _ := e.svc.ListPaymentIntents(ctx, e.test, paykit.ListParams[paykit.PaymentStatus]{})
			id := page.Data[0].ID
			is.Equal(page.Data[0].Status, paykit.PaymentProcessing) // persisted, outcome unknown
			e.clock.Advance(31 * time.Second)                       // the request's lock expires
			if via == "worker" {
				e.drain(t)
			}
			resp, err := answertest.From(e.svc.CreatePaymentIntent(ctx, e.test, "crash-key", fpx(5000, "o-crash")))
			is.NoErr(err)
			is.Equal(resp.Replayed, via == "worker")
			is.Equal(decodeIntent(t, resp)["status"], "requires_action")
			is.Equal(decodeIntent(t, resp)["id"], id)
			is.Equal(e.provider.createCalls(id), 2) // the same key twice: still one attempt at the Provider
			is.Equal(len(e.provider.attempts), 1)
		})
	}
}

func TestConcurrentIdenticalCreates(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	e := newFlowEnv(t)
	created := sameKeyAnswers(t, 50, func() (*answertest.Response, error) {
		return answertest.From(e.svc.CreatePaymentIntent(ctx, e.test, "same-key", fpx(7000, "o-same")))
	})
	is.True(created >= 1)
	page, err := e.svc.ListPaymentIntents(ctx, e.test, paykit.ListParams[paykit.PaymentStatus]{})
	is.NoErr(err)
	is.Equal(len(page.Data), 1)
	is.Equal(len(e.provider.attempts), 1)
	is.Equal(e.provider.createCalls(page.Data[0].ID), 1)
}

// sameKeyAnswers runs n creates at once and checks that each answered
// idempotency_in_progress or the one body all others answered; it returns
// how many answered the body.
func sameKeyAnswers(t *testing.T, n int, create func() (*answertest.Response, error)) int {
	t.Helper()
	var wg sync.WaitGroup
	bodies := make([]string, n)
	codes := make([]string, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := create()
			if err != nil {
				codes[i] = paykit.ErrorCode(err)
				return
			}
			bodies[i] = string(resp.Body)
		}()
	}
	wg.Wait()
	var first string
	created := 0
	for i := range n {
		if codes[i] != "" {
			if codes[i] != paykit.CodeIdempotencyInProgress {
				t.Errorf("answer %d: %s", i, codes[i])
			}
			continue
		}
		created++
		if first == "" {
			first = bodies[i]
		}
		if bodies[i] != first {
			t.Errorf("answer %d differs:\n%s\n%s", i, bodies[i], first)
		}
	}
	return created
}

func TestCancelPaymentIntent(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	e := newFlowEnv(t)
	resp, err := answertest.From(e.svc.CreatePaymentIntent(ctx, e.test, "c1", fpx(3000, "o-cancel")))
	is.NoErr(err)
	id := decodeIntent(t, resp)["id"].(string)

	cancel, err := answertest.From(e.svc.CancelPaymentIntent(ctx, e.test, "cancel-1", id, paykit.CancelPaymentIntentRequest{Reason: "customer left"}))
	is.NoErr(err)
	is.Equal(cancel.Status, 202)
	is.Equal(decodeIntent(t, cancel)["status"], "requires_action") // waits for the Provider
	e.drain(t)
	pi, err := e.svc.GetPaymentIntent(ctx, e.test, id)
	is.NoErr(err)
	is.Equal(pi.Status, paykit.PaymentCancelled)

	replay, err := answertest.From(e.svc.CancelPaymentIntent(ctx, e.test, "cancel-1", id, paykit.CancelPaymentIntentRequest{Reason: "customer left"}))
	is.NoErr(err)
	is.True(replay.Replayed)
	_, err = answertest.From(e.svc.CancelPaymentIntent(ctx, e.test, "cancel-2", id, paykit.CancelPaymentIntentRequest{}))
	is.Equal(paykit.ErrorCode(err), paykit.CodeInvalidState)
	_, err = answertest.From(e.svc.CancelPaymentIntent(ctx, e.test, "cancel-3", "pi_unknown", paykit.CancelPaymentIntentRequest{}))
	is.Equal(paykit.ErrorCode(err), paykit.CodeNotFound)
	_, err = answertest.From(e.svc.CancelPaymentIntent(ctx, e.live, "cancel-4", id, paykit.CancelPaymentIntentRequest{}))
	is.Equal(paykit.ErrorCode(err), paykit.CodeNotFound) // another environment's intent

	// A payer who paid before the cancel reached the Provider wins.
	resp, err = answertest.From(e.svc.CreatePaymentIntent(ctx, e.test, "c2", fpx(3000, "o-paid")))
	is.NoErr(err)
	paid := decodeIntent(t, resp)["id"].(string)
	e.provider.approve(paid)
	_, err = answertest.From(e.svc.CancelPaymentIntent(ctx, e.test, "cancel-5", paid, paykit.CancelPaymentIntentRequest{}))
	is.NoErr(err)
	e.drain(t)
	pi, err = e.svc.GetPaymentIntent(ctx, e.test, paid)
	is.NoErr(err)
	is.Equal(pi.Status, paykit.PaymentSucceeded)
}

func TestAbandonedPaymentExpires(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	e := newFlowEnv(t)
	resp, err := answertest.From(e.svc.CreatePaymentIntent(ctx, e.test, "e1", fpx(3000, "o-expire")))
	is.NoErr(err)
	id := decodeIntent(t, resp)["id"].(string)
	e.clock.Advance(29 * time.Minute)
	e.drain(t)
	pi, err := e.svc.GetPaymentIntent(ctx, e.test, id)
	is.NoErr(err)
	is.Equal(pi.Status, paykit.PaymentRequiresAction)
	e.clock.Advance(2 * time.Minute)
	e.drain(t)
	pi, err = e.svc.GetPaymentIntent(ctx, e.test, id)
	is.NoErr(err)
	is.Equal(pi.Status, paykit.PaymentExpired)
	is.Equal(pi.FailureCode, paykit.FailureExpired)
}

// hang runs request as a request that hangs in the Provider call, once
// inCall says it is there, and returns what makes it die (its context
// ends) and waits for it.
func (e *flowEnv) hang(t *testing.T, request func(ctx context.Context), inCall func() bool) (die func()) {
	t.Helper()
	e.provider.block = make(chan struct{})
	hung, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		request(hung)
	}()
	waitFor(t, inCall)
	return func() {
		stop()
		<-done
		e.provider.block = nil
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met in 5s")
		}
		time.Sleep(time.Millisecond)
	}
}

func TestListPaymentMethods(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	e := newFlowEnv(t)
	page, err := e.svc.ListPaymentMethods(ctx, e.test, paykit.PaymentMethodsRequest{Amount: 600000, Currency: "MYR", Country: "MY"})
	is.NoErr(err)
	b, err := httpadapter.Marshal(page)
	is.NoErr(err)
	// TNG is over its maximum at this amount; the unavailable bank is listed as such.
	is.Equal(string(b), `{"object":"list","data":[{"object":"payment_method","payment_method":"FPX","next_action_type":"redirect_to_url",`+
		`"required_customer_fields":["name","email"],"banks":[{"code":"MAYBANK","name":"Maybank2u","available":true},`+
		`{"code":"BSN","name":"BSN","available":false}]}],"has_more":false,"next_cursor":null}`)

	page, err = e.svc.ListPaymentMethods(ctx, e.test, paykit.PaymentMethodsRequest{Amount: 1000, Currency: "MYR", Country: "MY"})
	is.NoErr(err)
	is.Equal(len(page.Data), 2)
	is.Equal(page.Data[1].Method, "TNG")
	b, _ = json.Marshal(page.Data[1])
	is.True(!strings.Contains(string(b), "banks")) // no bank choice, no banks field

	page, err = e.svc.ListPaymentMethods(ctx, e.live, paykit.PaymentMethodsRequest{Amount: 1000, Currency: "MYR", Country: "MY"})
	is.NoErr(err)
	is.Equal(len(page.Data), 0) // live has no routes
	_, err = e.svc.ListPaymentMethods(ctx, e.test, paykit.PaymentMethodsRequest{Amount: 1000, Currency: "MYR"})
	is.Equal(paykit.AsError(err).Param, "country")
}

func TestPayerLinks(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	e := newFlowEnv(t)
	req := fpx(4000, "o-links")
	req.ReturnURL = "https://shop.example/done?order=7"
	resp, err := answertest.From(e.svc.CreatePaymentIntent(ctx, e.test, "l1", req))
	is.NoErr(err)
	body := decodeIntent(t, resp)
	id := body["id"].(string)
	link := body["next_action"].(map[string]any)["url"].(string)
	token := strings.TrimPrefix(link, "https://pay.example/pay/continue/")

	target, err := e.svc.ContinuePayment(ctx, token)
	is.NoErr(err)
	is.Equal(target, "https://psp.invalid/pay/"+id)
	for _, bad := range []string{token[:len(token)-2] + "xx", "x" + token, "", strings.Replace(token, ".", "..", 1)} {
		_, err := e.svc.ContinuePayment(ctx, bad)
		is.Equal(err, paykit.ErrLinkInvalid)
	}
	_, _, err = e.svc.PaymentReturn(ctx, token) // a continuation token is no return token
	is.Equal(err, paykit.ErrLinkInvalid)

	// The Provider sends the payer back to the return link it was given.
	e.provider.approve(id)
	pi, _ := e.svc.GetPaymentIntent(ctx, e.test, id)
	is.Equal(pi.Status, paykit.PaymentRequiresAction)
	returnToken := e.provider.lastReturnToken(t)
	_, dest, err := e.svc.PaymentReturn(ctx, returnToken)
	is.NoErr(err)
	is.Equal(dest, "https://shop.example/done?order=7&payment_intent="+id)
	e.drain(t) // the return scheduled an inquiry at once
	pi, _ = e.svc.GetPaymentIntent(ctx, e.test, id)
	is.Equal(pi.Status, paykit.PaymentSucceeded)
	_, err = e.svc.ContinuePayment(ctx, token)
	is.Equal(err, paykit.ErrLinkInvalid) // nothing left to continue

	// Links expire with the intent.
	resp, err = answertest.From(e.svc.CreatePaymentIntent(ctx, e.test, "l2", fpx(4000, "o-links-2")))
	is.NoErr(err)
	link = decodeIntent(t, resp)["next_action"].(map[string]any)["url"].(string)
	e.clock.Advance(31 * time.Minute)
	_, err = e.svc.ContinuePayment(ctx, strings.TrimPrefix(link, "https://pay.example/pay/continue/"))
	is.Equal(err, paykit.ErrLinkInvalid)
}
