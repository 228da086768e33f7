package httpadapter_test

import (
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/internal/contract"
	"github.com/paykit/paykit/paykittest"
)

// The dashboard's money pages over HTTP: balances with their pending
// funds, balance transactions, disputes, and a payment's fee and
// settlement. The data comes from the Service's Go API with a feeBank
// Provider.

// moneyScenario is what newMoneyScenario made.
type moneyScenario struct {
	a, b             *paykit.Merchant
	pa, pb           paykit.Principal
	settled, pending *paykit.PaymentIntent // of a: settled and refunded in part; disputed
	refund           *paykit.Refund        // of settled
	dispute          *paykit.Dispute       // of a, on pending
	otherPay         *paykit.PaymentIntent // of b
	otherDispute     *paykit.Dispute       // of b
}

// newMoneyScenario makes, on the first day (paykittest.Start), merchant
// Kedai A's MYR 100.00 payment (fee MYR 3.90), settled, and a refund of
// MYR 20.00 of it; on the next day, A's MYR 500.00 payment (fee MYR
// 15.50), still pending, disputed in full (fee MYR 15.00), and a THB
// 1,000.00 adjustment; and Kedai B's MYR 70.00 payment, disputed. A's MYR
// balance: available 96.10 − 20.00 − 500.00 − 15.00 = −438.90, pending
// 484.50.
func newMoneyScenario(t *testing.T, e *dashEnv) *moneyScenario {
	t.Helper()
	is := is.New(t)
	sc := &moneyScenario{}
	sc.a, sc.b = e.twoMerchants()
	sc.pa = paykit.Principal{Scope: paykit.Scope{MerchantID: sc.a.ID, Environment: paykit.Test}}
	sc.pb = paykit.Principal{Scope: paykit.Scope{MerchantID: sc.b.ID, Environment: paykit.Test}}

	sc.settled = cardPayment(t, e, sc.pa, "a-1", 10_000, "MYR")
	batches, err := e.svc.SettleTestFunds(e.ctx, sc.pa)
	is.NoErr(err)
	is.Equal(len(batches), 1)
	sc.refund, _, err = e.svc.CreateRefund(e.ctx, sc.pa, "a-refund-1", paykit.CreateRefundRequest{
		PaymentIntent: sc.settled.ID, MerchantReference: "a-refund-1", Amount: 2_000, Reason: "one cup short"})
	is.NoErr(err)
	e.drain()
	sc.refund, err = e.svc.GetRefund(e.ctx, sc.pa, sc.refund.ID)
	is.NoErr(err)
	is.Equal(sc.refund.Status, paykit.RefundSucceeded)

	e.clock.Advance(24 * time.Hour)
	sc.pending = cardPayment(t, e, sc.pa, "a-2", 50_000, "MYR")
	sc.dispute, err = e.svc.SimulateDispute(e.ctx, sc.pa, sc.pending.ID, paykit.SimulateDisputeRequest{Reason: paykit.DisputeFraudulent})
	is.NoErr(err)
	_, err = e.svc.AdjustBalance(e.ctx, "test", sc.a.ID, paykit.BalanceAdjustmentRequest{
		Environment: paykit.Test, Currency: "THB", Amount: 100_000, Reason: "float"})
	is.NoErr(err)

	sc.otherPay = cardPayment(t, e, sc.pb, "b-1", 7_000, "MYR")
	sc.otherDispute, err = e.svc.SimulateDispute(e.ctx, sc.pb, sc.otherPay.ID, paykit.SimulateDisputeRequest{})
	is.NoErr(err)
	e.drain()

	b, err := e.store.GetBalance(e.ctx, sc.pa.Scope, "MYR")
	is.NoErr(err)
	is.Equal([3]int64{b.Available, b.Pending, b.Reserved}, [3]int64{-43_890, 48_450, 0})
	return sc
}

// scopeQuery is the query of merchant's test scope.
func scopeQuery(m *paykit.Merchant) string { return "merchant=" + m.ID + "&env=test" }

// txnRow matches a balance transaction row of the list and captures its
// id.
var txnRow = regexp.MustCompile(`<tr><td data-label="Balance transaction" class="mono">(txn_\w+)</td>`)

