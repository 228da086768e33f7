package providertest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/paykit/paykit"
)

// settlement runs the settlement report checks, for adapters that declare
// paykit.CapSettlement.
func (s *suite) settlement(t *testing.T) {
	t.Run("PaymentsSettleAsPaid", s.settlementLines)
	t.Run("PagingWalksEveryBatchOnce", s.settlementPaging)
	t.Run("ReReadingChangesNothing", s.settlementReRead)
	t.Run("NoAnswerIsAnError", s.settlementNoAnswer)
}

func (s *suite) reporter() paykit.SettlementReporter { return s.prov.(paykit.SettlementReporter) }

// lineTypes are the settlement line types of paykit's vocabulary.
var lineTypes = []string{"payment", "refund", "dispute", "dispute_reversal"}

// settleNow has the Provider settle what it owes: Harness.Settle, or the
// adapter's paykit.SettlementSimulator for Payment.Merchant.
func (s *suite) settleNow(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	if s.h.Settle != nil {
		if err := s.h.Settle(ctx, s.prov); err != nil {
			t.Fatalf("Harness.Settle: %v", err)
		}
		return
	}
	if _, err := s.prov.(paykit.SettlementSimulator).SettleNow(ctx, s.h.Payment.Merchant); err != nil {
		t.Fatalf("settle now: %v", err)
	}
}

// pageSize is the limit of a full read: large enough that a suite's
// batches fit in a few pages.
const pageSize = 100

// allBatches reads every batch after after, limit at a time, following
// the cursor, and checks each page.
func (s *suite) allBatches(t *testing.T, after string, limit int) []paykit.SettlementBatch {
	t.Helper()
	ctx := context.Background()
	var out []paykit.SettlementBatch
	for range 10000 {
		page, err := s.reporter().SettlementBatches(ctx, after, limit)
		if err != nil {
			t.Fatalf("settlement batches after %q, limit %d: %v", after, limit, err)
		}
		if len(page) > limit {
			t.Fatalf("settlement batches after %q, limit %d: %d batches", after, limit, len(page))
		}
		if len(page) == 0 {
			return out
		}
		out = append(out, page...)
		after = page[len(page)-1].Reference
	}
	t.Fatal("settlement batches: the cursor never reaches the end")
	return nil
}

// checkBatches fails t unless batches are well formed: each named once,
// oldest first, in one currency, its lines in paykit's words and adding
// up to the totals the Provider states.
func checkBatches(t *testing.T, batches []paykit.SettlementBatch) {
	t.Helper()
	seen := map[string]bool{}
	for i, b := range batches {
		what := fmt.Sprintf("batch %d (%s)", i, b.Reference)
		switch {
		case b.Reference == "":
			t.Errorf("%s: no Reference", what)
		case seen[b.Reference]:
			t.Errorf("%s: reported twice", what)
		}
		seen[b.Reference] = true
		if b.Currency == "" || strings.ToUpper(b.Currency) != b.Currency {
			t.Errorf("%s: Currency %q is not an uppercase ISO code", what, b.Currency)
		}
		if b.SettledAt.Before(earliest) || b.SettledAt.After(latest) {
			t.Errorf("%s: SettledAt %s is no date the Provider means", what, b.SettledAt)
		}
		if i > 0 && b.SettledAt.Before(batches[i-1].SettledAt) {
			t.Errorf("%s: settled at %s, before the batch reported ahead of it (%s): want oldest first", what, b.SettledAt, batches[i-1].SettledAt)
		}
		if gross, fee, net := b.Totals(); gross != b.Gross || fee != b.Fee || net != b.Net {
			t.Errorf("%s: the Provider states gross %d, fee %d, net %d; its lines add up to %d, %d, %d", what, b.Gross, b.Fee, b.Net, gross, fee, net)
		}
		for j, l := range b.Lines {
			lw := fmt.Sprintf("%s line %d", what, j)
			if !slices.Contains(lineTypes, l.Type) {
				t.Errorf("%s: Type %q is not one of paykit's (local words belong nowhere here)", lw, l.Type)
			}
			if l.Reference == "" {
				t.Errorf("%s: no Reference", lw)
			}
			if l.Currency != b.Currency {
				t.Errorf("%s: Currency %q in a batch of %q", lw, l.Currency, b.Currency)
			}
			if l.Fee < 0 && l.Type == "payment" {
				t.Errorf("%s: a payment's Fee %d is never negative", lw, l.Fee)
			}
			if l.Type == "payment" && l.Amount <= 0 {
				t.Errorf("%s: a payment's Amount %d must be positive", lw, l.Amount)
			}
		}
	}
}

// sameBatches fails t unless got reports what want reported, line for line.
func sameBatches(t *testing.T, what string, got, want []paykit.SettlementBatch) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d batches (%v), first read %d (%v)", what, len(got), refs(got), len(want), refs(want))
		return
	}
	for i := range got {
		g, w := got[i], want[i]
		if g.Reference != w.Reference || g.Merchant != w.Merchant || g.Currency != w.Currency || !g.SettledAt.Equal(w.SettledAt) ||
			g.Gross != w.Gross || g.Fee != w.Fee || g.Net != w.Net || !slices.Equal(g.Lines, w.Lines) {
			t.Errorf("%s: batch %d is %+v, first read %+v", what, i, g, w)
		}
	}
}

