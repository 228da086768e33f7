package paykit_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/store/memory"
)

// heldPayout creates a payout of ref that waits for an operator (the
// Service's ApprovalThreshold is at most its 120000).
func (e *exampleEnv) heldPayout(ref string) *paykit.PayoutIntent {
	po, _, err := e.svc.CreatePayoutIntent(context.Background(), e.p, "payout-"+ref, thPayoutTo(ref))
	if err != nil {
		panic(err)
	}
	if !po.ApprovalPending {
		panic("payout " + ref + " is not held: " + string(po.Status))
	}
	return po
}

// printBalances prints the caller's balances, one line per currency.
func (e *exampleEnv) printBalances() {
	page, err := e.svc.ListBalances(context.Background(), e.p)
	if err != nil {
		panic(err)
	}
	for _, b := range page.Data {
		fmt.Println(b.Currency, "available", b.Available, "pending", b.Pending, "reserved", b.Reserved)
	}
}

// A payout's projection shows the recipient's account by its last four
// digits only.
func ExampleService_GetPayoutIntent() {
	e := newExample(memory.New(), paykit.Config{})
	defer e.close()
	ctx := context.Background()
	created, _, _ := e.svc.CreatePayoutIntent(ctx, e.p, "payout-inv-50", thPayoutTo("inv-50"))

	po, err := e.svc.GetPayoutIntent(ctx, e.p, created.ID)
	if err != nil {
		panic(err)
	}
	fmt.Println(po.Status, po.Amount, po.Currency, po.BankCode, po.AccountLast4, po.ReservedAmount)

	_, err = e.svc.GetPayoutIntent(ctx, e.p, "po_unknown")
	fmt.Println(paykit.ErrorCode(err))
	// Output:
	// processing 120000 THB KBANK 7890 120000
	// not_found
}

func ExampleService_ListPayoutIntents() {
	e := newExample(memory.New(), paykit.Config{ApprovalThreshold: 100000})
	defer e.close()
	ctx := context.Background()
	small := thPayoutTo("inv-51")
	small.Amount = 30000
	if _, _, err := e.svc.CreatePayoutIntent(ctx, e.p, "payout-inv-51", small); err != nil {
		panic(err)
	}
	e.heldPayout("inv-52")

	page, err := e.svc.ListPayoutIntents(ctx, e.p, paykit.ListParams[paykit.PayoutStatus]{})
	if err != nil {
		panic(err)
	}
	for _, po := range page.Data {
		fmt.Println(po.MerchantReference, po.Amount, po.Status)
	}
	page, _ = e.svc.ListPayoutIntents(ctx, e.p, paykit.ListParams[paykit.PayoutStatus]{Statuses: []paykit.PayoutStatus{paykit.PayoutProcessing}})
	fmt.Println(len(page.Data), page.Data[0].MerchantReference)
	// Output:
	// inv-52 120000 requires_approval
	// inv-51 30000 processing
	// 1 inv-51
}

// CreatePayoutIntentTx reserves the amount in the host's transaction;
// the worker sends the transfer once it commits. Rolled back, no payout
// exists and nothing is reserved. On the memory Store the host's
// transaction is Store.InTx's.
func ExampleService_CreatePayoutIntentTx() {
	store := memory.New()
	e := newExample(store, paykit.Config{Now: paykit.NewManualClock(exampleStart).Now})
	defer e.close()
	ctx := context.Background()

	err := store.InTx(ctx, func(tx paykit.Tx) error {
		po, answer, err := e.svc.CreatePayoutIntentTx(ctx, tx, e.p, "payout-inv-53", thPayoutTo("inv-53"))
		if err != nil {
			return err
		}
		fmt.Println(answer.Kind, po.Status, po.ReservedAmount)
		return nil
	})
	if err != nil {
		panic(err)
	}
	err = store.InTx(ctx, func(tx paykit.Tx) error {
		if _, _, err := e.svc.CreatePayoutIntentTx(ctx, tx, e.p, "payout-inv-54", thPayoutTo("inv-54")); err != nil {
			return err
		}
		return errors.New("invoice inv-54 was paid twice") // the host rolls back
	})
	fmt.Println("rolled back:", err)
	e.drain() // Service.Run does this in the background

	page, _ := e.svc.ListPayoutIntents(ctx, e.p, paykit.ListParams[paykit.PayoutStatus]{})
	fmt.Println(len(page.Data), page.Data[0].MerchantReference, page.Data[0].Status)
	e.printBalances()
	// Output:
	// accepted processing 120000
	// rolled back: invoice inv-54 was paid twice
	// 1 inv-53 processing
	// THB available 380000 pending 0 reserved 120000
}

