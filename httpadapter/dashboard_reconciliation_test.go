package httpadapter_test

import (
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/internal/contract"
)

// The dashboard's reconciliation pages over HTTP: the break queue and its
// filters, a break's page and its resolve form, the runs, and a payment's
// open breaks. Breaks come from a feeBank, which settles a payment whose
// amount ends in 921 with a fee one minor unit above the one it stated.

// reconScenario is what newReconScenario made.
type reconScenario struct {
	a, b          *paykit.Merchant
	pa, pb        paykit.Principal
	mismatch, ok  *paykit.PaymentIntent // of a: settled with another fee; matched
	otherMismatch *paykit.PaymentIntent // of b
	breakA        paykit.ReconciliationBreak
	breakB        paykit.ReconciliationBreak
}

// newReconScenario makes merchant Kedai A's MYR 109.21 payment (fee MYR
// 4.17, settled with MYR 4.18) and MYR 50.00 payment, and Kedai B's MYR
// 209.21 payment (fee MYR 7.07, settled with 7.08), and settles both
// merchants: two fee_mismatch breaks, one each.
func newReconScenario(t *testing.T, e *dashEnv) *reconScenario {
	t.Helper()
	is := is.New(t)
	sc := &reconScenario{}
	sc.a, sc.b = e.twoMerchants()
	sc.pa = paykit.Principal{Scope: paykit.Scope{MerchantID: sc.a.ID, Environment: paykit.Test}}
	sc.pb = paykit.Principal{Scope: paykit.Scope{MerchantID: sc.b.ID, Environment: paykit.Test}}
	sc.mismatch = cardPayment(t, e, sc.pa, "a-921", 10_921, "MYR")
	sc.ok = cardPayment(t, e, sc.pa, "a-ok", 5_000, "MYR")
	sc.otherMismatch = cardPayment(t, e, sc.pb, "b-921", 20_921, "MYR")
	is.Equal(sc.mismatch.Fee, int64(417))
	for _, p := range []paykit.Principal{sc.pa, sc.pb} {
		e.clock.Advance(time.Second) // the batches a second apart
		_, err := e.svc.SettleTestFunds(e.ctx, p)
		is.NoErr(err)
	}
	page, err := e.svc.ListReconciliationBreaks(e.ctx, paykit.BreakListParams{})
	is.NoErr(err)
	is.Equal(len(page.Data), 2)
	sc.breakB, sc.breakA = page.Data[0], page.Data[1] // newest first
	is.Equal(sc.breakA.Source, sc.mismatch.ID)
	is.Equal(sc.breakB.Source, sc.otherMismatch.ID)
	is.Equal(sc.breakA.Type, paykit.BreakFeeMismatch)
	return sc
}

// breakRow matches a break row of the queue and captures its id.
var breakRow = regexp.MustCompile(`<tr><td data-label="Break"><a href="[^"]*">(rb_\w+)</a></td>`)

func breakIDs(body []byte) []string {
	var out []string
	for _, m := range breakRow.FindAllSubmatch(body, -1) {
		out = append(out, string(m[1]))
	}
	return out
}

