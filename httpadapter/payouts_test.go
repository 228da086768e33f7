package httpadapter_test

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/internal/wire"
	"github.com/paykit/paykit/store/storetest"
)

// The payout routes, the balances and the operator's payout API, end to
// end against the real sandbox PSP on every Store.

// Account numbers of the tests: a plain one and the sandbox's magic ones.
const (
	plainAccount   = "123456789012"
	invalidAccount = "000111111116" // failed, account_invalid
	timeoutAccount = "000222222227" // dispatch times out; recovery finds the transfer
	dropAccount    = "000333333335" // first dispatch unacknowledged: 503
	slowAccount    = "000444444440" // in flight for a minute
)

// payoutEnv is a sandbox env whose merchant has a test key and a funded
// THB and MYR balance.
type payoutEnv struct {
	*sandboxEnv
	k keys
}

// funds is what each test merchant starts with, per currency.
const funds = 10_000_000

func forEachPayoutEnv(t *testing.T, threshold int64, fn func(t *testing.T, e *payoutEnv)) {
	forEachPayoutEnvConfig(t, envConfig{approvalThreshold: threshold}, fn)
}

// forEachPayoutEnvConfig is forEachPayoutEnv with the env's cfg.
func forEachPayoutEnvConfig(t *testing.T, cfg envConfig, fn func(t *testing.T, e *payoutEnv)) {
	forEachStore(t, func(t *testing.T, open func(t *testing.T) paykit.Store) {
		se := newSandboxEnvConfig(t, open, cfg)
		e := &payoutEnv{sandboxEnv: se, k: se.merchant(paykit.Test)}
		for _, c := range []string{"THB", "MYR"} {
			e.adjust(e.k.merchantID, c, fmt.Sprint(funds))
		}
		t.Cleanup(func() {
			storetest.CheckLedger(t, e.store, paykit.Scope{MerchantID: e.k.merchantID, Environment: paykit.Test})
			for _, acct := range []string{plainAccount, invalidAccount, timeoutAccount, dropAccount, slowAccount} {
				if strings.Contains(e.logs.String(), acct) {
					t.Errorf("the log holds the account number %s", acct)
				}
			}
		})
		fn(t, e)
	})
}

// adjust credits (or, negative, debits) a merchant's test balance through
// the operator API.
func (e *payoutEnv) adjust(merchantID, currency, amount string) response {
	e.t.Helper()
	return e.do("POST", "/operator/merchants/"+merchantID+"/balance_adjustments",
		map[string]any{"environment": "test", "currency": currency, "amount": amount, "reason": "float"}, bearer(e.opToken))
}

// thPayout is a valid TH payout request to KBANK.
func thPayout(amount, ref, account string) map[string]any {
	return map[string]any{
		"amount": amount, "currency": "THB", "country": "TH", "merchant_reference": ref,
		"recipient": map[string]any{"type": "bank_account", "account_number": account, "bank_code": "KBANK",
			"holder_name": "Somchai Jaidee", "holder_name_th": "สมชาย ใจดี"},
	}
}

// withRecipient returns body with recipient members replaced (nil removes).
func withRecipient(body map[string]any, set map[string]any) map[string]any {
	rc := with(body["recipient"].(map[string]any), set)
	return with(body, map[string]any{"recipient": rc})
}

func (e *payoutEnv) createPayout(key string, body any) response {
	e.t.Helper()
	r := e.do("POST", "/v1/payout_intents", body, basic(e.k), idem(key))
	e.assertNoAccount(r.body)
	return r
}

// payout posts a create request that must answer 201.
func (e *payoutEnv) payout(key string, body any) map[string]any {
	e.t.Helper()
	r := e.createPayout(key, body)
	if r.status != http.StatusCreated {
		e.t.Fatalf("create payout: %d %s", r.status, r.body)
	}
	return r.json(e.t)
}

func (e *payoutEnv) getPayout(id string) map[string]any {
	e.t.Helper()
	r := e.do("GET", "/v1/payout_intents/"+id, nil, basic(e.k))
	if r.status != http.StatusOK {
		e.t.Fatalf("get payout %s: %d %s", id, r.status, r.body)
	}
	e.assertNoAccount(r.body)
	return r.json(e.t)
}

func (e *payoutEnv) cancelPayout(key, id string, body any) response {
	e.t.Helper()
	r := e.do("POST", "/v1/payout_intents/"+id+"/cancel", body, basic(e.k), idem(key))
	e.assertNoAccount(r.body)
	return r
}

