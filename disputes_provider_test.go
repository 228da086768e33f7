package paykit_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/keyring"
	"github.com/paykit/paykit/paykittest"
	"github.com/paykit/paykit/provider/stripe"
	"github.com/paykit/paykit/provider/stripe/stripefake"
	"github.com/paykit/paykit/store/storetest"
)

// stripeName is the Provider name of the Stripe adapter in these tests.
const stripeName = "stripe_my"

// failOnce stands between the Stripe adapter and stripefake: it answers
// the first request to one method and path with Stripe's 500 api_error,
// and counts the requests to it.
type failOnce struct {
	next http.Handler
	mu   sync.Mutex
	// target is "METHOD /path" ("" fails nothing); armed while the
	// failure is still to come.
	target string
	armed  bool
	hits   int
}

func (f *failOnce) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	hit := f.target != "" && r.Method+" "+r.URL.Path == f.target
	if hit {
		f.hits++
	}
	fail := hit && f.armed
	f.armed = f.armed && !fail
	f.mu.Unlock()
	if fail {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = io.WriteString(w, `{"error":{"type":"api_error","message":"An unknown error occurred."}}`)
		return
	}
	f.next.ServeHTTP(w, r)
}

// failNext arms f to fail the next request to method and path.
func (f *failOnce) failNext(method, path string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.target, f.armed, f.hits = method+" "+path, true, 0
}

// requests is how many requests reached the armed method and path.
func (f *failOnce) requests() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.hits
}

// stripeEnv is a Service on one Store whose one Provider is the Stripe
// adapter, calling stripefake over HTTP; the Service, the adapter and the
// fake share a ManualClock. The fake posts no webhooks: the test hands
// them to HandleProviderCallback itself.
type stripeEnv struct {
	svc     *paykit.Service
	store   paykit.Store
	clock   *paykit.ManualClock
	fake    *stripefake.Fake
	fault   *failOnce
	api     string // the fake's URL
	adapter *stripe.Provider
	p       paykit.Principal
}

