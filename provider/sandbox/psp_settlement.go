package sandbox

import (
	"cmp"
	"context"
	"net/http"
	"slices"
	"time"
)

// Fees and settlement. The PSP keeps a fee from every SUCCESS payment and
// pays each merchant (paymentCreate.Merchant) the rest in settlement
// batches, one per merchant and currency and settlement interval: a line
// (a payment, a refund, a dispute or a dispute's reversal) that arose
// between two boundaries of the interval (multiples of it since the zero
// time; for 24h, midnight UTC) settles at the later one. Like the other
// asynchronous outcomes, batches close lazily from the PSP's clock:
// whenever batches are listed or settled now, every line whose boundary
// has passed is closed first.

// Magic payment amounts of settlement.
const (
	amountFeeMismatch = 921 // settles with a fee one minor unit above the one stated at success
	amountNeverSettle = 922 // never settled
)

// Settlement's constants.
const (
	// defaultSettlementInterval is PSPConfig.SettlementInterval's default.
	defaultSettlementInterval = 24 * time.Hour
	// disputeFee is what the PSP keeps of every dispute, won or lost.
	disputeFee = 1500
	// cardFee is what the PSP adds to the fee of a card payment.
	cardFee = 100
	// defaultBatchPage and maxBatchPage bound a page of batches.
	defaultBatchPage = 10
	maxBatchPage     = 100
)

// paymentFee is the PSP's fee for a SUCCESS payment of amount by ch: 2.9 %
// of the amount, rounded half up to a whole minor unit, plus cardFee for
// a card. (amount×29 + 500) / 1000 is computed per thousand, so that no
// amount overflows it.
func paymentFee(amount int64, ch channel) int64 {
	fee := amount/1000*29 + (amount%1000*29+500)/1000
	if ch.isCard() {
		fee += cardFee
	}
	return fee
}

// boundary is the first settlement boundary after t.
func boundary(t time.Time, interval time.Duration) time.Time {
	return t.Truncate(interval).Add(interval)
}

// closeLines closes into batches every open line whose boundary is at or
// before now and, with merchant, every other line of merchant that arose
// by now (those batches settle at now), and returns the batches it
// closed, in the order stored.
func (p *PSP) closeLines(ctx context.Context, now time.Time, merchant string) ([]*batchView, error) {
	// A line's boundary is at or before now exactly when it arose before
	// the last boundary.
	cutoff := now.Truncate(p.interval)
	var closed []*batchView
	err := p.st.settle(ctx, lineSelection{Before: cutoff, Merchant: merchant}, func(recs []settleable) ([]*batchView, error) {
		type group struct {
			merchant, ccy string
			at            time.Time
		}
		closed = nil
		groups := map[group]*batchView{}
		for _, rec := range recs {
			rec.settle(now)
			for _, l := range rec.openLines() {
				var at time.Time
				switch {
				case l.at.Before(cutoff):
					at = boundary(l.at, p.interval)
				case merchant != "" && rec.merchant() == merchant && !l.at.After(now):
					at = now
				default:
					continue
				}
				g := group{rec.merchant(), l.line.Ccy, at}
				b := groups[g]
				if b == nil || !b.add(l.line) {
					// A batch's totals fit in int64: a line that would
					// overflow them opens another batch.
					b = &batchView{ID: newID("stl"), Merchant: g.merchant, Ccy: g.ccy, SettledAt: at}
					groups[g] = b
					closed = append(closed, b)
					b.add(l.line)
				}
				l.settled(b.ID, at)
			}
		}
		slices.SortStableFunc(closed, func(a, b *batchView) int {
			return cmp.Or(a.SettledAt.Compare(b.SettledAt), cmp.Compare(a.Merchant, b.Merchant), cmp.Compare(a.Ccy, b.Ccy))
		})
		return closed, nil
	})
	if err != nil {
		return nil, err
	}
	p.closedNow(closed)
	return closed, nil
}

// add appends l to the batch with its totals, unless one of them would
// overflow; it reports whether it did.
func (b *batchView) add(l lineView) bool {
	gross, ok1 := addMinor(b.GrossMinor, l.AmountMinor)
	fee, ok2 := addMinor(b.FeeMinor, l.FeeMinor)
	net, ok3 := addMinor(b.NetMinor, l.AmountMinor-l.FeeMinor)
	if len(b.Lines) > 0 && !(ok1 && ok2 && ok3) {
		return false
	}
	b.Lines = append(b.Lines, l)
	b.GrossMinor, b.FeeMinor, b.NetMinor = gross, fee, net
	return true
}

// addMinor is a+b, and whether it did not overflow.
func addMinor(a, b int64) (int64, bool) {
	s := a + b
	return s, (b >= 0) == (s >= a)
}

