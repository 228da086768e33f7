package httpadapter

import (
	"bytes"
	"crypto/rand"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"html/template"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	qrcode "github.com/skip2/go-qrcode"

	"github.com/paykit/paykit"
)

// PayOptions configures the payer-facing pages.
type PayOptions struct {
	// Logger receives one access-log line per request (tokens in paths
	// masked); default slog.Default().
	Logger *slog.Logger
	// Registerer receives the HTTP request metrics (api="pay"); nil
	// records none.
	Registerer prometheus.Registerer
}

// payHandler serves the payer-facing pages: what a payer's browser sees of
// the service. Its routes take a signed token in the path instead of
// credentials.
type payHandler struct {
	*api
}

// NewPayHandler returns the payer-facing pages as an http.Handler with
// paths relative to its mount point (examples/server mounts it at /pay,
// where the Service's continuation links point):
//
//	GET /continue/{token}   303 to the Provider's payer page
//	GET /return/{token}     the payer back from the Provider: 303 to the
//	                        merchant's return_url, or a result page
//	GET /qr/{token}.png     the QR code of a display_qr_code next action
//	GET /checkouts/{token}  the checkout app (checkout_url); see
//	                        checkout_pay.go for its routes
//
// A forged, altered, expired or no longer usable link gets a 404 page that
// says only that. Every answer is HTML (or the PNG) with strict security
// headers: a Content-Security-Policy that loads nothing from elsewhere, no
// framing, no Referer (tokens are in the paths), no caching. Pages are
// html/template with the stylesheet embedded.
func NewPayHandler(svc *paykit.Service, opts PayOptions) http.Handler {
	p := &payHandler{api: newAPI(svc, "pay", "", opts.Logger, newMetrics(opts.Registerer))}
	p.errorPage = p.renderError
	p.logPath = maskTokens
	p.handle("GET /continue/{token}", p.continuePayment)
	p.handle("GET /return/{token}", p.paymentReturn)
	// ServeMux wildcards are whole segments: {file} is "{token}.png".
	p.handle("GET /qr/{file}", p.qrImage)
	p.routeCheckouts()
	return p
}

// ServeHTTP sets the security headers of every answer, then serves the
// request in the shared envelope (Request-Id, recovery, access log,
// metrics).
func (p *payHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", payCSP(""))
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Cache-Control", "no-store")
	p.api.ServeHTTP(w, r)
}

// payCSP is the Content-Security-Policy of the payer pages; nonce, when
// set, allows the page's inline stylesheet and scripts, and the scripts
// may fetch from the page's own origin (the checkout's status). form-action
// 'self' also governs where a form's answer may redirect: a form never
// leads to a Provider directly (the checkout page follows a redirect
// action with a refresh, which is no form navigation).
func payCSP(nonce string) string {
	style, script := "'self'", ""
	if nonce != "" {
		style += " 'nonce-" + nonce + "'"
		script = "; script-src 'nonce-" + nonce + "'; connect-src 'self'"
	}
	return "default-src 'none'; img-src 'self'; style-src " + style + script +
		"; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
}

// errLink is the answer to every unusable payer link; its text is all
// the payer learns.
var errLink = errorf(paykit.CodeNotFound, "", "This payment link is invalid or has expired.")

// linkError turns the Service's ErrLinkInvalid into the 404 page and
// leaves other errors (500) as they are.
func linkError(err error) error {
	if errors.Is(err, paykit.ErrLinkInvalid) {
		return errLink
	}
	return err
}

// continuePayment sends the payer on to the Provider's page behind a
// continuation link.
func (p *payHandler) continuePayment(w http.ResponseWriter, r *http.Request) error {
	target, err := p.svc.ContinuePayment(r.Context(), r.PathValue("token"))
	if err != nil {
		return linkError(err)
	}
	redirect(w, target)
	return nil
}

// paymentReturn takes the payer back from the Provider: to the merchant's
// return_url (with payment_intent added) when the payment has one, else
// to a result page that refreshes itself until the payment is final.
func (p *payHandler) paymentReturn(w http.ResponseWriter, r *http.Request) error {
	pi, target, err := p.svc.PaymentReturn(r.Context(), r.PathValue("token"))
	if err != nil {
		return linkError(err)
	}
	if target != "" {
		if pi.CheckoutID != "" && !pi.Status.Terminal() {
			target = returnedToCheckout(target)
		}
		redirect(w, target)
		return nil
	}
	v := newResultView(pi)
	if v.Refresh > 0 {
		// The page counts its own refreshes: a payer just back from the
		// Provider has most likely paid, and the outcome is on its way.
		checks, err := strconv.Atoi(r.URL.Query().Get("checks"))
		if err != nil || checks < 0 {
			checks = 0
		}
		v.Next = "?checks=" + strconv.Itoa(min(checks, resultConfirmChecks)+1)
		if pi.Status != paykit.PaymentProcessing && checks < resultConfirmChecks {
			v.statusWords = confirmingWords
		}
	}
	p.render(w, r, http.StatusOK, resultTmpl, v)
	return nil
}