// balance returns available and reserved of currency.
func (e *payoutEnv) balance(currency string) (available, reserved string) {
	e.t.Helper()
	r := e.do("GET", "/v1/balances", nil, basic(e.k))
	if r.status != http.StatusOK {
		e.t.Fatalf("balances: %d %s", r.status, r.body)
	}
	for _, b := range r.json(e.t)["data"].([]any) {
		m := b.(map[string]any)
		if m["currency"] == currency {
			return m["available"].(string), m["reserved"].(string)
		}
	}
	return "0", "0"
}

// settle lets sandbox time pass and runs the worker until the PSP's
// asynchronous outcomes (and the worker's backoff) have come round.
func (e *payoutEnv) settle() {
	e.t.Helper()
	for range 10 {
		e.clock.Advance(30 * time.Second)
		e.drain()
	}
}

// assertNoAccount fails when a body holds a full account number.
func (e *payoutEnv) assertNoAccount(body []byte) {
	e.t.Helper()
	for _, acct := range []string{plainAccount, invalidAccount, timeoutAccount, dropAccount, slowAccount, "0812345678"} {
		if bytes.Contains(body, []byte(acct)) {
			e.t.Errorf("a response holds the account number %s: %s", acct, body)
		}
	}
	e.assertNoProviderDetail(body)
}

func TestCreatePayoutIntent(t *testing.T) {
	forEachPayoutEnv(t, 0, func(t *testing.T, e *payoutEnv) {
		is := is.New(t)
		body := thPayout("250000", "po-1", plainAccount)
		r := e.createPayout("k1", body)
		is.Equal(r.status, http.StatusCreated)
		po := r.json(t)
		is.Equal(po["object"], "payout_intent")
		is.Equal(po["status"], "processing")
		is.Equal(po["amount"], "250000")
		is.Equal(po["currency"], "THB")
		is.Equal(po["country"], "TH")
		is.Equal(po["environment"], "test")
		is.Equal(po["merchant_reference"], "po-1")
		is.Equal(po["reserved_amount"], "250000")
		is.Equal(po["completed_amount"], "0")
		is.Equal(po["returned_amount"], "0")
		is.Equal(po["next_action"], nil)
		is.Equal(po["failure_code"], nil)
		is.Equal(po["failure_message"], nil)
		_, hasApproval := po["approval_status"]
		is.True(!hasApproval) // only while an approval is pending
		is.Equal(po["recipient"], map[string]any{"type": "bank_account", "account_last4": "9012", "bank_code": "KBANK", "holder_name": "Somchai Jaidee"})
		id := po["id"].(string)

		avail, reserved := e.balance("THB")
		is.Equal(avail, fmt.Sprint(funds-250000))
		is.Equal(reserved, "250000")

		// Replay: the first answer byte for byte.
		again := e.createPayout("k1", body)
		is.Equal(again.status, http.StatusCreated)
		is.Equal(again.header.Get("Idempotent-Replayed"), "true")
		is.Equal(string(again.body), string(r.body))
		// The same key with any changed field; a reused reference.
		conflict := e.createPayout("k1", thPayout("250001", "po-1", plainAccount))
		is.Equal(conflict.status, http.StatusConflict)
		is.Equal(conflict.errorOf(t)["code"], "idempotency_conflict")
		conflict = e.createPayout("k1", withRecipient(body, map[string]any{"account_number": "123456789013"}))
		is.Equal(conflict.errorOf(t)["code"], "idempotency_conflict")
		dup := e.createPayout("k2", body)
		is.Equal(dup.status, http.StatusConflict)
		is.Equal(dup.errorOf(t)["code"], "duplicate_merchant_reference")
		is.Equal(len(e.psp.Transfers()), 1)

		// The PSP settles; the worker finds out.
		e.settle()
		done := e.getPayout(id)
		is.Equal(done["status"], "succeeded")
		is.Equal(done["reserved_amount"], "0")
		is.Equal(done["completed_amount"], "250000")
		avail, reserved = e.balance("THB")
		is.Equal(avail, fmt.Sprint(funds-250000))
		is.Equal(reserved, "0")

		// PromptPay: no Thai name needed; the identifier is the account.
		pp := e.payout("k3", withRecipient(thPayout("1000", "po-pp", "x"), map[string]any{
			"bank_code": "promptpay", "account_number": "0812345678", "holder_name_th": nil,
		}))
		is.Equal(pp["status"], "processing")
		is.Equal(pp["recipient"].(map[string]any)["account_last4"], "5678")
		// MY bank.
		my := e.payout("k4", map[string]any{"amount": "5000", "currency": "MYR", "country": "MY", "merchant_reference": "po-my",
			"recipient": map[string]any{"type": "bank_account", "account_number": plainAccount, "bank_code": "MAYBANK", "holder_name": "Aisyah"}})
		is.Equal(my["status"], "processing")
	})
}

