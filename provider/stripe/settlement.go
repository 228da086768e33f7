package stripe

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
)

// Settlement: a batch is one automatic payout that Stripe paid and whose
// reconciliation it completed; its lines are the balance transactions the
// payout paid out. See doc.go.

// payout is the part of Stripe's Payout object the adapter reads.
type payout struct {
	ID                   string `json:"id"`
	Object               string `json:"object"`
	Amount               int64  `json:"amount"`
	Currency             string `json:"currency"`
	ArrivalDate          int64  `json:"arrival_date"`
	Automatic            bool   `json:"automatic"`
	Status               string `json:"status"`
	ReconciliationStatus string `json:"reconciliation_status"`
}

// paidOut is a balance transaction a payout paid out, its source
// expanded.
type paidOut struct {
	balanceTransaction
	ReportingCategory string          `json:"reporting_category"`
	Source            json.RawMessage `json:"source"`
}

// txnSource is the part of a balance transaction's source (a Charge, a
// Refund, a Dispute or a Payout) the adapter reads.
type txnSource struct {
	ID            string            `json:"id"`
	Object        string            `json:"object"`
	PaymentIntent json.RawMessage   `json:"payment_intent"`
	Metadata      map[string]string `json:"metadata"`
}

// page is a page of a Stripe list.
type page[T any] struct {
	Object  string `json:"object"`
	Data    []T    `json:"data"`
	HasMore bool   `json:"has_more"`
}

// errSettlement is wrapped by the errors of SettlementBatches.
var errSettlement = errors.New("stripe: no usable settlement report")

// Settlement bounds.
const (
	defaultBatches = 10  // SettlementBatches' limit when not positive
	maxBatches     = 100 // and at most
	listPage       = 100 // objects per list request
	maxFailedDepth = 3   // payouts that failed, one within another, a line expands
)

// getPage reads one page of the list at path.
func getPage[T any](ctx context.Context, p *Provider, path string, q url.Values) (*page[T], error) {
	a, fail := p.call(ctx, http.MethodGet, path, q, "")
	if fail != nil {
		return nil, fmt.Errorf("%w: %s", errSettlement, fail.r.Detail)
	}
	if a.err != nil {
		return nil, fmt.Errorf("%w: %s", errSettlement, errDetail(a))
	}
	var l page[T]
	if json.Unmarshal(a.body, &l) != nil || l.Object != "list" {
		return nil, fmt.Errorf("%w: the %s answer is not a list", errSettlement, path)
	}
	return &l, nil
}

// SettlementBatches returns the payouts Stripe paid after the payout
// after ("" for the first), oldest first, at most limit (at most 100; 10
// when not positive) of them, each with the balance transactions it paid
// out. Payouts are read in the order Stripe made them, and the read stops
// at the first one still on its way (pending, in transit, or paid with
// its reconciliation in progress), so that a payout that arrives late is
// never passed over; failed and canceled payouts, and manual ones (whose
// transactions Stripe cannot name), are no batches. An error means no
// trustworthy report came back.
func (p *Provider) SettlementBatches(ctx context.Context, after string, limit int) ([]paykit.SettlementBatch, error) {
	if limit <= 0 {
		limit = defaultBatches
	}
	limit = min(limit, maxBatches)
	pos, err := p.paidPayouts(ctx, after, limit)
	if err != nil {
		return nil, err
	}
	sessions := map[string]string{}
	out := make([]paykit.SettlementBatch, 0, len(pos))
	for _, po := range pos {
		lines, err := p.payoutLines(ctx, po.ID, 0, sessions)
		if err != nil {
			return nil, err
		}
		b := paykit.SettlementBatch{
			Reference: po.ID, Currency: strings.ToUpper(po.Currency), SettledAt: time.Unix(po.ArrivalDate, 0).UTC(),
			Net: po.Amount, Lines: lines,
		}
		for _, l := range lines {
			b.Gross, b.Fee = b.Gross+l.Amount, b.Fee+l.Fee
		}
		out = append(out, b)
	}
	return out, nil
}

