package httpadapter_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/paykittest"
)

// feeBank is a Provider that holds money as the contract's sandbox does:
// every CARD payment succeeds at once and the Provider keeps 2.9 % of it
// (half up) plus 100 minor units; it settles a merchant's payments in a
// batch when asked; a refund succeeds at once; a dispute costs 1500 minor
// units and is decided by the evidence text (winning_evidence is won,
// losing_evidence lost, anything else stays under review). As the
// contract's sandbox, a payment whose amount ends in 921 is settled with a
// fee one minor unit above the fee it succeeded with.
type feeBank struct {
	now      func() time.Time
	mu       sync.Mutex
	payments map[string]*feePayment // by attempt key
	disputes map[string]*paykit.ProviderDispute
	batches  []paykit.SettlementBatch
}

// feePayment is one succeeded payment attempt.
type feePayment struct {
	ref, merchant string
	amount, fee   int64
	currency      string
	batched       bool
}

func newFeeBank(now func() time.Time) *feeBank {
	return &feeBank{now: now, payments: map[string]*feePayment{}, disputes: map[string]*paykit.ProviderDispute{}}
}

// feeBankName is the Provider's name in the routing.
const feeBankName = "feebank"

// feeBankDisputeFee is what the Provider keeps of every dispute.
const feeBankDisputeFee = 1500

// cardFee is the Provider's fee for a CARD payment of amount.
func cardFee(amount int64) int64 { return (amount*29+500)/1000 + 100 }

func (f *feeBank) Capabilities() paykit.Capabilities {
	return paykit.CapPayments | paykit.CapCancel | paykit.CapRefunds | paykit.CapDisputes | paykit.CapDisputeSimulation |
		paykit.CapSettlement | paykit.CapSettlementSimulation
}

func (f *feeBank) CreatePayment(_ context.Context, req paykit.PaymentRequest) paykit.Result {
	f.mu.Lock()
	defer f.mu.Unlock()
	p, ok := f.payments[req.Key]
	if !ok {
		p = &feePayment{ref: "fb_pay_" + req.Key, merchant: req.Merchant, amount: req.Amount, fee: cardFee(req.Amount), currency: req.Currency}
		f.payments[req.Key] = p
	}
	return paykit.Result{Outcome: paykit.OutcomeSucceeded, Reference: p.ref, Fee: p.fee}
}

func (f *feeBank) InquirePayment(_ context.Context, ref paykit.AttemptRef) paykit.Result {
	f.mu.Lock()
	defer f.mu.Unlock()
	p, ok := f.payments[ref.Key]
	if !ok {
		return paykit.Result{Outcome: paykit.OutcomeNotFound}
	}
	return paykit.Result{Outcome: paykit.OutcomeSucceeded, Reference: p.ref, Fee: p.fee}
}

func (f *feeBank) CancelPayment(ctx context.Context, ref paykit.AttemptRef) paykit.Result {
	return f.InquirePayment(ctx, ref) // a payment that succeeded stays so
}

func (f *feeBank) ParseCallback(context.Context, *http.Request) ([]paykit.CallbackEvent, error) {
	return nil, errors.New("feebank: no callbacks")
}

func (f *feeBank) CreateRefund(_ context.Context, req paykit.RefundRequest) paykit.Result {
	return paykit.Result{Outcome: paykit.OutcomeSucceeded, Reference: "fb_re_" + req.Key}
}

func (f *feeBank) InquireRefund(_ context.Context, ref paykit.AttemptRef) paykit.Result {
	return paykit.Result{Outcome: paykit.OutcomeSucceeded, Reference: "fb_re_" + ref.Key}
}

// SettleNow closes merchant's unsettled payments into one batch per
// currency.
func (f *feeBank) SettleNow(_ context.Context, merchant string) ([]paykit.SettlementBatch, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	by := map[string]*paykit.SettlementBatch{}
	var currencies []string
	for key, p := range f.payments {
		if p.merchant != merchant || p.batched {
			continue
		}
		b, ok := by[p.currency]
		if !ok {
			b = &paykit.SettlementBatch{Reference: fmt.Sprintf("fb_batch_%d", len(f.batches)+len(by)+1), Merchant: merchant,
				Currency: p.currency, SettledAt: f.now()}
			by[p.currency] = b
			currencies = append(currencies, p.currency)
		}
		fee := p.fee
		if p.amount%1000 == 921 {
			fee++
		}
		b.Lines = append(b.Lines, paykit.SettlementLine{Type: "payment", Reference: p.ref, Key: key, Amount: p.amount, Fee: fee, Currency: p.currency})
		p.batched = true
	}
	out := []paykit.SettlementBatch{}
	for _, c := range currencies {
		by[c].Gross, by[c].Fee, by[c].Net = by[c].Totals()
		f.batches = append(f.batches, *by[c])
		out = append(out, *by[c])
	}
	return out, nil
}

