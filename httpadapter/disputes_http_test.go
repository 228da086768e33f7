package httpadapter_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/internal/wire"
)

// Disputes over HTTP against the real sandbox PSP on every Store: the
// test helper that opens one, its money, evidence and acceptance, the
// sandbox's decisions, events and webhooks, and the list.

// disputeKeys are the members of a dispute, sorted.
var disputeKeys = []string{"amount", "closed_at", "created_at", "currency", "environment", "evidence", "evidence_due_by",
	"id", "object", "payment_intent", "reason", "status", "updated_at"}

// openDispute calls the dispute test helper on payment intent pi with
// body (nil: none).
func (e *sandboxEnv) openDispute(k keys, pi string, body any) response {
	e.t.Helper()
	return e.do("POST", "/v1/test_helpers/payment_intents/"+pi+"/dispute", body, basic(k))
}

// opened calls the dispute test helper, which must answer 200, and
// returns the dispute.
func (e *sandboxEnv) opened(k keys, pi string, body any) map[string]any {
	e.t.Helper()
	r := e.openDispute(k, pi, body)
	if r.status != http.StatusOK {
		e.t.Fatalf("open dispute: %d %s", r.status, r.body)
	}
	e.assertNoProviderDetail(r.body)
	return r.json(e.t)
}

// disputeOf reads a dispute, which must exist.
func (e *sandboxEnv) disputeOf(k keys, id string) map[string]any {
	e.t.Helper()
	r := e.do("GET", "/v1/disputes/"+id, nil, basic(k))
	if r.status != http.StatusOK {
		e.t.Fatalf("get dispute %s: %d %s", id, r.status, r.body)
	}
	e.assertNoProviderDetail(r.body)
	return r.json(e.t)
}

// evidence posts evidence for dispute id under key.
func (e *sandboxEnv) evidence(k keys, key, id string, body any) response {
	e.t.Helper()
	return e.do("POST", "/v1/disputes/"+id+"/evidence", body, basic(k), idem(key))
}

// accept concedes dispute id under key.
func (e *sandboxEnv) accept(k keys, key, id string) response {
	e.t.Helper()
	return e.do("POST", "/v1/disputes/"+id+"/accept", nil, basic(k), idem(key))
}

// decide runs the worker, which sends submitted evidence to the sandbox
// PSP; then lets the PSP's delay pass, delivers its callbacks and runs
// the worker again.
func (e *sandboxEnv) decide() {
	e.t.Helper()
	e.drain()
	e.clock.Advance(sandboxDelay)
	if _, err := e.psp.SendCallbacks(e.ctx); err != nil {
		e.t.Fatal(err)
	}
	e.drain()
}

