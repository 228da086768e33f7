package storetest

import (
	"context"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/paykit/paykit"
)

// CheckLedger reports, with t.Errorf, every way the ledger of scope in s
// breaks the rules of double entry:
//   - every entry belongs to scope, and the entries of one transaction
//     share its currency, kind, reference and time and sum to zero, so the
//     entries of each currency sum to zero: money is neither made nor lost;
//   - every entry is to an account of the chart (paykit.LookupAccount);
//   - no account is below zero unless its rule lets some posting take it
//     there (Account.MayOverdraw);
//   - each balance, as ListBalances and GetBalance return it, holds for
//     every non-external account the sum of the entries to it, and
//     Available, Pending and Reserved are those of "available", "pending"
//     and "reserved", so the sum of the balance's accounts is the money
//     that came in minus the money that went out (the negated sum of the
//     external accounts);
//   - the balance transactions of scope each net their amount less their
//     fee, and per currency their nets sum to the balance's Available +
//     Pending + Reserved: every movement of the merchant's money has one;
//   - the projected amounts of the payouts and payment intents of scope
//     agree with their entries (see checkRefs).
//
// It only reads, so it serves any Store (or a Tx inside InTx), from any
// package's tests, for instance in t.Cleanup after a flow test.
func CheckLedger(t testing.TB, s paykit.Tx, scope paykit.Scope) {
	t.Helper()
	checkLedger(t, s, scope, true)
}

// checkLedger is CheckLedger, without the balance transactions' checks
// unless balanceTxns: the conformance cases post to the ledger as no
// Service would, with no balance transactions.
func checkLedger(t testing.TB, s paykit.Tx, scope paykit.Scope, balanceTxns bool) {
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
		switch a, ok := paykit.LookupAccount(e.Account); {
		case !ok:
			t.Errorf("ledger of %v: entry %s is to %q, an account not in the chart", scope, e.ID, e.Account)
		case a.Class == paykit.ExternalAccount:
			c.external += e.Amount
		default:
			if c.accounts == nil {
				c.accounts = map[string]int64{}
			}
			c.accounts[e.Account] += e.Amount
			c.kept += e.Amount
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
	var nets map[string]int64
	if balanceTxns {
		nets = checkBalanceTxns(t, s, scope)
	}
	for currency, net := range nets {
		if _, posted := byCurrency[currency]; !posted && net != 0 {
			t.Errorf("ledger of %v: the %s balance transactions' nets sum to %d, but the balance has no entries", scope, currency, net)
		}
	}
	for currency, c := range byCurrency {
		if c.total != 0 {
			t.Errorf("ledger of %v: %s entries sum to %d, not 0: money was made or lost", scope, currency, c.total)
		}
		if in := -c.external; c.kept != in {
			t.Errorf("ledger of %v: %s accounts per entries sum to %d, but money in minus money out is %d", scope, currency, c.kept, in)
		}
		b, err := s.GetBalance(ctx, scope, currency)
		if err != nil {
			t.Errorf("ledger of %v: get %s balance: %v", scope, currency, err)
			continue
		}
		checkBalance(t, scope, "GetBalance", *b, c)
		if held := b.Available + b.Pending + b.Reserved; balanceTxns && nets[currency] != held {
			t.Errorf("ledger of %v: the %s balance transactions' nets sum to %d, but available + pending + reserved is %d",
				scope, currency, nets[currency], held)
		}
		if !listed[currency] && len(b.Accounts) > 0 {
			t.Errorf("ledger of %v: the %s balance is not in ListBalances", scope, currency)
		}
	}
}

// ledgerSums adds up the entries of one currency: all of them, those to
// each non-external account and to all of them, and those to the external
// ones.
type ledgerSums struct {
	total, kept, external int64
	accounts              map[string]int64
}

// checkBalance compares b with the sums of the entries of its currency (nil: none).
func checkBalance(t testing.TB, scope paykit.Scope, via string, b paykit.Balance, entries *ledgerSums) {
	t.Helper()
	var want map[string]int64
	if entries != nil {
		want = entries.accounts
	}
	if b.Available != b.Accounts[paykit.AccountAvailable] || b.Reserved != b.Accounts[paykit.AccountReserved] {
		t.Errorf("ledger of %v: %s: the %s balance shows available %d, reserved %d, but its accounts hold %d, %d",
			scope, via, b.Currency, b.Available, b.Reserved, b.Accounts[paykit.AccountAvailable], b.Accounts[paykit.AccountReserved])
	}
	if b.Pending != b.Accounts[paykit.AccountPending] {
		t.Errorf("ledger of %v: %s: the %s balance shows pending %d, but its account holds %d",
			scope, via, b.Currency, b.Pending, b.Accounts[paykit.AccountPending])
	}
	for _, name := range slices.Sorted(maps.Keys(b.Accounts)) {
		amount := b.Accounts[name]
		a, ok := paykit.LookupAccount(name)
		switch {
		case !ok || a.Class == paykit.ExternalAccount:
			t.Errorf("ledger of %v: %s: the %s balance has an account %q, which is not a non-external account of the chart", scope, via, b.Currency, name)
		case amount < 0 && !a.MayGoNegative && len(a.OverdrawKinds) == 0:
			t.Errorf("ledger of %v: %s: the %s %s balance is negative: %d", scope, via, b.Currency, name, amount)
		}
		if _, posted := want[name]; !posted && amount != 0 {
			t.Errorf("ledger of %v: %s: the %s %s balance is %d; it has no entries", scope, via, b.Currency, name, amount)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(want)) {
		if got := b.Accounts[name]; got != want[name] {
			t.Errorf("ledger of %v: %s: the %s %s balance is %d; its entries sum to %d", scope, via, b.Currency, name, got, want[name])
		}
	}
}

// checkBalanceTxns checks each balance transaction of scope and returns
// the sum of their nets by currency.
func checkBalanceTxns(t testing.TB, s paykit.Tx, scope paykit.Scope) map[string]int64 {
	t.Helper()
	txns, err := s.ListBalanceTransactions(context.Background(), paykit.ListQuery[paykit.BalanceTransactionListParams]{Scope: scope})
	if err != nil {
		t.Errorf("ledger of %v: list balance transactions: %v", scope, err)
		return nil
	}
	nets := map[string]int64{}
	for _, b := range txns {
		if b.Scope() != scope {
			t.Errorf("ledger of %v: balance transaction %s belongs to %v", scope, b.ID, b.Scope())
		}
		if !b.Type.Valid() || !b.Status.Valid() {
			t.Errorf("ledger of %v: balance transaction %s has type %q and status %q", scope, b.ID, b.Type, b.Status)
		}
		if b.Net != b.Amount-b.Fee {
			t.Errorf("ledger of %v: balance transaction %s nets %d, not its amount %d less its fee %d", scope, b.ID, b.Net, b.Amount, b.Fee)
		}
		nets[b.Currency] += b.Net
	}
	return nets
}