func newStripeEnv(t *testing.T, kind paykittest.StoreKind) *stripeEnv {
	t.Helper()
	e := &stripeEnv{store: paykittest.OpenStore(t, kind), clock: paykit.NewManualClock(paykittest.Start),
		p: paykit.Principal{Scope: paykit.Scope{MerchantID: "mch_1", Environment: paykit.Test}}}
	e.fake = stripefake.New(stripefake.Options{SecretKey: "sk_test_disputes", AccountCountry: "MY",
		WebhookSecret: "whsec_disputes", Now: e.clock.Now})
	e.fault = &failOnce{next: e.fake}
	srv := httptest.NewServer(e.fault)
	t.Cleanup(srv.Close)
	e.api = srv.URL
	var err error
	e.adapter, err = stripe.New(stripe.Config{SecretKey: "sk_test_disputes", WebhookSecrets: []string{"whsec_disputes"},
		BaseURL: srv.URL, AccountCountry: "MY", Timeout: 5 * time.Second, Now: e.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	route, ok := stripe.Route("FPX", "MY")
	if !ok {
		t.Fatal("stripe serves no FPX in MY")
	}
	route.Environment, route.Provider = paykit.Test, stripeName
	e.svc, err = paykit.New(paykit.Config{
		Store: e.store, Now: e.clock.Now, Routing: paykit.Routing{Payments: []paykit.PaymentRoute{route}},
		Providers: map[string]paykit.Provider{stripeName: e.adapter}, PublicURL: "https://pay.example",
		AccountKeys: keyring.Random(), SigningKey: paykittest.SigningKey, Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.store.CreateMerchant(context.Background(), &paykit.Merchant{ID: "mch_1", Name: "One", CreatedAt: e.clock.Now()}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { storetest.CheckLedger(t, e.store, e.p.Scope) })
	return e
}

// webhook hands paykit the Stripe event of eventType about the current
// state of the object under key (stripefake.Webhook), signed.
func (e *stripeEnv) webhook(t *testing.T, eventType, key string) {
	t.Helper()
	r, err := e.fake.Webhook(eventType, key)
	if err != nil {
		t.Fatalf("%s: %v", eventType, err)
	}
	if err := e.svc.HandleProviderCallback(context.Background(), stripeName, r); err != nil {
		t.Fatalf("%s: %v", eventType, err)
	}
}

// paid is an FPX payment of amount that the payer paid at Stripe, as
// its payment_intent.succeeded webhook reported.
func (e *stripeEnv) paid(t *testing.T, amount int64, ref string) *paykit.PaymentIntent {
	t.Helper()
	is := is.New(t)
	ctx := context.Background()
	pi, _, err := e.svc.CreatePaymentIntent(ctx, e.p, "pi-"+ref, paykit.CreatePaymentIntentRequest{
		Amount: amount, Currency: "MYR", Country: "MY", MerchantReference: ref, PaymentMethod: "FPX",
		PaymentMethodOptions: map[string]string{"bank": "MAYBANK"}, Customer: map[string]string{"name": "Aisyah", "email": "aisyah@example.com"},
	})
	if err != nil {
		t.Fatal(err)
	}
	is.Equal(pi.Status, paykit.PaymentRequiresAction)
	if err := e.fake.Approve(pi.ID); err != nil {
		t.Fatal(err)
	}
	e.webhook(t, "payment_intent.succeeded", pi.ID)
	if pi, err = e.svc.GetPaymentIntent(ctx, e.p, pi.ID); err != nil {
		t.Fatal(err)
	}
	is.Equal(pi.Status, paykit.PaymentSucceeded)
	return pi
}

// disputes are the disputes of payment intent pi.
func (e *stripeEnv) disputes(t *testing.T, pi string) []paykit.Dispute {
	t.Helper()
	page, err := e.svc.ListDisputes(context.Background(), e.p, paykit.DisputeListParams{PaymentIntent: pi})
	if err != nil {
		t.Fatal(err)
	}
	return page.Data
}

// dispute is the dispute id as paykit has it.
func (e *stripeEnv) dispute(t *testing.T, id string) *paykit.Dispute {
	t.Helper()
	d, err := e.svc.GetDispute(context.Background(), e.p, id)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// payment is payment intent id as paykit has it.
func (e *stripeEnv) payment(t *testing.T, id string) *paykit.PaymentIntent {
	t.Helper()
	pi, err := e.svc.GetPaymentIntent(context.Background(), e.p, id)
	if err != nil {
		t.Fatal(err)
	}
	return pi
}

// myr is the MYR balance: available, pending, reserved.
func (e *stripeEnv) myr(t *testing.T) [3]int64 {
	t.Helper()
	b, err := e.store.GetBalance(context.Background(), e.p.Scope, "MYR")
	if err != nil {
		t.Fatal(err)
	}
	return [3]int64{b.Available, b.Pending, b.Reserved}
}

// txns are the balance transactions of source, newest first.
func (e *stripeEnv) txns(t *testing.T, source string) []paykit.BalanceTransaction {
	t.Helper()
	page, err := e.svc.ListBalanceTransactions(context.Background(), e.p, paykit.BalanceTransactionListParams{Source: source})
	if err != nil {
		t.Fatal(err)
	}
	return page.Data
}

// disputeEvents are the types of the dispute events, about any dispute,
// oldest first.
func (e *stripeEnv) disputeEvents(t *testing.T) []string {
	t.Helper()
	page, err := e.svc.ListEvents(context.Background(), e.p, paykit.EventListParams{
		Types: []string{paykit.EventDisputeCreated, paykit.EventDisputeUpdated, paykit.EventDisputeWon, paykit.EventDisputeLost}})
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, ev := range slices.Backward(page.Data) {
		types = append(types, ev.Type)
	}
	return types
}

// atFake is the dispute ref as stripefake holds it.
func (e *stripeEnv) atFake(t *testing.T, ref string) map[string]any {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, e.api+"/v1/disputes/"+ref, nil)
	req.Header.Set("Authorization", "Bearer sk_test_disputes")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var d map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&d); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET dispute %s: %d %v", ref, resp.StatusCode, err)
	}
	return d
}

// run runs the worker until nothing is due.
func (e *stripeEnv) run(t *testing.T) {
	t.Helper()
	for range 20 {
		n, err := e.svc.ProcessDue(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			return
		}
	}
	t.Fatal("the worker keeps finding due jobs")
}

// TestStripeDisputeWebhooks: a dispute Stripe opens reaches paykit by its
// signed webhook, with Stripe's amount, reason, deadline and fee; the
// same event again, and the other events about it, change nothing; its
// review and Stripe's decision come by webhook too. The payment's funds
// became available at Stripe's available_on, through the settle job.
func TestStripeDisputeWebhooks(t *testing.T) {
	t.Parallel()
	for _, kind := range paykittest.Stores {
		t.Run(string(kind), func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			ctx := context.Background()
			e := newStripeEnv(t, kind)

			// Stripe keeps 3 % (its fee schedule in the fake) and pays the
			// rest at 00:00 UTC three days later.
			pi := e.paid(t, 10000, "order-1")
			fee, ok := e.fake.Fee(pi.ID)
			is.True(ok)
			is.Equal(pi.Fee, fee)
			is.Equal(fee, int64(300))
			is.Equal(e.myr(t), [3]int64{0, 9700, 0})
			bt := e.txns(t, pi.ID)[0]
			availableOn := time.Date(2026, 6, 4, 0, 0, 0, 0, time.UTC)
			is.Equal([3]any{bt.Status, bt.Fee, bt.AvailableOn}, [3]any{paykit.BalanceTxnPending, int64(300), availableOn})
			e.clock.Set(availableOn.Add(-time.Millisecond))
			e.run(t)
			is.Equal(e.myr(t), [3]int64{0, 9700, 0})
			e.clock.Set(availableOn)
			e.run(t)
			is.Equal(e.myr(t), [3]int64{9700, 0, 0})

			// The payer's bank disputes 4000; Stripe's webhook tells paykit.
			ref, err := e.fake.OpenDispute(pi.ID, 4000, "product_unacceptable")
			is.NoErr(err)
			e.webhook(t, "charge.dispute.created", pi.ID)
			ds := e.disputes(t, pi.ID)
			is.Equal(len(ds), 1)
			d := ds[0]
			is.Equal(d.Status, paykit.DisputeNeedsResponse)
			is.Equal([4]any{d.Amount, d.Currency, d.Fee, d.Reason}, [4]any{int64(4000), "MYR", int64(stripefake.DisputeFee), paykit.DisputeProductUnacceptable})
			is.Equal(d.ProviderRef, ref)
			is.True(d.EvidenceDueBy.Equal(availableOn.Add(7 * 24 * time.Hour))) // Stripe's due_by
			is.Equal(e.myr(t), [3]int64{9700 - 4000 - 1500, 0, 0})
			is.Equal(e.payment(t, pi.ID).DisputedAmount, int64(4000))

			// The same event again, then four times at once, and the
			// funds_withdrawn event about the same dispute: one dispute, one
			// balance transaction, one event.
			e.webhook(t, "charge.dispute.created", pi.ID)
			var wg sync.WaitGroup
			errs := make([]error, 4)
			for i := range errs {
				r, err := e.fake.Webhook("charge.dispute.created", pi.ID)
				is.NoErr(err)
				wg.Go(func() { errs[i] = e.svc.HandleProviderCallback(ctx, stripeName, r) })
			}
			wg.Wait()
			is.Equal(errs, make([]error, 4))
			e.webhook(t, "charge.dispute.funds_withdrawn", pi.ID)
			is.Equal(len(e.disputes(t, pi.ID)), 1)
			bts := e.txns(t, d.ID)
			is.Equal(len(bts), 1)
			is.Equal([4]any{bts[0].Type, bts[0].Amount, bts[0].Fee, bts[0].Net}, [4]any{paykit.BalanceTxnDispute, int64(-4000), int64(1500), int64(-5500)})
			is.Equal(e.disputeEvents(t), []string{paykit.EventDisputeCreated})
			is.Equal(e.myr(t), [3]int64{4200, 0, 0})
			is.Equal(e.payment(t, pi.ID).DisputedAmount, int64(4000))

			// A payment with an open dispute cannot be refunded.
			_, _, err = e.svc.CreateRefund(ctx, e.p, "re-1", paykit.CreateRefundRequest{PaymentIntent: pi.ID, MerchantReference: "re-1", Amount: 1000})
			is.Equal(paykit.ErrorCode(err), paykit.CodeInvalidState)

			// The merchant answers at Stripe, outside paykit: the webhook
			// puts it under review, and the deadline no longer loses it.
			req, _ := http.NewRequest(http.MethodPost, e.api+"/v1/disputes/"+ref, strings.NewReader("evidence%5Buncategorized_text%5D=receipt+attached"))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.Header.Set("Authorization", "Bearer sk_test_disputes")
			resp, err := http.DefaultClient.Do(req)
			is.NoErr(err)
			resp.Body.Close()
			is.Equal(resp.StatusCode, http.StatusOK)
			e.webhook(t, "charge.dispute.updated", pi.ID)
			is.Equal(e.dispute(t, d.ID).Status, paykit.DisputeUnderReview)
			e.clock.Set(d.EvidenceDueBy.Add(time.Hour))
			e.run(t)
			is.Equal(e.dispute(t, d.ID).Status, paykit.DisputeUnderReview)

			// The bank decides for the merchant: the amount comes back, the
			// fee does not. The closing events repeat nothing.
			is.NoErr(e.fake.DecideDispute(ref, true))
			e.webhook(t, "charge.dispute.funds_reinstated", pi.ID)
			e.webhook(t, "charge.dispute.closed", pi.ID)
			e.webhook(t, "charge.dispute.closed", pi.ID)
			d = *e.dispute(t, d.ID)
			is.Equal(d.Status, paykit.DisputeWon)
			is.True(d.ClosedAt != nil)
			bts = e.txns(t, d.ID)
			is.Equal(len(bts), 2)
			is.Equal([3]any{bts[0].Type, bts[0].Amount, bts[0].Net}, [3]any{paykit.BalanceTxnDisputeReversal, int64(4000), int64(4000)})
			is.Equal(e.myr(t), [3]int64{8200, 0, 0})
			is.Equal(e.payment(t, pi.ID).DisputedAmount, int64(0))
			is.Equal(e.disputeEvents(t), []string{paykit.EventDisputeCreated, paykit.EventDisputeUpdated, paykit.EventDisputeWon})
		})
	}
}

// TestStripeDisputeOfAnUnknownPayment: webhooks about a payment paykit
// never made (another integration on the same Stripe account) are
// acknowledged and change nothing.
func TestStripeDisputeOfAnUnknownPayment(t *testing.T) {
	t.Parallel()
	for _, kind := range paykittest.Stores {
		t.Run(string(kind), func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			ctx := context.Background()
			e := newStripeEnv(t, kind)
			r := e.adapter.CreatePayment(ctx, paykit.PaymentRequest{Key: "pi_elsewhere", Amount: 5000, Currency: "MYR", Country: "MY",
				Method: "FPX", Options: map[string]string{"bank": "maybank2u"}, ReturnURL: "https://shop.example/return"})
			is.Equal(r.Outcome, paykit.OutcomeRequiresAction)
			is.NoErr(e.fake.Approve("pi_elsewhere"))
			_, err := e.fake.OpenDispute("pi_elsewhere", 0, "fraudulent")
			is.NoErr(err)

			e.webhook(t, "payment_intent.succeeded", "pi_elsewhere")
			e.webhook(t, "charge.dispute.created", "pi_elsewhere")
			e.webhook(t, "charge.dispute.funds_withdrawn", "pi_elsewhere")
			page, err := e.svc.ListDisputes(ctx, e.p, paykit.DisputeListParams{})
			is.NoErr(err)
			is.Equal(len(page.Data), 0)
			events, err := e.svc.ListEvents(ctx, e.p, paykit.EventListParams{})
			is.NoErr(err)
			is.Equal(len(events.Data), 0)
			is.Equal(e.myr(t), [3]int64{0, 0, 0})
		})
	}
}