// TestDashboardBreakQueue: the queue shows open breaks by default with
// their merchant, source and money; each filter narrows it; a bad filter
// says why.
func TestDashboardBreakQueue(t *testing.T) {
	forEachStore(t, func(t *testing.T, open func(t *testing.T) paykit.Store) {
		is := is.New(t)
		e := newMoneyDashEnv(t, open)
		sc := newReconScenario(t, e)
		e.csrf()
		list := func(query string) []string {
			t.Helper()
			r := e.get("/reconciliation" + query)
			is.Equal(r.status, http.StatusOK)
			return breakIDs(r.body)
		}
		r := e.get("/reconciliation")
		is.Equal(r.status, http.StatusOK)
		body := string(r.body)
		is.Equal(breakIDs(r.body), []string{sc.breakB.ID, sc.breakA.ID})
		sq := "?env=test&amp;merchant=" + sc.a.ID
		for _, want := range []string{
			`aria-current="page">Reconciliation</a>`,
			`<option value="open" selected>open</option>`,
			`<td data-label="Type" class="word">fee_mismatch</td><td data-label="Status"><span class="status-wait">open</span></td><td data-label="Provider">feebank</td>`,
			`<td data-label="Merchant"><a href="/dashboard/merchants/` + sc.a.ID + `">` + sc.a.ID + `</a></td>`,
			`<td data-label="Source"><a href="/dashboard/payment_intents/` + sc.mismatch.ID + sq + `">` + sc.mismatch.ID + `</a></td>`,
			`<td data-label="Expected">MYR 109.21, fee MYR 4.17</td><td data-label="Reported">MYR 109.21, fee MYR 4.18</td>`,
			`<td data-label="Expected">MYR 209.21, fee MYR 7.07</td><td data-label="Reported">MYR 209.21, fee MYR 7.08</td>`,
			`href="/dashboard/reconciliation/runs"`,
		} {
			if !strings.Contains(body, want) {
				t.Errorf("the queue lacks %s", want)
			}
		}
		is.True(!strings.Contains(body, sc.ok.ID)) // matched: no break

		is.Equal(list("?merchant="+sc.a.ID), []string{sc.breakA.ID})
		is.Equal(list("?merchant="+sc.b.ID+"&provider=feebank&type=fee_mismatch"), []string{sc.breakB.ID})
		is.Equal(len(list("?type=amount_mismatch")), 0)
		is.Equal(len(list("?provider=other")), 0)
		is.Equal(len(list("?status=resolved")), 0)
		is.Equal(list("?status="), []string{sc.breakB.ID, sc.breakA.ID}) // any

		r = e.get("/reconciliation?type=amount_mismatch")
		is.True(strings.Contains(string(r.body), "No breaks match."))
		is.True(strings.Contains(string(r.body), `<option value="amount_mismatch" selected>amount_mismatch</option>`))
		r = e.get("/reconciliation?status=closed")
		is.Equal(r.status, http.StatusBadRequest)
		is.True(strings.Contains(string(r.body), `<p class="notice bad" id="notice" role="status">status must be open or resolved.</p>`))

		// Resolved, it leaves the default queue and shows under resolved.
		_, err := e.svc.ResolveBreak(e.ctx, "test", sc.breakB.ID, paykit.ResolveBreakRequest{Resolution: paykit.ResolveAcceptPaykit, Note: "ours"})
		is.NoErr(err)
		is.Equal(list(""), []string{sc.breakA.ID})
		is.Equal(list("?status=resolved"), []string{sc.breakB.ID})
	})
}

// TestDashboardBreakQueuePages: the queue pages, keeping its filters.
func TestDashboardBreakQueuePages(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	e := newMoneyDashEnv(t, onMemory)
	a, _ := e.twoMerchants()
	pa := paykit.Principal{Scope: paykit.Scope{MerchantID: a.ID, Environment: paykit.Test}}
	const n = contract.DefaultPageLimit + 2
	for i := range n {
		cardPayment(t, e, pa, "p-"+strconv.Itoa(i), int64(1_921+1_000*i), "MYR")
	}
	_, err := e.svc.SettleTestFunds(e.ctx, pa)
	is.NoErr(err)
	e.csrf()
	r := e.get("/reconciliation?type=fee_mismatch")
	is.Equal(len(breakIDs(r.body)), contract.DefaultPageLimit)
	next := regexp.MustCompile(`id="next-page" rel="next" href="([^"]+)"`).FindSubmatch(r.body)
	is.True(next != nil)
	href := strings.ReplaceAll(string(next[1]), "&amp;", "&")
	is.True(strings.Contains(href, "type=fee_mismatch"))
	r = e.get(strings.TrimPrefix(href, "/dashboard"))
	is.Equal(len(breakIDs(r.body)), 2)
	is.True(!strings.Contains(string(r.body), `id="next-page"`))
	is.True(strings.Contains(string(r.body), "First page"))
}