// TestDisputeTestHelperOverHTTP: the helper opens a dispute for what is
// left of a payment (or the amount asked), with its deadline seven days
// on; the amount and the fee leave available, below zero if need be;
// the payment shows the disputed amount and cannot be refunded while a
// dispute is open; payouts wait until the balance is covered again.
func TestDisputeTestHelperOverHTTP(t *testing.T) {
	forEachSandbox(t, func(t *testing.T, e *sandboxEnv, k keys) {
		is := is.New(t)
		pa := e.paidPayment(k, "10000", "order-a") // net 9710, settled
		pb := e.paidPayment(k, "10000", "order-b")
		r := e.refund(k, "rf-a", map[string]any{"payment_intent": pa, "merchant_reference": "rf-a", "amount": "2000"})
		is.Equal(r.status, http.StatusCreated)
		e.settle()
		is.Equal(e.get(k, pa)["refunded_amount"], "2000")
		is.Equal(e.get(k, pa)["disputed_amount"], "0")
		is.Equal(e.balanceOf(k, "MYR"), myrBalanceOf("17420", "0", "0"))

		// Defaults: what is neither refunded nor disputed, general.
		e.clock.Advance(time.Minute)
		now := e.clock.Now()
		d := e.opened(k, pa, nil)
		is.Equal(sortedKeys(d), disputeKeys)
		id, _ := d["id"].(string)
		is.True(strings.HasPrefix(id, "dp_"))
		is.Equal(d, map[string]any{
			"object": "dispute", "id": id, "payment_intent": pa, "amount": "8000", "currency": "MYR", "reason": "general",
			"status": "needs_response", "evidence": nil, "evidence_due_by": d["evidence_due_by"], "environment": "test",
			"created_at": d["created_at"], "updated_at": d["updated_at"], "closed_at": nil,
		})
		created := parseTime(t, d["created_at"])
		is.True(created.Equal(now))
		is.True(parseTime(t, d["evidence_due_by"]).Equal(created.Add(7 * 24 * time.Hour)))
		is.Equal(d["updated_at"], d["created_at"])
		is.Equal(e.disputeOf(k, id), d)
		is.Equal(e.get(k, pa)["disputed_amount"], "8000")
		is.Equal(e.get(k, pa)["status"], "succeeded")
		// The amount and the dispute fee leave available.
		bt := e.txnOf(k, "dispute", id)
		is.Equal([]any{bt["amount"], bt["fee"], bt["net"], bt["currency"], bt["status"]}, []any{"-8000", "1500", "-9500", "MYR", "available"})
		is.Equal(bt["created_at"], d["created_at"])
		is.Equal(e.balanceOf(k, "MYR"), myrBalanceOf("7920", "0", "0"))

		// Nothing is left of pa to dispute.
		assertError(t, e.openDispute(k, pa, nil), http.StatusUnprocessableEntity, "amount_exceeds_refundable", "amount")
		assertError(t, e.openDispute(k, pa, map[string]any{"amount": "1"}), http.StatusUnprocessableEntity, "amount_exceeds_refundable", "amount")

		// An amount and a reason; then more than what is left.
		e.clock.Advance(time.Minute)
		d2 := e.opened(k, pb, map[string]any{"amount": "3000", "reason": "fraudulent"})
		is.Equal([]any{d2["amount"], d2["reason"], d2["status"]}, []any{"3000", "fraudulent", "needs_response"})
		is.Equal(e.balanceOf(k, "MYR"), myrBalanceOf("3420", "0", "0"))
		assertError(t, e.openDispute(k, pb, map[string]any{"amount": "7001"}), http.StatusUnprocessableEntity, "amount_exceeds_refundable", "amount")
		// A payment with an open dispute cannot be refunded, though the
		// balance and the refundable amount would allow it.
		assertError(t, e.refund(k, "rf-b", map[string]any{"payment_intent": pb, "merchant_reference": "rf-b", "amount": "100"}),
			http.StatusUnprocessableEntity, "invalid_state", "payment_intent")

		// The rest of pb, for every reason of the contract in turn: the
		// balance goes below zero, with its minus sign.
		e.clock.Advance(time.Minute)
		d3 := e.opened(k, pb, map[string]any{"amount": "7000", "reason": "product_not_received"})
		is.Equal(d3["reason"], "product_not_received")
		is.Equal(e.get(k, pb)["disputed_amount"], "10000")
		is.Equal(e.balanceOf(k, "MYR"), myrBalanceOf("-5080", "0", "0"))
		for i, reason := range []string{"fraudulent", "product_not_received", "product_unacceptable", "duplicate", "credit_not_processed", "general"} {
			p := e.paid(k, fmt.Sprintf("reason-%d", i), fpxBody("1000", fmt.Sprintf("reason-%d", i)))
			is.Equal(e.opened(k, p, map[string]any{"reason": reason})["reason"], reason)
		}

		// Rejections change nothing.
		before := e.do("GET", "/v1/disputes?limit=100", nil, basic(k)).body
		open := e.created(k, "open", fpxBody("5000", "open"))["id"].(string)
		other := e.merchant(paykit.Test)
		cases := []struct {
			name   string
			k      keys
			pi     string
			body   any
			status int
			code   string
			param  string
		}{
			{"not succeeded", k, open, nil, 422, "invalid_state", ""},
			{"unknown payment", k, "pi_nope", nil, 404, "not_found", ""},
			{"another merchant's payment", other, pb, nil, 404, "not_found", ""},
			{"bad reason", k, pb, map[string]any{"reason": "angry"}, 400, "invalid_request", "reason"},
			{"empty reason", k, pb, map[string]any{"reason": ""}, 400, "invalid_request", "reason"},
			{"amount not a string", k, pb, map[string]any{"amount": 100}, 400, "invalid_request", "amount"},
			{"amount not minor units", k, pb, map[string]any{"amount": "1.50"}, 400, "invalid_request", "amount"},
			{"amount zero", k, pb, map[string]any{"amount": "0"}, 400, "invalid_request", "amount"},
			{"unknown field", k, pb, map[string]any{"currency": "MYR"}, 400, "invalid_request", ""},
		}
		for _, c := range cases {
			r := e.openDispute(c.k, c.pi, c.body)
			if r.status != c.status || r.errorOf(t)["code"] != c.code {
				t.Errorf("%s: %d %s", c.name, r.status, r.body)
				continue
			}
			if c.param != "" {
				is.Equal(r.errorOf(t)["param"], c.param) // c.name
			}
		}
		is.True(bytes.Equal(e.do("GET", "/v1/disputes?limit=100", nil, basic(k)).body, before))
		is.Equal(len(items(e.do("GET", "/v1/disputes", nil, basic(other)).json(t))), 0)

		// Six payments of 1000 (fee 29) pending, each disputed in full:
		// 2500 each out of available.
		is.Equal(e.balanceOf(k, "MYR"), myrBalanceOf("-20080", "5826", "0"))

		// Payouts and refunds wait while available is below zero, until an
		// operator's adjustment covers them.
		fresh := e.paid(k, "fresh", fpxBody("1000", "fresh")) // 971 more pending
		assertError(t, e.do("POST", "/v1/payout_intents", myPayout("1000", "po-1"), basic(k), idem("po-1")),
			http.StatusUnprocessableEntity, "insufficient_balance", "amount")
		refundFresh := func(key string) response {
			return e.refund(k, key, map[string]any{"payment_intent": fresh, "merchant_reference": key, "amount": "100"})
		}
		is.Equal(refundFresh("rf-f1").errorOf(t)["code"], "insufficient_balance")
		e.adjustBalance(k, "MYR", "20580") // available 500
		assertError(t, e.do("POST", "/v1/payout_intents", myPayout("1000", "po-2"), basic(k), idem("po-2")),
			http.StatusUnprocessableEntity, "insufficient_balance", "amount")
		is.Equal(refundFresh("rf-f2").status, http.StatusCreated)
		e.adjustBalance(k, "MYR", "600")
		r = e.do("POST", "/v1/payout_intents", myPayout("1000", "po-3"), basic(k), idem("po-3"))
		is.Equal(r.status, http.StatusCreated)
		is.Equal(e.balanceOf(k, "MYR"), myrBalanceOf("0", "6797", "1100"))
	})
}

