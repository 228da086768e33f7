package sim

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/paykit/paykit"
)

// Bounds of quiescence: a run whose work has not settled by then is
// stuck.
const (
	quiesceHorizon    = 60 * 24 * time.Hour
	quiesceIterations = 6000
	// maxQuietJump is the longest the clock moves between two rounds of
	// work: a deployment's worker runs every second, and its minutely
	// settlement sweep must get to run between the day's batches and the
	// reconciliation SLA.
	maxQuietJump = 3 * time.Hour
	// pspHorizon is how long quiescence lasts at least: past the PSP's
	// longest deadline (a dispute's evidence, seven days) and the
	// reconciliation SLA after it.
	pspHorizon = 8*24*time.Hour + 80*time.Hour
)

// quiesce heals every fault and lets the work settle: the clock moves
// from one due job to the next, callbacks flow, the workers drain, until
// nothing is left to do; then settlement runs its course (four days, past
// the reconciliation SLA) and the final checks run.
func (w *world) quiesce() {
	w.quiescing = true
	w.trace.logf("quiescence: faults healed")
	w.disarm()
	for _, ep := range w.obs.endpoints {
		if ep.Mode != FaultWebhookGone {
			ep.Mode = ""
		}
	}
	if len(w.live()) == 0 {
		if _, err := w.startInstance(); err != nil {
			w.fail("sim.setup", "start an instance: %v", err)
			return
		}
	}
	for _, po := range w.obs.unfinished {
		in := w.live()[0]
		got, err := in.svc.SimulateReturn(w.ctx, po.Merchant.Principal, po.ID)
		w.operatorAnswer(in, "return again", po.ID, got, err)
	}
	began := w.clock.Now()
	if !w.runUntilQuiet(began) {
		return
	}
	// The PSP's own deadlines pass (a dispute it opened while paykit's
	// request died is decided after seven days, and only then told),
	// the batches of the last days close and are read, and the
	// reconciliation SLA passes for what never settles.
	for w.clock.Now().Sub(began) < pspHorizon {
		w.clock.Advance(maxQuietJump)
		if !w.runUntilQuiet(began) {
			return
		}
	}
	w.finalChecks()
}

// runUntilQuiet runs the world until no work is due but the perpetual kind
// (the inquiries of disputes the bank never decides), and reports
// whether it got there.
func (w *world) runUntilQuiet(began time.Time) bool {
	for i := 0; ; i++ {
		live := w.live()
		in := live[i%len(live)]
		w.trace.logf("quiet @%s on %s", w.clock.Now().Format("01-02 15:04:05"), in.name)
		if w.sendCallbacks(in, "")+w.work(in) > 0 {
			w.checkStep() // something happened
		}
		if w.failure != nil {
			return false
		}
		next, pending, err := w.nextDue()
		if err != nil {
			w.fail("sim.read", "list jobs: %v", err)
			return false
		}
		now := w.clock.Now()
		if next.IsZero() && len(w.held) == 0 {
			return true
		}
		if i >= quiesceIterations || now.Sub(began) > quiesceHorizon {
			w.fail("quiescence.stuck", "the work never settled; pending jobs: %s", strings.Join(pending, ", "))
			return false
		}
		switch {
		case next.After(now.Add(maxQuietJump)):
			w.clock.Advance(maxQuietJump)
		case next.After(now):
			w.clock.Set(next)
		default:
			w.clock.Advance(time.Second)
		}
	}
}

// nextDue returns when the next pending job (but the perpetual kind) is
// due, zero when none is, and the pending jobs' kinds.
func (w *world) nextDue() (time.Time, []string, error) {
	now := w.clock.Now()
	jobs, err := w.store0().Queue().ListJobs(w.ctx, paykit.ListQuery[paykit.JobListParams]{Limit: 100_000}, now)
	if err != nil {
		return time.Time{}, nil, err
	}
	var next time.Time
	var kinds []string
	for _, j := range jobs {
		if j.Status == paykit.JobCompleted || j.Kind == "dispute.inquire" {
			continue
		}
		kinds = append(kinds, fmt.Sprintf("%s %s (%s, %d attempts, %s)", j.Kind, j.TargetID, j.Status, j.Attempts, j.LastError))
		at := j.RunAt
		if j.LeaseUntil != nil && j.LeaseUntil.After(at) {
			at = *j.LeaseUntil
		}
		if next.IsZero() || at.Before(next) {
			next = at
		}
	}
	slices.Sort(kinds)
	return next, kinds, nil
}