// TestDashboardResolveBreak: a break's page shows both sides and the
// resolve form; a form without the session's CSRF token, without a note
// or with another resolution changes nothing; accept_provider settles the
// payment, books the difference, names the operator session in the audit
// log and shows the resolution; resolving again is invalid_state.
func TestDashboardResolveBreak(t *testing.T) {
	forEachStore(t, func(t *testing.T, open func(t *testing.T) paykit.Store) {
		is := is.New(t)
		e := newMoneyDashEnv(t, open)
		sc := newReconScenario(t, e)
		csrf := e.csrf()
		path := "/reconciliation/breaks/" + sc.breakA.ID
		r := e.get(path)
		is.Equal(r.status, http.StatusOK)
		body := string(r.body)
		for _, want := range []string{
			`<h1>Reconciliation break ` + sc.breakA.ID + `</h1>`,
			`<dd id="type">fee_mismatch</dd>`,
			`<dd id="status"><span class="status-wait">open</span></dd>`,
			`<dd id="merchant"><a href="/dashboard/merchants/` + sc.a.ID + `">`,
			`<dd id="source"><a href="/dashboard/payment_intents/` + sc.mismatch.ID + `?env=test&amp;merchant=` + sc.a.ID + `">`,
			`<dd id="expected">MYR 109.21, fee MYR 4.17</dd>`,
			`<dd id="reported">MYR 109.21, fee MYR 4.18</dd>`,
			`<dd id="difference">MYR -0.01</dd>`,
			`<form class="stack" method="post" action="/dashboard` + path + `" id="resolve-form">`,
			`<option value="accept_paykit" selected>`,
			`<option value="accept_provider">`,
			`<textarea id="resolve-form-note" name="note" required maxlength="512"></textarea>`,
		} {
			if !strings.Contains(body, want) {
				t.Errorf("the break's page lacks %s", want)
			}
		}
		is.True(!strings.Contains(body, `id="resolution"`))
		is.True(strings.Contains(string(e.get("/reconciliation/breaks/rb_nope").body), "Not found"))

		still := func() {
			t.Helper()
			b, err := e.svc.GetReconciliationBreak(e.ctx, sc.breakA.ID)
			is.NoErr(err)
			is.Equal(b.Status, paykit.BreakOpen)
		}
		resolve := func(form url.Values) response {
			t.Helper()
			form.Set("action", "resolve")
			return e.post(path, form)
		}
		r = resolve(url.Values{"csrf": {"0123abcd"}, "resolution": {"accept_provider"}, "note": {"fee is theirs"}})
		is.Equal(r.status, http.StatusForbidden)
		r = resolve(url.Values{"resolution": {"accept_provider"}, "note": {"fee is theirs"}})
		is.Equal(r.status, http.StatusForbidden)
		still()
		for _, bad := range []url.Values{
			{"csrf": {csrf}, "resolution": {"accept_provider"}, "note": {"   "}},
			{"csrf": {csrf}, "resolution": {"accept_provider"}, "note": {strings.Repeat("é", 513)}},
			{"csrf": {csrf}, "resolution": {"matched"}, "note": {"fee is theirs"}},
			{"csrf": {csrf}, "note": {"fee is theirs"}},
		} {
			r = resolve(bad)
			is.Equal(r.status, http.StatusBadRequest)
			is.True(strings.Contains(string(r.body), `<p class="notice bad" id="notice" role="status">`))
			is.True(strings.Contains(string(r.body), `id="resolve-form"`)) // still open: the form again
			still()
		}
		r = e.post(path, url.Values{"csrf": {csrf}, "action": {"ignore"}})
		is.Equal(r.status, http.StatusBadRequest)
		is.True(strings.Contains(string(r.body), "Unknown action."))
		still()
		// 512 characters (not bytes) are a note.
		note := strings.Repeat("é", 511) + "!"
		e.clock.Advance(90 * time.Second)
		r = resolve(url.Values{"csrf": {csrf}, "resolution": {"accept_provider"}, "note": {note}})
		is.Equal(r.status, http.StatusOK)
		body = string(r.body)
		resolvedAt := e.clock.Now().UTC().Format("2006-01-02 15:04:05 UTC")
		for _, want := range []string{
			`<p class="notice " id="notice" role="status">Break resolved: accept_provider.</p>`,
			`<dd id="status"><span class="status-ok">resolved</span></dd>`,
			`<dd id="resolution">accept_provider</dd>`,
			`<dd id="note">` + note + `</dd>`,
			`<dd id="resolved-at">` + resolvedAt + `</dd>`,
		} {
			if !strings.Contains(body, want) {
				t.Errorf("the resolved break's page lacks %s", want)
			}
		}
		is.True(!strings.Contains(body, `id="resolve-form"`))

		// The money: the payment settled, the Provider's fee taken.
		pi, err := e.svc.GetPaymentIntent(e.ctx, sc.pa, sc.mismatch.ID)
		is.NoErr(err)
		is.True(pi.SettledAt != nil)
		bal, err := e.store.GetBalance(e.ctx, sc.pa.Scope, "MYR")
		is.NoErr(err)
		is.Equal([2]int64{bal.Available, bal.Pending}, [2]int64{(10_921 - 417) + (5_000 - 245) - 1, 0})
		// The other merchant's break is untouched.
		other, err := e.svc.GetReconciliationBreak(e.ctx, sc.breakB.ID)
		is.NoErr(err)
		is.Equal(other.Status, paykit.BreakOpen)

		// The audit log names the session, and links the break.
		audit, err := e.svc.ListAuditEvents(e.ctx, paykit.AuditListParams{Action: "reconciliation_break.resolve"})
		is.NoErr(err)
		is.Equal(len(audit.Data), 1)
		is.True(strings.HasPrefix(audit.Data[0].Actor, "dashboard:alice:dss_"))
		is.Equal(audit.Data[0].TargetID, sc.breakA.ID)
		r = e.get("/audit?action=reconciliation_break.resolve")
		is.True(strings.Contains(string(r.body), `<a href="/dashboard/reconciliation/breaks/`+sc.breakA.ID+`">`+sc.breakA.ID+`</a>`))

		// Again: invalid_state, shown as the forms show errors; nothing more
		// moves.
		r = resolve(url.Values{"csrf": {csrf}, "resolution": {"accept_paykit"}, "note": {"second thoughts"}})
		is.Equal(r.status, http.StatusUnprocessableEntity)
		is.True(strings.Contains(string(r.body), `<p class="notice bad" id="notice" role="status">This break is already resolved (accept_provider).</p>`))
		is.True(strings.Contains(string(r.body), `<dd id="resolution">accept_provider</dd>`))
		again, err := e.store.GetBalance(e.ctx, sc.pa.Scope, "MYR")
		is.NoErr(err)
		is.Equal(again.Available, bal.Available)
		audit, err = e.svc.ListAuditEvents(e.ctx, paykit.AuditListParams{Action: "reconciliation_break.resolve"})
		is.NoErr(err)
		is.Equal(len(audit.Data), 1)
	})
}