// txnIDs lists the balance transactions a page shows.
func txnIDs(body []byte) []string {
	var out []string
	for _, m := range txnRow.FindAllSubmatch(body, -1) {
		out = append(out, string(m[1]))
	}
	return out
}

// sourcesOf lists the ids of the balance transactions of p's scope, newest
// first, with type.
func sourcesOf(t *testing.T, e *dashEnv, p paykit.Principal) map[string]paykit.BalanceTransaction {
	t.Helper()
	page, err := e.svc.ListBalanceTransactions(e.ctx, p, paykit.BalanceTransactionListParams{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]paykit.BalanceTransaction{}
	for _, bt := range page.Data {
		out[bt.ID] = bt
	}
	return out
}

// TestDashboardBalancesShowPending: the overview and the merchant's page
// show available (negative, with its minus sign), pending and reserved.
func TestDashboardBalancesShowPending(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	e := newMoneyDashEnv(t, onMemory)
	sc := newMoneyScenario(t, e)
	e.csrf()
	const row = `<td data-label="Currency">MYR</td><td data-label="Available" class="num"><span class="status-bad">MYR -438.90</span></td>` +
		`<td data-label="Pending" class="num">MYR 484.50</td><td data-label="Reserved" class="num">MYR 0.00</td>`
	overview := e.get("/?" + scopeQuery(sc.a))
	is.Equal(overview.status, http.StatusOK)
	is.True(strings.Contains(string(overview.body), `<th>Available</th><th>Pending</th><th>Reserved</th>`))
	is.True(strings.Contains(string(overview.body), row))
	// THB: never negative, shown without the bad tone.
	is.True(strings.Contains(string(overview.body), `<td data-label="Currency">THB</td><td data-label="Available" class="num">THB 1,000.00</td><td data-label="Pending" class="num">THB 0.00</td>`))

	page := e.get("/merchants/" + sc.a.ID)
	is.Equal(page.status, http.StatusOK)
	is.True(strings.Contains(string(page.body), `<th>Available</th><th>Pending</th><th>Reserved</th><th>Updated</th>`))
	is.True(strings.Contains(string(page.body), row))
	// B's balance: 70.00 less 2.03 + 1.00 fee pending; 70.00 + 15.00 out
	// of available.
	page = e.get("/merchants/" + sc.b.ID)
	is.True(strings.Contains(string(page.body), `<td data-label="Available" class="num"><span class="status-bad">MYR -85.00</span></td><td data-label="Pending" class="num">MYR 66.97</td>`))
	is.True(!strings.Contains(string(page.body), "MYR -438.90"))
}

// TestDashboardBalanceTransactions: the list shows the picked merchant's
// balance transactions only, each linking its source; every filter
// narrows it.
func TestDashboardBalanceTransactions(t *testing.T) {
	forEachStore(t, func(t *testing.T, open func(t *testing.T) paykit.Store) {
		is := is.New(t)
		e := newMoneyDashEnv(t, open)
		sc := newMoneyScenario(t, e)
		own, other := sourcesOf(t, e, sc.pa), sourcesOf(t, e, sc.pb)
		is.Equal(len(own), 5)   // two payments, a refund, a dispute, an adjustment
		is.Equal(len(other), 2) // a payment, a dispute
		e.csrf()
		list := func(query string) response {
			t.Helper()
			r := e.get("/balance_transactions?" + scopeQuery(sc.a) + query)
			is.Equal(r.status, http.StatusOK)
			return r
		}
		r := list("")
		ids := txnIDs(r.body)
		is.Equal(len(ids), 5)
		for _, id := range ids {
			_, ok := own[id]
			is.True(ok)
		}
		body := string(r.body)
		for id := range other {
			is.True(!strings.Contains(body, id))
		}
		is.True(!strings.Contains(body, sc.otherDispute.ID))
		is.True(strings.Contains(body, `aria-current="page">Balance transactions</a>`))
		sq := "?env=test&amp;merchant=" + sc.a.ID
		for _, want := range []string{
			`<a href="/dashboard/payment_intents/` + sc.settled.ID + sq + `">` + sc.settled.ID + `</a>`,
			`<a href="/dashboard/payment_intents/` + sc.pending.ID + sq + `">` + sc.pending.ID + `</a>`,
			`<a href="/dashboard/refunds/` + sc.refund.ID + sq + `">` + sc.refund.ID + `</a>`,
			`<a href="/dashboard/disputes/` + sc.dispute.ID + sq + `">` + sc.dispute.ID + `</a>`,
		} {
			is.True(strings.Contains(body, want))
		}
		// The dispute: the disputed amount and the dispute fee out.
		is.True(strings.Contains(body, `<td data-label="Type" class="word">dispute</td><td data-label="Status"><span class="status-ok">available</span></td>`+
			`<td data-label="Amount" class="num">MYR -500.00</td><td data-label="Fee" class="num">MYR 15.00</td><td data-label="Net" class="num">MYR -515.00</td>`))
		is.True(strings.Contains(body, `<td data-label="Type" class="word">payment</td><td data-label="Status"><span class="status-wait">pending</span></td>`+
			`<td data-label="Amount" class="num">MYR 500.00</td><td data-label="Fee" class="num">MYR 15.50</td><td data-label="Net" class="num">MYR 484.50</td>`))

		one := func(query string, want ...string) {
			t.Helper()
			got := txnIDs(list(query).body)
			is.Equal(len(got), len(want))
			for i, id := range want {
				is.Equal(own[got[i]].Source, id)
			}
		}
		one("&type=dispute", sc.dispute.ID)
		one("&type=refund", sc.refund.ID)
		one("&status=pending", sc.pending.ID)
		one("&currency=THB", own[ids[0]].Source) // the adjustment, made last
		is.Equal(own[ids[0]].Type, paykit.BalanceTxnAdjustment)
		one("&source="+sc.settled.ID, sc.settled.ID)
		one("&type=payment&status=available", sc.settled.ID)
		one("&created_to=2026-06-01", sc.refund.ID, sc.settled.ID)
		one("&created_from=2026-06-02&currency=MYR", sc.dispute.ID, sc.pending.ID)
		one("&created_from=2026-06-03")
		r = list("&type=dispute")
		is.True(strings.Contains(string(r.body), `<option value="dispute" selected>dispute</option>`))
		is.True(!strings.Contains(string(r.body), "No balance transactions match."))
		r = list("&source=" + sc.otherPay.ID) // another merchant's source: nothing
		is.Equal(len(txnIDs(r.body)), 0)
		is.True(strings.Contains(string(r.body), "No balance transactions match."))

		r = e.get("/balance_transactions?" + scopeQuery(sc.a) + "&created_from=1%20June")
		is.Equal(r.status, http.StatusBadRequest)
		is.True(strings.Contains(string(r.body), "Created from must be a date: YYYY-MM-DD."))

		// B's own page shows B's.
		r = e.get("/balance_transactions?" + scopeQuery(sc.b))
		got := txnIDs(r.body)
		is.Equal(len(got), 2)
		for _, id := range got {
			_, ok := other[id]
			is.True(ok)
		}
	})
}

// TestDashboardBalanceTransactionsPage: the list pages like the others,
// keeping its filters.
func TestDashboardBalanceTransactionsPage(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	e := newMoneyDashEnv(t, onMemory)
	m, err := e.svc.CreateMerchant(e.ctx, "test", "Kedai Banyak")
	is.NoErr(err)
	const n = contract.DefaultPageLimit + 3
	for i := range n {
		_, err := e.svc.AdjustBalance(e.ctx, "test", m.ID, paykit.BalanceAdjustmentRequest{
			Environment: paykit.Test, Currency: "THB", Amount: int64(100 + i), Reason: "float " + strconv.Itoa(i)})
		is.NoErr(err)
	}
	cardPayment(t, e, paykit.Principal{Scope: paykit.Scope{MerchantID: m.ID, Environment: paykit.Test}}, "m-1", 1_000, "MYR")
	e.csrf()
	r := e.get("/balance_transactions?" + scopeQuery(m) + "&type=adjustment")
	is.Equal(len(txnIDs(r.body)), contract.DefaultPageLimit)
	next := regexp.MustCompile(`id="next-page" rel="next" href="([^"]+)"`).FindSubmatch(r.body)
	is.True(next != nil)
	href := strings.ReplaceAll(string(next[1]), "&amp;", "&")
	is.True(strings.Contains(href, "type=adjustment"))
	r = e.get(strings.TrimPrefix(href, "/dashboard"))
	is.Equal(len(txnIDs(r.body)), 3)
	is.True(!strings.Contains(string(r.body), `id="next-page"`))
	is.True(strings.Contains(string(r.body), "First page"))
}

// disputeRow matches a dispute row of the list and captures its id.
var disputeRow = regexp.MustCompile(`<tr><td data-label="Dispute"><a href="[^"]*">(dp_\w+)</a></td>`)

// TestDashboardDisputes: the list shows the picked merchant's disputes
// with a status filter; a dispute's page shows its money, evidence,
// deadlines, balance transactions and timeline; another merchant's
// dispute is not found.
func TestDashboardDisputes(t *testing.T) {
	forEachStore(t, func(t *testing.T, open func(t *testing.T) paykit.Store) {
		is := is.New(t)
		e := newMoneyDashEnv(t, open)
		sc := newMoneyScenario(t, e)
		e.csrf()
		ids := func(query string) []string {
			t.Helper()
			r := e.get("/disputes?" + scopeQuery(sc.a) + query)
			is.Equal(r.status, http.StatusOK)
			var out []string
			for _, m := range disputeRow.FindAllSubmatch(r.body, -1) {
				out = append(out, string(m[1]))
			}
			return out
		}
		is.Equal(ids(""), []string{sc.dispute.ID})
		is.Equal(ids("&status=needs_response"), []string{sc.dispute.ID})
		is.Equal(len(ids("&status=won")), 0)
		is.Equal(ids("&payment_intent="+sc.pending.ID), []string{sc.dispute.ID})
		is.Equal(len(ids("&payment_intent="+sc.settled.ID)), 0)
		r := e.get("/disputes?" + scopeQuery(sc.a))
		body := string(r.body)
		is.True(!strings.Contains(body, sc.otherDispute.ID))
		is.True(strings.Contains(body, `<td data-label="Status"><span class="status-bad">needs_response</span></td><td data-label="Amount" class="num">MYR 500.00</td><td data-label="Reason" class="word">fraudulent</td>`))
		is.True(strings.Contains(body, `aria-current="page">Disputes</a>`))

		page := func() string {
			t.Helper()
			r := e.get("/disputes/" + sc.dispute.ID + "?" + scopeQuery(sc.a))
			is.Equal(r.status, http.StatusOK)
			return string(r.body)
		}
		body = page()
		due := paykittest.Start.Add(24 * time.Hour).Add(7 * 24 * time.Hour).Format("2006-01-02 15:04:05 UTC")
		for _, want := range []string{
			`<h1>Dispute ` + sc.dispute.ID + `</h1>`,
			`<dd id="status"><span class="status-bad">needs_response</span></dd>`,
			`<dd id="amount">MYR 500.00</dd>`,
			`<dd id="fee">MYR 15.00</dd>`,
			`<dd id="reason">fraudulent</dd>`,
			`<dd id="payment-intent"><a href="/dashboard/payment_intents/` + sc.pending.ID + `?env=test&amp;merchant=` + sc.a.ID + `">`,
			`<dd id="evidence">none</dd>`,
			`<dd id="evidence-due-by">` + due + `</dd>`,
			`<dd id="closed-at"></dd>`,
			`<td data-label="Type" class="word">dispute</td>`,
			`dispute.created`,
		} {
			if !strings.Contains(body, want) {
				t.Errorf("the dispute's page lacks %s", want)
			}
		}
		is.True(!strings.Contains(body, "dispute_reversal"))

		// Evidence that wins: the page shows it, the closing time, the
		// reversal and the events.
		e.clock.Advance(10 * time.Minute)
		_, _, err := e.svc.SubmitDisputeEvidence(e.ctx, sc.pa, "evidence-1", sc.dispute.ID, paykit.DisputeEvidenceRequest{
			Text: "Delivered to the door, signed: winning_evidence", Submit: true})
		is.NoErr(err)
		e.drain()
		body = page()
		closed := paykittest.Start.Add(24*time.Hour + 10*time.Minute).Format("2006-01-02 15:04:05 UTC")
		for _, want := range []string{
			`<dd id="status"><span class="status-ok">won</span></dd>`,
			`<dd id="evidence">Delivered to the door, signed: winning_evidence</dd>`,
			`<dd id="evidence-submitted">` + closed + `</dd>`,
			`<dd id="closed-at">` + closed + `</dd>`,
			`<td data-label="Type" class="word">dispute_reversal</td><td data-label="Status"><span class="status-ok">available</span></td><td data-label="Amount" class="num">MYR 500.00</td>`,
			`dispute.won`,
		} {
			if !strings.Contains(body, want) {
				t.Errorf("the won dispute's page lacks %s", want)
			}
		}
		is.Equal(ids("&status=won"), []string{sc.dispute.ID})
		is.Equal(len(ids("&status=needs_response")), 0)

		// Another merchant's dispute, or this one in live: not found, and
		// nothing of it shown.
		for _, path := range []string{
			"/disputes/" + sc.otherDispute.ID + "?" + scopeQuery(sc.a),
			"/disputes/" + sc.dispute.ID + "?merchant=" + sc.a.ID + "&env=live",
		} {
			r := e.get(path)
			is.Equal(r.status, http.StatusNotFound)
			is.True(!strings.Contains(string(r.body), "MYR"))
		}
		r = e.get("/disputes/" + sc.otherDispute.ID + "?" + scopeQuery(sc.b))
		is.Equal(r.status, http.StatusOK)
		is.True(strings.Contains(string(r.body), `<dd id="amount">MYR 70.00</dd>`))
	})
}

// TestDashboardPaymentFeeAndSettlement: a payment's page shows its fee,
// net, settlement state, disputed amount and disputes.
func TestDashboardPaymentFeeAndSettlement(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	e := newMoneyDashEnv(t, onMemory)
	sc := newMoneyScenario(t, e)
	e.csrf()
	get := func(pi *paykit.PaymentIntent) string {
		t.Helper()
		r := e.get("/payment_intents/" + pi.ID + "?" + scopeQuery(sc.a))
		is.Equal(r.status, http.StatusOK)
		return string(r.body)
	}
	body := get(sc.settled)
	for _, want := range []string{
		`<dd id="fee">MYR 3.90</dd>`,
		`<dd id="net">MYR 96.10</dd>`,
		`<dd id="settlement"><span class="status-ok">settled at ` + paykittest.Start.Format("2006-01-02 15:04:05 UTC") + `</span></dd>`,
		`<dd id="disputed">MYR 0.00</dd>`,
		`>` + sc.refund.ID + `</a>`,
		`No disputes.`,
		`/balance_transactions?env=test&amp;merchant=` + sc.a.ID + `&amp;source=` + sc.settled.ID,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the settled payment's page lacks %s", want)
		}
	}
	body = get(sc.pending)
	for _, want := range []string{
		`<dd id="fee">MYR 15.50</dd>`,
		`<dd id="net">MYR 484.50</dd>`,
		`<dd id="settlement"><span class="status-wait">pending until settled</span></dd>`,
		`<dd id="disputed">MYR 500.00</dd>`,
		`<td data-label="Dispute"><a href="/dashboard/disputes/` + sc.dispute.ID + `?`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the disputed payment's page lacks %s", want)
		}
	}
	is.True(!strings.Contains(body, sc.otherDispute.ID))

	// Settled now: the state changes, the disputed amount stays.
	_, err := e.svc.SettleTestFunds(e.ctx, sc.pa)
	is.NoErr(err)
	body = get(sc.pending)
	is.True(strings.Contains(body, `<dd id="settlement"><span class="status-ok">settled at `))
	is.True(strings.Contains(body, `<dd id="disputed">MYR 500.00</dd>`))

}