// payoutStep is what a payout is to the read: a batch, none, or where it
// stops.
type payoutStep int

const (
	takePayout payoutStep = iota
	skipPayout
	stopAtPayout
)

// step classifies a payout.
func step(po *payout) (payoutStep, error) {
	if po.Object != "payout" || po.ID == "" || po.Currency == "" {
		return 0, fmt.Errorf("%w: a payout without an id or a currency", errSettlement)
	}
	switch po.Status {
	case "pending", "in_transit":
		return stopAtPayout, nil
	case "failed", "canceled":
		// Its funds come back in a payout_failure (or payout_cancel)
		// transaction, which a later payout pays out with them.
		return skipPayout, nil
	case "paid":
		switch {
		case po.ReconciliationStatus == "not_applicable", po.ReconciliationStatus == "" && !po.Automatic:
			return skipPayout, nil // manual: Stripe cannot name what it paid out
		case po.ReconciliationStatus == "in_progress":
			return stopAtPayout, nil
		case po.ReconciliationStatus == "completed", po.ReconciliationStatus == "":
			if po.ArrivalDate <= 0 {
				return 0, fmt.Errorf("%w: payout %s has no arrival_date", errSettlement, po.ID)
			}
			return takePayout, nil
		}
		return 0, fmt.Errorf("%w: payout %s has reconciliation_status %q", errSettlement, po.ID, po.ReconciliationStatus)
	}
	return 0, fmt.Errorf("%w: payout %s has status %q, which the adapter does not map", errSettlement, po.ID, po.Status)
}

// paidPayouts returns, oldest first, at most limit payouts that are
// batches, made after the payout after, up to the first one still on its
// way. Stripe lists payouts newest first: after a payout, the pages of
// ending_before come nearest it first; from the start, every page is read
// and the oldest come first.
func (p *Provider) paidPayouts(ctx context.Context, after string, limit int) ([]payout, error) {
	var out []payout
	// take walks payouts oldest first; it reports whether the read ends.
	take := func(pos []payout) (bool, error) {
		for i := range pos {
			s, err := step(&pos[i])
			if err != nil {
				return true, err
			}
			switch s {
			case stopAtPayout:
				return true, nil
			case takePayout:
				out = append(out, pos[i])
				if len(out) == limit {
					return true, nil
				}
			}
		}
		return false, nil
	}
	if after == "" {
		var all []payout
		q := url.Values{"limit": {strconv.Itoa(listPage)}}
		for {
			l, err := getPage[payout](ctx, p, "/v1/payouts", q)
			if err != nil {
				return nil, err
			}
			all = append(all, l.Data...)
			if !l.HasMore || len(l.Data) == 0 {
				break
			}
			q.Set("starting_after", l.Data[len(l.Data)-1].ID)
		}
		slices.Reverse(all)
		_, err := take(all)
		return out, err
	}
	cursor := after
	for {
		l, err := getPage[payout](ctx, p, "/v1/payouts", url.Values{"limit": {strconv.Itoa(listPage)}, "ending_before": {cursor}})
		if err != nil {
			return nil, err
		}
		if len(l.Data) == 0 {
			return out, nil
		}
		newest := l.Data[0].ID
		slices.Reverse(l.Data)
		if done, err := take(l.Data); done || err != nil || !l.HasMore {
			return out, err
		}
		cursor = newest
	}
}

// payoutLines returns the settlement lines of the balance transactions
// the payout id paid out, oldest first, but the payout's own. The
// transaction of a payout that failed (or was canceled), whose funds this
// one pays out again, stands for the lines of that payout. depth counts
// such payouts within payouts; sessions caches the Checkout Session of
// each PaymentIntent.
func (p *Provider) payoutLines(ctx context.Context, id string, depth int, sessions map[string]string) ([]paykit.SettlementLine, error) {
	var txns []paidOut
	q := url.Values{"payout": {id}, "limit": {strconv.Itoa(listPage)}, "expand[]": {"data.source"}}
	for {
		l, err := getPage[paidOut](ctx, p, "/v1/balance_transactions", q)
		if err != nil {
			return nil, err
		}
		txns = append(txns, l.Data...)
		if !l.HasMore || len(l.Data) == 0 {
			break
		}
		q.Set("starting_after", l.Data[len(l.Data)-1].ID)
	}
	slices.Reverse(txns)
	var lines []paykit.SettlementLine
	for _, bt := range txns {
		ls, err := p.txnLines(ctx, id, bt, depth, sessions)
		if err != nil {
			return nil, err
		}
		lines = append(lines, ls...)
	}
	return lines, nil
}

