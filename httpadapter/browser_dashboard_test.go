package httpadapter_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/matryer/is"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/internal/browsertest"
	"github.com/paykit/paykit/internal/contract"
)

// The operator dashboard in a real browser (SQLite Store, a running
// worker). The README's screenshots of a payout at 1280 px and 390 px come
// from TestBrowserDashboardWidths (PAYKIT_UPDATE_DOCS=1, as the checkout's).

func newDashBrowser(t *testing.T) (*dashEnv, *browsertest.Browser) {
	t.Helper()
	b := browsertest.New(t)
	e := newDashEnv(t, backends[1].open) // SQLite
	runWorker(t, e.svc, b)
	return e, b
}

// browserSignIn signs in through the form.
func browserSignIn(e *dashEnv, b *browsertest.Browser) {
	b.Navigate(e.base + "/")
	b.WaitFor("#token", pageWait)
	b.Type("#token", dashToken)
	b.ClickAndLoad("button[type=submit]")
	b.WaitFor("#attention", pageWait)
}

// Sign in, approve one held payout and reject another with a reason (each
// confirmed), see the reason on the payout, sign out and be sent back to
// sign-in.
func TestBrowserDashboardApprovals(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	e, b := newDashBrowser(t)
	m, err := e.svc.CreateMerchant(e.ctx, "test", "Kedai Kopi Aisyah")
	is.NoErr(err)
	approve := heldPayout(t, e.sandboxEnv, m.ID)
	reject := heldPayout(t, e.sandboxEnv, m.ID)

	browserSignIn(e, b)
	is.Equal(b.Text("#attention .stat"), "2") // two payouts wait
	b.Screenshot("dashboard-overview")

	b.Navigate(e.base + "/approvals")
	is.Equal(browsertest.Eval[int](b, `document.querySelectorAll("#list tbody tr").length`), 2)
	b.ClickAndLoad(`a[href*="` + approve.ID + `"][href*="confirm=approve"]`)
	b.WaitFor("#confirm-approve", pageWait)
	b.ClickAndLoad("#confirm-approve")
	b.WaitFor("#notice", pageWait)
	is.Equal(b.Text("#notice"), "Payout approved.")
	is.Equal(b.Text("#status"), "processing")
	is.True(strings.Contains(b.Text("#timeline"), "payout_intent.approve"))

	b.Navigate(e.base + "/approvals")
	b.ClickAndLoad(`a[href*="` + reject.ID + `"][href*="confirm=reject"]`)
	b.WaitFor("#reject-reason", pageWait)
	b.Type("#reject-reason", "Recipient not verified")
	b.ClickAndLoad("#confirm-reject")
	b.WaitFor("#notice", pageWait)
	is.Equal(b.Text("#notice"), "Payout rejected.")
	is.Equal(b.Text("#status"), "failed")
	is.Equal(b.Text("#cancel-reason"), "Recipient not verified")
	b.Screenshot("dashboard-payout")

	po, err := e.svc.GetPayoutIntent(e.ctx, paykit.Principal{Scope: paykit.Scope{MerchantID: m.ID, Environment: paykit.Test}}, approve.ID)
	is.NoErr(err)
	is.True(po.Status != paykit.PayoutRequiresApproval)
	audit, err := e.svc.ListAuditEvents(e.ctx, paykit.AuditListParams{Action: "payout_intent.reject"})
	is.NoErr(err)
	is.Equal(len(audit.Data), 1)
	is.True(strings.HasPrefix(audit.Data[0].Actor, "dashboard:alice:dss_"))

	b.ClickAndLoad("#signout")
	b.WaitFor("#token", pageWait)
	b.Navigate(e.base + "/approvals")
	b.WaitFor("#token", pageWait)
	is.True(strings.HasSuffix(b.URL(), "/dashboard/signin"))
}

