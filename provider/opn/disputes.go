package opn

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

// transaction is the part of Opn's transaction object the adapter reads.
type transaction struct {
	Object         string `json:"object"`
	ID             string `json:"id"`
	TransferableAt string `json:"transferable_at"`
}

// withFee completes a successful charge's result with Opn's fee: the
// charge's fee plus fee_vat (both minor units; a missing fee_vat is 0),
// and, from the charge's transaction (GET /transactions/{id} when not
// expanded), transferable_at: when the net becomes part of the available
// balance. paykit never guesses a fee Opn states, so a successful charge
// stating none is Unknown (its Reference kept). The available date is
// informative: when the transaction cannot be read now it stays zero and
// Detail says why.
func (p *Provider) withFee(ctx context.Context, c charge, res paykit.Result) paykit.Result {
	fee, vat, why := statedFee(c)
	if why != "" {
		return paykit.Result{Outcome: paykit.OutcomeUnknown, Reference: c.ID, Detail: res.Detail + "; successful, but " + why}
	}
	res.Fee = fee + vat
	res.Detail += fmt.Sprintf("; fee %d + fee_vat %d", fee, vat)
	t, why := p.transferableAt(ctx, c.Transaction)
	if why != "" {
		res.Detail += "; transferable_at unknown: " + why
	}
	res.AvailableOn = t
	return res
}

// statedFee is the fee a charge states and the VAT on it (a missing
// fee_vat is 0); why says what is wrong when it states none.
func statedFee(c charge) (fee, vat int64, why string) {
	fee, err := c.Fee.Int64()
	if err != nil || fee < 0 {
		return 0, 0, "the charge states no fee"
	}
	if c.FeeVAT != "" {
		if vat, err = c.FeeVAT.Int64(); err != nil || vat < 0 {
			return 0, 0, "its fee_vat is not an amount"
		}
	}
	return fee, vat, ""
}

// transferableAt reads transferable_at from the charge's transaction:
// the expanded object, or the transaction read by id. Without it, the
// reason.
func (p *Provider) transferableAt(ctx context.Context, raw json.RawMessage) (time.Time, string) {
	var tr transaction
	var id string
	switch {
	case len(raw) == 0 || string(raw) == "null":
		return time.Time{}, "no transaction"
	case json.Unmarshal(raw, &id) == nil:
		body, end := p.get(ctx, "/transactions/"+url.PathEscape(id))
		if end != nil {
			return time.Time{}, end.Detail
		}
		if err := decodeJSON(body, &tr); err != nil || tr.Object != "transaction" {
			return time.Time{}, "the answer is not a transaction object"
		}
	case json.Unmarshal(raw, &tr) != nil || tr.Object != "transaction":
		return time.Time{}, "the charge's transaction is not a transaction object"
	}
	t, err := time.Parse(time.RFC3339, tr.TransferableAt)
	if err != nil {
		return time.Time{}, fmt.Sprintf("transaction %s: transferable_at %q", tr.ID, tr.TransferableAt)
	}
	return t.UTC(), ""
}

// dispute is the part of Opn's dispute object the adapter reads.
type dispute struct {
	Object        string          `json:"object"`
	ID            string          `json:"id"`
	Amount        json.Number     `json:"amount"`
	Currency      string          `json:"currency"`
	Status        string          `json:"status"`
	ReasonCode    string          `json:"reason_code"`
	ReasonMessage string          `json:"reason_message"`
	Charge        json.RawMessage `json:"charge"` // an id or an expanded charge
}

// disputeStatuses maps Opn's dispute statuses to paykit's. closed names
// a dispute won or lost without saying which; the adapter reads it lost,
// as the disputed funds have not come back.
var disputeStatuses = map[string]paykit.DisputeStatus{
	"open": paykit.DisputeNeedsResponse, "pending": paykit.DisputeUnderReview,
	"won": paykit.DisputeWon, "lost": paykit.DisputeLost, "closed": paykit.DisputeLost,
}

// disputeReason maps an Opn reason_code to paykit's reasons by the words
// it contains; any other is general.
func disputeReason(code string) paykit.DisputeReason {
	c := strings.ToLower(code)
	has := func(words ...string) bool {
		for _, w := range words {
			if strings.Contains(c, w) {
				return true
			}
		}
		return false
	}
	switch {
	case has("fraud", "unauthori", "unrecogni", "not_recogni"):
		return paykit.DisputeFraudulent
	case has("not_received", "not_provided", "non_receipt", "not_delivered"):
		return paykit.DisputeProductNotReceived
	case has("not_as_described", "defective", "unacceptable", "quality", "damaged", "counterfeit"):
		return paykit.DisputeProductUnacceptable
	case has("duplicate", "paid_by_other_means"):
		return paykit.DisputeDuplicate
	case has("credit_not_processed", "refund_not_processed", "cancel"):
		return paykit.DisputeCreditNotProcessed
	}
	return paykit.DisputeGeneral
}

