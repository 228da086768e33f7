package sim

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/provider/sandbox"
	"github.com/paykit/paykit/store/storetest"
)

// The PSP's states, as its test hooks report them.
const (
	pspSuccess  = "SUCCESS"
	pspFailed   = "FAILED"
	pspCanceled = "CANCELLED"
	pspExpired  = "EXPIRED"
	pspReversed = "REVERSED"
)

// recorder is a testing.TB that keeps what storetest.CheckLedger reports.
type recorder struct {
	testing.TB
	errs []string
}

func (r *recorder) Helper() {}

func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

// books is every resource of every merchant the simulation made, as the
// Store holds them now.
type books struct {
	payments  map[string]*paykit.PaymentIntent
	payouts   map[string]*paykit.PayoutIntent
	refunds   map[string]*paykit.Refund
	disputes  map[string]*paykit.Dispute
	checkouts map[string]*paykit.Checkout
	byPayment map[string][]*paykit.Refund
	disputed  map[string][]*paykit.Dispute
}

// readBooks reads every resource of the simulation's merchants.
func (w *world) readBooks() (*books, error) {
	st := w.store0()
	b := &books{payments: map[string]*paykit.PaymentIntent{}, payouts: map[string]*paykit.PayoutIntent{},
		refunds: map[string]*paykit.Refund{}, disputes: map[string]*paykit.Dispute{}, checkouts: map[string]*paykit.Checkout{},
		byPayment: map[string][]*paykit.Refund{}, disputed: map[string][]*paykit.Dispute{}}
	for _, m := range w.obs.merchants {
		scope := m.Principal.Scope
		pis, err := st.ListPaymentIntents(w.ctx, paykit.ListQuery[paykit.ListParams[paykit.PaymentStatus]]{Scope: scope})
		if err != nil {
			return nil, err
		}
		for i := range pis {
			b.payments[pis[i].ID] = &pis[i]
		}
		pos, err := st.ListPayoutIntents(w.ctx, paykit.PayoutQuery{ListQuery: paykit.ListQuery[paykit.ListParams[paykit.PayoutStatus]]{Scope: scope}})
		if err != nil {
			return nil, err
		}
		for i := range pos {
			b.payouts[pos[i].ID] = &pos[i]
		}
		res, err := st.ListRefunds(w.ctx, paykit.ListQuery[paykit.RefundListParams]{Scope: scope})
		if err != nil {
			return nil, err
		}
		for i := range res {
			b.refunds[res[i].ID] = &res[i]
			b.byPayment[res[i].PaymentIntentID] = append(b.byPayment[res[i].PaymentIntentID], &res[i])
		}
		ds, err := st.ListDisputes(w.ctx, paykit.ListQuery[paykit.DisputeListParams]{Scope: scope})
		if err != nil {
			return nil, err
		}
		for i := range ds {
			b.disputes[ds[i].ID] = &ds[i]
			b.disputed[ds[i].PaymentIntentID] = append(b.disputed[ds[i].PaymentIntentID], &ds[i])
		}
		cos, err := st.ListCheckouts(w.ctx, paykit.ListQuery[paykit.ListParams[paykit.CheckoutStatus]]{Scope: scope})
		if err != nil {
			return nil, err
		}
		for i := range cos {
			b.checkouts[cos[i].ID] = &cos[i]
		}
	}
	return b, nil
}

// checkStep checks the invariants that hold after every step.
func (w *world) checkStep() {
	if w.failure == nil {
		w.checkBooks(false)
	}
}

// checkBooks checks paykit's books (and, final, their agreement with the
// PSP's in both directions) and returns them; nil when they cannot be
// read.
func (w *world) checkBooks(final bool) *books {
	b, err := w.readBooks()
	if err != nil {
		w.fail("sim.read", "read the books: %v", err)
		return nil
	}
	// The ledger changes only in a transaction: it is checked again once
	// one committed.
	if n := w.commits.Load(); n != w.checked || final {
		w.checked = n
		for _, m := range w.obs.merchants {
			w.checkLedger(m.Principal.Scope)
		}
	}
	w.checkPayments(b)
	w.checkTerminal(b)
	w.checkPSP(b, final)
	return b
}

