package paykit

import (
	"slices"
	"time"
)

// BalanceTransactionType says what moved a merchant's money.
type BalanceTransactionType string

// Balance transaction types: the contract's closed set.
const (
	BalanceTxnPayment         BalanceTransactionType = "payment"          // +amount, less the Provider's fee
	BalanceTxnRefund          BalanceTransactionType = "refund"           // −amount, when the refund succeeds
	BalanceTxnPayout          BalanceTransactionType = "payout"           // −amount, when the payout succeeds
	BalanceTxnPayoutReturn    BalanceTransactionType = "payout_return"    // +amount, when paid-out funds come back
	BalanceTxnDispute         BalanceTransactionType = "dispute"          // −disputed amount, with the dispute fee
	BalanceTxnDisputeReversal BalanceTransactionType = "dispute_reversal" // +disputed amount, when a dispute is won
	BalanceTxnAdjustment      BalanceTransactionType = "adjustment"       // ±, an operator's or a reconciliation's
)

// balanceTxnTypes are the types, in the contract's order.
var balanceTxnTypes = []BalanceTransactionType{BalanceTxnPayment, BalanceTxnRefund, BalanceTxnPayout,
	BalanceTxnPayoutReturn, BalanceTxnDispute, BalanceTxnDisputeReversal, BalanceTxnAdjustment}

// Valid reports whether t is one of the balance transaction types.
func (t BalanceTransactionType) Valid() bool { return slices.Contains(balanceTxnTypes, t) }

// BalanceTransactionStatus says whether a movement's funds are available.
type BalanceTransactionStatus string

// Balance transaction statuses.
const (
	BalanceTxnPending   BalanceTransactionStatus = "pending"   // the Provider has not settled the funds yet
	BalanceTxnAvailable BalanceTransactionStatus = "available" // the funds are in the available balance
)

// balanceTxnStatuses are the statuses, in the contract's order.
var balanceTxnStatuses = []BalanceTransactionStatus{BalanceTxnPending, BalanceTxnAvailable}

// Valid reports whether s is one of the balance transaction statuses.
func (s BalanceTransactionStatus) Valid() bool { return slices.Contains(balanceTxnStatuses, s) }

// BalanceTransaction is one movement of a merchant's money into or out of
// its balance. For each scope and currency, the sum of Net over the
// balance transactions is the balance's Available + Pending + Reserved.
// Moving money between the merchant's own accounts (reserving it for a
// payout in flight, settling pending funds) is not one.
type BalanceTransaction struct {
	ID          string                   `json:"id,omitzero"`
	MerchantID  string                   `json:"merchant_id,omitzero"`
	Environment Environment              `json:"environment,omitzero"`
	Type        BalanceTransactionType   `json:"type,omitzero"`
	Source      string                   `json:"source,omitzero"` // the payment intent, refund, payout, dispute or adjustment id
	Amount      int64                    `json:"amount,omitzero"` // signed
	Fee         int64                    `json:"fee,omitzero"`
	Net         int64                    `json:"net,omitzero"` // Amount − Fee
	Currency    string                   `json:"currency,omitzero"`
	Status      BalanceTransactionStatus `json:"status,omitzero"`
	// AvailableOn is when the funds became available, or are expected to.
	AvailableOn time.Time `json:"available_on,omitzero"`
	CreatedAt   time.Time `json:"created_at,omitzero"`
	UpdatedAt   time.Time `json:"updated_at,omitzero"`
	Version     int64     `json:"version,omitzero"`
}

// Scope returns the tenant of the balance transaction.
func (b *BalanceTransaction) Scope() Scope { return Scope{b.MerchantID, b.Environment} }

// BalanceTransactionListParams are the filters of GET
// /balance_transactions: those of the other lists (Country and
// MerchantReference never match a balance transaction's), the types
// (any of them) and the source.
type BalanceTransactionListParams struct {
	ListParams[BalanceTransactionStatus]
	Types  []BalanceTransactionType
	Source string // exact id; empty does not filter
}
