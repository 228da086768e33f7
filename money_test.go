package paykit_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/keyring"
	"github.com/paykit/paykit/paykittest"
	"github.com/paykit/paykit/store/storetest"
)

// moneyProvider is fakeBank with a Provider's money: it keeps a fee of
// 2.9 % (half up) from every payment, settles in batches, and opens and
// decides disputes as a sandbox does: by the evidence text.
type moneyProvider struct {
	*fakeBank
	mu       sync.Mutex
	merchant map[string]string // payment key → merchant
	paid     []moneyLine       // succeeded payments not yet settled
	settled  map[string]bool   // by payment reference
	batches  []paykit.SettlementBatch
	disputes map[string]*paykit.ProviderDispute
	feeBump  int64 // added to the fee of the next settlement lines
}

type moneyLine struct {
	merchant string
	line     paykit.SettlementLine
}

func newMoneyProvider() *moneyProvider {
	return &moneyProvider{fakeBank: newFakeBank(), merchant: map[string]string{}, settled: map[string]bool{},
		disputes: map[string]*paykit.ProviderDispute{}}
}

func (m *moneyProvider) Capabilities() paykit.Capabilities {
	return m.fakeBank.Capabilities() | paykit.CapRefunds | paykit.CapSettlement | paykit.CapSettlementSimulation |
		paykit.CapDisputes | paykit.CapDisputeSimulation
}

func moneyFee(amount int64) int64 { return (amount*29 + 500) / 1000 }

func (m *moneyProvider) CreatePayment(ctx context.Context, req paykit.PaymentRequest) paykit.Result {
	m.mu.Lock()
	m.merchant[req.Key] = req.Merchant
	m.mu.Unlock()
	return m.withFee(req.Key, m.fakeBank.CreatePayment(ctx, req))
}

func (m *moneyProvider) InquirePayment(ctx context.Context, ref paykit.AttemptRef) paykit.Result {
	return m.withFee(ref.Key, m.fakeBank.InquirePayment(ctx, ref))
}

// withFee adds the fee to a success, and records the payment for
// settlement the first time.
func (m *moneyProvider) withFee(key string, r paykit.Result) paykit.Result {
	if r.Outcome != paykit.OutcomeSucceeded {
		return r
	}
	m.fakeBank.fakeProvider.mu.Lock()
	amount := m.fakeBank.fakeProvider.attempts[key].amount
	m.fakeBank.fakeProvider.mu.Unlock()
	r.Fee = moneyFee(amount)
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.settled[r.Reference] {
		m.settled[r.Reference] = false
		known := false
		for _, p := range m.paid {
			known = known || p.line.Reference == r.Reference
		}
		if !known {
			m.paid = append(m.paid, moneyLine{m.merchant[key], paykit.SettlementLine{Type: "payment", Reference: r.Reference, Key: key,
				Amount: amount, Fee: r.Fee, Currency: "MYR"}})
		}
	}
	return r
}

func (m *moneyProvider) CreateRefund(ctx context.Context, req paykit.RefundRequest) paykit.Result {
	return m.fakeProvider.CreateRefund(ctx, req)
}

func (m *moneyProvider) InquireRefund(ctx context.Context, ref paykit.AttemptRef) paykit.Result {
	return m.fakeProvider.InquireRefund(ctx, ref)
}

// closeBatches closes the unsettled payments of merchant ("" for all)
// into one batch and returns it.
func (m *moneyProvider) closeBatches(merchant string) []paykit.SettlementBatch {
	m.mu.Lock()
	defer m.mu.Unlock()
	by := map[string]*paykit.SettlementBatch{}
	var out []paykit.SettlementBatch
	rest := m.paid[:0:0]
	for _, p := range m.paid {
		if merchant != "" && p.merchant != merchant {
			rest = append(rest, p)
			continue
		}
		b, ok := by[p.merchant]
		if !ok {
			b = &paykit.SettlementBatch{Reference: fmt.Sprintf("batch_%d_%s", len(m.batches)+len(by), p.merchant), Merchant: p.merchant,
				Currency: "MYR", SettledAt: time.Date(2026, 6, 2, 0, 0, 0, 0, time.UTC)}
			by[p.merchant] = b
		}
		line := p.line
		line.Fee += m.feeBump
		b.Lines = append(b.Lines, line)
		m.settled[p.line.Reference] = true
	}
	m.paid = rest
	for _, merchant := range slices.Sorted(maps.Keys(by)) {
		b := by[merchant]
		b.Gross, b.Fee, b.Net = b.Totals()
		m.batches = append(m.batches, *b)
		out = append(out, *b)
	}
	return out
}

