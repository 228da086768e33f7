package sandbox

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"html/template"
	"net/http"
	"net/url"
)

// The payer pages: what a payer redirected to the PSP sees. They load
// nothing from anywhere (inline CSS under a nonce), cannot be framed, and
// send no Referer.

var payerTemplate = template.Must(template.New("payer").Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}} · Sandbox PSP</title>
<style nonce="{{.Nonce}}">
body{margin:0;padding:2rem 1rem;background:#eef1f5;color:#1b2230;font:16px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif}
main{max-width:28rem;margin:0 auto;background:#fff;border-radius:10px;padding:1.5rem 1.75rem;box-shadow:0 1px 4px rgba(0,0,0,.12)}
.brand{margin:0;font-weight:600;color:#4b5563;letter-spacing:.02em}
.test{display:inline-block;margin:.25rem 0 1rem;padding:.1rem .5rem;border-radius:4px;background:#fff4d6;color:#7a5300;font-size:.8rem}
h1{margin:.25rem 0 1rem;font-size:1.8rem}
dl{display:grid;grid-template-columns:auto 1fr;gap:.3rem 1rem;margin:0 0 1.25rem}
dt{color:#6b7280}dd{margin:0;word-break:break-all}
pre{white-space:pre-wrap;word-break:break-all;background:#f6f7f9;padding:.75rem;border-radius:6px;font-size:.8rem}
.actions{display:flex;gap:.75rem}.actions form{flex:1}
button{width:100%;padding:.7rem;border:0;border-radius:6px;font:inherit;font-weight:600;cursor:pointer}
.approve{background:#1f7a4d;color:#fff}.decline{background:#e5e7eb;color:#1b2230}
.result{font-size:1.15rem;font-weight:600}
a{color:#1d4ed8}
</style>
</head>
<body>
<main>
<p class="brand">Sandbox PSP</p>
<span class="test">Test payment page: no real money moves</span>
{{if .Found}}
<h1>{{.Amount}}</h1>
<dl>
<dt>Merchant</dt><dd>Sandbox PSP</dd>
<dt>Method</dt><dd>{{.Channel}}</dd>
{{with .Bank}}<dt>Bank</dt><dd>{{.}}</dd>{{end}}
<dt>Payment</dt><dd>{{.ID}}</dd>
</dl>
{{if .Waiting}}
{{with .QR}}<p>Scan this QR payload with a banking app (shown as text in the sandbox):</p><pre>{{.}}</pre>{{end}}
{{with .VA}}<p>Transfer the amount to:</p>
<dl><dt>Bank</dt><dd>{{.BankName}}</dd><dt>Account</dt><dd>{{.Number}}</dd><dt>Holder</dt><dd>{{.Holder}}</dd><dt>Reference</dt><dd>{{.Reference}}</dd></dl>{{end}}
<div class="actions">
<form method="post" action="{{.ID}}/approve"><button type="submit" class="approve">Approve</button></form>
<form method="post" action="{{.ID}}/decline"><button type="submit" class="decline">Decline</button></form>
</div>
{{else}}
<p class="result">{{.Title}}</p>
{{with .ReturnURL}}<p><a href="{{.}}">Return to the merchant</a></p>{{end}}
{{end}}
{{else}}
<h1>Not found</h1>
<p>There is no payment here. The link may be wrong or old.</p>
{{end}}
</main>
</body>
</html>
`))

// pageData fills payerTemplate.
type pageData struct {
	Nonce     string
	Found     bool
	Title     string
	Amount    string
	Channel   string
	Bank      string
	ID        string
	Waiting   bool // the payer can still approve or decline
	QR        string
	VA        *vaView
	ReturnURL string
}

// stateTitles say what a state means to the payer.
var stateTitles = map[string]string{
	statePayerAction: "Confirm your payment",
	statePending:     "Payment in progress",
	stateSuccess:     "Payment successful",
	stateFailed:      "Payment not completed",
	stateCancelled:   "Payment cancelled",
	stateExpired:     "Payment expired",
}

func (p *PSP) payerPage(w http.ResponseWriter, r *http.Request) {
	var d pageData
	found, err := p.st.payments().update(r.Context(), byID(r.PathValue("id")), func(pm *payment) {
		pm.settle(p.now())
		d = pageData{
			Found: true, Title: stateTitles[pm.State], Amount: formatAmount(pm.In.Ccy, pm.In.AmountMinor),
			Channel: pm.channel().label, ID: pm.ID, Waiting: pm.State == statePayerAction, QR: pm.QR, VA: pm.VA,
			ReturnURL: pm.In.ReturnURL,
		}
		if b, ok := localBank("MY", pm.In.Bank); ok {
			d.Bank = b.name
		}
	})
	switch {
	case err != nil:
		http.Error(w, "The payment page is unavailable; try again shortly.", http.StatusInternalServerError)
	case !found:
		p.renderNotFound(w)
	default:
		render(w, http.StatusOK, d, returnOrigin(d.ReturnURL))
	}
}

func (p *PSP) renderNotFound(w http.ResponseWriter) {
	render(w, http.StatusNotFound, pageData{Title: "Not found"}, "")
}

// payerChoice handles the Approve and Decline forms: it records the
// choice and sends the payer back to the merchant's return URL with 303,
// or (without one, or when the payment no longer waits) to the page,
// which then shows the result.
func (p *PSP) payerChoice(approve bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Sec-Fetch-Site") == "cross-site" {
			http.Error(w, "Forbidden: the payer page posts only to itself.", http.StatusForbidden)
			return
		}
		id := r.PathValue("id")
		var target string
		var refused error
		found, err := p.st.payments().update(r.Context(), byID(id), func(pm *payment) {
			now := p.now()
			pm.settle(now)
			refused = pm.decide(approve, now)
			target = pm.In.ReturnURL
		})
		switch {
		case err != nil:
			http.Error(w, "The payment page is unavailable; try again shortly.", http.StatusInternalServerError)
			return
		case !found:
			p.renderNotFound(w)
			return
		}
		p.wake()
		if refused != nil || target == "" {
			// Relative to .../pay/{id}/approve, so it works under any mount
			// prefix.
			target = "../" + url.PathEscape(id)
		}
		w.Header().Set("Location", target)
		w.Header().Set("Referrer-Policy", "no-referrer")
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(http.StatusSeeOther)
	}
}

// render writes a payer page with its security headers. formOrigin, when
// set, is the return URL's origin: CSP form-action also governs the
// redirect that follows a form post, so it must allow it.
func render(w http.ResponseWriter, status int, d pageData, formOrigin string) {
	nonce := make([]byte, 16)
	_, _ = rand.Read(nonce)
	d.Nonce = hex.EncodeToString(nonce) // hex: nothing for the template to escape
	var buf bytes.Buffer
	if err := payerTemplate.Execute(&buf, d); err != nil {
		http.Error(w, "page error", http.StatusInternalServerError)
		return
	}
	formAction := "'self'"
	if formOrigin != "" {
		formAction += " " + formOrigin
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'nonce-"+d.Nonce+"'; form-action "+formAction+"; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}