// mapDispute maps a dispute object to paykit's account of it. The
// disputed payment is its charge (PaymentRef, paykit's Reference of an
// Opn payment), whose metadata paykit_key is PaymentKey (the charge read
// by id when not expanded). Opn's dispute object states no fee and no
// evidence deadline: Fee is 0 and EvidenceDueBy zero.
func (p *Provider) mapDispute(ctx context.Context, raw []byte) (paykit.ProviderDispute, error) {
	var d dispute
	if err := decodeJSON(raw, &d); err != nil || d.Object != "dispute" || d.ID == "" {
		return paykit.ProviderDispute{}, errors.New("not a dispute object")
	}
	status, ok := disputeStatuses[d.Status]
	if !ok {
		return paykit.ProviderDispute{}, fmt.Errorf("dispute %s has status %q, which the adapter does not map", d.ID, d.Status)
	}
	amount, err := d.Amount.Int64()
	if err != nil || amount <= 0 || d.Currency == "" {
		return paykit.ProviderDispute{}, fmt.Errorf("dispute %s has no amount", d.ID)
	}
	pd := paykit.ProviderDispute{
		Reference: d.ID, Amount: amount, Currency: strings.ToUpper(d.Currency), Reason: disputeReason(d.ReasonCode), Status: status,
		Detail: fmt.Sprintf("opn: dispute %s reason_code %s: %s", d.Status, d.ReasonCode, d.ReasonMessage),
	}
	var c charge
	var id string
	switch {
	case json.Unmarshal(d.Charge, &id) == nil && id != "":
		body, end := p.get(ctx, "/charges/"+url.PathEscape(id))
		if end != nil {
			return paykit.ProviderDispute{}, fmt.Errorf("dispute %s: reading charge %s: %s", d.ID, id, end.Detail)
		}
		if err := decodeJSON(body, &c); err != nil || c.Object != "charge" {
			return paykit.ProviderDispute{}, fmt.Errorf("dispute %s: charge %s: the answer is not a charge object", d.ID, id)
		}
	case decodeJSON(d.Charge, &c) != nil || c.Object != "charge" || c.ID == "":
		return paykit.ProviderDispute{}, fmt.Errorf("dispute %s names no charge", d.ID)
	}
	pd.PaymentRef, pd.PaymentKey = c.ID, c.Metadata["paykit_key"]
	return pd, nil
}

// errDispute is wrapped by the errors of the dispute calls that got no
// usable answer.
var errDispute = errors.New("opn: no usable answer about the dispute")

// disputeAnswer maps the answer of a dispute call.
func (p *Provider) disputeAnswer(ctx context.Context, r reply) (paykit.ProviderDispute, error) {
	switch {
	case r.fault != nil:
		return paykit.ProviderDispute{}, fmt.Errorf("%w: %s", errDispute, r.fault.Detail)
	case r.err != nil:
		return paykit.ProviderDispute{}, fmt.Errorf("%w: %s", errDispute, r.errorDetail())
	}
	pd, err := p.mapDispute(ctx, r.body)
	if err != nil {
		return paykit.ProviderDispute{}, fmt.Errorf("%w: %v", errDispute, err)
	}
	return pd, nil
}

// InquireDispute reads the dispute (GET /disputes/{id}).
func (p *Provider) InquireDispute(ctx context.Context, ref string) (paykit.ProviderDispute, error) {
	ctx, cancel := p.withTimeout(ctx)
	defer cancel()
	return p.disputeAnswer(ctx, p.call(ctx, http.MethodGet, "/disputes/"+url.PathEscape(ref), nil, ""))
}

// SubmitDisputeEvidence sends text as the dispute's message
// (PATCH /disputes/{id}): Opn takes the merchant's response and the
// dispute goes from open to pending. When Opn refuses because the dispute
// is no longer open, the answer is the dispute as it is.
func (p *Provider) SubmitDisputeEvidence(ctx context.Context, ref, text string) (paykit.ProviderDispute, error) {
	ctx, cancel := p.withTimeout(ctx)
	defer cancel()
	r := p.call(ctx, http.MethodPatch, "/disputes/"+url.PathEscape(ref), url.Values{"message": {text}}, "")
	if refusedAsIs(r) {
		return p.disputeAnswer(ctx, p.call(ctx, http.MethodGet, "/disputes/"+url.PathEscape(ref), nil, ""))
	}
	return p.disputeAnswer(ctx, r)
}

// AcceptDispute accepts the dispute (PATCH /disputes/{id}/accept): the
// merchant concedes and Opn marks it lost. When Opn refuses because the
// dispute is no longer open, the answer is the dispute as it is.
func (p *Provider) AcceptDispute(ctx context.Context, ref string) (paykit.ProviderDispute, error) {
	ctx, cancel := p.withTimeout(ctx)
	defer cancel()
	r := p.call(ctx, http.MethodPatch, "/disputes/"+url.PathEscape(ref)+"/accept", nil, "")
	if refusedAsIs(r) {
		return p.disputeAnswer(ctx, p.call(ctx, http.MethodGet, "/disputes/"+url.PathEscape(ref), nil, ""))
	}
	return p.disputeAnswer(ctx, r)
}

// refusedAsIs reports whether Opn refused an update of an existing
// dispute for its state (400 or 422 with its error object).
func refusedAsIs(r reply) bool {
	return r.fault == nil && r.err != nil && (r.status == http.StatusBadRequest || r.status == http.StatusUnprocessableEntity)
}