func (m *moneyProvider) SettleNow(_ context.Context, merchant string) ([]paykit.SettlementBatch, error) {
	return m.closeBatches(merchant), nil
}

func (m *moneyProvider) SettlementBatches(_ context.Context, after string, limit int) ([]paykit.SettlementBatch, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	i := 0
	if after != "" {
		for i < len(m.batches) && m.batches[i].Reference != after {
			i++
		}
		i++
	}
	end := min(len(m.batches), i+limit)
	if i >= end {
		return nil, nil
	}
	return append([]paykit.SettlementBatch(nil), m.batches[i:end]...), nil
}

func (m *moneyProvider) OpenDispute(_ context.Context, req paykit.DisputeOpening) (paykit.ProviderDispute, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	d := &paykit.ProviderDispute{Reference: fmt.Sprintf("fdp_%d", len(m.disputes)+1), PaymentKey: req.PaymentKey, PaymentRef: req.PaymentRef,
		Amount: req.Amount, Currency: "MYR", Fee: 1500, Reason: req.Reason, Status: paykit.DisputeNeedsResponse}
	m.disputes[d.Reference] = d
	return *d, nil
}

func (m *moneyProvider) dispute(ref string) (*paykit.ProviderDispute, error) {
	d, ok := m.disputes[ref]
	if !ok {
		return nil, fmt.Errorf("no dispute %s", ref)
	}
	return d, nil
}

func (m *moneyProvider) InquireDispute(_ context.Context, ref string) (paykit.ProviderDispute, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	d, err := m.dispute(ref)
	if err != nil {
		return paykit.ProviderDispute{}, err
	}
	return *d, nil
}

func (m *moneyProvider) SubmitDisputeEvidence(_ context.Context, ref, text string) (paykit.ProviderDispute, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	d, err := m.dispute(ref)
	if err != nil {
		return paykit.ProviderDispute{}, err
	}
	switch {
	case strings.Contains(text, "winning_evidence"):
		d.Status = paykit.DisputeWon
	case strings.Contains(text, "losing_evidence"):
		d.Status = paykit.DisputeLost
	default:
		d.Status = paykit.DisputeUnderReview
	}
	return *d, nil
}

func (m *moneyProvider) AcceptDispute(_ context.Context, ref string) (paykit.ProviderDispute, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	d, err := m.dispute(ref)
	if err != nil {
		return paykit.ProviderDispute{}, err
	}
	d.Status = paykit.DisputeLost
	return *d, nil
}

type moneyEnv struct {
	*payoutEnv
	money *moneyProvider
}

// newMoneyEnv is a Service on store whose one Provider is a
// moneyProvider; the ledger is checked after every step (check) and at
// the end.
func newMoneyEnv(t *testing.T, store paykit.Store) *moneyEnv {
	t.Helper()
	clock := paykit.NewManualClock(time.Date(2026, 6, 1, 8, 0, 0, 0, time.UTC))
	money := newMoneyProvider()
	keys, err := keyring.New("k1", map[string][]byte{"k1": []byte("0123456789abcdef0123456789abcdef")})
	if err != nil {
		t.Fatal(err)
	}
	routing := fakeRouting
	routing.Payouts = []paykit.PayoutRoute{{Environment: paykit.Test, Country: "MY", Currency: "MYR", Provider: "fake",
		Banks: []paykit.PayoutBank{{Code: "MAYBANK", ProviderCode: "MBB0228"}}}}
	svc, err := paykit.New(paykit.Config{
		Store: store, Now: clock.Now, Routing: routing, Providers: map[string]paykit.Provider{"fake": money},
		PublicURL: "https://pay.example", AccountKeys: keys, SigningKey: []byte("flow-test-signing-key-32-bytes!!"),
	})
	if err != nil {
		t.Fatal(err)
	}
	e := &moneyEnv{payoutEnv: &payoutEnv{flowEnv: &flowEnv{svc: svc, clock: clock, provider: money.fakeProvider, store: store,
		test: paykit.Principal{Scope: paykit.Scope{MerchantID: "mch_1", Environment: paykit.Test}},
		live: paykit.Principal{Scope: paykit.Scope{MerchantID: "mch_1", Environment: paykit.Live}},
	}, bank: money.fakeBank, store: store}, money: money}
	is.New(t).NoErr(store.CreateMerchant(context.Background(), &paykit.Merchant{ID: "mch_1", Name: "One", CreatedAt: clock.Now()}))
	t.Cleanup(func() { storetest.CheckLedger(t, store, e.test.Scope) })
	return e
}

