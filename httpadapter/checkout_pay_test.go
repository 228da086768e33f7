package httpadapter_test

import (
	"bytes"
	"image/png"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/makiuchi-d/gozxing"
	zxqr "github.com/makiuchi-d/gozxing/qrcode"
	"github.com/matryer/is"

	"github.com/paykit/paykit"
)

// The checkout app (/pay/checkouts/{token}) over real HTTP, on every
// Store, against the sandbox PSP: the payer's browser is a client without
// a cookie jar that shows redirects instead of following them.

// checkoutBody is a valid create-checkout request for MY/MYR.
func checkoutBody(amount, ref string) map[string]any {
	return map[string]any{"amount": amount, "currency": "MYR", "country": "MY", "merchant_reference": ref}
}

// createCheckout creates a checkout through the merchant API.
func (e *payEnv) createCheckout(k keys, key string, body map[string]any) map[string]any {
	e.t.Helper()
	r := e.do("POST", "/v1/checkouts", body, basic(k), idem(key))
	if r.status != http.StatusCreated && r.status != http.StatusOK {
		e.t.Fatalf("create checkout: %d %s", r.status, r.body)
	}
	return r.json(e.t)
}

func (e *payEnv) checkout(k keys, id string) map[string]any {
	e.t.Helper()
	r := e.do("GET", "/v1/checkouts/"+id, nil, basic(k))
	if r.status != http.StatusOK {
		e.t.Fatalf("get checkout: %d %s", r.status, r.body)
	}
	return r.json(e.t)
}

// payerForm is a rendered checkout form: its hidden fields and the CSRF
// cookie that came with it.
type payerForm struct {
	csrf, submission string
	cookie           *http.Cookie
	page             response
}

var (
	hiddenRe = regexp.MustCompile(`<input type="hidden" name="([a-z_]+)" value="([^"]*)">`)
)

// openForm loads the checkout page and expects the payment form.
func (e *payEnv) openForm(checkoutURL string) payerForm {
	e.t.Helper()
	page := e.visit("GET", checkoutURL)
	if page.status != http.StatusOK {
		e.t.Fatalf("checkout page: %d %s", page.status, page.body)
	}
	f := payerForm{page: page}
	for _, m := range hiddenRe.FindAllSubmatch(page.body, -1) {
		switch string(m[1]) {
		case "csrf_token":
			f.csrf = string(m[2])
		case "submission_id":
			f.submission = string(m[2])
		}
	}
	for _, c := range (&http.Response{Header: page.header}).Cookies() {
		if c.Name == "paykit_checkout_csrf" {
			f.cookie = c
		}
	}
	if f.csrf == "" || f.submission == "" || f.cookie == nil {
		e.t.Fatalf("checkout page has no form (csrf %q, submission %q, cookie %v):\n%s", f.csrf, f.submission, f.cookie, page.body)
	}
	return f
}

// submit posts the form with values added, sending the cookie unless
// cookie is nil, and headers as a browser would.
func (e *payEnv) submit(checkoutURL string, f payerForm, cookie *http.Cookie, values url.Values, headers ...header) response {
	e.t.Helper()
	form := url.Values{"csrf_token": {f.csrf}, "submission_id": {f.submission}}
	for k, v := range values {
		form[k] = v
	}
	req, err := http.NewRequest("POST", checkoutURL, strings.NewReader(form.Encode()))
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	if cookie != nil {
		req.AddCookie(&http.Cookie{Name: cookie.Name, Value: cookie.Value})
	}
	for _, h := range headers {
		h(req.Header)
	}
	resp, err := e.browser.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	checkPayHeaders(e.t, resp.Header)
	return response{resp.StatusCode, resp.Header, body}
}

// fpxPayer is what a payer enters for FPX.
func fpxPayer(bank string) url.Values {
	return url.Values{
		"payment_method": {"FPX"}, "options.FPX.bank": {bank},
		"customer.name": {"Aisyah Rahman"}, "customer.email": {"aisyah@example.com"},
	}
}

