package paykit

import (
	"errors"
	"time"
)

// ErrInsufficientFunds is returned by PostLedger when a merchant account
// (available or reserved) would go below zero. Nothing is written.
var ErrInsufficientFunds = errors.New("paykit: insufficient funds")

// Ledger accounts. Merchant accounts (Available, Reserved) hold a
// merchant's money per environment and currency and never go negative;
// external accounts are the other side of money entering or leaving, so
// their balances are the negatives of what came in or went out. Every
// ledger transaction sums to zero: money is never created or lost.
const (
	AccountAvailable   = "available"            // merchant: spendable
	AccountReserved    = "reserved"             // merchant: held for payouts in flight
	AccountPayments    = "external:payments"    // money paid in by payers
	AccountPayouts     = "external:payouts"     // money paid out to recipients
	AccountAdjustments = "external:adjustments" // operator corrections
)

// IsMerchantAccount reports whether account belongs to the merchant (and so
// must never go negative).
func IsMerchantAccount(account string) bool {
	return account == AccountAvailable || account == AccountReserved
}

// LedgerEntry is one immutable posting: Amount (signed minor units) to
// Account, as part of the transaction TxnID.
type LedgerEntry struct {
	ID        string
	TxnID     string
	Scope     Scope
	Currency  string
	Account   string
	Amount    int64
	Kind      string // what moved the money: "payment.succeeded", "payout.reserved", ...
	RefID     string // the payment, payout or adjustment it belongs to
	CreatedAt time.Time
}

// LedgerTxn is a balanced set of postings of one scope and currency.
type LedgerTxn struct {
	ID       string
	Scope    Scope
	Currency string
	Kind     string
	RefID    string
	Postings []Posting
	At       time.Time
}

// Posting moves Amount into Account (negative: out of it).
type Posting struct {
	Account string
	Amount  int64
}

// Balanced reports whether the postings sum to zero and none is zero. A sum
// that overflows int64 on the way is not balanced.
func (t *LedgerTxn) Balanced() bool {
	var sum int64
	for _, p := range t.Postings {
		if p.Amount == 0 {
			return false
		}
		next := sum + p.Amount
		if (p.Amount > 0 && next < sum) || (p.Amount < 0 && next > sum) {
			return false
		}
		sum = next
	}
	return len(t.Postings) >= 2 && sum == 0
}

// Balance is a merchant's money in one environment and currency, the sum of
// the ledger's postings to its accounts.
type Balance struct {
	Scope     Scope
	Currency  string
	Available int64
	Reserved  int64
	UpdatedAt time.Time
}

// LedgerQuery selects entries; empty fields do not filter.
type LedgerQuery struct {
	Scope    Scope
	Currency string
	RefID    string
}
