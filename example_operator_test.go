package paykit_test

import (
	"context"
	"fmt"
	"time"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/store/memory"
)

// Every operator action is audited: who did what to which target. The
// log is newest first and filters by merchant and action.
func ExampleService_ListAuditEvents() {
	e := newExample(memory.New(), paykit.Config{}) // ensures the merchant, a key and a float, as "ops"
	defer e.close()
	ctx := context.Background()
	if _, err := e.svc.AdjustBalance(ctx, "ops:alice", e.p.MerchantID, paykit.BalanceAdjustmentRequest{
		Environment: paykit.Test, Currency: "THB", Amount: -2500, Reason: "fee for May",
	}); err != nil {
		panic(err)
	}

	page, err := e.svc.ListAuditEvents(ctx, paykit.AuditListParams{MerchantID: e.p.MerchantID})
	if err != nil {
		panic(err)
	}
	for _, a := range page.Data {
		fmt.Println(a.Actor, a.Action, a.TargetType)
	}
	page, _ = e.svc.ListAuditEvents(ctx, paykit.AuditListParams{Action: "balance.adjust", PageParams: paykit.PageParams{Limit: 1}})
	fmt.Println(page.Data[0].Details["amount"], page.Data[0].Details["reason"], "more:", page.HasMore)
	// Output:
	// ops:alice balance.adjust merchant
	// ops balance.adjust merchant
	// ops api_key.create api_key
	// ops merchant.create merchant
	// -2500 fee for May more: true
}

// The history of one resource for an operator: its state changes and the
// operator actions on it, oldest first.
func ExampleService_ResourceTimeline() {
	e, clock := newTimedExample(paykit.Config{ApprovalThreshold: 100000})
	defer e.close()
	ctx := context.Background()
	po := e.heldPayout("inv-100")
	clock.Advance(time.Hour)
	if _, err := e.svc.ApprovePayout(ctx, "ops:alice", po.ID, "invoice checked"); err != nil {
		panic(err)
	}
	clock.Advance(time.Minute)
	e.drain()
	po, _ = e.svc.GetPayoutIntent(ctx, e.p, po.ID)

	tl, err := e.svc.ResourceTimeline(ctx, po)
	if err != nil {
		panic(err)
	}
	for _, entry := range tl.Entries {
		offset := entry.At.Sub(exampleStart)
		if entry.Event != nil {
			fmt.Println(offset, "event", entry.Event.Type)
		} else {
			fmt.Println(offset, "audit", entry.Audit.Actor, entry.Audit.Action)
		}
	}
	fmt.Println("complete:", !tl.Incomplete)
	// Output:
	// 0s event payout_intent.requires_approval
	// 1h0m0s event payout_intent.processing
	// 1h0m0s audit ops:alice payout_intent.approve
	// 1h1m0s event payout_intent.succeeded
	// complete: true
}

// StatusCounts answers "how did today go" for a merchant: the resources of
// one kind created since a time, by status.
func ExampleService_StatusCounts() {
	e, _ := newTimedExample(paykit.Config{})
	defer e.close()
	ctx := context.Background()
	e.paid("order-101")
	e.paid("order-102")
	declined := e.order("order-103")
	if _, err := e.svc.SimulatePayer(ctx, e.p, declined.ID, false); err != nil {
		panic(err)
	}
	e.order("order-104")

	counts, err := e.svc.StatusCounts(ctx, e.p, "payment_intent", exampleStart)
	if err != nil {
		panic(err)
	}
	fmt.Println(counts)
	counts, _ = e.svc.StatusCounts(ctx, e.p, "payment_intent", exampleStart.Add(time.Hour))
	fmt.Println(counts)
	_, err = e.svc.StatusCounts(ctx, e.p, "invoice", exampleStart)
	fmt.Println(paykit.ErrorCode(err))
	// Output:
	// map[failed:1 requires_action:1 succeeded:2]
	// map[]
	// invalid_request
}
