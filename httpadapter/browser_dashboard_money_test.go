package httpadapter_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/matryer/is"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/internal/browsertest"
	"github.com/paykit/paykit/paykittest"
)

// The dashboard's money pages in a real browser (SQLite Store, a running
// worker, a feeBank Provider): disputes, balance transactions, a
// payment's fee and settlement.

func newMoneyDashBrowser(t *testing.T) (*dashEnv, *browsertest.Browser, *moneyScenario) {
	t.Helper()
	b := browsertest.New(t)
	e := newMoneyDashEnv(t, backends[1].open) // SQLite
	sc := newMoneyScenario(t, e)
	runWorker(t, e.svc, b)
	return e, b, sc
}

// pickMerchant chooses m in the page's merchant picker.
func pickMerchant(b *browsertest.Browser, m *paykit.Merchant) {
	b.SetValue("#scope-merchant", m.ID)
	b.ClickAndLoad("form.scope button[type=submit]")
	b.WaitFor("main h1", pageWait)
}

// rows counts the rows of a section's table.
func rows(b *browsertest.Browser, section string) int {
	return browsertest.Eval[int](b, `document.querySelectorAll("#`+section+` tbody tr").length`)
}

// From the navigation to the disputes of a merchant, filtered by status;
// the dispute's page with its money, evidence and balance transactions;
// its payment with fee, net, settlement state and disputes. Another
// merchant's dispute shows nowhere.
func TestBrowserDashboardDisputes(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	e, b, sc := newMoneyDashBrowser(t)
	browserSignIn(e, b)

	b.ClickAndLoad(`nav.main a[href$="/disputes"]`)
	b.WaitFor("#scope-merchant", pageWait)
	pickMerchant(b, sc.a)
	is.Equal(b.Text("main h1"), "Disputes")
	is.Equal(rows(b, "list"), 1)
	is.True(!strings.Contains(b.Text("#list"), sc.otherDispute.ID))
	b.SetValue("#f-status", "won")
	b.ClickAndLoad("#apply-filters")
	b.WaitFor("#list .empty", pageWait)
	is.Equal(b.Text("#list .empty"), "No disputes match.")
	b.SetValue("#f-status", "needs_response")
	b.ClickAndLoad("#apply-filters")
	b.WaitFor("#list tbody tr", pageWait)
	is.True(strings.Contains(b.URL(), "status=needs_response"))
	is.Equal(rows(b, "list"), 1)

	b.ClickAndLoad(`#list a[href*="/disputes/` + sc.dispute.ID + `"]`)
	b.WaitFor("#details", pageWait)
	is.Equal(b.Text("main h1"), "Dispute "+sc.dispute.ID)
	is.Equal(b.Text("#status"), "needs_response")
	is.Equal(b.Text("#amount"), "MYR 500.00")
	is.Equal(b.Text("#fee"), "MYR 15.00")
	is.Equal(b.Text("#reason"), "fraudulent")
	is.Equal(b.Text("#evidence"), "none")
	due := paykittest.Start.Add(8 * 24 * time.Hour).Format("2006-01-02 15:04:05 UTC")
	is.Equal(b.Text("#evidence-due-by"), due)
	is.Equal(rows(b, "balance-transactions"), 1)
	is.True(strings.Contains(b.Text("#balance-transactions"), "MYR -515.00"))
	is.True(strings.Contains(b.Text("#timeline"), "dispute.created"))
	b.Screenshot("dashboard-dispute")

	b.ClickAndLoad("#payment-intent a")
	b.WaitFor("#disputes", pageWait)
	is.Equal(b.Text("main h1"), "Payment intent "+sc.pending.ID)
	is.Equal(b.Text("#fee"), "MYR 15.50")
	is.Equal(b.Text("#net"), "MYR 484.50")
	is.Equal(b.Text("#settlement"), "pending until settled")
	is.Equal(b.Text("#disputed"), "MYR 500.00")
	is.Equal(rows(b, "disputes"), 1)
	is.True(strings.Contains(b.Text("#disputes"), sc.dispute.ID))

	// The merchant wins it: the page says so after a reload.
	_, _, err := e.svc.SubmitDisputeEvidence(e.ctx, sc.pa, "evidence-1", sc.dispute.ID, paykit.DisputeEvidenceRequest{
		Text: "Signed delivery note: winning_evidence", Submit: true})
	is.NoErr(err)
	dispute := e.base + "/disputes/" + sc.dispute.ID + "?" + scopeQuery(sc.a)
	for deadline := time.Now().Add(pageWait); ; time.Sleep(50 * time.Millisecond) {
		b.Navigate(dispute)
		if b.Text("#status") == "won" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the dispute is still %s", b.Text("#status"))
		}
	}
	is.Equal(b.Text("#evidence"), "Signed delivery note: winning_evidence")
	is.True(b.Text("#closed-at") != "")
	is.Equal(rows(b, "balance-transactions"), 2)
	is.True(strings.Contains(b.Text("#timeline"), "dispute.won"))
}

