package paykit_test

import (
	"context"
	"fmt"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/store/memory"
)

// order creates a payment of order ref, which waits for its payer
// (requires_action) and emits its event.
func (e *exampleEnv) order(ref string) *paykit.PaymentIntent {
	pi, _, err := e.svc.CreatePaymentIntent(context.Background(), e.p, ref, tngPayment(ref))
	if err != nil {
		panic(err)
	}
	return pi
}

// paid creates a payment of order ref and approves it as its payer would.
// Its net waits in the pending balance until the Provider settles it.
func (e *exampleEnv) paid(ref string) *paykit.PaymentIntent {
	pi, err := e.svc.SimulatePayer(context.Background(), e.p, e.order(ref).ID, true)
	if err != nil {
		panic(err)
	}
	return pi
}

// settled is paid, with the sandbox settling the payment's funds at once:
// they are available to refunds and payouts.
func (e *exampleEnv) settled(ref string) *paykit.PaymentIntent {
	pi := e.paid(ref)
	if _, err := e.svc.SettleTestFunds(context.Background(), e.p); err != nil {
		panic(err)
	}
	return pi
}

// checkout creates an open checkout of order ref for amount MYR.
func (e *exampleEnv) checkout(ref string, amount int64) *paykit.Checkout {
	co, _, err := e.svc.CreateCheckout(context.Background(), e.p, ref, paykit.CreateCheckoutRequest{
		Amount: amount, Currency: "MYR", Country: "MY", MerchantReference: ref,
	})
	if err != nil {
		panic(err)
	}
	return co
}

// GetPaymentIntent reads what is stored; an intent of another scope (here
// the merchant's live environment) does not exist for the caller.
func ExampleService_GetPaymentIntent() {
	e := newExample(memory.New(), paykit.Config{})
	defer e.close()
	ctx := context.Background()
	created := e.order("order-30")

	pi, err := e.svc.GetPaymentIntent(ctx, e.p, created.ID)
	if err != nil {
		panic(err)
	}
	fmt.Println(pi.Status, pi.Amount, pi.Currency, pi.PaymentMethod, pi.MerchantReference, pi.NextAction.Type)

	liveKey, _ := e.svc.CreateAPIKey(ctx, "ops", e.p.MerchantID, paykit.Live)
	live, _ := e.svc.Authenticate(ctx, liveKey.PublicKey, liveKey.SecretKey)
	_, err = e.svc.GetPaymentIntent(ctx, live, created.ID)
	fmt.Println(paykit.ErrorCode(err))
	// Output:
	// requires_action 15000 MYR TNG order-30 redirect_to_url
	// not_found
}

// Lists are newest first and filter by status, reference, currency and
// creation time.
func ExampleService_ListPaymentIntents() {
	e := newExample(memory.New(), paykit.Config{})
	defer e.close()
	ctx := context.Background()
	e.paid("order-31")
	for _, ref := range []string{"order-32", "order-33"} {
		e.order(ref)
	}

	page, err := e.svc.ListPaymentIntents(ctx, e.p, paykit.ListParams[paykit.PaymentStatus]{PageParams: paykit.PageParams{Limit: 2}})
	if err != nil {
		panic(err)
	}
	for _, pi := range page.Data {
		fmt.Println(pi.MerchantReference, pi.Status)
	}
	fmt.Println("more:", page.HasMore)

	page, _ = e.svc.ListPaymentIntents(ctx, e.p, paykit.ListParams[paykit.PaymentStatus]{Statuses: []paykit.PaymentStatus{paykit.PaymentSucceeded}})
	fmt.Println(len(page.Data), page.Data[0].MerchantReference)
	// Output:
	// order-33 requires_action
	// order-32 requires_action
	// more: true
	// 1 order-31
}

// A checkout's projection carries its linked payment's progress.
func ExampleService_GetCheckout() {
	e := newExample(memory.New(), paykit.Config{})
	defer e.close()
	ctx := context.Background()
	created := e.checkout("order-34", 2500)

	co, err := e.svc.GetCheckout(ctx, e.p, created.ID)
	if err != nil {
		panic(err)
	}
	fmt.Println(co.Status, co.Amount, co.Currency, co.PaymentStatus, co.ProviderStatus == "")
	fmt.Println(co.ExpiresAt.Sub(co.CreatedAt)) // Config.CheckoutTTL
	// Output:
	// open 2500 MYR requires_payment_method true
	// 24h0m0s
}

func ExampleService_ListCheckouts() {
	e := newExample(memory.New(), paykit.Config{})
	defer e.close()
	ctx := context.Background()
	e.checkout("order-35", 2500)
	cancelled := e.checkout("order-36", 4000)
	e.checkout("order-37", 1200)
	if _, _, err := e.svc.CancelCheckout(ctx, e.p, "cancel-order-36", cancelled.ID); err != nil {
		panic(err)
	}

	page, err := e.svc.ListCheckouts(ctx, e.p, paykit.ListParams[paykit.CheckoutStatus]{Statuses: []paykit.CheckoutStatus{paykit.CheckoutOpen}})
	if err != nil {
		panic(err)
	}
	for _, co := range page.Data {
		fmt.Println(co.MerchantReference, co.Amount)
	}
	page, _ = e.svc.ListCheckouts(ctx, e.p, paykit.ListParams[paykit.CheckoutStatus]{MerchantReference: "order-36"})
	fmt.Println(page.Data[0].Status)
	// Output:
	// order-37 1200
	// order-35 2500
	// cancelled
}

// A checkout whose payer has not started is cancelled at once with its
// payment; the same key replays the answer, and a second cancel under a
// new key finds it no longer open.
func ExampleService_CancelCheckout() {
	e := newExample(memory.New(), paykit.Config{})
	defer e.close()
	ctx := context.Background()
	co := e.checkout("order-38", 2500)

	cancelled, answer, err := e.svc.CancelCheckout(ctx, e.p, "cancel-order-38", co.ID)
	if err != nil {
		panic(err)
	}
	pi, _ := e.svc.GetPaymentIntent(ctx, e.p, co.PaymentIntentID)
	fmt.Println(answer.Kind, cancelled.Status, pi.Status)

	_, answer, _ = e.svc.CancelCheckout(ctx, e.p, "cancel-order-38", co.ID)
	fmt.Println(answer.Kind, answer.Replayed)

	_, _, err = e.svc.CancelCheckout(ctx, e.p, "cancel-order-38-again", co.ID)
	fmt.Println(paykit.ErrorCode(err))
	// Output:
	// done cancelled cancelled
	// done true
	// invalid_state
}
