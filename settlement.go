package paykit

import (
	"context"
	"errors"
	"maps"
	"slices"
	"sync"
	"time"
)

// settlementCursors remembers, per Provider, the last settlement batch
// this process read. Reading a batch again changes nothing, so a restart
// that reads from the first batch again costs time only.
type settlementCursors struct {
	mu    sync.Mutex
	after map[string]string
}

func (c *settlementCursors) get(provider string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.after[provider]
}

func (c *settlementCursors) set(provider, after string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.after == nil {
		c.after = map[string]string{}
	}
	c.after[provider] = after
}

// settlementPage is how many batches one read asks a Provider for.
const settlementPage = 100

// settlementCallTimeout bounds one read of a Provider's batches.
const settlementCallTimeout = 10 * time.Second

// jobSettlementRead reads the batches a Provider that reports settlement
// (CapSettlement) closed since the last read: due when a payment's funds
// are expected (its available_on), one pending per Provider.
const jobSettlementRead = "settlement.read"

// settlementReadJob is the job that reads provider's batches at the latest
// at at, in scope (the payment's that called for it).
func settlementReadJob(scope Scope, provider string, at time.Time) *Job {
	return &Job{Kind: jobSettlementRead, Scope: scope, TargetID: provider, RunAt: at, DedupKey: jobSettlementRead + ":" + provider}
}

// readSettlementsJob reads the job's Provider's new batches.
func (s *Service) readSettlementsJob(ctx context.Context, j *Job) error {
	return s.readSettlements(ctx, j.TargetID)
}

// readSettlements reads the batches the named Provider closed since this
// process last read them, and applies them.
func (s *Service) readSettlements(ctx context.Context, name string) error {
	a, err := s.provider(ctx, name, CapSettlement)
	if err != nil {
		return err
	}
	for {
		cctx, cancel := context.WithTimeout(ctx, settlementCallTimeout)
		batches, err := a.settlement.SettlementBatches(cctx, s.settlements.get(name), settlementPage)
		cancel()
		if err != nil {
			return err
		}
		for _, b := range batches {
			if err := s.applySettlement(ctx, name, b); err != nil {
				return err
			}
			s.settlements.set(name, b.Reference)
		}
		if len(batches) < settlementPage {
			return nil
		}
	}
}

// applySettlement settles the payments of a Provider's batch whose lines
// match paykit's records of them (amount, fee and currency); the funds of
// a line that does not match stay pending. Applying a batch again changes
// nothing.
func (s *Service) applySettlement(ctx context.Context, provider string, b SettlementBatch) error {
	now := s.Now()
	for _, line := range b.Lines {
		if line.Type != "payment" {
			continue
		}
		owner, err := s.store.FindByProviderRef(ctx, provider, line.Reference)
		if errors.Is(err, ErrNotFound) || (err == nil && owner.Object != "payment_intent") {
			s.log.WarnContext(ctx, "settlement line matches no payment", "provider", provider, "batch", b.Reference)
			continue
		}
		if err != nil {
			return err
		}
		err = s.inTx(ctx, func(tx Tx) error {
			pi, err := tx.GetPaymentIntent(ctx, owner.Scope, owner.ID)
			if err != nil {
				return err
			}
			if pi.Amount != line.Amount || pi.Fee != line.Fee || pi.Currency != line.Currency {
				s.log.WarnContext(ctx, "settlement line differs from the payment", "provider", provider, "batch", b.Reference, "payment_intent", pi.ID)
				return nil
			}
			return s.settlePayment(ctx, tx, pi, now)
		})
		if err != nil {
			return err
		}
	}
	return nil
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
		if !a.caps.Has(CapSettlementSimulation) {
			continue
		}
		batches, err := a.settleSim.SettleNow(ctx, p.MerchantID)
		if err != nil {
			return nil, internalError(err)
		}
		for _, b := range batches {
			if err := s.applySettlement(ctx, name, b); err != nil {
				return nil, asServiceError(err)
			}
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
