// Package ledgertxn holds the checks every paykit Store makes before it
// posts a ledger transaction, so that the backends reject the same
// transactions with the same errors.
package ledgertxn

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/paykit/paykit"
)

// Change is what a transaction does to one balance row of its scope and
// currency: one non-external account.
type Change struct {
	Account string
	Amount  int64 // the sum of the transaction's postings to it, never 0
	// Guarded marks a debit that must not take the account below zero:
	// its rule does not let the transaction's kind overdraw it.
	Guarded bool
}

// Check validates t and returns its Changes, by account name (the order
// in which Stores lock the rows). t needs an id, a scope, a currency and
// at least two postings, each non-zero to an account paykit.LookupAccount
// knows, that sum to zero (without overflowing int64:
// paykit.LedgerTxn.Balanced alone would accept postings whose sum wraps
// around to zero). The error is plain: no Store sentinel matches it.
func Check(t *paykit.LedgerTxn) ([]Change, error) {
	switch {
	case t.ID == "":
		return nil, fmt.Errorf("paykit: ledger transaction without an id")
	case t.Scope.MerchantID == "" || t.Scope.Environment == "":
		return nil, fmt.Errorf("paykit: ledger transaction %s has no scope", t.ID)
	case t.Currency == "":
		return nil, fmt.Errorf("paykit: ledger transaction %s has no currency", t.ID)
	case len(t.Postings) < 2:
		return nil, fmt.Errorf("paykit: ledger transaction %s has %d postings, needs at least 2", t.ID, len(t.Postings))
	}
	var sum int64
	var ok bool
	var changes []Change
	for i, p := range t.Postings {
		if p.Amount == 0 {
			return nil, fmt.Errorf("paykit: ledger transaction %s: posting %d is zero", t.ID, i)
		}
		if sum, ok = add(sum, p.Amount); !ok {
			return nil, fmt.Errorf("paykit: ledger transaction %s: postings overflow int64", t.ID)
		}
		a, known := paykit.LookupAccount(p.Account)
		if !known {
			return nil, fmt.Errorf("paykit: ledger transaction %s: posting %d is to unknown account %q", t.ID, i, p.Account)
		}
		if a.Class == paykit.ExternalAccount {
			continue
		}
		j := slices.IndexFunc(changes, func(c Change) bool { return c.Account == p.Account })
		if j < 0 {
			changes = append(changes, Change{Account: p.Account})
			j = len(changes) - 1
		}
		if changes[j].Amount, ok = add(changes[j].Amount, p.Amount); !ok {
			return nil, fmt.Errorf("paykit: ledger transaction %s: postings overflow int64", t.ID)
		}
	}
	if sum != 0 {
		return nil, fmt.Errorf("paykit: ledger transaction %s is unbalanced: its %s postings sum to %d, not 0", t.ID, t.Currency, sum)
	}
	changes = slices.DeleteFunc(changes, func(c Change) bool { return c.Amount == 0 })
	for i, c := range changes {
		a, _ := paykit.LookupAccount(c.Account)
		changes[i].Guarded = c.Amount < 0 && !a.MayOverdraw(t.Kind)
	}
	slices.SortFunc(changes, func(a, b Change) int { return strings.Compare(a.Account, b.Account) })
	return changes, nil
}

// EntryID is the id of the entry of t's posting i.
func EntryID(txnID string, i int) string { return fmt.Sprintf("%s.%d", txnID, i) }

// Entries returns the immutable entries of a checked t, in posting order.
func Entries(t *paykit.LedgerTxn) []paykit.LedgerEntry {
	out := make([]paykit.LedgerEntry, len(t.Postings))
	for i, p := range t.Postings {
		out[i] = paykit.LedgerEntry{
			ID: EntryID(t.ID, i), TxnID: t.ID, Scope: t.Scope, Currency: t.Currency,
			Account: p.Account, Amount: p.Amount, Kind: t.Kind, RefID: t.RefID, CreatedAt: t.At.UTC(),
		}
	}
	return out
}

// Next returns the balance of c's account, current before, after c. It
// is ErrInsufficientFunds when c is guarded and would take the account
// below zero, and the Overflow error when the balance would pass int64.
func Next(t *paykit.LedgerTxn, current int64, c Change) (int64, error) {
	amount, ok := add(current, c.Amount)
	switch {
	case !ok:
		return 0, Overflow(t)
	case c.Guarded && amount < 0:
		return 0, paykit.ErrInsufficientFunds
	}
	return amount, nil
}

// NewBalance is the Balance of scope and currency whose accounts hold
// accounts (nil or empty: none), last updated at updated.
func NewBalance(scope paykit.Scope, currency string, accounts map[string]int64, updated time.Time) paykit.Balance {
	b := paykit.Balance{Scope: scope, Currency: currency}
	if len(accounts) == 0 {
		return b
	}
	b.Accounts, b.UpdatedAt = accounts, updated.UTC()
	b.Available, b.Pending, b.Reserved = accounts[paykit.AccountAvailable], accounts[paykit.AccountPending], accounts[paykit.AccountReserved]
	return b
}

func add(a, b int64) (int64, bool) {
	if (b > 0 && a > math.MaxInt64-b) || (b < 0 && a < math.MinInt64-b) {
		return 0, false
	}
	return a + b, true
}

// Overflow is the error of a t that would take a balance past int64.
func Overflow(t *paykit.LedgerTxn) error {
	return fmt.Errorf("paykit: ledger transaction %s would overflow the %s balance of %s/%s", t.ID, t.Currency, t.Scope.MerchantID, t.Scope.Environment)
}