// resolve resolves a Location against the URL it answered.
func resolve(t *testing.T, base, loc string) string {
	t.Helper()
	b, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	u, err := b.Parse(loc)
	if err != nil {
		t.Fatal(err)
	}
	return u.String()
}

// tokenOf is the token of a checkout_url.
func tokenOf(checkoutURL string) string {
	return checkoutURL[strings.LastIndex(checkoutURL, "/")+1:]
}

func TestCheckoutPageForm(t *testing.T) {
	forEachStore(t, func(t *testing.T, open func(t *testing.T) paykit.Store) {
		is := is.New(t)
		e := newPayEnv(t, open)
		k := e.merchant(paykit.Test)
		co := e.createCheckout(k, "co-form", checkoutBody("15000", "order-co-form"))
		cu := co["checkout_url"].(string)
		is.True(strings.HasPrefix(cu, e.srv.URL+"/pay/checkouts/"))

		f := e.openForm(cu)
		body := string(f.page.body)
		is.Equal(f.page.header.Get("Content-Type"), "text/html; charset=utf-8")
		// The page's scripts run under its nonce and may only fetch the
		// status from its own origin.
		csp := f.page.header.Get("Content-Security-Policy")
		is.True(regexp.MustCompile(`script-src 'nonce-[0-9a-f]{32}'; connect-src 'self';`).MatchString(csp))
		is.True(strings.Contains(body, `<script nonce="`))
		is.True(!strings.Contains(body, "<script>"))
		// The CSRF cookie: HttpOnly, SameSite=Lax, for this checkout's path only.
		is.True(f.cookie.HttpOnly)
		is.Equal(f.cookie.SameSite, http.SameSiteLaxMode)
		is.Equal(f.cookie.Path, "/pay/checkouts/"+tokenOf(cu))
		is.Equal(f.cookie.Value, f.csrf)
		// What the payer sees: merchant, amount, reference, every eligible
		// MY method, the FPX bank list and the payer fields.
		is.True(strings.Contains(body, `<p class="merchant">Kedai `))
		is.True(strings.Contains(body, `<p class="amount">MYR 150.00</p>`))
		is.True(strings.Contains(body, "order-co-form"))
		for _, m := range []string{"FPX", "TNG", "BOOST", "CARD", "BANK_TRANSFER", "DUITNOW_QR"} {
			is.True(strings.Contains(body, `name="payment_method" id="method-`+strings.ToLower(m)+`" value="`+m+`"`))
		}
		is.True(!strings.Contains(body, `value="PROMPTPAY"`)) // a TH method
		is.True(strings.Contains(body, `<option value="MAYBANK">Maybank2u</option>`))
		is.True(strings.Contains(body, `name="customer.name"`))
		is.True(strings.Contains(body, `name="customer.email"`))
		checkLabels(t, f.page.body)
		// Every render has its own submission id.
		is.True(e.openForm(cu).submission != f.submission)
		// Reading the page contacted no Provider.
		is.Equal(e.psp.PaymentCount(), 0)
	})
}

// checkLabels asserts that every form control of page has a label.
func checkLabels(t *testing.T, page []byte) {
	t.Helper()
	for _, m := range regexp.MustCompile(`<(?:input|select|textarea)\b[^>]*\bid="([^"]+)"`).FindAllSubmatch(page, -1) {
		if !bytes.Contains(page, []byte(`<label for="`+string(m[1])+`"`)) {
			t.Errorf("control %s has no label", m[1])
		}
	}
	for _, m := range regexp.MustCompile(`<(?:input|select)\b[^>]*>`).FindAll(page, -1) {
		if !bytes.Contains(m, []byte(`type="hidden"`)) && !bytes.Contains(m, []byte(` id="`)) {
			t.Errorf("control without id (and so without label): %s", m)
		}
	}
}

