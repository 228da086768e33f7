package paykit

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"time"

	"github.com/paykit/paykit/internal/contract"
	"github.com/paykit/paykit/internal/wire"
)

// ErrInsufficientFunds is returned by PostLedger when an account that may
// not go below zero would. Nothing is written.
var ErrInsufficientFunds = errors.New("paykit: insufficient funds")

// Ledger accounts. Merchant accounts (Available, Reserved) hold a
// merchant's money per environment and currency; external accounts are the
// other side of money entering or leaving, so their balances are the
// negatives of what came in or went out. Every ledger transaction sums to
// zero: money is never created or lost. LookupAccount gives each one's
// class and rule.
const (
	AccountAvailable   = "available"            // merchant: spendable
	AccountPending     = "pending"              // merchant: paid in, not yet settled by the Provider
	AccountReserved    = "reserved"             // merchant: held for payouts and refunds in flight
	AccountPayments    = "external:payments"    // money paid in by payers
	AccountPayouts     = "external:payouts"     // money paid out to recipients
	AccountAdjustments = "external:adjustments" // operator corrections
	AccountFees        = "external:fees"        // the Providers' fees
	AccountDisputes    = "external:disputes"    // disputed funds the Providers took back
)

// AccountClass says whose money a ledger account counts.
type AccountClass string

// The account classes. Merchant and platform accounts have a balance per
// scope and currency (Balance.Accounts); an external account has none: its
// sum is read from the entries.
const (
	MerchantAccount AccountClass = "merchant" // the merchant's money
	PlatformAccount AccountClass = "platform" // the platform's share of a merchant's money
	ExternalAccount AccountClass = "external" // the world outside paykit
)

// Account is a ledger account paykit knows: its class, and when its
// balance may go below zero.
type Account struct {
	Name  string
	Class AccountClass
	// MayGoNegative lets any posting take the balance below zero.
	MayGoNegative bool
	// OverdrawKinds are the kinds of ledger transactions (LedgerTxn.Kind)
	// that may take the balance below zero when MayGoNegative is false.
	OverdrawKinds []string
}

// MayOverdraw reports whether a transaction of kind may take a's balance
// below zero. A posting that raises a balance is always allowed.
func (a Account) MayOverdraw(kind string) bool {
	return a.MayGoNegative || slices.Contains(a.OverdrawKinds, kind)
}

// accounts is paykit's chart of accounts: a posting to an account not in it
// is refused. A new account (a pending balance, a fee, a dispute hold) is
// one more entry here; the Stores keep a balance row for any non-external
// account without a change of schema.
var accounts = map[string]Account{
	AccountAvailable: {Name: AccountAvailable, Class: MerchantAccount,
		// The contract: available goes below zero only through a dispute
		// (or a Provider-side debit), never by a merchant's own request.
		// A Provider fee above a payment's amount is a Provider-side debit.
		OverdrawKinds: []string{"dispute.created", "payment.succeeded", "reconciliation.adjusted"}},
	// A Provider fee above the amount leaves a negative net.
	AccountPending:     {Name: AccountPending, Class: MerchantAccount, OverdrawKinds: []string{"payment.succeeded", "reconciliation.adjusted"}},
	AccountReserved:    {Name: AccountReserved, Class: MerchantAccount},
	AccountPayments:    {Name: AccountPayments, Class: ExternalAccount, MayGoNegative: true},
	AccountPayouts:     {Name: AccountPayouts, Class: ExternalAccount, MayGoNegative: true},
	AccountAdjustments: {Name: AccountAdjustments, Class: ExternalAccount, MayGoNegative: true},
	AccountFees:        {Name: AccountFees, Class: ExternalAccount, MayGoNegative: true},
	AccountDisputes:    {Name: AccountDisputes, Class: ExternalAccount, MayGoNegative: true},
}