// returnedToCheckout marks the checkout page a payer is sent back to from
// the Provider (?checks=0), so that it says it is confirming the payment
// instead of asking the payer to pay again.
func returnedToCheckout(target string) string {
	u, err := url.Parse(target)
	if err != nil {
		return target
	}
	q := u.Query()
	q.Set("checks", "0")
	u.RawQuery = q.Encode()
	return u.String()
}

// qrImage draws the QR code of a display_qr_code next action as a PNG.
// It needs no credentials: merchants put the URL in an <img>.
func (p *payHandler) qrImage(w http.ResponseWriter, r *http.Request) error {
	token, ok := strings.CutSuffix(r.PathValue("file"), ".png")
	if !ok {
		return errLink
	}
	data, err := p.svc.PaymentQRData(r.Context(), token)
	if err != nil {
		return linkError(err)
	}
	png, err := drawQR(data)
	if err != nil {
		return internalError(fmt.Errorf("draw QR code: %w", err))
	}
	h := w.Header()
	h.Set("Content-Type", "image/png")
	h.Set("Content-Length", strconv.Itoa(len(png)))
	h.Set("Cross-Origin-Resource-Policy", "cross-origin") // shown on the merchant's page
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(png)
	return nil
}

// qrSize is the QR image's width and height in pixels: enough for a phone
// camera at arm's length, also for long EMVCo payloads.
const qrSize = 320