// A frozen method: the form offers only that method.
func TestCheckoutPageFrozenMethod(t *testing.T) {
	forEachStore(t, func(t *testing.T, open func(t *testing.T) paykit.Store) {
		is := is.New(t)
		e := newPayEnv(t, open)
		k := e.merchant(paykit.Test)
		co := e.createCheckout(k, "co-frozen", with(checkoutBody("15000", "order-co-frozen"), map[string]any{
			"payment_method": "FPX", "payment_method_options": map[string]any{"bank": "CIMB"},
		}))
		f := e.openForm(co["checkout_url"].(string))
		body := string(f.page.body)
		is.Equal(strings.Count(body, `name="payment_method"`), 1)
		is.True(strings.Contains(body, `value="FPX" checked`))
		is.True(strings.Contains(body, `<option value="CIMB" selected>`)) // the merchant's bank is preselected
	})
}

// The FPX flow over HTTP: submit → continuation → PSP → back → return_url
// with checkout_id. A double submit and a resubmit after the back button
// start no second attempt.
func TestCheckoutSubmitRedirect(t *testing.T) {
	forEachStore(t, func(t *testing.T, open func(t *testing.T) paykit.Store) {
		is := is.New(t)
		e := newPayEnv(t, open)
		k := e.merchant(paykit.Test)
		co := e.createCheckout(k, "co-fpx", with(checkoutBody("15000", "order-co-fpx"), map[string]any{
			"return_url": "https://shop.example/done?order=7",
		}))
		cu, id := co["checkout_url"].(string), co["id"].(string)
		f := e.openForm(cu)

		r := e.submit(cu, f, f.cookie, fpxPayer("MAYBANK"))
		is.Equal(r.status, http.StatusSeeOther)
		is.Equal(r.header.Get("Location"), tokenOf(cu)+"?continue=1")
		is.Equal(e.psp.PaymentCount(), 1)
		piID := co["payment_intent_id"].(string)
		is.Equal(e.intentStatus(k, piID), "requires_action")

		// The page right after the submit follows the redirect at once; the
		// link goes through the service's continuation URL.
		page := e.visit("GET", resolve(t, cu, r.header.Get("Location")))
		is.Equal(page.status, http.StatusOK)
		m := regexp.MustCompile(`<meta http-equiv="refresh" content="0; url=(\.\./continue/[^"]+)">`).FindSubmatch(page.body)
		is.True(m != nil)
		cont := resolve(t, cu, string(m[1]))
		is.True(strings.HasPrefix(cont, e.srv.URL+"/pay/continue/"))
		is.True(!bytes.Contains(page.body, []byte(e.pspURL)))

		// Double submit (same submission id) and a resubmit of an older
		// render: both only show the page again.
		is.Equal(e.submit(cu, f, f.cookie, fpxPayer("MAYBANK")).header.Get("Location"), tokenOf(cu))
		is.Equal(e.submit(cu, f, f.cookie, fpxPayer("CIMB")).status, http.StatusSeeOther)
		is.Equal(e.psp.PaymentCount(), 1)
		// Back on the checkout page later: the next action, no refresh to
		// the Provider (no loop for the back button).
		page = e.visit("GET", cu)
		is.True(!bytes.Contains(page.body, []byte(`http-equiv="refresh" content="0`)))
		is.True(bytes.Contains(page.body, []byte(`class="button" href="../continue/`)))

		// The payer approves at the PSP and comes back.
		back := e.payerChooses(e.visit("GET", cont).header.Get("Location"), "approve")
		for range 5 {
			r := e.visit("GET", back)
			if r.status != http.StatusSeeOther {
				t.Fatalf("GET %s: %d %s", back, r.status, r.body)
			}
			back = resolve(t, back, r.header.Get("Location"))
			if strings.HasPrefix(back, "https://shop.example/") {
				break
			}
			e.drain()
		}
		is.Equal(back, "https://shop.example/done?checkout_id="+id+"&order=7")
		is.Equal(e.intentStatus(k, piID), "succeeded")
		is.Equal(e.checkout(k, id)["status"], "completed")
		// The checkout page now sends the payer to return_url too.
		r = e.visit("GET", cu)
		is.Equal(r.status, http.StatusSeeOther)
		is.Equal(r.header.Get("Location"), back)
		is.Equal(e.psp.PaymentCount(), 1)
	})
}