// TestDashboardReconciliationRuns: each batch read, with its counts.
func TestDashboardReconciliationRuns(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	e := newMoneyDashEnv(t, onMemory)
	e.csrf()
	r := e.get("/reconciliation/runs")
	is.Equal(r.status, http.StatusOK)
	is.True(strings.Contains(string(r.body), "No settlement batch read yet."))
	newReconScenario(t, e)
	r = e.get("/reconciliation/runs")
	body := string(r.body)
	is.True(strings.Contains(body, `aria-current="page">Reconciliation</a>`))
	runs, err := e.svc.ListReconciliationRuns(e.ctx, paykit.RunListParams{})
	is.NoErr(err)
	is.Equal(len(runs.Data), 2)
	for _, want := range []string{
		// A's batch: two lines, one matched, one break; B's: one line, a break.
		`<td data-label="Provider">feebank</td><td data-label="Batch" class="mono">fb_batch_1</td><td data-label="Lines" class="num">2</td>` +
			`<td data-label="Matched" class="num">1</td><td data-label="Breaks" class="num"><span class="status-bad">1</span></td>`,
		`<td data-label="Provider">feebank</td><td data-label="Batch" class="mono">fb_batch_2</td><td data-label="Lines" class="num">1</td>` +
			`<td data-label="Matched" class="num">0</td><td data-label="Breaks" class="num"><span class="status-bad">1</span></td>`,
		`<td data-label="Run" class="mono">` + runs.Data[0].ID + `</td>`,
		`<td data-label="Started">` + runs.Data[1].StartedAt.UTC().Format("2006-01-02 15:04:05 UTC") + `</td>`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the runs page lacks %s", want)
		}
	}
	is.True(strings.Index(body, "fb_batch_2") < strings.Index(body, "fb_batch_1")) // newest first
	r = e.get("/reconciliation/runs?provider=other")
	is.True(strings.Contains(string(r.body), "No settlement batch read yet."))
	is.True(!strings.Contains(string(r.body), "fb_batch_1"))
}

