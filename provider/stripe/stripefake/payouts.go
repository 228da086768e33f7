package stripefake

import (
	"fmt"
	"net/url"
	"slices"
	"strconv"
)

// Payouts: Stripe pays an account's available balance out to its bank in
// automatic payouts, and lists the balance transactions each one paid out
// (GET /v1/balance_transactions?payout=po_…, the payout's own
// transaction among them). The fake pays out when told (PayOut), and its
// payouts arrive at once.

// refundTransaction makes the balance transaction of refund rf of the
// PaymentIntent pi and returns its id (under f.mu): the refunded amount
// leaving the balance (type refund for a card, payment_refund for other
// methods), or, with failed, coming back because the refund failed
// (adjustment with reporting_category refund_failure for a card,
// payment_failure_refund for others). Refunds cost no fee.
func (f *Fake) refundTransaction(rf, pi map[string]any, failed bool) string {
	card := true
	if types, ok := pi["payment_method_types"].([]string); ok && len(types) > 0 {
		card = types[0] == "card"
	}
	amt := rf["amount"].(int64)
	typ, category := map[bool]string{true: "refund", false: "payment_refund"}[card], "refund"
	if failed {
		typ, category = map[bool]string{true: "adjustment", false: "payment_failure_refund"}[card], "refund_failure"
	} else {
		amt = -amt
	}
	now, id := f.now(), newID("txn_", 24)
	f.bts = append(f.bts, &object{m: map[string]any{
		"id": id, "object": "balance_transaction", "amount": amt, "currency": rf["currency"], "created": now,
		"available_on": now, "description": nil, "exchange_rate": nil, "fee": int64(0), "net": amt,
		"reporting_category": category, "fee_details": []map[string]any{}, "source": rf["id"], "status": "available", "type": typ,
	}})
	return id
}

// PayOut acts as Stripe's automatic payout schedule: for each currency, it
// pays out, in one payout of their net, every balance transaction
// available by the fake's clock (available_on) that no payout paid out
// yet; none when that net is zero, nor when it is negative unless
// Options.DebitNegativeBalances (Stripe's support pages: where it does not
// debit the account's bank, as in Singapore, a negative balance stays
// until payments make it positive, and payouts wait; where it does, as in
// the US, a withdrawal with a negative amount covers it). The payouts are status (paid,
// pending or in_transit; "" is paid); a paid one's reconciliation is
// completed. It returns their ids, in the order made (events
// payout.created, and for a paid one payout.paid and
// payout.reconciliation_completed).
func (f *Fake) PayOut(status string) ([]string, error) {
	if status == "" {
		status = "paid"
	}
	if !slices.Contains([]string{"paid", "pending", "in_transit"}, status) {
		return nil, fmt.Errorf("stripefake: a payout is made paid, pending or in_transit, not %q", status)
	}
	var ids []string
	err := f.act(func() error {
		ids = f.payOut(status)
		return nil
	})
	return ids, err
}

// payOut pays out what is available, as PayOut does (under f.mu).
func (f *Fake) payOut(status string) []string {
	now := f.now()
	due := map[string][]*object{}
	var ccys []string
	for _, bt := range f.bts {
		if f.paidIn[str(bt.m["id"])] != "" || bt.m["available_on"].(int64) > now {
			continue
		}
		ccy := str(bt.m["currency"])
		if due[ccy] == nil {
			ccys = append(ccys, ccy)
		}
		due[ccy] = append(due[ccy], bt)
	}
	slices.Sort(ccys)
	var ids []string
	for _, ccy := range ccys {
		var net int64
		for _, bt := range due[ccy] {
			net += bt.m["net"].(int64)
		}
		if net == 0 || net < 0 && !f.opts.DebitNegativeBalances {
			continue
		}
		po := f.payout(ccy, net, status)
		for _, bt := range due[ccy] {
			bt.m["status"] = "available"
			f.paidIn[str(bt.m["id"])] = str(po["id"])
		}
		ids = append(ids, str(po["id"]))
	}
	return ids
}

// payout makes a payout of amount in ccy and its own balance transaction
// (under f.mu).
func (f *Fake) payout(ccy string, amount int64, status string) map[string]any {
	now, id, txn := f.now(), newID("po_", 24), newID("txn_", 24)
	f.bts = append(f.bts, &object{m: map[string]any{
		"id": txn, "object": "balance_transaction", "amount": -amount, "currency": ccy, "created": now,
		"available_on": now, "description": "STRIPE PAYOUT", "exchange_rate": nil, "fee": int64(0), "net": -amount,
		"reporting_category": "payout", "fee_details": []map[string]any{}, "source": id, "status": "available", "type": "payout",
	}})
	f.paidIn[txn] = id
	po := map[string]any{
		"id": id, "object": "payout", "amount": amount, "arrival_date": now, "automatic": true,
		"balance_transaction": txn, "created": now, "currency": ccy, "description": "STRIPE PAYOUT",
		"destination": "ba_" + newID("", 24), "failure_balance_transaction": nil, "failure_code": nil, "failure_message": nil,
		"livemode": false, "metadata": map[string]any{}, "method": "standard", "original_payout": nil,
		"reconciliation_status": "in_progress", "reversed_by": nil, "source_type": "card", "statement_descriptor": nil,
		"status": status, "type": "bank_account",
	}
	f.pos = append(f.pos, &object{m: po})
	f.emit("payout.created", po)
	if status == "paid" {
		f.paid(po)
	}
	return po
}