// TestDisputeEvidenceOverHTTP: evidence is checked, stored, submitted
// under an Idempotency-Key; the sandbox decides submitted evidence by its
// text; an accepted dispute, or one left without evidence past its
// deadline, is lost; only a dispute that needs a response takes evidence
// or can be accepted.
func TestDisputeEvidenceOverHTTP(t *testing.T) {
	forEachSandbox(t, func(t *testing.T, e *sandboxEnv, k keys) {
		is := is.New(t)
		var pis, ids []string
		for _, name := range []string{"win", "lose", "other", "accept", "late"} {
			pi := e.paidPayment(k, "10000", name)
			pis = append(pis, pi)
			ids = append(ids, e.opened(k, pi, nil)["id"].(string))
		}
		win, lose, other, accepted, late := ids[0], ids[1], ids[2], ids[3], ids[4]
		due := parseTime(t, e.disputeOf(k, late)["evidence_due_by"])
		is.Equal(e.balanceOf(k, "MYR"), myrBalanceOf("-8950", "0", "0")) // 5 × (9710 − 11500)

		// Checked before anything is stored.
		for _, c := range []struct {
			name  string
			body  any
			param string
		}{
			{"empty text", map[string]any{"text": ""}, "text"},
			{"no text", map[string]any{"submit": true}, "text"},
			{"text too long", map[string]any{"text": strings.Repeat("a", 20_001)}, "text"},
			{"text not a string", map[string]any{"text": 5}, "text"},
			{"submit not a boolean", map[string]any{"text": "x", "submit": "yes"}, "submit"},
			{"unknown field", map[string]any{"text": "x", "files": []string{"a.pdf"}}, ""},
			{"NUL in text", map[string]any{"text": "a\x00b"}, "text"},
		} {
			r := e.evidence(k, "bad-"+strings.ReplaceAll(c.name, " ", "-"), win, c.body)
			if r.status != http.StatusBadRequest || r.errorOf(t)["code"] != "invalid_request" {
				t.Errorf("%s: %d %s", c.name, r.status, r.body)
				continue
			}
			if c.param != "" {
				is.Equal(r.errorOf(t)["param"], c.param) // c.name
			}
		}
		assertError(t, e.do("POST", "/v1/disputes/"+win+"/evidence", map[string]any{"text": "x"}, basic(k)),
			http.StatusBadRequest, "invalid_request", "Idempotency-Key")
		assertError(t, e.evidence(k, "nope", "dp_nope", map[string]any{"text": "x"}), http.StatusNotFound, "not_found", "")
		is.Equal(e.disputeOf(k, win)["evidence"], nil)

		// Stored without submitting: still needs a response, the text
		// shows. 20 000 characters of three bytes each are allowed.
		e.clock.Advance(time.Minute)
		r := e.evidence(k, "ev-1", win, map[string]any{"text": "Draft: tracking number MY123"})
		is.Equal(r.status, http.StatusOK)
		d := r.json(t)
		is.Equal(sortedKeys(d), disputeKeys)
		is.Equal([]any{d["status"], d["evidence"], d["closed_at"]}, []any{"needs_response", map[string]any{"text": "Draft: tracking number MY123"}, nil})
		is.Equal(d["updated_at"], wire.FormatTime(e.clock.Now()))
		long := strings.Repeat("ก", 20_000)
		r = e.evidence(k, "ev-2", win, map[string]any{"text": long, "submit": false})
		is.Equal(r.status, http.StatusOK)
		is.Equal(r.json(t)["evidence"], map[string]any{"text": long})
		is.Equal(e.disputeOf(k, win)["status"], "needs_response")

		// Submitted: under review at once.
		e.clock.Advance(time.Minute)
		winBody := map[string]any{"text": "Signed delivery note attached: winning_evidence", "submit": true}
		first := e.evidence(k, "ev-3", win, winBody)
		is.Equal(first.status, http.StatusOK)
		is.Equal(first.json(t)["status"], "under_review")
		is.Equal(first.json(t)["evidence"], map[string]any{"text": winBody["text"]})
		is.Equal(first.json(t)["closed_at"], nil)
		// A replay is the first answer; another body under the key is a
		// conflict.
		again := e.evidence(k, "ev-3", win, winBody)
		is.Equal(again.status, http.StatusOK)
		is.Equal(again.header.Get("Idempotent-Replayed"), "true")
		is.True(bytes.Equal(again.body, first.body))
		assertError(t, e.evidence(k, "ev-3", win, map[string]any{"text": "something else", "submit": true}),
			http.StatusConflict, "idempotency_conflict", "Idempotency-Key")
		// The key and body of another dispute's evidence, or of another
		// operation, are a conflict too.
		assertError(t, e.evidence(k, "ev-3", lose, winBody), http.StatusConflict, "idempotency_conflict", "Idempotency-Key")
		assertError(t, e.accept(k, "ev-3", lose), http.StatusConflict, "idempotency_conflict", "Idempotency-Key")
		is.Equal(e.disputeOf(k, lose)["status"], "needs_response")
		// Under review: no more evidence, no acceptance.
		assertError(t, e.evidence(k, "ev-4", win, map[string]any{"text": "more"}), http.StatusUnprocessableEntity, "invalid_state", "")
		assertError(t, e.accept(k, "acc-win", win), http.StatusUnprocessableEntity, "invalid_state", "")

		is.Equal(e.evidence(k, "ev-lose", lose, map[string]any{"text": "Our losing_evidence, sadly", "submit": true}).status, http.StatusOK)
		is.Equal(e.evidence(k, "ev-other", other, map[string]any{"text": "A receipt of the purchase", "submit": true}).status, http.StatusOK)

		// Accepted: lost at once.
		acc := e.accept(k, "acc-1", accepted)
		is.Equal(acc.status, http.StatusOK)
		ad := acc.json(t)
		is.Equal(sortedKeys(ad), disputeKeys)
		is.Equal(ad["status"], "lost")
		is.Equal(ad["closed_at"], wire.FormatTime(e.clock.Now()))
		accAgain := e.accept(k, "acc-1", accepted)
		is.Equal(accAgain.header.Get("Idempotent-Replayed"), "true")
		is.True(bytes.Equal(accAgain.body, acc.body))
		assertError(t, e.do("POST", "/v1/disputes/"+accepted+"/accept", nil, basic(k)), http.StatusBadRequest, "invalid_request", "Idempotency-Key")
		assertError(t, e.accept(k, "acc-2", accepted), http.StatusUnprocessableEntity, "invalid_state", "")
		assertError(t, e.evidence(k, "ev-acc", accepted, map[string]any{"text": "late"}), http.StatusUnprocessableEntity, "invalid_state", "")
		is.Equal(e.get(k, pis[3])["disputed_amount"], "10000") // lost

		// Nothing is decided before the sandbox's delay.
		is.Equal(e.disputeOf(k, win)["status"], "under_review")
		is.Equal(e.get(k, pis[0])["disputed_amount"], "10000") // open
		availBefore := minor(t, e.balanceOf(k, "MYR")["available"])
		e.decide()
		wd := e.disputeOf(k, win)
		is.Equal(wd["status"], "won")
		is.True(wd["closed_at"] != nil)
		is.Equal(wd["evidence"], map[string]any{"text": winBody["text"]})
		is.Equal(e.get(k, pis[0])["disputed_amount"], "0")
		rev := e.txnOf(k, "dispute_reversal", win)
		is.Equal([]any{rev["amount"], rev["fee"], rev["net"], rev["status"]}, []any{"10000", "0", "10000", "available"})
		is.Equal(e.txnOf(k, "dispute", win)["fee"], "1500") // kept though won
		is.Equal(minor(t, e.balanceOf(k, "MYR")["available"]), availBefore+10000)

		ld := e.disputeOf(k, lose)
		is.Equal(ld["status"], "lost")
		is.True(ld["closed_at"] != nil)
		is.Equal(e.get(k, pis[1])["disputed_amount"], "10000")
		is.Equal(len(e.txns(k, "type=dispute_reversal")), 1) // a lost dispute moves nothing more
		is.Equal(e.disputeOf(k, other)["status"], "under_review")
		is.Equal(e.disputeOf(k, accepted)["status"], "lost")
		for _, id := range []string{win, lose} {
			assertError(t, e.accept(k, "acc-"+id, id), http.StatusUnprocessableEntity, "invalid_state", "")
			assertError(t, e.evidence(k, "ev-"+id, id, map[string]any{"text": "again"}), http.StatusUnprocessableEntity, "invalid_state", "")
		}

		// A replay after the decision is still the first answer.
		again = e.evidence(k, "ev-3", win, winBody)
		is.Equal(again.header.Get("Idempotent-Replayed"), "true")
		is.True(bytes.Equal(again.body, first.body))

		// With evidence stored but never submitted, the last one is lost
		// at its deadline; the one under review stays so.
		is.Equal(e.evidence(k, "ev-late", late, map[string]any{"text": "Draft never sent"}).status, http.StatusOK)
		e.clock.Set(due.Add(-time.Minute))
		e.drain()
		is.Equal(e.disputeOf(k, late)["status"], "needs_response")
		e.clock.Set(due)
		if _, err := e.psp.SendCallbacks(e.ctx); err != nil {
			t.Fatal(err)
		}
		e.drain()
		dd := e.disputeOf(k, late)
		is.Equal(dd["status"], "lost")
		is.Equal(dd["closed_at"], wire.FormatTime(due))
		is.Equal(dd["evidence"], map[string]any{"text": "Draft never sent"})
		is.Equal(e.get(k, pis[4])["disputed_amount"], "10000")
		is.Equal(e.disputeOf(k, other)["status"], "under_review")
		is.Equal(e.get(k, pis[2])["disputed_amount"], "10000")
		is.Equal(len(e.txns(k, "type=dispute_reversal")), 1)
		is.Equal(e.balanceOf(k, "MYR"), myrBalanceOf("1050", "0", "0")) // −8950 + the won 10000
	})
}