// TestStripeDisputeDeadline: a dispute that still needs a response at
// Stripe's evidence deadline is lost, and only then; the disputed amount
// stays with the payer.
func TestStripeDisputeDeadline(t *testing.T) {
	t.Parallel()
	for _, kind := range paykittest.Stores {
		t.Run(string(kind), func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			e := newStripeEnv(t, kind)
			pi := e.paid(t, 20000, "order-1")
			_, err := e.fake.OpenDispute(pi.ID, 0, "credit_not_processed")
			is.NoErr(err)
			e.webhook(t, "charge.dispute.created", pi.ID)
			d := e.disputes(t, pi.ID)[0]
			is.Equal([3]any{d.Amount, d.Reason, d.Status}, [3]any{int64(20000), paykit.DisputeCreditNotProcessed, paykit.DisputeNeedsResponse})
			is.True(d.EvidenceDueBy.Equal(paykittest.Start.Add(7 * 24 * time.Hour)))

			e.clock.Set(d.EvidenceDueBy.Add(-time.Millisecond))
			e.run(t)
			is.Equal(e.dispute(t, d.ID).Status, paykit.DisputeNeedsResponse)
			e.clock.Set(d.EvidenceDueBy)
			e.run(t)
			got := e.dispute(t, d.ID)
			is.Equal(got.Status, paykit.DisputeLost)
			is.True(got.ClosedAt.Equal(d.EvidenceDueBy))
			is.Equal(len(e.txns(t, d.ID)), 1) // a lost dispute moves nothing more
			is.Equal(e.payment(t, pi.ID).DisputedAmount, int64(20000))
			// The payment's funds settled at Stripe's date meanwhile:
			// 20000 less the 600 fee, less the dispute and its fee.
			is.Equal(e.myr(t), [3]int64{19400 - 20000 - 1500, 0, 0})
			is.Equal(e.disputeEvents(t), []string{paykit.EventDisputeCreated, paykit.EventDisputeLost})
		})
	}
}

