package paykit_test

import (
	"context"
	"fmt"
	"time"

	"github.com/paykit/paykit"
)

// A succeeded payment credits its net, less the Provider's fee, to the
// pending balance; its balance transaction is pending until the Provider
// settles it. The sandbox settles at once on SettleTestFunds.
func ExampleService_ListBalanceTransactions() {
	e, _ := newTimedExample(paykit.Config{})
	defer e.close()
	ctx := context.Background()
	pi := e.paid("order-80") // 15000 MYR by FPX: the sandbox keeps 2.9 %
	list := func() {
		page, err := e.svc.ListBalanceTransactions(ctx, e.p, paykit.BalanceTransactionListParams{Source: pi.ID})
		if err != nil {
			panic(err)
		}
		for _, bt := range page.Data {
			fmt.Println(bt.Type, bt.Amount, bt.Fee, bt.Net, bt.Status)
		}
	}
	list()
	batches, err := e.svc.SettleTestFunds(ctx, e.p)
	if err != nil {
		panic(err)
	}
	fmt.Println(len(batches), "batch of", len(batches[0].Lines), "line")
	list()
	// Output:
	// payment 15000 435 14565 pending
	// 1 batch of 1 line
	// payment 15000 435 14565 available
}

// A dispute takes its amount and the Provider's dispute fee from the
// available balance, even below zero. Evidence submitted for review
// decides it: the sandbox wins a dispute whose evidence says
// winning_evidence, after its delay, and the amount comes back; the fee
// stays kept.
func ExampleService_SubmitDisputeEvidence() {
	e, clock := newTimedExample(paykit.Config{})
	defer e.close()
	ctx := context.Background()
	pi := e.settled("order-81") // 14565 MYR available
	d, err := e.svc.SimulateDispute(ctx, e.p, pi.ID, paykit.SimulateDisputeRequest{Reason: paykit.DisputeProductNotReceived})
	if err != nil {
		panic(err)
	}
	fmt.Println(d.Status, d.Amount, d.Reason, d.EvidenceDueBy.Sub(d.CreatedAt))
	e.printBalances()

	d, _, err = e.svc.SubmitDisputeEvidence(ctx, e.p, "evidence-81", d.ID, paykit.DisputeEvidenceRequest{
		Text: "Signed delivery receipt attached. winning_evidence", Submit: true,
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(d.Status)
	e.drain() // the evidence goes to the Provider
	clock.Advance(3 * time.Second)
	if _, err := e.psp.SendCallbacks(ctx); err != nil { // its decision comes back
		panic(err)
	}
	d, _ = e.svc.GetDispute(ctx, e.p, d.ID)
	fmt.Println(d.Status)
	e.printBalances()
	// Output:
	// needs_response 15000 product_not_received 168h0m0s
	// MYR available -1935 pending 0 reserved 0
	// THB available 500000 pending 0 reserved 0
	// under_review
	// won
	// MYR available 13065 pending 0 reserved 0
	// THB available 500000 pending 0 reserved 0
}

// A merchant that concedes a dispute accepts it: it is lost at once, and
// a payment with no open dispute can be refunded again, as far as its
// refunds and lost disputes leave.
func ExampleService_AcceptDispute() {
	e, _ := newTimedExample(paykit.Config{})
	defer e.close()
	ctx := context.Background()
	pi := e.settled("order-82")
	d, err := e.svc.SimulateDispute(ctx, e.p, pi.ID, paykit.SimulateDisputeRequest{Amount: 5000})
	if err != nil {
		panic(err)
	}
	_, _, err = e.svc.CreateRefund(ctx, e.p, "refund-82", paykit.CreateRefundRequest{PaymentIntent: pi.ID, MerchantReference: "refund-82", Amount: 100})
	fmt.Println(paykit.ErrorCode(err))

	d, _, err = e.svc.AcceptDispute(ctx, e.p, "accept-82", d.ID)
	if err != nil {
		panic(err)
	}
	fmt.Println(d.Status, d.ClosedAt != nil)
	pi, _ = e.svc.GetPaymentIntent(ctx, e.p, pi.ID)
	fmt.Println("disputed", pi.DisputedAmount)
	_, _, err = e.svc.CreateRefund(ctx, e.p, "refund-82b", paykit.CreateRefundRequest{PaymentIntent: pi.ID, MerchantReference: "refund-82b", Amount: 10001})
	fmt.Println(paykit.ErrorCode(err))
	// Output:
	// invalid_state
	// lost true
	// disputed 5000
	// amount_exceeds_refundable
}

// Settlement is checked line by line against paykit's records: the
// sandbox settles a payment of an amount ending in 921 with a fee one
// minor unit above the one it stated, so the line opens a fee_mismatch
// break and the funds stay pending until an operator resolves it, here
// as the Provider reported, with the difference booked as an adjustment.
func ExampleService_ResolveBreak() {
	e, _ := newTimedExample(paykit.Config{})
	defer e.close()
	ctx := context.Background()
	pi, _, err := e.svc.CreatePaymentIntent(ctx, e.p, "order-83", paykit.CreatePaymentIntentRequest{
		Amount: 15921, Currency: "MYR", Country: "MY", MerchantReference: "order-83", PaymentMethod: "FPX",
		Customer: map[string]string{"name": "Aisyah", "email": "aisyah@example.com"},
	})
	if err != nil {
		panic(err)
	}
	if _, err := e.svc.SimulatePayer(ctx, e.p, pi.ID, true); err != nil {
		panic(err)
	}
	if _, err := e.svc.SettleTestFunds(ctx, e.p); err != nil {
		panic(err)
	}
	page, err := e.svc.ListReconciliationBreaks(ctx, paykit.BreakListParams{Status: paykit.BreakOpen})
	if err != nil {
		panic(err)
	}
	b := page.Data[0]
	fmt.Println(b.Type, b.Source == pi.ID, b.Expected.Fee, b.Reported.Fee)
	e.printBalances()

	b2, err := e.svc.ResolveBreak(ctx, "ops:alice", b.ID, paykit.ResolveBreakRequest{
		Resolution: paykit.ResolveAcceptProvider, Note: "The PSP confirmed its fee.",
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(b2.Status, b2.Resolution)
	e.printBalances()
	// Output:
	// fee_mismatch true 462 463
	// MYR available 0 pending 15459 reserved 0
	// THB available 500000 pending 0 reserved 0
	// resolved accept_provider
	// MYR available 15458 pending 0 reserved 0
	// THB available 500000 pending 0 reserved 0
}