func refs(batches []paykit.SettlementBatch) []string {
	out := make([]string, len(batches))
	for i, b := range batches {
		out[i] = b.Reference
	}
	return out
}

// settlementLines pays a payment of each amount, has the Provider settle,
// and checks every batch, and that each payment is settled by exactly one
// line naming it as the adapter did (Result.Reference), for its amount,
// with the fee its Result stated.
func (s *suite) settlementLines(t *testing.T) {
	type paid struct {
		req paykit.PaymentRequest
		r   paykit.Result
	}
	var payments []paid
	for _, amount := range s.amounts() {
		req, r := s.pay(t, "stl", amount)
		payments = append(payments, paid{req, r})
	}
	s.settleNow(t)
	batches := s.allBatches(t, "", pageSize)
	checkBatches(t, batches)
	for _, p := range payments {
		var found []paykit.SettlementLine
		for _, b := range batches {
			for _, l := range b.Lines {
				if l.Type == "payment" && l.Reference == p.r.Reference {
					found = append(found, l)
				}
			}
		}
		if len(found) != 1 {
			t.Errorf("payment %s (%s, %d %s): %d payment lines name it, want 1 (batches %v)", p.req.Key, p.r.Reference, p.req.Amount, p.req.Currency, len(found), refs(batches))
			continue
		}
		l := found[0]
		if l.Amount != p.req.Amount || l.Currency != p.req.Currency {
			t.Errorf("payment %s: settled %d %s, paid %d %s", p.req.Key, l.Amount, l.Currency, p.req.Amount, p.req.Currency)
		}
		if l.Fee != p.r.Fee {
			t.Errorf("payment %s: settled with fee %d, its Result stated %d", p.req.Key, l.Fee, p.r.Fee)
		}
		if l.Key != "" && l.Key != p.req.Key {
			t.Errorf("payment %s: the line's Key is %q", p.req.Key, l.Key)
		}
	}
}

// settlementPaging walks the batches one at a time: every batch once, in
// the order of a full read; after the last one, nothing.
func (s *suite) settlementPaging(t *testing.T) {
	ctx := context.Background()
	s.pay(t, "stlpg", s.amounts()[0])
	s.settleNow(t)
	all := s.allBatches(t, "", pageSize)
	if len(all) == 0 {
		t.Fatal("no batch after a payment settled")
	}
	sameBatches(t, "read one at a time", s.allBatches(t, "", 1), all)
	last := all[len(all)-1].Reference
	if more, err := s.reporter().SettlementBatches(ctx, last, pageSize); err != nil || len(more) != 0 {
		t.Errorf("after the last batch %s: %v (error %v), want none", last, refs(more), err)
	}
	if len(all) > 1 {
		mid := all[len(all)/2-1].Reference
		sameBatches(t, "read after "+mid, s.allBatches(t, mid, pageSize), all[len(all)/2:])
	}
}

// settlementReRead reads every batch twice, and again after the Provider
// settled once more: what was reported stays as it was.
func (s *suite) settlementReRead(t *testing.T) {
	s.pay(t, "stlrr", s.amounts()[0])
	s.settleNow(t)
	first := s.allBatches(t, "", pageSize)
	sameBatches(t, "read again", s.allBatches(t, "", pageSize), first)
	s.pay(t, "stlrr", s.amounts()[0])
	s.settleNow(t)
	again := s.allBatches(t, "", pageSize)
	checkBatches(t, again)
	if len(again) < len(first) {
		t.Fatalf("after settling again %d batches, before %d", len(again), len(first))
	}
	sameBatches(t, "read after settling again", again[:len(first)], first)
}

// settlementNoAnswer checks that a read without the Provider's answer is
// an error, never an empty or made-up list.
func (s *suite) settlementNoAnswer(t *testing.T) {
	ctx := context.Background()
	if got, err := s.refused.(paykit.SettlementReporter).SettlementBatches(ctx, "", pageSize); err == nil {
		t.Errorf("settlement batches, connection refused: %v, want an error", refs(got))
	}
	for _, ft := range []fault{holdAfter, dropAfter, status500, status503, foreign404, garbage200} {
		name := map[fault]string{holdAfter: "timeout", dropAfter: "dropped connection", status500: "500", status503: "503",
			foreign404: "a 404 not from the Provider", garbage200: "a 200 not from the Provider"}[ft]
		t.Run(strings.ReplaceAll(name, " ", "_"), func(t *testing.T) {
			s.breaking(ft, func() {
				if got, err := s.reporter().SettlementBatches(ctx, "", pageSize); err == nil {
					t.Errorf("settlement batches: %v, want an error", refs(got))
				}
			})
		})
	}
}