// drawQR renders data as a qrSize×qrSize PNG in which every module is the
// same whole number of pixels, centred in a white margin: scaled to a size
// the module count does not divide, modules come out uneven and scanners
// miss some codes.
func drawQR(data string) ([]byte, error) {
	q, err := qrcode.New(data, qrcode.Medium)
	if err != nil {
		return nil, err
	}
	modules := q.Bitmap() // quiet zone included
	n := len(modules)
	scale := max(1, qrSize/n)
	size := max(qrSize, n*scale)
	off := (size - n*scale) / 2
	img := image.NewPaletted(image.Rect(0, 0, size, size), color.Palette{color.White, color.Black})
	for y, row := range modules {
		for x, dark := range row {
			if dark {
				draw.Draw(img, image.Rect(off+x*scale, off+y*scale, off+(x+1)*scale, off+(y+1)*scale), image.Black, image.Point{}, draw.Src)
			}
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// redirect answers 303 See Other to target. The Referrer-Policy set for
// every answer keeps the token of this page's URL from the next site.
func redirect(w http.ResponseWriter, target string) {
	w.Header().Set("Location", target)
	w.WriteHeader(http.StatusSeeOther)
}

// renderError is the envelope's error page: the status with a short text
// that names no resource and no cause; a 500 says only that.
func (p *payHandler) renderError(w http.ResponseWriter, r *http.Request, status int, e *paykit.Error) {
	v := errorView{Heading: "Link invalid or expired", Text: e.Message}
	switch {
	case e == errLink:
	case status == http.StatusNotFound:
		v = errorView{Heading: "Page not found", Text: "There is nothing at this address."}
	case status == http.StatusMethodNotAllowed:
		v = errorView{Heading: "Page not available", Text: "This address cannot be used this way."}
	default:
		v = errorView{Heading: "Something went wrong", Text: "We could not show this page. Please try again in a moment."}
	}
	p.render(w, r, status, errorTmpl, v)
}

// The payer pages: each is the layout (payui/layout.html) with a page file
// that defines "title", "content" and optionally "head".

//go:embed payui
var payUI embed.FS

var (
	payLayout  = template.Must(template.ParseFS(payUI, "payui/layout.html"))
	errorTmpl  = payPage("error.html")
	resultTmpl = payPage("result.html")
	payCSS     = template.CSS(must(payUI.ReadFile("payui/pay.css")))
)

// payPage parses a page file over a copy of the layout.
func payPage(name string) *template.Template {
	return template.Must(template.Must(payLayout.Clone()).ParseFS(payUI, "payui/"+name))
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// pageData is what the layout sees; Data is the page's own view.
type pageData struct {
	Nonce string
	CSS   template.CSS
	Data  any
}

// render writes a page with status. The inline stylesheet gets a fresh
// nonce that the response's CSP allows.
func (p *payHandler) render(w http.ResponseWriter, r *http.Request, status int, page *template.Template, data any) {
	nonce := make([]byte, 16)
	_, _ = rand.Read(nonce) // never fails (crypto/rand)
	d := pageData{Nonce: hex.EncodeToString(nonce), CSS: payCSS, Data: data}
	var buf bytes.Buffer
	if err := page.ExecuteTemplate(&buf, "layout", d); err != nil {
		p.log.ErrorContext(r.Context(), "render payer page", "request_id", requestInfoFrom(r.Context()).id, "err", err)
		http.Error(w, "Something went wrong.", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Security-Policy", payCSP(d.Nonce))
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Length", strconv.Itoa(buf.Len()))
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// errorView fills payui/error.html.
type errorView struct {
	Heading, Text string
}

// resultView fills payui/result.html.
type resultView struct {
	statusWords
	Merchant string // the checkout's merchant; empty for a direct payment
	Amount   string
	Method   string
	Receipt  string
	Refresh  int    // seconds until the page reloads; 0 once final
	Next     string // the address it reloads to (relative), with Refresh
}

// resultConfirmChecks is how many refreshes (about a minute) the return
// page of a payment still waiting for the payer says it is confirming,
// before it says the payment is not completed yet.
const resultConfirmChecks = 30

// confirmingWords are the return page's words while the outcome of a
// payment the payer may just have approved has not arrived.
var confirmingWords = statusWords{"Being confirmed", "Confirming your payment", "wait",
	"We are confirming your payment with your bank or wallet. This usually takes a few seconds; please keep this page open."}

// resultRefresh is how often a result page of a payment that is not final
// reloads itself.
const resultRefresh = 2

// statusWords is how the result page puts a payment status to the payer:
// the status in plain words, a heading, its tone (ok, bad or wait: the
// heading's colour) and a sentence on what it means.
type statusWords struct {
	Status, Heading, Tone, Text string
}

var paymentStatusWords = map[paykit.PaymentStatus]statusWords{
	paykit.PaymentSucceeded: {"Paid", "Payment successful", "ok",
		"Thank you. Your payment has been received."},
	paykit.PaymentFailed: {"Not paid", "Payment failed", "bad",
		"Your payment did not go through and no money was taken. You can try again from the merchant's site."},
	paykit.PaymentCancelled: {"Cancelled", "Payment cancelled", "bad",
		"This payment was cancelled. No money was taken."},
	paykit.PaymentExpired: {"Expired", "Payment expired", "bad",
		"This payment was not completed in time. No money was taken."},
	paykit.PaymentProcessing: {"Being confirmed", "Confirming your payment", "wait",
		"Your bank or wallet is confirming the payment. This usually takes a few seconds; please keep this page open."},
	// requires_action and requires_payment_method
	"": {"Waiting for you", "Payment not completed yet", "wait",
		"We have not received your confirmation yet. If you did not finish paying, go back to your bank or wallet."},
}

// newResultView is what the result page shows of pi.
func newResultView(pi *paykit.PaymentIntent) resultView {
	words, ok := paymentStatusWords[pi.Status]
	if !ok {
		words = paymentStatusWords[""]
	}
	v := resultView{statusWords: words, Amount: formatMoney(pi.Amount, pi.Currency), Method: pi.PaymentMethod}
	if pi.Status == paykit.PaymentSucceeded && pi.Receipt != nil {
		v.Receipt = pi.Receipt.Number
	}
	if !pi.Status.Terminal() {
		v.Refresh = resultRefresh
	}
	return v
}

// Minor-unit exponents of the ISO 4217 currencies that do not have two
// decimals; every other currency shows two.
var currencyExponent = map[string]int{
	"BIF": 0, "CLP": 0, "DJF": 0, "GNF": 0, "ISK": 0, "JPY": 0, "KMF": 0, "KRW": 0, "PYG": 0,
	"RWF": 0, "UGX": 0, "UYI": 0, "VND": 0, "VUV": 0, "XAF": 0, "XOF": 0, "XPF": 0,
	"BHD": 3, "IQD": 3, "JOD": 3, "KWD": 3, "LYD": 3, "OMR": 3, "TND": 3,
}

// formatMoney renders an amount in minor units for people, from the
// integer (never a float), with the currency's decimals and thousands
// grouped: "MYR 1,500.00", "JPY 12,000", "MYR -0.05".
func formatMoney(minor int64, currency string) string {
	exp, ok := currencyExponent[currency]
	if !ok {
		exp = 2
	}
	sign, digits := "", strconv.FormatInt(minor, 10)
	if minor < 0 {
		sign, digits = "-", digits[1:] // also right for math.MinInt64
	}
	if len(digits) <= exp {
		digits = strings.Repeat("0", exp-len(digits)+1) + digits
	}
	whole, frac := digits[:len(digits)-exp], digits[len(digits)-exp:]
	var b strings.Builder
	b.WriteString(currency + " " + sign)
	for i, c := range whole {
		if i > 0 && (len(whole)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if exp > 0 {
		b.WriteString("." + frac)
	}
	return b.String()
}

// maskTokens is the path the access log shows: payer links are
// capabilities, so every path segment long enough to be a token is
// replaced.
func maskTokens(path string) string {
	segs := strings.Split(path, "/")
	for i, s := range segs {
		if len(s) >= 32 {
			segs[i] = "{token}"
			if strings.HasSuffix(s, ".png") {
				segs[i] += ".png"
			}
		}
	}
	return strings.Join(segs, "/")
}
