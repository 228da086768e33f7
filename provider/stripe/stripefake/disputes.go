package stripefake

import (
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"
	"time"
)

// DisputeFee is the fee the fake's balance transaction withdraws with a
// dispute's amount, kept when the dispute is won.
const DisputeFee = 1500

// str is v as a string, "" if it is none.
func str(v any) string {
	s, _ := v.(string)
	return s
}

// fee is the fake's fee for a charge of amount by a payment method type.
func fee(amount int64, typ string) int64 {
	f := (amount*300 + 5000) / 10000
	if typ == "card" {
		f += 100
	}
	return f
}

// charge makes the succeeded charge of pi and its balance transaction,
// and returns the charge's id (under f.mu).
func (f *Fake) charge(pi map[string]any) string {
	amt, ccy := pi["amount"].(int64), str(pi["currency"])
	typ := "card"
	if types, ok := pi["payment_method_types"].([]string); ok && len(types) > 0 {
		typ = types[0]
	}
	now := f.now()
	chID, txnID := newID("ch_", 24), newID("txn_", 24)
	fe := fee(amt, typ)
	btType := "charge" // a card charge; other methods' charges are payments
	if typ != "card" {
		btType = "payment"
	}
	f.bts = append(f.bts, &object{m: map[string]any{
		"id": txnID, "object": "balance_transaction", "amount": amt, "currency": ccy, "created": now,
		"available_on": f.opts.AvailableOn(time.Unix(now, 0)).Unix(),
		"description":  nil, "exchange_rate": nil, "fee": fe, "net": amt - fe, "reporting_category": "charge",
		"fee_details": []map[string]any{{"amount": fe, "application": nil, "currency": ccy, "description": "Stripe processing fees", "type": "stripe_fee"}},
		"source":      chID, "status": "pending", "type": btType,
	}})
	md := map[string]any{}
	if m, ok := pi["metadata"].(map[string]any); ok {
		maps.Copy(md, m)
	}
	f.chs = append(f.chs, &object{m: map[string]any{
		"id": chID, "object": "charge", "amount": amt, "amount_captured": amt, "amount_refunded": int64(0),
		"balance_transaction": txnID, "captured": true, "created": now, "currency": ccy, "disputed": false,
		"livemode": false, "metadata": md, "paid": true, "payment_intent": pi["id"], "payment_method": pi["payment_method"],
		"refunded": false, "status": "succeeded", "failure_code": nil, "failure_message": nil, "description": nil,
	}})
	return chID
}

// Fee reports the fee the balance transaction of the succeeded payment
// under key states (in its currency), and whether there is one.
func (f *Fake) Fee(key string) (int64, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	pi := byKey(f.pis, key)
	if pi == nil {
		return 0, false
	}
	ch := find(f.chs, "id", str(pi.m["latest_charge"]))
	if ch == nil {
		return 0, false
	}
	bt := find(f.bts, "id", str(ch.m["balance_transaction"]))
	if bt == nil {
		return 0, false
	}
	return bt.m["fee"].(int64), true
}

// byID finds any object of the fake by its id.
func (f *Fake) byID(id string) *object {
	for prefix, objs := range map[string][]*object{"pi_": f.pis, "cs_": f.css, "re_": f.res, "ch_": f.chs, "txn_": f.bts, "du_": f.dps, "po_": f.pos} {
		if strings.HasPrefix(id, prefix) {
			return find(objs, "id", id)
		}
	}
	return nil
}

// expand answers obj with the fields named by paths (expand[]) replaced
// by the objects their ids name, as Stripe expands them; the stored
// objects stay as they are.
func (f *Fake) expand(obj map[string]any, paths []string) (map[string]any, *apiErr) {
	for _, p := range paths {
		var err *apiErr
		if obj, err = f.expandPath(obj, strings.Split(p, "."), p); err != nil {
			return nil, err
		}
	}
	return obj, nil
}

func (f *Fake) expandPath(obj map[string]any, path []string, full string) (map[string]any, *apiErr) {
	c := maps.Clone(obj)
	field := path[0]
	v, ok := c[field]
	cannot := invalid("expand", "This property cannot be expanded (%s).", full)
	if !ok {
		return nil, cannot
	}
	if items, ok := v.([]map[string]any); ok && field == "data" && len(path) > 1 {
		out := make([]map[string]any, len(items))
		for i, it := range items {
			e, err := f.expandPath(it, path[1:], full)
			if err != nil {
				return nil, err
			}
			out[i] = e
		}
		c[field] = out
		return c, nil
	}
	var m map[string]any
	switch x := v.(type) {
	case nil:
		return c, nil
	case string:
		o := f.byID(x)
		if o == nil {
			return nil, cannot
		}
		m = o.m
	case map[string]any:
		m = x
	default:
		return nil, cannot
	}
	if len(path) > 1 {
		var err *apiErr
		if m, err = f.expandPath(m, path[1:], full); err != nil {
			return nil, err
		}
	}
	c[field] = m
	return c, nil
}

