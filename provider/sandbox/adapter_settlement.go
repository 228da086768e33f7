package sandbox

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/paykit/paykit"
)

// The adapter's disputes and settlement: the PSP's dispute states and
// reasons and its line types, mapped to paykit's; an answer it cannot map
// is an error, never a guess.

// disputeStatuses map the PSP's dispute states.
var disputeStatuses = map[string]paykit.DisputeStatus{
	stateNeedsResponse: paykit.DisputeNeedsResponse,
	stateUnderReview:   paykit.DisputeUnderReview,
	stateWon:           paykit.DisputeWon,
	stateLost:          paykit.DisputeLost,
}

// disputeReasonsOf map the PSP's dispute reasons, and localReasons back.
var (
	disputeReasonsOf = map[string]paykit.DisputeReason{
		reasonFraud:              paykit.DisputeFraudulent,
		reasonNotReceived:        paykit.DisputeProductNotReceived,
		reasonNotAsDescribed:     paykit.DisputeProductUnacceptable,
		reasonDuplicate:          paykit.DisputeDuplicate,
		reasonCreditNotProcessed: paykit.DisputeCreditNotProcessed,
		reasonGeneral:            paykit.DisputeGeneral,
	}
	localReasons = func() map[paykit.DisputeReason]string {
		m := map[paykit.DisputeReason]string{}
		for local, r := range disputeReasonsOf {
			m[r] = local
		}
		return m
	}()
)

// lineTypes map the PSP's settlement line types.
var lineTypes = map[string]string{
	linePayment:         "payment",
	lineRefund:          "refund",
	lineDispute:         "dispute",
	lineDisputeReversal: "dispute_reversal",
}

// disputeOf maps the PSP's answer about a dispute. A reason it does not
// know is general (the PSP's word stays in Detail); a state it does not
// know is an error.
func disputeOf(v disputeView) (paykit.ProviderDispute, error) {
	status, ok := disputeStatuses[v.State]
	if !ok || v.ID == "" {
		return paykit.ProviderDispute{}, fmt.Errorf("a dispute %q in state %q", v.ID, v.State)
	}
	reason, ok := disputeReasonsOf[v.Reason]
	if !ok {
		reason = paykit.DisputeGeneral
	}
	return paykit.ProviderDispute{
		Reference: v.ID, PaymentKey: v.PaymentKey, PaymentRef: v.PaymentID,
		Amount: v.AmountMinor, Currency: v.Ccy, Fee: v.FeeMinor, Reason: reason, Status: status,
		EvidenceDueBy: v.EvidenceDueBy.UTC(), Detail: "state=" + v.State + " reason=" + v.Reason,
	}, nil
}

// dispute maps a dispute call's answer.
func (p *Provider) dispute(rp reply) (paykit.ProviderDispute, error) {
	v, err := answerOf[disputeView](rp)
	if err != nil {
		return paykit.ProviderDispute{}, err
	}
	d, err := disputeOf(v)
	if err != nil {
		return d, fmt.Errorf("sandbox: http %d: %w", rp.status, err)
	}
	return d, nil
}

// OpenDispute makes the payer's bank dispute req.Amount (0: all that the
// payment's refunds and disputes left) of the payment attempt created
// under req.PaymentKey (or, without it, the PSP's attempt req.PaymentRef),
// for req.Reason (default general). The dispute needs a response within
// seven days.
func (p *Provider) OpenDispute(ctx context.Context, req paykit.DisputeOpening) (paykit.ProviderDispute, error) {
	body := disputeCreate{PaymentKey: req.PaymentKey, AmountMinor: req.Amount}
	if req.PaymentKey == "" {
		body.PaymentID = req.PaymentRef
	}
	if req.Reason != "" {
		local, ok := localReasons[req.Reason]
		if !ok {
			return paykit.ProviderDispute{}, fmt.Errorf("sandbox: no dispute reason %q", req.Reason)
		}
		body.Reason = local
	}
	return p.dispute(p.send(ctx, routeOpenDispute, "", body))
}

// InquireDispute asks the PSP about the dispute ref.
func (p *Provider) InquireDispute(ctx context.Context, ref string) (paykit.ProviderDispute, error) {
	return p.dispute(p.send(ctx, routeInquireDispute, ref, nil))
}

// SubmitDisputeEvidence sends text as the evidence of the dispute ref and
// submits it: the dispute is under review, and the PSP decides it after
// its delay.
func (p *Provider) SubmitDisputeEvidence(ctx context.Context, ref, text string) (paykit.ProviderDispute, error) {
	return p.decided(ctx, ref, p.send(ctx, routeDisputeEvidence, ref, evidenceSubmit{Text: text, Submit: true}))
}

// decided is the dispute of an evidence or accept answer; a refusal
// because the dispute no longer needs a response (a repeated call, or one
// whose first answer was lost) answers the dispute as it is.
func (p *Provider) decided(ctx context.Context, ref string, rp reply) (paykit.ProviderDispute, error) {
	if rp.status == http.StatusConflict {
		return p.InquireDispute(ctx, ref)
	}
	return p.dispute(rp)
}

// AcceptDispute concedes the dispute ref: it is lost.
func (p *Provider) AcceptDispute(ctx context.Context, ref string) (paykit.ProviderDispute, error) {
	return p.decided(ctx, ref, p.send(ctx, routeAcceptDispute, ref, nil))
}

// SettlementBatches returns the batches the PSP closed after the batch
// after ("" for the first), oldest first, at most limit (at most 100) of
// them (10 when limit is not positive), each with the gross, fee and net
// the PSP states for it.
func (p *Provider) SettlementBatches(ctx context.Context, after string, limit int) ([]paykit.SettlementBatch, error) {
	if limit <= 0 {
		limit = defaultBatchPage
	}
	limit = min(limit, maxBatchPage)
	return batchesOf(p.send(ctx, routeListSettlements, "", settlementQuery{After: after, Limit: limit}))
}

// SettleNow makes the PSP close merchant's open settlement lines at once,
// and returns the batches it closed for merchant.
func (p *Provider) SettleNow(ctx context.Context, merchant string) ([]paykit.SettlementBatch, error) {
	if merchant == "" {
		return nil, errors.New("sandbox: settle now needs a merchant")
	}
	return batchesOf(p.send(ctx, routeSettleNow, merchant, nil))
}

// batchesOf maps a list of batches.
func batchesOf(rp reply) ([]paykit.SettlementBatch, error) {
	v, err := answerOf[batchListView](rp)
	if err != nil {
		return nil, err
	}
	out := make([]paykit.SettlementBatch, 0, len(v.Data))
	for _, b := range v.Data {
		sb := paykit.SettlementBatch{
			Reference: b.ID, Merchant: b.Merchant, Currency: b.Ccy, SettledAt: b.SettledAt.UTC(),
			Gross: b.GrossMinor, Fee: b.FeeMinor, Net: b.NetMinor,
			Lines: make([]paykit.SettlementLine, 0, len(b.Lines)),
		}
		if b.ID == "" {
			return nil, errors.New("sandbox: a settlement batch without an id")
		}
		for _, l := range b.Lines {
			typ, ok := lineTypes[l.Type]
			if !ok {
				return nil, fmt.Errorf("sandbox: settlement batch %s: a line of type %q", b.ID, l.Type)
			}
			sb.Lines = append(sb.Lines, paykit.SettlementLine{
				Type: typ, Reference: l.Reference, Key: l.Key, Amount: l.AmountMinor, Fee: l.FeeMinor, Currency: l.Ccy,
			})
		}
		out = append(out, sb)
	}
	return out, nil
}