func TestCreatePayoutIntentRejections(t *testing.T) {
	forEachPayoutEnv(t, 0, func(t *testing.T, e *payoutEnv) {
		is := is.New(t)
		ok := thPayout("250000", "po-r", plainAccount)
		cases := []struct {
			name   string
			body   any
			status int
			code   string
			param  string
		}{
			{"not json", "{", 400, "invalid_request", ""},
			{"unknown member", with(ok, map[string]any{"provider": "sandbox"}), 400, "invalid_request", "provider"},
			{"no recipient", with(ok, map[string]any{"recipient": nil}), 400, "invalid_request", "recipient"},
			{"zero amount", with(ok, map[string]any{"amount": "0"}), 400, "invalid_request", "amount"},
			{"numeric amount", with(ok, map[string]any{"amount": 250000}), 400, "invalid_request", "amount"},
			{"lower-case currency", with(ok, map[string]any{"currency": "thb"}), 400, "invalid_request", "currency"},
			{"no account number", withRecipient(ok, map[string]any{"account_number": nil}), 400, "invalid_request", "recipient.account_number"},
			{"bad recipient type", withRecipient(ok, map[string]any{"type": "card"}), 400, "invalid_request", "recipient.type"},
			{"unknown recipient member", withRecipient(ok, map[string]any{"iban": "x"}), 400, "invalid_request", "recipient.iban"},
			{"reference too long", with(ok, map[string]any{"merchant_reference": strings.Repeat("r", 257)}), 400, "invalid_request", "merchant_reference"},
			{"provider-local bank code", withRecipient(ok, map[string]any{"bank_code": "TH-004"}), 400, "invalid_request", "recipient.bank_code"},
			{"Thai code in MY", with(ok, map[string]any{"country": "MY", "currency": "MYR"}), 400, "invalid_request", "recipient.bank_code"},
			{"MY bank in THB", withRecipient(with(ok, map[string]any{"country": "MY"}), map[string]any{"bank_code": "MAYBANK"}), 422, "payout_route_unavailable", ""},
			{"no route for the currency", with(ok, map[string]any{"currency": "USD"}), 422, "payout_route_unavailable", ""},
			{"Thai name missing", withRecipient(ok, map[string]any{"holder_name_th": nil}), 422, "missing_required_field", "recipient.holder_name_th"},
			{"over the balance", with(ok, map[string]any{"amount": fmt.Sprint(funds + 1)}), 422, "insufficient_balance", "amount"},
		}
		for _, c := range cases {
			r := e.createPayout("k-rej", c.body)
			if r.status != c.status {
				t.Fatalf("%s: status %d, want %d: %s", c.name, r.status, c.status, r.body)
			}
			er := r.errorOf(t)
			is.Equal(er["code"], c.code)
			if c.param != "" {
				is.Equal(er["param"], c.param)
			}
		}
		// Nothing was stored: no payout, no reservation, and the key is free.
		avail, reserved := e.balance("THB")
		is.Equal(avail, fmt.Sprint(funds))
		is.Equal(reserved, "0")
		is.Equal(len(e.psp.Transfers()), 0)
		r := e.do("GET", "/v1/payout_intents", nil, basic(e.k))
		is.Equal(len(r.json(t)["data"].([]any)), 0)
		is.Equal(e.createPayout("k-rej", ok).status, http.StatusCreated)

		// Headers.
		r = e.do("POST", "/v1/payout_intents", ok, basic(e.k))
		is.Equal(r.status, http.StatusBadRequest)
		is.Equal(r.errorOf(t)["param"], "Idempotency-Key")
		// A live key has no payout routes until configured.
		live := e.keyFor(e.k.merchantID, paykit.Live)
		r = e.do("POST", "/v1/payout_intents", ok, basic(live), idem("k-live"))
		is.Equal(r.status, http.StatusUnprocessableEntity)
		is.Equal(r.errorOf(t)["code"], "payout_route_unavailable")
	})
}

