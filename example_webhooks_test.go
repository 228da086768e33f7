package paykit_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/store/memory"
)

// A merchant registers its own endpoint for the event types it wants; the
// Service delivers them signed (Standard Webhooks) with no HTTP adapter
// mounted. The secret is shown on create and on rotation only.
func ExampleService_CreateMerchantWebhookEndpoint() {
	e := newExample(memory.New(), paykit.Config{})
	defer e.close()
	ctx := context.Background()

	got := make(chan string, 10)
	var secret string
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		wh, _ := standardwebhooks.NewWebhook(secret)
		var ev struct{ Type string }
		_ = json.Unmarshal(body, &ev)
		got <- fmt.Sprint(ev.Type, " signed: ", wh.Verify(body, r.Header) == nil)
		w.WriteHeader(http.StatusNoContent)
	}))
	defer hook.Close()

	created, answer, err := e.svc.CreateMerchantWebhookEndpoint(ctx, e.p, "hook-1", paykit.CreateMerchantWebhookEndpointRequest{
		URL: hook.URL, EnabledEvents: []string{paykit.EventPaymentRequiresAction}, Description: "orders",
	})
	if err != nil {
		panic(err)
	}
	secret = created.Secret
	fmt.Println(answer.Kind, created.Endpoint.Status, created.Endpoint.EnabledEvents)

	e.order("order-9")
	e.drain() // the worker's job: Service.Run does it in a host
	fmt.Println(<-got)

	page, _ := e.svc.ListMerchantWebhookEndpoints(ctx, e.p, paykit.PageParams{})
	fmt.Println(len(page.Data), page.Data[0].Description)
	// Output:
	// created enabled [payment_intent.requires_action]
	// payment_intent.requires_action signed: true
	// 1 orders
}

// receiver is a merchant's webhook endpoint on a loopback server: it keeps
// every delivery and answers each with status (204 unless set).
type receiver struct {
	*httptest.Server
	mu     sync.Mutex
	status int
	got    []delivery
}

// delivery is one webhook request a receiver got.
type delivery struct {
	Type   string
	body   []byte
	header http.Header
}

func newReceiver() *receiver {
	rc := &receiver{status: http.StatusNoContent}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		d := delivery{body: body, header: r.Header.Clone()}
		_ = json.Unmarshal(body, &d)
		rc.mu.Lock()
		rc.got = append(rc.got, d)
		status := rc.status
		rc.mu.Unlock()
		w.WriteHeader(status)
	}))
	return rc
}

// answer makes the receiver answer status from now on.
func (rc *receiver) answer(status int) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.status = status
}

// take returns the deliveries received since the last take.
func (rc *receiver) take() []delivery {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	got := rc.got
	rc.got = nil
	return got
}

// signedBy reports whether d carries a valid signature by secret.
func (d delivery) signedBy(secret string) bool {
	wh, err := standardwebhooks.NewWebhook(secret)
	return err == nil && wh.Verify(d.body, d.header) == nil
}

// hook starts a receiver that answers status, closed with e, and
// registers it as the merchant's endpoint "orders".
func (e *exampleEnv) hook(status int) (*receiver, *paykit.NewWebhookSecret) {
	rc := newReceiver()
	e.closers = append(e.closers, rc.Close)
	rc.answer(status)
	return rc, e.endpoint(rc.URL, "orders")
}

// endpoint registers a merchant endpoint for url through the merchant's
// Go API.
func (e *exampleEnv) endpoint(url, description string, events ...string) *paykit.NewWebhookSecret {
	created, _, err := e.svc.CreateMerchantWebhookEndpoint(context.Background(), e.p, "hook-"+description,
		paykit.CreateMerchantWebhookEndpointRequest{URL: url, EnabledEvents: events, Description: description})
	if err != nil {
		panic(err)
	}
	return created
}