// TestStripeDisputeSubmitRetried: evidence submitted through paykit goes
// to Stripe in a job; when Stripe answers 500, the job is tried again on
// its backoff, and Stripe's decision on the evidence is applied.
func TestStripeDisputeSubmitRetried(t *testing.T) {
	t.Parallel()
	for _, kind := range paykittest.Stores {
		t.Run(string(kind), func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			ctx := context.Background()
			e := newStripeEnv(t, kind)
			pi := e.paid(t, 10000, "order-1")
			ref, err := e.fake.OpenDispute(pi.ID, 2500, "fraudulent")
			is.NoErr(err)
			e.webhook(t, "charge.dispute.created", pi.ID)
			d := e.disputes(t, pi.ID)[0]

			e.fault.failNext(http.MethodPost, "/v1/disputes/"+ref)
			text := "Signed delivery receipt; winning_evidence"
			got, _, err := e.svc.SubmitDisputeEvidence(ctx, e.p, "ev-1", d.ID, paykit.DisputeEvidenceRequest{Text: text, Submit: true})
			is.NoErr(err)
			is.Equal(got.Status, paykit.DisputeUnderReview)
			e.run(t)
			is.Equal(e.fault.requests(), 1) // answered 500
			jobs, err := e.svc.ListJobs(ctx, paykit.JobListParams{Kind: "dispute.submit", State: paykit.JobRetrying})
			is.NoErr(err)
			is.Equal(len(jobs.Data), 1)
			is.Equal(jobs.Data[0].Attempts, 1)
			is.Equal(e.atFake(t, ref)["status"], "needs_response")
			is.Equal(e.dispute(t, d.ID).Status, paykit.DisputeUnderReview)

			// Not before its backoff (at most a second for a first retry).
			e.run(t)
			is.Equal(e.fault.requests(), 1)
			e.clock.Advance(time.Second)
			e.run(t)
			is.Equal(e.fault.requests(), 2)
			at := e.atFake(t, ref)
			is.Equal(at["evidence"].(map[string]any)["uncategorized_text"], text)
			is.Equal(at["status"], "won")
			got = e.dispute(t, d.ID)
			is.Equal(got.Status, paykit.DisputeWon)
			is.Equal(got.Evidence, text)
			bts := e.txns(t, d.ID)
			is.Equal(len(bts), 2)
			is.Equal(bts[0].Type, paykit.BalanceTxnDisputeReversal)
			is.Equal(e.disputeEvents(t), []string{paykit.EventDisputeCreated, paykit.EventDisputeUpdated, paykit.EventDisputeWon})
			jobs, err = e.svc.ListJobs(ctx, paykit.JobListParams{Kind: "dispute.submit"})
			is.NoErr(err)
			is.Equal(len(jobs.Data), 0) // done
		})
	}
}
