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
//   - a succeeded payment intent took its amount from "external:payments"
//     and its fee into "external:fees", and credited the rest to "pending"
//     until settled (SettledAt), then to "available"; any other payment
//     intent has no entries.
func checkRefs(t testing.TB, s paykit.Tx, scope paykit.Scope, entries []paykit.LedgerEntry) {
	t.Helper()
	ctx := context.Background()
	type sums struct{ reserved, paidOut, returned, available, pending, paidIn, fees int64 }
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
		case e.Account == paykit.AccountPayments:
			r.paidIn -= e.Amount
		case e.Account == paykit.AccountFees:
			r.fees += e.Amount
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
		var want sums
		if pi.Status == paykit.PaymentSucceeded {
			want.paidIn, want.fees = pi.Amount, pi.Fee
			if pi.SettledAt != nil {
				want.available = pi.Amount - pi.Fee
			} else {
				want.pending = pi.Amount - pi.Fee
			}
		}
		r := get(pi.ID)
		got := sums{paidIn: r.paidIn, fees: r.fees, available: r.available, pending: r.pending}
		if got != want {
			t.Errorf("ledger of %v: payment intent %s (%s, amount %d, fee %d, settled %v) shows in its entries paid in %d, fee %d, pending %d, available %d",
				scope, pi.ID, pi.Status, pi.Amount, pi.Fee, pi.SettledAt != nil, r.paidIn, r.fees, r.pending, r.available)
		}
	}
}
