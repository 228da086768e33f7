package httpadapter_test

import (
	"bytes"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/internal/wire"
	"github.com/paykit/paykit/store/storetest"
)

// Money as the Provider holds it, over HTTP against the real sandbox PSP
// on every Store: fees, pending funds and settlement, and the balance
// transactions that account for every movement.

// paid makes a succeeded payment of body through the API and the sandbox
// PSP and returns its id. Its funds stay pending until settled.
func (e *sandboxEnv) paid(k keys, key string, body map[string]any) string {
	e.t.Helper()
	id := e.created(k, key, body)["id"].(string)
	if r := e.do("POST", "/v1/test_helpers/payment_intents/"+id+"/approve", nil, basic(k)); r.status != http.StatusOK {
		e.t.Fatalf("approve: %d %s", r.status, r.body)
	}
	e.settle()
	if got := e.get(k, id); got["status"] != "succeeded" {
		e.t.Fatalf("payment %s is %v", id, got["status"])
	}
	e.t.Cleanup(func() {
		storetest.CheckLedger(e.t, e.store, paykit.Scope{MerchantID: k.merchantID, Environment: paykit.Test})
	})
	return id
}

// settleFunds calls the settlement test helper, which must answer 200
// with a list of one page, and returns the batches.
func (e *sandboxEnv) settleFunds(k keys) []map[string]any {
	e.t.Helper()
	r := e.do("POST", "/v1/test_helpers/settlements", nil, basic(k))
	if r.status != http.StatusOK {
		e.t.Fatalf("settlements: %d %s", r.status, r.body)
	}
	list := r.json(e.t)
	if list["object"] != "list" || list["has_more"] != false {
		e.t.Fatalf("settlements: not a list of one page: %s", r.body)
	}
	return items(list)
}

// items returns the data of a list envelope.
func items(list map[string]any) []map[string]any {
	out := []map[string]any{}
	for _, item := range list["data"].([]any) {
		out = append(out, item.(map[string]any))
	}
	return out
}

// balanceOf returns the merchant's balance item of currency, nil when it
// has none.
func (e *sandboxEnv) balanceOf(k keys, currency string) map[string]any {
	e.t.Helper()
	r := e.do("GET", "/v1/balances", nil, basic(k))
	if r.status != http.StatusOK {
		e.t.Fatalf("balances: %d %s", r.status, r.body)
	}
	for _, b := range items(r.json(e.t)) {
		if b["currency"] == currency {
			return b
		}
	}
	return nil
}

// myrBalanceOf is the MYR balance item with every amount as given.
func myrBalanceOf(available, pending, reserved string) map[string]any {
	return map[string]any{"object": "balance", "currency": "MYR", "available": available, "pending": pending, "reserved": reserved}
}

// txns returns the items of GET /v1/balance_transactions?query, which
// must answer 200.
func (e *sandboxEnv) txns(k keys, query string) []map[string]any {
	e.t.Helper()
	r := e.do("GET", "/v1/balance_transactions?"+query, nil, basic(k))
	if r.status != http.StatusOK {
		e.t.Fatalf("balance transactions ?%s: %d %s", query, r.status, r.body)
	}
	return items(r.json(e.t))
}

// txnOf returns the one balance transaction of type typ whose source is
// source.
func (e *sandboxEnv) txnOf(k keys, typ, source string) map[string]any {
	e.t.Helper()
	got := e.txns(k, "type="+typ+"&source="+source)
	if len(got) != 1 {
		e.t.Fatalf("%d %s balance transactions of %s, want 1", len(got), typ, source)
	}
	return got[0]
}

// sortedKeys are the member names of m, sorted.
func sortedKeys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// txnKeys are the members of a balance_transaction, sorted.
var txnKeys = []string{"amount", "available_on", "created_at", "currency", "environment", "fee", "id", "net", "object", "source", "status", "type"}

