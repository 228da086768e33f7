package paykit

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"sync"
	"time"
)

// settlementLocks serializes, per Provider, the reads of its settlement
// batches in this process; the Store's lease keeps instances apart.
type settlementLocks struct {
	mu    sync.Mutex
	locks map[string]*sync.Mutex
}

func (l *settlementLocks) of(provider string) *sync.Mutex {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.locks == nil {
		l.locks = map[string]*sync.Mutex{}
	}
	m, ok := l.locks[provider]
	if !ok {
		m = &sync.Mutex{}
		l.locks[provider] = m
	}
	return m
}

// settlementPage is how many batches one read asks a Provider for.
const settlementPage = 100

// settlementCallTimeout bounds one read of a Provider's batches.
const settlementCallTimeout = 10 * time.Second

// settlementLease is how long an instance holds a Provider's reads.
const settlementLease = time.Minute

// jobSettlementRead reads the batches a Provider that reports settlement
// (CapSettlement) closed since the last run: due when a payment's funds
// are expected (its available_on), one pending per Provider.
const jobSettlementRead = "settlement.read"

// settlementReadJob is the job that reads provider's batches at the latest
// at at, in scope (the payment's that called for it).
func settlementReadJob(scope Scope, provider string, at time.Time) *Job {
	return &Job{Kind: jobSettlementRead, Scope: scope, TargetID: provider, RunAt: at, DedupKey: jobSettlementRead + ":" + provider}
}

// readSettlementsJob reads the job's Provider's new batches, under the
// Store's lease of that Provider's reads: while another instance holds
// it, the job waits.
func (s *Service) readSettlementsJob(ctx context.Context, j *Job) error {
	now := s.Now()
	until := now.Add(settlementLease)
	mine, err := s.store.TakeLease(ctx, Lease{Name: "paykit.settlement." + j.TargetID, Owner: s.workerID + ":" + j.ID + ":" + strconv.Itoa(j.Attempts), Now: now, Until: until})
	if err != nil {
		return err
	}
	if !mine {
		return notYetAt{until}
	}
	return s.readSettlements(ctx, j.TargetID)
}

// readSettlements reads the batches the named Provider closed after the
// batch of its last reconciliation run, oldest first, and reconciles each.
// A batch whose lines do not add up to its totals stops the read: it and
// every batch after it wait, and the error says why.
func (s *Service) readSettlements(ctx context.Context, name string) error {
	a, err := s.provider(ctx, name, CapSettlement)
	if err != nil {
		return err
	}
	mu := s.settleLocks.of(name)
	mu.Lock()
	defer mu.Unlock()
	for {
		after := ""
		last, err := s.store.LastReconciliationRun(ctx, name)
		switch {
		case err == nil:
			after = last.Batch
		case !errors.Is(err, ErrNotFound):
			return err
		}
		cctx, cancel := context.WithTimeout(ctx, settlementCallTimeout)
		batches, err := a.settlement.SettlementBatches(cctx, after, settlementPage)
		cancel()
		if err != nil {
			return err
		}
		for _, b := range batches {
			if err := s.reconcileBatch(ctx, name, b); err != nil {
				return err
			}
		}
		if len(batches) < settlementPage {
			return nil
		}
	}
}

// errBatchTotals: a batch's stated totals are not the sums of its lines.
var errBatchTotals = errors.New("settlement batch totals disagree with its lines")

// reconcileChunk is how many lines one transaction reconciles.
const reconcileChunk = 200