// An operator registers an endpoint for a merchant's test events; in live
// only public https URLs are allowed.
func ExampleService_CreateWebhookEndpoint() {
	e := newExample(memory.New(), paykit.Config{})
	defer e.close()
	ctx := context.Background()
	rc := newReceiver()
	defer rc.Close()

	created, err := e.svc.CreateWebhookEndpoint(ctx, "ops:alice", e.p.MerchantID, paykit.CreateWebhookEndpointRequest{
		Environment: "test", URL: rc.URL,
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(created.Endpoint.Status, created.Endpoint.EnabledEvents, strings.HasPrefix(created.Secret, "whsec_"))

	e.order("order-80")
	e.drain()
	for _, d := range rc.take() {
		fmt.Println(d.Type, "signed:", d.signedBy(created.Secret))
	}

	_, err = e.svc.CreateWebhookEndpoint(ctx, "ops:alice", e.p.MerchantID, paykit.CreateWebhookEndpointRequest{
		Environment: "live", URL: rc.URL,
	})
	fmt.Println(paykit.ErrorCode(err))
	// Output:
	// enabled [*] true
	// payment_intent.requires_action signed: true
	// invalid_request
}

// The operator's list shows a merchant's endpoints of both environments,
// those the merchant deleted included.
func ExampleService_ListWebhookEndpoints() {
	e := newExample(memory.New(), paykit.Config{})
	defer e.close()
	ctx := context.Background()
	kept := e.endpoint("http://127.0.0.1:9/orders", "orders")
	gone := e.endpoint("http://127.0.0.1:9/old", "old")
	if _, err := e.svc.DeleteMerchantWebhookEndpoint(ctx, e.p, gone.Endpoint.ID); err != nil {
		panic(err)
	}

	page, err := e.svc.ListWebhookEndpoints(ctx, e.p.MerchantID)
	if err != nil {
		panic(err)
	}
	for _, w := range page.Data {
		fmt.Println(w.Description, w.Environment, w.Status, w.DisabledReason, w.ID == kept.Endpoint.ID)
	}
	_, err = e.svc.ListWebhookEndpoints(ctx, "mch_unknown")
	fmt.Println(paykit.ErrorCode(err))
	// Output:
	// old test disabled deleted false
	// orders test enabled  true
	// not_found
}

// An operator reads any merchant's endpoint, with its run of failed
// deliveries.
func ExampleService_GetWebhookEndpoint() {
	e, _ := newTimedExample(paykit.Config{})
	defer e.close()
	ctx := context.Background()
	rc, created := e.hook(http.StatusServiceUnavailable)
	e.order("order-81")
	e.drain()

	w, err := e.svc.GetWebhookEndpoint(ctx, created.Endpoint.ID)
	if err != nil {
		panic(err)
	}
	fmt.Println(w.MerchantID, w.URL == rc.URL, w.Status, "failures:", w.Failures)
	// Output: mch_kopi true enabled failures: 1
}

// An operator disables an endpoint: it is sent nothing until enabled
// again, and the events made meanwhile are not sent later.
func ExampleService_SetWebhookEndpointEnabled() {
	e := newExample(memory.New(), paykit.Config{})
	defer e.close()
	ctx := context.Background()
	rc, created := e.hook(http.StatusNoContent)
	id := created.Endpoint.ID

	w, err := e.svc.SetWebhookEndpointEnabled(ctx, "ops:alice", id, false)
	if err != nil {
		panic(err)
	}
	fmt.Println(w.Status, w.DisabledReason)
	e.order("order-82")
	e.drain()

	w, _ = e.svc.SetWebhookEndpointEnabled(ctx, "ops:alice", id, true)
	e.order("order-83")
	e.drain()
	fmt.Printf("%s %q %d delivery\n", w.Status, w.DisabledReason, len(rc.take()))
	// Output:
	// disabled operator
	// enabled "" 1 delivery
}

// An operator rotates an endpoint's secret; for the overlap both the old
// and the new secret sign every delivery.
func ExampleService_RotateWebhookSecret() {
	e := newExample(memory.New(), paykit.Config{})
	defer e.close()
	ctx := context.Background()
	rc, old := e.hook(http.StatusNoContent)

	rotated, err := e.svc.RotateWebhookSecret(ctx, "ops:alice", old.Endpoint.ID, time.Hour)
	if err != nil {
		panic(err)
	}
	fmt.Println(rotated.Secret != old.Secret, len(rotated.Endpoint.Secrets))

	e.order("order-84")
	e.drain()
	d := rc.take()[0]
	fmt.Println(d.signedBy(old.Secret), d.signedBy(rotated.Secret))

	_, err = e.svc.RotateWebhookSecret(ctx, "ops:alice", old.Endpoint.ID, 8*24*time.Hour)
	fmt.Println(paykit.ErrorCode(err))
	// Output:
	// true 2
	// true true
	// invalid_request
}

// An endpoint that failed three deliveries in a row pauses; once the
// merchant fixed it, an operator resumes it and what waited is sent at
// once.
func ExampleService_ResumeWebhookEndpoint() {
	e, clock := newTimedExample(paykit.Config{})
	defer e.close()
	ctx := context.Background()
	rc, created := e.hook(http.StatusInternalServerError)
	id := created.Endpoint.ID
	for _, ref := range []string{"order-85", "order-86", "order-87"} {
		e.order(ref)
	}
	e.drain()
	w, _ := e.svc.GetWebhookEndpoint(ctx, id)
	fmt.Println("paused:", w.Paused(clock.Now()), "failures:", w.Failures, "deliveries:", len(rc.take()))

	rc.answer(http.StatusNoContent)
	w, err := e.svc.ResumeWebhookEndpoint(ctx, "ops:alice", id)
	if err != nil {
		panic(err)
	}
	e.drain()
	fmt.Println("paused:", w.Paused(clock.Now()), "failures:", w.Failures, "deliveries:", len(rc.take()))
	// Output:
	// paused: true failures: 3 deliveries: 3
	// paused: false failures: 0 deliveries: 3
}

// A merchant reads one of its endpoints; a deleted one is gone for it.
func ExampleService_GetMerchantWebhookEndpoint() {
	e := newExample(memory.New(), paykit.Config{})
	defer e.close()
	ctx := context.Background()
	created := e.endpoint("http://127.0.0.1:9/orders", "orders", paykit.EventPaymentSucceeded, paykit.EventRefundSucceeded)

	w, err := e.svc.GetMerchantWebhookEndpoint(ctx, e.p, created.Endpoint.ID)
	if err != nil {
		panic(err)
	}
	fmt.Println(w.Description, w.Status, w.EnabledEvents)

	if _, err := e.svc.DeleteMerchantWebhookEndpoint(ctx, e.p, w.ID); err != nil {
		panic(err)
	}
	_, err = e.svc.GetMerchantWebhookEndpoint(ctx, e.p, w.ID)
	fmt.Println(paykit.ErrorCode(err))
	// Output:
	// orders enabled [payment_intent.succeeded refund.succeeded]
	// not_found
}

// A merchant's endpoints, newest first, a page at a time.
func ExampleService_ListMerchantWebhookEndpoints() {
	e := newExample(memory.New(), paykit.Config{})
	defer e.close()
	ctx := context.Background()
	for _, name := range []string{"orders", "refunds", "payouts"} {
		e.endpoint("http://127.0.0.1:9/"+name, name)
	}

	page, err := e.svc.ListMerchantWebhookEndpoints(ctx, e.p, paykit.PageParams{Limit: 2})
	if err != nil {
		panic(err)
	}
	fmt.Println(page.Data[0].Description, page.Data[1].Description, "more:", page.HasMore)
	page, _ = e.svc.ListMerchantWebhookEndpoints(ctx, e.p, paykit.PageParams{Limit: 2, Cursor: page.NextCursor})
	fmt.Println(page.Data[0].Description, "more:", page.HasMore)
	// Output:
	// payouts refunds more: true
	// orders more: false
}

// A merchant changes what an endpoint receives, or disables it; nil
// fields stay as they are.
func ExampleService_UpdateMerchantWebhookEndpoint() {
	e := newExample(memory.New(), paykit.Config{})
	defer e.close()
	ctx := context.Background()
	id := e.endpoint("http://127.0.0.1:9/orders", "orders").Endpoint.ID

	description, disabled := "paid orders", true
	w, err := e.svc.UpdateMerchantWebhookEndpoint(ctx, e.p, id, paykit.UpdateMerchantWebhookEndpointRequest{
		EnabledEvents: []string{paykit.EventPaymentSucceeded}, Description: &description,
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(w.Description, w.EnabledEvents, w.Status, w.URL)

	w, _ = e.svc.UpdateMerchantWebhookEndpoint(ctx, e.p, id, paykit.UpdateMerchantWebhookEndpointRequest{Disabled: &disabled})
	fmt.Println(w.Description, w.Status, w.DisabledReason)

	_, err = e.svc.UpdateMerchantWebhookEndpoint(ctx, e.p, id, paykit.UpdateMerchantWebhookEndpointRequest{EnabledEvents: []string{"payment_intent.paid"}})
	fmt.Println(paykit.ErrorCode(err))
	// Output:
	// paid orders [payment_intent.succeeded] enabled http://127.0.0.1:9/orders
	// paid orders disabled merchant
	// invalid_request
}

// A deleted endpoint gets no further deliveries; operators still see it.
func ExampleService_DeleteMerchantWebhookEndpoint() {
	e := newExample(memory.New(), paykit.Config{})
	defer e.close()
	ctx := context.Background()
	rc, created := e.hook(http.StatusNoContent)
	id := created.Endpoint.ID

	deleted, err := e.svc.DeleteMerchantWebhookEndpoint(ctx, e.p, id)
	if err != nil {
		panic(err)
	}
	fmt.Println(deleted.Status, deleted.DisabledReason)

	e.order("order-88")
	e.drain()
	page, _ := e.svc.ListMerchantWebhookEndpoints(ctx, e.p, paykit.PageParams{})
	seen, _ := e.svc.GetWebhookEndpoint(ctx, id)
	fmt.Println(len(rc.take()), "deliveries;", len(page.Data), "endpoints listed; operator sees:", seen.DisabledReason)
	// Output:
	// disabled deleted
	// 0 deliveries; 0 endpoints listed; operator sees: deleted
}

// A merchant rotates its endpoint's secret; for DefaultSecretOverlap the
// old secret keeps signing, so the receiver can switch without losing a
// delivery.
func ExampleService_RotateMerchantWebhookSecret() {
	e := newExample(memory.New(), paykit.Config{})
	defer e.close()
	ctx := context.Background()
	rc, old := e.hook(http.StatusNoContent)

	rotated, err := e.svc.RotateMerchantWebhookSecret(ctx, e.p, old.Endpoint.ID)
	if err != nil {
		panic(err)
	}
	previous := rotated.Endpoint.Secrets[1]
	fmt.Println(rotated.Secret != old.Secret, previous.ExpiresAt.Sub(rotated.Endpoint.UpdatedAt))

	e.order("order-89")
	e.drain()
	d := rc.take()[0]
	fmt.Println(d.Type, d.signedBy(old.Secret), d.signedBy(rotated.Secret))
	// Output:
	// true 24h0m0s
	// payment_intent.requires_action true true
}

// TestGoAPIOnlyDeliversSignedWebhooks: a host that mounts no httpadapter
// API gets its webhooks delivered and signed, with both secrets after a
// rotation.
func TestGoAPIOnlyDeliversSignedWebhooks(t *testing.T) {
	t.Parallel()
	e := newExample(memory.New(), paykit.Config{})
	defer e.close()
	ctx := context.Background()
	type delivery struct {
		header http.Header
		body   []byte
	}
	got := make(chan delivery, 10)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got <- delivery{r.Header.Clone(), body}
	}))
	defer hook.Close()
	created, _, err := e.svc.CreateMerchantWebhookEndpoint(ctx, e.p, "hook-1", paykit.CreateMerchantWebhookEndpointRequest{URL: hook.URL})
	if err != nil {
		t.Fatal(err)
	}
	rotated, err := e.svc.RotateMerchantWebhookSecret(ctx, e.p, created.Endpoint.ID)
	if err != nil {
		t.Fatal(err)
	}
	pi, _, err := e.svc.CreatePaymentIntent(ctx, e.p, "order-1", tngPayment("order-1"))
	if err != nil {
		t.Fatal(err)
	}
	e.drain()
	d := <-got
	for _, secret := range []string{created.Secret, rotated.Secret} {
		wh, err := standardwebhooks.NewWebhook(secret)
		if err != nil {
			t.Fatal(err)
		}
		if err := wh.Verify(d.body, d.header); err != nil {
			t.Errorf("signature with a secret that signs: %v", err)
		}
	}
	var ev struct {
		Type string
		Data struct{ ID string }
	}
	if err := json.Unmarshal(d.body, &ev); err != nil || ev.Type != paykit.EventPaymentRequiresAction || ev.Data.ID != pi.ID {
		t.Errorf("body %s (%v)", d.body, err)
	}
}