// checkLedger runs storetest.CheckLedger on scope (every ledger
// transaction sums to zero, balances equal their entries, balance
// transactions sum to the balance, projections agree with the entries)
// and checks that only disputes took the available balance below zero.
func (w *world) checkLedger(scope paykit.Scope) {
	r := &recorder{}
	storetest.CheckLedger(r, w.store0(), scope)
	for _, e := range r.errs {
		w.fail("ledger", "%s", e)
	}
	entries, err := w.store0().ListLedgerEntries(w.ctx, paykit.LedgerQuery{Scope: scope})
	if err != nil {
		w.fail("sim.read", "ledger entries: %v", err)
		return
	}
	avail, disputed := map[string]int64{}, map[string]int64{}
	for _, e := range entries {
		if e.Account != paykit.AccountAvailable {
			continue
		}
		avail[e.Currency] += e.Amount
		if e.Kind == "dispute.created" || e.Kind == "dispute.won" {
			disputed[e.Currency] += e.Amount
		}
	}
	for ccy, a := range avail {
		if a-disputed[ccy] < 0 {
			w.fail("ledger.overdraw", "the %s available balance of %s is %d; without its disputes (%d) it would be %d: something but a dispute took it below zero",
				ccy, scope.MerchantID, a, disputed[ccy], a-disputed[ccy])
		}
	}
}

// checkPayments checks each payment's refunded, pending and disputed
// amounts against its refunds and disputes: together never more than the
// payment.
func (w *world) checkPayments(b *books) {
	holds, err := w.disputeHolds()
	if err != nil {
		w.fail("sim.read", "dispute holds: %v", err)
		return
	}
	// What the merchants' reserved balances hold: the payouts' reserved
	// amounts and the refunds pending.
	reserved := map[string]int64{}
	for _, po := range sortedValues(b.payouts) {
		reserved[po.MerchantID+" "+po.Currency] += po.ReservedAmount
	}
	for _, re := range sortedValues(b.refunds) {
		if re.Status == paykit.RefundPending {
			reserved[re.MerchantID+" "+re.Currency] += re.Amount
		}
	}
	for _, m := range w.obs.merchants {
		for _, ccy := range []string{"MYR", "THB"} {
			bal, err := w.store0().GetBalance(w.ctx, m.Principal.Scope, ccy)
			if err != nil {
				w.fail("sim.read", "balance: %v", err)
				return
			}
			if want := reserved[m.ID+" "+ccy]; bal.Reserved != want {
				w.fail("ledger.reserved", "the %s reserved balance of %s is %d; its payouts in flight and pending refunds hold %d", ccy, m.ID, bal.Reserved, want)
			}
		}
	}
	for _, pi := range sortedValues(b.payments) {
		var refunded, pending, disputed int64
		open := 0
		for _, re := range b.byPayment[pi.ID] {
			switch re.Status {
			case paykit.RefundSucceeded:
				refunded += re.Amount
			case paykit.RefundPending:
				pending += re.Amount
			}
		}
		for _, d := range b.disputed[pi.ID] {
			if d.Status != paykit.DisputeWon {
				disputed += d.Amount
			}
			if !d.Status.Terminal() {
				open++
			}
		}
		if pi.RefundedAmount+pi.RefundPendingAmount+pi.DisputedAmount > pi.Amount {
			w.fail("refunds.within_payment", "payment %s of %d: refunded %d + pending %d + disputed %d exceed it",
				pi.ID, pi.Amount, pi.RefundedAmount, pi.RefundPendingAmount, pi.DisputedAmount)
		}
		if refunded+pending+disputed > pi.Amount {
			w.fail("refunds.within_payment", "payment %s of %d: its refunds (%d succeeded, %d pending) and disputes (%d) exceed it",
				pi.ID, pi.Amount, refunded, pending, disputed)
		}
		if pi.RefundedAmount != refunded || pi.RefundPendingAmount != pending {
			w.fail("refunds.amounts", "payment %s shows refunded %d, pending %d; its refunds say %d, %d",
				pi.ID, pi.RefundedAmount, pi.RefundPendingAmount, refunded, pending)
		}
		// A simulated dispute's hold may stand until its job gives it back.
		h := holds[pi.ID]
		if pi.DisputedAmount < disputed || pi.DisputedAmount > disputed+h.amount || pi.OpenDisputes < open || pi.OpenDisputes > open+h.count {
			w.fail("disputes.amounts", "payment %s shows disputed %d in %d open disputes; its disputes say %d, %d (and %d in %d holds may stand)",
				pi.ID, pi.DisputedAmount, pi.OpenDisputes, disputed, open, h.amount, h.count)
		}
	}
}

// held is what the holds of simulated disputes still pending hold on one
// payment.
type held struct {
	amount int64
	count  int
}