// txnLines maps one balance transaction paid out by the payout id to its
// settlement lines: none for the payout's own, several for a failed
// payout's funds paid out again. A transaction paykit has no line type
// for is an error: the payout cannot be accounted for.
func (p *Provider) txnLines(ctx context.Context, id string, bt paidOut, depth int, sessions map[string]string) ([]paykit.SettlementLine, error) {
	var src txnSource
	if json.Unmarshal(bt.Source, &src) != nil || src.ID == "" {
		return nil, fmt.Errorf("%w: payout %s: balance transaction %s has no expanded source", errSettlement, id, bt.ID)
	}
	line := paykit.SettlementLine{Reference: src.ID, Key: src.Metadata[MetadataKey], Amount: bt.Amount, Fee: bt.Fee, Currency: strings.ToUpper(bt.Currency)}
	unmapped := fmt.Errorf("%w: payout %s: balance transaction %s of type %s (reporting_category %s, source object %s) has no settlement line type",
		errSettlement, id, bt.ID, bt.Type, bt.ReportingCategory, src.Object)
	switch {
	case bt.Type == "payout" && src.ID == id:
		return nil, nil // the payout itself
	case (bt.Type == "payout_failure" || bt.Type == "payout_cancel") && src.Object == "payout":
		if depth >= maxFailedDepth {
			return nil, fmt.Errorf("%w: payout %s: more than %d failed payouts within one another", errSettlement, id, maxFailedDepth)
		}
		return p.payoutLines(ctx, src.ID, depth+1, sessions)
	case (bt.Type == "charge" || bt.Type == "payment") && src.Object == "charge":
		line.Type = "payment"
		ref, err := p.paymentRef(ctx, &src, sessions)
		if err != nil {
			return nil, err
		}
		line.Reference = ref
	case slices.Contains([]string{"refund", "payment_refund", "refund_failure", "payment_failure_refund"}, bt.Type) && src.Object == "refund":
		line.Type = "refund"
	case bt.Type == "adjustment" && src.Object == "refund" && bt.ReportingCategory == "refund_failure":
		line.Type = "refund"
	case bt.Type == "adjustment" && src.Object == "dispute":
		line.Type = "dispute"
		if bt.ReportingCategory == "dispute_reversal" || bt.ReportingCategory == "" && bt.Amount > 0 {
			line.Type = "dispute_reversal"
		}
	default:
		return nil, unmapped
	}
	return []paykit.SettlementLine{line}, nil
}

// paymentRef is paykit's Reference of the payment a charge settled: its
// PaymentIntent's id, or for a Checkout payment (marked in the metadata
// Stripe copies from the PaymentIntent to its charge) its session's id; a
// charge without a PaymentIntent is named by its own id.
func (p *Provider) paymentRef(ctx context.Context, ch *txnSource, sessions map[string]string) (string, error) {
	pi := expandableID(ch.PaymentIntent)
	if pi == "" {
		return ch.ID, nil
	}
	if ch.Metadata[checkoutMetadata] == "" {
		return pi, nil
	}
	if cs, ok := sessions[pi]; ok {
		return cs, nil
	}
	l, err := getPage[checkoutSession](ctx, p, "/v1/checkout/sessions", url.Values{"payment_intent": {pi}})
	if err != nil {
		return "", err
	}
	if len(l.Data) == 0 || l.Data[0].Object != "checkout.session" || l.Data[0].ID == "" {
		return "", fmt.Errorf("%w: the Checkout Session of %s was not found", errSettlement, pi)
	}
	sessions[pi] = l.Data[0].ID
	return l.Data[0].ID, nil
}
