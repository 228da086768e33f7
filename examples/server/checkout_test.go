package main

import (
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"
)

var (
	hiddenField = regexp.MustCompile(`<input type="hidden" name="([a-z_]+)" value="([^"]*)">`)
	refreshTo   = regexp.MustCompile(`<meta http-equiv="refresh" content="0; url=([^"]+)">`)
)

// TestServerCheckout walks a hosted checkout over real HTTP: -checkout-ttl
// sets its expiry, the payer opens checkout_url, pays with FPX at the
// sandbox PSP and lands on the merchant's return_url with checkout_id.
func TestServerCheckout(t *testing.T) {
	is := is.New(t)
	s := start(t, "-db", "memory", "-addr", "127.0.0.1:0", "-worker-interval", "50ms", "-sandbox-delay", "100ms",
		"-checkout-ttl", "90m")
	status, _, raw := call(t, "POST", s.url+"/v1/checkouts", `{"amount":"15000","currency":"MYR","country":"MY",
		"merchant_reference":"order-co-1","return_url":"https://shop.example/done"}`, func(r *http.Request) {
		r.SetBasicAuth(s.public, s.secret)
		r.Header.Set("Idempotency-Key", "co-1")
	})
	is.Equal(status, http.StatusCreated)
	var co struct {
		ID, Status, CheckoutURL, PaymentStatus string
		CreatedAt, ExpiresAt                   time.Time
	}
	is.NoErr(json.Unmarshal(raw, &struct {
		ID            *string    `json:"id"`
		Status        *string    `json:"status"`
		CheckoutURL   *string    `json:"checkout_url"`
		PaymentStatus *string    `json:"payment_status"`
		CreatedAt     *time.Time `json:"created_at"`
		ExpiresAt     *time.Time `json:"expires_at"`
	}{&co.ID, &co.Status, &co.CheckoutURL, &co.PaymentStatus, &co.CreatedAt, &co.ExpiresAt}))
	is.Equal(co.Status, "open")
	is.Equal(co.PaymentStatus, "requires_payment_method")
	is.Equal(co.ExpiresAt.Sub(co.CreatedAt), 90*time.Minute) // -checkout-ttl
	is.True(strings.HasPrefix(co.CheckoutURL, s.url+"/pay/checkouts/"))

	// The form, with its CSRF cookie.
	status, h, body := visit(t, "GET", co.CheckoutURL)
	is.Equal(status, http.StatusOK)
	is.True(strings.Contains(body, "MYR 150.00"))
	form := url.Values{"payment_method": {"FPX"}, "options.FPX.bank": {"MAYBANK"},
		"customer.name": {"Aisyah Rahman"}, "customer.email": {"aisyah@example.com"}}
	for _, m := range hiddenField.FindAllStringSubmatch(body, -1) {
		form.Set(m[1], m[2])
	}
	cookie := (&http.Response{Header: h}).Cookies()
	is.Equal(len(cookie), 1)
	req, err := http.NewRequest("POST", co.CheckoutURL, strings.NewReader(form.Encode()))
	is.NoErr(err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.AddCookie(cookie[0])
	resp, err := browser.Do(req)
	is.NoErr(err)
	resp.Body.Close()
	is.Equal(resp.StatusCode, http.StatusSeeOther)

	// The page after the submit sends the payer on through the service's
	// continuation URL to the PSP, where they approve.
	next, err := url.Parse(co.CheckoutURL)
	is.NoErr(err)
	next, err = next.Parse(resp.Header.Get("Location"))
	is.NoErr(err)
	_, _, body = visit(t, "GET", next.String())
	m := refreshTo.FindStringSubmatch(body)
	is.True(m != nil)
	cont, err := next.Parse(m[1])
	is.NoErr(err)
	status, h, _ = visit(t, "GET", cont.String())
	is.Equal(status, http.StatusSeeOther)
	page, err := url.Parse(h.Get("Location"))
	is.NoErr(err)
	is.True(strings.HasPrefix(page.String(), s.url+"/sandbox/pay/"))
	_, _, body = visit(t, "GET", page.String())
	a := approveForm.FindStringSubmatch(body)
	is.True(a != nil)
	approve, err := page.Parse(a[1])
	is.NoErr(err)
	status, h, _ = visit(t, "POST", approve.String())
	is.Equal(status, http.StatusSeeOther)

	// Back through /pay/return and the checkout page to the return_url.
	back := h.Get("Location")
	deadline := time.Now().Add(15 * time.Second)
	for !strings.HasPrefix(back, "https://shop.example/") {
		is.True(time.Now().Before(deadline))
		status, h, _ = visit(t, "GET", back)
		if status == http.StatusSeeOther {
			back = h.Get("Location")
			continue
		}
		is.Equal(status, http.StatusOK) // the checkout page, still confirming
		time.Sleep(100 * time.Millisecond)
	}
	is.Equal(back, "https://shop.example/done?checkout_id="+co.ID)
	_, _, raw = call(t, "GET", s.url+"/v1/checkouts/"+co.ID, "", basicAuth(s.public, s.secret))
	var got map[string]any
	is.NoErr(json.Unmarshal(raw, &got))
	is.Equal(got["status"], "completed")
	is.Equal(got["payment_status"], "succeeded")
}