// TestRefundAfterDisputeClosed: once its disputes are closed a payment
// can be refunded again: a lost dispute's amount is no longer
// refundable, a won one's is.
func TestRefundAfterDisputeClosed(t *testing.T) {
	forEachSandbox(t, func(t *testing.T, e *sandboxEnv, k keys) {
		is := is.New(t)
		pa := e.paidPayment(k, "10000", "order-a")
		pb := e.paidPayment(k, "10000", "order-b")
		da := e.opened(k, pa, map[string]any{"amount": "4000"})["id"].(string)
		db := e.opened(k, pb, map[string]any{"amount": "3000"})["id"].(string)
		is.Equal(e.accept(k, "acc", da).json(t)["status"], "lost")
		is.Equal(e.evidence(k, "ev", db, map[string]any{"text": "winning_evidence", "submit": true}).status, http.StatusOK)
		e.decide()
		is.Equal(e.disputeOf(k, db)["status"], "won")
		is.Equal(e.get(k, pa)["disputed_amount"], "4000")
		is.Equal(e.get(k, pb)["disputed_amount"], "0")
		// 2 × 9710 − 5500 − 4500 + 3000 back.
		is.Equal(e.balanceOf(k, "MYR"), myrBalanceOf("12420", "0", "0"))
		e.adjustBalance(k, "MYR", "10000")

		r := e.refund(k, "rf-a", map[string]any{"payment_intent": pa, "merchant_reference": "rf-a"})
		is.Equal(r.status, http.StatusCreated)
		is.Equal(r.json(t)["amount"], "6000")
		assertError(t, e.refund(k, "rf-a2", map[string]any{"payment_intent": pa, "merchant_reference": "rf-a2", "amount": "1"}),
			http.StatusUnprocessableEntity, "amount_exceeds_refundable", "amount")
		r = e.refund(k, "rf-b", map[string]any{"payment_intent": pb, "merchant_reference": "rf-b"})
		is.Equal(r.status, http.StatusCreated)
		is.Equal(r.json(t)["amount"], "10000")
		e.settle()
		is.Equal([]any{e.get(k, pa)["refunded_amount"], e.get(k, pa)["disputed_amount"]}, []any{"6000", "4000"})
		is.Equal([]any{e.get(k, pb)["refunded_amount"], e.get(k, pb)["disputed_amount"]}, []any{"10000", "0"})
		assertError(t, e.openDispute(k, pa, nil), http.StatusUnprocessableEntity, "amount_exceeds_refundable", "amount")
		assertError(t, e.openDispute(k, pb, nil), http.StatusUnprocessableEntity, "amount_exceeds_refundable", "amount")
		is.Equal(e.balanceOf(k, "MYR"), myrBalanceOf("6420", "0", "0"))
	})
}

