package opnfake

import (
	"net/http"
	"slices"
	"strconv"
	"time"
)

// Transactions: every movement of the account's balance is a transaction
// (Opn's Transaction API): a credit of a successful charge's net,
// transferable when Options.AvailableOn says; a debit of a refund, a
// dispute or a transfer, and a credit of a won dispute, transferable at
// once. The keys are the fake's own.

// transaction records a transaction of amount (never negative) in ccy
// and returns its id (f.mu is held).
func (f *Fake) transaction(direction, key, origin string, ccy any, amount int64, transferable time.Time) string {
	id := f.newID("trxn")
	f.put(id, map[string]any{
		"object": "transaction", "id": id, "livemode": false, "location": "/transactions/" + id,
		"amount": amount, "currency": ccy, "direction": direction, "key": key, "origin": origin,
		"transferable_at": transferable.UTC().Format(time.RFC3339), "created_at": f.now(),
	})
	return id
}

// listTransactions serves GET /transactions: a list of the account's
// transactions by created_at, within from and to (ISO 8601, both
// included) when given, in order (chronological, the default, or
// reverse_chronological), limit (1 to 100, default 20) of them from
// offset.
func (f *Fake) listTransactions(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	limit, offset := 20, 0
	var err error
	if s := q.Get("limit"); s != "" {
		if limit, err = strconv.Atoi(s); err != nil || limit < 1 || limit > 100 {
			writeError(w, http.StatusBadRequest, "bad_request", "limit must be 1 to 100")
			return
		}
	}
	if s := q.Get("offset"); s != "" {
		if offset, err = strconv.Atoi(s); err != nil || offset < 0 {
			writeError(w, http.StatusBadRequest, "bad_request", "offset must not be negative")
			return
		}
	}
	var from, to time.Time
	for name, t := range map[string]*time.Time{"from": &from, "to": &to} {
		if s := q.Get(name); s != "" {
			if *t, err = time.Parse(time.RFC3339, s); err != nil {
				writeError(w, http.StatusBadRequest, "bad_request", name+" is not an ISO 8601 time")
				return
			}
		}
	}
	order := q.Get("order")
	if order == "" {
		order = "chronological"
	}
	if order != "chronological" && order != "reverse_chronological" {
		writeError(w, http.StatusBadRequest, "bad_request", "order must be chronological or reverse_chronological")
		return
	}
	f.mu.Lock()
	var all []any
	for _, id := range f.order {
		t := f.objects[id]
		if t["object"] != "transaction" {
			continue
		}
		at, _ := time.Parse(time.RFC3339, str(t["created_at"]))
		if (!from.IsZero() && at.Before(from)) || (!to.IsZero() && at.After(to)) {
			continue
		}
		all = append(all, clone(t))
	}
	f.mu.Unlock()
	if order == "reverse_chronological" {
		slices.Reverse(all)
	}
	data := all[min(offset, len(all)):min(offset+limit, len(all))]
	if data == nil {
		data = []any{}
	}
	list := map[string]any{
		"object": "list", "location": "/transactions", "data": data, "limit": limit, "offset": offset,
		"total": len(all), "order": order, "from": nullableTime(from), "to": nullableTime(to),
	}
	writeJSON(w, http.StatusOK, list)
}

func nullableTime(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UTC().Format(time.RFC3339)
}