// myr returns the MYR balance of the test scope: available, pending,
// reserved.
func (e *moneyEnv) myr(t *testing.T) [3]int64 {
	t.Helper()
	b, err := e.store.GetBalance(context.Background(), e.test.Scope, "MYR")
	if err != nil {
		t.Fatal(err)
	}
	storetest.CheckLedger(t, e.store, e.test.Scope)
	return [3]int64{b.Available, b.Pending, b.Reserved}
}

// txns lists the test scope's balance transactions of source, newest
// first.
func (e *moneyEnv) txns(t *testing.T, source string) []paykit.BalanceTransaction {
	t.Helper()
	page, err := e.svc.ListBalanceTransactions(context.Background(), e.test, paykit.BalanceTransactionListParams{Source: source})
	if err != nil {
		t.Fatal(err)
	}
	return page.Data
}

// TestMoneyAsTheProviderHoldsIt walks one merchant's money through every
// kind of movement on every Store, checking after each step that the
// balance is what the Provider holds and that the balance transactions
// sum to it (CheckLedger).
func TestMoneyAsTheProviderHoldsIt(t *testing.T) {
	t.Parallel()
	for _, kind := range paykittest.Stores {
		t.Run(string(kind), func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			ctx := context.Background()
			e := newMoneyEnv(t, paykittest.OpenStore(t, kind))

			// A payment of 10000 keeps a fee of 290: 9710 pending.
			pi := e.paid(t, 10000, "order-1")
			is.Equal(pi.Fee, int64(290))
			is.Equal(e.myr(t), [3]int64{0, 9710, 0})
			bts := e.txns(t, pi.ID)
			is.Equal(len(bts), 1)
			is.Equal(bts[0].Type, paykit.BalanceTxnPayment)
			is.Equal([3]int64{bts[0].Amount, bts[0].Fee, bts[0].Net}, [3]int64{10000, 290, 9710})
			is.Equal(bts[0].Status, paykit.BalanceTxnPending)
			is.True(strings.HasPrefix(bts[0].ID, "txn_"))

			// Pending funds pay for nothing: a refund and a payout are refused.
			_, _, err := e.svc.CreateRefund(ctx, e.test, "r0", refundOf(pi, "r0", 1000))
			is.Equal(paykit.ErrorCode(err), paykit.CodeInsufficientBalance)
			_, _, err = e.svc.CreatePayoutIntent(ctx, e.test, "po0", myPayout(1000, "po0"))
			is.Equal(paykit.ErrorCode(err), paykit.CodeInsufficientBalance)

			// Settlement makes them available; settling again changes nothing.
			batches, err := e.svc.SettleTestFunds(ctx, e.test)
			is.NoErr(err)
			is.Equal(len(batches), 1)
			is.Equal(len(batches[0].Lines), 1)
			is.Equal(e.myr(t), [3]int64{9710, 0, 0})
			bts = e.txns(t, pi.ID)
			is.Equal(bts[0].Status, paykit.BalanceTxnAvailable)
			is.True(bts[0].AvailableOn.Equal(e.clock.Now()))
			batches, err = e.svc.SettleTestFunds(ctx, e.test)
			is.NoErr(err)
			is.Equal(len(batches), 0)
			is.Equal(e.myr(t), [3]int64{9710, 0, 0})

			// A refund costs no fee and returns none: −2000.
			re, _, err := e.svc.CreateRefund(ctx, e.test, "r1", refundOf(pi, "r1", 2000))
			is.NoErr(err)
			is.Equal(e.myr(t), [3]int64{7710, 0, 2000})
			e.settle(t)
			re, err = e.svc.GetRefund(ctx, e.test, re.ID)
			is.NoErr(err)
			is.Equal(re.Status, paykit.RefundSucceeded)
			is.Equal(e.myr(t), [3]int64{7710, 0, 0})
			bts = e.txns(t, re.ID)
			is.Equal(len(bts), 1)
			is.Equal([4]any{bts[0].Type, bts[0].Amount, bts[0].Fee, bts[0].Net}, [4]any{paykit.BalanceTxnRefund, int64(-2000), int64(0), int64(-2000)})

			// A payout of 3000 succeeds and comes back.
			po, _, err := e.svc.CreatePayoutIntent(ctx, e.test, "po1", myPayout(3000, "po1"))
			is.NoErr(err)
			is.Equal(e.myr(t), [3]int64{4710, 0, 3000})
			e.bank.settle()
			e.settle(t)
			is.Equal(e.myr(t), [3]int64{4710, 0, 0})
			_, err = e.svc.SimulateReturn(ctx, e.test, po.ID)
			is.NoErr(err)
			is.Equal(e.myr(t), [3]int64{7710, 0, 0})
			bts = e.txns(t, po.ID)
			is.Equal(len(bts), 2)
			is.Equal([2]any{bts[0].Type, bts[0].Net}, [2]any{paykit.BalanceTxnPayoutReturn, int64(3000)})
			is.Equal([2]any{bts[1].Type, bts[1].Net}, [2]any{paykit.BalanceTxnPayout, int64(-3000)})

			// A dispute of the rest (8000) takes amount and fee: below zero.
			d, err := e.svc.SimulateDispute(ctx, e.test, pi.ID, paykit.SimulateDisputeRequest{})
			is.NoErr(err)
			is.Equal(d.Amount, int64(8000))
			is.Equal(d.Status, paykit.DisputeNeedsResponse)
			is.Equal(d.Reason, paykit.DisputeGeneral)
			is.True(d.EvidenceDueBy.Equal(e.clock.Now().Add(7 * 24 * time.Hour)))
			is.Equal(e.myr(t), [3]int64{7710 - 8000 - 1500, 0, 0})
			got, err := e.svc.GetPaymentIntent(ctx, e.test, pi.ID)
			is.NoErr(err)
			is.Equal(got.DisputedAmount, int64(8000))

			// While it is open: no refund (invalid_state), no payout
			// (insufficient_balance), no second dispute beyond the amount.
			_, _, err = e.svc.CreateRefund(ctx, e.test, "r2", refundOf(pi, "r2", 0))
			is.Equal(paykit.ErrorCode(err), paykit.CodeInvalidState)
			_, _, err = e.svc.CreatePayoutIntent(ctx, e.test, "po2", myPayout(100, "po2"))
			is.Equal(paykit.ErrorCode(err), paykit.CodeInsufficientBalance)
			_, err = e.svc.SimulateDispute(ctx, e.test, pi.ID, paykit.SimulateDisputeRequest{Amount: 1})
			is.Equal(paykit.ErrorCode(err), paykit.CodeAmountExceedsRefundable)

			// Won with evidence: the amount comes back, the fee stays kept.
			d, _, err = e.svc.SubmitDisputeEvidence(ctx, e.test, "ev1", d.ID, paykit.DisputeEvidenceRequest{Text: "winning_evidence: tracking 123", Submit: true})
			is.NoErr(err)
			is.Equal(d.Status, paykit.DisputeUnderReview)
			e.drain(t)
			d, err = e.svc.GetDispute(ctx, e.test, d.ID)
			is.NoErr(err)
			is.Equal(d.Status, paykit.DisputeWon)
			is.True(d.ClosedAt != nil)
			is.Equal(e.myr(t), [3]int64{7710 - 1500, 0, 0})
			bts = e.txns(t, d.ID)
			is.Equal(len(bts), 2)
			is.Equal([3]any{bts[0].Type, bts[0].Amount, bts[0].Net}, [3]any{paykit.BalanceTxnDisputeReversal, int64(8000), int64(8000)})
			is.Equal([4]any{bts[1].Type, bts[1].Amount, bts[1].Fee, bts[1].Net}, [4]any{paykit.BalanceTxnDispute, int64(-8000), int64(1500), int64(-9500)})
			got, err = e.svc.GetPaymentIntent(ctx, e.test, pi.ID)
			is.NoErr(err)
			is.Equal(got.DisputedAmount, int64(0))

			// A second dispute, lost by accepting it, leaves the balance below
			// zero; payouts wait until an adjustment covers it.
			d2, err := e.svc.SimulateDispute(ctx, e.test, pi.ID, paykit.SimulateDisputeRequest{Amount: 7000, Reason: paykit.DisputeFraudulent})
			is.NoErr(err)
			d2, _, err = e.svc.AcceptDispute(ctx, e.test, "acc1", d2.ID)
			is.NoErr(err)
			is.Equal(d2.Status, paykit.DisputeLost)
			_, _, err = e.svc.AcceptDispute(ctx, e.test, "acc2", d2.ID)
			is.Equal(paykit.ErrorCode(err), paykit.CodeInvalidState)
			e.drain(t)
			is.Equal(e.myr(t), [3]int64{6210 - 8500, 0, 0})
			got, err = e.svc.GetPaymentIntent(ctx, e.test, pi.ID)
			is.NoErr(err)
			is.Equal(got.DisputedAmount, int64(7000))
			_, _, err = e.svc.CreatePayoutIntent(ctx, e.test, "po3", myPayout(100, "po3"))
			is.Equal(paykit.ErrorCode(err), paykit.CodeInsufficientBalance)
			_, err = e.svc.AdjustBalance(ctx, "ops", "mch_1", paykit.BalanceAdjustmentRequest{Environment: paykit.Test, Currency: "MYR", Amount: 2390, Reason: "cover the dispute"})
			is.NoErr(err)
			is.Equal(e.myr(t), [3]int64{100, 0, 0})
			_, _, err = e.svc.CreatePayoutIntent(ctx, e.test, "po3", myPayout(100, "po3"))
			is.NoErr(err)
			is.Equal(e.myr(t), [3]int64{0, 0, 100})

			// Every movement is one balance transaction, newest first.
			page, err := e.svc.ListBalanceTransactions(ctx, e.test, paykit.BalanceTransactionListParams{})
			is.NoErr(err)
			var types []paykit.BalanceTransactionType
			for _, b := range page.Data {
				types = append(types, b.Type)
			}
			is.Equal(types, []paykit.BalanceTransactionType{paykit.BalanceTxnAdjustment, paykit.BalanceTxnDispute,
				paykit.BalanceTxnDisputeReversal, paykit.BalanceTxnDispute, paykit.BalanceTxnPayoutReturn, paykit.BalanceTxnPayout,
				paykit.BalanceTxnRefund, paykit.BalanceTxnPayment})
		})
	}
}