// TestDisputeEventsAndWebhooks: every change of a dispute is an event
// with the dispute's projection as data, delivered to the merchant's
// endpoint.
func TestDisputeEventsAndWebhooks(t *testing.T) {
	forEachSandbox(t, func(t *testing.T, e *sandboxEnv, k keys) {
		is := is.New(t)
		rc := newReceiver(t, e, func(int, http.ResponseWriter, *http.Request) {})
		_, secret := e.endpoint(k, rc.srv.URL+"/hooks")
		// The merchant's own endpoint for the decisions only.
		decisions := newReceiver(t, e, func(int, http.ResponseWriter, *http.Request) {})
		r := e.do("POST", "/v1/webhook_endpoints", map[string]any{"url": decisions.srv.URL, "enabled_events": []string{"dispute.won", "dispute.lost"}},
			basic(k), idem("we-1"))
		is.Equal(r.status, http.StatusCreated)
		decisionsSecret := r.json(t)["secret"].(string)
		pa := e.paidPayment(k, "10000", "order-a")
		pb := e.paidPayment(k, "10000", "order-b")
		won := e.opened(k, pa, nil)["id"].(string)
		e.clock.Advance(time.Minute)
		lost := e.opened(k, pb, map[string]any{"amount": "4000", "reason": "duplicate"})["id"].(string)
		e.clock.Advance(time.Minute)
		stored := e.evidence(k, "ev-1", won, map[string]any{"text": "draft"}).json(t)
		e.clock.Advance(time.Minute)
		submitted := e.evidence(k, "ev-2", won, map[string]any{"text": "winning_evidence", "submit": true}).json(t)
		e.clock.Advance(time.Minute)
		accepted := e.accept(k, "acc", lost).json(t)
		e.decide()

		is.Equal(e.eventsOf(k, won), []string{"dispute.created", "dispute.updated", "dispute.updated", "dispute.won"})
		is.Equal(e.eventsOf(k, lost), []string{"dispute.created", "dispute.lost"})
		types, evs := e.events(k, "type=dispute.created,dispute.updated,dispute.won,dispute.lost")
		is.Equal(types, []string{"dispute.won", "dispute.lost", "dispute.updated", "dispute.updated", "dispute.created", "dispute.created"})
		// Each event holds the dispute as it was.
		data := func(i int) map[string]any { return evs[i]["data"].(map[string]any) }
		is.Equal(data(0), e.disputeOf(k, won))
		is.Equal(data(1), accepted)
		is.Equal(data(1), e.disputeOf(k, lost))
		is.Equal(data(2), submitted)
		is.Equal(data(3), stored)
		is.Equal(data(4)["id"], lost)
		is.Equal(data(5)["id"], won)
		for i := range evs {
			is.Equal(sortedKeys(data(i)), disputeKeys)
		}
		is.Equal(data(5)["status"], "needs_response")
		is.Equal(data(5)["evidence"], nil)
		for _, typ := range []string{"dispute.created", "dispute.updated", "dispute.won", "dispute.lost"} {
			got, _ := e.events(k, "type="+typ)
			is.True(len(got) > 0)
			for _, g := range got {
				is.Equal(g, typ)
			}
		}

		// The endpoint got each of them, as stored and signed.
		e.drain()
		var delivered []string
		for _, d := range rc.deliveries() {
			var ev map[string]any
			is.NoErr(json.Unmarshal(d.body, &ev))
			if typ := ev["type"].(string); strings.HasPrefix(typ, "dispute.") {
				delivered = append(delivered, typ+" "+ev["data"].(map[string]any)["id"].(string))
				is.NoErr(verify(t, secret, d))
				is.Equal(e.do("GET", "/v1/events/"+ev["id"].(string), nil, basic(k)).json(t), ev)
			}
		}
		is.Equal(len(delivered), 6)
		var decided []string
		for _, d := range decisions.deliveries() {
			var ev map[string]any
			is.NoErr(json.Unmarshal(d.body, &ev))
			is.NoErr(verify(t, decisionsSecret, d))
			decided = append(decided, ev["type"].(string)+" "+ev["data"].(map[string]any)["id"].(string))
		}
		is.Equal(len(decided), 2)
		is.True(slices.Contains(decided, "dispute.won "+won))
		is.True(slices.Contains(decided, "dispute.lost "+lost))
		for _, want := range []string{"dispute.created " + won, "dispute.updated " + won, "dispute.won " + won, "dispute.created " + lost, "dispute.lost " + lost} {
			found := false
			for _, d := range delivered {
				found = found || d == want
			}
			is.True(found) // want
		}
	})
}

