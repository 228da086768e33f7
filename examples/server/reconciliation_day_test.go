package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/store/sqlstore"
	"github.com/paykit/paykit/store/storetest"
)

// dayPayment is one payment of TestDayReconciledEndToEnd and what
// happens to it after it succeeds.
type dayPayment struct {
	method, country, currency string
	amount                    int64
	refund                    int64  // refunded after success; 0 for none
	dispute                   string // "won" (evidence), "lost" (accepted) or ""
	id                        string
}

// card reports whether the sandbox adds its card fee to p's.
func (p *dayPayment) card() bool { return p.method == "CARD" }

// fee is the sandbox PSP's fee at success: 2.9 % rounded half up, plus
// 100 for a card.
func (p *dayPayment) fee() int64 {
	f := (p.amount*29 + 500) / 1000
	if p.card() {
		f += 100
	}
	return f
}

// dayReconciliationSLA is TestDayReconciledEndToEnd's SLA: longer than its
// traffic takes to reach the settlement under -race on a loaded 2-core
// machine (with 3 s, payments not settled yet became missing_in_report
// breaks before their lines were read).
const dayReconciliationSLA = "15s"

// sandboxDisputeFee is what the sandbox PSP keeps of every dispute.
const sandboxDisputeFee = 1500

// TestDayReconciledEndToEnd runs a merchant's day of mixed traffic through
// the example server and its sandbox PSP over HTTP: payments of several
// methods and two currencies, refunds, a dispute won with evidence and one
// lost by accept, one payment the PSP settles with a fee one above (921)
// and one it never settles (922). The PSP settles at once through the test
// helper; every line but the 921 payment's matches, that one is a
// fee_mismatch break; after the SLA the 922 payment is a
// missing_in_report break; the operator resolves both, and the balances,
// balance transactions and ledger agree throughout.
//
// The missing-settlement check runs in the worker's purge round, once a
// minute on the real clock: the test waits for it.
func TestDayReconciledEndToEnd(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	path := filepath.Join(t.TempDir(), "paykit.db")
	// A settlement interval of ten years: no batch closes by the clock
	// while the test runs, only through the test helper.
	s := start(t, "-db", "sqlite:"+path, "-addr", "127.0.0.1:0", "-worker-interval", "100ms", "-sandbox-delay", "200ms",
		"-sandbox-settlement-interval", "87600h", "-reconciliation-sla", dayReconciliationSLA)

	send := func(method, path, key, body string, want int) map[string]any {
		t.Helper()
		status, _, raw := call(t, method, s.url+path, body, func(r *http.Request) {
			if len(path) > 9 && path[:9] == "/operator" {
				r.Header.Set("Authorization", "Bearer "+s.token)
			} else {
				r.SetBasicAuth(s.public, s.secret)
			}
			if key != "" {
				r.Header.Set("Idempotency-Key", key)
			}
		})
		if status != want {
			t.Fatalf("%s %s: %d, want %d: %s", method, path, status, want, raw)
		}
		var v map[string]any
		is.NoErr(json.Unmarshal(raw, &v))
		return v
	}
	listOf := func(method, path string) []map[string]any {
		t.Helper()
		page := send(method, path, "", "", http.StatusOK)
		if page["has_more"] != false {
			t.Fatalf("GET %s: more than one page", path)
		}
		out := []map[string]any{}
		for _, item := range page["data"].([]any) {
			out = append(out, item.(map[string]any))
		}
		return out
	}
	list := func(path string) []map[string]any {
		t.Helper()
		return listOf("GET", path)
	}
	// waitFor polls get until ok or fails after a deadline.
	waitFor := func(what string, within time.Duration, get func() map[string]any, ok func(map[string]any) bool) map[string]any {
		t.Helper()
		deadline := time.Now().Add(within)
		for {
			v := get()
			if ok(v) {
				return v
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: still %v; log:\n%s", what, v, s.stderr.String())
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	status := func(want string) func(map[string]any) bool {
		return func(v map[string]any) bool { return v["status"] == want }
	}

	day := []*dayPayment{
		{method: "FPX", country: "MY", currency: "MYR", amount: 15000},
		{method: "TNG", country: "MY", currency: "MYR", amount: 8000},
		{method: "CARD", country: "MY", currency: "MYR", amount: 20000},
		{method: "DUITNOW_QR", country: "MY", currency: "MYR", amount: 5000},
		{method: "GRABPAY", country: "MY", currency: "MYR", amount: 12000, refund: 3000},
		{method: "CARD", country: "MY", currency: "MYR", amount: 9990, refund: 9990},
		{method: "FPX", country: "MY", currency: "MYR", amount: 30000, dispute: "won"},
		{method: "CARD", country: "MY", currency: "MYR", amount: 25000, dispute: "lost"},
		{method: "FPX", country: "MY", currency: "MYR", amount: 10921},
		{method: "TNG", country: "MY", currency: "MYR", amount: 10922},
		{method: "PROMPTPAY", country: "TH", currency: "THB", amount: 50000},
		{method: "CARD", country: "TH", currency: "THB", amount: 70000},
		{method: "TRUEMONEY", country: "TH", currency: "THB", amount: 33000, refund: 1000},
	}
	mismatch, never := day[8], day[9]

	// The payments succeed with the PSP's fee on their balance
	// transaction, and their net pending.
	for i, p := range day {
		ref := fmt.Sprintf("day-%d", i)
		pi := send("POST", "/v1/payment_intents", ref, fmt.Sprintf(`{"amount":"%d","currency":%q,"country":%q,"merchant_reference":%q,
			"payment_method":%q,"customer":{"name":"Aisyah Rahman","email":"aisyah@example.com"}}`,
			p.amount, p.currency, p.country, ref, p.method), http.StatusCreated)
		p.id = pi["id"].(string)
		send("POST", "/v1/test_helpers/payment_intents/"+p.id+"/approve", "", "", http.StatusOK)
	}
	for _, p := range day {
		waitFor("payment "+p.id, 15*time.Second, func() map[string]any { return send("GET", "/v1/payment_intents/"+p.id, "", "", 200) }, status("succeeded"))
		txns := list("/v1/balance_transactions?type=payment&source=" + p.id)
		is.Equal(len(txns), 1)
		is.Equal(txns[0]["status"], "pending")
		is.Equal(minorOf(t, txns[0]["amount"]), p.amount)
		is.Equal(minorOf(t, txns[0]["fee"]), p.fee())
		is.Equal(minorOf(t, txns[0]["net"]), p.amount-p.fee())
	}

	// Refunds, and disputes: one won with evidence, one lost by accept.
	for i, p := range day {
		switch {
		case p.refund != 0:
			re := send("POST", "/v1/refunds", fmt.Sprintf("day-re-%d", i), fmt.Sprintf(`{"payment_intent":%q,"merchant_reference":"day-re-%d","amount":"%d"}`,
				p.id, i, p.refund), http.StatusCreated)
			id := re["id"].(string)
			waitFor("refund "+id, 15*time.Second, func() map[string]any { return send("GET", "/v1/refunds/"+id, "", "", 200) }, status("succeeded"))
		case p.dispute != "":
			d := send("POST", "/v1/test_helpers/payment_intents/"+p.id+"/dispute", "", `{"reason":"fraudulent"}`, http.StatusOK)
			is.Equal(d["status"], "needs_response")
			id := d["id"].(string)
			if p.dispute == "won" {
				d = send("POST", "/v1/disputes/"+id+"/evidence", "day-ev-"+id, `{"text":"Signed delivery receipt: winning_evidence","submit":true}`, http.StatusOK)
				is.Equal(d["status"], "under_review")
				waitFor("dispute "+id, 15*time.Second, func() map[string]any { return send("GET", "/v1/disputes/"+id, "", "", 200) }, status("won"))
			} else {
				d = send("POST", "/v1/disputes/"+id+"/accept", "day-acc-"+id, "", http.StatusOK)
				is.Equal(d["status"], "lost")
			}
		}
	}

	// What the PSP should settle: per currency, the lines and their
	// totals (the 921 payment's fee one above, the 922 payment absent).
	type totals struct{ lines, gross, fee int64 }
	want := map[string]*totals{"MYR": {}, "THB": {}}
	for _, p := range day {
		w := want[p.currency]
		if p != never {
			w.lines, w.gross, w.fee = w.lines+1, w.gross+p.amount, w.fee+p.fee()
		}
		if p == mismatch {
			w.fee++
		}
		if p.refund != 0 {
			w.lines, w.gross = w.lines+1, w.gross-p.refund
		}
		switch p.dispute {
		case "won":
			w.lines, w.fee = w.lines+2, w.fee+sandboxDisputeFee // the debit and its reversal
		case "lost":
			w.lines, w.gross, w.fee = w.lines+1, w.gross-p.amount, w.fee+sandboxDisputeFee
		}
	}

	batches := listOf("POST", "/v1/test_helpers/settlements")
	is.Equal(len(batches), 2) // one per currency
	byBatch := map[string]map[string]any{}
	for _, b := range batches {
		w := want[b["currency"].(string)]
		is.True(w != nil)
		is.Equal(b["object"], "settlement_batch")
		is.Equal(int64(b["lines"].(float64)), w.lines)
		is.Equal(minorOf(t, b["gross"]), w.gross)
		is.Equal(minorOf(t, b["fee"]), w.fee)
		is.Equal(minorOf(t, b["net"]), w.gross-w.fee)
		byBatch[b["id"].(string)] = b
	}

	// One run per batch, every line matched but the 921 payment's.
	runs := list("/operator/reconciliation/runs?provider=sandbox&limit=100")
	is.Equal(len(runs), 2)
	for _, r := range runs {
		b := byBatch[r["batch"].(string)]
		is.True(b != nil)
		is.Equal(r["object"], "reconciliation_run")
		is.Equal(r["provider"], "sandbox")
		breaks := 0.0
		if b["currency"] == "MYR" {
			breaks = 1
		}
		is.Equal(r["lines"], b["lines"])
		is.Equal(r["breaks"], breaks)
		is.Equal(r["matched"], b["lines"].(float64)-breaks)
	}

	// One break: the 921 payment's fee, one above.
	open := list("/operator/reconciliation/breaks?status=open&limit=100")
	if len(open) != 1 {
		t.Fatalf("open breaks: %v", open)
	}
	feeBreak := open[0]
	is.Equal(feeBreak["type"], "fee_mismatch")
	is.Equal(feeBreak["source"], mismatch.id)
	is.Equal(feeBreak["merchant_id"], s.merchant)
	is.Equal(feeBreak["environment"], "test")
	is.Equal(feeBreak["expected"], amountsJSON(mismatch.amount, mismatch.fee(), "MYR"))
	is.Equal(feeBreak["reported"], amountsJSON(mismatch.amount, mismatch.fee()+1, "MYR"))

	// Every balance transaction but the 921 and 922 payments' is
	// available, and the nets add up to the balances.
	checkMoney := func(pendingSources ...string) map[string][3]int64 {
		t.Helper()
		txns := list("/v1/balance_transactions?limit=100")
		sums := map[string]int64{}
		for _, x := range txns {
			wantStatus := "available"
			if x["type"] == "payment" && slices.Contains(pendingSources, x["source"].(string)) {
				wantStatus = "pending"
			}
			if x["status"] != wantStatus {
				t.Errorf("%s balance transaction of %s is %s, want %s", x["type"], x["source"], x["status"], wantStatus)
			}
			sums[x["currency"].(string)] += minorOf(t, x["net"])
		}
		out := map[string][3]int64{}
		for _, b := range list("/v1/balances") {
			c := b["currency"].(string)
			bal := [3]int64{minorOf(t, b["available"]), minorOf(t, b["pending"]), minorOf(t, b["reserved"])}
			if sums[c] != bal[0]+bal[1]+bal[2] {
				t.Errorf("%s: balance transactions' nets sum to %d; balance %v", c, sums[c], bal)
			}
			out[c] = bal
		}
		is.Equal(len(out), 2)
		return out
	}
	before := checkMoney(mismatch.id, never.id)
	is.Equal(before["MYR"][1], mismatch.amount-mismatch.fee()+never.amount-never.fee()) // pending: theirs alone
	is.Equal(before["THB"][1], int64(0))

	// After the SLA (at the next purge round), the 922 payment is missing.
	var missing map[string]any
	waitFor("missing_in_report break", 90*time.Second, func() map[string]any {
		return map[string]any{"data": list("/operator/reconciliation/breaks?status=open&type=missing_in_report")}
	}, func(v map[string]any) bool {
		if d := v["data"].([]map[string]any); len(d) > 0 {
			missing = d[0]
			return true
		}
		return false
	})
	open = list("/operator/reconciliation/breaks?status=open&limit=100")
	is.Equal(len(open), 2) // the fee and the missing payment, nothing else
	is.Equal(missing["source"], never.id)
	is.Equal(missing["expected"], amountsJSON(never.amount, never.fee(), "MYR"))
	is.Equal(missing["reported"], nil)
	is.Equal(len(list("/operator/reconciliation/breaks?limit=100")), 2)

	// The operator takes the Provider's fee, and paykit's record of the
	// payment the Provider never reported.
	note := `{"resolution":%q,"note":"Checked against the PSP's statement."}`
	r := send("POST", "/operator/reconciliation/breaks/"+feeBreak["id"].(string)+"/resolve", "", fmt.Sprintf(note, "accept_provider"), http.StatusOK)
	is.Equal([]any{r["status"], r["resolution"]}, []any{"resolved", "accept_provider"})
	r = send("POST", "/operator/reconciliation/breaks/"+missing["id"].(string)+"/resolve", "", fmt.Sprintf(note, "accept_paykit"), http.StatusOK)
	is.Equal([]any{r["status"], r["resolution"]}, []any{"resolved", "accept_paykit"})
	e := send("POST", "/operator/reconciliation/breaks/"+missing["id"].(string)+"/resolve", "", fmt.Sprintf(note, "accept_paykit"), http.StatusUnprocessableEntity)
	is.Equal(e["error"].(map[string]any)["code"], "invalid_state")
	is.Equal(len(list("/operator/reconciliation/breaks?status=open")), 0)

	adj := list("/v1/balance_transactions?type=adjustment&source=" + feeBreak["id"].(string))
	is.Equal(len(adj), 1)
	is.Equal(minorOf(t, adj[0]["amount"]), int64(-1))
	is.Equal(adj[0]["currency"], "MYR")
	after := checkMoney()
	is.Equal(after["MYR"], [3]int64{before["MYR"][0] + before["MYR"][1] - 1, 0, before["MYR"][2]})
	is.Equal(after["THB"], before["THB"])

	// The ledger agrees with the balance transactions.
	is.NoErr(s.stop())
	db, err := sqlstore.Open(context.Background(), "sqlite:"+path)
	is.NoErr(err)
	defer db.Close()
	storetest.CheckLedger(t, db, paykit.Scope{MerchantID: s.merchant, Environment: paykit.Test})
}

// minorOf reads an amount string of minor units.
func minorOf(t *testing.T, v any) int64 {
	t.Helper()
	str, ok := v.(string)
	if !ok {
		t.Fatalf("amount %v is not a string", v)
	}
	n, err := strconv.ParseInt(str, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// amountsJSON is a break's expected or reported amounts as decoded.
func amountsJSON(amount, fee int64, currency string) map[string]any {
	return map[string]any{"amount": strconv.FormatInt(amount, 10), "fee": strconv.FormatInt(fee, 10), "currency": currency}
}
