package paykit_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/store/memory"
)

// refund refunds amount of the payment pi under the reference ref.
func (e *exampleEnv) refund(pi *paykit.PaymentIntent, ref string, amount int64) *paykit.Refund {
	re, _, err := e.svc.CreateRefund(context.Background(), e.p, ref, paykit.CreateRefundRequest{
		PaymentIntent: pi.ID, MerchantReference: ref, Amount: amount,
	})
	if err != nil {
		panic(err)
	}
	return re
}

// A refund is pending until the Provider's final word, which the worker
// fetches; GetRefund reads what is stored.
func ExampleService_GetRefund() {
	e, clock := newTimedExample(paykit.Config{})
	defer e.close()
	ctx := context.Background()
	created := e.refund(e.settled("order-70"), "refund-70", 5000)

	re, err := e.svc.GetRefund(ctx, e.p, created.ID)
	if err != nil {
		panic(err)
	}
	fmt.Println(re.Status, re.Amount, re.Currency, re.CompletedAt == nil)

	clock.Advance(time.Minute)
	e.drain()
	re, _ = e.svc.GetRefund(ctx, e.p, created.ID)
	fmt.Println(re.Status, re.CompletedAt != nil)
	// Output:
	// pending 5000 MYR true
	// succeeded true
}

// Refunds are listed newest first, and by the payment they refund.
func ExampleService_ListRefunds() {
	e, _ := newTimedExample(paykit.Config{})
	defer e.close()
	ctx := context.Background()
	first, second := e.settled("order-71"), e.settled("order-72")
	e.refund(first, "refund-71a", 1000)
	e.refund(second, "refund-72", 0) // 0: all that is refundable
	e.refund(first, "refund-71b", 2000)

	page, err := e.svc.ListRefunds(ctx, e.p, paykit.RefundListParams{})
	if err != nil {
		panic(err)
	}
	for _, re := range page.Data {
		fmt.Println(re.MerchantReference, re.Amount, re.Status)
	}
	page, _ = e.svc.ListRefunds(ctx, e.p, paykit.RefundListParams{PaymentIntent: first.ID})
	fmt.Println(len(page.Data), "refunds of order-71")
	// Output:
	// refund-71b 2000 pending
	// refund-72 15000 pending
	// refund-71a 1000 pending
	// 2 refunds of order-71
}

// CreateRefundTx writes the refund and its reservation in the host's
// transaction; the worker sends it to the Provider after the commit.
// Rolled back, the amount stays refundable.
func ExampleService_CreateRefundTx() {
	store := memory.New()
	clock := paykit.NewManualClock(exampleStart)
	e := newExample(store, paykit.Config{Now: clock.Now})
	defer e.close()
	ctx := context.Background()
	pi := e.settled("order-73")
	// The sandbox kept 435 of the 15000 paid in: 14565 is available.
	refundPart := paykit.CreateRefundRequest{PaymentIntent: pi.ID, MerchantReference: "refund-73", Amount: 10000}

	err := store.InTx(ctx, func(tx paykit.Tx) error {
		if _, _, err := e.svc.CreateRefundTx(ctx, tx, e.p, "refund-73", refundPart); err != nil {
			return err
		}
		return errors.New("the return was not received") // the host rolls back
	})
	fmt.Println("rolled back:", err)

	var re *paykit.Refund
	err = store.InTx(ctx, func(tx paykit.Tx) error {
		var answer paykit.Answer
		var err error
		re, answer, err = e.svc.CreateRefundTx(ctx, tx, e.p, "refund-73", refundPart)
		if err == nil {
			fmt.Println(answer.Kind, re.Status, re.Amount)
		}
		return err
	})
	if err != nil {
		panic(err)
	}
	e.drain() // Service.Run sends the refund in the background ...
	clock.Advance(time.Minute)
	e.drain() // ... and learns its outcome
	re, _ = e.svc.GetRefund(ctx, e.p, re.ID)
	fmt.Println(re.Status)
	e.printBalances()
	// Output:
	// rolled back: the return was not received
	// accepted pending 10000
	// succeeded
	// MYR available 4565 pending 0 reserved 0
	// THB available 500000 pending 0 reserved 0
}
