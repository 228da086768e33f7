package storetest

import (
	"context"
	"testing"

	"github.com/paykit/paykit"
)

// checkRefs compares what the projections of payouts and payment intents of
// scope say about money with their ledger entries:
//   - a payout's reserved_amount is the sum of its postings to "reserved",
//     completed_amount what went into "external:payouts" for it, and
//     returned_amount what came back out of it;
//   - a succeeded payment intent was credited its amount to "available"
//     once; any other payment intent has no entries.
func checkRefs(t testing.TB, s paykit.Tx, scope paykit.Scope, entries []paykit.LedgerEntry) {
	t.Helper()
	ctx := context.Background()
	type sums struct{ reserved, paidOut, returned, available int64 }
	byRef := map[string]*sums{}
	for _, e := range entries {
		r := byRef[e.RefID]
		if r == nil {
			r = &sums{}
			byRef[e.RefID] = r
		}
		switch {
		case e.Account == paykit.AccountReserved:
			r.reserved += e.Amount
		case e.Account == paykit.AccountPayouts && e.Amount > 0:
			r.paidOut += e.Amount
		case e.Account == paykit.AccountPayouts:
			r.returned -= e.Amount
		case e.Account == paykit.AccountAvailable:
			r.available += e.Amount
		}
	}
	get := func(id string) sums {
		if r := byRef[id]; r != nil {
			return *r
		}
		return sums{}
	}
	payouts, err := s.ListPayoutIntents(ctx, paykit.PayoutQuery{ListQuery: paykit.ListQuery[paykit.ListParams[paykit.PayoutStatus]]{Scope: scope}})
	if err != nil {
		t.Errorf("ledger of %v: list payouts: %v", scope, err)
	}
	for _, po := range payouts {
		r := get(po.ID)
		if po.ReservedAmount != r.reserved || po.CompletedAmount != r.paidOut || po.ReturnedAmount != r.returned {
			t.Errorf("ledger of %v: payout %s (%s) shows reserved %d, completed %d, returned %d; its entries say %d, %d, %d",
				scope, po.ID, po.Status, po.ReservedAmount, po.CompletedAmount, po.ReturnedAmount, r.reserved, r.paidOut, r.returned)
		}
	}
	intents, err := s.ListPaymentIntents(ctx, paykit.ListQuery[paykit.ListParams[paykit.PaymentStatus]]{Scope: scope})
	if err != nil {
		t.Errorf("ledger of %v: list payment intents: %v", scope, err)
	}
	for _, pi := range intents {
		want := int64(0)
		if pi.Status == paykit.PaymentSucceeded {
			want = pi.Amount
		}
		if got := get(pi.ID).available; got != want {
			t.Errorf("ledger of %v: payment intent %s (%s, amount %d) credited %d to available", scope, pi.ID, pi.Status, pi.Amount, got)
		}
	}
}
