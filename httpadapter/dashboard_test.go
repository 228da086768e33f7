package httpadapter_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/httpadapter"
	"github.com/paykit/paykit/internal/contract"
	"github.com/paykit/paykit/internal/newid"
)

// The operator dashboard over HTTP: sessions, CSRF, the sign-in rate
// limit, security headers and escaping. The browser tests
// (browser_dashboard_test.go) walk the pages.

const dashToken = "dash-token-alice-0123456789"

// dashApprovalThreshold holds payouts of THB 10,000.00 and more.
const dashApprovalThreshold = 1_000_000

// dashEnv is a sandbox env with the dashboard mounted at /dashboard and a
// cookie-keeping client that does not follow redirects.
type dashEnv struct {
	*sandboxEnv
	web  *http.Client
	base string
}

func newDashEnv(t *testing.T, open func(t *testing.T) paykit.Store) *dashEnv {
	t.Helper()
	return mountDashboard(t, newSandboxEnvConfig(t, open, envConfig{approvalThreshold: dashApprovalThreshold}))
}

// mountDashboard mounts the dashboard of e's Service at /dashboard and
// gives e a cookie-keeping client that does not follow redirects.
func mountDashboard(t *testing.T, e *sandboxEnv) *dashEnv {
	t.Helper()
	e.srv.Config.Handler.(*http.ServeMux).Handle("/dashboard/", http.StripPrefix("/dashboard",
		httpadapter.NewDashboard(e.svc, httpadapter.DashboardOptions{
			Tokens: map[string]string{"alice": dashToken}, SessionKey: []byte("dashboard test key"), SessionTTL: time.Hour,
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		})))
	jar, _ := cookiejar.New(nil)
	return &dashEnv{sandboxEnv: e, base: e.srv.URL + "/dashboard", web: &http.Client{
		Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

func (e *dashEnv) get(path string) response {
	e.t.Helper()
	return e.request("GET", path, nil)
}

func (e *dashEnv) post(path string, form url.Values) response {
	e.t.Helper()
	return e.request("POST", path, form)
}

func (e *dashEnv) request(method, path string, form url.Values) response {
	e.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, e.base+path, body)
	if err != nil {
		e.t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	resp, err := e.web.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	checkDashHeaders(e.t, resp.Header)
	return response{resp.StatusCode, resp.Header, b}
}

var csrfField = regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`)

// csrfOf returns the CSRF token of a page's forms.
func csrfOf(t *testing.T, r response) string {
	t.Helper()
	m := csrfField.FindSubmatch(r.body)
	if m == nil {
		t.Fatalf("no CSRF field in %s", r.body)
	}
	return string(m[1])
}

// signIn signs in with token and returns the answer to the POST.
func (e *dashEnv) signIn(token string) response {
	e.t.Helper()
	page := e.get("/signin")
	return e.post("/signin", url.Values{"csrf": {csrfOf(e.t, page)}, "token": {token}})
}

// csrf signs in (if needed) and returns the session's CSRF token.
func (e *dashEnv) csrf() string {
	e.t.Helper()
	r := e.get("/")
	if r.status == http.StatusSeeOther {
		if got := e.signIn(dashToken); got.status != http.StatusSeeOther {
			e.t.Fatalf("sign-in: %d %s", got.status, got.body)
		}
		r = e.get("/")
	}
	if r.status != http.StatusOK {
		e.t.Fatalf("overview: %d %s", r.status, r.body)
	}
	return csrfOf(e.t, r)
}

func checkDashHeaders(t *testing.T, h http.Header) {
	t.Helper()
	for name, want := range map[string]string{
		"Content-Security-Policy": "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
		"Referrer-Policy":         "no-referrer", "X-Content-Type-Options": "nosniff", "X-Frame-Options": "DENY",
	} {
		if got := h.Get(name); got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	if cc := h.Get("Cache-Control"); cc != "no-store" && cc != "private, max-age=300" {
		t.Errorf("Cache-Control = %q", cc)
	}
}

func TestDashboardSignInSessionCookie(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	e := newDashEnv(t, onMemory)
	r := e.get("/")
	is.Equal(r.status, http.StatusSeeOther)
	is.Equal(r.header.Get("Location"), "/dashboard/signin")

	r = e.signIn(dashToken)
	is.Equal(r.status, http.StatusSeeOther)
	is.Equal(r.header.Get("Location"), "/dashboard/")
	var c *http.Cookie
	for _, k := range (&http.Response{Header: r.header}).Cookies() {
		if k.Name == "paykit_dashboard" {
			c = k
		}
	}
	is.True(c != nil)
	is.True(c.HttpOnly)
	is.Equal(c.SameSite, http.SameSiteStrictMode)
	is.Equal(c.Path, "/dashboard/")
	is.True(c.MaxAge > 3500 && c.MaxAge <= 3600) // SessionTTL
	is.True(!c.Secure)                           // http public URL
	r = e.get("/")
	is.Equal(r.status, http.StatusOK)
	is.True(strings.Contains(string(r.body), "Needs attention"))
}

// Without the session's CSRF token a POST is refused and nothing happens.
func TestDashboardCSRF(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	e := newDashEnv(t, onMemory)
	token := e.csrf()
	for _, form := range []url.Values{
		{"action": {"create"}, "name": {"No CSRF"}},
		{"action": {"create"}, "name": {"Wrong CSRF"}, "csrf": {strings.Repeat("0", len(token))}},
	} {
		r := e.post("/merchants", form)
		is.Equal(r.status, http.StatusForbidden)
		is.True(strings.Contains(string(r.body), "Form refused"))
	}
	ms, err := e.svc.ListMerchants(e.ctx, paykit.PageParams{})
	is.NoErr(err)
	is.Equal(len(ms.Data), 0)
	// The sign-in form has its own token too.
	r := e.post("/signin", url.Values{"token": {dashToken}})
	is.Equal(r.status, http.StatusForbidden)
	// With it, the action is done and audited with the session as actor.
	r = e.post("/merchants", url.Values{"action": {"create"}, "name": {"Kedai CSRF"}, "csrf": {token}})
	is.Equal(r.status, http.StatusOK)
	is.True(strings.Contains(string(r.body), "Merchant Kedai CSRF created."))
	audit, err := e.svc.ListAuditEvents(e.ctx, paykit.AuditListParams{Action: "merchant.create"})
	is.NoErr(err)
	is.Equal(len(audit.Data), 1)
	is.True(regexp.MustCompile(`^dashboard:alice:dss_\w+$`).MatchString(audit.Data[0].Actor))
}

// An expired session goes back to sign-in, for GET and POST alike, and a
// signed-out session is over.
func TestDashboardExpiredAndSignedOutSessions(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	e := newDashEnv(t, onMemory)
	token := e.csrf()
	e.clock.Advance(time.Hour + time.Second)
	r := e.get("/payouts")
	is.Equal(r.status, http.StatusSeeOther)
	is.Equal(r.header.Get("Location"), "/dashboard/signin")
	r = e.post("/merchants", url.Values{"action": {"create"}, "name": {"Late"}, "csrf": {token}})
	is.Equal(r.status, http.StatusSeeOther)
	ms, err := e.svc.ListMerchants(e.ctx, paykit.PageParams{})
	is.NoErr(err)
	is.Equal(len(ms.Data), 0)

	// A new session, signed out: its cookie, replayed, is refused.
	token = e.csrf()
	u, _ := url.Parse(e.base + "/")
	saved := e.web.Jar.Cookies(u)
	r = e.post("/signout", url.Values{"csrf": {token}})
	is.Equal(r.status, http.StatusSeeOther)
	is.Equal(r.header.Get("Location"), "/dashboard/signin")
	e.web.Jar.SetCookies(u, saved)
	is.Equal(e.get("/").status, http.StatusSeeOther)

	// Another instance (or this one restarted: a new handler with the same
	// key over the same Store) refuses it too; the sign-out is audited.
	other := httptest.NewServer(http.StripPrefix("/dashboard", httpadapter.NewDashboard(e.svc, httpadapter.DashboardOptions{
		Tokens: map[string]string{"alice": dashToken}, SessionKey: []byte("dashboard test key"), SessionTTL: time.Hour,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})))
	t.Cleanup(other.Close)
	req, err := http.NewRequest("GET", other.URL+"/dashboard/", nil)
	is.NoErr(err)
	for _, c := range saved {
		req.AddCookie(c)
	}
	resp, err := e.web.Do(req)
	is.NoErr(err)
	resp.Body.Close()
	is.Equal(resp.StatusCode, http.StatusSeeOther)
	is.Equal(resp.Header.Get("Location"), "/dashboard/signin")
	audit, err := e.svc.ListAuditEvents(e.ctx, paykit.AuditListParams{Action: "operator_session.end"})
	is.NoErr(err)
	is.Equal(len(audit.Data), 1)
	is.True(strings.HasPrefix(audit.Data[0].Actor, "dashboard:alice:"))
}

// Wrong tokens: five at once, then one per 12 seconds per client address;
// past that even the right token is refused until the bucket refills.
func TestDashboardSignInRateLimit(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	e := newDashEnv(t, onMemory)
	for range 5 {
		is.Equal(e.signIn("wrong").status, http.StatusUnauthorized)
	}
	r := e.signIn(dashToken)
	is.Equal(r.status, http.StatusTooManyRequests)
	is.True(strings.Contains(string(r.body), "Too many wrong tokens"))
	e.clock.Advance(12 * time.Second)
	is.Equal(e.signIn(dashToken).status, http.StatusSeeOther)
}

// A merchant name and a payout's cancel reason with markup render as text.
func TestDashboardEscapesXSS(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	e := newDashEnv(t, onMemory)
	const probe = `<script>alert(1)</script><img src=x onerror=alert(2)>`
	m, err := e.svc.CreateMerchant(e.ctx, "test", "Kedai "+probe)
	is.NoErr(err)
	po := heldPayout(t, e.sandboxEnv, m.ID)
	_, err = e.svc.RejectPayout(e.ctx, "test", po.ID, "reason "+probe)
	is.NoErr(err)
	e.csrf()
	for _, path := range []string{"/merchants", "/merchants/" + m.ID, "/payouts?merchant=" + m.ID, "/payouts/" + po.ID + "?merchant=" + m.ID, "/"} {
		r := e.get(path)
		is.Equal(r.status, http.StatusOK)
		body := string(r.body)
		is.True(!strings.Contains(body, "<script>alert"))
		is.True(!strings.Contains(body, "<img src=x"))
		is.True(strings.Contains(body, "&lt;script&gt;alert(1)&lt;/script&gt;"))
	}
}

// heldPayout creates a payout in test that waits for approval.
func heldPayout(t *testing.T, e *sandboxEnv, merchantID string) *paykit.PayoutIntent {
	t.Helper()
	p := paykit.Principal{Scope: paykit.Scope{MerchantID: merchantID, Environment: paykit.Test}}
	if _, err := e.svc.AdjustBalance(e.ctx, "test", merchantID, paykit.BalanceAdjustmentRequest{
		Environment: paykit.Test, Currency: "THB", Amount: 10_000_000, Reason: "float"}); err != nil {
		t.Fatal(err)
	}
	po, _, err := e.svc.CreatePayoutIntent(e.ctx, p, newid.Random("idem"), paykit.CreatePayoutIntentRequest{
		Amount: dashApprovalThreshold, Currency: "THB", Country: "TH", MerchantReference: newid.Random("ref"),
		Recipient: paykit.Recipient{Type: "bank_account", AccountNumber: plainAccount, BankCode: "KBANK", HolderName: "Somchai Jaidee", HolderNameTH: "สมชาย ใจดี"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if !po.ApprovalPending {
		t.Fatalf("payout %s is %s without a pending approval", po.ID, po.Status)
	}
	return po
}

// TestDashboardOverviewCountsExactly: the overview's 24-hour counts are
// the Store's grouped counts, past a list page's size.
func TestDashboardOverviewCountsExactly(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	e := newDashEnv(t, onMemory)
	m, err := e.svc.CreateMerchant(e.ctx, "test", "Kedai Kira")
	is.NoErr(err)
	p := paykit.Principal{Scope: paykit.Scope{MerchantID: m.ID, Environment: paykit.Test}}
	const n = contract.MaxPageLimit + 5
	for i := range n {
		ref := "order-" + strconv.Itoa(i)
		_, _, err := e.svc.CreatePaymentIntent(e.ctx, p, ref, paykit.CreatePaymentIntentRequest{
			Amount: 10000, Currency: "MYR", Country: "MY", MerchantReference: ref, PaymentMethod: "TNG",
			Customer: map[string]string{"name": "Aisyah"}})
		is.NoErr(err)
	}
	e.csrf()
	r := e.get("/?merchant=" + m.ID + "&environment=test")
	is.Equal(r.status, http.StatusOK)
	section := regexp.MustCompile(`(?s)id="payments-24h".*?</section>`).Find(r.body)
	is.True(section != nil)
	stat := regexp.MustCompile(`<div class="stat">(\d+\+?)</div><div class="note"><a href="[^"]*">requires_action</a>`).FindSubmatch(section)
	is.True(stat != nil)
	is.Equal(string(stat[1]), strconv.Itoa(n)) // exact, not "100+"
}

// twoMerchants creates merchants Kedai A and Kedai B.
func (e *dashEnv) twoMerchants() (a, b *paykit.Merchant) {
	e.t.Helper()
	var err error
	if a, err = e.svc.CreateMerchant(e.ctx, "test", "Kedai A"); err == nil {
		b, err = e.svc.CreateMerchant(e.ctx, "test", "Kedai B")
	}
	if err != nil {
		e.t.Fatal(err)
	}
	return a, b
}

// TestDashboardRevokesOnlyTheMerchantsKeys: revoking a key from another
// merchant's page is refused and leaves the key working; from its own
// merchant's page it is revoked.
func TestDashboardRevokesOnlyTheMerchantsKeys(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	e := newDashEnv(t, onMemory)
	a, b := e.twoMerchants()
	key, err := e.svc.CreateAPIKey(e.ctx, "test", b.ID, paykit.Test)
	is.NoErr(err)
	csrf := e.csrf()
	revoke := func(merchantID string) response {
		return e.post("/merchants/"+merchantID, url.Values{"csrf": {csrf}, "action": {"revoke_key"}, "key": {key.ID}})
	}
	r := revoke(a.ID)
	is.True(strings.Contains(string(r.body), "No such API key."))
	_, err = e.svc.Authenticate(e.ctx, key.PublicKey, key.SecretKey)
	is.NoErr(err) // still works
	r = revoke(b.ID)
	is.True(strings.Contains(string(r.body), "API key "+key.ID+" revoked."))
	_, err = e.svc.Authenticate(e.ctx, key.PublicKey, key.SecretKey)
	is.True(err != nil)
}

// TestDashboardActionsStayInScope: approving or rejecting through a URL
// scoped to another merchant or environment (a stale page, a hand-made
// link) changes nothing and says why; through the payout's own scope the
// answer is the payout acted on.
func TestDashboardActionsStayInScope(t *testing.T) {
	forEachStore(t, func(t *testing.T, open func(t *testing.T) paykit.Store) {
		is := is.New(t)
		e := newDashEnv(t, open)
		a, b := e.twoMerchants()
		po := heldPayout(t, e.sandboxEnv, a.ID)
		csrf := e.csrf()
		act := func(query, action string) response {
			return e.post("/payouts/"+po.ID+"?"+query, url.Values{"csrf": {csrf}, "action": {action}, "reason": {"Not verified"}})
		}
		for _, query := range []string{"merchant=" + a.ID, "env=test", ""} {
			r := act(query, "reject")
			is.Equal(r.status, http.StatusBadRequest)
			is.True(strings.Contains(string(r.body), "This form does not name the merchant and environment it was shown for. Nothing was done."))
		}
		for _, query := range []string{"merchant=" + b.ID + "&env=test", "merchant=" + a.ID + "&env=live"} {
			for _, action := range []string{"approve", "reject"} {
				r := act(query+"&confirm="+action, action)
				is.Equal(r.status, http.StatusNotFound)
				is.True(strings.Contains(string(r.body), "is not one of merchant"))
				is.True(strings.Contains(string(r.body), "Nothing was done."))
			}
		}
		r := act("merchant="+b.ID+"&env=test", "reject")
		is.True(strings.Contains(string(r.body), "The payout "+po.ID+" is not one of merchant "+b.ID+" in test"))
		p := paykit.Principal{Scope: paykit.Scope{MerchantID: a.ID, Environment: paykit.Test}}
		got, err := e.svc.GetPayoutIntent(e.ctx, p, po.ID)
		is.NoErr(err)
		is.Equal(got.Status, paykit.PayoutRequiresApproval) // untouched
		is.True(got.ApprovalPending)
		for _, action := range []string{"payout_intent.approve", "payout_intent.reject"} {
			audit, err := e.svc.ListAuditEvents(e.ctx, paykit.AuditListParams{Action: action})
			is.NoErr(err)
			is.Equal(len(audit.Data), 0)
		}

		r = act("merchant="+a.ID+"&env=test&confirm=reject", "reject")
		is.Equal(r.status, http.StatusOK)
		body := string(r.body)
		is.True(strings.Contains(body, "Payout rejected."))
		is.True(strings.Contains(body, "<h1>Payout "+po.ID+"</h1>"))
		is.True(strings.Contains(body, `<dd id="status"><span class="status-bad">failed</span></dd>`))
		is.True(strings.Contains(body, `<dd id="cancel-reason">Not verified</dd>`))
		is.True(!strings.Contains(body, `id="confirm-reject"`))
	})
}

// TestDashboardOpensOnTheActiveMerchant: without a merchant in the URL the
// pages show the merchant and environment with the most recent event, not
// a newer merchant that has none; without any event, the newest merchant.
func TestDashboardOpensOnTheActiveMerchant(t *testing.T) {
	forEachStore(t, func(t *testing.T, open func(t *testing.T) paykit.Store) {
		is := is.New(t)
		e := newDashEnv(t, open)
		busy, err := e.svc.CreateMerchant(e.ctx, "test", "Kedai Busy")
		is.NoErr(err)
		e.csrf()
		selected := regexp.MustCompile(`<option value="(mch_\w+)" selected>`)
		overview := func() string {
			r := e.get("/")
			is.Equal(r.status, http.StatusOK)
			m := selected.FindSubmatch(r.body)
			is.True(m != nil)
			return string(m[1])
		}
		is.Equal(overview(), busy.ID) // the only one
		heldPayout(t, e.sandboxEnv, busy.ID)
		e.clock.Advance(time.Second)
		empty, err := e.svc.CreateMerchant(e.ctx, "test", "Kedai Empty")
		is.NoErr(err)
		is.Equal(overview(), busy.ID)
		r := e.get("/payouts")
		is.True(strings.Contains(string(r.body), "Somchai Jaidee") || strings.Contains(string(r.body), "KBANK"))
		is.Equal(string(selected.FindSubmatch(r.body)[1]), busy.ID)
		r = e.get("/?merchant=" + empty.ID) // the picker still picks
		is.Equal(string(selected.FindSubmatch(r.body)[1]), empty.ID)
		e.clock.Advance(time.Second)
		heldPayout(t, e.sandboxEnv, empty.ID)
		is.Equal(overview(), empty.ID) // now the most recent
	})
}

// TestDashboardJobsCountMatchesJobsPage: the overview's count of jobs that
// need attention links to the jobs page as it opens by default, which
// lists exactly those jobs (not the retrying, waiting or scheduled ones).
func TestDashboardJobsCountMatchesJobsPage(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	e := newDashEnv(t, onMemory)
	m, err := e.svc.CreateMerchant(e.ctx, "test", "Kedai Jobs")
	is.NoErr(err)
	scope := paykit.Scope{MerchantID: m.ID, Environment: paykit.Test}
	now := e.clock.Now()
	ends := []paykit.JobEnd{}
	for i, st := range []paykit.JobState{paykit.JobNeedsAttention, paykit.JobNeedsAttention, paykit.JobRetrying, paykit.JobWaiting, paykit.JobNeedsAttention} {
		id := "job_" + strconv.Itoa(i)
		is.NoErr(e.store.EnqueueJob(e.ctx, &paykit.Job{ID: id, Kind: "payout.inquire", Scope: scope, TargetID: "po_" + id, RunAt: now, CreatedAt: now}))
		ends = append(ends, paykit.JobEnd{JobRun: paykit.JobRun{ID: id, Attempts: 1}, Status: st, RunAt: now.Add(time.Hour), LastError: "boom"})
	}
	claimed, err := e.store.Queue().ClaimJobs(e.ctx, paykit.ClaimParams{Owner: "w-test", Now: now, LeaseUntil: now.Add(time.Second), Limit: 10})
	is.NoErr(err)
	is.Equal(len(claimed), len(ends))
	lost, err := e.store.Queue().FinishJobs(e.ctx, "w-test", ends)
	is.NoErr(err)
	is.Equal(len(lost), 0)
	is.NoErr(e.store.EnqueueJob(e.ctx, &paykit.Job{ID: "job_sched", Kind: "payout.inquire", Scope: scope, TargetID: "po_s", RunAt: now.Add(time.Hour), CreatedAt: now}))
	e.clock.Advance(2 * time.Second) // the leases are over

	e.csrf()
	r := e.get("/")
	stat := regexp.MustCompile(`<div class="stat">(\d+)</div><div class="note"><a href="([^"]*)">jobs need attention</a>`).FindSubmatch(r.body)
	is.True(stat != nil)
	is.Equal(string(stat[1]), "3")
	is.Equal(string(stat[2]), "/dashboard/jobs")
	rows := regexp.MustCompile(`<tr><td data-label="Job" class="mono">job_\d+</td>`)
	for _, page := range []string{"/jobs", "/jobs?state=needs_attention"} {
		r = e.get(page)
		is.Equal(r.status, http.StatusOK)
		is.Equal(len(rows.FindAll(r.body, -1)), 3)
		is.Equal(strings.Count(string(r.body), `<span class="status-bad">needs_attention</span>`), 3)
	}
	is.True(strings.Contains(string(e.get("/jobs").body), "Jobs that need attention"))
	r = e.get("/jobs?state=")
	is.Equal(len(regexp.MustCompile(`<tr><td data-label="Job" class="mono">job_\w+</td>`).FindAll(r.body, -1)), 6) // Any: every pending job
}

// TestDashboardEndpointActionsStayInScope: resending, from a merchant's
// webhook endpoint, an event of another merchant is refused and schedules
// nothing; the answer is the endpoint's page.
func TestDashboardEndpointActionsStayInScope(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	e := newDashEnv(t, onMemory)
	a, b := e.twoMerchants()
	ep, err := e.svc.CreateWebhookEndpoint(e.ctx, "test", a.ID, paykit.CreateWebhookEndpointRequest{Environment: "test", URL: "https://a.example.com/hooks"})
	is.NoErr(err)
	heldPayout(t, e.sandboxEnv, b.ID)
	evs, err := e.svc.ListEvents(e.ctx, paykit.Principal{Scope: paykit.Scope{MerchantID: b.ID, Environment: paykit.Test}}, paykit.EventListParams{})
	is.NoErr(err)
	is.True(len(evs.Data) > 0)
	csrf := e.csrf()
	r := e.post("/webhook_endpoints/"+ep.Endpoint.ID, url.Values{"csrf": {csrf}, "action": {"resend"}, "event": {evs.Data[0].ID}})
	is.Equal(r.status, http.StatusNotFound)
	is.True(strings.Contains(string(r.body), "No such event"))
	is.True(strings.Contains(string(r.body), "<h1>Webhook endpoint "+ep.Endpoint.ID+"</h1>"))
	jobs, err := e.svc.ListJobs(e.ctx, paykit.JobListParams{Kind: "webhook.deliver"})
	is.NoErr(err)
	is.Equal(len(jobs.Data), 0)
	audit, err := e.svc.ListAuditEvents(e.ctx, paykit.AuditListParams{Action: "webhook_endpoint.resend_event"})
	is.NoErr(err)
	is.Equal(len(audit.Data), 0)
}

// TestDashboardAuditShowsMoney: the audit log reads an adjustment's amount
// as money with its currency, not as raw minor units.
func TestDashboardAuditShowsMoney(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	e := newDashEnv(t, onMemory)
	m, err := e.svc.CreateMerchant(e.ctx, "test", "Kedai Kira")
	is.NoErr(err)
	_, err = e.svc.AdjustBalance(e.ctx, "test", m.ID, paykit.BalanceAdjustmentRequest{
		Environment: paykit.Test, Currency: "THB", Amount: 1_234_567, Reason: "float"})
	is.NoErr(err)
	e.csrf()
	r := e.get("/audit?merchant=" + m.ID)
	is.Equal(r.status, http.StatusOK)
	body := string(r.body)
	is.True(strings.Contains(body, "amount: THB 12,345.67; reason: float"))
	is.True(!strings.Contains(body, "1234567"))
}