func TestPayoutMagicAccountsOverHTTP(t *testing.T) {
	forEachPayoutEnv(t, 0, func(t *testing.T, e *payoutEnv) {
		is := is.New(t)
		// Refused by the Provider: failed at once, the reservation released.
		bad := e.payout("k-bad", thPayout("1000", "bad", invalidAccount))
		is.Equal(bad["status"], "failed")
		is.Equal(bad["failure_code"], "account_invalid")
		is.Equal(bad["reserved_amount"], "0")

		// Dispatch not acknowledged: 503, and the retry resumes the same
		// payout and transfer.
		r := e.createPayout("k-drop", thPayout("2000", "drop", dropAccount))
		is.Equal(r.status, http.StatusServiceUnavailable)
		is.Equal(r.errorOf(t)["code"], "dispatch_unavailable")
		_, reserved := e.balance("THB")
		is.Equal(reserved, "2000") // the stored payout keeps its reservation
		drop := e.payout("k-drop", thPayout("2000", "drop", dropAccount))
		is.Equal(drop["status"], "processing")
		list := e.do("GET", "/v1/payout_intents?merchant_reference=drop", nil, basic(e.k))
		is.Equal(len(list.json(t)["data"].([]any)), 1)

		// Dispatch times out: processing, recovery finds the one transfer.
		slowack := e.payout("k-timeout", thPayout("3000", "timeout", timeoutAccount))
		is.Equal(slowack["status"], "processing")

		// Slow: a cancel waits for the Provider.
		slow := e.payout("k-slow", thPayout("4000", "slow", slowAccount))
		c := e.cancelPayout("k-cancel-slow", slow["id"].(string), map[string]any{"reason": "wrong amount"})
		is.Equal(c.status, http.StatusAccepted)
		is.Equal(c.json(t)["status"], "processing")
		e.drain()
		is.Equal(e.getPayout(slow["id"].(string))["status"], "processing")

		e.settle()
		is.Equal(e.getPayout(drop["id"].(string))["status"], "succeeded")
		is.Equal(e.getPayout(slowack["id"].(string))["status"], "succeeded")
		cancelled := e.getPayout(slow["id"].(string))
		is.Equal(cancelled["status"], "cancelled")
		is.Equal(cancelled["reserved_amount"], "0")
		is.Equal(e.psp.CreateCalls(drop["id"].(string)), 2)
		is.Equal(e.psp.CreateCalls(slowack["id"].(string)), 1)
		is.Equal(len(e.psp.Transfers()), 4) // bad, drop, timeout, slow: one each

		// A terminal payout cannot be cancelled.
		c = e.cancelPayout("k-cancel-done", drop["id"].(string), nil)
		is.Equal(c.status, http.StatusUnprocessableEntity)
		is.Equal(c.errorOf(t)["code"], "invalid_state")

		// Returned funds: failed, funds_returned, credited back.
		before, _ := e.balance("THB")
		r = e.do("POST", "/v1/test_helpers/payout_intents/"+drop["id"].(string)+"/return", nil, basic(e.k))
		is.Equal(r.status, http.StatusOK)
		ret := r.json(t)
		is.Equal(ret["status"], "failed")
		is.Equal(ret["failure_code"], "funds_returned")
		is.Equal(ret["returned_amount"], "2000")
		after, _ := e.balance("THB")
		is.Equal(after, addAmount(t, before, 2000))
		r = e.do("POST", "/v1/test_helpers/payout_intents/"+slowack["id"].(string)+"/return", nil, basic(e.keyFor(e.k.merchantID, paykit.Live)))
		is.Equal(r.status, http.StatusNotFound)

		// The audit log shows the merchant's cancel with its reason.
		audit := e.do("GET", "/operator/audit_events?action=payout_intent.cancel&merchant_id="+e.k.merchantID, nil, bearer(e.opToken))
		events := audit.json(t)["data"].([]any)
		is.Equal(len(events), 1)
		ev := events[0].(map[string]any)
		is.Equal(ev["target_id"], slow["id"])
		is.Equal(ev["details"].(map[string]any)["reason"], "wrong amount")
	})
}

func addAmount(t *testing.T, s string, d int64) string {
	t.Helper()
	v, err := wire.ParseAmount(s)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprint(v + d)
}

