package storetest

import (
	"context"
	"strings"
	"testing"

	"github.com/paykit/paykit"
)

// CheckLedger reports, with t.Errorf, every way the ledger of scope in s
// breaks the rules of double entry:
//   - every entry belongs to scope, and the entries of one transaction
//     share its currency, kind, reference and time and sum to zero, so the
//     entries of each currency sum to zero: money is neither made nor lost;
//   - no balance is negative;
//   - each balance, as ListBalances and GetBalance return it, equals the
//     sums of the entries to "available" and "reserved", so available +
//     reserved is the money that came in minus the money that went out
//     (the negated sum of the external accounts);
//   - when s stores payouts and payment intents too, their projected
//     amounts agree with their entries (see checkRefs).
//
// It reads through the LedgerStore methods only, so it serves any Store
// (or a Tx inside InTx), from any package's tests, for instance in
// t.Cleanup after a flow test.
func CheckLedger(t testing.TB, s paykit.LedgerStore, scope paykit.Scope) {
	t.Helper()
	ctx := context.Background()
	entries, err := s.ListLedgerEntries(ctx, paykit.LedgerQuery{Scope: scope})
	if err != nil {
		t.Errorf("ledger of %v: list entries: %v", scope, err)
		return
	}
	byCurrency := map[string]*ledgerSums{}
	txns := map[string]paykit.LedgerEntry{} // first entry of each transaction
	txnSums := map[string]int64{}
	var txnOrder []string
	for _, e := range entries {
		if e.Scope != scope {
			t.Errorf("ledger of %v: entry %s belongs to %v", scope, e.ID, e.Scope)
		}
		if first, ok := txns[e.TxnID]; !ok {
			txns[e.TxnID] = e
			txnOrder = append(txnOrder, e.TxnID)
		} else if e.Currency != first.Currency || e.Kind != first.Kind || e.RefID != first.RefID || !e.CreatedAt.Equal(first.CreatedAt) {
			t.Errorf("ledger of %v: entries %s and %s of transaction %s differ in currency, kind, reference or time", scope, first.ID, e.ID, e.TxnID)
		}
		if !strings.HasPrefix(e.ID, e.TxnID+".") {
			t.Errorf("ledger of %v: entry %s is not named after its transaction %s", scope, e.ID, e.TxnID)
		}
		txnSums[e.TxnID] += e.Amount
		c := byCurrency[e.Currency]
		if c == nil {
			c = &ledgerSums{}
			byCurrency[e.Currency] = c
		}
		c.total += e.Amount
		switch {
		case e.Account == paykit.AccountAvailable:
			c.available += e.Amount
		case e.Account == paykit.AccountReserved:
			c.reserved += e.Amount
		default:
			c.external += e.Amount
		}
	}
	checkRefs(t, s, scope, entries)
	for _, id := range txnOrder {
		if txnSums[id] != 0 {
			t.Errorf("ledger of %v: transaction %s sums to %d, not 0", scope, id, txnSums[id])
		}
	}

	balances, err := s.ListBalances(ctx, scope)
	if err != nil {
		t.Errorf("ledger of %v: list balances: %v", scope, err)
		return
	}
	listed := map[string]bool{}
	for _, b := range balances {
		listed[b.Currency] = true
		if b.Scope != scope {
			t.Errorf("ledger of %v: ListBalances returned the %s balance of %v", scope, b.Currency, b.Scope)
		}
		checkBalance(t, scope, "ListBalances", b, byCurrency[b.Currency])
	}
	for currency, c := range byCurrency {
		if c.total != 0 {
			t.Errorf("ledger of %v: %s entries sum to %d, not 0: money was made or lost", scope, currency, c.total)
		}
		if in := -c.external; c.available+c.reserved != in {
			t.Errorf("ledger of %v: %s available+reserved per entries is %d, but money in minus money out is %d", scope, currency, c.available+c.reserved, in)
		}
		b, err := s.GetBalance(ctx, scope, currency)
		if err != nil {
			t.Errorf("ledger of %v: get %s balance: %v", scope, currency, err)
			continue
		}
		checkBalance(t, scope, "GetBalance", *b, c)
		if !listed[currency] && (b.Available != 0 || b.Reserved != 0) {
			t.Errorf("ledger of %v: the %s balance is not in ListBalances", scope, currency)
		}
	}
}

// ledgerSums adds up the entries of one currency: all of them, and those
// to each merchant account and to the external ones.
type ledgerSums struct{ total, available, reserved, external int64 }

// checkBalance compares b with the sums of the entries of its currency (nil: none).
func checkBalance(t testing.TB, scope paykit.Scope, via string, b paykit.Balance, entries *ledgerSums) {
	t.Helper()
	if b.Available < 0 || b.Reserved < 0 {
		t.Errorf("ledger of %v: %s: the %s balance is negative: available %d, reserved %d", scope, via, b.Currency, b.Available, b.Reserved)
	}
	var available, reserved int64
	if entries != nil {
		available, reserved = entries.available, entries.reserved
	}
	if b.Available != available || b.Reserved != reserved {
		t.Errorf("ledger of %v: %s: the %s balance is available %d, reserved %d; its entries sum to available %d, reserved %d",
			scope, via, b.Currency, b.Available, b.Reserved, available, reserved)
	}
}