func myPayout(amount int64, ref string) paykit.CreatePayoutIntentRequest {
	return paykit.CreatePayoutIntentRequest{Amount: amount, Currency: "MYR", Country: "MY", MerchantReference: ref,
		Recipient: paykit.Recipient{Type: "bank_account", AccountNumber: "000123456789", BankCode: "MAYBANK", HolderName: "Aisyah"}}
}

// TestRefundsAndDisputeNeverExceedThePayment: two refunds and a dispute
// racing on one payment, on every Store: what is created never adds up to
// more than the payment, and a dispute that comes first refuses the
// refunds (invalid_state).
func TestRefundsAndDisputeNeverExceedThePayment(t *testing.T) {
	t.Parallel()
	for _, kind := range paykittest.Stores {
		t.Run(string(kind), func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			ctx := context.Background()
			e := newMoneyEnv(t, paykittest.OpenStore(t, kind))
			_, err := e.svc.AdjustBalance(ctx, "ops", "mch_1", paykit.BalanceAdjustmentRequest{Environment: paykit.Test, Currency: "MYR", Amount: 100_000, Reason: "float"})
			is.NoErr(err)
			for round := range 4 {
				pi := e.paid(t, 10000, fmt.Sprint("order-", round))
				var (
					wg       sync.WaitGroup
					mu       sync.Mutex
					refunded int64
					disputed int64
				)
				for i := range 2 {
					wg.Go(func() {
						ref := fmt.Sprintf("r-%d-%d", round, i)
						re, _, err := e.svc.CreateRefund(ctx, e.test, ref, refundOf(pi, ref, 4000))
						if err == nil {
							mu.Lock()
							refunded += re.Amount
							mu.Unlock()
							return
						}
						if c := paykit.ErrorCode(err); c != paykit.CodeInvalidState && c != paykit.CodeAmountExceedsRefundable {
							t.Errorf("refund %s: %v", ref, err)
						}
					})
				}
				wg.Go(func() {
					d, err := e.svc.SimulateDispute(ctx, e.test, pi.ID, paykit.SimulateDisputeRequest{Amount: 4000})
					if err != nil {
						if paykit.ErrorCode(err) != paykit.CodeAmountExceedsRefundable {
							t.Errorf("dispute: %v", err)
						}
						return
					}
					mu.Lock()
					disputed += d.Amount
					mu.Unlock()
				})
				wg.Wait()
				is.True(refunded+disputed <= pi.Amount)
				is.True(disputed > 0 || refunded == 8000) // the dispute only fails when both refunds came first
				got, err := e.svc.GetPaymentIntent(ctx, e.test, pi.ID)
				is.NoErr(err)
				is.Equal(got.RefundPendingAmount+got.RefundedAmount, refunded)
				is.Equal(got.DisputedAmount, disputed)
				e.myr(t) // the ledger and the balance transactions agree
			}
		})
	}
}