// Create an API key: its secret shows once, and not on the next visit;
// revoke it.
func TestBrowserDashboardAPIKey(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	e, b := newDashBrowser(t)
	m, err := e.svc.CreateMerchant(e.ctx, "test", "Kedai Keys")
	is.NoErr(err)
	browserSignIn(e, b)
	b.Navigate(e.base + "/merchants")
	b.ClickAndLoad(`a[href$="/merchants/` + m.ID + `"]`)
	b.WaitFor("#create-key-submit", pageWait)
	b.ClickAndLoad("#create-key-submit")
	b.WaitFor("#secret", pageWait)
	secret := b.Text("#secret code")
	is.True(strings.HasPrefix(secret, "sk_test_"))
	keys, err := e.svc.ListAPIKeys(e.ctx, m.ID)
	is.NoErr(err)
	is.Equal(len(keys), 1)
	_, err = e.svc.Authenticate(e.ctx, keys[0].PublicKey, secret)
	is.NoErr(err) // the secret shown is the key's

	b.Navigate(e.base + "/merchants/" + m.ID)
	b.WaitFor("#keys", pageWait)
	is.True(!browsertest.Eval[bool](b, `!!document.getElementById("secret")`))
	is.True(!strings.Contains(browsertest.Eval[string](b, `document.body.innerHTML`), secret))

	b.ClickAndLoad("#revoke-" + keys[0].ID)
	b.WaitFor("#notice", pageWait)
	is.True(strings.Contains(b.Text("#keys"), "revoked"))
}