// disputesOf are the disputes of the payment under key, oldest first.
func (f *Fake) disputesOf(key string) []*object {
	var out []*object
	for _, d := range f.dps {
		pi := find(f.pis, "id", str(d.m["payment_intent"]))
		if pi == nil {
			continue
		}
		if md, _ := pi.m["metadata"].(map[string]any); md["paykit_key"] == key {
			out = append(out, d)
		}
	}
	return out
}

// reasons are the dispute reasons of Stripe's Dispute object.
var reasons = []string{"bank_cannot_process", "check_returned", "credit_not_processed", "customer_initiated", "debit_not_authorized",
	"duplicate", "fraudulent", "general", "incorrect_account_details", "insufficient_funds", "noncompliant",
	"product_not_received", "product_unacceptable", "subscription_canceled", "unrecognized"}

// evidenceFields are the fields of a dispute's evidence.
var evidenceFields = []string{"access_activity_log", "billing_address", "cancellation_policy", "cancellation_policy_disclosure",
	"cancellation_rebuttal", "customer_communication", "customer_email_address", "customer_name", "customer_purchase_ip",
	"customer_signature", "duplicate_charge_documentation", "duplicate_charge_explanation", "duplicate_charge_id",
	"product_description", "receipt", "refund_policy", "refund_policy_disclosure", "refund_refusal_explanation", "service_date",
	"service_documentation", "shipping_address", "shipping_carrier", "shipping_date", "shipping_documentation",
	"shipping_tracking_number", "uncategorized_file", "uncategorized_text"}

// OpenDispute acts as the payer's bank disputing the succeeded payment
// under key, as a dispute test card does in Stripe's test mode: a dispute
// of amount (0: what is neither refunded nor disputed) for reason (""
// is general), status needs_response, its funds and the dispute fee
// withdrawn (events charge.dispute.created, charge.dispute.funds_withdrawn).
// It returns the dispute's id. A charge is disputed at most once.
func (f *Fake) OpenDispute(key string, amount int64, reason string) (string, error) {
	var id string
	err := f.act(func() error {
		var err error
		id, err = f.openDispute(key, amount, reason)
		return err
	})
	return id, err
}

func (f *Fake) openDispute(key string, amount int64, reason string) (string, error) {
	if reason == "" {
		reason = "general"
	}
	if !slices.Contains(reasons, reason) {
		return "", fmt.Errorf("stripefake: %q is not a dispute reason", reason)
	}
	pi := byKey(f.pis, key)
	if pi == nil {
		return "", ErrNotFound
	}
	ch := find(f.chs, "id", str(pi.m["latest_charge"]))
	switch {
	case pi.m["status"] != "succeeded" || ch == nil:
		return "", fmt.Errorf("stripefake: PaymentIntent %s is %s: only a succeeded payment can be disputed", pi.m["id"], pi.m["status"])
	case ch.m["disputed"] == true:
		return "", fmt.Errorf("stripefake: charge %s is disputed already", ch.m["id"])
	}
	left := ch.m["amount"].(int64) - f.refunded(str(pi.m["id"]))
	if amount == 0 {
		amount = left
	}
	if amount < 1 || amount > left {
		return "", fmt.Errorf("stripefake: a dispute of %d on charge %s, of which %d is left", amount, ch.m["id"], left)
	}
	now, ccy := f.now(), str(ch.m["currency"])
	id := newID("du_", 24)
	bt := map[string]any{
		"id": newID("txn_", 24), "object": "balance_transaction", "amount": -amount, "currency": ccy, "created": now,
		"available_on": now, "description": "Chargeback withdrawal for " + str(ch.m["id"]), "exchange_rate": nil,
		"fee": int64(DisputeFee), "net": -amount - DisputeFee, "reporting_category": "dispute",
		"fee_details": []map[string]any{{"amount": int64(DisputeFee), "application": nil, "currency": ccy, "description": "Dispute fee", "type": "stripe_fee"}},
		"source":      id, "status": "available", "type": "adjustment",
	}
	f.bts = append(f.bts, &object{m: bt})
	evidence := map[string]any{}
	for _, k := range evidenceFields {
		evidence[k] = nil
	}
	d := map[string]any{
		"id": id, "object": "dispute", "amount": amount, "balance_transactions": []map[string]any{bt},
		"charge": ch.m["id"], "created": now, "currency": ccy, "evidence": evidence,
		"evidence_details":     map[string]any{"due_by": now + 7*24*3600, "has_evidence": false, "past_due": false, "submission_count": int64(0)},
		"is_charge_refundable": false, "livemode": false, "metadata": map[string]any{}, "payment_intent": pi.m["id"],
		"reason": reason, "status": "needs_response",
	}
	f.dps = append(f.dps, &object{m: d})
	ch.m["disputed"] = true
	f.emit("charge.dispute.created", d)
	f.emit("charge.dispute.funds_withdrawn", d)
	return id, nil
}

