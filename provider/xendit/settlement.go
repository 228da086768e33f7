package xendit

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/internal/periods"
)

// Settlement: Xendit states per transaction when its funds settle
// (estimated_settlement_time, settlement_status) but names no batches,
// so a batch is one period (a UTC day by default) of settlements, per
// currency. See doc.go.

// Settlement bounds.
const (
	defaultBatches = 10  // SettlementBatches' limit when not positive
	maxBatches     = 100 // and at most
	txnPage        = 50  // transactions per list request
)

// errSettlement is wrapped by the errors of SettlementBatches.
var errSettlement = errors.New("xendit: no usable settlement report")

// skipped are the transaction types that move the account's own money
// (payouts, withdrawals, top-ups, transfers, conversions, reserves): no
// settlement lines.
var skipped = []string{
	"DISBURSEMENT", "REMITTANCE_PAYOUT", "WITHDRAWAL", "TOPUP", "TRANSFER_IN", "TRANSFER_OUT",
	"CONVERSION", "FOREX_DEDUCTION", "FOREX_DEPOSIT", "RESERVES_HOLD", "RESERVES_RELEASE",
}

// entry is a transaction of a reported period, with its line and what it
// moved net.
type entry struct {
	line paykit.SettlementLine
	net  int64
}

// SettlementBatches returns the periods (Config.SettlementPeriod, a UTC
// day by default) of settlements, a batch per period and currency,
// closed after the batch after ("" for the first), oldest first, at most
// limit (at most 100; 10 when not positive) of them: payments settled in
// the period (by estimated_settlement_time, settlement_status SETTLED or
// EARLY_SETTLED), refunds and dispute debits and credits made in it. A
// period is reported Config.SettlementDelay after it closed, and only once
// every transaction in it is final and settled: a later one waits, and so
// do the periods after it. An error means no trustworthy report came
// back.
func (p *Provider) SettlementBatches(ctx context.Context, after string, limit int) ([]paykit.SettlementBatch, error) {
	if limit <= 0 {
		limit = defaultBatches
	}
	limit = min(limit, maxBatches)
	var from *periods.Key
	if after != "" {
		k, ok := periods.Parse("xendit", after)
		if !ok {
			return nil, fmt.Errorf("%w: %q names no settlement batch of this adapter", errSettlement, after)
		}
		from = &k
	}
	reported := p.now().UTC().Add(-p.delay)
	txns, err := p.transactions(ctx, from, reported)
	if err != nil {
		return nil, err
	}
	groups := map[periods.Key][]entry{}
	var cut time.Time // the first period not yet complete
	for _, t := range txns {
		e, at, final, err := p.entry(t)
		if err != nil {
			return nil, err
		}
		if at.IsZero() {
			continue // no line
		}
		k := periods.Key{Closes: periods.Closing(at, p.period), Currency: e.line.Currency}
		if k.Closes.After(reported) || (from != nil && !k.Closes.After(from.Closes)) {
			continue
		}
		if !final {
			if cut.IsZero() || k.Closes.Before(cut) {
				cut = k.Closes
			}
			continue
		}
		groups[k] = append(groups[k], e)
	}
	keys := make([]periods.Key, 0, len(groups))
	for k := range groups {
		if cut.IsZero() || k.Closes.Before(cut) {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, periods.Key.Compare)
	keys = keys[:min(limit, len(keys))]
	out := make([]paykit.SettlementBatch, 0, len(keys))
	for _, k := range keys {
		b := paykit.SettlementBatch{Reference: k.Ref("xendit"), Currency: k.Currency, SettledAt: k.Closes}
		es := groups[k]
		slices.SortFunc(es, func(a, b entry) int {
			return cmp.Or(strings.Compare(a.line.Type, b.line.Type), strings.Compare(a.line.Reference, b.line.Reference))
		})
		for _, e := range es {
			b.Lines = append(b.Lines, e.line)
			b.Gross, b.Fee, b.Net = b.Gross+e.line.Amount, b.Fee+e.line.Fee, b.Net+e.net
		}
		out = append(out, b)
	}
	return out, nil
}

// transactions lists the account's transactions made from
// SettlementHold before the close of from (all, without from) until
// until, every page (GET /transactions, created[gte], created[lte],
// after_id).
func (p *Provider) transactions(ctx context.Context, from *periods.Key, until time.Time) ([]transaction, error) {
	q := url.Values{"limit": {strconv.Itoa(txnPage)}, "created[lte]": {until.Format(time.RFC3339)}}
	if from != nil {
		q.Set("created[gte]", from.Closes.Add(-p.hold).Format(time.RFC3339))
	}
	var out []transaction
	seen := map[string]bool{}
	for range 100000 {
		cctx, cancel := p.withTimeout(ctx)
		body, end := p.get(cctx, "/transactions", q, false)
		cancel()
		if end != nil {
			return nil, fmt.Errorf("%w: %s", errSettlement, end.Detail)
		}
		var l struct {
			Data    []transaction `json:"data"`
			HasMore *bool         `json:"has_more"`
		}
		if err := json.Unmarshal(body, &l); err != nil || l.Data == nil || l.HasMore == nil {
			return nil, fmt.Errorf("%w: GET /transactions: the answer is not a transaction list", errSettlement)
		}
		for _, t := range l.Data {
			if t.ID == "" {
				return nil, fmt.Errorf("%w: a transaction without an id", errSettlement)
			}
			if !seen[t.ID] {
				seen[t.ID] = true
				out = append(out, t)
			}
		}
		if !*l.HasMore || len(l.Data) == 0 {
			return out, nil
		}
		q.Set("after_id", l.Data[len(l.Data)-1].ID)
	}
	return nil, fmt.Errorf("%w: GET /transactions never ends", errSettlement)
}

// entry maps a transaction to its settlement line, the time its period is
// reckoned by (zero: it brings no line) and whether it is final: a
// payment line settles by estimated_settlement_time and is final once
// SETTLED or EARLY_SETTLED; a refund or dispute line moves money when
// made (created) and is final once SUCCESS. FAILED and VOIDED
// transactions bring no line, nor do REVERSED ones. A transaction of a
// type the adapter does not know is an error: the period cannot be
// accounted for.
func (p *Provider) entry(t transaction) (entry, time.Time, bool, error) {
	if slices.Contains(skipped, t.Type) {
		return entry{}, time.Time{}, false, nil
	}
	ccy := strings.ToUpper(t.Currency)
	e := entry{line: paykit.SettlementLine{Reference: t.ProductID, Key: t.ReferenceID, Currency: ccy}}
	in := t.Cashflow == "MONEY_IN"
	switch {
	case t.Type == "PAYMENT" && in:
		e.line.Type = "payment"
		if t.ProductData == nil || t.ProductData.PaymentRequestID == "" {
			return e, time.Time{}, false, fmt.Errorf("%w: payment transaction %s names no payment request", errSettlement, t.ID)
		}
		e.line.Reference = t.ProductData.PaymentRequestID
	case t.Type == "REFUND" && !in:
		e.line.Type = "refund"
	case t.Type == "CHARGEBACK" && !in:
		e.line.Type = "dispute"
	case t.Type == "CHARGEBACK" && in:
		e.line.Type = "dispute_reversal"
	default:
		return e, time.Time{}, false, fmt.Errorf("%w: transaction %s, a %s %s, has no settlement line type", errSettlement, t.ID, t.Cashflow, t.Type)
	}
	switch t.Status {
	case "FAILED", "VOIDED", "REVERSED":
		return e, time.Time{}, false, nil
	}
	if e.line.Reference == "" {
		return e, time.Time{}, false, fmt.Errorf("%w: transaction %s names no product", errSettlement, t.ID)
	}
	amt, err := t.Amount.minor(ccy)
	if err != nil || amt <= 0 {
		return e, time.Time{}, false, fmt.Errorf("%w: transaction %s: amount %q %s: %v", errSettlement, t.ID, t.Amount, ccy, err)
	}
	fee, why := t.fee()
	final := t.Status == "SUCCESS" && why == ""
	at, err := time.Parse(time.RFC3339, t.Created)
	if err != nil {
		return e, time.Time{}, false, fmt.Errorf("%w: transaction %s: created %q", errSettlement, t.ID, t.Created)
	}
	if !in {
		e.line.Amount, e.line.Fee, e.net = -amt, fee, -amt-fee
		return e, at.UTC(), final, nil
	}
	e.line.Amount, e.line.Fee = amt, fee
	if settles := t.settlesAt(); !settles.IsZero() {
		at = settles
	} else if t.Type == "PAYMENT" {
		return e, time.Time{}, false, fmt.Errorf("%w: payment transaction %s states no estimated_settlement_time", errSettlement, t.ID)
	}
	settled := t.SettlementStatus != nil && (*t.SettlementStatus == "SETTLED" || *t.SettlementStatus == "EARLY_SETTLED")
	final = final && (settled || t.Type != "PAYMENT")
	if !final {
		return e, at.UTC(), false, nil
	}
	net, err := t.NetAmount.minor(ccy)
	if err != nil || !strings.EqualFold(cmp.Or(t.NetAmountCurrency, t.Currency), ccy) {
		return e, time.Time{}, false, fmt.Errorf("%w: transaction %s: net_amount %q %s", errSettlement, t.ID, t.NetAmount, t.NetAmountCurrency)
	}
	e.net = net
	return e, at.UTC(), true, nil
}