// disputeHolds returns, by payment, the holds of simulated disputes whose
// job is still pending: each may stand (or have been used by its
// dispute's callback).
func (w *world) disputeHolds() (map[string]held, error) {
	jobs, err := w.store0().Queue().ListJobs(w.ctx, paykit.ListQuery[paykit.JobListParams]{Filter: paykit.JobListParams{Kind: "dispute.hold"}, Limit: 100_000}, w.clock.Now())
	if err != nil {
		return nil, err
	}
	out := map[string]held{}
	for _, j := range jobs {
		if j.Status == paykit.JobCompleted {
			continue
		}
		var h struct {
			Payment string `json:"payment_intent"`
			Amount  int64  `json:"amount"`
		}
		if err := json.Unmarshal(j.Payload, &h); err != nil {
			return nil, err
		}
		cur := out[h.Payment]
		out[h.Payment] = held{cur.amount + h.Amount, cur.count + 1}
	}
	return out, nil
}

// checkTerminal checks that a terminal status never changes, but for a
// paid-out payout whose funds came back.
func (w *world) checkTerminal(b *books) {
	see := func(kind, id, status string, allowed func(from string) bool) {
		prev, ok := w.obs.status[id]
		w.obs.status[id] = status
		if !ok || prev == status {
			return
		}
		if prevTerminal(kind, prev) && !allowed(prev) {
			w.fail("status.terminal", "%s %s was %s, a terminal status, and is now %s", kind, id, prev, status)
		}
	}
	never := func(string) bool { return false }
	for _, pi := range sortedValues(b.payments) {
		see("payment_intent", pi.ID, string(pi.Status), never)
	}
	for _, po := range sortedValues(b.payouts) {
		see("payout_intent", po.ID, string(po.Status), func(from string) bool {
			return from == string(paykit.PayoutSucceeded) && po.Status == paykit.PayoutFailed && po.FailureCode == paykit.FailureFundsReturned
		})
	}
	for _, re := range sortedValues(b.refunds) {
		see("refund", re.ID, string(re.Status), never)
	}
	for _, d := range sortedValues(b.disputes) {
		see("dispute", d.ID, string(d.Status), never)
	}
	for _, c := range sortedValues(b.checkouts) {
		// A checkout whose payment succeeds is completed, whatever it
		// was: the money moved.
		see("checkout", c.ID, string(c.Status), func(string) bool {
			pi := b.payments[c.PaymentIntentID]
			return c.Status == paykit.CheckoutCompleted && pi != nil && pi.Status == paykit.PaymentSucceeded
		})
	}
}

// prevTerminal reports whether status of a resource of kind is terminal.
func prevTerminal(kind, status string) bool {
	switch kind {
	case "payment_intent":
		return paykit.PaymentStatus(status).Terminal()
	case "payout_intent":
		return paykit.PayoutStatus(status).Terminal()
	case "refund":
		return paykit.RefundStatus(status).Terminal()
	case "dispute":
		return paykit.DisputeStatus(status).Terminal()
	case "checkout":
		return status != string(paykit.CheckoutOpen)
	}
	return false
}

