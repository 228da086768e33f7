package paykit_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/internal/answertest"
	"github.com/paykit/paykit/keyring"
	"github.com/paykit/paykit/store/memory"
	"github.com/paykit/paykit/store/storetest"
)

// fakeBank is an in-process payout Provider: transfers deduplicated by key,
// outcomes chosen by the account number like the sandbox's.
type fakeBank struct {
	*fakeProvider
	mu        sync.Mutex
	transfers map[string]*fakeTransfer
	dispatch  map[string]int // create calls per key
	dropFirst bool           // answer the first create of each key unacknowledged
	refuse    bool           // refuse every create before a transfer exists
	block     chan struct{}  // when set, CreatePayout waits on it after making the transfer (a hung request)
	meanwhile func()         // when set, the next CreatePayout runs it before it answers
}

type fakeTransfer struct {
	account string
	bank    string // the Provider bank code it was sent with
	state   paykit.Outcome
	cancel  bool
}

func newFakeBank() *fakeBank {
	return &fakeBank{fakeProvider: newFakeProvider(), transfers: map[string]*fakeTransfer{}, dispatch: map[string]int{}}
}

func (b *fakeBank) Capabilities() paykit.Capabilities {
	return paykit.CapPayments | paykit.CapCancel | paykit.CapPayouts
}

func (b *fakeBank) CreatePayout(ctx context.Context, req paykit.PayoutRequest) paykit.Result {
	b.mu.Lock()
	block, meanwhile := b.block, b.meanwhile
	b.meanwhile = nil
	b.mu.Unlock()
	r := b.createPayout(req)
	if block != nil {
		select {
		case <-block:
		case <-ctx.Done():
		}
	}
	if meanwhile != nil {
		meanwhile()
	}
	return r
}

func (b *fakeBank) createPayout(req paykit.PayoutRequest) paykit.Result {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.dispatch[req.Key]++
	if b.refuse {
		return paykit.Result{Outcome: paykit.OutcomeRefused, Detail: "LOCAL_BAD_REQUEST"}
	}
	t, seen := b.transfers[req.Key]
	if !seen {
		t = &fakeTransfer{account: req.AccountNumber, bank: req.BankCode, state: paykit.OutcomePending}
		if req.AccountNumber == "000111111116" {
			t.state = paykit.OutcomeFailed
		}
		b.transfers[req.Key] = t
	}
	if b.dropFirst && b.dispatch[req.Key] == 1 {
		return paykit.Result{Outcome: paykit.OutcomeUnacknowledged, Detail: "connection reset"}
	}
	if req.AccountNumber == "000222222227" && !seen {
		return paykit.Result{Outcome: paykit.OutcomeUnknown, Detail: "timeout"}
	}
	return b.payoutResult(req.Key, t)
}

func (b *fakeBank) payoutResult(key string, t *fakeTransfer) paykit.Result {
	r := paykit.Result{Outcome: t.state, Reference: "tr_" + key}
	if t.state == paykit.OutcomeFailed {
		r.FailureCode, r.Detail = paykit.FailureAccountInvalid, "ERR_ACCOUNT"
	}
	return r
}

func (b *fakeBank) InquirePayout(_ context.Context, ref paykit.AttemptRef) paykit.Result {
	key := ref.Key
	b.mu.Lock()
	defer b.mu.Unlock()
	t, ok := b.transfers[key]
	if !ok {
		return paykit.Result{Outcome: paykit.OutcomeNotFound}
	}
	return b.payoutResult(key, t)
}

func (b *fakeBank) CancelPayout(_ context.Context, ref paykit.AttemptRef) paykit.Result {
	key := ref.Key
	b.mu.Lock()
	defer b.mu.Unlock()
	t, ok := b.transfers[key]
	if !ok {
		return paykit.Result{Outcome: paykit.OutcomeNotFound}
	}
	t.cancel = true
	return b.payoutResult(key, t)
}

