package opn

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/internal/periods"
)

// Settlement: Opn names no grouping of the transactions its transfers pay
// out, so a batch is one period (a UTC day by default) of transactions
// becoming transferable. See doc.go.

// Defaults of Config's settlement fields.
const (
	DefaultSettlementHold   = 60 * 24 * time.Hour
	DefaultSettlementPeriod = 24 * time.Hour
	DefaultSettlementDelay  = time.Hour
)

// Settlement bounds.
const (
	defaultBatches = 10  // SettlementBatches' limit when not positive
	maxBatches     = 100 // and at most
	txnPage        = 100 // transactions per list request
)

// errSettlement is wrapped by the errors of SettlementBatches.
var errSettlement = errors.New("opn: no usable settlement report")

// ledgerTxn is the part of Opn's transaction object the report reads.
type ledgerTxn struct {
	Object         string      `json:"object"`
	ID             string      `json:"id"`
	Amount         json.Number `json:"amount"`
	Currency       string      `json:"currency"`
	Direction      string      `json:"direction"`
	Origin         string      `json:"origin"`
	TransferableAt string      `json:"transferable_at"`
	CreatedAt      string      `json:"created_at"`

	amount  int64     // Amount, signed by Direction: a debit is negative
	created time.Time // CreatedAt
	closes  time.Time // when the period it became transferable in closes
}

// read checks t and fills its signed amount, creation time and the close
// of its period (period long).
func (t *ledgerTxn) read(period time.Duration) error {
	amount, err := t.Amount.Int64()
	created, err1 := time.Parse(time.RFC3339, t.CreatedAt)
	transferable, err2 := created, error(nil) // none stated: at once
	if t.TransferableAt != "" {
		transferable, err2 = time.Parse(time.RFC3339, t.TransferableAt)
	}
	switch {
	case t.Object != "transaction" || t.ID == "":
		return fmt.Errorf("%w: a transaction without an id", errSettlement)
	case err != nil || amount < 0:
		return fmt.Errorf("%w: transaction %s: amount %q", errSettlement, t.ID, t.Amount)
	case err1 != nil || err2 != nil:
		return fmt.Errorf("%w: transaction %s: created_at %q, transferable_at %q", errSettlement, t.ID, t.CreatedAt, t.TransferableAt)
	case t.Currency == "":
		return fmt.Errorf("%w: transaction %s has no currency", errSettlement, t.ID)
	}
	switch t.Direction {
	case "credit":
		t.amount = amount
	case "debit":
		t.amount = -amount
	default:
		return fmt.Errorf("%w: transaction %s has direction %q", errSettlement, t.ID, t.Direction)
	}
	t.created = created.UTC()
	// Funds are transferable no earlier than they arrive.
	t.closes = periods.Closing(created, period)
	if transferable.After(created) {
		t.closes = periods.Closing(transferable, period)
	}
	return nil
}

// getJSON reads path (GET with q) into v, each request within the call
// timeout; anything but Opn's object of kind obj is an error.
func (p *Provider) getJSON(ctx context.Context, path string, q url.Values, obj string, v any) error {
	ctx, cancel := p.withTimeout(ctx)
	defer cancel()
	r := p.call(ctx, http.MethodGet, path, q, "")
	switch {
	case r.fault != nil:
		return fmt.Errorf("%w: %s", errSettlement, r.fault.Detail)
	case r.err != nil:
		return fmt.Errorf("%w: %s", errSettlement, r.errorDetail())
	}
	var head struct {
		Object string `json:"object"`
	}
	if decodeJSON(r.body, &head) != nil || head.Object != obj || decodeJSON(r.body, v) != nil {
		return fmt.Errorf("%w: GET %s: the answer is not a %s object", errSettlement, path, obj)
	}
	return nil
}

// SettlementBatches returns the periods (Config.SettlementPeriod, a UTC
// day by default) of transactions becoming transferable, a batch per
// period and currency, closed after the batch after ("" for the first),
// oldest first, at most limit (at most 100; 10 when not positive) of
// them, each with its lines: successful charges with their fees, refunds,
// disputes and won disputes' reversals. A period is reported
// Config.SettlementDelay (an hour by default) after it closed. An error
// means no trustworthy report came back.
func (p *Provider) SettlementBatches(ctx context.Context, after string, limit int) ([]paykit.SettlementBatch, error) {
	if limit <= 0 {
		limit = defaultBatches
	}
	limit = min(limit, maxBatches)
	var from *periods.Key
	if after != "" {
		k, ok := periods.Parse("opn", after)
		if !ok {
			return nil, fmt.Errorf("%w: %q names no settlement batch of this adapter", errSettlement, after)
		}
		from = &k
	}
	groups, err := p.transferablePeriods(ctx, from, limit)
	if err != nil {
		return nil, err
	}
	keys := make([]periods.Key, 0, len(groups))
	for k := range groups {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, periods.Key.Compare)
	keys = keys[:min(limit, len(keys))]
	out := make([]paykit.SettlementBatch, 0, len(keys))
	for _, k := range keys {
		b := paykit.SettlementBatch{Reference: k.Ref("opn"), Currency: k.Currency, SettledAt: k.Closes}
		for _, t := range groups[k] {
			l, err := p.txnLine(ctx, t, k.Currency)
			if err != nil {
				return nil, err
			}
			b.Lines = append(b.Lines, l)
			b.Gross, b.Fee, b.Net = b.Gross+l.Amount, b.Fee+l.Fee, b.Net+t.amount
		}
		out = append(out, b)
	}
	return out, nil
}

