package httpadapter_test

import (
	"html"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/matryer/is"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/internal/browsertest"
)

// The checkout app in a real browser: the payer's whole way from the
// checkout_url to the merchant's return_url or the app's own result page.

// shop is the merchant's site: its return page shows what it was given.
func shop(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(`<!doctype html><html lang="en"><title>Shop</title><h1>Thank you for your order</h1><p id="checkout">` +
			html.EscapeString(r.URL.Query().Get("checkout_id")) + `</p>`))
	}))
	t.Cleanup(srv.Close)
	return srv
}

// docsScreenshot copies a screenshot into docs/ (the README shows it) when
// PAYKIT_UPDATE_DOCS=1.
func docsScreenshot(t *testing.T, src, name string) {
	t.Helper()
	if os.Getenv("PAYKIT_UPDATE_DOCS") != "1" {
		return
	}
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile("../docs/"+name, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// fillFPX chooses FPX and fills the form as a payer does.
func fillFPX(b *browsertest.Browser) {
	b.Click("#method-fpx")
	b.SetValue("#bank-fpx", "MAYBANK")
	b.Type("#customer-name", "Aisyah Rahman")
	b.Type("#customer-email", "aisyah@example.com")
}

// Redirect method (FPX): choose, fill in, pay, approve on the sandbox
// page, land on the merchant's return_url with checkout_id. The back
// button from the bank's page shows the checkout again without sending
// the payer on by itself or starting a second attempt.
func TestBrowserCheckoutRedirect(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	e := newBrowserEnv(t)
	m, err := e.svc.CreateMerchant(e.ctx, "test", "Kedai Kopi Aisyah") // the name the README's screenshot shows
	is.NoErr(err)
	k := e.keyFor(m.ID, paykit.Test)
	s := shop(t)
	co := e.createCheckout(k, "bco-fpx", with(checkoutBody("15000", "order-1042"), map[string]any{
		"return_url": s.URL + "/orders/1042/done",
	}))
	b := e.b
	b.Navigate(co["checkout_url"].(string))
	b.WaitFor("form.checkout", pageWait)
	is.Equal(b.Text(".amount"), "MYR 150.00")
	// Without a choice no method's fields show; choosing FPX shows its bank
	// list (CSS only).
	is.True(!browsertest.Eval[bool](b, `document.getElementById("bank-fpx").offsetParent !== null`))
	fillFPX(b)
	is.True(browsertest.Eval[bool](b, `document.getElementById("bank-fpx").offsetParent !== null`))
	docsScreenshot(t, b.Screenshot("checkout-form"), "checkout.png")

	b.ClickAndLoad("button[type=submit]")
	psp := regexp.MustCompile(`^` + regexp.QuoteMeta(e.pspURL) + `/`)
	b.WaitURL(psp, pageWait)
	is.Equal(b.Text("h1"), "MYR 150.00")

	// Back: the checkout page with its next action, and it stays there.
	b.Do(chromedp.NavigateBack())
	b.WaitFor("a.button", pageWait)
	is.Equal(b.Text("h1"), "Continue to pay")
	time.Sleep(time.Second)
	is.True(strings.HasPrefix(b.URL(), co["checkout_url"].(string)))
	b.ClickAndLoad("a.button")
	b.WaitURL(psp, pageWait)
	is.Equal(e.psp.PaymentCount(), 1)

	b.ClickAndLoad("button.approve")
	u := b.WaitURL(regexp.MustCompile(`^`+regexp.QuoteMeta(s.URL)+`/orders/1042/done\?`), pageWait)
	is.True(strings.Contains(u, "checkout_id="+co["id"].(string)))
	is.Equal(b.Text("#checkout"), co["id"].(string))
	b.Screenshot("checkout-redirect-return-url")
	is.Equal(e.intentStatus(k, co["payment_intent_id"].(string)), "succeeded")
	is.Equal(e.psp.PaymentCount(), 1)
}

// PROMPTPAY (frozen): the QR code shows as an image; the payer pays in the
// banking app (the sandbox test helper) and the page moves on by itself to
// the result page (no return_url).
func TestBrowserCheckoutPromptPay(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	e := newBrowserEnv(t)
	k := e.merchant(paykit.Test)
	co := e.createCheckout(k, "bco-qr", map[string]any{
		"amount": "25000", "currency": "THB", "country": "TH", "merchant_reference": "order-2077",
		"payment_method": "PROMPTPAY",
	})
	b := e.b
	b.Navigate(co["checkout_url"].(string))
	b.WaitFor("form.checkout", pageWait)
	b.Type("#customer-name", "Somchai Jaidee")
	b.ClickAndLoad("button[type=submit]")
	b.WaitFor("img.qr", pageWait)
	is.Equal(b.Text("h1"), "Scan to pay")
	// The image loaded: a 320×320 PNG from /pay/qr.
	is.Equal(browsertest.Eval[int](b, `document.querySelector("img.qr").naturalWidth`), 320)
	b.Screenshot("checkout-promptpay-qr")

	r := e.do("POST", "/v1/test_helpers/payment_intents/"+co["payment_intent_id"].(string)+"/approve", nil, basic(k))
	is.Equal(r.status, http.StatusOK)
	b.WaitFor("h1.status-ok", pageWait)
	is.Equal(b.Text("h1"), "Payment successful")
	is.Equal(b.Text(".amount"), "THB 250.00")
	b.Screenshot("checkout-promptpay-succeeded")
}

// Declined on the sandbox page: the app's own result page says so.
func TestBrowserCheckoutDeclined(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	e := newBrowserEnv(t)
	k := e.merchant(paykit.Test)
	co := e.createCheckout(k, "bco-decline", checkoutBody("8800", "order-3003"))
	b := e.b
	b.Navigate(co["checkout_url"].(string))
	b.WaitFor("form.checkout", pageWait)
	fillFPX(b)
	b.ClickAndLoad("button[type=submit]")
	b.WaitURL(regexp.MustCompile(`^`+regexp.QuoteMeta(e.pspURL)+`/`), pageWait)
	b.ClickAndLoad("button.decline")
	b.WaitFor("h1.status-bad", pageWait)
	is.Equal(b.Text("h1"), "Payment failed")
	b.Screenshot("checkout-declined")
	is.Equal(e.intentStatus(k, co["payment_intent_id"].(string)), "failed")
}

// A tampered link: the error page, nothing about the checkout.
func TestBrowserCheckoutTamperedLink(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	e := newBrowserEnv(t)
	k := e.merchant(paykit.Test)
	co := e.createCheckout(k, "bco-tampered", checkoutBody("15000", "order-4004"))
	cu := co["checkout_url"].(string)
	i := strings.LastIndex(cu, "/") + 4
	c := "A"
	if cu[i] == 'A' {
		c = "B"
	}
	b := e.b
	b.Navigate(cu[:i] + c + cu[i+1:])
	is.Equal(b.Text("h1"), "Link invalid or expired")
	text := browsertest.Eval[string](b, `document.body.innerText`)
	is.True(!strings.Contains(text, "150.00"))
	is.True(!strings.Contains(text, "Kedai"))
	b.Screenshot("checkout-tampered-link")
}