func TestPayoutApprovalsOverHTTP(t *testing.T) {
	forEachPayoutEnv(t, 1_000_000, func(t *testing.T, e *payoutEnv) {
		is := is.New(t)
		first := e.createPayout("k-held", thPayout("1000000", "held", plainAccount))
		is.Equal(first.status, http.StatusCreated)
		is.Equal(first.header.Get("Idempotent-Replayed"), "") // the first answer is no replay
		replay := e.createPayout("k-held", thPayout("1000000", "held", plainAccount))
		is.Equal(replay.status, http.StatusCreated)
		is.Equal(replay.header.Get("Idempotent-Replayed"), "true")
		is.Equal(string(replay.body), string(first.body))
		held := first.json(t)
		is.Equal(held["status"], "requires_approval")
		is.Equal(held["approval_status"], "pending")
		is.Equal(held["reserved_amount"], "1000000")
		small := e.payout("k-small", thPayout("999999", "small", plainAccount))
		is.Equal(small["status"], "processing")
		is.Equal(len(e.psp.Transfers()), 1) // the held one was not sent

		// The operator's queue.
		r := e.do("GET", "/operator/payout_intents?approval_status=pending", nil, bearer(e.opToken))
		is.Equal(r.status, http.StatusOK)
		var queued []string
		for _, item := range r.json(t)["data"].([]any) {
			queued = append(queued, item.(map[string]any)["id"].(string))
		}
		is.Equal(queued, []string{held["id"].(string)})
		r = e.do("GET", "/operator/payout_intents", nil, bearer(e.opToken))
		is.Equal(r.status, http.StatusBadRequest)
		r = e.do("GET", "/operator/payout_intents?approval_status=pending", nil, basic(e.k))
		is.Equal(r.status, http.StatusUnauthorized)

		// Approve: dispatched, out of the queue, audited.
		r = e.do("POST", "/operator/payout_intents/"+held["id"].(string)+"/approve", map[string]any{"note": "known supplier"}, bearer(e.opToken))
		is.Equal(r.status, http.StatusOK)
		approved := r.json(t)
		is.Equal(approved["status"], "processing")
		_, pending := approved["approval_status"]
		is.True(!pending)
		is.Equal(len(e.psp.Transfers()), 2)
		r = e.do("POST", "/operator/payout_intents/"+held["id"].(string)+"/approve", nil, bearer(e.opToken))
		is.Equal(r.status, http.StatusUnprocessableEntity)
		is.Equal(r.errorOf(t)["code"], "invalid_state")

		// Reject: failed, approval_rejected, released.
		rej := e.payout("k-rej", thPayout("2000000", "rejected", plainAccount))
		r = e.do("POST", "/operator/payout_intents/"+rej["id"].(string)+"/reject", map[string]any{}, bearer(e.opToken))
		is.Equal(r.status, http.StatusBadRequest) // a reason is required
		r = e.do("POST", "/operator/payout_intents/"+rej["id"].(string)+"/reject", map[string]any{"reason": "unknown payee"}, bearer(e.opToken))
		is.Equal(r.status, http.StatusOK)
		rejected := r.json(t)
		is.Equal(rejected["status"], "failed")
		is.Equal(rejected["failure_code"], "approval_rejected")
		is.Equal(rejected["reserved_amount"], "0")
		audit := e.do("GET", "/operator/audit_events?merchant_id="+e.k.merchantID, nil, bearer(e.opToken)).json(t)["data"].([]any)
		actions := map[string]string{}
		for _, a := range audit {
			m := a.(map[string]any)
			actions[m["action"].(string)] = m["actor"].(string)
		}
		is.Equal(actions["payout_intent.approve"], "alice")
		is.Equal(actions["payout_intent.reject"], "alice")

		// A merchant cancels a held payout at once.
		c := e.payout("k-c", thPayout("3000000", "cancelled", plainAccount))
		r = e.cancelPayout("k-cancel", c["id"].(string), map[string]any{"reason": "duplicate"})
		is.Equal(r.status, http.StatusAccepted)
		is.Equal(r.json(t)["status"], "cancelled")
		again := e.cancelPayout("k-cancel", c["id"].(string), map[string]any{"reason": "duplicate"})
		is.Equal(string(again.body), string(r.body))
		is.Equal(again.header.Get("Idempotent-Replayed"), "true")
		conflict := e.cancelPayout("k-cancel", c["id"].(string), map[string]any{"reason": "other"})
		is.Equal(conflict.errorOf(t)["code"], "idempotency_conflict")

		// A hold nobody resolves expires after the approval TTL (72h).
		x := e.payout("k-x", thPayout("1500000", "expiring", plainAccount))
		e.clock.Advance(73 * time.Hour)
		e.drain()
		exp := e.getPayout(x["id"].(string))
		is.Equal(exp["status"], "expired")
		is.Equal(exp["reserved_amount"], "0")
		_, reserved := e.balance("THB")
		is.Equal(reserved, "0") // the approved and small payouts settled meanwhile
	})
}