// parseTime parses a timestamp of the API.
func parseTime(t *testing.T, v any) time.Time {
	t.Helper()
	s, _ := v.(string)
	at, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatalf("timestamp %v: %v", v, err)
	}
	return at
}

// minor parses an amount string of the API.
func minor(t *testing.T, v any) int64 {
	t.Helper()
	s, _ := v.(string)
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatalf("amount %v: %v", v, err)
	}
	return n
}

// adjustBalance credits (negative: debits) a merchant's test balance in
// currency through the operator API and returns the adjustment.
func (e *sandboxEnv) adjustBalance(k keys, currency, amount string) map[string]any {
	e.t.Helper()
	r := e.do("POST", "/operator/merchants/"+k.merchantID+"/balance_adjustments",
		map[string]any{"environment": "test", "currency": currency, "amount": amount, "reason": "goodwill"}, bearer(e.opToken))
	if r.status != http.StatusCreated {
		e.t.Fatalf("adjust: %d %s", r.status, r.body)
	}
	return r.json(e.t)
}

// myPayout is a valid MYR payout request to a Maybank account.
func myPayout(amount, ref string) map[string]any {
	return map[string]any{"amount": amount, "currency": "MYR", "country": "MY", "merchant_reference": ref,
		"recipient": map[string]any{"type": "bank_account", "account_number": plainAccount, "bank_code": "MAYBANK", "holder_name": "Aisyah Rahman"}}
}