// finalChecks checks what must hold once the faults stopped and the work
// settled.
func (w *world) finalChecks() {
	b := w.checkBooks(true)
	if b == nil {
		return
	}
	w.checkEnded(b)
	w.checkWebhooks()
	w.checkReconciliation(b)
	w.checkMoney(b)
}

// checkEnded checks that every payment, payout, refund and checkout is
// final, and every dispute too but those under review whose evidence
// decides nothing (the bank never rules on them).
func (w *world) checkEnded(b *books) {
	for _, pi := range sortedValues(b.payments) {
		if !pi.Status.Terminal() {
			w.fail("quiescence.terminal", "payment intent %s is still %s (attempt %s)", pi.ID, pi.Status, pi.Attempt)
		}
	}
	for _, po := range sortedValues(b.payouts) {
		if !po.Status.Terminal() {
			w.fail("quiescence.terminal", "payout %s is still %s (attempt %s)", po.ID, po.Status, po.Attempt)
		}
	}
	for _, re := range sortedValues(b.refunds) {
		if !re.Status.Terminal() {
			w.fail("quiescence.terminal", "refund %s is still %s (attempt %s)", re.ID, re.Status, re.Attempt)
		}
	}
	for _, c := range sortedValues(b.checkouts) {
		if c.Status == paykit.CheckoutOpen {
			w.fail("quiescence.terminal", "checkout %s is still open", c.ID)
		}
	}
	for _, d := range sortedValues(b.disputes) {
		undecided := d.Status == paykit.DisputeUnderReview && d.Evidence == evidenceTexts[2]
		if !d.Status.Terminal() && !undecided {
			w.fail("quiescence.terminal", "dispute %s is still %s (evidence %q)", d.ID, d.Status, d.Evidence)
		}
	}
}

// checkWebhooks checks that every event reached every endpoint that is
// healthy now and was never disabled: at least once, after the endpoint
// was made.
func (w *world) checkWebhooks() {
	for _, ep := range w.obs.endpoints {
		got, err := w.store0().GetWebhookEndpoint(w.ctx, ep.ID)
		if err != nil {
			w.fail("sim.read", "endpoint %s: %v", ep.ID, err)
			continue
		}
		if ep.Mode != "" || got.Status != paykit.WebhookEnabled {
			continue
		}
		events, err := w.store0().ListEvents(w.ctx, paykit.ListQuery[paykit.EventListParams]{Scope: ep.Merchant.Principal.Scope})
		if err != nil {
			w.fail("sim.read", "events: %v", err)
			return
		}
		for _, e := range events {
			if !e.CreatedAt.After(ep.CreatedAt) || ep.Delivered[e.ID] {
				continue
			}
			w.fail("webhooks.delivered", "event %s (%s of %s, at %s) never reached healthy endpoint %s (%d attempts, failed before: %v)",
				e.ID, e.Type, e.ObjectID, e.CreatedAt.Format(time.RFC3339), ep.ID, ep.Attempts, ep.Failed)
			return
		}
	}
}

