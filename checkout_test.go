package paykit_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/internal/answertest"
)

// The checkout through the Go API: create, read, list, the payer's side
// (open, pay) and cancel, on the memory Store with the fake Provider.

func newCheckoutEnv(t *testing.T) *flowEnv {
	t.Helper()
	e := newFlowEnv(t)
	err := e.svc.Store().CreateMerchant(context.Background(), &paykit.Merchant{ID: "mch_1", Name: "Kedai Kopi", CreatedAt: e.clock.Now()})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func (e *flowEnv) createCheckout(t *testing.T, key string, req paykit.CreateCheckoutRequest) paykit.Checkout {
	t.Helper()
	resp, err := answertest.From(e.svc.CreateCheckout(context.Background(), e.test, key, req))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Status != 201 {
		t.Fatalf("create checkout: %d %s", resp.Status, resp.Body)
	}
	var co paykit.Checkout
	if err := resp.Decode(&co); err != nil {
		t.Fatal(err)
	}
	return co
}

func checkoutToken(co paykit.Checkout) string {
	_, token, _ := strings.Cut(co.URL, "/pay/checkouts/")
	return token
}

func TestCheckoutGoAPI(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	e := newCheckoutEnv(t)
	co := e.createCheckout(t, "co-1", paykit.CreateCheckoutRequest{
		Amount: 15000, Currency: "MYR", Country: "MY", MerchantReference: "order-1",
		ReturnURL: "https://shop.example/done?o=1", Customer: map[string]string{"name": "Aisyah"},
	})
	is.Equal(co.Status, paykit.CheckoutOpen)
	is.Equal(co.Amount, int64(15000))
	is.Equal(co.PaymentStatus, paykit.PaymentRequiresPaymentMethod)
	is.Equal(co.ProviderStatus, "")
	is.True(co.ProcessingStaleAt == nil)
	is.Equal(co.ExpiresAt, e.clock.Now().Add(24*time.Hour))
	is.True(strings.HasPrefix(co.URL, "https://pay.example/pay/checkouts/"))
	is.Equal(e.svc.CheckoutReturnURL(&co), "https://shop.example/done?checkout_id="+co.ID+"&o=1")

	got, err := e.svc.GetCheckout(ctx, e.test, co.ID)
	is.NoErr(err)
	is.Equal(got.URL, co.URL)
	is.Equal(got.PaymentIntentID, co.PaymentIntentID)
	_, err = e.svc.GetCheckout(ctx, e.live, co.ID)
	is.Equal(paykit.ErrorCode(err), paykit.CodeNotFound)
	page, err := e.svc.ListCheckouts(ctx, e.test, paykit.ListParams[paykit.CheckoutStatus]{Statuses: []paykit.CheckoutStatus{paykit.CheckoutOpen}})
	is.NoErr(err)
	is.Equal(len(page.Data), 1)
	is.Equal(page.Data[0].URL, co.URL)

	// The payer's side: the merchant's name, the eligible methods.
	token := checkoutToken(co)
	pc, err := e.svc.OpenCheckout(ctx, token)
	is.NoErr(err)
	is.Equal(pc.MerchantName, "Kedai Kopi")
	is.Equal(len(pc.Methods), 2) // FPX and TNG
	is.Equal(pc.Methods[0].Method, "FPX")
	is.Equal(pc.Intent.Status, paykit.PaymentRequiresPaymentMethod)
	for _, bad := range []string{token[:len(token)-1] + "x", "x" + token[1:], "", "garbage"} {
		_, err := e.svc.OpenCheckout(ctx, bad)
		is.True(errors.Is(err, paykit.ErrLinkInvalid))
	}

	// Payer data the route requires is checked before anything starts.
	_, err = e.svc.PayCheckout(ctx, token, paykit.PayCheckoutRequest{PaymentMethod: "FPX", SubmissionID: "s-0"})
	is.Equal(paykit.ErrorCode(err), paykit.CodeMissingRequiredField) // email
	is.Equal(e.provider.createCalls(co.PaymentIntentID), 0)

	// Ten concurrent submits of one form start one Provider attempt and
	// all answer with it; ten later submits of other renders start none.
	submit := func(sub string) error {
		_, err := e.svc.PayCheckout(ctx, token, paykit.PayCheckoutRequest{
			PaymentMethod: "FPX", Customer: map[string]string{"email": "aisyah@example.com"},
			Options: map[string]string{"bank": "MAYBANK"}, SubmissionID: sub,
		})
		return err
	}
	for _, subs := range [][]string{
		{"s-same", "s-same", "s-same", "s-same", "s-same", "s-same", "s-same", "s-same", "s-same", "s-same"},
		{"s-1", "s-2", "s-3", "s-4", "s-5", "s-6", "s-7", "s-8", "s-9", "s-10"},
	} {
		var wg sync.WaitGroup
		errs := make([]error, len(subs))
		for i, sub := range subs {
			wg.Go(func() { errs[i] = submit(sub) })
		}
		wg.Wait()
		for i, err := range errs {
			if want := subs[i] != "s-same"; want != (paykit.ErrorCode(err) == paykit.CodeInvalidState) {
				t.Errorf("submit %s: %v", subs[i], err)
			}
		}
	}
	is.Equal(e.provider.createCalls(co.PaymentIntentID), 1)
	pi, err := e.svc.GetPaymentIntent(ctx, e.test, co.PaymentIntentID)
	is.NoErr(err)
	is.Equal(pi.Status, paykit.PaymentRequiresAction)
	is.Equal(pi.PaymentMethod, "FPX")
	is.Equal(pi.Customer, map[string]string{"name": "Aisyah", "email": "aisyah@example.com"}) // the merchant's and the payer's
	is.Equal(pi.PaymentMethodOptions, map[string]string{"bank": "MAYBANK"})
	is.True(strings.HasPrefix(pi.NextAction.URL, "https://pay.example/pay/continue/"))

	// The payer pays; the checkout completes.
	e.provider.approve(co.PaymentIntentID)
	e.clock.Advance(30 * time.Second) // the first inquiry of a waiting payment
	e.drain(t)
	got, err = e.svc.GetCheckout(ctx, e.test, co.ID)
	is.NoErr(err)
	is.Equal(got.Status, paykit.CheckoutCompleted)
	is.Equal(got.PaymentStatus, paykit.PaymentSucceeded)
	is.Equal(got.ProviderStatus, "succeeded")
	is.Equal(got.ChosenMethod, "FPX")
	_, err = answertest.From(e.svc.CancelCheckout(ctx, e.test, "cancel-1", co.ID))
	is.Equal(paykit.ErrorCode(err), paykit.CodeInvalidState)

	// Cancel through the Go API.
	co2 := e.createCheckout(t, "co-2", paykit.CreateCheckoutRequest{Amount: 900, Currency: "MYR", Country: "MY", MerchantReference: "order-2", PaymentMethod: "TNG"})
	resp, err := answertest.From(e.svc.CancelCheckout(ctx, e.test, "cancel-2", co2.ID))
	is.NoErr(err)
	is.Equal(resp.Status, 200)
	var cancelled paykit.Checkout
	is.NoErr(resp.Decode(&cancelled))
	is.Equal(cancelled.Status, paykit.CheckoutCancelled)
	is.Equal(cancelled.PaymentStatus, paykit.PaymentCancelled)
	is.Equal(cancelled.ChosenMethod, "TNG") // frozen
	_, err = e.svc.OpenCheckout(ctx, checkoutToken(co2))
	is.NoErr(err) // the link opens; the app shows it cannot be paid
	_, err = e.svc.PayCheckout(ctx, checkoutToken(co2), paykit.PayCheckoutRequest{PaymentMethod: "TNG", Customer: map[string]string{"name": "A"}})
	is.Equal(paykit.ErrorCode(err), paykit.CodeInvalidState)
	// A frozen checkout takes only its method.
	co3 := e.createCheckout(t, "co-3", paykit.CreateCheckoutRequest{Amount: 900, Currency: "MYR", Country: "MY", MerchantReference: "order-3", PaymentMethod: "TNG"})
	_, err = e.svc.PayCheckout(ctx, checkoutToken(co3), paykit.PayCheckoutRequest{PaymentMethod: "FPX", Customer: map[string]string{"name": "A", "email": "a@example.com"}})
	is.Equal(paykit.ErrorCode(err), paykit.CodeInvalidRequest)

	// Past its expiry the link is dead and the worker expires the checkout.
	e.clock.Advance(24 * time.Hour)
	_, err = e.svc.OpenCheckout(ctx, checkoutToken(co3))
	is.True(errors.Is(err, paykit.ErrLinkInvalid))
	e.drain(t)
	got, err = e.svc.GetCheckout(ctx, e.test, co3.ID)
	is.NoErr(err)
	is.Equal(got.Status, paykit.CheckoutExpired)
	is.Equal(got.FailureCode, paykit.FailureExpired)
}

func TestCreateCheckoutRejects(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	e := newCheckoutEnv(t)
	ok := paykit.CreateCheckoutRequest{Amount: 15000, Currency: "MYR", Country: "MY", MerchantReference: "order-r"}
	for _, tc := range []struct {
		change      func(r *paykit.CreateCheckoutRequest)
		code, param string
	}{
		{func(r *paykit.CreateCheckoutRequest) { r.PaymentMethodOptions = map[string]string{"bank": "MAYBANK"} }, paykit.CodeInvalidRequest, "payment_method_options"},
		{func(r *paykit.CreateCheckoutRequest) { r.PaymentMethod = "PROMPTPAY" }, paykit.CodePaymentMethodUnavailable, "payment_method"},
		{func(r *paykit.CreateCheckoutRequest) { r.Amount, r.PaymentMethod = 600000, "TNG" }, paykit.CodePaymentMethodUnavailable, "payment_method"},
		{func(r *paykit.CreateCheckoutRequest) { r.Country, r.Currency = "TH", "THB" }, paykit.CodePaymentMethodUnavailable, ""},
		{func(r *paykit.CreateCheckoutRequest) { r.Metadata = map[string]string{"k": strings.Repeat("v", 501)} }, paykit.CodeInvalidRequest, "metadata.k"},
	} {
		req := ok
		tc.change(&req)
		_, err := answertest.From(e.svc.CreateCheckout(ctx, e.test, "key", req))
		e := paykit.AsError(err)
		is.Equal(e.Code, tc.code)
		is.Equal(e.Param, tc.param)
	}
	_, err := answertest.From(e.svc.CreateCheckout(ctx, e.test, "key", ok))
	is.NoErr(err) // the rejections stored nothing under the key
}