// LookupAccount returns the account named name from paykit's chart of
// accounts, or false when there is none.
func LookupAccount(name string) (Account, bool) {
	a, ok := accounts[name]
	return a, ok
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

// Balance is a merchant's money in one environment and currency: the sums
// of the ledger's postings to each of its non-external accounts.
type Balance struct {
	Scope    Scope
	Currency string
	// Available, Pending and Reserved are Accounts[AccountAvailable],
	// Accounts[AccountPending] and Accounts[AccountReserved].
	Available int64
	Pending   int64
	Reserved  int64
	// Accounts holds the balance of every account of the scope and
	// currency that was ever posted to (nil when none was), by name.
	Accounts  map[string]int64
	UpdatedAt time.Time // of the latest posting to any of them
}

// LedgerQuery selects entries; empty fields do not filter.
type LedgerQuery struct {
	Scope    Scope
	Currency string
	RefID    string
}

// BalanceAdjustmentRequest is an operator's correction of a balance.
type BalanceAdjustmentRequest struct {
	Environment Environment `json:"environment" validate:"required,environment"`
	Currency    string      `json:"currency" validate:"required,currency"`
	Amount      int64       `json:"amount"` // signed minor units: 5000 credits, -5000 debits
	Reason      string      `json:"reason" validate:"required,min=1,max=512"`
}

// BalanceAdjustment is the answer to an adjustment.
type BalanceAdjustment struct {
	ID          string
	MerchantID  string
	Environment Environment
	Currency    string
	Amount      int64
	Reason      string
	Balance     Balance
	CreatedAt   time.Time
}

// AdjustBalance credits (positive amount) or debits (negative) a merchant's
// available balance as an operator, with a ledger entry against the
// adjustments account and an audit event. A debit cannot make the balance
// negative (insufficient_balance).
func (s *Service) AdjustBalance(ctx context.Context, actor, merchantID string, req BalanceAdjustmentRequest) (*BalanceAdjustment, error) {
	if err := validateRequest(&req); err != nil {
		return nil, err
	}
	amount := req.Amount
	if amount == 0 || !wire.ValidMinorUnits(max(amount, -amount)) {
		return nil, invalidRequest("amount", contract.AdjustmentAmountMessage)
	}
	scope := Scope{MerchantID: merchantID, Environment: req.Environment}
	adj := &BalanceAdjustment{ID: s.newID("adj"), MerchantID: merchantID, Environment: scope.Environment, Currency: req.Currency, Amount: amount, Reason: req.Reason, CreatedAt: s.Now()}
	err := s.inTx(ctx, func(tx Tx) error {
		if _, err := tx.GetMerchant(ctx, merchantID); err != nil {
			return err
		}
		if err := s.book(ctx, tx, &BalanceTransaction{MerchantID: merchantID, Environment: scope.Environment, Type: BalanceTxnAdjustment,
			Source: adj.ID, Amount: amount, Currency: req.Currency}, "balance.adjusted", adj.CreatedAt,
			Posting{AccountAdjustments, -amount}, Posting{AccountAvailable, amount}); err != nil {
			return err
		}
		b, err := tx.GetBalance(ctx, scope, req.Currency)
		if err != nil {
			return err
		}
		adj.Balance = *b
		return s.audit(ctx, tx, &AuditEvent{Actor: actor, Action: "balance.adjust", TargetType: "merchant", TargetID: merchantID,
			MerchantID: merchantID, Environment: scope.Environment,
			Details: details("adjustment_id", adj.ID, "currency", req.Currency, "amount", strconv.FormatInt(amount, 10), "reason", req.Reason)})
	})
	switch {
	case errors.Is(err, ErrNotFound):
		return nil, notFound("merchant")
	case errors.Is(err, ErrInsufficientFunds):
		return nil, errorf(CodeInsufficientBalance, "amount", "The available balance does not cover this debit.")
	case err != nil:
		return nil, asServiceError(err)
	}
	return adj, nil
}

// ListBalances returns the caller's balances, one per currency.
func (s *Service) ListBalances(ctx context.Context, p Principal) (*Page[Balance], error) {
	rows, err := s.store.ListBalances(ctx, p.Scope)
	if err != nil {
		return nil, internalError(err)
	}
	if rows == nil {
		rows = []Balance{}
	}
	return &Page[Balance]{Data: rows}, nil
}