// Form rules: CSRF (cookie, cross-site), a method not offered, missing
// payer data. None starts an attempt.
func TestCheckoutSubmitRejected(t *testing.T) {
	forEachStore(t, func(t *testing.T, open func(t *testing.T) paykit.Store) {
		is := is.New(t)
		e := newPayEnv(t, open)
		k := e.merchant(paykit.Test)
		co := e.createCheckout(k, "co-bad", checkoutBody("15000", "order-co-bad"))
		cu := co["checkout_url"].(string)
		f := e.openForm(cu)

		// No cookie, another cookie, a cross-site post: 403, a fresh form.
		other := &http.Cookie{Name: f.cookie.Name, Value: strings.Repeat("ab", 16)}
		for _, r := range []response{
			e.submit(cu, f, nil, fpxPayer("MAYBANK")),
			e.submit(cu, f, other, fpxPayer("MAYBANK")),
			e.submit(cu, f, f.cookie, fpxPayer("MAYBANK"), withHeader("Sec-Fetch-Site", "cross-site")),
		} {
			is.Equal(r.status, http.StatusForbidden)
			is.True(bytes.Contains(r.body, []byte("nothing was paid")))
			is.True(!bytes.Contains(r.body, []byte("aisyah@example.com"))) // nothing of the post is echoed
		}
		// A method the checkout does not offer.
		r := e.submit(cu, f, f.cookie, url.Values{"payment_method": {"PROMPTPAY"}, "customer.name": {"A"}})
		is.Equal(r.status, http.StatusUnprocessableEntity)
		is.True(bytes.Contains(r.body, []byte(`id="payment_method-error"`)))
		// FPX without the email: the form again, with the error on the field
		// and what was entered kept.
		bad := fpxPayer("MAYBANK")
		bad.Del("customer.email")
		r = e.submit(cu, f, f.cookie, bad)
		is.Equal(r.status, http.StatusUnprocessableEntity)
		is.True(bytes.Contains(r.body, []byte(`role="alert"`)))
		is.True(bytes.Contains(r.body, []byte(`<a href="#customer-email">Enter your email.</a>`)))
		is.True(bytes.Contains(r.body, []byte(`aria-invalid="true" aria-describedby="customer-email-error"`)))
		is.True(bytes.Contains(r.body, []byte(`value="Aisyah Rahman"`)))
		is.True(bytes.Contains(r.body, []byte(`value="FPX" checked`)))
		checkLabels(t, r.body)

		is.Equal(e.psp.PaymentCount(), 0)
		is.Equal(e.intentStatus(k, co["payment_intent_id"].(string)), "requires_payment_method")
	})
}

