package opnfake

import (
	"fmt"
	"net/http"
	"strings"
)

// settle states the fee of a charge of amount that just succeeded and
// makes its transaction (f.mu is held).
func (f *Fake) settle(c map[string]any, amount int64) {
	fee := (amount*365 + 5000) / 10000 // fee_rate 3.65 %
	vat := (fee*7 + 50) / 100          // vat_rate 7 %
	net := amount - fee - vat
	id := f.transaction("credit", "charge.captured.net", str(c["id"]), c["currency"], net, f.opt.AvailableOn(f.opt.Now()))
	c["fee"], c["fee_vat"], c["net"], c["transaction"] = fee, vat, net, id
	c["transaction_fees"] = map[string]any{"fee_flat": "0.0", "fee_rate": "3.65", "vat_rate": "7.0"}
	c["disputable"] = true
}

// Fee reports the fee (fee plus fee_vat) the successful charge under key
// states, and whether there is one.
func (f *Fake) Fee(key string) (int64, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.byKey("charge", key)
	if c == nil || c["status"] != "successful" {
		return 0, false
	}
	fee, _ := num(c["fee"])
	vat, _ := num(c["fee_vat"])
	return fee + vat, true
}

// disputeOf is the newest dispute of the charge under key (f.mu is
// held).
func (f *Fake) disputeOf(key string) map[string]any {
	for i := len(f.order) - 1; i >= 0; i-- {
		d := f.objects[f.order[i]]
		if d["object"] != "dispute" {
			continue
		}
		c := f.objects[str(d["charge"])]
		if md, _ := c["metadata"].(map[string]any); md["paykit_key"] == key {
			return d
		}
	}
	return nil
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

// reasons are the fake's dispute reason codes and their messages.
var reasons = map[string]string{
	"goods_or_services_not_provided": "Services not provided or Merchandise not received",
	"fraudulent":                     "Fraudulent transaction",
	"duplicate_processing":           "Duplicate processing",
	"not_as_described":               "Merchandise or services not as described",
	"credit_not_processed":           "Credit not processed",
	"general":                        "General dispute",
}

// disputeError says why a dispute cannot be opened or decided.
type disputeError string

func (e disputeError) Error() string { return "opnfake: " + string(e) }

// OpenDispute acts as the payer's bank disputing the successful charge
// under key: a dispute of amount (0: the whole charge) with reasonCode
// ("" is goods_or_services_not_provided), status open (event
// dispute.create). It returns the dispute's id. A charge is disputed at
// most once.
func (f *Fake) OpenDispute(key string, amount int64, reasonCode string) (string, error) {
	defer f.flush()
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.byKey("charge", key)
	if c == nil {
		return "", fmt.Errorf("opnfake: no charge under %s", key)
	}
	return f.openDispute(c, amount, reasonCode)
}

// openDispute opens a dispute on charge c (f.mu is held).
func (f *Fake) openDispute(c map[string]any, amount int64, reasonCode string) (string, error) {
	if reasonCode == "" {
		reasonCode = "goods_or_services_not_provided"
	}
	message, ok := reasons[reasonCode]
	switch {
	case !ok:
		return "", disputeError(fmt.Sprintf("%q is not one of the fake's reason codes", reasonCode))
	case c["status"] != "successful":
		return "", disputeError(fmt.Sprintf("charge %s is %s: only a successful charge can be disputed", c["id"], c["status"]))
	case c["dispute"] != nil:
		return "", disputeError(fmt.Sprintf("charge %s is disputed already", c["id"]))
	}
	total, _ := num(c["amount"])
	refunded, _ := num(c["refunded_amount"])
	if amount == 0 {
		amount = total - refunded
	}
	if amount < 1 || amount > total-refunded {
		return "", disputeError(fmt.Sprintf("a dispute of %d on charge %s, of which %d is left", amount, c["id"], total-refunded))
	}
	id := f.newID("dspt")
	debit := f.transaction("debit", "dispute.started.debit", id, c["currency"], amount, f.opt.Now())
	d := map[string]any{
		"object": "dispute", "id": id, "livemode": false, "location": "/disputes/" + id, "admin_message": nil,
		"amount": amount, "funding_amount": amount, "currency": c["currency"], "funding_currency": c["currency"],
		"charge": c["id"], "closed_at": nil, "created_at": f.now(),
		"documents":     map[string]any{"object": "list", "data": []any{}, "limit": 20, "offset": 0, "total": 0, "location": "/disputes/" + id + "/documents", "order": "chronological"},
		"merchant_name": nil, "merchant_uid": nil, "message": nil, "metadata": map[string]any{},
		"reason_code": reasonCode, "reason_message": message, "status": "open", "transactions": []any{debit},
	}
	f.put(id, d)
	c["dispute"], c["disputable"], c["refundable"] = id, false, false
	f.emit("dispute.create", d)
	return id, nil
}

// createDispute is Opn's test-mode POST /charges/{id}/disputes: a dispute
// of the whole charge.
func (f *Fake) createDispute(w http.ResponseWriter, chargeID string) {
	defer f.flush()
	f.mu.Lock()
	defer f.mu.Unlock()
	c, ok := f.objects[chargeID]
	if !ok || c["object"] != "charge" {
		writeError(w, http.StatusNotFound, "not_found", "charge "+chargeID+" was not found")
		return
	}
	id, err := f.openDispute(c, 0, "")
	if err != nil {
		writeError(w, http.StatusBadRequest, "bad_request", strings.TrimPrefix(err.Error(), "opnfake: "))
		return
	}
	writeJSON(w, http.StatusOK, clone(f.objects[id]))
}

// openDisputeNamed finds the dispute id and writes Opn's error when there
// is none or it is not open (f.mu is held).
func (f *Fake) openDisputeNamed(w http.ResponseWriter, id string) map[string]any {
	d, ok := f.objects[id]
	if !ok || d["object"] != "dispute" {
		writeError(w, http.StatusNotFound, "not_found", "dispute "+id+" was not found")
		return nil
	}
	if d["status"] != "open" {
		writeError(w, http.StatusBadRequest, "bad_request", "dispute is "+str(d["status"])+", not open")
		return nil
	}
	return d
}

// updateDispute takes the merchant's message (and metadata) on an open
// dispute: it becomes pending (event dispute.update), or is decided at
// once by the fake's evidence convention.
func (f *Fake) updateDispute(w http.ResponseWriter, r *http.Request, id string) {
	defer f.flush()
	f.mu.Lock()
	defer f.mu.Unlock()
	d := f.openDisputeNamed(w, id)
	if d == nil {
		return
	}
	msg := r.PostFormValue("message")
	for k, v := range metadata(r) {
		d["metadata"].(map[string]any)[k] = v
	}
	if msg != "" {
		d["message"], d["status"] = msg, "pending"
	}
	f.emit("dispute.update", d)
	switch {
	case strings.Contains(msg, "winning_evidence"):
		f.decide(d, "won")
	case strings.Contains(msg, "losing_evidence"):
		f.decide(d, "lost")
	}
	writeJSON(w, http.StatusOK, clone(d))
}

// acceptDispute is the merchant conceding an open dispute: lost.
func (f *Fake) acceptDispute(w http.ResponseWriter, id string) {
	defer f.flush()
	f.mu.Lock()
	defer f.mu.Unlock()
	d := f.openDisputeNamed(w, id)
	if d == nil {
		return
	}
	f.decide(d, "lost")
	writeJSON(w, http.StatusOK, clone(d))
}

// decide closes dispute d as won or lost (event dispute.close); a won
// dispute credits its amount back (f.mu is held).
func (f *Fake) decide(d map[string]any, status string) {
	d["status"], d["closed_at"] = status, f.now()
	if status == "won" {
		amount, _ := num(d["amount"])
		credit := f.transaction("credit", "dispute.won.credit", str(d["id"]), d["currency"], amount, f.opt.Now())
		d["transactions"] = append(d["transactions"].([]any), credit)
	}
	f.emit("dispute.close", d)
}

// DecideDispute decides the pending dispute id, won or lost, as the
// payer's bank does (event dispute.close).
func (f *Fake) DecideDispute(id string, won bool) error {
	defer f.flush()
	f.mu.Lock()
	defer f.mu.Unlock()
	d, ok := f.objects[id]
	switch {
	case !ok || d["object"] != "dispute":
		return disputeError("no dispute " + id)
	case d["status"] != "pending":
		return disputeError(fmt.Sprintf("dispute %s is %s, not pending", id, d["status"]))
	}
	status := "lost"
	if won {
		status = "won"
	}
	f.decide(d, status)
	return nil
}