// An operator approves a held payout: it is dispatched, and approving it
// again is invalid_state.
func ExampleService_ApprovePayout() {
	e := newExample(memory.New(), paykit.Config{ApprovalThreshold: 100000})
	defer e.close()
	ctx := context.Background()
	po := e.heldPayout("inv-55")

	approved, err := e.svc.ApprovePayout(ctx, "ops:alice", po.ID, "invoice inv-55 checked")
	if err != nil {
		panic(err)
	}
	fmt.Println(approved.Status, approved.ApprovalPending)

	_, err = e.svc.ApprovePayout(ctx, "ops:alice", po.ID, "twice")
	fmt.Println(paykit.ErrorCode(err))
	// Output:
	// processing false
	// invalid_state
}

// An operator rejects a held payout: it fails with approval_rejected and
// its reservation is released.
func ExampleService_RejectPayout() {
	e := newExample(memory.New(), paykit.Config{ApprovalThreshold: 100000})
	defer e.close()
	ctx := context.Background()
	po := e.heldPayout("inv-56")
	e.printBalances()

	rejected, err := e.svc.RejectPayout(ctx, "ops:alice", po.ID, "unknown recipient")
	if err != nil {
		panic(err)
	}
	fmt.Println(rejected.Status, rejected.FailureCode)
	e.printBalances()
	// Output:
	// THB available 380000 pending 0 reserved 120000
	// failed approval_rejected
	// THB available 500000 pending 0 reserved 0
}

// The operator's queue: held payouts of every merchant, newest first.
func ExampleService_ListPendingApprovals() {
	e := newExample(memory.New(), paykit.Config{ApprovalThreshold: 100000})
	defer e.close()
	ctx := context.Background()
	e.heldPayout("inv-57")
	e.heldPayout("inv-58")
	small := thPayoutTo("inv-59")
	small.Amount = 30000 // below the threshold: dispatched at once
	if _, _, err := e.svc.CreatePayoutIntent(ctx, e.p, "payout-inv-59", small); err != nil {
		panic(err)
	}

	page, err := e.svc.ListPendingApprovals(ctx, paykit.PageParams{})
	if err != nil {
		panic(err)
	}
	for _, po := range page.Data {
		fmt.Println(po.MerchantReference, po.Amount, po.MerchantID)
	}
	// Output:
	// inv-58 120000 mch_kopi
	// inv-57 120000 mch_kopi
}

// An operator credits or debits a merchant's available balance; a debit
// may not take it below zero.
func ExampleService_AdjustBalance() {
	e := newExample(memory.New(), paykit.Config{})
	defer e.close()
	ctx := context.Background()

	adj, err := e.svc.AdjustBalance(ctx, "ops:alice", e.p.MerchantID, paykit.BalanceAdjustmentRequest{
		Environment: paykit.Test, Currency: "THB", Amount: -20000, Reason: "fee for May",
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(adj.Amount, adj.Currency, adj.Balance.Available)

	_, err = e.svc.AdjustBalance(ctx, "ops:alice", e.p.MerchantID, paykit.BalanceAdjustmentRequest{
		Environment: paykit.Test, Currency: "THB", Amount: -1000000, Reason: "too much",
	})
	fmt.Println(paykit.ErrorCode(err))
	// Output:
	// -20000 THB 480000
	// insufficient_balance
}

// A merchant's balances, one per currency: what is available to pay out,
// and what payouts and refunds in flight hold.
func ExampleService_ListBalances() {
	e := newExample(memory.New(), paykit.Config{})
	defer e.close()
	ctx := context.Background()
	e.paid("order-60") // 15000 MYR paid in, less the sandbox's fee of 435
	if _, _, err := e.svc.CreatePayoutIntent(ctx, e.p, "payout-inv-60", thPayoutTo("inv-60")); err != nil {
		panic(err)
	}
	e.printBalances()
	// The sandbox settles the payment: its net becomes available.
	if _, err := e.svc.SettleTestFunds(ctx, e.p); err != nil {
		panic(err)
	}
	e.printBalances()
	// Output:
	// MYR available 0 pending 14565 reserved 0
	// THB available 380000 pending 0 reserved 120000
	// MYR available 14565 pending 0 reserved 0
	// THB available 380000 pending 0 reserved 120000
}
