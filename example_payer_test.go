package paykit_test

import (
	"context"
	"fmt"
	"net/url"
	"path"
	"strings"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/store/memory"
)

// linkToken is the token of a payer link: its last path segment.
func linkToken(link string) string {
	u, _ := url.Parse(link)
	return strings.TrimSuffix(path.Base(u.Path), ".png")
}

// A host serving its own checkout page opens the checkout link, shows the
// methods, pays with the payer's choice and later sends the payer back.
func ExampleService_OpenCheckout() {
	e := newExample(memory.New(), paykit.Config{})
	defer e.close()
	ctx := context.Background()
	co, _, err := e.svc.CreateCheckout(ctx, e.p, "order-9", paykit.CreateCheckoutRequest{
		Amount: 2500, Currency: "MYR", Country: "MY", MerchantReference: "order-9", ReturnURL: "https://shop.example/done",
	})
	if err != nil {
		panic(err)
	}
	page, err := e.svc.OpenCheckout(ctx, linkToken(co.URL))
	if err != nil {
		panic(err)
	}
	fmt.Println(page.MerchantName, page.Checkout.Amount, len(page.Methods) > 0)
	_, err = e.svc.OpenCheckout(ctx, "forged")
	fmt.Println(err == paykit.ErrLinkInvalid)
	// Output:
	// Kedai Kopi 2500 true
	// true
}

// PayCheckout starts the checkout's one payment with the payer's choice;
// a second submission returns the same intent.
func ExampleService_PayCheckout() {
	e := newExample(memory.New(), paykit.Config{})
	defer e.close()
	ctx := context.Background()
	co, _, _ := e.svc.CreateCheckout(ctx, e.p, "order-10", paykit.CreateCheckoutRequest{
		Amount: 2500, Currency: "MYR", Country: "MY", MerchantReference: "order-10", ReturnURL: "https://shop.example/done",
	})
	req := paykit.PayCheckoutRequest{PaymentMethod: "TNG", Customer: map[string]string{"name": "Aisyah"}, SubmissionID: "form-1"}
	pi, err := e.svc.PayCheckout(ctx, linkToken(co.URL), req)
	if err != nil {
		panic(err)
	}
	again, _ := e.svc.PayCheckout(ctx, linkToken(co.URL), req)
	fmt.Println(pi.Status, pi.PaymentMethod == "TNG", again.ID == pi.ID)
	fmt.Println(strings.Replace(e.svc.CheckoutReturnURL(co), co.ID, "{checkout}", 1))
	// Output:
	// requires_action true true
	// https://shop.example/done?checkout_id={checkout}
}

// ContinuePayment resolves the continuation link a payment's next action
// carries to the Provider's page: the payer's browser is redirected there;
// merchants never see the Provider's URL.
func ExampleService_ContinuePayment() {
	e := newExample(memory.New(), paykit.Config{})
	defer e.close()
	ctx := context.Background()
	pi, _, err := e.svc.CreatePaymentIntent(ctx, e.p, "order-11", tngPayment("order-11"))
	if err != nil {
		panic(err)
	}
	fmt.Println(pi.NextAction.Type, strings.HasPrefix(pi.NextAction.URL, "https://pay.example/pay/continue/"))
	providerPage, err := e.svc.ContinuePayment(ctx, linkToken(pi.NextAction.URL))
	if err != nil {
		panic(err)
	}
	u, _ := url.Parse(providerPage)
	fmt.Println(u.Hostname()) // the sandbox PSP of this example
	// Output:
	// redirect_to_url true
	// 127.0.0.1
}

// PaymentQRData returns the EMVCo payload behind a QR payment's image link,
// for a host that draws the QR code itself.
func ExampleService_PaymentQRData() {
	e := newExample(memory.New(), paykit.Config{})
	defer e.close()
	ctx := context.Background()
	req := tngPayment("order-12")
	req.PaymentMethod = "DUITNOW_QR"
	pi, _, err := e.svc.CreatePaymentIntent(ctx, e.p, "order-12", req)
	if err != nil {
		panic(err)
	}
	payload, err := e.svc.PaymentQRData(ctx, linkToken(pi.NextAction.ImageURL))
	if err != nil {
		panic(err)
	}
	fmt.Println(pi.NextAction.Type, payload == pi.NextAction.QRData, strings.HasPrefix(payload, "000201"))
	// Output:
	// display_qr_code true true
}

// Store gives a host the Store the Service runs on, to open its own
// transaction around paykit's calls and its own writes.
func ExampleService_Store() {
	e := newExample(memory.New(), paykit.Config{})
	defer e.close()
	ctx := context.Background()
	err := e.svc.Store().InTx(ctx, func(tx paykit.Tx) error {
		m, err := tx.GetMerchant(ctx, "mch_kopi")
		if err != nil {
			return err
		}
		fmt.Println(m.Name)
		return nil
	})
	fmt.Println(err)
	// Output:
	// Kedai Kopi
	// <nil>
}