// checkPSP compares paykit's records with the PSP's: every attempt the
// PSP holds is one paykit made, under its key, for its amount; a final
// status in paykit is the PSP's too. At quiescence (final) every final
// state at the PSP must be paykit's as well.
func (w *world) checkPSP(b *books, final bool) {
	pays := map[string]sandbox.Payment{}
	for _, p := range w.psp.Payments() {
		pays[p.Key] = p
		pi, ok := b.payments[p.Key]
		switch {
		case !ok:
			w.fail("provider.one_attempt_per_key", "the PSP holds payment %s under key %q, which is no payment intent's", p.ID, p.Key)
			continue
		case p.AmountMinor != pi.Amount || p.Ccy != pi.Currency || p.Merchant != pi.MerchantID:
			w.fail("provider.one_attempt_per_key", "the PSP's payment %s (%d %s for %s) is not payment intent %s (%d %s for %s)",
				p.ID, p.AmountMinor, p.Ccy, p.Merchant, pi.ID, pi.Amount, pi.Currency, pi.MerchantID)
		case pi.ProviderRef != "" && pi.ProviderRef != p.ID:
			w.fail("provider.one_attempt_per_key", "payment intent %s names the PSP's %s; the PSP holds %s under its key", pi.ID, pi.ProviderRef, p.ID)
		}
		switch {
		case pi.Status == paykit.PaymentSucceeded && p.State != pspSuccess:
			w.fail("psp.agrees", "payment intent %s succeeded; the PSP's payment is %s", pi.ID, p.State)
		case pi.Status.Terminal() && pi.Status != paykit.PaymentSucceeded && !slices.Contains([]string{pspFailed, pspCanceled, pspExpired}, p.State):
			w.fail("psp.agrees", "payment intent %s is %s; the PSP's payment is %s", pi.ID, pi.Status, p.State)
		case pi.Status == paykit.PaymentSucceeded && pi.Fee != p.FeeMinor:
			w.fail("psp.agrees", "payment intent %s shows fee %d; the PSP's is %d", pi.ID, pi.Fee, p.FeeMinor)
		case final && p.State == pspSuccess && pi.Status != paykit.PaymentSucceeded:
			w.fail("psp.agrees", "the PSP's payment of %s succeeded; paykit says %s", pi.ID, pi.Status)
		}
	}
	for _, t := range w.psp.Transfers() {
		po, ok := b.payouts[t.Key]
		if !ok {
			w.fail("provider.one_attempt_per_key", "the PSP holds transfer %s under key %q, which is no payout intent's", t.ID, t.Key)
			continue
		}
		if t.AmountMinor != po.Amount || t.Ccy != po.Currency {
			w.fail("provider.one_attempt_per_key", "the PSP's transfer %s (%d %s) is not payout %s (%d %s)", t.ID, t.AmountMinor, t.Ccy, po.ID, po.Amount, po.Currency)
		}
		returned := po.Status == paykit.PayoutFailed && po.FailureCode == paykit.FailureFundsReturned
		switch {
		case po.Status == paykit.PayoutSucceeded && t.State != pspSuccess && t.State != pspReversed:
			w.fail("psp.agrees", "payout %s succeeded; the PSP's transfer is %s", po.ID, t.State)
		case returned && t.State != pspReversed:
			w.fail("psp.agrees", "payout %s came back; the PSP's transfer is %s", po.ID, t.State)
		case po.Status.Terminal() && po.Status != paykit.PayoutSucceeded && !returned && t.State != pspFailed && t.State != pspCanceled:
			w.fail("psp.agrees", "payout %s is %s (%s); the PSP's transfer is %s: money left for a payout paykit gave up", po.ID, po.Status, po.FailureCode, t.State)
		case final && t.State == pspSuccess && po.Status != paykit.PayoutSucceeded:
			w.fail("psp.agrees", "the PSP's transfer of payout %s succeeded; paykit says %s", po.ID, po.Status)
		case final && t.State == pspReversed && !returned:
			w.fail("psp.agrees", "the PSP's transfer of payout %s came back; paykit says %s", po.ID, po.Status)
		}
	}
	for _, r := range w.psp.Refunds() {
		re, ok := b.refunds[r.Key]
		if !ok {
			w.fail("provider.one_attempt_per_key", "the PSP holds refund %s under key %q, which is no refund's", r.ID, r.Key)
			continue
		}
		if r.AmountMinor != re.Amount || r.PaymentKey != re.PaymentIntentID {
			w.fail("provider.one_attempt_per_key", "the PSP's refund %s (%d of %s) is not refund %s (%d of %s)", r.ID, r.AmountMinor, r.PaymentKey, re.ID, re.Amount, re.PaymentIntentID)
		}
		switch {
		case re.Status == paykit.RefundSucceeded && r.State != pspSuccess:
			w.fail("psp.agrees", "refund %s succeeded; the PSP's refund is %s", re.ID, r.State)
		case re.Status == paykit.RefundFailed && r.State != pspFailed:
			w.fail("psp.agrees", "refund %s failed; the PSP's refund is %s", re.ID, r.State)
		case final && r.State == pspSuccess && re.Status != paykit.RefundSucceeded:
			w.fail("psp.agrees", "the PSP's refund %s succeeded; paykit says %s", re.ID, re.Status)
		}
	}
	if !final {
		return
	}
	for _, pi := range sortedValues(b.payments) {
		if _, ok := pays[pi.ID]; !ok && pi.Status == paykit.PaymentSucceeded {
			w.fail("psp.agrees", "payment intent %s succeeded; the PSP has no payment under its key", pi.ID)
		}
	}
	for _, d := range sortedValues(b.disputes) {
		pd, err := w.pspDirect.InquireDispute(w.ctx, d.ProviderRef)
		switch {
		case err != nil:
			w.fail("psp.agrees", "dispute %s: the PSP does not know %s: %v", d.ID, d.ProviderRef, err)
		case pd.Status != d.Status:
			w.fail("psp.agrees", "dispute %s is %s; the PSP's is %s", d.ID, d.Status, pd.Status)
		case pd.Amount != d.Amount || pd.Fee != d.Fee:
			w.fail("psp.agrees", "dispute %s is of %d (fee %d); the PSP's of %d (fee %d)", d.ID, d.Amount, d.Fee, pd.Amount, pd.Fee)
		}
	}
}

// sortedValues returns m's values ordered by key, so that checks report
// the same first failure in every run.
func sortedValues[T any](m map[string]*T) []*T {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := make([]*T, len(keys))
	for i, k := range keys {
		out[i] = m[k]
	}
	return out
}
