package stripe

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/paykit/paykit"
)

// dispute is the part of Stripe's Dispute object the adapter reads.
type dispute struct {
	ID                  string               `json:"id"`
	Object              string               `json:"object"`
	Amount              int64                `json:"amount"`
	Currency            string               `json:"currency"`
	Reason              string               `json:"reason"`
	Status              string               `json:"status"`
	Charge              json.RawMessage      `json:"charge"`         // an id or an expanded Charge
	PaymentIntent       json.RawMessage      `json:"payment_intent"` // null, an id or an expanded PaymentIntent
	BalanceTransactions []balanceTransaction `json:"balance_transactions"`
	EvidenceDetails     struct {
		DueBy           int64 `json:"due_by"`
		SubmissionCount int   `json:"submission_count"`
	} `json:"evidence_details"`
}

// disputeStatuses maps Stripe's dispute statuses to paykit's. The
// warning_ ones are inquiries before a chargeback; warning_closed is an
// inquiry that closed without one, and prevented a dispute that never
// became one: the money stayed with the merchant.
var disputeStatuses = map[string]paykit.DisputeStatus{
	"warning_needs_response": paykit.DisputeNeedsResponse, "needs_response": paykit.DisputeNeedsResponse,
	"warning_under_review": paykit.DisputeUnderReview, "under_review": paykit.DisputeUnderReview,
	"won": paykit.DisputeWon, "warning_closed": paykit.DisputeWon, "prevented": paykit.DisputeWon,
	"lost": paykit.DisputeLost,
}

// disputeReasons maps Stripe's dispute reasons to paykit's; any other is
// general.
var disputeReasons = map[string]paykit.DisputeReason{
	"fraudulent": paykit.DisputeFraudulent, "product_not_received": paykit.DisputeProductNotReceived,
	"product_unacceptable": paykit.DisputeProductUnacceptable, "duplicate": paykit.DisputeDuplicate,
	"credit_not_processed": paykit.DisputeCreditNotProcessed,
}

// disputeExpansion expands a dispute's PaymentIntent, whose metadata
// carries paykit's key.
var disputeExpansion = url.Values{"expand[]": {"payment_intent"}}

// providerDispute maps a Stripe dispute to paykit's account of it. The
// disputed payment is the dispute's PaymentIntent, read from Stripe when
// not expanded: its metadata names paykit's key, and a Checkout payment
// is named by its session (paykit's Reference of it). The fee is that of
// the balance transactions withdrawing the disputed funds (Stripe's
// dispute fee, kept when the dispute is won). An error means the dispute
// could not be mapped now.
func (p *Provider) providerDispute(ctx context.Context, d *dispute) (paykit.ProviderDispute, error) {
	status, ok := disputeStatuses[d.Status]
	if !ok {
		return paykit.ProviderDispute{}, fmt.Errorf("dispute %s has status %q, which the adapter does not map", d.ID, d.Status)
	}
	reason, ok := disputeReasons[d.Reason]
	if !ok {
		reason = paykit.DisputeGeneral
	}
	if d.Amount <= 0 || d.Currency == "" {
		return paykit.ProviderDispute{}, fmt.Errorf("dispute %s has no amount", d.ID)
	}
	pd := paykit.ProviderDispute{
		Reference: d.ID, Amount: d.Amount, Currency: strings.ToUpper(d.Currency), Reason: reason, Status: status,
		Detail: fmt.Sprintf("stripe: dispute %s reason %s", d.Status, d.Reason),
	}
	if d.EvidenceDetails.DueBy > 0 {
		pd.EvidenceDueBy = time.Unix(d.EvidenceDetails.DueBy, 0).UTC()
	}
	fee, err := disputeFee(d)
	if err != nil {
		return paykit.ProviderDispute{}, err
	}
	pd.Fee = fee
	pi := expanded(d.PaymentIntent, "payment_intent", func(pi *paymentIntent) string { return pi.Object })
	if id := expandableID(d.PaymentIntent); pi == nil && id != "" {
		var r paykit.Result
		if pi, r = p.fetchPI(ctx, id); pi == nil {
			return paykit.ProviderDispute{}, fmt.Errorf("reading its PaymentIntent: %s", r.Detail)
		}
	}
	if pi == nil {
		// A charge without a PaymentIntent was not made by paykit.
		pd.PaymentRef = expandableID(d.Charge)
		return pd, nil
	}
	pd.PaymentKey, pd.PaymentRef = pi.Metadata[MetadataKey], pi.ID
	if pi.Metadata[checkoutMetadata] != "" {
		if cs := p.sessionOf(ctx, pi.ID); cs != nil {
			pd.PaymentRef = cs.ID
		}
	}
	return pd, nil
}