// notOpen is Stripe's refusal of an update of a dispute in status st.
func notOpen(st string) *apiErr {
	if st == "under_review" {
		return invalid("", "This dispute is under review: its evidence was submitted and cannot be changed.")
	}
	return invalid("", "This dispute is already closed.")
}

// updateDispute stages evidence[...] and metadata[...] on an open
// dispute and, unless submit=false (Stripe's default is to submit),
// submits it: under_review, then won or lost as the evidence's
// uncategorized_text asks (winning_evidence, losing_evidence).
func (f *Fake) updateDispute(id string, form url.Values) (map[string]any, *apiErr) {
	o := find(f.dps, "id", id)
	if o == nil {
		return nil, missing("dispute", id)
	}
	d := o.m
	if st := str(d["status"]); st != "needs_response" {
		return nil, notOpen(st)
	}
	ev := d["evidence"].(map[string]any)
	staged := metadata(form, "evidence")
	for k := range staged {
		if _, ok := ev[k]; !ok {
			return nil, invalid("evidence["+k+"]", "Received unknown parameter: evidence[%s]", k)
		}
	}
	if s := form.Get("submit"); s != "" && s != "true" && s != "false" {
		return nil, invalid("submit", "Invalid boolean: %s", s)
	}
	maps.Copy(ev, staged)
	maps.Copy(d["metadata"].(map[string]any), metadata(form, "metadata"))
	details := d["evidence_details"].(map[string]any)
	if len(staged) > 0 {
		details["has_evidence"] = true
	}
	if form.Get("submit") == "false" {
		f.emit("charge.dispute.updated", d)
		return d, nil
	}
	details["submission_count"] = details["submission_count"].(int64) + 1
	d["status"] = "under_review"
	f.emit("charge.dispute.updated", d)
	switch text := str(ev["uncategorized_text"]); {
	case strings.Contains(text, "winning_evidence"):
		f.decide(o, true)
	case strings.Contains(text, "losing_evidence"):
		f.decide(o, false)
	}
	return d, nil
}

// decide closes the dispute won (its amount reinstated, the fee kept) or
// lost.
func (f *Fake) decide(o *object, won bool) {
	d := o.m
	if !won {
		d["status"] = "lost"
		f.emit("charge.dispute.closed", d)
		return
	}
	d["status"] = "won"
	now, amt, ccy := f.now(), d["amount"].(int64), str(d["currency"])
	bt := map[string]any{
		"id": newID("txn_", 24), "object": "balance_transaction", "amount": amt, "currency": ccy, "created": now,
		"available_on": now, "description": "Chargeback reversal for " + str(d["charge"]), "exchange_rate": nil,
		"fee": int64(0), "net": amt, "reporting_category": "dispute_reversal", "fee_details": []map[string]any{},
		"source": d["id"], "status": "available", "type": "adjustment",
	}
	f.bts = append(f.bts, &object{m: bt})
	d["balance_transactions"] = append(d["balance_transactions"].([]map[string]any), bt)
	f.emit("charge.dispute.funds_reinstated", d)
	f.emit("charge.dispute.closed", d)
}

// closeDispute is the merchant conceding an open dispute: lost.
func (f *Fake) closeDispute(id string) (map[string]any, *apiErr) {
	o := find(f.dps, "id", id)
	if o == nil {
		return nil, missing("dispute", id)
	}
	if st := str(o.m["status"]); st != "needs_response" {
		return nil, notOpen(st)
	}
	f.decide(o, false)
	return o.m, nil
}

// DecideDispute closes the dispute with id under review, won or lost, as
// the payer's bank decides it (events charge.dispute.closed, and
// charge.dispute.funds_reinstated when won).
func (f *Fake) DecideDispute(id string, won bool) error {
	return f.act(func() error {
		o := find(f.dps, "id", id)
		switch {
		case o == nil:
			return ErrNotFound
		case o.m["status"] != "under_review":
			return fmt.Errorf("stripefake: dispute %s is %s, not under review", id, o.m["status"])
		}
		f.decide(o, won)
		return nil
	})
}
