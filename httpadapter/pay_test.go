package httpadapter_test

import (
	"bytes"
	"context"
	"image/png"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/makiuchi-d/gozxing"
	zxqr "github.com/makiuchi-d/gozxing/qrcode"
	"github.com/matryer/is"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/httpadapter"
	"github.com/paykit/paykit/store/memory"
)

// The payer pages (/pay), against the real sandbox PSP: the payer's
// browser is a client that shows redirects instead of following them.

// payEnv is a sandbox env with the payer pages mounted at /pay, as
// examples/server mounts them.
type payEnv struct {
	*sandboxEnv
	browser *http.Client
}

func newPayEnv(t *testing.T, open func(t *testing.T) paykit.Store) *payEnv {
	t.Helper()
	e := newSandboxEnv(t, open)
	logger := slog.New(slog.NewJSONHandler(e.logs, nil))
	// ServeMux registration is safe while serving.
	e.srv.Config.Handler.(*http.ServeMux).Handle("/pay/", http.StripPrefix("/pay",
		httpadapter.NewPayHandler(e.svc, httpadapter.PayOptions{Logger: logger, Registerer: e.registry})))
	return &payEnv{sandboxEnv: e, browser: &http.Client{
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

// visit sends a request as the payer's browser: no credentials, and every
// answer of the service must carry the payer pages' security headers.
func (e *payEnv) visit(method, rawURL string) response {
	e.t.Helper()
	req, err := http.NewRequest(method, rawURL, nil)
	if err != nil {
		e.t.Fatal(err)
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
	if strings.HasPrefix(rawURL, e.srv.URL+"/pay/") {
		checkPayHeaders(e.t, resp.Header)
	}
	return response{resp.StatusCode, resp.Header, body}
}

// checkPayHeaders asserts the security headers of every payer page answer.
func checkPayHeaders(t *testing.T, h http.Header) {
	t.Helper()
	csp := h.Get("Content-Security-Policy")
	for _, directive := range []string{
		"default-src 'none'", "img-src 'self'", "form-action 'self'", "frame-ancestors 'none'", "base-uri 'none'",
	} {
		if !strings.Contains(csp, directive) {
			t.Errorf("CSP %q lacks %q", csp, directive)
		}
	}
	if !regexp.MustCompile(`style-src 'self'( 'nonce-[0-9a-f]{32}')?;`).MatchString(csp) {
		t.Errorf("CSP %q: style-src is not 'self' with an optional nonce", csp)
	}
	for name, want := range map[string]string{
		"Referrer-Policy": "no-referrer", "X-Content-Type-Options": "nosniff", "Cache-Control": "no-store",
		"X-Frame-Options": "DENY",
	} {
		if got := h.Get(name); got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	if !strings.HasPrefix(h.Get("Request-Id"), "req_") {
		t.Errorf("Request-Id = %q", h.Get("Request-Id"))
	}
}

// createIntent creates a payment intent through the merchant API and
// returns its projection.
func (e *payEnv) createIntent(k keys, key string, body map[string]any) map[string]any {
	e.t.Helper()
	r := e.do("POST", "/v1/payment_intents", body, basic(k), idem(key))
	if r.status != http.StatusCreated {
		e.t.Fatalf("create: %d %s", r.status, r.body)
	}
	return r.json(e.t)
}

func (e *payEnv) intentStatus(k keys, id string) string {
	e.t.Helper()
	s, _ := e.do("GET", "/v1/payment_intents/"+id, nil, basic(k)).json(e.t)["status"].(string)
	return s
}

// payerChooses acts as the payer on the PSP's page at pageURL: it submits
// the page's approve (or decline) form and returns where the PSP sends the
// browser.
func (e *payEnv) payerChooses(pageURL, choice string) string {
	e.t.Helper()
	page := e.visit("GET", pageURL)
	m := regexp.MustCompile(`<form method="post" action="([^"]*` + choice + `)"`).FindSubmatch(page.body)
	if page.status != http.StatusOK || m == nil {
		e.t.Fatalf("PSP page %s: %d, no %s form:\n%s", pageURL, page.status, choice, page.body)
	}
	base, _ := url.Parse(pageURL)
	action, err := base.Parse(string(m[1]))
	if err != nil {
		e.t.Fatal(err)
	}
	r := e.visit("POST", action.String())
	if r.status != http.StatusSeeOther {
		e.t.Fatalf("PSP %s: %d %s", choice, r.status, r.body)
	}
	return r.header.Get("Location")
}

func TestPayContinueAndReturn(t *testing.T) {
	forEachStore(t, func(t *testing.T, open func(t *testing.T) paykit.Store) {
		is := is.New(t)
		e := newPayEnv(t, open)
		k := e.merchant(paykit.Test)

		// With a return_url: continue → PSP page → approve → /pay/return →
		// the merchant's page with payment_intent added.
		pi := e.createIntent(k, "pay-1", with(fpxBody("15000", "order-pay-1"), map[string]any{
			"return_url": "https://shop.example/return?order=1",
		}))
		id := pi["id"].(string)
		next := pi["next_action"].(map[string]any)["url"].(string)
		is.True(strings.HasPrefix(next, e.srv.URL+"/pay/continue/"))
		r := e.visit("GET", next)
		is.Equal(r.status, http.StatusSeeOther)
		pspPage := r.header.Get("Location")
		is.True(strings.HasPrefix(pspPage, e.pspURL+"/pay/")) // the Provider's payer page
		back := e.payerChooses(pspPage, "approve")
		is.True(strings.HasPrefix(back, e.srv.URL+"/pay/return/")) // the PSP returns the payer to the service
		r = e.visit("GET", back)
		is.Equal(r.status, http.StatusSeeOther)
		is.Equal(r.header.Get("Location"), "https://shop.example/return?order=1&payment_intent="+id)
		e.drain() // the return asked for an inquiry now
		is.Equal(e.intentStatus(k, id), "succeeded")

		// Without one: a result page that refreshes itself until the
		// payment is final.
		pi = e.createIntent(k, "pay-2", fpxBody("2550", "order-pay-2"))
		id = pi["id"].(string)
		r = e.visit("GET", pi["next_action"].(map[string]any)["url"].(string))
		is.Equal(r.status, http.StatusSeeOther)
		back = e.payerChooses(r.header.Get("Location"), "decline")
		r = e.visit("GET", back)
		is.Equal(r.status, http.StatusOK)
		is.Equal(r.header.Get("Content-Type"), "text/html; charset=utf-8")
		page := string(r.body)
		is.True(strings.Contains(page, `<html lang="en">`))
		is.True(strings.Contains(page, "MYR 25.50"))
		is.True(strings.Contains(page, "<h1"))
		is.True(strings.Contains(page, `<meta http-equiv="refresh" content="2;url=?checks=1">`)) // not final yet
		is.True(strings.Contains(page, "Confirming your payment"))                               // the outcome is not in yet
		e.drain()
		r = e.visit("GET", back) // the refresh
		is.Equal(r.status, http.StatusOK)
		page = string(r.body)
		is.True(strings.Contains(page, "Payment failed"))
		is.True(strings.Contains(page, "MYR 25.50"))
		is.True(!strings.Contains(page, `http-equiv="refresh"`)) // final: no more refreshing
		is.True(!strings.Contains(page, e.pspURL))
		is.Equal(e.intentStatus(k, id), "failed")

		// The continuation of a payment that no longer waits for the payer
		// is dead.
		r = e.visit("GET", next)
		is.Equal(r.status, http.StatusNotFound)

		// Tokens never reach the access log.
		logs := e.logs.String()
		is.True(strings.Contains(logs, `"api":"pay"`))
		is.True(strings.Contains(logs, `"path":"/pay/continue/{token}"`))
		for _, link := range []string{next, back} {
			is.True(!strings.Contains(logs, link[strings.LastIndex(link, "/")+1:]))
		}
	})
}

// TestPayReturnSaysConfirming: a payer back from the bank before the
// outcome arrives is told the payment is being confirmed, not that it is
// not completed, while the page refreshes; only after a minute of
// refreshes does it say the payment is not completed yet. Once the
// outcome is in, the page shows it and stops refreshing.
func TestPayReturnSaysConfirming(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	e := newPayEnv(t, onMemory)
	k := e.merchant(paykit.Test)
	pi := e.createIntent(k, "confirm-1", fpxBody("150000", "order-confirm-1"))
	r := e.visit("GET", pi["next_action"].(map[string]any)["url"].(string))
	is.Equal(r.status, http.StatusSeeOther)
	back := e.payerChooses(r.header.Get("Location"), "approve")
	is.Equal(e.intentStatus(k, pi["id"].(string)), "requires_action") // the outcome is on its way

	page := string(e.visit("GET", back).body)
	is.True(strings.Contains(page, "Confirming your payment"))
	is.True(strings.Contains(page, "We are confirming your payment with your bank or wallet."))
	is.True(!strings.Contains(page, "not completed yet"))
	is.True(!strings.Contains(page, "go back to your bank"))
	is.True(strings.Contains(page, "MYR 1,500.00"))
	is.True(strings.Contains(page, `<meta http-equiv="refresh" content="2;url=?checks=1">`))
	is.True(strings.Contains(page, `<a href="?checks=1">Check now</a>`))
	page = string(e.visit("GET", back+"?checks=29").body)
	is.True(strings.Contains(page, "Confirming your payment"))
	is.True(strings.Contains(page, `content="2;url=?checks=30"`))

	// A minute of refreshes without an outcome: the payer may not have
	// finished paying; the page still refreshes.
	page = string(e.visit("GET", back+"?checks=30").body)
	is.True(strings.Contains(page, "Payment not completed yet"))
	is.True(strings.Contains(page, "go back to your bank or wallet"))
	is.True(strings.Contains(page, `content="2;url=?checks=31"`))
	page = string(e.visit("GET", back+"?checks=99999999999999999999").body) // not a number: from the start
	is.True(strings.Contains(page, "Confirming your payment"))

	e.drain()
	page = string(e.visit("GET", back+"?checks=3").body)
	is.True(strings.Contains(page, "Payment successful"))
	is.True(!strings.Contains(page, `http-equiv="refresh"`))
}

// noncePattern matches the per-response nonce, so that error pages can be
// compared.
var noncePattern = regexp.MustCompile(`nonce="[0-9a-f]+"`)

func TestPayBadLinks(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	e := newPayEnv(t, onMemory)
	k := e.merchant(paykit.Test)
	pi := e.createIntent(k, "bad-1", fpxBody("15000", "order-bad-1"))
	id := pi["id"].(string)
	na := pi["next_action"].(map[string]any)
	next := na["url"].(string)
	token := next[strings.LastIndex(next, "/")+1:]
	qr := e.createIntent(k, "bad-qr", methodBody("PROMPTPAY", "TH", "2500", "order-bad-qr"))
	qrImage := qr["next_action"].(map[string]any)["image_url"].(string)
	qrToken := strings.TrimSuffix(qrImage[strings.LastIndex(qrImage, "/")+1:], ".png")

	tampered := []byte(token)
	tampered[3] ^= 1 // another payload, same signature
	pay := e.srv.URL + "/pay"
	var bodies []string
	check := func(what, rawURL string) {
		t.Helper()
		r := e.visit("GET", rawURL)
		if r.status != http.StatusNotFound {
			t.Fatalf("%s: status %d", what, r.status)
		}
		is.Equal(r.header.Get("Content-Type"), "text/html; charset=utf-8")
		body := string(r.body)
		is.True(strings.Contains(body, "Link invalid or expired")) // what the payer learns, and all
		for _, secret := range []string{id, qr["id"].(string), k.merchantID, "pi_", "mch_", token, e.pspURL} {
			if strings.Contains(body, secret) {
				t.Errorf("%s: the error page shows %q", what, secret)
			}
		}
		bodies = append(bodies, noncePattern.ReplaceAllString(body, ""))
	}
	check("tampered", pay+"/continue/"+string(tampered))
	check("truncated", pay+"/continue/"+token[:len(token)-2])
	check("garbage", pay+"/continue/not-a-token")
	check("continue token as return", pay+"/return/"+token)
	check("continue token as QR", pay+"/qr/"+token+".png")
	check("QR token as continue", pay+"/continue/"+qrToken)
	check("QR without .png", pay+"/qr/"+qrToken)

	// Another Service (another signing key) made the token: the same page.
	other, err := paykit.New(paykit.Config{Store: memory.New(), PublicURL: e.srv.URL})
	is.NoErr(err)
	rec := httptest.NewRecorder()
	httpadapter.NewPayHandler(other, httpadapter.PayOptions{Logger: slog.New(slog.DiscardHandler)}).
		ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/continue/"+token, nil))
	is.Equal(rec.Code, http.StatusNotFound)

	// Expired: the same link after its expiry.
	r := e.visit("GET", next)
	is.Equal(r.status, http.StatusSeeOther) // still good
	exp, err := time.Parse(time.RFC3339, na["expires_at"].(string))
	is.NoErr(err)
	e.clock.Set(exp)
	check("expired", next)
	check("expired QR", qrImage)

	for i, b := range bodies {
		if b != bodies[0] {
			t.Errorf("error page %d differs from the first:\n%s\n---\n%s", i, b, bodies[0])
		}
	}

	// Other paths: a 404 page, with the same headers; another method: a
	// 405 page with Allow.
	r = e.visit("GET", pay+"/nowhere")
	is.Equal(r.status, http.StatusNotFound)
	is.True(strings.Contains(string(r.body), "Page not found"))
	r = e.visit("POST", next)
	is.Equal(r.status, http.StatusMethodNotAllowed)
	is.Equal(r.header.Get("Allow"), "GET, HEAD")
	is.Equal(r.header.Get("Content-Type"), "text/html; charset=utf-8")
	is.True(strings.Contains(string(r.body), "Page not available"))
}

func TestPayQRImage(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	e := newPayEnv(t, onMemory)
	k := e.merchant(paykit.Test)
	pi := e.createIntent(k, "qr-1", methodBody("PROMPTPAY", "TH", "2500", "order-qr-1"))
	na := pi["next_action"].(map[string]any)
	is.Equal(na["type"], "display_qr_code")
	image := na["image_url"].(string)
	is.True(strings.HasPrefix(image, e.srv.URL+"/pay/qr/"))
	is.True(strings.HasSuffix(image, ".png"))

	r := e.visit("GET", image) // no credentials
	is.Equal(r.status, http.StatusOK)
	is.Equal(r.header.Get("Content-Type"), "image/png")
	is.Equal(r.header.Get("Cache-Control"), "no-store")
	img, err := png.Decode(bytes.NewReader(r.body))
	is.NoErr(err)
	bmp, err := gozxing.NewBinaryBitmapFromImage(img)
	is.NoErr(err)
	// PURE_BARCODE: a clean, unrotated code as drawn, not a camera photo.
	res, err := zxqr.NewQRCodeReader().Decode(bmp, map[gozxing.DecodeHintType]any{gozxing.DecodeHintType_PURE_BARCODE: true})
	is.NoErr(err)
	is.Equal(res.GetText(), na["qr_data"].(string)) // the EMVCo payload
	is.True(strings.HasPrefix(res.GetText(), "000201"))
}

// panicStore panics on reading a payment intent once told to.
type panicStore struct {
	paykit.Store
	panicking atomic.Bool
}

func (s *panicStore) GetPaymentIntent(ctx context.Context, scope paykit.Scope, id string) (*paykit.PaymentIntent, error) {
	if s.panicking.Load() {
		panic("store exploded")
	}
	return s.Store.GetPaymentIntent(ctx, scope, id)
}

func TestPayRecoversPanics(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	store := &panicStore{Store: memory.New()}
	e := newPayEnv(t, func(*testing.T) paykit.Store { return store })
	k := e.merchant(paykit.Test)
	next := e.createIntent(k, "panic-1", fpxBody("15000", "order-panic"))["next_action"].(map[string]any)["url"].(string)
	store.panicking.Store(true)
	r := e.visit("GET", next)
	is.Equal(r.status, http.StatusInternalServerError)
	is.Equal(r.header.Get("Content-Type"), "text/html; charset=utf-8")
	is.True(strings.Contains(string(r.body), "Something went wrong"))
	is.True(!strings.Contains(string(r.body), "exploded"))
	is.True(strings.Contains(e.logs.String(), "store exploded")) // the log has the cause
}