// disputeFee is the fee of the balance transactions that withdrew the
// disputed funds, in the dispute's currency (converted as applyFee does
// when the account settles in another).
func disputeFee(d *dispute) (int64, error) {
	var fee int64
	for _, bt := range d.BalanceTransactions {
		if bt.Amount >= 0 {
			continue // funds reinstated
		}
		f := bt.Fee
		if !strings.EqualFold(bt.Currency, d.Currency) {
			if f < 0 || f > 1e12 || d.Amount > 1e12 {
				return 0, fmt.Errorf("dispute %s: balance transaction %s cannot be converted", d.ID, bt.ID)
			}
			f = (2*f*d.Amount - bt.Amount) / (-2 * bt.Amount)
		}
		fee += f
	}
	return fee, nil
}

// decodeDispute decodes a Dispute answer.
func decodeDispute(a *answer) (*dispute, bool) {
	var d dispute
	if json.Unmarshal(a.body, &d) != nil || d.Object != "dispute" || d.ID == "" {
		return nil, false
	}
	return &d, true
}

// errDispute is wrapped by the errors of the dispute calls that got no
// usable answer.
var errDispute = errors.New("stripe: no usable answer about the dispute")

// disputeAnswer maps the answer of a dispute call.
func (p *Provider) disputeAnswer(ctx context.Context, a *answer, fail *failure) (paykit.ProviderDispute, error) {
	if fail != nil {
		return paykit.ProviderDispute{}, fmt.Errorf("%w: %s", errDispute, fail.r.Detail)
	}
	if a.err != nil {
		return paykit.ProviderDispute{}, fmt.Errorf("%w: %s", errDispute, errDetail(a))
	}
	d, ok := decodeDispute(a)
	if !ok {
		return paykit.ProviderDispute{}, fmt.Errorf("%w: the answer is not a Dispute", errDispute)
	}
	pd, err := p.providerDispute(ctx, d)
	if err != nil {
		return paykit.ProviderDispute{}, fmt.Errorf("%w: %v", errDispute, err)
	}
	return pd, nil
}

// InquireDispute reads the dispute (GET /v1/disputes/{id}).
func (p *Provider) InquireDispute(ctx context.Context, ref string) (paykit.ProviderDispute, error) {
	a, fail := p.call(ctx, http.MethodGet, "/v1/disputes/"+url.PathEscape(ref), disputeExpansion, "")
	return p.disputeAnswer(ctx, a, fail)
}

// SubmitDisputeEvidence sends text as the dispute's uncategorized_text
// evidence and submits it (POST /v1/disputes/{id}, submit=true). When
// Stripe refuses because the dispute no longer takes evidence (submitted
// or closed already), the answer is the dispute as it is.
func (p *Provider) SubmitDisputeEvidence(ctx context.Context, ref, text string) (paykit.ProviderDispute, error) {
	f := url.Values{"evidence[uncategorized_text]": {text}, "submit": {"true"}, "expand[]": {"payment_intent"}}
	a, fail := p.call(ctx, http.MethodPost, "/v1/disputes/"+url.PathEscape(ref), f, "")
	if refusedAsIs(a, fail) {
		return p.InquireDispute(ctx, ref)
	}
	return p.disputeAnswer(ctx, a, fail)
}

// AcceptDispute closes the dispute (POST /v1/disputes/{id}/close): the
// merchant concedes and Stripe marks it lost. When Stripe refuses because
// the dispute is not open for it (closed already, say), the answer is the
// dispute as it is.
func (p *Provider) AcceptDispute(ctx context.Context, ref string) (paykit.ProviderDispute, error) {
	a, fail := p.call(ctx, http.MethodPost, "/v1/disputes/"+url.PathEscape(ref)+"/close", disputeExpansion, "")
	if refusedAsIs(a, fail) {
		return p.InquireDispute(ctx, ref)
	}
	return p.disputeAnswer(ctx, a, fail)
}

// refusedAsIs reports whether Stripe refused an update of an existing
// dispute for its state (400 invalid_request_error), so that its state is
// the answer.
func refusedAsIs(a *answer, fail *failure) bool {
	return fail == nil && a.err != nil && a.status == http.StatusBadRequest && a.err.Type == "invalid_request_error" && !idempotencyConflict(a)
}
