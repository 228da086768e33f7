package paykit_test

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/store/memory"
)

// Every public state change is an event; GetEvent reads one of the
// caller's scope by id (the id a webhook delivery carries).
func ExampleService_GetEvent() {
	e := newExample(memory.New(), paykit.Config{})
	defer e.close()
	ctx := context.Background()
	pi := e.paid("order-90")
	latest, _ := e.svc.ListEvents(ctx, e.p, paykit.EventListParams{PageParams: paykit.PageParams{Limit: 1}})

	ev, err := e.svc.GetEvent(ctx, e.p, latest.Data[0].ID)
	if err != nil {
		panic(err)
	}
	fmt.Println(ev.Type, ev.ObjectID == pi.ID, ev.Environment)

	_, err = e.svc.GetEvent(ctx, e.p, "evt_unknown")
	fmt.Println(paykit.ErrorCode(err))
	// Output:
	// payment_intent.succeeded true test
	// not_found
}

// Events are listed newest first and filter by type and creation time.
func ExampleService_ListEvents() {
	e := newExample(memory.New(), paykit.Config{})
	defer e.close()
	ctx := context.Background()
	e.paid("order-91")
	if _, _, err := e.svc.CreatePayoutIntent(ctx, e.p, "payout-inv-91", thPayoutTo("inv-91")); err != nil {
		panic(err)
	}

	page, err := e.svc.ListEvents(ctx, e.p, paykit.EventListParams{})
	if err != nil {
		panic(err)
	}
	for _, ev := range page.Data {
		fmt.Println(ev.Type)
	}
	page, _ = e.svc.ListEvents(ctx, e.p, paykit.EventListParams{Types: []string{paykit.EventPaymentSucceeded}})
	fmt.Println(len(page.Data), "succeeded")
	// Output:
	// payout_intent.processing
	// payment_intent.succeeded
	// payment_intent.requires_action
	// 1 succeeded
}

// An operator sends an event to an endpoint once more (the merchant lost
// it); the resend's attempts are numbered from 1 again.
func ExampleService_ResendEvent() {
	e := newExample(memory.New(), paykit.Config{})
	defer e.close()
	ctx := context.Background()
	rc, created := e.hook(http.StatusNoContent)
	id := created.Endpoint.ID
	e.order("order-92")
	e.drain()
	first := rc.take()[0]

	events, _ := e.svc.ListEvents(ctx, e.p, paykit.EventListParams{})
	if err := e.svc.ResendEvent(ctx, "ops:alice", id, events.Data[0].ID); err != nil {
		panic(err)
	}
	e.drain()
	again := rc.take()[0]
	attempts, _ := e.svc.ListWebhookAttempts(ctx, id, paykit.PageParams{})
	fmt.Println(again.Type, string(again.body) == string(first.body), len(attempts.Data), attempts.Data[0].Number)

	if _, err := e.svc.SetWebhookEndpointEnabled(ctx, "ops:alice", id, false); err != nil {
		panic(err)
	}
	err := e.svc.ResendEvent(ctx, "ops:alice", id, events.Data[0].ID)
	fmt.Println(paykit.ErrorCode(err))
	// Output:
	// payment_intent.requires_action true 2 1
	// invalid_state
}

// Each delivery attempt is recorded, newest first: a failed one is tried
// again on the retry schedule (the first retry after about 5 s).
func ExampleService_ListWebhookAttempts() {
	e, clock := newTimedExample(paykit.Config{})
	defer e.close()
	rc, created := e.hook(http.StatusServiceUnavailable)
	id := created.Endpoint.ID
	e.order("order-93")
	e.drain()
	rc.answer(http.StatusNoContent)
	clock.Advance(10 * time.Second)
	e.drain()

	page, err := e.svc.ListWebhookAttempts(context.Background(), id, paykit.PageParams{})
	if err != nil {
		panic(err)
	}
	for _, a := range page.Data {
		fmt.Println(a.Number, a.StatusCode, a.Succeeded)
	}
	// Output:
	// 2 204 true
	// 1 503 false
}