// TestDisputeBeforeThePaymentIsKnownPaid: a Provider's dispute about a
// payment paykit still waits on is refused (service_unavailable, so the
// Provider sends it again) and changes nothing; once the payment's success
// is known, the same callback opens the dispute.
func TestDisputeBeforeThePaymentIsKnownPaid(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	e := newMoneyEnv(t, paykittest.OpenStore(t, paykittest.Memory))
	pi, _, err := e.svc.CreatePaymentIntent(ctx, e.test, "pay-1", fpx(10000, "order-1"))
	is.NoErr(err)
	dispute := paykit.CallbackEvent{ID: "cb-dp-1", Kind: "dispute", Dispute: &paykit.ProviderDispute{
		Reference: "fdp_x", PaymentRef: "fake_" + pi.ID, Amount: 10000, Currency: "MYR", Fee: 1500,
		Reason: paykit.DisputeFraudulent, Status: paykit.DisputeNeedsResponse}}
	body, err := json.Marshal([]paykit.CallbackEvent{dispute})
	is.NoErr(err)
	post := func() error {
		return e.svc.HandleProviderCallback(ctx, "fake", httptest.NewRequest(http.MethodPost, "/providers/fake/callbacks", bytes.NewReader(body)))
	}
	err = post()
	is.Equal(paykit.ErrorCode(err), paykit.CodeServiceUnavailable)
	page, err := e.svc.ListDisputes(ctx, e.test, paykit.DisputeListParams{})
	is.NoErr(err)
	is.Equal(len(page.Data), 0)

	e.provider.approve(pi.ID)
	e.settle(t)
	is.NoErr(post())
	is.NoErr(post()) // again: one dispute
	page, err = e.svc.ListDisputes(ctx, e.test, paykit.DisputeListParams{})
	is.NoErr(err)
	is.Equal(len(page.Data), 1)
	is.Equal(page.Data[0].Reason, paykit.DisputeFraudulent)
	is.Equal(e.myr(t), [3]int64{-10000 - 1500, 10000 - 290, 0})
}

