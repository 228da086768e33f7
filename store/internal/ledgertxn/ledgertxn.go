// Package ledgertxn holds the checks every paykit Store makes before it
// posts a ledger transaction, so that the backends reject the same
// transactions with the same errors.
package ledgertxn

import (
	"fmt"
	"math"
	"strings"

	"github.com/paykit/paykit"
)

// ExternalPrefix starts the name of every account that is not the
// merchant's (paykit.AccountPayments, AccountPayouts, AccountAdjustments).
const ExternalPrefix = "external:"

// Delta is what a transaction changes on the merchant's accounts of its
// scope and currency.
type Delta struct {
	Available int64
	Reserved  int64
}

// Zero reports whether the transaction leaves the merchant's balance alone.
func (d Delta) Zero() bool { return d.Available == 0 && d.Reserved == 0 }

// Credit reports whether neither merchant account goes down.
func (d Delta) Credit() bool { return d.Available >= 0 && d.Reserved >= 0 }

// Check validates t and returns its Delta. t needs an id, a scope, a
// currency and at least two postings, each non-zero to a merchant account
// or to an "external:" one, that sum to zero (without overflowing int64:
// paykit.LedgerTxn.Balanced alone would accept postings whose sum wraps
// around to zero). The error is plain: no Store sentinel matches it.
func Check(t *paykit.LedgerTxn) (Delta, error) {
	var d Delta
	switch {
	case t.ID == "":
		return d, fmt.Errorf("paykit: ledger transaction without an id")
	case t.Scope.MerchantID == "" || t.Scope.Environment == "":
		return d, fmt.Errorf("paykit: ledger transaction %s has no scope", t.ID)
	case t.Currency == "":
		return d, fmt.Errorf("paykit: ledger transaction %s has no currency", t.ID)
	case len(t.Postings) < 2:
		return d, fmt.Errorf("paykit: ledger transaction %s has %d postings, needs at least 2", t.ID, len(t.Postings))
	}
	var sum int64
	var ok bool
	for i, p := range t.Postings {
		if p.Amount == 0 {
			return d, fmt.Errorf("paykit: ledger transaction %s: posting %d is zero", t.ID, i)
		}
		if sum, ok = add(sum, p.Amount); !ok {
			return d, fmt.Errorf("paykit: ledger transaction %s: postings overflow int64", t.ID)
		}
		switch {
		case p.Account == paykit.AccountAvailable:
			d.Available, ok = add(d.Available, p.Amount)
		case p.Account == paykit.AccountReserved:
			d.Reserved, ok = add(d.Reserved, p.Amount)
		case strings.HasPrefix(p.Account, ExternalPrefix) && len(p.Account) > len(ExternalPrefix):
		default:
			return d, fmt.Errorf("paykit: ledger transaction %s: posting %d is to unknown account %q", t.ID, i, p.Account)
		}
		if !ok {
			return d, fmt.Errorf("paykit: ledger transaction %s: postings overflow int64", t.ID)
		}
	}
	if sum != 0 {
		return d, fmt.Errorf("paykit: ledger transaction %s is unbalanced: its %s postings sum to %d, not 0", t.ID, t.Currency, sum)
	}
	return d, nil
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

// Apply returns b after d, or ok false when an account would overflow.
// It does not check for negatives.
func Apply(b paykit.Balance, d Delta) (paykit.Balance, bool) {
	var ok1, ok2 bool
	b.Available, ok1 = add(b.Available, d.Available)
	b.Reserved, ok2 = add(b.Reserved, d.Reserved)
	return b, ok1 && ok2
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