// transferablePeriods reads the account's transactions in the order made
// (GET /transactions, order chronological, from SettlementHold before the
// close of from) and groups those that bring lines by the reported period
// they became transferable in, after from. It stops once the first limit
// periods are complete: a transaction made at c becomes transferable no
// earlier, so the periods closing before c have all theirs.
func (p *Provider) transferablePeriods(ctx context.Context, from *periods.Key, limit int) (map[periods.Key][]ledgerTxn, error) {
	reported := p.now().UTC().Add(-p.delay) // periods closed by then are reported
	q := url.Values{"limit": {strconv.Itoa(txnPage)}, "order": {"chronological"}}
	if from != nil {
		q.Set("from", from.Closes.Add(-p.hold).Format(time.RFC3339))
	}
	groups := map[periods.Key][]ledgerTxn{}
	for offset := 0; ; {
		q.Set("offset", strconv.Itoa(offset))
		var l struct {
			Data  []ledgerTxn `json:"data"`
			Total int         `json:"total"`
		}
		if err := p.getJSON(ctx, "/transactions", q, "list", &l); err != nil {
			return nil, err
		}
		for i := range l.Data {
			t := &l.Data[i]
			if err := t.read(p.period); err != nil {
				return nil, err
			}
			k := periods.Key{Closes: t.closes, Currency: strings.ToUpper(t.Currency)}
			if t.closes.After(reported) || (from != nil && k.Compare(*from) <= 0) || !bringsLine(t.Origin) {
				continue
			}
			groups[k] = append(groups[k], *t)
		}
		offset += len(l.Data)
		if len(l.Data) == 0 || offset >= l.Total {
			return groups, nil
		}
		last := l.Data[len(l.Data)-1].created
		closes := make([]time.Time, 0, len(groups))
		for k := range groups {
			closes = append(closes, k.Closes)
		}
		slices.SortFunc(closes, time.Time.Compare)
		if len(closes) >= limit && closes[limit-1].Before(last) {
			return groups, nil
		}
	}
}

// bringsLine reports whether a transaction of origin is a settlement
// line: charges, refunds and disputes are; transfers (payouts out of the
// balance) and receipts (Opn's invoices) are not.
func bringsLine(origin string) bool {
	return !strings.HasPrefix(origin, "trsf_") && !strings.HasPrefix(origin, "rcpt_")
}

// txnLine maps a transaction of a batch in ccy to its line: a charge's
// credit is its payment, for the charge's amount with the fee it states;
// a refund's debit is the refund, named as the adapter's refunds are
// (chrg_…/rfnd_…); a dispute's debit is the dispute and its credit the
// reversal of a won dispute. Anything else is an error: the period
// cannot be accounted for.
func (p *Provider) txnLine(ctx context.Context, t ledgerTxn, ccy string) (paykit.SettlementLine, error) {
	l := paykit.SettlementLine{Reference: t.Origin, Amount: t.amount, Currency: ccy}
	switch {
	case strings.HasPrefix(t.Origin, "chrg_") && t.Direction == "credit":
		var c charge
		if err := p.getJSON(ctx, "/charges/"+url.PathEscape(t.Origin), nil, "charge", &c); err != nil {
			return l, err
		}
		amount, err := c.Amount.Int64()
		fee, vat, why := statedFee(c)
		switch {
		case err != nil || amount <= 0:
			return l, fmt.Errorf("%w: charge %s has no amount", errSettlement, c.ID)
		case why != "":
			return l, fmt.Errorf("%w: charge %s: %s", errSettlement, c.ID, why)
		case strings.ToUpper(c.Currency) != ccy:
			return l, fmt.Errorf("%w: charge %s in %s is settled in %s", errSettlement, c.ID, c.Currency, ccy)
		}
		l.Type, l.Key, l.Amount, l.Fee = "payment", c.Metadata["paykit_key"], amount, fee+vat
	case strings.HasPrefix(t.Origin, "rfnd_") && t.Direction == "debit":
		rf, err := p.refundByID(ctx, t.Origin)
		if err != nil {
			return l, err
		}
		l.Type, l.Key, l.Reference = "refund", rf.Metadata["paykit_key"], refundRef(rf.Charge, rf.ID)
	case strings.HasPrefix(t.Origin, "dspt_") && t.Direction == "debit":
		l.Type = "dispute"
	case strings.HasPrefix(t.Origin, "dspt_") && t.Direction == "credit":
		l.Type = "dispute_reversal"
	default:
		return l, fmt.Errorf("%w: transaction %s, a %s from %s, has no settlement line type", errSettlement, t.ID, t.Direction, t.Origin)
	}
	return l, nil
}

// refundByID finds the refund id through the Search API (Opn retrieves
// refunds only under their charge, which a transaction does not name).
func (p *Provider) refundByID(ctx context.Context, id string) (*refund, error) {
	var s struct {
		Data []refund `json:"data"`
	}
	q := url.Values{"scope": {"refund"}, "query": {id}}
	if err := p.getJSON(ctx, "/search", q, "search", &s); err != nil {
		return nil, err
	}
	for i := range s.Data {
		if rf := &s.Data[i]; rf.Object == "refund" && rf.ID == id && rf.Charge != "" {
			return rf, nil
		}
	}
	return nil, fmt.Errorf("%w: refund %s is not found by search (yet)", errSettlement, id)
}
