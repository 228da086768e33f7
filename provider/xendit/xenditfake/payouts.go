package xenditfake

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// payout is a Payouts API v2 payout.
type payout struct {
	ID                   string            `json:"id"`
	Amount               json.Number       `json:"amount"`
	ChannelCode          string            `json:"channel_code"`
	Currency             string            `json:"currency"`
	Description          string            `json:"description,omitempty"`
	ReferenceID          string            `json:"reference_id"`
	Status               string            `json:"status"`
	FailureCode          string            `json:"failure_code,omitempty"`
	Created              string            `json:"created"`
	Updated              string            `json:"updated"`
	EstimatedArrivalTime string            `json:"estimated_arrival_time"`
	BusinessID           string            `json:"business_id"`
	ChannelProperties    map[string]string `json:"channel_properties"`
	Metadata             map[string]any    `json:"metadata,omitempty"`

	amount int64
}

// payoutCurrencies are the currencies of the channel code prefixes the
// fake pays out to.
var payoutCurrencies = map[string]string{"MY_": "MYR", "TH_": "THB"}

func (f *Fake) createPayout(w http.ResponseWriter, body []byte) {
	var in struct {
		ReferenceID       string            `json:"reference_id"`
		ChannelCode       string            `json:"channel_code"`
		ChannelProperties map[string]string `json:"channel_properties"`
		Amount            json.RawMessage   `json:"amount"`
		Currency          string            `json:"currency"`
		Description       string            `json:"description"`
		Metadata          map[string]any    `json:"metadata"`
	}
	if err := json.Unmarshal(body, &in); err != nil || in.ReferenceID == "" || in.ChannelCode == "" || in.Currency == "" {
		writeError(w, http.StatusBadRequest, "API_VALIDATION_ERROR", "reference_id, channel_code, channel_properties, amount and currency are required")
		return
	}
	amount, ok := parseAmount(in.Amount)
	if !ok {
		writeError(w, http.StatusBadRequest, "RECIPIENT_AMOUNT_ERROR", "amount is not a valid amount for the channel")
		return
	}
	prefix := in.ChannelCode[:min(3, len(in.ChannelCode))]
	if ccy, ok := payoutCurrencies[prefix]; !ok || ccy != in.Currency || len(in.ChannelCode) < 5 {
		writeError(w, http.StatusBadRequest, "CHANNEL_CODE_NOT_SUPPORTED_ERROR", "channel_code "+in.ChannelCode+" is not supported for "+in.Currency)
		return
	}
	number, holder := in.ChannelProperties["account_number"], in.ChannelProperties["account_holder_name"]
	if number == "" || holder == "" || strings.Trim(number, "0123456789") != "" {
		writeError(w, http.StatusBadRequest, "RECIPIENT_ACCOUNT_NUMBER_ERROR", "account_number must be digits and account_holder_name is required")
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	now := f.now()
	po := &payout{
		ID: f.newID("disb-"), Amount: decimal(amount), ChannelCode: in.ChannelCode, Currency: in.Currency, Description: in.Description,
		ReferenceID: in.ReferenceID, Status: "ACCEPTED", Created: stamp(now), Updated: stamp(now),
		EstimatedArrivalTime: stamp(now.Add(15 * time.Minute)), BusinessID: businessID,
		ChannelProperties: map[string]string{"account_number": number, "account_holder_name": holder}, Metadata: in.Metadata,
		amount: amount,
	}
	f.payouts[po.ID] = po
	f.poOrder = append(f.poOrder, po.ID)
	t := f.txn("DISBURSEMENT", "MONEY_OUT", po.ID, po.ReferenceID, po.Currency, po.amount, now)
	t.Status, t.ChannelCategory, t.ChannelCode = "PENDING", "BANK", po.ChannelCode
	answer := clone(po)
	if f.opt.Auto && number != HoldAccount {
		f.send(po)
		if number == InvalidAccount {
			f.fail(po, "INVALID_DESTINATION")
		} else {
			f.succeed(po)
		}
	}
	writeJSON(w, http.StatusOK, answer)
}

// send hands the payout to the channel. f.mu is held.
func (f *Fake) send(po *payout) { po.Status, po.Updated = "REQUESTED", stamp(f.now()) }

// succeed completes a sent payout: its DISBURSEMENT transaction and the
// webhook. f.mu is held.
func (f *Fake) succeed(po *payout) {
	now := f.now()
	po.Status, po.Updated = "SUCCEEDED", stamp(now)
	f.txnStatus(po.ID, "SUCCESS", now)
	f.emit("payout.succeeded", po)
}

// fail ends a payout with code. f.mu is held.
func (f *Fake) fail(po *payout, code string) {
	po.Status, po.FailureCode, po.Updated = "FAILED", code, stamp(f.now())
	f.txnStatus(po.ID, "FAILED", f.now())
	f.emit("payout.failed", po)
}

func (f *Fake) listPayouts(w http.ResponseWriter, r *http.Request) {
	ref := r.URL.Query().Get("reference_id")
	if ref == "" {
		writeError(w, http.StatusBadRequest, "API_VALIDATION_ERROR", "reference_id is required")
		return
	}
	f.mu.Lock()
	var out []json.RawMessage
	for _, id := range f.poOrder {
		if po := f.payouts[id]; po.ReferenceID == ref {
			out = append(out, clone(po))
		}
	}
	f.mu.Unlock()
	writeList(w, out)
}

func (f *Fake) getPayout(w http.ResponseWriter, id string) { getObject(f, w, f.payouts, id, "payout") }

func (f *Fake) cancelPayout(w http.ResponseWriter, id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	po, ok := f.payouts[id]
	switch {
	case !ok:
		writeError(w, http.StatusNotFound, "DATA_NOT_FOUND", "payout "+id+" cannot be found")
		return
	case po.Status != "ACCEPTED":
		writeError(w, http.StatusBadRequest, "INVALID_PAYOUT_STATUS", "payout is "+po.Status+": only an ACCEPTED payout can be cancelled")
		return
	}
	po.Status, po.Updated = "CANCELLED", stamp(f.now())
	f.txnStatus(po.ID, "VOIDED", f.now())
	writeJSON(w, http.StatusOK, po)
}

// payoutByRef is the newest payout under reference_id key. f.mu is held.
func (f *Fake) payoutByRef(key string) *payout {
	for i := len(f.poOrder) - 1; i >= 0; i-- {
		if po := f.payouts[f.poOrder[i]]; po.ReferenceID == key {
			return po
		}
	}
	return nil
}

// movePayout applies fn to the payout under key if it is in one of
// states, then posts its webhooks.
func (f *Fake) movePayout(key string, fn func(*payout), states ...string) error {
	defer f.flush()
	f.mu.Lock()
	defer f.mu.Unlock()
	po := f.payoutByRef(key)
	if po == nil {
		return fmt.Errorf("xenditfake: no payout under %s", key)
	}
	for _, s := range states {
		if po.Status == s {
			fn(po)
			return nil
		}
	}
	return fmt.Errorf("xenditfake: payout %s is %s", po.ID, po.Status)
}

// SendPayout hands the accepted payout under key to its channel
// (REQUESTED).
func (f *Fake) SendPayout(key string) error { return f.movePayout(key, f.send, "ACCEPTED") }

// CompletePayout makes the payout under key succeed (webhook
// payout.succeeded).
func (f *Fake) CompletePayout(key string) error {
	return f.movePayout(key, f.succeed, "ACCEPTED", "REQUESTED")
}

// FailPayout makes the payout under key fail with code (webhook
// payout.failed).
func (f *Fake) FailPayout(key, code string) error {
	return f.movePayout(key, func(po *payout) { f.fail(po, code) }, "ACCEPTED", "REQUESTED")
}

// ReversePayout makes the bank send the succeeded payout under key back
// (REVERSED, webhook payout.reversed): its transaction is reversed.
func (f *Fake) ReversePayout(key string) error {
	return f.movePayout(key, func(po *payout) {
		po.Status, po.Updated = "REVERSED", stamp(f.now())
		f.txnStatus(po.ID, "REVERSED", f.now())
		f.emit("payout.reversed", po)
	}, "SUCCEEDED")
}

// Received reports the amount and currency of the payment request,
// refund or payout under reference_id key.
func (f *Fake) Received(key string) (int64, string, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if pr := f.prByRef(key); pr != nil {
		return pr.amount, pr.Currency, true
	}
	if rf := f.refundByRef(key); rf != nil {
		return rf.amount, rf.Currency, true
	}
	if po := f.payoutByRef(key); po != nil {
		return po.amount, po.Currency, true
	}
	return 0, "", false
}

// HoldForCompliance puts the accepted payout under key under Xendit's
// compliance review (PENDING_COMPLIANCE_ASSESSMENT).
func (f *Fake) HoldForCompliance(key string) error {
	return f.movePayout(key, func(po *payout) {
		po.Status, po.Updated = "PENDING_COMPLIANCE_ASSESSMENT", stamp(f.now())
	}, "ACCEPTED")
}

// RejectForCompliance ends the payout under review under key
// (COMPLIANCE_REJECTED).
func (f *Fake) RejectForCompliance(key string) error {
	return f.movePayout(key, func(po *payout) {
		po.Status, po.Updated = "COMPLIANCE_REJECTED", stamp(f.now())
		f.txnStatus(po.ID, "FAILED", f.now())
		f.emit("payout.failed", po)
	}, "PENDING_COMPLIANCE_ASSESSMENT")
}