// withTotals fills a batch's totals from its lines where none are stated:
// batches stored before the PSP stated totals.
func (b *batchView) withTotals() {
	if b.GrossMinor != 0 || b.FeeMinor != 0 || b.NetMinor != 0 {
		return
	}
	for _, l := range b.Lines {
		b.GrossMinor += l.AmountMinor
		b.FeeMinor += l.FeeMinor
		b.NetMinor += l.AmountMinor - l.FeeMinor
	}
}

// CorruptBatchTotal is a test hook: from now on this PSP's answers state
// the net of the batch id one minor unit above what its lines add up to,
// as a PSP whose report disagrees with itself. With id "", it corrupts
// the next batch this PSP closes. The batch as stored stays true
// (SettlementBatches); other PSPs on the same State are not affected.
func (p *PSP) CorruptBatchTotal(id string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if id == "" {
		p.corruptNext = true
		return
	}
	p.corrupt[id] = true
}

// stated is b as this PSP's answers state it (CorruptBatchTotal).
func (p *PSP) stated(b batchView) batchView {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.corrupt[b.ID] {
		b.NetMinor++
	}
	return b
}

// closedNow records the batches this PSP just closed, for a pending
// CorruptBatchTotal("").
func (p *PSP) closedNow(closed []*batchView) {
	if len(closed) == 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.corruptNext {
		p.corruptNext = false
		p.corrupt[closed[0].ID] = true
	}
}

// listSettlements serves GET /api/settlements?after=&limit=: the batches
// closed after the batch after, oldest first, at most limit of them
// (default 10, at most 100). A cursor that names no batch is 400.
func (p *PSP) listSettlements(ctx context.Context, c apiCall) answer {
	var q settlementQuery
	if err := c.body(&q); err != nil {
		return errAnswer(http.StatusBadRequest, errValidation, "Query: "+err.Error())
	}
	switch {
	case q.Limit == 0:
		q.Limit = defaultBatchPage
	case q.Limit < 0 || q.Limit > maxBatchPage:
		return errAnswer(http.StatusBadRequest, errValidation, "limit must be 1 to 100.")
	}
	if _, err := p.closeLines(ctx, p.now(), ""); err != nil {
		return stateError(err)
	}
	out := batchListView{Data: []batchView{}}
	found, err := p.st.batches(ctx, q.After, q.Limit+1, func(b *batchView) { out.Data = append(out.Data, p.stated(*b)) })
	switch {
	case err != nil:
		return stateError(err)
	case !found:
		return errAnswer(http.StatusBadRequest, errValidation, "after names no settlement batch.")
	}
	if len(out.Data) > q.Limit {
		out.Data, out.HasMore = out.Data[:q.Limit], true
	}
	return okAnswer(out)
}

// settleNow serves POST /api/merchants/{merchant}/settle: it closes the
// merchant's open lines at once (with every line due anyway) and answers
// the batches of that merchant it closed.
func (p *PSP) settleNow(ctx context.Context, c apiCall) answer {
	closed, err := p.closeLines(ctx, p.now(), c.key)
	if err != nil {
		return stateError(err)
	}
	out := batchListView{Data: []batchView{}}
	for _, b := range closed {
		if b.Merchant == c.key {
			out.Data = append(out.Data, p.stated(*b))
		}
	}
	return okAnswer(out)
}

// SettlementBatch is a settlement batch the PSP closed, as tests see it,
// with its true totals.
type SettlementBatch struct {
	ID                             string
	Merchant                       string
	Ccy                            string
	SettledAt                      time.Time
	Lines                          []SettlementLine
	GrossMinor, FeeMinor, NetMinor int64
}

// SettlementLine is one line of a SettlementBatch.
type SettlementLine struct {
	Type        string // PAYMENT, REFUND, DISPUTE or DISPUTE_REVERSAL
	Reference   string // the PSP's id of the payment, refund or dispute
	Key         string // the idempotency key of a payment or refund
	AmountMinor int64  // signed
	FeeMinor    int64
	Ccy         string
}

// SettlementBatches returns every batch the PSP (with every PSP sharing
// its state) closed, in the order closed, without closing any.
func (p *PSP) SettlementBatches() []SettlementBatch {
	out := []SettlementBatch{}
	after := ""
	for {
		n := 0
		found, err := p.st.batches(context.Background(), after, maxBatchPage, func(b *batchView) {
			sb := SettlementBatch{ID: b.ID, Merchant: b.Merchant, Ccy: b.Ccy, SettledAt: b.SettledAt,
				GrossMinor: b.GrossMinor, FeeMinor: b.FeeMinor, NetMinor: b.NetMinor}
			for _, l := range b.Lines {
				sb.Lines = append(sb.Lines, SettlementLine(l))
			}
			out = append(out, sb)
			after = b.ID
			n++
		})
		must(err)
		if !found || n < maxBatchPage {
			return out
		}
	}
}
