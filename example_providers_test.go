package paykit_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/provider/sandbox"
	"github.com/paykit/paykit/store/memory"
)

// A host mounts a route per Provider that hands each callback to
// HandleProviderCallback (newExample's /callbacks does, for the sandbox).
// Here the sandbox PSP settles a transfer and says so; the payout is
// final without the worker asking. A callback that does not verify
// changes nothing.
func ExampleService_HandleProviderCallback() {
	e, clock := newTimedExample(paykit.Config{})
	defer e.close()
	ctx := context.Background()
	po, _, err := e.svc.CreatePayoutIntent(ctx, e.p, "payout-inv-40", thPayoutTo("inv-40"))
	if err != nil {
		panic(err)
	}
	fmt.Println(po.Status)

	clock.Advance(3 * time.Second) // the PSP settles the transfer
	acked, err := e.psp.SendCallbacks(ctx)
	if err != nil {
		panic(err)
	}
	po, _ = e.svc.GetPayoutIntent(ctx, e.p, po.ID)
	fmt.Println(acked, "callback acknowledged;", po.Status, po.CompletedAmount)

	forged := httptest.NewRequest("POST", "/callbacks", strings.NewReader(`{"kind":"payout","state":"FAILED"}`))
	err = e.svc.HandleProviderCallback(ctx, sandbox.Name, forged)
	fmt.Println(paykit.ErrorCode(err))
	err = e.svc.HandleProviderCallback(ctx, "no-such-provider", forged)
	fmt.Println(paykit.ErrorCode(err))
	// Output:
	// processing
	// 1 callback acknowledged; succeeded 120000
	// invalid_request
	// not_found
}

// In the test environment a host (or its test suite) plays the payer on
// the sandbox's page: approve pays, decline refuses.
func ExampleService_SimulatePayer() {
	e := newExample(memory.New(), paykit.Config{})
	defer e.close()
	ctx := context.Background()
	approved := e.order("order-41")
	declined := e.order("order-42")

	pi, err := e.svc.SimulatePayer(ctx, e.p, approved.ID, true)
	if err != nil {
		panic(err)
	}
	fmt.Println(pi.Status, pi.CapturedAmount())

	pi, _ = e.svc.SimulatePayer(ctx, e.p, declined.ID, false)
	fmt.Println(pi.Status, pi.FailureCode)

	_, err = e.svc.SimulatePayer(ctx, e.p, approved.ID, true) // no longer waits for a payer
	fmt.Println(paykit.ErrorCode(err))
	// Output:
	// succeeded 15000
	// failed provider_declined
	// invalid_state
}

// A succeeded test payout can be made to come back from the bank: it
// fails with funds_returned and the money is available again.
func ExampleService_SimulateReturn() {
	e, clock := newTimedExample(paykit.Config{})
	defer e.close()
	ctx := context.Background()
	po, _, _ := e.svc.CreatePayoutIntent(ctx, e.p, "payout-inv-43", thPayoutTo("inv-43"))
	clock.Advance(time.Minute)
	e.drain() // the worker learns that the transfer succeeded
	po, _ = e.svc.GetPayoutIntent(ctx, e.p, po.ID)
	balances, _ := e.svc.ListBalances(ctx, e.p)
	fmt.Println(po.Status, balances.Data[0].Available)

	po, err := e.svc.SimulateReturn(ctx, e.p, po.ID)
	if err != nil {
		panic(err)
	}
	balances, _ = e.svc.ListBalances(ctx, e.p)
	fmt.Println(po.Status, po.FailureCode, po.ReturnedAmount, balances.Data[0].Available)
	// Output:
	// succeeded 380000
	// failed funds_returned 120000 500000
}
