package xendit

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/paykit/paykit"
)

// refund is the part of Xendit's refund object the adapter reads.
type refund struct {
	ID               string `json:"id"`
	PaymentRequestID string `json:"payment_request_id"`
	ReferenceID      string `json:"reference_id"`
	Currency         string `json:"currency"`
	Amount           amount `json:"amount"`
	Status           string `json:"status"`
	FailureCode      string `json:"failure_code"`
	Created          string `json:"created"`
}

// CreateRefund refunds a payment request (POST /refunds, reference_id =
// Key, Idempotency-key = Key), after listing refunds under the Key.
func (p *Provider) CreateRefund(ctx context.Context, req paykit.RefundRequest) paykit.Result {
	ctx, cancel := p.withTimeout(ctx)
	defer cancel()
	value, err := Decimal(req.Amount, req.Currency)
	if err != nil {
		return paykit.Result{Outcome: paykit.OutcomeRefused, Detail: err.Error()}
	}
	if found := p.existing(ctx, "/refunds", req.Key, false); found != nil {
		return refundResult(req.Key, found)
	}
	prID := req.PaymentRef
	if prID == "" {
		found, end := p.byReference(ctx, paymentRequestsPath, req.PaymentKey, true)
		switch {
		case end != nil:
			return *end
		case len(found) == 0:
			return paykit.Result{Outcome: paykit.OutcomeRefused, Detail: "xendit: no payment request to refund under reference_id " + req.PaymentKey}
		}
		var pr paymentRequest
		if err := json.Unmarshal(oldest(found), &pr); err != nil || pr.ID == "" {
			return paykit.Result{Outcome: paykit.OutcomeUnknown, Detail: "xendit: the listed payment request is unreadable"}
		}
		prID = pr.ID
	}
	body := map[string]any{
		"payment_request_id": prID, "reference_id": req.Key, "currency": req.Currency, "amount": value,
		"reason": "REQUESTED_BY_CUSTOMER", "metadata": map[string]string{"paykit_key": req.Key},
	}
	r := p.do(ctx, request{method: http.MethodPost, path: "/refunds", body: body, idem: req.Key})
	switch {
	case r.fault != nil:
		return *r.fault
	case r.err != nil && refundDeclined(r):
		// Xendit's word: it will not refund this payment (so far).
		return paykit.Result{Outcome: paykit.OutcomeFailed, FailureCode: paykit.RefundProviderDeclined, Detail: r.errorDetail()}
	case r.err != nil && (r.err.ErrorCode == "REFUND_IN_PROGRESS" || r.err.ErrorCode == "TEMPORARILY_UNAVAILABLE"):
		// Not executed now: the same key may try again later.
		return paykit.Result{Outcome: paykit.OutcomeUnacknowledged, Detail: r.errorDetail()}
	case r.err != nil && (r.refusedCreate() || r.notFound()):
		return paykit.Result{Outcome: paykit.OutcomeRefused, Detail: r.errorDetail()}
	case r.err != nil:
		return paykit.Result{Outcome: paykit.OutcomeUnknown, Detail: r.errorDetail()}
	}
	return refundResult(req.Key, r.body)
}

// refundDeclined reports whether Xendit's error answering a refund says
// it refuses this refund of this payment.
func refundDeclined(r reply) bool {
	switch r.err.ErrorCode {
	case "REFUND_AMOUNT_EXCEEDED", "INELIGIBLE_TRANSACTION_STATUS", "PARTIAL_REFUND_COUNTS_EXCEEDED",
		"INSUFFICIENT_BALANCE", "REFUND_NOT_SUPPORTED", "PARTIAL_REFUND_NOT_SUPPORTED":
		return true
	}
	return false
}

// InquireRefund reads the refund: by its Reference (GET /refunds/{id}),
// else listed by reference_id.
func (p *Provider) InquireRefund(ctx context.Context, ref paykit.AttemptRef) paykit.Result {
	ctx, cancel := p.withTimeout(ctx)
	defer cancel()
	body, end := p.find(ctx, "/refunds", ref, "refund", false)
	if end != nil {
		return *end
	}
	return refundResult(ref.Key, body)
}

// refundResult maps a refund object. key, if set, must be its
// reference_id.
func refundResult(key string, raw []byte) paykit.Result {
	var f refund
	if err := json.Unmarshal(raw, &f); err != nil || f.ID == "" {
		return paykit.Result{Outcome: paykit.OutcomeUnknown, Detail: "xendit: the answer is not a refund"}
	}
	if key != "" && f.ReferenceID != key {
		return paykit.Result{Outcome: paykit.OutcomeUnknown, Detail: "xendit: refund " + f.ID + " has reference_id " + f.ReferenceID + ", not " + key}
	}
	res := paykit.Result{Reference: f.ID, Detail: "xendit: refund " + f.Status}
	switch f.Status {
	case "SUCCEEDED":
		res.Outcome = paykit.OutcomeSucceeded
	case "FAILED", "CANCELLED":
		res.Outcome, res.FailureCode = paykit.OutcomeFailed, paykit.RefundProviderDeclined
		res.Detail = "xendit: refund " + f.Status + " " + f.FailureCode
	default:
		res.Outcome = paykit.OutcomePending
	}
	return res
}
