package httpadapter_test

import (
	"context"
	"encoding/json"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/internal/answertest"
	"github.com/paykit/paykit/internal/browsertest"
)

// Browser tests: a real headless Chromium (internal/browsertest) walks the
// payer pages of a running server whose Service talks to the real sandbox
// PSP on its own server, while a background worker runs. They use the
// SQLite Store; the HTTP tests cover every Store.

// browserEnv is a payEnv with a browser and a running worker.
type browserEnv struct {
	*payEnv
	b *browsertest.Browser
}

// pageWait is how long a browser test waits for a page to move on.
const pageWait = 15 * time.Second

// runWorker runs svc's worker every 50 ms until the test ends, then checks
// the browser saw no CSP violation or script error.
func runWorker(t *testing.T, svc *paykit.Service, b *browsertest.Browser) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			if _, err := svc.ProcessDue(ctx); err != nil && ctx.Err() == nil {
				t.Errorf("worker: %v", err)
			}
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	t.Cleanup(func() {
		cancel()
		wg.Wait()
		b.CheckNoProblems()
	})
}

func newBrowserEnv(t *testing.T) *browserEnv {
	t.Helper()
	b := browsertest.New(t)
	e := newPayEnv(t, backends[1].open) // SQLite
	runWorker(t, e.svc, b)
	return &browserEnv{payEnv: e, b: b}
}

// principal is the Go API caller of k.
func principal(k keys) paykit.Principal {
	return paykit.Principal{Scope: paykit.Scope{MerchantID: k.merchantID, Environment: paykit.Test}, KeyID: k.keyID}
}

// The payment-intent flow in a browser, which also proves the harness: an
// FPX payment created through the Go API, the payer opens the continuation
// URL, approves on the sandbox PSP's page and lands on the result page,
// which shows the payment succeeded.
func TestBrowserPaymentIntentFPX(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	e := newBrowserEnv(t)
	k := e.merchant(paykit.Test)
	resp, err := answertest.From(e.svc.CreatePaymentIntent(e.ctx, principal(k), "browser-fpx-1", paykit.CreatePaymentIntentRequest{
		Amount: 15000, Currency: "MYR", Country: "MY", MerchantReference: "browser-fpx-1", PaymentMethod: "FPX",
		Customer:             map[string]string{"name": "Aisyah Rahman", "email": "aisyah@example.com"},
		PaymentMethodOptions: map[string]string{"bank": "MAYBANK"},
	}))
	is.NoErr(err)
	var pi struct {
		ID         string `json:"id"`
		Status     string `json:"status"`
		NextAction struct {
			Type, URL string
		} `json:"next_action"`
	}
	is.NoErr(json.Unmarshal(resp.Body, &pi))
	is.Equal(pi.Status, "requires_action")
	is.Equal(pi.NextAction.Type, "redirect_to_url")

	b := e.b
	b.Navigate(pi.NextAction.URL)
	// The service sent the browser on to the PSP's page.
	b.WaitURL(regexp.MustCompile(`^`+regexp.QuoteMeta(e.pspURL)+`/`), pageWait)
	is.Equal(b.Text("h1"), "MYR 150.00")
	b.ClickAndLoad("button.approve")
	// The PSP sends the payer back to /pay/return/{token}; the result page
	// refreshes itself until the worker has seen the success.
	b.WaitURL(regexp.MustCompile(`^`+regexp.QuoteMeta(e.srv.URL)+`/pay/return/`), pageWait)
	b.WaitFor("h1.status-ok", pageWait)
	is.Equal(b.Text("h1"), "Payment successful")
	is.Equal(b.Text(".amount"), "MYR 150.00")
	b.Screenshot("payment-intent-fpx-succeeded")
	is.Equal(e.intentStatus(k, pi.ID), "succeeded")
}
