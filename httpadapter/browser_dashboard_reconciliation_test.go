package httpadapter_test

import (
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/internal/browsertest"
)

// From the navigation to the reconciliation queue, filtered to one
// merchant; a break resolved through its form with accept_provider and a
// note; the payment it held, settled; the runs.
func TestBrowserDashboardResolveBreak(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	b := browsertest.New(t)
	e := newMoneyDashEnv(t, backends[1].open) // SQLite
	sc := newReconScenario(t, e)
	runWorker(t, e.svc, b)
	browserSignIn(e, b)

	b.ClickAndLoad(`nav.main a[href$="/reconciliation"]`)
	b.WaitFor("#list tbody tr", pageWait)
	is.Equal(b.Text("main h1"), "Reconciliation breaks")
	is.Equal(rows(b, "list"), 2)
	b.Type("#f-merchant", sc.a.ID)
	b.ClickAndLoad("#apply-filters")
	b.WaitFor("#list tbody tr", pageWait)
	is.Equal(rows(b, "list"), 1)
	is.True(!strings.Contains(b.Text("#list"), sc.breakB.ID))
	is.True(strings.Contains(b.Text("#list"), "MYR 109.21, fee MYR 4.18"))
	b.Screenshot("dashboard-reconciliation")

	b.ClickAndLoad(`#list a[href$="/reconciliation/breaks/` + sc.breakA.ID + `"]`)
	b.WaitFor("#resolve-form", pageWait)
	is.Equal(b.Text("main h1"), "Reconciliation break "+sc.breakA.ID)
	is.Equal(b.Text("#status"), "open")
	is.Equal(b.Text("#difference"), "MYR -0.01")
	b.SetValue("#resolve-form-resolution", "accept_provider")
	b.Type("#resolve-form-note", "The Provider's fee table changed; their fee stands.")
	b.ClickAndLoad("#resolve-submit")
	b.WaitFor("#notice", pageWait)
	is.Equal(b.Text("#notice"), "Break resolved: accept_provider.")
	is.Equal(b.Text("#status"), "resolved")
	is.Equal(b.Text("#resolution"), "accept_provider")
	is.Equal(b.Text("#note"), "The Provider's fee table changed; their fee stands.")
	is.True(b.Text("#resolved-at") != "")
	is.Equal(browsertest.Eval[int](b, `document.querySelectorAll("#resolve-form").length`), 0)
	b.Screenshot("dashboard-break-resolved")

	audit, err := e.svc.ListAuditEvents(e.ctx, paykit.AuditListParams{Action: "reconciliation_break.resolve"})
	is.NoErr(err)
	is.Equal(len(audit.Data), 1)
	is.True(strings.HasPrefix(audit.Data[0].Actor, "dashboard:alice:dss_"))

	b.ClickAndLoad("#source a")
	b.WaitFor("#settlement", pageWait)
	is.Equal(b.Text("main h1"), "Payment intent "+sc.mismatch.ID)
	is.True(strings.HasPrefix(b.Text("#settlement"), "settled at "))
	is.Equal(browsertest.Eval[int](b, `document.querySelectorAll("#breaks").length`), 0)

	b.Navigate(e.base + "/reconciliation")
	b.WaitFor("#list tbody tr", pageWait)
	is.Equal(rows(b, "list"), 1) // B's, still open
	b.ClickAndLoad(`#runs a`)
	b.WaitFor("#list tbody tr", pageWait)
	is.Equal(b.Text("main h1"), "Reconciliation runs")
	is.Equal(rows(b, "list"), 2)
}