// take removes the pending settlement line of the payment with Provider
// reference ref and returns it.
func (m *moneyProvider) take(ref string) paykit.SettlementLine {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i, p := range m.paid {
		if p.line.Reference == ref {
			m.paid = append(m.paid[:i], m.paid[i+1:]...)
			m.settled[ref] = true
			return p.line
		}
	}
	panic("no pending line " + ref)
}

// closeBatch appends a batch of lines for mch_1, with the totals of its
// lines (plus skew on the stated gross), and returns it.
func (m *moneyProvider) closeBatch(ref string, skew int64, lines ...paykit.SettlementLine) paykit.SettlementBatch {
	m.mu.Lock()
	defer m.mu.Unlock()
	b := paykit.SettlementBatch{Reference: ref, Merchant: "mch_1", Currency: "MYR", SettledAt: time.Date(2026, 6, 2, 0, 0, 0, 0, time.UTC), Lines: lines}
	b.Gross, b.Fee, b.Net = b.Totals()
	b.Gross += skew
	m.batches = append(m.batches, b)
	return b
}

// dropLastBatch removes the newest batch (one the test no longer wants
// read).
func (m *moneyProvider) dropLastBatch() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.batches = m.batches[:len(m.batches)-1]
}

// TestReconciliationBreaks reads settlement batches on every Store: each
// kind of break, a batch whose totals disagree refused with nothing
// changed, a batch read again changing nothing, each resolution, the SLA's
// missing_in_report and the late line that resolves it.
func TestReconciliationBreaks(t *testing.T) {
	t.Parallel()
	for _, kind := range paykittest.Stores {
		t.Run(string(kind), func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			ctx := context.Background()
			e := newMoneyEnv(t, paykittest.OpenStore(t, kind))
			read := func() error { _, err := e.svc.SettleTestFunds(ctx, e.test); return err }
			breaks := func(status paykit.BreakStatus) map[paykit.BreakType][]paykit.ReconciliationBreak {
				t.Helper()
				page, err := e.svc.ListReconciliationBreaks(ctx, paykit.BreakListParams{Status: status, PageParams: paykit.PageParams{Limit: 100}})
				is.NoErr(err)
				out := map[paykit.BreakType][]paykit.ReconciliationBreak{}
				for _, b := range page.Data {
					out[b.Type] = append(out[b.Type], b)
				}
				return out
			}
			a, b, c, d := e.paid(t, 10000, "a"), e.paid(t, 20000, "b"), e.paid(t, 30000, "c"), e.paid(t, 40000, "d")
			la, lb, lc, ld := e.money.take(a.ProviderRef), e.money.take(b.ProviderRef), e.money.take(c.ProviderRef), e.money.take(d.ProviderRef)
			is.Equal(e.myr(t), [3]int64{0, 9710 + 19420 + 29130 + 38840, 0})

			// A batch whose stated totals are not its lines' sums is refused:
			// nothing changes, and it waits with every batch after it.
			e.money.closeBatch("batch_bad", 1, la)
			err := read()
			is.True(err != nil && strings.Contains(err.Error(), "totals"))
			is.Equal(e.myr(t), [3]int64{0, 9710 + 19420 + 29130 + 38840, 0})
			is.Equal(len(breaks("")), 0)
			runs, err := e.svc.ListReconciliationRuns(ctx, paykit.RunListParams{})
			is.NoErr(err)
			is.Equal(len(runs.Data), 0)
			e.money.dropLastBatch()

			fee, amount, currency := lb, lc, ld
			fee.Fee++
			amount.Amount--
			currency.Currency = "THB"
			unknown := paykit.SettlementLine{Type: "payment", Reference: "fake_pi_elsewhere", Amount: 500, Fee: 15, Currency: "MYR"}
			b1 := e.money.closeBatch("batch_1", 0, la, fee, amount, currency, unknown, la)
			is.NoErr(read())
			is.Equal(e.myr(t), [3]int64{9710, 19420 + 29130 + 38840, 0}) // only a matched
			open := breaks(paykit.BreakOpen)
			is.Equal(len(open[paykit.BreakFeeMismatch]), 1)
			is.Equal(len(open[paykit.BreakAmountMismatch]), 1)
			is.Equal(len(open[paykit.BreakCurrencyMismatch]), 1)
			is.Equal(len(open[paykit.BreakUnknownToPaykit]), 1)
			is.Equal(len(open[paykit.BreakDuplicateLine]), 1)
			fb := open[paykit.BreakFeeMismatch][0]
			is.Equal([3]any{fb.Source, fb.MerchantID, fb.Environment}, [3]any{b.ID, "mch_1", paykit.Test})
			is.Equal(*fb.Expected, paykit.SettlementAmounts{Amount: 20000, Fee: 580, Currency: "MYR"})
			is.Equal(*fb.Reported, paykit.SettlementAmounts{Amount: 20000, Fee: 581, Currency: "MYR"})
			ub := open[paykit.BreakUnknownToPaykit][0]
			is.Equal([3]any{ub.MerchantID, ub.Source, ub.Expected == nil}, [3]any{"", "", true})
			runs, err = e.svc.ListReconciliationRuns(ctx, paykit.RunListParams{})
			is.NoErr(err)
			is.Equal(len(runs.Data), 1)
			is.Equal([4]any{runs.Data[0].Batch, runs.Data[0].Lines, runs.Data[0].Matched, runs.Data[0].Breaks}, [4]any{"batch_1", 6, 1, 5})

			// The same batch again (the Provider lists it twice): nothing
			// changes but a run.
			e.money.closeBatch(b1.Reference, 0, b1.Lines...)
			is.NoErr(read())
			is.Equal(e.myr(t), [3]int64{9710, 19420 + 29130 + 38840, 0})
			again := breaks("")
			is.Equal(len(again[paykit.BreakFeeMismatch])+len(again[paykit.BreakAmountMismatch])+len(again[paykit.BreakCurrencyMismatch])+
				len(again[paykit.BreakUnknownToPaykit])+len(again[paykit.BreakDuplicateLine]), 5)
			// The line of a payment settled in another batch is a duplicate.
			e.money.closeBatch("batch_2", 0, la)
			is.NoErr(read())
			is.Equal(e.myr(t), [3]int64{9710, 19420 + 29130 + 38840, 0})

			// Resolutions: the Provider's fee (one more minor unit kept),
			// paykit's amount, paykit's currency; the unknown line moves no
			// money; a resolved break cannot be resolved again.
			resolve := func(b paykit.ReconciliationBreak, r paykit.BreakResolution) {
				t.Helper()
				got, err := e.svc.ResolveBreak(ctx, "ops", b.ID, paykit.ResolveBreakRequest{Resolution: r, Note: "checked with the PSP"})
				is.NoErr(err)
				is.Equal([3]any{got.Status, got.Resolution, got.ResolvedAt != nil}, [3]any{paykit.BreakResolved, r, true})
			}
			resolve(fb, paykit.ResolveAcceptProvider)
			is.Equal(e.myr(t), [3]int64{9710 + 19419, 29130 + 38840, 0})
			adj := e.txns(t, fb.ID)
			is.Equal(len(adj), 1)
			is.Equal([2]any{adj[0].Type, adj[0].Net}, [2]any{paykit.BalanceTxnAdjustment, int64(-1)})
			resolve(open[paykit.BreakAmountMismatch][0], paykit.ResolveAcceptPaykit)
			resolve(open[paykit.BreakCurrencyMismatch][0], paykit.ResolveAcceptPaykit)
			is.Equal(e.myr(t), [3]int64{9710 + 19419 + 29130 + 38840, 0, 0})
			resolve(ub, paykit.ResolveAcceptProvider)
			is.Equal(e.myr(t), [3]int64{9710 + 19419 + 29130 + 38840, 0, 0})
			_, err = e.svc.ResolveBreak(ctx, "ops", ub.ID, paykit.ResolveBreakRequest{Resolution: paykit.ResolveAcceptPaykit, Note: "again"})
			is.Equal(paykit.ErrorCode(err), paykit.CodeInvalidState)
			_, err = e.svc.ResolveBreak(ctx, "ops", fb.ID, paykit.ResolveBreakRequest{Resolution: "matched", Note: "x"})
			is.Equal(paykit.ErrorCode(err), paykit.CodeInvalidRequest)
			audit, err := e.svc.ListAuditEvents(ctx, paykit.AuditListParams{})
			is.NoErr(err)
			resolutions := 0
			for _, ev := range audit.Data {
				if ev.Action == "reconciliation_break.resolve" {
					resolutions++
				}
			}
			is.Equal(resolutions, 4)

			// A payment no batch names within the SLA is missing_in_report;
			// its line arriving later resolves it by itself.
			late := e.paid(t, 50000, "late")
			e.clock.Advance(72*time.Hour + time.Minute)
			e.drain(t)
			missing := breaks(paykit.BreakOpen)[paykit.BreakMissingInReport]
			is.Equal(len(missing), 1)
			is.Equal([2]any{missing[0].Source, *missing[0].Expected}, [2]any{late.ID, paykit.SettlementAmounts{Amount: 50000, Fee: 1450, Currency: "MYR"}})
			e.clock.Advance(time.Hour)
			e.drain(t) // checked again: no second break
			is.Equal(len(breaks("")[paykit.BreakMissingInReport]), 1)
			e.money.closeBatch("batch_late", 0, e.money.take(late.ProviderRef))
			is.NoErr(read())
			got, err := e.svc.GetReconciliationBreak(ctx, missing[0].ID)
			is.NoErr(err)
			is.Equal([2]any{got.Status, got.Resolution}, [2]any{paykit.BreakResolved, paykit.ResolveMatched})
			is.Equal(e.myr(t), [3]int64{9710 + 19419 + 29130 + 38840 + 48550, 0, 0})
		})
	}
}