// checkReconciliation checks that every batch the PSP closed was read,
// that reconciliation opened exactly the breaks the PSP's settlement
// implies (a fee it settled other than it stated, a payment it never
// settles) and that every other succeeded payment was settled.
func (w *world) checkReconciliation(b *books) {
	batches := w.psp.SettlementBatches()
	for _, bt := range batches {
		var lines []string
		for _, l := range bt.Lines {
			lines = append(lines, fmt.Sprintf("%s %s %d/%d", l.Type, l.Reference, l.AmountMinor, l.FeeMinor))
		}
		w.trace.logf("  psp batch %s of %s at %s: %s", bt.ID, bt.Merchant, bt.SettledAt.Format("01-02 15:04"), strings.Join(lines, ", "))
	}
	runs, _ := w.store0().ListReconciliationRuns(w.ctx, paykit.ListQuery[paykit.RunListParams]{Limit: 100_000})
	for _, r := range runs {
		w.trace.logf("  run %s read %s at %s: %d lines, %d matched", r.ID, r.Batch, r.StartedAt.Format("01-02 15:04:05"), r.Lines, r.Matched)
	}
	if len(batches) > 0 {
		last, err := w.store0().LastReconciliationRun(w.ctx, "sandbox")
		if err != nil || last.Batch != batches[len(batches)-1].ID {
			w.fail("reconciliation.read", "the PSP closed %d batches, the last %s; paykit's last run read %v (%v)",
				len(batches), batches[len(batches)-1].ID, last, err)
		}
	}
	breaks, err := w.store0().ListReconciliationBreaks(w.ctx, paykit.ListQuery[paykit.BreakListParams]{Limit: 100_000})
	if err != nil {
		w.fail("sim.read", "breaks: %v", err)
		return
	}
	expected := map[string]paykit.BreakType{}
	for _, pi := range sortedValues(b.payments) {
		if pi.Status != paykit.PaymentSucceeded {
			continue
		}
		switch pi.Amount % 1000 {
		case 921:
			expected[pi.ProviderRef] = paykit.BreakFeeMismatch
		case 922:
			expected[pi.ProviderRef] = paykit.BreakMissingInReport
		}
	}
	found := map[string]bool{}
	for _, br := range breaks {
		if br.Status == paykit.BreakResolved && br.Resolution == paykit.ResolveMatched {
			continue // healed by a late line
		}
		if want, ok := expected[br.Reference]; ok && want == br.Type {
			found[br.Reference] = true
			continue
		}
		w.fail("reconciliation.breaks", "an unexpected %s %s break %s of %s %s (%s): expected %v, reported %v",
			br.Status, br.Type, br.ID, br.LineType, br.Reference, br.Source, br.Expected, br.Reported)
	}
	for ref, typ := range expected {
		if !found[ref] {
			w.fail("reconciliation.breaks", "no %s break of the PSP's payment %s", typ, ref)
		}
	}
	for _, bt := range batches {
		for _, l := range bt.Lines {
			if l.Type != "DISPUTE" {
				continue
			}
			if _, err := w.store0().FindDisputeByProviderRef(w.ctx, "sandbox", l.Reference); err != nil {
				w.fail("psp.agrees", "the PSP settled dispute %s; paykit does not know it: %v", l.Reference, err)
			}
		}
	}
	for _, pi := range sortedValues(b.payments) {
		if pi.Status == paykit.PaymentSucceeded && pi.SettledAt == nil && expected[pi.ProviderRef] == "" {
			w.fail("reconciliation.settled", "payment intent %s succeeded and was never settled", pi.ID)
		}
	}
}

// checkMoney checks, per merchant and currency, that the money paykit's
// ledger says came in and went out is the money that moved at the PSP.
func (w *world) checkMoney(b *books) {
	type sums struct{ in, fees, out, disputed int64 }
	psp := map[string]*sums{}
	at := func(scope paykit.Scope, ccy string) *sums {
		k := scope.MerchantID + " " + ccy
		if psp[k] == nil {
			psp[k] = &sums{}
		}
		return psp[k]
	}
	for _, p := range w.psp.Payments() {
		if pi, ok := b.payments[p.Key]; ok && p.State == pspSuccess {
			s := at(pi.Scope(), p.Ccy)
			s.in += p.AmountMinor
			s.fees += p.FeeMinor
		}
	}
	for _, r := range w.psp.Refunds() {
		if re, ok := b.refunds[r.Key]; ok && r.State == pspSuccess {
			at(re.Scope(), r.Ccy).in -= r.AmountMinor
		}
	}
	for _, t := range w.psp.Transfers() {
		if po, ok := b.payouts[t.Key]; ok && t.State == pspSuccess {
			at(po.Scope(), t.Ccy).out += t.AmountMinor
		}
	}
	for _, d := range sortedValues(b.disputes) {
		pd, err := w.pspDirect.InquireDispute(w.ctx, d.ProviderRef)
		if err != nil {
			continue // checkPSP reports it
		}
		s := at(d.Scope(), pd.Currency)
		s.fees += pd.Fee
		if pd.Status != paykit.DisputeWon {
			s.disputed += pd.Amount
		}
	}
	for _, m := range w.obs.merchants {
		entries, err := w.store0().ListLedgerEntries(w.ctx, paykit.LedgerQuery{Scope: m.Principal.Scope})
		if err != nil {
			w.fail("sim.read", "ledger: %v", err)
			return
		}
		got := map[string]*sums{}
		for _, e := range entries {
			s := got[e.Currency]
			if s == nil {
				s = &sums{}
				got[e.Currency] = s
			}
			switch e.Account {
			case paykit.AccountPayments:
				s.in -= e.Amount
			case paykit.AccountFees:
				s.fees += e.Amount
			case paykit.AccountPayouts:
				s.out += e.Amount
			case paykit.AccountDisputes:
				s.disputed += e.Amount
			}
		}
		for _, ccy := range []string{"MYR", "THB"} {
			want, have := at(m.Principal.Scope, ccy), got[ccy]
			if have == nil {
				have = &sums{}
			}
			if *want != *have {
				w.fail("money.conservation", "merchant %s %s: paykit's ledger says in %d, fees %d, paid out %d, disputed %d; the PSP moved %d, %d, %d, %d",
					m.ID, ccy, have.in, have.fees, have.out, have.disputed, want.in, want.fees, want.out, want.disputed)
			}
		}
	}
}