// TestFeesPendingAndSettlementOverHTTP: a payment credits its net to
// pending with a pending payment transaction; the settlement test helper
// settles it, and a second call finds nothing to settle.
func TestFeesPendingAndSettlementOverHTTP(t *testing.T) {
	forEachSandbox(t, func(t *testing.T, e *sandboxEnv, k keys) {
		is := is.New(t)
		// Fees: CARD 2.9 % of 10500 is 304.5, half up 305, plus 100; FPX
		// 2.9 % of 1500 is 43.5, half up 44; of 12345, 358.005: 358.
		payments := []struct {
			id               string
			amount, fee, net string
			body             map[string]any
		}{
			{amount: "10500", fee: "405", net: "10095", body: methodBody("CARD", "MY", "10500", "card-1")},
			{amount: "1500", fee: "44", net: "1456", body: fpxBody("1500", "fpx-1")},
			{amount: "12345", fee: "358", net: "11987", body: fpxBody("12345", "fpx-2")},
		}
		for i := range payments {
			payments[i].id = e.paid(k, "pay-"+strconv.Itoa(i), payments[i].body)
		}
		is.Equal(e.balanceOf(k, "MYR"), myrBalanceOf("0", "23538", "0"))

		now := e.clock.Now()
		for _, p := range payments {
			got := e.txns(k, "source="+p.id)
			is.Equal(len(got), 1) // one payment transaction per payment
			bt := got[0]
			is.Equal(sortedKeys(bt), txnKeys)
			id, _ := bt["id"].(string)
			is.True(strings.HasPrefix(id, "txn_"))
			is.Equal(bt, map[string]any{
				"object": "balance_transaction", "id": id, "type": "payment", "source": p.id,
				"amount": p.amount, "fee": p.fee, "net": p.net, "currency": "MYR", "status": "pending",
				"available_on": bt["available_on"], "environment": "test", "created_at": bt["created_at"],
			})
			is.True(parseTime(t, bt["available_on"]).After(now))                             // expected later
			is.True(!parseTime(t, bt["created_at"]).After(now))                              // made already
			is.Equal(e.do("GET", "/v1/balance_transactions/"+id, nil, basic(k)).json(t), bt) // the same by id
		}

		// Another merchant's pending payment (fee 145).
		other := e.merchant(paykit.Test)
		otherPay := e.paid(other, "other-pay", fpxBody("5000", "other-1"))
		now = e.clock.Now()

		// Settled at once: one batch of the three lines, the funds available.
		batches := e.settleFunds(k)
		is.Equal(len(batches), 1)
		b := batches[0]
		is.Equal(sortedKeys(b), []string{"currency", "fee", "gross", "id", "lines", "net", "object", "settled_at"})
		is.True(b["id"] != "")
		is.Equal(b, map[string]any{
			"object": "settlement_batch", "id": b["id"], "currency": "MYR", "settled_at": wire.FormatTime(now),
			"lines": float64(3), "gross": "24345", "fee": "807", "net": "23538",
		})
		is.Equal(e.balanceOf(k, "MYR"), myrBalanceOf("23538", "0", "0"))
		for _, p := range payments {
			bt := e.txnOf(k, "payment", p.id)
			is.Equal(bt["status"], "available")
			is.Equal(bt["available_on"], wire.FormatTime(now)) // when the funds became available
			is.Equal([]any{bt["amount"], bt["fee"], bt["net"]}, []any{p.amount, p.fee, p.net})
		}

		// The other merchant's funds wait for its own call.
		is.Equal(e.balanceOf(other, "MYR"), myrBalanceOf("0", "4855", "0"))
		is.Equal(e.txnOf(other, "payment", otherPay)["status"], "pending")
		otherBatches := e.settleFunds(other)
		is.Equal(len(otherBatches), 1)
		is.Equal([]any{otherBatches[0]["lines"], otherBatches[0]["gross"], otherBatches[0]["fee"], otherBatches[0]["net"]}, []any{float64(1), "5000", "145", "4855"})
		is.True(otherBatches[0]["id"] != b["id"])
		is.Equal(e.balanceOf(other, "MYR"), myrBalanceOf("4855", "0", "0"))
		is.Equal(e.balanceOf(k, "MYR"), myrBalanceOf("23538", "0", "0"))

		// Nothing is left to settle: an empty list, and nothing changes.
		list := e.do("GET", "/v1/balance_transactions", nil, basic(k))
		e.clock.Advance(time.Minute)
		is.Equal(len(e.settleFunds(k)), 0)
		is.Equal(e.balanceOf(k, "MYR"), myrBalanceOf("23538", "0", "0"))
		is.True(bytes.Equal(e.do("GET", "/v1/balance_transactions", nil, basic(k)).body, list.body))

		// The test helpers are not routes of a live key.
		live := e.keyFor(k.merchantID, paykit.Live)
		assertError(t, e.do("POST", "/v1/test_helpers/settlements", nil, basic(live)), http.StatusNotFound, "not_found", "")
		assertError(t, e.do("POST", "/v1/test_helpers/payment_intents/"+payments[0].id+"/dispute", nil, basic(live)), http.StatusNotFound, "not_found", "")
		assertError(t, e.do("POST", "/v1/test_helpers/payment_intents/"+payments[0].id+"/dispute", map[string]any{"amount": "100"}, basic(live)), http.StatusNotFound, "not_found", "")
		is.Equal(len(items(e.do("GET", "/v1/disputes", nil, basic(k)).json(t))), 0)
		is.Equal(e.get(k, payments[0].id)["disputed_amount"], "0")
	})
}