// settle finishes in-flight transfers: cancelled where a cancel was asked.
func (b *fakeBank) settle() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, t := range b.transfers {
		if t.state == paykit.OutcomePending {
			t.state = paykit.OutcomeSucceeded
			if t.cancel {
				t.state = paykit.OutcomeCancelled
			}
		}
	}
}

// bankCode is the Provider bank code the transfer under key was sent with.
func (b *fakeBank) bankCode(key string) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if t, ok := b.transfers[key]; ok {
		return t.bank
	}
	return ""
}

func (b *fakeBank) calls(key string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.dispatch[key]
}

type payoutEnv struct {
	*flowEnv
	bank  *fakeBank
	store paykit.Store
	logs  *bytes.Buffer
}

func newPayoutEnv(t *testing.T, threshold int64) *payoutEnv {
	t.Helper()
	return newPayoutEnvOn(t, memory.New(), nil, threshold)
}

// newPayoutEnvOn is newPayoutEnv on store, with the account keys a
// persistent Store needs (nil: the Service's default).
func newPayoutEnvOn(t *testing.T, store paykit.Store, keys *keyring.Keyring, threshold int64) *payoutEnv {
	t.Helper()
	clock := paykit.NewManualClock(time.Date(2026, 6, 1, 8, 0, 0, 0, time.UTC))
	bank := newFakeBank()
	var signingKey []byte // the Service's default on the memory Store
	if keys != nil {
		signingKey = []byte("flow-test-signing-key-32-bytes!!") // as newFlowEnvOn: both may share a Store
	}
	logs := &bytes.Buffer{}
	routing := fakeRouting
	routing.Payouts = []paykit.PayoutRoute{
		{Environment: paykit.Test, Country: "TH", Currency: "THB", Provider: "fake", Banks: []paykit.PayoutBank{
			{Code: "KBANK", ProviderCode: "TH-004", RequiresHolderNameTH: true},
			{Code: "promptpay", ProviderCode: "TH-PP"},
		}},
		{Environment: paykit.Test, Country: "MY", Currency: "MYR", Provider: "fake", Banks: []paykit.PayoutBank{{Code: "MAYBANK", ProviderCode: "MBB0228"}}},
	}
	svc, err := paykit.New(paykit.Config{
		Store: store, Now: clock.Now, Routing: routing, Providers: map[string]paykit.Provider{"fake": bank},
		PublicURL: "https://pay.example", ApprovalThreshold: threshold, AccountKeys: keys,
		SigningKey: signingKey,
		Logger:     slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	if err != nil {
		t.Fatal(err)
	}
	e := &payoutEnv{flowEnv: &flowEnv{svc: svc, clock: clock, provider: bank.fakeProvider,
		test: paykit.Principal{Scope: paykit.Scope{MerchantID: "mch_1", Environment: paykit.Test}},
		live: paykit.Principal{Scope: paykit.Scope{MerchantID: "mch_1", Environment: paykit.Live}},
	}, bank: bank, store: store, logs: logs}
	ctx := context.Background()
	is.New(t).NoErr(store.CreateMerchant(ctx, &paykit.Merchant{ID: "mch_1", Name: "One", CreatedAt: clock.Now()}))
	for _, cur := range []string{"THB", "MYR"} {
		if _, err := svc.AdjustBalance(ctx, "ops", "mch_1", paykit.BalanceAdjustmentRequest{Environment: paykit.Test, Currency: cur, Amount: 5000000, Reason: "float"}); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		storetest.CheckLedger(t, store, e.test.Scope)
		if strings.Contains(logs.String(), "000123456789") || strings.Contains(logs.String(), "0812345678") {
			t.Error("an account number reached the logs")
		}
	})
	return e
}

// thPayoutRouting is fakeRouting with a payout route to KBANK (TH-004)
// through the "fake" Provider.
func thPayoutRouting() paykit.Routing {
	routing := fakeRouting
	routing.Payouts = []paykit.PayoutRoute{{Environment: paykit.Test, Country: "TH", Currency: "THB", Provider: "fake",
		Banks: []paykit.PayoutBank{{Code: "KBANK", ProviderCode: "TH-004", RequiresHolderNameTH: true}}}}
	return routing
}

func thPayout(amount int64, ref, account string) paykit.CreatePayoutIntentRequest {
	return paykit.CreatePayoutIntentRequest{Amount: amount, Currency: "THB", Country: "TH", MerchantReference: ref,
		Recipient: paykit.Recipient{Type: "bank_account", AccountNumber: account, BankCode: "KBANK", HolderName: "Somchai", HolderNameTH: "สมชาย"}}
}

func (e *payoutEnv) balance(t *testing.T, currency string) paykit.Balance {
	t.Helper()
	b, err := e.store.GetBalance(context.Background(), e.test.Scope, currency)
	if err != nil {
		t.Fatal(err)
	}
	return *b
}

func body(t *testing.T, r *answertest.Response) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.Body, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestPayoutSucceedsAndSettlesTheLedger(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	e := newPayoutEnv(t, 0)
	resp, err := answertest.From(e.svc.CreatePayoutIntent(ctx, e.test, "p1", thPayout(250000, "payout-1", "000123456789")))
	is.NoErr(err)
	is.Equal(resp.Status, 201)
	b := body(t, resp)
	is.Equal(b["status"], "processing")
	is.Equal(b["reserved_amount"], "250000")
	is.Equal(b["completed_amount"], "0")
	_, hasApproval := b["approval_status"]
	is.True(!hasApproval)
	is.Equal(b["recipient"], map[string]any{"type": "bank_account", "account_last4": "6789", "bank_code": "KBANK", "holder_name": "Somchai"})
	is.True(!strings.Contains(string(resp.Body), "000123456789"))
	is.True(!strings.Contains(string(resp.Body), "TH-004")) // Provider bank code stays inside
	is.Equal(e.balance(t, "THB").Available, int64(5_000_000-250_000))
	is.Equal(e.balance(t, "THB").Reserved, int64(250_000))

	e.bank.settle()
	e.clock.Advance(2 * time.Second)
	e.drain(t)
	po, err := e.svc.GetPayoutIntent(ctx, e.test, b["id"].(string))
	is.NoErr(err)
	is.Equal(po.Status, paykit.PayoutSucceeded)
	is.Equal(po.CompletedAmount, int64(250_000))
	is.Equal(po.ReservedAmount, int64(0))
	is.Equal(e.balance(t, "THB").Reserved, int64(0))
	is.Equal(e.balance(t, "THB").Available, int64(4_750_000))

	replay, err := answertest.From(e.svc.CreatePayoutIntent(ctx, e.test, "p1", thPayout(250000, "payout-1", "000123456789")))
	is.NoErr(err)
	is.True(replay.Replayed)
	is.Equal(string(replay.Body), string(resp.Body))
	_, err = answertest.From(e.svc.CreatePayoutIntent(ctx, e.test, "p1", thPayout(250001, "payout-1", "000123456789")))
	is.Equal(paykit.ErrorCode(err), paykit.CodeIdempotencyConflict)
	_, err = answertest.From(e.svc.CreatePayoutIntent(ctx, e.test, "p2", thPayout(1000, "payout-1", "000123456789")))
	is.Equal(paykit.ErrorCode(err), paykit.CodeDuplicateMerchantReference)
	is.Equal(e.bank.calls(po.ID), 1)
}

func TestPayoutValidation(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newPayoutEnv(t, 0)
	mod := func(f func(*paykit.CreatePayoutIntentRequest)) paykit.CreatePayoutIntentRequest {
		r := thPayout(1000, "v", "000123456789")
		f(&r)
		return r
	}
	for name, c := range map[string]struct {
		req         paykit.CreatePayoutIntentRequest
		code, param string
	}{
		"provider bank code": {mod(func(r *paykit.CreatePayoutIntentRequest) { r.Recipient.BankCode = "TH-004" }), paykit.CodeInvalidRequest, "recipient.bank_code"},
		"unknown type":       {mod(func(r *paykit.CreatePayoutIntentRequest) { r.Recipient.Type = "wallet" }), paykit.CodeInvalidRequest, "recipient.type"},
		"no account":         {mod(func(r *paykit.CreatePayoutIntentRequest) { r.Recipient.AccountNumber = "" }), paykit.CodeInvalidRequest, "recipient.account_number"},
		"no route for bank":  {mod(func(r *paykit.CreatePayoutIntentRequest) { r.Recipient.BankCode = "SCB" }), paykit.CodePayoutRouteUnavailable, "recipient.bank_code"},
		"wrong currency":     {mod(func(r *paykit.CreatePayoutIntentRequest) { r.Currency = "MYR" }), paykit.CodePayoutRouteUnavailable, "recipient.bank_code"},
		"missing thai name":  {mod(func(r *paykit.CreatePayoutIntentRequest) { r.Recipient.HolderNameTH = "" }), paykit.CodeMissingRequiredField, "recipient.holder_name_th"},
		"over the balance":   {mod(func(r *paykit.CreatePayoutIntentRequest) { r.Amount = 5000001 }), paykit.CodeInsufficientBalance, "amount"},
	} {
		t.Run(name, func(t *testing.T) {
			is := is.New(t)
			_, err := answertest.From(e.svc.CreatePayoutIntent(ctx, e.test, "same-key", c.req))
			is.Equal(paykit.ErrorCode(err), c.code)
			is.Equal(paykit.AsError(err).Param, c.param)
		})
	}
	is := is.New(t)
	// PromptPay needs no Thai name; nothing above was stored, so the key works.
	pp := mod(func(r *paykit.CreatePayoutIntentRequest) {
		r.Recipient.BankCode, r.Recipient.AccountNumber, r.Recipient.HolderNameTH = "promptpay", "0812345678", ""
	})
	resp, err := answertest.From(e.svc.CreatePayoutIntent(ctx, e.test, "same-key", pp))
	is.NoErr(err)
	is.Equal(resp.Status, 201)
	_, err = answertest.From(e.svc.CreatePayoutIntent(ctx, e.live, "k", pp))
	is.Equal(paykit.ErrorCode(err), paykit.CodePayoutRouteUnavailable) // live has no routes
}

func TestPayoutApprovalHold(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	e := newPayoutEnv(t, 1_000_000)
	create := func(key, ref string) string {
		resp, err := answertest.From(e.svc.CreatePayoutIntent(ctx, e.test, key, thPayout(1000000, ref, "000123456789")))
		is.NoErr(err)
		b := body(t, resp)
		is.Equal(b["status"], "requires_approval")
		is.Equal(b["approval_status"], "pending")
		return b["id"].(string)
	}
	approved, rejected, expired, cancelled := create("a", "r-a"), create("b", "r-b"), create("c", "r-c"), create("d", "r-d")
	is.Equal(e.balance(t, "THB").Reserved, int64(4_000_000))
	is.Equal(e.bank.calls(approved), 0) // nothing reaches the Provider during a hold

	pending, err := e.svc.ListPendingApprovals(ctx, paykit.PageParams{})
	is.NoErr(err)
	is.Equal(len(pending.Data), 4)

	po, err := e.svc.ApprovePayout(ctx, "ops:alice", approved, "checked")
	is.NoErr(err)
	is.Equal(po.Status, paykit.PayoutProcessing)
	is.True(!po.ApprovalPending)
	is.Equal(e.bank.calls(approved), 1)
	_, err = e.svc.ApprovePayout(ctx, "ops:alice", approved, "")
	is.Equal(paykit.ErrorCode(err), paykit.CodeInvalidState)

	po, err = e.svc.RejectPayout(ctx, "ops:bob", rejected, "suspicious recipient")
	is.NoErr(err)
	is.Equal(po.Status, paykit.PayoutFailed)
	is.Equal(po.FailureCode, paykit.FailureApprovalRejected)

	c, err := answertest.From(e.svc.CancelPayoutIntent(ctx, e.test, "cancel-d", cancelled, paykit.CancelPayoutIntentRequest{Reason: "customer changed their mind"}))
	is.NoErr(err)
	is.Equal(c.Status, 202)
	is.Equal(body(t, c)["status"], "cancelled") // before execution: at once

	e.clock.Advance(72*time.Hour + time.Second)
	e.bank.settle()
	e.drain(t)
	po, err = e.svc.GetPayoutIntent(ctx, e.test, expired)
	is.NoErr(err)
	is.Equal(po.Status, paykit.PayoutExpired)
	po, err = e.svc.GetPayoutIntent(ctx, e.test, approved)
	is.NoErr(err)
	is.Equal(po.Status, paykit.PayoutSucceeded)
	is.Equal(e.balance(t, "THB").Available, int64(4_000_000))
	is.Equal(e.balance(t, "THB").Reserved, int64(0))

	audit, err := e.svc.ListAuditEvents(ctx, paykit.AuditListParams{})
	is.NoErr(err)
	var actions []string
	for _, a := range audit.Data {
		actions = append(actions, a.Action+" "+a.Actor)
	}
	is.True(strings.Contains(strings.Join(actions, ","), "payout_intent.approve ops:alice"))
	is.True(strings.Contains(strings.Join(actions, ","), "payout_intent.reject ops:bob"))
}

func TestPayoutOutcomes(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	e := newPayoutEnv(t, 0)

	invalid, err := answertest.From(e.svc.CreatePayoutIntent(ctx, e.test, "inv", thPayout(1000, "r-inv", "000111111116")))
	is.NoErr(err)
	b := body(t, invalid)
	is.Equal(b["status"], "failed")
	is.Equal(b["failure_code"], "account_invalid")
	is.Equal(b["reserved_amount"], "0")

	timeout, err := answertest.From(e.svc.CreatePayoutIntent(ctx, e.test, "to", thPayout(2000, "r-to", "000222222227")))
	is.NoErr(err)
	b = body(t, timeout)
	is.Equal(b["status"], "processing") // uncertain: never failed by giving up
	id := b["id"].(string)
	e.bank.settle()
	e.clock.Advance(2 * time.Second)
	e.drain(t)
	po, err := e.svc.GetPayoutIntent(ctx, e.test, id)
	is.NoErr(err)
	is.Equal(po.Status, paykit.PayoutSucceeded)
	is.Equal(e.bank.calls(id), 1)

	// Returned funds after success.
	po, err = e.svc.SimulateReturn(ctx, e.test, id)
	is.NoErr(err)
	is.Equal(po.Status, paykit.PayoutFailed)
	is.Equal(po.FailureCode, paykit.FailureFundsReturned)
	is.Equal(po.ReturnedAmount, int64(2000))
	is.Equal(e.balance(t, "THB").Available, int64(5_000_000))
	_, err = e.svc.SimulateReturn(ctx, e.live, id)
	is.Equal(paykit.ErrorCode(err), paykit.CodeNotFound)
}

func TestUnacknowledgedDispatchIs503AndConverges(t *testing.T) {
	t.Parallel()
	for _, via := range []string{"retry", "worker"} {
		t.Run(via, func(t *testing.T) {
			is := is.New(t)
			ctx := context.Background()
			e := newPayoutEnv(t, 0)
			e.bank.dropFirst = true
			req := thPayout(3000, "r-503", "000333333335")
			_, err := answertest.From(e.svc.CreatePayoutIntent(ctx, e.test, "k503", req))
			is.Equal(paykit.ErrorCode(err), paykit.CodeDispatchUnavailable)
			list, err := e.svc.ListPayoutIntents(ctx, e.test, paykit.ListParams[paykit.PayoutStatus]{})
			is.NoErr(err)
			is.Equal(len(list.Data), 1) // stored, with its dispatch identity
			id := list.Data[0].ID
			if via == "worker" {
				e.clock.Advance(3 * time.Second)
				e.drain(t)
			}
			resp, err := answertest.From(e.svc.CreatePayoutIntent(ctx, e.test, "k503", req))
			is.NoErr(err)
			is.Equal(resp.Status, 201)
			is.Equal(body(t, resp)["id"], id)
			is.Equal(resp.Replayed, via == "worker")
			e.bank.mu.Lock()
			is.Equal(len(e.bank.transfers), 1) // one transfer at the Provider
			e.bank.mu.Unlock()
			is.Equal(e.bank.calls(id), 2) // the same key twice
			list, _ = e.svc.ListPayoutIntents(ctx, e.test, paykit.ListParams[paykit.PayoutStatus]{})
			is.Equal(len(list.Data), 1)
		})
	}
}

func TestCancelInFlightPayoutWaitsForTheProvider(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	e := newPayoutEnv(t, 0)
	resp, err := answertest.From(e.svc.CreatePayoutIntent(ctx, e.test, "slow", thPayout(4000, "r-slow", "000444444440")))
	is.NoErr(err)
	id := body(t, resp)["id"].(string)
	c, err := answertest.From(e.svc.CancelPayoutIntent(ctx, e.test, "c1", id, paykit.CancelPayoutIntentRequest{Reason: "wrong amount"}))
	is.NoErr(err)
	is.Equal(c.Status, 202)
	is.Equal(body(t, c)["status"], "processing") // in flight: stays until the Provider confirms
	e.drain(t)
	po, _ := e.svc.GetPayoutIntent(ctx, e.test, id)
	is.Equal(po.Status, paykit.PayoutProcessing)
	e.bank.settle() // the Provider confirms the cancellation
	e.clock.Advance(time.Minute)
	e.drain(t)
	po, _ = e.svc.GetPayoutIntent(ctx, e.test, id)
	is.Equal(po.Status, paykit.PayoutCancelled)
	is.Equal(po.CancelReason, "wrong amount")
	is.Equal(e.balance(t, "THB").Available, int64(5_000_000))
	_, err = answertest.From(e.svc.CancelPayoutIntent(ctx, e.test, "c2", id, paykit.CancelPayoutIntentRequest{}))
	is.Equal(paykit.ErrorCode(err), paykit.CodeInvalidState)
}

func TestConcurrentPayoutsNeverOverdraw(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	e := newPayoutEnv(t, 0)
	const n = 100
	var wg sync.WaitGroup
	codes := make([]string, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// 100 payouts of 70,000 against 5,000,000 THB: 71 fit.
			_, err := answertest.From(e.svc.CreatePayoutIntent(ctx, e.test, "k"+string(rune('A'+i%26))+strings.Repeat("x", i/26), thPayout(70000, "c-"+string(rune('A'+i%26))+strings.Repeat("x", i/26), "000123456789")))
			codes[i] = paykit.ErrorCode(err)
		}()
	}
	wg.Wait()
	ok, short := 0, 0
	for _, c := range codes {
		switch c {
		case "":
			ok++
		case paykit.CodeInsufficientBalance:
			short++
		default:
			t.Errorf("unexpected %q", c)
		}
	}
	is.Equal(ok, 71)
	is.Equal(short, 29)
	bal := e.balance(t, "THB")
	is.Equal(bal.Available, int64(5_000_000-71*70_000))
	is.Equal(bal.Reserved, int64(71*70_000))
}