// paid marks a payout paid, its reconciliation completed (under f.mu).
func (f *Fake) paid(po map[string]any) {
	po["status"], po["reconciliation_status"] = "paid", "completed"
	f.emit("payout.paid", po)
	f.emit("payout.reconciliation_completed", po)
}

// SetPayoutStatus moves the pending or in-transit payout id on: to
// in_transit, to paid (its reconciliation completed), or to failed (the
// bank refused it: its amount comes back to the balance in a
// payout_failure balance transaction, available at once, which the next
// payout pays out).
func (f *Fake) SetPayoutStatus(id, status string) error {
	return f.act(func() error {
		o := find(f.pos, "id", id)
		if o == nil {
			return ErrNotFound
		}
		po := o.m
		if st := str(po["status"]); st != "pending" && st != "in_transit" {
			return fmt.Errorf("stripefake: payout %s is %s", id, st)
		}
		switch status {
		case "in_transit":
			po["status"] = status
			f.emit("payout.updated", po)
		case "paid":
			f.paid(po)
		case "failed":
			now, txn, amt := f.now(), newID("txn_", 24), po["amount"].(int64)
			f.bts = append(f.bts, &object{m: map[string]any{
				"id": txn, "object": "balance_transaction", "amount": amt, "currency": po["currency"], "created": now,
				"available_on": now, "description": "STRIPE PAYOUT FAILURE", "exchange_rate": nil, "fee": int64(0), "net": amt,
				"reporting_category": "payout_reversal", "fee_details": []map[string]any{}, "source": id, "status": "available",
				"type": "payout_failure",
			}})
			po["status"], po["failure_balance_transaction"] = "failed", txn
			po["failure_code"], po["failure_message"] = "account_closed", "The bank account has been closed."
			f.emit("payout.failed", po)
		default:
			return fmt.Errorf("stripefake: a payout moves to in_transit, paid or failed, not %q", status)
		}
		return nil
	})
}

// listPayouts answers GET /v1/payouts: newest first, paged, of one status
// if asked.
func (f *Fake) listPayouts(form url.Values) (map[string]any, *apiErr) {
	objs := f.pos
	if st := form.Get("status"); st != "" {
		objs = nil
		for _, o := range f.pos {
			if o.m["status"] == st {
				objs = append(objs, o)
			}
		}
	}
	return page(objs, "/v1/payouts", form)
}

// listBalanceTransactions answers GET /v1/balance_transactions: newest
// first, paged, those a payout paid out (payout), of a type, or of a
// source, if asked.
func (f *Fake) listBalanceTransactions(form url.Values) (map[string]any, *apiErr) {
	po, typ, src := form.Get("payout"), form.Get("type"), form.Get("source")
	if po != "" && find(f.pos, "id", po) == nil {
		return nil, missing("payout", po)
	}
	var objs []*object
	for _, bt := range f.bts {
		if (po == "" || f.paidIn[str(bt.m["id"])] == po) && (typ == "" || bt.m["type"] == typ) && (src == "" || bt.m["source"] == src) {
			objs = append(objs, bt)
		}
	}
	return page(objs, "/v1/balance_transactions", form)
}

// page is a list of objs (kept oldest first) as Stripe pages lists:
// newest first, limit (1 to 100, default 10) of them, after the object
// starting_after (older ones) or before ending_before (the newer ones
// nearest it); has_more says whether more lie beyond the page that way.
func page(objs []*object, u string, form url.Values) (map[string]any, *apiErr) {
	n := 10
	if l := form.Get("limit"); l != "" {
		var err error
		if n, err = strconv.Atoi(l); err != nil || n < 1 || n > 100 {
			return nil, invalid("limit", "Invalid integer: %s (1 to 100)", l)
		}
	}
	after, before := form.Get("starting_after"), form.Get("ending_before")
	if after != "" && before != "" {
		return nil, invalid("starting_after", "You may only specify one of these parameters: ending_before, starting_after.")
	}
	list := slices.Clone(objs)
	slices.Reverse(list)
	at := func(param, id string) (int, *apiErr) {
		i := slices.IndexFunc(list, func(o *object) bool { return o.m["id"] == id })
		if i < 0 {
			e := invalid(param, "No such object: '%s'", id)
			e.code = "resource_missing"
			return 0, e
		}
		return i, nil
	}
	from, to := 0, min(n, len(list))
	more := len(list) > n
	switch {
	case after != "":
		i, e := at("starting_after", after)
		if e != nil {
			return nil, e
		}
		from, to = i+1, min(i+1+n, len(list))
		more = to < len(list)
	case before != "":
		i, e := at("ending_before", before)
		if e != nil {
			return nil, e
		}
		from, to = max(0, i-n), i
		more = from > 0
	}
	data := []map[string]any{}
	for _, o := range list[from:to] {
		data = append(data, o.m)
	}
	return map[string]any{"object": "list", "url": u, "has_more": more, "data": data}, nil
}
