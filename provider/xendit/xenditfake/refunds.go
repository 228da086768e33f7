package xenditfake

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// refund is a refund of a payment request.
type refund struct {
	ID               string         `json:"id"`
	PaymentRequestID string         `json:"payment_request_id"`
	PaymentID        string         `json:"payment_id"`
	ReferenceID      string         `json:"reference_id"`
	ChannelCode      string         `json:"channel_code"`
	Currency         string         `json:"currency"`
	Amount           json.Number    `json:"amount"`
	Status           string         `json:"status"`
	Reason           string         `json:"reason"`
	FailureCode      *string        `json:"failure_code"`
	RefundFeeAmount  *json.Number   `json:"refund_fee_amount"`
	Metadata         map[string]any `json:"metadata"`
	Created          string         `json:"created"`
	Updated          string         `json:"updated"`

	amount int64
}

func (f *Fake) createRefund(w http.ResponseWriter, body []byte) {
	var in struct {
		PaymentRequestID string          `json:"payment_request_id"`
		ReferenceID      string          `json:"reference_id"`
		Currency         string          `json:"currency"`
		Amount           json.RawMessage `json:"amount"`
		Reason           string          `json:"reason"`
		Metadata         map[string]any  `json:"metadata"`
	}
	if err := json.Unmarshal(body, &in); err != nil || in.PaymentRequestID == "" || in.Reason == "" {
		writeError(w, http.StatusBadRequest, "API_VALIDATION_ERROR", "payment_request_id and reason are required")
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	pr, ok := f.prs[in.PaymentRequestID]
	if !ok {
		writeError(w, http.StatusNotFound, "DATA_NOT_FOUND", "payment request "+in.PaymentRequestID+" cannot be found")
		return
	}
	amount := pr.amount - f.refunded(pr.ID)
	if len(in.Amount) > 0 && string(in.Amount) != "null" {
		var ok bool
		if amount, ok = parseAmount(in.Amount); !ok {
			writeError(w, http.StatusBadRequest, "API_VALIDATION_ERROR", "amount must be a positive amount")
			return
		}
	}
	ch, _ := spec(pr.ChannelCode, pr.Country)
	switch {
	case in.Currency != "" && in.Currency != pr.Currency:
		writeError(w, http.StatusBadRequest, "INVALID_VALUE_ERROR", "currency does not match the payment request's")
		return
	case pr.Status != "SUCCEEDED" || f.openDisputeOf(pr.ID):
		writeError(w, http.StatusBadRequest, "INELIGIBLE_TRANSACTION_STATUS", "Feature is not allowed for the payment request because of its current status.")
		return
	case !ch.refund:
		writeError(w, http.StatusForbidden, "REFUND_NOT_SUPPORTED", "Refund feature is not available for this payment channel.")
		return
	case !ch.partial && amount != pr.amount:
		writeError(w, http.StatusForbidden, "PARTIAL_REFUND_NOT_SUPPORTED", "Partial Refund feature is not available for this payment channel.")
		return
	case amount > pr.amount-f.refunded(pr.ID):
		writeError(w, http.StatusBadRequest, "REFUND_AMOUNT_EXCEEDED", "Refund amount specified in refund request must be less than or equal to unrefunded capture amount.")
		return
	}
	now := f.now()
	rf := &refund{
		ID: f.newID("rfd-"), PaymentRequestID: pr.ID, PaymentID: pr.LatestPaymentID, ReferenceID: in.ReferenceID,
		ChannelCode: pr.ChannelCode, Currency: pr.Currency, Amount: decimal(amount), Status: "PENDING", Reason: in.Reason,
		Metadata: in.Metadata, Created: stamp(now), Updated: stamp(now), amount: amount,
	}
	if amount%1000 == 911 {
		failure := "REFUND_FAILED"
		rf.Status, rf.FailureCode = "FAILED", &failure
	}
	f.refunds[rf.ID] = rf
	f.rfOrder = append(f.rfOrder, rf.ID)
	if rf.Status == "PENDING" {
		// The refunded amount is held from the balance while pending.
		f.txn("REFUND", "MONEY_OUT", rf.ID, rf.ReferenceID, rf.Currency, rf.amount, now).Status = "PENDING"
	}
	answer := clone(rf)
	if f.opt.Auto && rf.Status == "PENDING" {
		f.settleRefund(rf)
	}
	writeJSON(w, http.StatusOK, answer)
}

// refunded is how much of payment request id is refunded or being
// refunded. f.mu is held.
func (f *Fake) refunded(id string) int64 {
	var n int64
	for _, rf := range f.refunds {
		if rf.PaymentRequestID == id && rf.Status != "FAILED" && rf.Status != "CANCELLED" {
			n += rf.amount
		}
	}
	return n
}

// settleRefund makes a pending refund succeed: its transaction and the
// webhook. f.mu is held.
func (f *Fake) settleRefund(rf *refund) {
	now := f.now()
	rf.Status, rf.Updated = "SUCCEEDED", stamp(now)
	f.txnStatus(rf.ID, "SUCCESS", now)
	f.emit("refund.succeeded", rf)
}

// SettleRefund makes the pending refund under key succeed (webhook
// refund.succeeded).
func (f *Fake) SettleRefund(key string) error {
	defer f.flush()
	f.mu.Lock()
	defer f.mu.Unlock()
	rf := f.refundByRef(key)
	if rf == nil || rf.Status != "PENDING" {
		return fmt.Errorf("xenditfake: no pending refund under %s", key)
	}
	f.settleRefund(rf)
	return nil
}

// FailRefund makes the pending refund under key fail (webhook
// refund.failed).
func (f *Fake) FailRefund(key string) error {
	defer f.flush()
	f.mu.Lock()
	defer f.mu.Unlock()
	rf := f.refundByRef(key)
	if rf == nil || rf.Status != "PENDING" {
		return fmt.Errorf("xenditfake: no pending refund under %s", key)
	}
	failure := "REFUND_FAILED"
	rf.Status, rf.FailureCode, rf.Updated = "FAILED", &failure, stamp(f.now())
	f.txnStatus(rf.ID, "FAILED", f.now())
	f.emit("refund.failed", rf)
	return nil
}

func (f *Fake) listRefunds(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f.mu.Lock()
	var out []json.RawMessage
	for _, id := range f.rfOrder {
		rf := f.refunds[id]
		if (q.Get("reference_id") == "" || rf.ReferenceID == q.Get("reference_id")) &&
			(q.Get("payment_request_id") == "" || rf.PaymentRequestID == q.Get("payment_request_id")) {
			out = append(out, clone(rf))
		}
	}
	f.mu.Unlock()
	writeList(w, out)
}

func (f *Fake) getRefund(w http.ResponseWriter, id string) { getObject(f, w, f.refunds, id, "refund") }

// refundByRef is the newest refund under reference_id key. f.mu is held.
func (f *Fake) refundByRef(key string) *refund {
	for i := len(f.rfOrder) - 1; i >= 0; i-- {
		if rf := f.refunds[f.rfOrder[i]]; rf.ReferenceID == key {
			return rf
		}
	}
	return nil
}

// CancelRefund cancels the pending refund under key, as the merchant
// does from the Dashboard (CANCELLED).
func (f *Fake) CancelRefund(key string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	rf := f.refundByRef(key)
	if rf == nil || rf.Status != "PENDING" {
		return fmt.Errorf("xenditfake: no pending refund under %s", key)
	}
	rf.Status, rf.Updated = "CANCELLED", stamp(f.now())
	f.txnStatus(rf.ID, "VOIDED", f.now())
	return nil
}