// TestDashboardPaymentOpenBreaks: a payment's page shows its open break
// and that its funds are held; a matched payment and another merchant's
// show none; once resolved, the payment is settled and the break gone
// from its page.
func TestDashboardPaymentOpenBreaks(t *testing.T) {
	forEachStore(t, func(t *testing.T, open func(t *testing.T) paykit.Store) {
		is := is.New(t)
		e := newMoneyDashEnv(t, open)
		sc := newReconScenario(t, e)
		e.csrf()
		get := func(pi *paykit.PaymentIntent, m *paykit.Merchant) string {
			t.Helper()
			r := e.get("/payment_intents/" + pi.ID + "?" + scopeQuery(m))
			is.Equal(r.status, http.StatusOK)
			return string(r.body)
		}
		body := get(sc.mismatch, sc.a)
		for _, want := range []string{
			`<dd id="settlement"><span class="status-bad">pending: held by an open reconciliation break</span></dd>`,
			`<section class="card" id="breaks">`,
			`<td data-label="Break"><a href="/dashboard/reconciliation/breaks/` + sc.breakA.ID + `">` + sc.breakA.ID + `</a></td><td data-label="Type" class="word">fee_mismatch</td>`,
			`<td data-label="Reported">MYR 109.21, fee MYR 4.18</td>`,
		} {
			if !strings.Contains(body, want) {
				t.Errorf("the payment's page lacks %s", want)
			}
		}
		is.True(!strings.Contains(body, sc.breakB.ID))
		body = get(sc.ok, sc.a)
		is.True(!strings.Contains(body, `id="breaks"`))
		is.True(strings.Contains(body, `<dd id="settlement"><span class="status-ok">settled at `))
		body = get(sc.otherMismatch, sc.b)
		is.True(strings.Contains(body, sc.breakB.ID))
		is.True(!strings.Contains(body, sc.breakA.ID))

		_, err := e.svc.ResolveBreak(e.ctx, "test", sc.breakA.ID, paykit.ResolveBreakRequest{Resolution: paykit.ResolveAcceptPaykit, Note: "ours"})
		is.NoErr(err)
		body = get(sc.mismatch, sc.a)
		is.True(!strings.Contains(body, `id="breaks"`))
		is.True(strings.Contains(body, `<dd id="settlement"><span class="status-ok">settled at `))
	})
}
