package httpadapter_test

import (
	"net/http"
	"strings"
	"time"

	"testing"

	"github.com/matryer/is"

	"github.com/paykit/paykit"
)

// TestReconciliationOverHTTP: the sandbox settles a payment ending in 921
// with a fee one minor unit above the one it stated (a fee_mismatch that
// keeps the funds pending) and never settles one ending in 922
// (missing_in_report after the SLA); the operator lists the breaks and
// runs, resolves them (an adjustment of −1, the funds settled), and cannot
// resolve one twice. Every answer is checked against the OpenAPI document.
func TestReconciliationOverHTTP(t *testing.T) {
	forEachSandbox(t, func(t *testing.T, e *sandboxEnv, k keys) {
		is := is.New(t)
		op := bearer(e.opToken)
		pay := func(amount, ref string) string {
			t.Helper()
			id := e.created(k, "pay-"+ref, fpxBody(amount, ref))["id"].(string)
			is.Equal(e.do("POST", "/v1/test_helpers/payment_intents/"+id+"/approve", nil, basic(k)).status, http.StatusOK)
			return id
		}
		good, fee, never := pay("10000", "good"), pay("15921", "fee"), pay("20922", "never")
		e.settle()
		r := e.do("POST", "/v1/test_helpers/settlements", nil, basic(k))
		is.Equal(r.status, http.StatusOK)

		list := func(query string) []map[string]any {
			t.Helper()
			r := e.do("GET", "/operator/reconciliation/breaks"+query, nil, op)
			is.Equal(r.status, http.StatusOK)
			var out []map[string]any
			for _, b := range r.json(t)["data"].([]any) {
				out = append(out, b.(map[string]any))
			}
			return out
		}
		open := list("?status=open")
		is.Equal(len(open), 1)
		b := open[0]
		is.Equal([4]any{b["object"], b["type"], b["status"], b["source"]}, [4]any{"reconciliation_break", "fee_mismatch", "open", fee})
		is.Equal([3]any{b["merchant_id"], b["environment"], b["provider"]}, [3]any{k.merchantID, "test", "sandbox"})
		is.Equal(b["expected"], map[string]any{"amount": "15921", "fee": "462", "currency": "MYR"})
		is.Equal(b["reported"], map[string]any{"amount": "15921", "fee": "463", "currency": "MYR"})
		is.Equal([3]any{b["resolution"], b["note"], b["resolved_at"]}, [3]any{nil, nil, nil})
		is.True(strings.HasPrefix(b["id"].(string), "rb_"))
		is.Equal(len(list("?type=missing_in_report")), 0)
		is.Equal(len(list("?merchant_id=mch_nobody")), 0)
		is.Equal(len(list("?provider=sandbox&type=fee_mismatch&status=open")), 1)
		for _, q := range []string{"?status=closed", "?type=nope", "?limit=0", "?merchant=x"} {
			is.Equal(e.do("GET", "/operator/reconciliation/breaks"+q, nil, op).status, http.StatusBadRequest)
		}
		is.Equal(e.do("GET", "/operator/reconciliation/breaks", nil).status, http.StatusUnauthorized)
		is.Equal(e.do("GET", "/operator/reconciliation/breaks/rb_nope", nil, op).status, http.StatusNotFound)

		runs := e.do("GET", "/operator/reconciliation/runs?provider=sandbox", nil, op).json(t)["data"].([]any)
		is.Equal(len(runs), 1)
		run := runs[0].(map[string]any)
		is.Equal([5]any{run["object"], run["provider"], run["lines"], run["matched"], run["breaks"]},
			[5]any{"reconciliation_run", "sandbox", float64(2), float64(1), float64(1)})

		// The good payment is available; the other two are pending.
		status := func(pi string) string {
			t.Helper()
			bts := e.do("GET", "/v1/balance_transactions?source="+pi, nil, basic(k)).json(t)["data"].([]any)
			return bts[0].(map[string]any)["status"].(string)
		}
		is.Equal([3]string{status(good), status(fee), status(never)}, [3]string{"available", "pending", "pending"})

		// Past the SLA (72h), the payment never settled is missing.
		e.clock.Advance(73 * time.Hour)
		e.drain()
		missing := list("?type=missing_in_report")
		is.Equal(len(missing), 1)
		is.Equal([3]any{missing[0]["source"], missing[0]["reported"], missing[0]["expected"]},
			[3]any{never, nil, map[string]any{"amount": "20922", "fee": "607", "currency": "MYR"}})

		// Resolutions.
		resolve := func(id, resolution, note string) response {
			return e.do("POST", "/operator/reconciliation/breaks/"+id+"/resolve", map[string]any{"resolution": resolution, "note": note}, op)
		}
		assertError(t, resolve(b["id"].(string), "matched", "x"), http.StatusBadRequest, paykit.CodeInvalidRequest, "resolution")
		assertError(t, resolve(b["id"].(string), "accept_paykit", ""), http.StatusBadRequest, paykit.CodeInvalidRequest, "note")
		assertError(t, resolve(b["id"].(string), "accept_paykit", strings.Repeat("n", 513)), http.StatusBadRequest, paykit.CodeInvalidRequest, "note")
		r = resolve(b["id"].(string), "accept_provider", "The PSP's fee schedule changed.")
		is.Equal(r.status, http.StatusOK)
		got := r.json(t)
		is.Equal([3]any{got["status"], got["resolution"], got["note"]}, [3]any{"resolved", "accept_provider", "The PSP's fee schedule changed."})
		is.True(got["resolved_at"] != nil)
		assertError(t, resolve(b["id"].(string), "accept_paykit", "again"), http.StatusUnprocessableEntity, paykit.CodeInvalidState, "")
		adj := e.do("GET", "/v1/balance_transactions?type=adjustment", nil, basic(k)).json(t)["data"].([]any)
		is.Equal(len(adj), 1)
		is.Equal([2]any{adj[0].(map[string]any)["source"], adj[0].(map[string]any)["net"]}, [2]any{b["id"], "-1"})
		is.Equal(resolve(missing[0]["id"].(string), "accept_paykit", "Paid: the PSP's report was late.").status, http.StatusOK)
		is.Equal([3]string{status(good), status(fee), status(never)}, [3]string{"available", "available", "available"})
		is.Equal(len(list("?status=open")), 0)

		audit := e.do("GET", "/operator/audit_events", nil, op).json(t)["data"].([]any)
		resolutions := 0
		for _, a := range audit {
			if a.(map[string]any)["action"] == "reconciliation_break.resolve" {
				resolutions++
			}
		}
		is.Equal(resolutions, 2)
		text := metricsText(t, e.env)
		is.Equal(mustSample(t, text, `paykit_reconciliation_breaks_open{type="fee_mismatch"}`), 0.0)
		is.Equal(mustSample(t, text, `paykit_reconciliation_lines_total{result="fee_mismatch"}`), 1.0)
		is.Equal(mustSample(t, text, `paykit_reconciliation_lines_total{result="matched"}`), 1.0)
	})
}
