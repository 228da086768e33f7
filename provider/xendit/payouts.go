package xendit

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"

	"github.com/paykit/paykit"
)

// payout is the part of a Payouts API v2 payout the adapter reads.
type payout struct {
	ID          string `json:"id"`
	ReferenceID string `json:"reference_id"`
	ChannelCode string `json:"channel_code"`
	Currency    string `json:"currency"`
	Amount      amount `json:"amount"`
	Status      string `json:"status"`
	FailureCode string `json:"failure_code"`
	Created     string `json:"created"`
}

const payoutsPath = "/v2/payouts"

// CreatePayout sends money to a bank account (POST /v2/payouts): the Key
// is the mandatory Idempotency-key and the reference_id, the route's bank
// code the channel_code. A key Xendit already holds (DUPLICATE_ERROR)
// answers the payout made under it.
func (p *Provider) CreatePayout(ctx context.Context, req paykit.PayoutRequest) paykit.Result {
	ctx, cancel := p.withTimeout(ctx)
	defer cancel()
	value, err := Decimal(req.Amount, req.Currency)
	if err != nil {
		return paykit.Result{Outcome: paykit.OutcomeRefused, Detail: err.Error()}
	}
	body := map[string]any{
		"reference_id": req.Key, "channel_code": req.BankCode, "amount": value, "currency": req.Currency,
		"channel_properties": map[string]string{"account_number": req.AccountNumber, "account_holder_name": req.HolderName},
		"metadata":           map[string]string{"paykit_key": req.Key},
	}
	r := p.do(ctx, request{method: http.MethodPost, path: payoutsPath, body: body, idem: req.Key})
	switch {
	case r.fault != nil:
		return *r.fault
	case r.err != nil && (r.status == http.StatusConflict || r.err.ErrorCode == "DUPLICATE_ERROR" || r.err.ErrorCode == "DUPLICATE_TRANSACTION_ERROR"):
		// The key was used before: the payout made under it is the answer.
		res := p.inquirePayout(ctx, paykit.AttemptRef{Key: req.Key})
		res.Detail = r.errorDetail() + "; " + res.Detail
		return res
	case r.err != nil && r.err.ErrorCode == "RECIPIENT_ACCOUNT_NUMBER_ERROR":
		return paykit.Result{Outcome: paykit.OutcomeFailed, FailureCode: paykit.FailureAccountInvalid, Detail: r.errorDetail()}
	case r.err != nil && (r.refusedCreate() || r.err.ErrorCode == "INSUFFICIENT_BALANCE"):
		return paykit.Result{Outcome: paykit.OutcomeRefused, Detail: r.errorDetail()}
	case r.err != nil:
		return paykit.Result{Outcome: paykit.OutcomeUnknown, Detail: r.errorDetail()}
	}
	return payoutResult(req.Key, r.body)
}

// InquirePayout reads the payout: GET /v2/payouts/{id} with a Reference,
// else listed by reference_id.
func (p *Provider) InquirePayout(ctx context.Context, ref paykit.AttemptRef) paykit.Result {
	ctx, cancel := p.withTimeout(ctx)
	defer cancel()
	return p.inquirePayout(ctx, ref)
}

func (p *Provider) inquirePayout(ctx context.Context, ref paykit.AttemptRef) paykit.Result {
	body, end := p.find(ctx, payoutsPath, ref, "payout", false)
	if end != nil {
		return *end
	}
	return payoutResult(ref.Key, body)
}

// CancelPayout cancels a payout Xendit has not sent yet
// (POST /v2/payouts/{id}/cancel, while ACCEPTED); one already sent keeps
// its state, which is the answer.
func (p *Provider) CancelPayout(ctx context.Context, ref paykit.AttemptRef) paykit.Result {
	ctx, cancel := p.withTimeout(ctx)
	defer cancel()
	cur := p.inquirePayout(ctx, ref)
	if cur.Outcome != paykit.OutcomePending || cur.Reference == "" {
		return cur
	}
	r := p.do(ctx, request{method: http.MethodPost, path: payoutsPath + "/" + url.PathEscape(cur.Reference) + "/cancel"})
	switch {
	case r.fault != nil:
		return *r.fault
	case r.notFound():
		return r.errorResult()
	case r.err != nil:
		res := p.inquirePayout(ctx, paykit.AttemptRef{Key: ref.Key, Reference: cur.Reference})
		res.Detail = r.errorDetail() + "; " + res.Detail
		return res
	}
	return payoutResult(ref.Key, r.body)
}

// payoutResult maps a payout. key, if set, must be its reference_id.
// Statuses: ACCEPTED, PENDING_COMPLIANCE_ASSESSMENT and REQUESTED are in
// flight; SUCCEEDED; FAILED and COMPLIANCE_REJECTED failed
// (INVALID_DESTINATION: the account is invalid); CANCELLED; REVERSED, which
// Xendit documents only after SUCCEEDED, is a return.
func payoutResult(key string, raw []byte) paykit.Result {
	var po payout
	if err := json.Unmarshal(raw, &po); err != nil || po.ID == "" {
		return paykit.Result{Outcome: paykit.OutcomeUnknown, Detail: "xendit: the answer is not a payout"}
	}
	if key != "" && po.ReferenceID != key {
		return paykit.Result{Outcome: paykit.OutcomeUnknown, Detail: "xendit: payout " + po.ID + " has reference_id " + po.ReferenceID + ", not " + key}
	}
	res := paykit.Result{Reference: po.ID, Detail: "xendit: payout " + po.Status}
	switch po.Status {
	case "SUCCEEDED":
		res.Outcome = paykit.OutcomeSucceeded
	case "FAILED", "COMPLIANCE_REJECTED":
		res.Outcome, res.FailureCode = paykit.OutcomeFailed, paykit.FailureProviderDeclined
		if po.FailureCode == "INVALID_DESTINATION" {
			res.FailureCode = paykit.FailureAccountInvalid
		}
		res.Detail += " " + po.FailureCode
	case "CANCELLED":
		res.Outcome = paykit.OutcomeCancelled
	case "REVERSED":
		res.Outcome = paykit.OutcomeReturned
	default:
		res.Outcome = paykit.OutcomePending
	}
	return res
}