// TestListDisputesOverHTTP: the list is newest first, filtered by status
// and payment intent, pages, and holds only the key's merchant's and
// environment's disputes.
func TestListDisputesOverHTTP(t *testing.T) {
	forEachSandbox(t, func(t *testing.T, e *sandboxEnv, k keys) {
		is := is.New(t)
		p1 := e.paidPayment(k, "10000", "order-1")
		p2 := e.paidPayment(k, "10000", "order-2")
		p3 := e.paidPayment(k, "10000", "order-3")
		open := func(pi string, body any) string {
			e.clock.Advance(time.Minute)
			return e.opened(k, pi, body)["id"].(string)
		}
		d1 := open(p1, nil)
		d2 := open(p2, nil)
		d3 := open(p3, map[string]any{"amount": "4000"})
		d4 := open(p3, map[string]any{"amount": "3000"})
		is.Equal(e.accept(k, "acc", d1).status, http.StatusOK)
		is.Equal(e.evidence(k, "ev", d3, map[string]any{"text": "receipt", "submit": true}).status, http.StatusOK)
		e.decide()
		// Another merchant's dispute.
		other := e.merchant(paykit.Test)
		op := e.paidPayment(other, "10000", "order-o")
		od := e.opened(other, op, nil)["id"].(string)

		list := func(query string) []string {
			t.Helper()
			r := e.do("GET", "/v1/disputes?"+query, nil, basic(k))
			is.Equal(r.status, http.StatusOK)
			ids := []string{}
			for _, d := range items(r.json(t)) {
				is.Equal(sortedKeys(d), disputeKeys)
				ids = append(ids, d["id"].(string))
			}
			return ids
		}
		d3At := e.disputeOf(k, d3)["created_at"].(string)
		for query, want := range map[string][]string{
			"":                                            {d4, d3, d2, d1},
			"status=needs_response":                       {d4, d2},
			"status=under_review":                         {d3},
			"status=lost":                                 {d1},
			"status=won":                                  {},
			"status=needs_response,under_review":          {d4, d3, d2},
			"payment_intent=" + p3:                        {d4, d3},
			"payment_intent=" + p3 + "&status=lost":       {},
			"payment_intent=" + p1 + "&status=lost":       {d1},
			"payment_intent=pi_nope":                      {},
			"payment_intent=" + op:                        {},
			"currency=MYR":                                {d4, d3, d2, d1},
			"currency=THB":                                {},
			"created_after=" + d3At:                       {d4, d3},
			"created_before=" + d3At:                      {d2, d1},
			"created_after=" + d3At + "&limit=1":          {d4},
			"status=needs_response&created_after=" + d3At: {d4},
		} {
			is.Equal(list(query), want) // query
		}

		// Paging: each once, in order.
		var paged []string
		cursor := ""
		for range 5 {
			r := e.do("GET", "/v1/disputes?limit=1"+cursor, nil, basic(k)).json(t)
			for _, d := range items(r) {
				paged = append(paged, d["id"].(string))
			}
			if r["has_more"] != true {
				is.Equal(r["next_cursor"], nil)
				break
			}
			cursor = "&cursor=" + r["next_cursor"].(string)
		}
		is.Equal(paged, []string{d4, d3, d2, d1})

		for query, param := range map[string]string{
			"status=open": "status", "status=needs_response,open": "status", "limit=0": "limit", "limit=101": "limit",
			"cursor=x": "cursor", "currency=myr": "currency", "created_before=today": "created_before", "colour=red": "colour",
		} {
			assertError(t, e.do("GET", "/v1/disputes?"+query, nil, basic(k)), http.StatusBadRequest, "invalid_request", param)
		}

		// Scoping: another merchant's dispute is not found and never
		// listed; this merchant's are not another's or live's.
		assertError(t, e.do("GET", "/v1/disputes/"+od, nil, basic(k)), http.StatusNotFound, "not_found", "")
		assertError(t, e.evidence(k, "ev-od", od, map[string]any{"text": "x"}), http.StatusNotFound, "not_found", "")
		assertError(t, e.accept(k, "acc-od", od), http.StatusNotFound, "not_found", "")
		is.Equal(e.disputeOf(other, od)["status"], "needs_response")
		live := e.keyFor(k.merchantID, paykit.Live)
		for _, o := range []keys{other, live} {
			for _, id := range []string{d1, d2, d3, d4} {
				assertError(t, e.do("GET", "/v1/disputes/"+id, nil, basic(o)), http.StatusNotFound, "not_found", "")
			}
			assertError(t, e.accept(o, "acc-d2", d2), http.StatusNotFound, "not_found", "")
		}
		is.Equal(len(items(e.do("GET", "/v1/disputes", nil, basic(live)).json(t))), 0)
		otherList := items(e.do("GET", "/v1/disputes", nil, basic(other)).json(t))
		is.Equal(len(otherList), 1)
		is.Equal(otherList[0]["id"], od)
		is.Equal(e.disputeOf(k, d2)["status"], "needs_response")
	})
}