// The balance transactions of a merchant, filtered by type and created
// range; a row leads to its source.
func TestBrowserDashboardBalanceTransactions(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	e, b, sc := newMoneyDashBrowser(t)
	browserSignIn(e, b)

	b.ClickAndLoad(`nav.main a[href$="/balance_transactions"]`)
	b.WaitFor("#scope-merchant", pageWait)
	pickMerchant(b, sc.a)
	is.Equal(b.Text("main h1"), "Balance transactions")
	is.Equal(rows(b, "list"), 5)
	body := b.Text("#list")
	is.True(!strings.Contains(body, sc.otherPay.ID))
	is.True(!strings.Contains(body, sc.otherDispute.ID))

	b.SetValue("#f-type", "refund")
	b.ClickAndLoad("#apply-filters")
	b.WaitFor("#list tbody tr", pageWait)
	is.Equal(rows(b, "list"), 1)
	is.True(strings.Contains(b.Text("#list"), "MYR -20.00"))

	b.SetValue("#f-type", "")
	b.SetValue("#f-created_from", "2026-06-02")
	b.ClickAndLoad("#apply-filters")
	b.WaitFor("#list tbody tr", pageWait)
	is.True(strings.Contains(b.URL(), "created_from=2026-06-02"))
	is.Equal(rows(b, "list"), 3) // the disputed payment, its dispute, the adjustment
	b.SetValue("#f-currency", "MYR")
	b.SetValue("#f-status", "pending")
	b.ClickAndLoad("#apply-filters")
	b.WaitFor("#list tbody tr", pageWait)
	is.Equal(rows(b, "list"), 1)
	b.ClickAndLoad(`#list a[href*="/payment_intents/` + sc.pending.ID + `"]`)
	b.WaitFor("#settlement", pageWait)
	is.Equal(b.Text("main h1"), "Payment intent "+sc.pending.ID)

	// The settled payment's refund leads to the refund's page.
	b.Navigate(e.base + "/balance_transactions?" + scopeQuery(sc.a) + "&type=refund")
	b.ClickAndLoad(`#list a[href*="/refunds/` + sc.refund.ID + `"]`)
	b.WaitFor("#details", pageWait)
	is.Equal(b.Text("main h1"), "Refund "+sc.refund.ID)
}

// The money pages at 1280 px and 390 px: nothing scrolls sideways.
func TestBrowserDashboardMoneyWidths(t *testing.T) {
	t.Parallel()
	e, b, sc := newMoneyDashBrowser(t)
	browserSignIn(e, b)
	q := "?" + scopeQuery(sc.a)
	pages := []string{"/" + q, "/merchants/" + sc.a.ID, "/balance_transactions" + q, "/disputes" + q,
		"/disputes/" + sc.dispute.ID + q, "/payment_intents/" + sc.pending.ID + q}
	for _, w := range dashWidths {
		b.Do(chromedp.EmulateViewport(w, 900))
		for i, page := range pages {
			b.Navigate(e.base + page)
			b.WaitFor("main h1", pageWait)
			fits(t, b, page, w)
			b.Screenshot("dashboard-money-" + strconv.FormatInt(w, 10) + "-" + strconv.Itoa(i))
		}
	}
}
