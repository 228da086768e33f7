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
//   - a succeeded payment intent was credited its net (amount less its
//     fee) once: to "pending" while its SettledAt is nil, moved to
//     "available" when set; any other payment intent has no entries to
//     either.
func checkRefs(t testing.TB, s paykit.Tx, scope paykit.Scope, entries []paykit.LedgerEntry) {
	t.Helper()
	ctx := context.Background()
	type sums struct{ reserved, paidOut, returned, available, pending int64 }
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
		case e.Account == paykit.AccountPending:
			r.pending += e.Amount
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
		var pending, available int64 // what its entries should have left in each
		switch {
		case pi.Status != paykit.PaymentSucceeded:
		case pi.SettledAt == nil:
			pending = pi.Amount - pi.Fee
		default:
			available = pi.Amount - pi.Fee
		}
		if r := get(pi.ID); r.pending != pending || r.available != available {
			t.Errorf("ledger of %v: payment intent %s (%s, amount %d, fee %d, settled %t) credited %d to pending and %d to available, not %d and %d",
				scope, pi.ID, pi.Status, pi.Amount, pi.Fee, pi.SettledAt != nil, r.pending, r.available, pending, available)
		}
	}
}