// TestConcurrentRefundsAndDisputeOverHTTP: two refunds and a dispute at
// once on one payment never take more than its amount together.
func TestConcurrentRefundsAndDisputeOverHTTP(t *testing.T) {
	forEachSandbox(t, func(t *testing.T, e *sandboxEnv, k keys) {
		is := is.New(t)
		e.adjustBalance(k, "MYR", "1000000") // the balance never limits the refunds
		// 6000 each: any two exceed the payment; 4000: any two fit, three do not.
		for round, part := range []int64{6000, 4000, 6000, 4000} {
			pi := e.paidPayment(k, "10000", fmt.Sprintf("order-%d", round))
			answers := e.concurrently(3, func(i int) (response, error) {
				if i == 2 {
					return e.send("POST", "/v1/test_helpers/payment_intents/"+pi+"/dispute", map[string]any{"amount": fmt.Sprint(part)}, basic(k))
				}
				ref := fmt.Sprintf("r%d-%d", round, i)
				return e.send("POST", "/v1/refunds", map[string]any{"payment_intent": pi, "merchant_reference": ref, "amount": fmt.Sprint(part)}, basic(k), idem(ref))
			})
			var taken int64
			var refunds, disputes int
			for i, r := range answers {
				switch {
				case i < 2 && r.status == http.StatusCreated:
					refunds++
					taken += part
				case i == 2 && r.status == http.StatusOK:
					disputes++
					taken += part
				case r.status == http.StatusUnprocessableEntity && (r.errorOf(t)["code"] == "amount_exceeds_refundable" || r.errorOf(t)["code"] == "invalid_state"):
				default:
					t.Errorf("round %d, answer %d: %d %s", round, i, r.status, r.body)
				}
			}
			is.True(taken <= 10000) // round
			is.True(taken > 0)      // one of them at least
			if part == 6000 {
				is.Equal(refunds+disputes, 1)
			}
			e.settle()
			got := e.get(k, pi)
			is.Equal(minor(t, got["refunded_amount"])+minor(t, got["disputed_amount"]), taken)
			is.Equal(got["disputed_amount"], fmt.Sprint(int64(disputes)*part))
		}
	})
}

