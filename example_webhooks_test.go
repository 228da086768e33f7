package paykit_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

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

	if _, _, err := e.svc.CreatePaymentIntent(ctx, e.p, "order-9", tngPayment("order-9")); err != nil {
		panic(err)
	}
	e.drain() // the worker's job: Service.Run does it in a host
	fmt.Println(<-got)

	page, _ := e.svc.ListMerchantWebhookEndpoints(ctx, e.p, paykit.PageParams{})
	fmt.Println(len(page.Data), page.Data[0].Description)
	// Output:
	// created enabled [payment_intent.requires_action]
	// payment_intent.requires_action signed: true
	// 1 orders
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