// TestReconciliationResolutionsOfMissingAndDuplicate: accept_provider on
// a missing_in_report break takes the payment's whole net out of pending
// (the Provider never paid it) and the payment is not reported missing
// again; accept_paykit on a duplicate line moves nothing, accept_provider
// credits the line's net a second time; every Store.
func TestReconciliationResolutionsOfMissingAndDuplicate(t *testing.T) {
	t.Parallel()
	for _, kind := range paykittest.Stores {
		t.Run(string(kind), func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			ctx := context.Background()
			e := newMoneyEnv(t, paykittest.OpenStore(t, kind))
			resolve := func(typ paykit.BreakType, r paykit.BreakResolution) paykit.ReconciliationBreak {
				t.Helper()
				page, err := e.svc.ListReconciliationBreaks(ctx, paykit.BreakListParams{Status: paykit.BreakOpen, Type: typ})
				is.NoErr(err)
				is.Equal(len(page.Data), 1)
				b, err := e.svc.ResolveBreak(ctx, "ops", page.Data[0].ID, paykit.ResolveBreakRequest{Resolution: r, Note: "checked"})
				is.NoErr(err)
				return *b
			}
			lost := e.paid(t, 10000, "lost")
			e.money.take(lost.ProviderRef) // the Provider never settles it
			e.clock.Advance(72*time.Hour + time.Minute)
			e.drain(t)
			b := resolve(paykit.BreakMissingInReport, paykit.ResolveAcceptProvider)
			is.Equal(e.myr(t), [3]int64{0, 0, 0})
			adj := e.txns(t, b.ID)
			is.Equal(len(adj), 1)
			is.Equal([2]any{adj[0].Type, adj[0].Net}, [2]any{paykit.BalanceTxnAdjustment, int64(-9710)})
			e.clock.Advance(time.Hour)
			e.drain(t)
			page, err := e.svc.ListReconciliationBreaks(ctx, paykit.BreakListParams{Type: paykit.BreakMissingInReport})
			is.NoErr(err)
			is.Equal(len(page.Data), 1) // not reported again

			twice := e.paid(t, 20000, "twice")
			line := e.money.take(twice.ProviderRef)
			e.money.closeBatch("batch_a", 0, line)
			e.money.closeBatch("batch_b", 0, line)
			_, err = e.svc.SettleTestFunds(ctx, e.test)
			is.NoErr(err)
			is.Equal(e.myr(t), [3]int64{19420, 0, 0})
			resolve(paykit.BreakDuplicateLine, paykit.ResolveAcceptPaykit)
			is.Equal(e.myr(t), [3]int64{19420, 0, 0})
			e.money.closeBatch("batch_c", 0, line)
			_, err = e.svc.SettleTestFunds(ctx, e.test)
			is.NoErr(err)
			resolve(paykit.BreakDuplicateLine, paykit.ResolveAcceptProvider)
			is.Equal(e.myr(t), [3]int64{2 * 19420, 0, 0})
		})
	}
}