// TestConcurrentDisputeResponsesOverHTTP: an acceptance and two
// submissions of evidence at once on one dispute: exactly one is taken,
// the others find the dispute no longer needs a response.
func TestConcurrentDisputeResponsesOverHTTP(t *testing.T) {
	forEachSandbox(t, func(t *testing.T, e *sandboxEnv, k keys) {
		is := is.New(t)
		for round := range 3 {
			pi := e.paidPayment(k, "10000", fmt.Sprintf("order-%d", round))
			id := e.opened(k, pi, nil)["id"].(string)
			answers := e.concurrently(3, func(i int) (response, error) {
				key := fmt.Sprintf("resp-%d-%d", round, i)
				if i == 0 {
					return e.send("POST", "/v1/disputes/"+id+"/accept", nil, basic(k), idem(key))
				}
				return e.send("POST", "/v1/disputes/"+id+"/evidence", map[string]any{"text": fmt.Sprintf("evidence %d", i), "submit": true}, basic(k), idem(key))
			})
			var taken []map[string]any
			for i, r := range answers {
				switch {
				case r.status == http.StatusOK:
					taken = append(taken, r.json(t))
				case r.status == http.StatusUnprocessableEntity && r.errorOf(t)["code"] == "invalid_state":
				default:
					t.Errorf("round %d, answer %d: %d %s", round, i, r.status, r.body)
				}
			}
			is.Equal(len(taken), 1) // round
			e.decide()
			got := e.disputeOf(k, id)
			is.Equal(got["status"], taken[0]["status"]) // lost when accepted, else under review
			is.Equal(got["evidence"], taken[0]["evidence"])
			is.Equal(len(e.txns(k, "source="+id)), 1) // its dispute transaction only
		}
	})
}

// TestDisputeDecidedWithoutCallbacks: when no callback of the sandbox
// comes, paykit asks about a dispute under review and learns the
// decision.
func TestDisputeDecidedWithoutCallbacks(t *testing.T) {
	forEachSandbox(t, func(t *testing.T, e *sandboxEnv, k keys) {
		is := is.New(t)
		pa := e.paidPayment(k, "10000", "order-a")
		pb := e.paidPayment(k, "10000", "order-b")
		won := e.opened(k, pa, nil)["id"].(string)
		lost := e.opened(k, pb, nil)["id"].(string)
		is.Equal(e.evidence(k, "ev-w", won, map[string]any{"text": "winning_evidence", "submit": true}).status, http.StatusOK)
		is.Equal(e.evidence(k, "ev-l", lost, map[string]any{"text": "losing_evidence", "submit": true}).status, http.StatusOK)
		e.drain() // the evidence goes to the PSP
		for range 2 {
			e.clock.Advance(time.Hour)
			e.drain()
		}
		is.Equal(e.disputeOf(k, won)["status"], "won")
		is.Equal(e.disputeOf(k, lost)["status"], "lost")
		is.Equal(e.get(k, pa)["disputed_amount"], "0")
		is.Equal(e.get(k, pb)["disputed_amount"], "10000")
		is.Equal(e.txnOf(k, "dispute_reversal", won)["amount"], "10000")
		is.Equal(e.eventsOf(k, won), []string{"dispute.created", "dispute.updated", "dispute.won"})
		is.Equal(e.eventsOf(k, lost), []string{"dispute.created", "dispute.updated", "dispute.lost"})
	})
}