// TestSettlementFeeMismatchAndNeverSettled: a payment whose amount ends
// in 921 settles with another fee than the one it succeeded with, so its
// funds stay pending; one ending in 922 is never in a batch.
func TestSettlementFeeMismatchAndNeverSettled(t *testing.T) {
	forEachSandbox(t, func(t *testing.T, e *sandboxEnv, k keys) {
		is := is.New(t)
		mismatch := e.paid(k, "p-921", fpxBody("10921", "p-921")) // fee 317 (316.709), settled with 318
		never := e.paid(k, "p-922", fpxBody("10922", "p-922"))    // fee 317 (316.738)
		plain := e.paid(k, "p-ok", fpxBody("10000", "p-ok"))      // fee 290
		is.Equal(e.balanceOf(k, "MYR"), myrBalanceOf("0", "30919", "0"))

		batches := e.settleFunds(k)
		is.Equal(len(batches), 1)
		b := batches[0]
		// The Provider's account: the 921 payment with its fee one above.
		is.Equal([]any{b["lines"], b["gross"], b["fee"], b["net"]}, []any{float64(2), "20921", "608", "20313"})
		is.Equal(e.balanceOf(k, "MYR"), myrBalanceOf("9710", "21209", "0"))
		is.Equal(e.txnOf(k, "payment", plain)["status"], "available")
		for _, id := range []string{mismatch, never} {
			bt := e.txnOf(k, "payment", id)
			is.Equal(bt["status"], "pending")
			is.Equal(bt["fee"], "317") // the fee stated at success
		}

		// A day and more later, the 922 payment is still in no batch.
		e.clock.Advance(50 * time.Hour)
		if _, err := e.psp.SendCallbacks(e.ctx); err != nil {
			t.Fatal(err)
		}
		e.drain()
		is.Equal(len(e.settleFunds(k)), 0)
		var seen921 bool
		for _, sb := range e.psp.SettlementBatches() {
			for _, l := range sb.Lines {
				is.True(l.AmountMinor != 10922) // never settled
				if l.AmountMinor == 10921 {
					seen921 = true
					is.Equal(l.FeeMinor, int64(318))
				}
			}
		}
		is.True(seen921)
		is.Equal(e.txnOf(k, "payment", never)["status"], "pending")
		is.Equal(e.txnOf(k, "payment", mismatch)["status"], "pending")
		is.Equal(e.balanceOf(k, "MYR")["available"], "9710")
	})
}

