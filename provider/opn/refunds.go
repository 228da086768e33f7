package opn

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/paykit/paykit"
)

// refund is the part of Opn's refund object the adapter reads.
type refund struct {
	Object   string            `json:"object"`
	ID       string            `json:"id"`
	Amount   json.Number       `json:"amount"`
	Currency string            `json:"currency"`
	Charge   string            `json:"charge"`
	Status   string            `json:"status"`
	Voided   bool              `json:"voided"`
	Metadata map[string]string `json:"metadata"`
}

// refundRef is a refund's Reference: Opn retrieves refunds under their
// charge, so it names both, "chrg_…/rfnd_…".
func refundRef(chargeID, refundID string) string { return chargeID + "/" + refundID }

// CreateRefund refunds a charge (POST /charges/{id}/refunds) with
// metadata paykit_key and the Key as Idempotency-Key, after a search for
// a refund under the Key.
func (p *Provider) CreateRefund(ctx context.Context, req paykit.RefundRequest) paykit.Result {
	ctx, cancel := p.withTimeout(ctx)
	defer cancel()
	if found := p.existing(ctx, "refund", req.Key); found != nil {
		return refundResult(found)
	}
	chargeID := req.PaymentRef
	if chargeID == "" {
		charges, fault := p.search(ctx, "charge", req.PaymentKey)
		switch {
		case fault != nil:
			return *fault
		case len(charges) == 0:
			return paykit.Result{Outcome: paykit.OutcomeRefused, Detail: "opn: no charge to refund under paykit_key " + req.PaymentKey}
		}
		var c charge
		if err := decodeJSON(charges[0], &c); err != nil || c.ID == "" {
			return paykit.Result{Outcome: paykit.OutcomeUnknown, Detail: "opn: search gave an unreadable charge"}
		}
		chargeID = c.ID
	}
	form := url.Values{"amount": {fmt.Sprint(req.Amount)}, "metadata[paykit_key]": {req.Key}}
	r := p.call(ctx, http.MethodPost, "/charges/"+url.PathEscape(chargeID)+"/refunds", form, "paykit-refund-"+req.Key)
	switch {
	case r.fault != nil:
		return *r.fault
	case r.err != nil && (r.status == http.StatusBadRequest || r.status == http.StatusUnprocessableEntity):
		// Opn's word: it will not refund this (an amount above what is
		// refundable, a charge that cannot be refunded).
		return paykit.Result{Outcome: paykit.OutcomeFailed, FailureCode: paykit.RefundProviderDeclined, Detail: r.errorDetail()}
	case r.err != nil:
		return r.createErrorResult()
	}
	return refundResult(r.body)
}

// InquireRefund reads the refund: by its Reference
// (GET /charges/{charge}/refunds/{id}), else by a search on its Key.
func (p *Provider) InquireRefund(ctx context.Context, ref paykit.AttemptRef) paykit.Result {
	ctx, cancel := p.withTimeout(ctx)
	defer cancel()
	chargeID, refundID, ok := strings.Cut(ref.Reference, "/")
	if !ok || chargeID == "" || refundID == "" {
		found, end := p.first(ctx, "refund", ref.Key)
		if end != nil {
			return *end
		}
		return refundResult(found)
	}
	body, end := p.get(ctx, "/charges/"+url.PathEscape(chargeID)+"/refunds/"+url.PathEscape(refundID))
	if end != nil {
		return *end
	}
	return refundResult(body)
}

// refundResult maps a refund object.
func refundResult(raw []byte) paykit.Result {
	var f refund
	if err := decodeJSON(raw, &f); err != nil || f.Object != "refund" || f.ID == "" {
		return paykit.Result{Outcome: paykit.OutcomeUnknown, Detail: "opn: answer is not a refund object"}
	}
	res := paykit.Result{Reference: refundRef(f.Charge, f.ID), Detail: "opn: refund " + f.Status}
	switch {
	case f.Status == "closed" || f.Status == "successful" || f.Voided:
		res.Outcome = paykit.OutcomeSucceeded
	case f.Status == "failed":
		res.Outcome, res.FailureCode = paykit.OutcomeFailed, paykit.RefundProviderDeclined
	default:
		res.Outcome = paykit.OutcomePending
	}
	return res
}
