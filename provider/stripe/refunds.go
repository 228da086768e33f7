package stripe

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/paykit/paykit"
)

// refund is the part of Stripe's Refund object the adapter reads.
type refund struct {
	ID            string            `json:"id"`
	Object        string            `json:"object"`
	Amount        int64             `json:"amount"`
	Currency      string            `json:"currency"`
	Status        string            `json:"status"`
	FailureReason string            `json:"failure_reason"`
	PaymentIntent string            `json:"payment_intent"`
	Metadata      map[string]string `json:"metadata"`
}

func decodeRefund(a *answer) (*refund, bool) {
	var rf refund
	if json.Unmarshal(a.body, &rf) != nil || rf.Object != "refund" || rf.ID == "" {
		return nil, false
	}
	return &rf, true
}

// refundResult maps a Refund to paykit's vocabulary.
func refundResult(rf *refund) paykit.Result {
	r := paykit.Result{Reference: rf.ID, Detail: "stripe: refund " + rf.Status}
	switch rf.Status {
	case "pending", "requires_action":
		// requires_action: the payer must give Stripe a destination
		// (PromptPay, say); Stripe asks them by email.
		r.Outcome = paykit.OutcomePending
	case "succeeded":
		r.Outcome = paykit.OutcomeSucceeded
	case "failed", "canceled":
		r.Outcome, r.FailureCode = paykit.OutcomeFailed, paykit.RefundProviderDeclined
		if rf.FailureReason != "" {
			r.Detail += " failure_reason " + rf.FailureReason
		}
	default:
		r.Outcome = paykit.OutcomeUnknown
	}
	return r
}

// CreateRefund refunds a payment through POST /v1/refunds under the Key's
// Idempotency-Key. A refund of a Checkout Session refunds its
// PaymentIntent.
func (p *Provider) CreateRefund(ctx context.Context, req paykit.RefundRequest) paykit.Result {
	if req.Key == "" || req.Amount <= 0 {
		return paykit.Result{Outcome: paykit.OutcomeFailed, FailureCode: paykit.RefundProviderError, Detail: "stripe: not sent: a refund needs a key and a positive amount"}
	}
	piID := req.PaymentRef
	switch {
	case piID == "":
		at, r := p.lookup(ctx, req.PaymentKey)
		if at == nil {
			// Nothing was sent: a retry may find the payment.
			r.Outcome = paykit.OutcomeUnacknowledged
			return r
		}
		piID = at.paymentIntentID()
	case strings.HasPrefix(piID, "cs_"):
		s, r := p.session(ctx, piID)
		if s == nil {
			if r.Outcome == paykit.OutcomeUnknown || r.Outcome == paykit.OutcomeNotFound {
				r.Outcome = paykit.OutcomeUnacknowledged // the refund was not sent
			}
			return r
		}
		piID = s.paymentIntentID()
	}
	if piID == "" { // a Checkout Session without one yet
		return paykit.Result{Outcome: paykit.OutcomeFailed, FailureCode: paykit.RefundProviderError, Detail: "stripe: the Checkout Session has no PaymentIntent to refund"}
	}
	f := url.Values{}
	f.Set("payment_intent", piID)
	f.Set("amount", strconv.FormatInt(req.Amount, 10))
	f.Set("metadata["+MetadataKey+"]", req.Key)
	a, fail := p.call(ctx, http.MethodPost, "/v1/refunds", f, req.Key)
	if fail != nil {
		return fail.r
	}
	if a.err == nil {
		rf, ok := decodeRefund(a)
		if !ok {
			return unknown("the refund answer is not a Refund")
		}
		return refundResult(rf)
	}
	d := errDetail(a)
	switch {
	case idempotencyConflict(a):
		return paykit.Result{Outcome: paykit.OutcomeUnknown, Detail: d}
	case a.status == http.StatusBadRequest || a.status == http.StatusPaymentRequired:
		// Stripe refused the refund (more than refundable, a charge
		// already refunded, ...): no refund was created.
		return paykit.Result{Outcome: paykit.OutcomeFailed, FailureCode: paykit.RefundProviderDeclined, Detail: d}
	case a.status == http.StatusUnauthorized || a.status == http.StatusForbidden || a.status == http.StatusNotFound:
		return paykit.Result{Outcome: paykit.OutcomeFailed, FailureCode: paykit.RefundProviderError, Detail: d}
	}
	return paykit.Result{Outcome: paykit.OutcomeUnknown, Detail: d}
}

// InquireRefund reads the refund by id, or, without one, looks for its Key
// among the newest refunds (Stripe has no refund search): not found in a
// complete list is NotFound, in a partial one Unknown.
func (p *Provider) InquireRefund(ctx context.Context, ref paykit.AttemptRef) paykit.Result {
	if ref.Reference != "" {
		a, fail := p.call(ctx, http.MethodGet, "/v1/refunds/"+url.PathEscape(ref.Reference), nil, "")
		if fail != nil {
			return fail.r
		}
		if a.err != nil {
			return readError(a)
		}
		rf, ok := decodeRefund(a)
		if !ok {
			return unknown("the answer is not a Refund")
		}
		return refundResult(rf)
	}
	rfs, r := listNewest[refund](ctx, p, "/v1/refunds")
	if r.Outcome != "" {
		return r
	}
	if rf := keyed(rfs, ref.Key, func(rf *refund) (bool, map[string]string) { return rf.Object == "refund", rf.Metadata }); rf != nil {
		return refundResult(rf)
	}
	// Even a complete list is not Stripe's word (see lookup).
	return unknown("no refund under the key among the newest %d", listScan)
}