// TestBalanceTransactionsListOverHTTP: after a payment, a settlement, a
// refund, a payout, an operator's adjustment and a dispute, the list
// shows one transaction per movement, newest first, its filters narrow
// it, it pages, and the sum of their nets is the balance.
func TestBalanceTransactionsListOverHTTP(t *testing.T) {
	forEachSandbox(t, func(t *testing.T, e *sandboxEnv, k keys) {
		is := is.New(t)
		step := func() { e.clock.Advance(time.Minute) }

		card := e.paid(k, "card", methodBody("CARD", "MY", "10500", "card-1")) // net 10095
		is.Equal(len(e.settleFunds(k)), 1)
		step()
		fpx := e.paid(k, "fpx", fpxBody("20000", "fpx-1")) // net 19420, pending
		step()
		r := e.refund(k, "rf-1", map[string]any{"payment_intent": card, "merchant_reference": "rf-1", "amount": "3000"})
		is.Equal(r.status, http.StatusCreated)
		refund := r.json(t)["id"].(string)
		// In flight it is reserved, which is no movement: the nets still
		// sum to the balance.
		is.Equal(len(e.txns(k, "type=refund")), 0)
		is.Equal(e.balanceOf(k, "MYR"), myrBalanceOf("7095", "19420", "3000"))
		is.Equal(len(e.txns(k, "")), 2)
		declined := e.refund(k, "rf-d", map[string]any{"payment_intent": card, "merchant_reference": "rf-d", "amount": "1911"})
		is.Equal(declined.json(t)["status"], "failed") // never a movement either
		e.settle()
		is.Equal(e.do("GET", "/v1/refunds/"+refund, nil, basic(k)).json(t)["status"], "succeeded")
		step()
		r = e.do("POST", "/v1/payout_intents", myPayout("2000", "po-1"), basic(k), idem("po-1"))
		is.Equal(r.status, http.StatusCreated)
		payout := r.json(t)["id"].(string)
		for range 10 {
			e.clock.Advance(30 * time.Second)
			e.drain()
		}
		is.Equal(e.do("GET", "/v1/payout_intents/"+payout, nil, basic(k)).json(t)["status"], "succeeded")
		step()
		adjustment := e.adjustBalance(k, "MYR", "5000")["id"].(string)
		step()
		r = e.do("POST", "/v1/test_helpers/payment_intents/"+fpx+"/dispute", nil, basic(k))
		is.Equal(r.status, http.StatusOK)
		dispute := r.json(t)["id"].(string)
		step()
		thb := e.adjustBalance(k, "THB", "1000")["id"].(string)

		// One per movement, newest first.
		all := e.txns(k, "limit=100")
		type row struct{ typ, source string }
		var got []row
		for _, bt := range all {
			got = append(got, row{bt["type"].(string), bt["source"].(string)})
		}
		is.Equal(got, []row{{"adjustment", thb}, {"dispute", dispute}, {"adjustment", adjustment}, {"payout", payout},
			{"refund", refund}, {"payment", fpx}, {"payment", card}})
		byType := map[string]map[string]any{}
		for _, bt := range all {
			is.Equal(sortedKeys(bt), txnKeys)
			byType[bt["type"].(string)+":"+bt["currency"].(string)] = bt
			is.Equal(e.do("GET", "/v1/balance_transactions/"+bt["id"].(string), nil, basic(k)).json(t), bt)
		}
		amounts := func(bt map[string]any) []any { return []any{bt["amount"], bt["fee"], bt["net"], bt["status"]} }
		is.Equal(amounts(byType["refund:MYR"]), []any{"-3000", "0", "-3000", "available"})
		is.Equal(amounts(byType["payout:MYR"]), []any{"-2000", "0", "-2000", "available"})
		is.Equal(amounts(byType["adjustment:MYR"]), []any{"5000", "0", "5000", "available"})
		is.Equal(amounts(byType["adjustment:THB"]), []any{"1000", "0", "1000", "available"})
		is.Equal(amounts(byType["dispute:MYR"]), []any{"-20000", "1500", "-21500", "available"})

		// Per currency, the nets sum to available + pending + reserved.
		is.Equal(e.balanceOf(k, "MYR"), myrBalanceOf("-11405", "19420", "0"))
		for _, c := range []string{"MYR", "THB"} {
			var sum int64
			for _, bt := range e.txns(k, "limit=100&currency="+c) {
				sum += minor(t, bt["net"])
			}
			b := e.balanceOf(k, c)
			is.Equal(sum, minor(t, b["available"])+minor(t, b["pending"])+minor(t, b["reserved"]))
		}

		// Filters.
		sources := func(query string) []string {
			t.Helper()
			var out []string
			for _, bt := range e.txns(k, query) {
				out = append(out, bt["type"].(string)+":"+bt["source"].(string))
			}
			return out
		}
		payoutAt := byType["payout:MYR"]["created_at"].(string)
		for query, want := range map[string][]string{
			"type=payment":                     {"payment:" + fpx, "payment:" + card},
			"type=refund,payout":               {"payout:" + payout, "refund:" + refund},
			"type=dispute,dispute_reversal":    {"dispute:" + dispute},
			"type=payout_return":               nil,
			"source=" + card:                   {"payment:" + card},
			"source=" + refund:                 {"refund:" + refund},
			"source=" + adjustment:             {"adjustment:" + adjustment},
			"status=pending":                   {"payment:" + fpx},
			"status=available&type=payment":    {"payment:" + card},
			"status=pending,available&limit=2": {"adjustment:" + thb, "dispute:" + dispute},
			"currency=THB":                     {"adjustment:" + thb},
			"currency=MYR&type=adjustment":     {"adjustment:" + adjustment},
			"created_after=" + payoutAt:        {"adjustment:" + thb, "dispute:" + dispute, "adjustment:" + adjustment, "payout:" + payout},
			"created_before=" + payoutAt:       {"refund:" + refund, "payment:" + fpx, "payment:" + card},
			"created_after=" + payoutAt + "&created_before=" + all[1]["created_at"].(string): {"adjustment:" + adjustment, "payout:" + payout},
		} {
			is.Equal(sources(strings.ReplaceAll(query, "+", "%2B")), want) // query
		}

		// Paging: every transaction once, in order, with the filters kept.
		for _, q := range []string{"limit=2", "limit=3&currency=MYR"} {
			var ids []string
			cursor := ""
			for pages := 0; ; pages++ {
				is.True(pages < 10)
				r := e.do("GET", "/v1/balance_transactions?"+q+cursor, nil, basic(k))
				is.Equal(r.status, http.StatusOK)
				page := r.json(t)
				for _, bt := range items(page) {
					ids = append(ids, bt["id"].(string))
				}
				if page["has_more"] != true {
					is.Equal(page["next_cursor"], nil)
					break
				}
				cursor = "&cursor=" + page["next_cursor"].(string)
			}
			var want []string
			for _, bt := range all {
				if !strings.Contains(q, "currency=MYR") || bt["currency"] == "MYR" {
					want = append(want, bt["id"].(string))
				}
			}
			is.Equal(ids, want)
		}

		// Bad values name their parameter.
		for query, param := range map[string]string{
			"type=nope": "type", "type=payment,nope": "type", "status=nope": "status", "country=MY": "country",
			"merchant_reference=x": "merchant_reference", "limit=0": "limit", "limit=101": "limit",
			"cursor=x": "cursor", "currency=myr": "currency", "created_after=yesterday": "created_after", "colour=red": "colour",
		} {
			assertError(t, e.do("GET", "/v1/balance_transactions?"+query, nil, basic(k)), http.StatusBadRequest, "invalid_request", param)
		}

		// Another merchant's or environment's key finds none of them.
		other := e.merchant(paykit.Test)
		live := e.keyFor(k.merchantID, paykit.Live)
		for _, o := range []keys{other, live} {
			for _, bt := range all {
				assertError(t, e.do("GET", "/v1/balance_transactions/"+bt["id"].(string), nil, basic(o)), http.StatusNotFound, "not_found", "")
			}
			r := e.do("GET", "/v1/balance_transactions?source="+card, nil, basic(o))
			is.Equal(r.status, http.StatusOK)
			is.Equal(len(items(r.json(t))), 0)
			is.Equal(len(items(e.do("GET", "/v1/balance_transactions", nil, basic(o)).json(t))), 0)
		}
		assertError(t, e.do("GET", "/v1/balance_transactions/txn_nope", nil, basic(k)), http.StatusNotFound, "not_found", "")

		// The next batch: the FPX payment, the refund and the dispute,
		// signed; the payment's funds become available and the sum holds.
		step()
		batches := e.settleFunds(k)
		is.Equal(len(batches), 1)
		b := batches[0]
		is.Equal([]any{b["currency"], b["lines"], b["gross"], b["fee"], b["net"]}, []any{"MYR", float64(3), "-3000", "2080", "-5080"})
		is.Equal(e.balanceOf(k, "MYR"), myrBalanceOf("8015", "0", "0"))
		is.Equal(e.txnOf(k, "payment", fpx)["status"], "available")
		is.Equal(len(e.txns(k, "limit=100")), len(all)) // settling is not a movement
		var sum int64
		for _, bt := range e.txns(k, "currency=MYR&limit=100") {
			sum += minor(t, bt["net"])
		}
		is.Equal(sum, int64(8015))

		// The payout's funds come back: a payout_return.
		step()
		is.Equal(e.do("POST", "/v1/test_helpers/payout_intents/"+payout+"/return", nil, basic(k)).status, http.StatusOK)
		e.settle()
		latest := e.txns(k, "limit=1")[0]
		is.Equal([]any{latest["type"], latest["source"], latest["amount"], latest["fee"], latest["net"], latest["status"]},
			[]any{"payout_return", payout, "2000", "0", "2000", "available"})
		is.Equal(e.balanceOf(k, "MYR"), myrBalanceOf("10015", "0", "0"))
		is.Equal(len(e.txns(k, "type=payout,payout_return&source="+payout)), 2)
		is.Equal(len(e.txns(k, "source="+declined.json(t)["id"].(string))), 0)
	})
}