// reconcileBatch checks a Provider's batch against paykit's records, line
// by line, and records the run. A line is known by its Provider, type and
// reference: a line read before in the same batch is reconciled again to
// the same effect (a read that stopped half way), one seen in another
// batch, or twice in this one, is a duplicate_line break. A matched
// payment line settles the payment; a matched line resolves the
// missing_in_report break of its reference; any other line opens a break
// and its funds stay pending.
func (s *Service) reconcileBatch(ctx context.Context, provider string, b SettlementBatch) error {
	started := s.Now()
	if g, f, n := b.Totals(); g != b.Gross || f != b.Fee || n != b.Net {
		s.log.ErrorContext(ctx, "settlement batch refused: its totals disagree with its lines", "provider", provider, "batch", b.Reference,
			"gross", b.Gross, "fee", b.Fee, "net", b.Net, "lines_gross", g, "lines_fee", f, "lines_net", n)
		s.reconCounts.record("batch_refused")
		return fmt.Errorf("%w: %s batch %s states gross %d, fee %d, net %d; its %d lines sum to %d, %d, %d",
			errBatchTotals, provider, b.Reference, b.Gross, b.Fee, b.Net, len(b.Lines), g, f, n)
	}
	run := &ReconciliationRun{ID: s.newID("rr"), Provider: provider, Batch: b.Reference, Lines: len(b.Lines), StartedAt: started}
	seen := make(map[[2]string]bool, len(b.Lines))
	for i := 0; i < len(b.Lines); i += reconcileChunk {
		lines := b.Lines[i:min(i+reconcileChunk, len(b.Lines))]
		records := make([]SettledLine, len(lines))
		for j, l := range lines {
			records[j] = SettledLine{Provider: provider, Type: l.Type, Reference: l.Reference, Batch: b.Reference, CreatedAt: started}
		}
		holders, err := s.store.RecordSettledLines(ctx, records)
		if err != nil {
			return err
		}
		dup := make([]bool, len(lines))
		for j, l := range lines {
			k := [2]string{l.Type, l.Reference}
			dup[j] = holders[j].Batch != b.Reference || seen[k]
			seen[k] = true
		}
		var matched, breaks int
		err = s.inTx(ctx, func(tx Tx) error {
			matched, breaks = 0, 0
			for j, l := range lines {
				ok, err := s.reconcileLine(ctx, tx, provider, b.Reference, l, dup[j])
				if err != nil {
					return err
				}
				if ok {
					matched++
				} else {
					breaks++
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		run.Matched += matched
		run.Breaks += breaks
	}
	run.FinishedAt = s.Now()
	return s.store.CreateReconciliationRun(ctx, run)
}

// lineSide is what paykit recorded of the thing a line is about.
type lineSide struct {
	source   string
	scope    Scope
	expected *SettlementAmounts
	payment  *PaymentIntent // a payment line's payment, to settle
}

// reconcileLine checks one line in tx and applies what it calls for; it
// reports whether the line matched.
func (s *Service) reconcileLine(ctx context.Context, tx Tx, provider, batch string, l SettlementLine, dup bool) (bool, error) {
	side, err := s.lineSide(ctx, tx, provider, l)
	if err != nil {
		return false, err
	}
	reported := &SettlementAmounts{Amount: l.Amount, Fee: l.Fee, Currency: l.Currency}
	typ := BreakDuplicateLine
	if !dup {
		typ = judgeLine(side.expected, *reported)
	}
	now := s.Now()
	if typ == "" {
		s.reconCounts.record("matched")
		if side.payment != nil {
			if err := s.settlePayment(ctx, tx, side.payment, now); err != nil {
				return false, err
			}
		}
		missing, err := tx.FindOpenBreak(ctx, provider, BreakMissingInReport, l.Reference)
		switch {
		case err == nil:
			missing.Status, missing.Resolution, missing.ResolvedAt = BreakResolved, ResolveMatched, &now
			missing.Note = "The line came in batch " + batch + " and matched."
			return true, tx.UpdateReconciliationBreak(ctx, missing)
		case errors.Is(err, ErrNotFound):
			return true, nil
		default:
			return false, err
		}
	}
	s.reconCounts.record(string(typ))
	if _, err := tx.FindOpenBreak(ctx, provider, typ, l.Reference); err == nil {
		return false, nil // opened by an earlier read of this batch
	} else if !errors.Is(err, ErrNotFound) {
		return false, err
	}
	rb := &ReconciliationBreak{ID: s.newID("rb"), Type: typ, Status: BreakOpen, Provider: provider,
		MerchantID: side.scope.MerchantID, Environment: side.scope.Environment, Source: side.source,
		LineType: l.Type, Reference: l.Reference, Batch: batch, Expected: side.expected, Reported: reported, CreatedAt: now}
	return false, tx.CreateReconciliationBreak(ctx, rb)
}

// judgeLine is how a line reporting reported disagrees with what paykit
// expects of it: "" when it matches, unknown_to_paykit when paykit
// expects nothing (no record).
func judgeLine(expected *SettlementAmounts, reported SettlementAmounts) BreakType {
	switch {
	case expected == nil:
		return BreakUnknownToPaykit
	case expected.Currency != reported.Currency:
		return BreakCurrencyMismatch
	case expected.Amount != reported.Amount:
		return BreakAmountMismatch
	case expected.Fee != reported.Fee:
		return BreakFeeMismatch
	}
	return ""
}

// earlyBreak reports whether b is an open break of a line read while
// paykit's record of what it settles was not final yet: an
// amount_mismatch expecting nothing (a payment, refund or won dispute
// paykit had not learnt of yet), or unknown_to_paykit (a reference
// paykit did not know yet).
func earlyBreak(b *ReconciliationBreak) bool {
	if b.Status != BreakOpen || b.Reported == nil {
		return false
	}
	switch b.Type {
	case BreakUnknownToPaykit:
		return b.Expected == nil
	case BreakAmountMismatch:
		return b.Expected != nil && b.Expected.Amount == 0 && b.Expected.Fee == 0
	}
	return false
}

// rejudge judges the line of early break b again, in tx, against side,
// what paykit records of it now, as a read of the line now would: a match
// resolves the break (matched) and settles side's payment, if any; a
// disagreement paykit's record now explains becomes the break it is now.
// It reports whether the line matched.
func (s *Service) rejudge(ctx context.Context, tx Tx, b *ReconciliationBreak, side lineSide, now time.Time) (bool, error) {
	if side.expected == nil {
		return false, nil // still unknown to paykit
	}
	typ := judgeLine(side.expected, *b.Reported)
	if typ == b.Type && b.Expected != nil && *b.Expected == *side.expected {
		return false, nil // nothing learnt since
	}
	b.MerchantID, b.Environment, b.Source = side.scope.MerchantID, side.scope.Environment, side.source
	e := *side.expected
	b.Expected = &e
	if typ != "" {
		b.Type = typ
		return false, tx.UpdateReconciliationBreak(ctx, b)
	}
	b.Status, b.Resolution, b.ResolvedAt = BreakResolved, ResolveMatched, &now
	b.Note = "paykit learnt the outcome after the line came in batch " + b.Batch + "; it matched."
	s.reconCounts.record("matched")
	if err := tx.UpdateReconciliationBreak(ctx, b); err != nil {
		return false, err
	}
	if side.payment != nil {
		return true, s.settlePayment(ctx, tx, side.payment, now)
	}
	return true, nil
}

// judgeLate judges again, in tx, a settlement line of provider of
// lineType about ref that opened an early break (earlyBreak) before
// paykit's record of it (source, of scope) became final, as it is now
// with expected: see rejudge. payment, when set, is the record, whose
// funds a match settles. A break opened concurrently, unseen here, is
// judged again by the settlement sweep (rejudgeEarlyBreaks).
func (s *Service) judgeLate(ctx context.Context, tx Tx, provider, lineType, ref string, scope Scope, source string, expected SettlementAmounts, payment *PaymentIntent, now time.Time) error {
	if ref == "" {
		return nil
	}
	a, ok := s.providers[provider]
	if !ok || !a.caps.Has(CapSettlement) {
		return nil
	}
	for _, typ := range []BreakType{BreakAmountMismatch, BreakUnknownToPaykit} {
		b, err := tx.FindOpenBreak(ctx, provider, typ, ref)
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		if b.LineType != lineType || !earlyBreak(b) {
			continue // a disagreement with what paykit had recorded: the operator's
		}
		_, err = s.rejudge(ctx, tx, b, lineSide{source: source, scope: scope, expected: &expected, payment: payment}, now)
		return err
	}
	return nil
}

// rejudgeEarlyBreaks judges again each early break of provider
// (earlyBreak) against paykit's records now: a break whose line was read
// while a transaction that made its record final ran beside the read
// stays open, unseen by that transaction's judgeLate, until this pass.
func (s *Service) rejudgeEarlyBreaks(ctx context.Context, provider string, now time.Time) error {
	for _, typ := range []BreakType{BreakAmountMismatch, BreakUnknownToPaykit} {
		open, err := s.store.ListReconciliationBreaks(ctx, ListQuery[BreakListParams]{
			Filter: BreakListParams{Status: BreakOpen, Type: typ, Provider: provider}, Limit: 500})
		if err != nil {
			return err
		}
		for _, b := range open {
			if !earlyBreak(&b) {
				continue
			}
			err := s.inTx(ctx, func(tx Tx) error {
				cur, err := tx.GetReconciliationBreak(ctx, b.ID)
				if err != nil || !earlyBreak(cur) {
					return err
				}
				side, err := s.lineSide(ctx, tx, provider, SettlementLine{Type: cur.LineType, Reference: cur.Reference})
				if err != nil {
					return err
				}
				_, err = s.rejudge(ctx, tx, cur, side, now)
				return err
			})
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// lineSide finds, in tx, paykit's record of the line's payment, refund or
// dispute by the Provider's reference (the Stores' index of it); a side
// without expected amounts when there is none.
func (s *Service) lineSide(ctx context.Context, tx Tx, provider string, l SettlementLine) (lineSide, error) {
	switch l.Type {
	case "payment", "refund":
		o, err := tx.FindByProviderRef(ctx, provider, l.Reference)
		if errors.Is(err, ErrNotFound) {
			return lineSide{}, nil
		}
		if err != nil {
			return lineSide{}, err
		}
		side := lineSide{source: o.ID, scope: o.Scope}
		switch {
		case o.Object == "payment_intent" && l.Type == "payment":
			pi, err := tx.GetPaymentIntent(ctx, o.Scope, o.ID)
			if err != nil {
				return lineSide{}, err
			}
			side.expected = &SettlementAmounts{Currency: pi.Currency}
			if pi.Status == PaymentSucceeded {
				side.expected.Amount, side.expected.Fee, side.payment = pi.Amount, pi.Fee, pi
			}
		case o.Object == "refund" && l.Type == "refund":
			re, err := tx.GetRefund(ctx, o.Scope, o.ID)
			if err != nil {
				return lineSide{}, err
			}
			side.expected = &SettlementAmounts{Currency: re.Currency}
			if re.Status == RefundSucceeded {
				side.expected.Amount = -re.Amount
			}
		default:
			return lineSide{}, nil // another kind of attempt under that reference
		}
		return side, nil
	case "dispute", "dispute_reversal":
		d, err := tx.FindDisputeByProviderRef(ctx, provider, l.Reference)
		if errors.Is(err, ErrNotFound) {
			return lineSide{}, nil
		}
		if err != nil {
			return lineSide{}, err
		}
		side := lineSide{source: d.ID, scope: d.Scope(), expected: &SettlementAmounts{Amount: -d.Amount, Fee: d.Fee, Currency: d.Currency}}
		if l.Type == "dispute_reversal" {
			side.expected = &SettlementAmounts{Currency: d.Currency}
			if d.Status == DisputeWon {
				side.expected.Amount = d.Amount
			}
		}
		return side, nil
	}
	return lineSide{}, nil
}

// reconCounts counts the lines reconciled by result, and the batches
// refused, for the metrics.
type reconCounts struct {
	mu sync.Mutex
	n  map[string]int64
}

func (c *reconCounts) record(result string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]int64{}
	}
	c.n[result]++
}

// ReconciliationCounts returns how many settlement lines this Service
// reconciled by result ("matched" or a break type) and how many batches
// it refused ("batch_refused"), since it started.
func (s *Service) ReconciliationCounts() map[string]int64 {
	s.reconCounts.mu.Lock()
	defer s.reconCounts.mu.Unlock()
	return maps.Clone(s.reconCounts.n)
}

// SettleTestFunds is the settlement test helper: every sandbox Provider
// (CapSettlementSimulation) closes the caller's pending funds into
// settlement batches at once, and paykit reads them before it returns
// them: the funds of every line that matched are available. Live keys
// get not_found.
func (s *Service) SettleTestFunds(ctx context.Context, p Principal) ([]SettlementBatch, error) {
	if p.Environment != Test {
		return nil, notFound("test helper")
	}
	out := []SettlementBatch{}
	for _, name := range slices.Sorted(maps.Keys(s.providers)) {
		a := s.providers[name]
		if !a.caps.Has(CapSettlementSimulation | CapSettlement) {
			continue
		}
		batches, err := a.settleSim.SettleNow(ctx, p.MerchantID)
		if err != nil {
			return nil, internalError(err)
		}
		// Read every batch closed since the last run, these among them.
		if err := s.readSettlements(ctx, name); err != nil {
			return nil, asServiceError(err)
		}
		for _, b := range batches {
			if b.Merchant == p.MerchantID {
				out = append(out, b)
			}
		}
	}
	return out, nil
}

// settlementReadDefault is when a Provider's batches are read after a
// success whose Provider states no available date.
const settlementReadDefault = 24 * time.Hour

// expectSettlement schedules a read of provider's settlement batches a
// day after now, when the Provider reports settlement: a refund's or a
// dispute's line comes in a batch too.
func (s *Service) expectSettlement(ctx context.Context, tx Tx, scope Scope, provider string, now time.Time) error {
	a, ok := s.providers[provider]
	if !ok || !a.caps.Has(CapSettlement) {
		return nil
	}
	return s.enqueue(ctx, tx, settlementReadJob(scope, provider, now.Add(settlementReadDefault)))
}

// sweepEvery is how often the settlement sweep runs: a minute, or a tenth
// of the reconciliation SLA when that is shorter.
func (s *Service) sweepEvery() time.Duration { return min(time.Minute, s.reconcileSLA/10) }

// sweepDue reports whether this instance tries the settlement sweep this
// round, and claims it.
func (s *Service) sweepDue(now time.Time) bool {
	last := s.sweptAt.Load()
	if last != 0 && now.Sub(time.UnixMilli(last)) < s.sweepEvery() {
		return false
	}
	return s.sweptAt.CompareAndSwap(last, now.UnixMilli())
}

// sweepSettlements, when this instance takes its lease, opens the
// missing_in_report breaks past the SLA and schedules a read of the
// batches of each Provider that reports settlement while any of its
// payments or refunds waits for its line: a batch a Provider closes after
// the date it stated is read too.
func (s *Service) sweepSettlements(ctx context.Context, now time.Time) error {
	mine, err := s.store.TakeLease(ctx, Lease{Name: "paykit.settlement.sweep", Owner: s.workerID, Now: now, Until: now.Add(s.sweepEvery())})
	if err != nil || !mine {
		return err
	}
	if err := s.checkMissingSettlements(ctx, now); err != nil {
		return fmt.Errorf("check missing settlements: %w", err)
	}
	for _, name := range slices.Sorted(maps.Keys(s.providers)) {
		if !s.providers[name].caps.Has(CapSettlement) {
			continue
		}
		if err := s.rejudgeEarlyBreaks(ctx, name, now); err != nil {
			return fmt.Errorf("judge early breaks again: %w", err)
		}
		waiting, err := s.store.ListUnsettled(ctx, UnsettledQuery{Provider: name, Before: now, Limit: 1})
		if err != nil {
			return err
		}
		if len(waiting) == 0 {
			continue
		}
		err = s.inTx(ctx, func(tx Tx) error {
			return s.enqueueSoon(ctx, tx, settlementReadJob(waiting[0].Scope, name, now))
		})
		if err != nil {
			return err
		}
	}
	return nil
}