// PROMPTPAY: the page shows the QR image (served by /pay/qr), follows the
// status, and without a return_url shows its own result page.
func TestCheckoutQRAndResult(t *testing.T) {
	forEachStore(t, func(t *testing.T, open func(t *testing.T) paykit.Store) {
		is := is.New(t)
		e := newPayEnv(t, open)
		k := e.merchant(paykit.Test)
		co := e.createCheckout(k, "co-qr", map[string]any{
			"amount": "25000", "currency": "THB", "country": "TH", "merchant_reference": "order-co-qr",
			"payment_method": "PROMPTPAY",
		})
		cu := co["checkout_url"].(string)
		f := e.openForm(cu)
		r := e.submit(cu, f, f.cookie, url.Values{"payment_method": {"PROMPTPAY"}, "customer.name": {"Somchai"}})
		is.Equal(r.status, http.StatusSeeOther)
		is.Equal(r.header.Get("Location"), tokenOf(cu))

		page := e.visit("GET", cu)
		is.Equal(page.status, http.StatusOK)
		m := regexp.MustCompile(`<img class="qr" src="(\.\./qr/[^"]+\.png)"`).FindSubmatch(page.body)
		is.True(m != nil)
		img := e.visit("GET", resolve(t, cu, string(m[1])))
		is.Equal(img.header.Get("Content-Type"), "image/png")
		decoded, err := png.Decode(bytes.NewReader(img.body))
		is.NoErr(err)
		bmp, err := gozxing.NewBinaryBitmapFromImage(decoded)
		is.NoErr(err)
		res, err := zxqr.NewQRCodeReader().Decode(bmp, nil)
		is.NoErr(err)
		pi := e.do("GET", "/v1/payment_intents/"+co["payment_intent_id"].(string), nil, basic(k)).json(t)
		is.Equal(res.GetText(), pi["next_action"].(map[string]any)["qr_data"])
		// Without JavaScript the page refreshes itself; with it, the script
		// asks the status endpoint.
		is.True(bytes.Contains(page.body, []byte(`<noscript><meta http-equiv="refresh" content="5"></noscript>`)))
		st := e.visit("GET", cu+"/status")
		is.Equal(st.status, http.StatusOK)
		is.Equal(st.json(t)["payment_status"], "requires_action")

		// The payer pays in their banking app (the sandbox test helper).
		is.Equal(e.do("POST", "/v1/test_helpers/payment_intents/"+pi["id"].(string)+"/approve", nil, basic(k)).status, http.StatusOK)
		e.drain()
		is.Equal(e.visit("GET", cu+"/status").json(t)["payment_status"], "succeeded")
		page = e.visit("GET", cu)
		is.Equal(page.status, http.StatusOK) // no return_url: the result page
		is.True(bytes.Contains(page.body, []byte("Payment successful")))
		is.True(bytes.Contains(page.body, []byte("THB 250.00")))
		is.True(!bytes.Contains(page.body, []byte("http-equiv=\"refresh\"")))
	})
}

// A payment declined at creation (amount ending in 901): the page shows
// the failure.
func TestCheckoutDeclined(t *testing.T) {
	forEachStore(t, func(t *testing.T, open func(t *testing.T) paykit.Store) {
		is := is.New(t)
		e := newPayEnv(t, open)
		k := e.merchant(paykit.Test)
		co := e.createCheckout(k, "co-901", checkoutBody("15901", "order-co-901"))
		cu := co["checkout_url"].(string)
		f := e.openForm(cu)
		is.Equal(e.submit(cu, f, f.cookie, fpxPayer("MAYBANK")).status, http.StatusSeeOther)
		page := e.visit("GET", cu)
		is.Equal(page.status, http.StatusOK)
		is.True(bytes.Contains(page.body, []byte("Payment failed")))
		is.Equal(e.intentStatus(k, co["payment_intent_id"].(string)), "failed")
	})
}

// A changed, foreign or expired link gets the same 404 page, which names
// nothing of the checkout.
func TestCheckoutBadLinks(t *testing.T) {
	forEachStore(t, func(t *testing.T, open func(t *testing.T) paykit.Store) {
		is := is.New(t)
		e := newPayEnv(t, open)
		k := e.merchant(paykit.Test)
		co := e.createCheckout(k, "co-links", checkoutBody("15000", "order-co-links"))
		cu := co["checkout_url"].(string)
		tok := tokenOf(cu)
		flip := func(s string, i int) string {
			c := byte('A')
			if s[i] == 'A' {
				c = 'B'
			}
			return s[:i] + string(c) + s[i+1:]
		}
		pi := e.createIntent(k, "co-links-pi", fpxBody("15000", "order-co-links-pi"))
		foreign := tokenOf(pi["next_action"].(map[string]any)["url"].(string)) // a continuation token

		base := e.srv.URL + "/pay/checkouts/"
		var first []byte
		check := func(r response) {
			t.Helper()
			is.Equal(r.status, http.StatusNotFound)
			is.True(bytes.Contains(r.body, []byte("This payment link is invalid or has expired.")))
			for _, leak := range []string{co["id"].(string), "Kedai", "150.00", "order-co-links", "MYR"} {
				is.True(!bytes.Contains(r.body, []byte(leak)))
			}
			// Every bad link looks the same (but for the nonce).
			norm := regexp.MustCompile(`nonce="[0-9a-f]+"`).ReplaceAll(r.body, nil)
			if first == nil {
				first = norm
			}
			is.Equal(string(norm), string(first))
		}
		check(e.visit("GET", base+flip(tok, 3)))           // payload changed
		check(e.visit("GET", base+flip(tok, len(tok)-2)))  // signature changed
		check(e.visit("GET", base+foreign))                // a token of another purpose
		check(e.visit("GET", base+"not-a-token"))          // garbage
		check(e.visit("GET", base+flip(tok, 3)+"/status")) // the status too
		check(e.submit(base+flip(tok, 3), payerForm{csrf: "x", submission: "y"}, nil, fpxPayer("MAYBANK")))

		// Expired: past the checkout's expiry.
		exp, err := time.Parse(time.RFC3339, co["expires_at"].(string))
		is.NoErr(err)
		e.clock.Set(exp.Add(time.Second))
		check(e.visit("GET", cu))
	})
}