func TestPayoutReadsAndLists(t *testing.T) {
	forEachPayoutEnv(t, 0, func(t *testing.T, e *payoutEnv) {
		is := is.New(t)
		a := e.payout("k-a", thPayout("1000", "a", plainAccount))
		b := e.payout("k-b", thPayout("1000", "b", invalidAccount))
		e.clock.Advance(time.Second)
		c := e.payout("k-c", thPayout("1000", "c", plainAccount))
		ids := func(query string) []string {
			r := e.do("GET", "/v1/payout_intents?"+query, nil, basic(e.k))
			if r.status != http.StatusOK {
				t.Fatalf("list %s: %d %s", query, r.status, r.body)
			}
			out := []string{}
			for _, item := range r.json(t)["data"].([]any) {
				out = append(out, item.(map[string]any)["id"].(string))
			}
			return out
		}
		is.Equal(ids("")[0], c["id"]) // newest first
		is.Equal(len(ids("")), 3)
		is.Equal(ids("status=failed"), []string{b["id"].(string)})
		is.Equal(len(ids("status=processing,failed")), 3)
		is.Equal(ids("merchant_reference=a"), []string{a["id"].(string)})
		is.Equal(len(ids("currency=MYR")), 0)
		// Paging with the filters sent again.
		r := e.do("GET", "/v1/payout_intents?limit=2", nil, basic(e.k)).json(t)
		is.Equal(r["has_more"], true)
		next := ids("limit=2&cursor=" + r["next_cursor"].(string))
		is.Equal(len(next), 1)
		for _, bad := range []string{"status=paid", "limit=0", "limit=101", "cursor=xyz", "country=th", "colour=red"} {
			r := e.do("GET", "/v1/payout_intents?"+bad, nil, basic(e.k))
			is.Equal(r.status, http.StatusBadRequest)
		}
		// Another merchant, or the live environment, sees none of it.
		other := e.merchant(paykit.Test)
		r2 := e.do("GET", "/v1/payout_intents/"+a["id"].(string), nil, basic(other))
		is.Equal(r2.status, http.StatusNotFound)
		live := e.keyFor(e.k.merchantID, paykit.Live)
		r2 = e.do("GET", "/v1/payout_intents/"+a["id"].(string), nil, basic(live))
		is.Equal(r2.status, http.StatusNotFound)
		r2 = e.do("POST", "/v1/payout_intents/"+a["id"].(string)+"/cancel", nil, basic(other), idem("k-x"))
		is.Equal(r2.status, http.StatusNotFound)
		r2 = e.do("GET", "/v1/balances", nil, basic(other))
		is.Equal(len(r2.json(t)["data"].([]any)), 0)
	})
}

// 100 payouts at once against a balance that covers ten: never overdrawn.
func TestConcurrentPayoutsOverHTTP(t *testing.T) {
	forEachPayoutEnvConfig(t, envConfig{providerTimeout: 10 * time.Second}, func(t *testing.T, e *payoutEnv) {
		is := is.New(t)
		const n, each = 100, funds / 10
		answers := e.concurrently(n, func(i int) (response, error) {
			return e.send("POST", "/v1/payout_intents", thPayout(fmt.Sprint(each), fmt.Sprint("race-", i), plainAccount), basic(e.k), idem(fmt.Sprint("race-", i)))
		})
		created, refused := 0, 0
		for _, r := range answers {
			switch r.status {
			case http.StatusCreated:
				created++
			case http.StatusUnprocessableEntity:
				is.Equal(r.errorOf(t)["code"], "insufficient_balance")
				refused++
			default:
				t.Fatalf("status %d: %s", r.status, r.body)
			}
		}
		is.Equal(created, 10)
		is.Equal(refused, n-10)
		avail, reserved := e.balance("THB")
		is.Equal(avail, "0")
		is.Equal(reserved, fmt.Sprint(funds))
		is.Equal(len(e.psp.Transfers()), 10)
	})
}