// SettlementBatches reports the batches closed after the one named after.
func (f *feeBank) SettlementBatches(_ context.Context, after string, limit int) ([]paykit.SettlementBatch, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	i := 0
	if after != "" {
		for i < len(f.batches) && f.batches[i].Reference != after {
			i++
		}
		i++
	}
	if i >= len(f.batches) {
		return nil, nil
	}
	return append([]paykit.SettlementBatch(nil), f.batches[i:min(len(f.batches), i+limit)]...), nil
}

func (f *feeBank) OpenDispute(_ context.Context, req paykit.DisputeOpening) (paykit.ProviderDispute, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	p, ok := f.payments[req.PaymentKey]
	if !ok {
		return paykit.ProviderDispute{}, fmt.Errorf("feebank: no payment %s", req.PaymentKey)
	}
	d := &paykit.ProviderDispute{Reference: fmt.Sprintf("fb_dp_%d", len(f.disputes)+1), PaymentKey: req.PaymentKey, PaymentRef: p.ref,
		Amount: req.Amount, Currency: p.currency, Fee: feeBankDisputeFee, Reason: req.Reason, Status: paykit.DisputeNeedsResponse}
	f.disputes[d.Reference] = d
	return *d, nil
}

// dispute runs fn on the dispute ref and returns it as it is then.
func (f *feeBank) dispute(ref string, fn func(d *paykit.ProviderDispute)) (paykit.ProviderDispute, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	d, ok := f.disputes[ref]
	if !ok {
		return paykit.ProviderDispute{}, fmt.Errorf("feebank: no dispute %s", ref)
	}
	fn(d)
	return *d, nil
}

func (f *feeBank) InquireDispute(_ context.Context, ref string) (paykit.ProviderDispute, error) {
	return f.dispute(ref, func(*paykit.ProviderDispute) {})
}

func (f *feeBank) SubmitDisputeEvidence(_ context.Context, ref, text string) (paykit.ProviderDispute, error) {
	return f.dispute(ref, func(d *paykit.ProviderDispute) {
		switch {
		case strings.Contains(text, "winning_evidence"):
			d.Status = paykit.DisputeWon
		case strings.Contains(text, "losing_evidence"):
			d.Status = paykit.DisputeLost
		default:
			d.Status = paykit.DisputeUnderReview
		}
	})
}

func (f *feeBank) AcceptDispute(_ context.Context, ref string) (paykit.ProviderDispute, error) {
	return f.dispute(ref, func(d *paykit.ProviderDispute) { d.Status = paykit.DisputeLost })
}

// newMoneyDashEnv is a dashboard env whose Service routes MYR and THB CARD
// payments in test to a feeBank, on open's Store and a manual clock.
func newMoneyDashEnv(t *testing.T, open func(t *testing.T) paykit.Store) *dashEnv {
	t.Helper()
	clock := paykit.NewManualClock(paykittest.Start)
	var routes []paykit.PaymentRoute
	for _, cc := range [][2]string{{"MY", "MYR"}, {"TH", "THB"}} {
		routes = append(routes, paykit.PaymentRoute{Environment: paykit.Test, Method: "CARD", Country: cc[0], Currency: cc[1],
			Provider: feeBankName, NextAction: paykit.NextActionRedirectToURL, CustomerFields: []string{"name"}})
	}
	e := newPaykitEnv(t, open, envConfig{now: clock.Now, routing: paykit.Routing{Payments: routes},
		providers: map[string]paykit.Provider{feeBankName: newFeeBank(clock.Now)}}, false)
	e.clock = clock // the Service's; the sandbox PSP of the env is not used
	return mountDashboard(t, e)
}

// cardPayment creates a CARD payment of amount (minor units of currency)
// in p's scope; the feeBank makes it succeed at once.
func cardPayment(t *testing.T, e *dashEnv, p paykit.Principal, ref string, amount int64, currency string) *paykit.PaymentIntent {
	t.Helper()
	country := map[string]string{"MYR": "MY", "THB": "TH"}[currency]
	pi, _, err := e.svc.CreatePaymentIntent(e.ctx, p, ref, paykit.CreatePaymentIntentRequest{
		Amount: amount, Currency: currency, Country: country, MerchantReference: ref, PaymentMethod: "CARD",
		Customer: map[string]string{"name": "Aisyah"}})
	if err != nil {
		t.Fatal(err)
	}
	if pi.Status != paykit.PaymentSucceeded {
		t.Fatalf("payment %s is %s", pi.ID, pi.Status)
	}
	return pi
}