// TestCheckoutReturnSaysConfirming: a payer back from the Provider before
// the outcome arrives is told the payment is being confirmed, not asked to
// pay again, for about a minute of refreshes.
func TestCheckoutReturnSaysConfirming(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	e := newPayEnv(t, onMemory)
	k := e.merchant(paykit.Test)
	co := e.createCheckout(k, "co-confirm", checkoutBody("150000", "order-co-confirm"))
	cu := co["checkout_url"].(string)
	f := e.openForm(cu)
	r := e.submit(cu, f, f.cookie, fpxPayer("MAYBANK"))
	is.Equal(r.status, http.StatusSeeOther)
	page := e.visit("GET", resolve(t, cu, r.header.Get("Location")))
	m := regexp.MustCompile(`url=(\.\./continue/[^"]+)">`).FindSubmatch(page.body)
	is.True(m != nil)
	cont := resolve(t, cu, string(m[1]))
	back := e.payerChooses(e.visit("GET", cont).header.Get("Location"), "approve")
	is.Equal(e.intentStatus(k, co["payment_intent_id"].(string)), "requires_action") // the outcome is on its way

	r = e.visit("GET", back)
	is.Equal(r.status, http.StatusSeeOther)
	returned := resolve(t, back, r.header.Get("Location"))
	is.Equal(returned, cu+"?checks=0")
	body := string(e.visit("GET", returned).body)
	is.True(strings.Contains(body, `<h1 class="status status-wait">Confirming your payment</h1>`))
	is.True(strings.Contains(body, "We are confirming your payment with your bank or wallet."))
	is.True(!strings.Contains(body, `class="button"`)) // no call to pay again
	is.True(strings.Contains(body, `Did not finish paying? <a href="../continue/`))
	is.True(strings.Contains(body, `<meta http-equiv="refresh" content="5;url=?checks=1">`))
	is.True(strings.Contains(body, `<a href="?checks=1">Check now</a>`))
	confirmFor := regexp.MustCompile(`location\.replace\("([^"]*)"\); }, +(\d+) +\);`)
	is.Equal(confirmFor.FindStringSubmatch(body)[1:], []string{tokenOf(cu), "60000"})
	body = string(e.visit("GET", cu+"?checks=11").body)
	is.True(strings.Contains(body, "Confirming your payment"))
	is.True(strings.Contains(body, `content="5;url=?checks=12"`))
	is.Equal(confirmFor.FindStringSubmatch(body)[2], "5000")

	// A minute without an outcome: the payer may not have finished.
	body = string(e.visit("GET", cu+"?checks=12").body)
	is.True(strings.Contains(body, `<h1 class="status status-wait">Continue to pay</h1>`))
	is.True(strings.Contains(body, `class="button" href="../continue/`))
	is.True(!strings.Contains(body, "Confirming"))
	// Without the count, the page is as it always was.
	body = string(e.visit("GET", cu).body)
	is.True(strings.Contains(body, "Continue to pay"))
	is.True(!strings.Contains(body, "Confirming"))
	is.True(strings.Contains(body, `<meta http-equiv="refresh" content="5">`))

	e.drain()
	body = string(e.visit("GET", cu+"?checks=3").body)
	is.True(strings.Contains(body, "Payment successful"))
}