// A webhook endpoint with a delivered event: resend it and see the new
// attempt; let it fail three deliveries in a row, see it paused on the
// merchant's page and its own, and resume it; disable the endpoint.
func TestBrowserDashboardWebhookResend(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	e, b := newDashBrowser(t)
	var mu sync.Mutex
	received := 0
	var failing atomic.Bool
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		received++
		mu.Unlock()
		if failing.Load() {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(hook.Close)
	m, err := e.svc.CreateMerchant(e.ctx, "test", "Kedai Hooks")
	is.NoErr(err)
	ep, err := e.svc.CreateWebhookEndpoint(e.ctx, "test", m.ID, paykit.CreateWebhookEndpointRequest{Environment: "test", URL: hook.URL + "/hooks"})
	is.NoErr(err)
	heldPayout(t, e.sandboxEnv, m.ID) // payout_intent.requires_approval

	browserSignIn(e, b)
	rows := `document.querySelectorAll("#attempts tbody tr").length`
	page := e.base + "/webhook_endpoints/" + ep.Endpoint.ID
	waitRows := func(n int) {
		t.Helper()
		deadline := time.Now().Add(pageWait)
		for {
			b.Navigate(page)
			if browsertest.Eval[int](b, rows) >= n {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("fewer than %d attempts", n)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	waitRows(1)
	is.True(strings.Contains(b.Text("#attempts tbody tr"), "200"))
	b.ClickAndLoad("#attempts tbody tr button")
	b.WaitFor("#notice", pageWait)
	is.True(strings.Contains(b.Text("#notice"), "will be sent again"))
	waitRows(2)
	mu.Lock()
	is.Equal(received, 2)
	mu.Unlock()

	// Three failures in a row: the first attempt of a new event, then its
	// retries 5 s and 5 min later (the worker runs on the test's clock,
	// moved on once the delivery job waits for its retry).
	failing.Store(true)
	heldPayout(t, e.sandboxEnv, m.ID)
	eventually := func(what string, cond func() bool) {
		t.Helper()
		for deadline := time.Now().Add(pageWait); !cond(); time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal(what)
			}
		}
	}
	failed := func(attempts int) {
		t.Helper()
		eventually(fmt.Sprintf("no delivery failed %d times", attempts), func() bool {
			jobs, err := e.svc.ListJobs(e.ctx, paykit.JobListParams{Kind: "webhook.deliver", State: paykit.JobRetrying})
			is.NoErr(err)
			return len(jobs.Data) == 1 && jobs.Data[0].Attempts == attempts
		})
	}
	deliveries := func() int {
		mu.Lock()
		defer mu.Unlock()
		return received
	}
	failed(1)
	e.clock.Advance(6 * time.Second)
	failed(2)
	e.clock.Advance(6 * time.Minute)
	failed(3)
	is.Equal(deliveries(), 5)
	paused, err := e.svc.GetWebhookEndpoint(e.ctx, ep.Endpoint.ID)
	is.NoErr(err)
	state := "Paused until " + paused.PausedUntil.Format("2006-01-02 15:04:05 UTC") + " — 3 deliveries in a row failed; the last: answered 500 (3 failures)"
	b.Navigate(page)
	is.Equal(b.Text("#delivery"), state)
	b.Navigate(e.base + "/merchants/" + m.ID)
	b.WaitFor("#endpoints", pageWait)
	is.True(strings.Contains(b.Text("#endpoints tbody tr"), state))

	// An event made during the pause waits for it; resuming sends it now.
	heldPayout(t, e.sandboxEnv, m.ID)
	waiting, err := e.svc.ListJobs(e.ctx, paykit.JobListParams{Kind: "webhook.deliver", State: paykit.JobScheduled})
	is.NoErr(err)
	is.Equal(len(waiting.Data), 1)
	failing.Store(false)
	b.Navigate(page)
	b.ClickAndLoad("#resume-submit")
	b.WaitFor("#notice", pageWait)
	is.Equal(b.Text("#notice"), "Deliveries resumed; those that waited are sent now.")
	is.Equal(b.Text("#delivery"), "active")
	is.True(!browsertest.Eval[bool](b, `!!document.getElementById("resume-submit")`))
	eventually("the waiting delivery was not sent after the resume", func() bool { return deliveries() == 6 })
	resumed, err := e.svc.ListAuditEvents(e.ctx, paykit.AuditListParams{Action: "webhook_endpoint.resume"})
	is.NoErr(err)
	is.Equal(len(resumed.Data), 1)
	is.True(strings.HasPrefix(resumed.Data[0].Actor, "dashboard:alice:dss_"))

	b.ClickAndLoad("#disable")
	b.WaitFor("#notice", pageWait)
	is.Equal(b.Text("#status"), "disabled (operator)")
	b.ClickAndLoad("#rotate")
	b.WaitFor("#secret", pageWait)
	is.True(strings.HasPrefix(b.Text("#secret code"), "whsec_"))
}

// Filter a list by status and page through it.
func TestBrowserDashboardFilterAndPage(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	e, b := newDashBrowser(t)
	m, err := e.svc.CreateMerchant(e.ctx, "test", "Kedai Lists")
	is.NoErr(err)
	for range 27 {
		heldPayout(t, e.sandboxEnv, m.ID)
	}
	browserSignIn(e, b)
	b.Navigate(e.base + "/payouts?merchant=" + m.ID)
	b.WaitFor("#f-status", pageWait)
	b.SetValue("#f-status", "succeeded")
	b.ClickAndLoad("#apply-filters")
	b.WaitFor("#list .empty", pageWait)
	is.True(regexp.MustCompile(`status=succeeded`).MatchString(b.URL()))

	b.SetValue("#f-status", "requires_approval")
	b.ClickAndLoad("#apply-filters")
	b.WaitFor("#next-page", pageWait)
	is.Equal(browsertest.Eval[int](b, `document.querySelectorAll("#list tbody tr").length`), contract.DefaultPageLimit)
	b.ClickAndLoad("#next-page")
	b.WaitFor("#list tbody tr", pageWait)
	is.Equal(browsertest.Eval[int](b, `document.querySelectorAll("#list tbody tr").length`), 2)
	is.True(!browsertest.Eval[bool](b, `!!document.getElementById("next-page")`))
	is.True(strings.Contains(b.URL(), "status=requires_approval"))
}

// dashWidths are the widths the dashboard must fit: a laptop and a phone.
var dashWidths = []int64{1280, browsertest.ViewportWidth}

// fits checks at the browser's width that the page does not scroll
// sideways and that every table fits its card (a table may scroll within
// its card, but none does on these pages).
func fits(t *testing.T, b *browsertest.Browser, page string, width int64) {
	t.Helper()
	body := browsertest.Eval[[]int](b, `[document.documentElement.scrollWidth, document.documentElement.clientWidth, document.body.scrollWidth, document.body.clientWidth]`)
	if body[0] > body[1] || body[2] > body[3] {
		t.Errorf("%s at %d px: the page is %d px wide (body %d) in %d px", page, width, body[0], body[2], body[1])
	}
	over := browsertest.Eval[[]string](b, `[...document.querySelectorAll(".table-wrap")].filter(w => w.scrollWidth > w.clientWidth).map(w => (w.closest("section") || {}).id + ": " + w.scrollWidth + " > " + w.clientWidth)`)
	if len(over) > 0 {
		t.Errorf("%s at %d px: tables wider than their card: %v", page, width, over)
	}
}

// The main pages at 1280 px and 390 px: nothing scrolls sideways, every
// column shows. The README's two screenshots (a payout with its timeline,
// at both widths) come from here (PAYKIT_UPDATE_DOCS=1).
func TestBrowserDashboardWidths(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	e, b := newDashBrowser(t)
	m, err := e.svc.CreateMerchant(e.ctx, "test", "Kedai Kopi Aisyah")
	is.NoErr(err)
	p := paykit.Principal{Scope: paykit.Scope{MerchantID: m.ID, Environment: paykit.Test}}
	pi, _, err := e.svc.CreatePaymentIntent(e.ctx, p, "w-1", paykit.CreatePaymentIntentRequest{
		Amount: 1_250_000, Currency: "MYR", Country: "MY", MerchantReference: "order-2026-000123", PaymentMethod: "TNG",
		Customer: map[string]string{"name": "Aisyah Rahman"}})
	is.NoErr(err)
	held := heldPayout(t, e.sandboxEnv, m.ID)
	_, err = e.svc.RejectPayout(e.ctx, "dashboard:alice:dss_0123456789abcdef", held.ID, "Recipient not verified by the merchant's compliance team")
	is.NoErr(err)
	heldPayout(t, e.sandboxEnv, m.ID)
	_, err = e.svc.CreateWebhookEndpoint(e.ctx, "test", m.ID, paykit.CreateWebhookEndpointRequest{Environment: "test", URL: "https://kedai-kopi-aisyah.example.com/paykit/webhooks/endpoint-with-a-long-path"})
	is.NoErr(err)
	_, err = e.svc.CreateAPIKey(e.ctx, "test", m.ID, paykit.Test)
	is.NoErr(err)

	browserSignIn(e, b)
	sc := "?merchant=" + m.ID + "&env=test"
	pages := []string{"/", "/payment_intents" + sc, "/payment_intents/" + pi.ID + sc, "/payouts" + sc, "/payouts/" + held.ID + sc,
		"/approvals", "/merchants", "/merchants/" + m.ID, "/jobs?state=", "/audit"}
	for _, w := range dashWidths {
		b.Do(chromedp.EmulateViewport(w, 900))
		for i, page := range pages {
			b.Navigate(e.base + page)
			b.WaitFor("main h1", pageWait)
			fits(t, b, page, w)
			b.Screenshot("dashboard-" + strconv.FormatInt(w, 10) + "-" + strconv.Itoa(i))
		}
		b.Navigate(e.base + "/payouts/" + held.ID + sc)
		b.WaitFor("#timeline", pageWait)
		// Every column of the timeline shows its heading or label.
		is.True(strings.Contains(b.Text("#timeline"), "Recipient not verified"))
		name := "dashboard-" + strconv.FormatInt(w, 10)
		docsScreenshot(t, b.Screenshot(name), name+".png")
	}
}

// An approval form whose address names another merchant (a stale page, a
// hand-made link) changes nothing: the answer says the payout is not that
// merchant's and nothing was done; the payout still waits, and approving
// it from its own page then works.
func TestBrowserDashboardStaleScope(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	e, b := newDashBrowser(t)
	a, err := e.svc.CreateMerchant(e.ctx, "test", "Kedai A")
	is.NoErr(err)
	other, err := e.svc.CreateMerchant(e.ctx, "test", "Kedai B")
	is.NoErr(err)
	po := heldPayout(t, e.sandboxEnv, a.ID)

	browserSignIn(e, b)
	own := e.base + "/payouts/" + po.ID + "?merchant=" + a.ID + "&env=test"
	b.Navigate(own + "&confirm=approve")
	b.WaitFor("#confirm-approve", pageWait)
	stale := strings.Replace(browsertest.Eval[string](b, `document.getElementById("approve").getAttribute("action")`), a.ID, other.ID, 1)
	is.True(strings.Contains(stale, "merchant="+other.ID))
	browsertest.Eval[bool](b, `(document.getElementById("approve").setAttribute("action", `+strconv.Quote(stale)+`), true)`)
	b.ClickAndLoad("#confirm-approve")
	b.WaitFor("main h1", pageWait)
	is.Equal(b.Text("main h1"), "Not found")
	is.True(strings.Contains(b.Text("main"), "The payout "+po.ID+" is not one of merchant "+other.ID+" in test"))
	is.True(strings.Contains(b.Text("main"), "Nothing was done."))
	got, err := e.svc.GetPayoutIntent(e.ctx, paykit.Principal{Scope: paykit.Scope{MerchantID: a.ID, Environment: paykit.Test}}, po.ID)
	is.NoErr(err)
	is.True(got.ApprovalPending) // untouched
	audit, err := e.svc.ListAuditEvents(e.ctx, paykit.AuditListParams{Action: "payout_intent.approve"})
	is.NoErr(err)
	is.Equal(len(audit.Data), 0)

	b.Navigate(own + "&confirm=approve")
	b.ClickAndLoad("#confirm-approve")
	b.WaitFor("#notice", pageWait)
	is.Equal(b.Text("#notice"), "Payout approved.")
	is.Equal(b.Text("main h1"), "Payout "+po.ID)
}
