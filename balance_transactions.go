package paykit

import (
	"context"
	"fmt"
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

// GetBalanceTransaction returns a balance transaction of the caller's
// scope.
func (s *Service) GetBalanceTransaction(ctx context.Context, p Principal, id string) (*BalanceTransaction, error) {
	return getScoped(ctx, p, "balance_transaction", id, s.store.GetBalanceTransaction)
}

// ListBalanceTransactions returns the caller's balance transactions,
// newest first.
func (s *Service) ListBalanceTransactions(ctx context.Context, p Principal, params BalanceTransactionListParams) (*Page[BalanceTransaction], error) {
	check := func() error {
		if err := params.check("balance transaction", BalanceTransactionStatus.Valid); err != nil {
			return err
		}
		for _, t := range params.Types {
			if !t.Valid() {
				return invalidRequest("type", "type %q is not a balance transaction type.", t)
			}
		}
		return checkIDFilter("source", params.Source)
	}
	// Balance transactions have neither a country nor a reference.
	return listScoped(ctx, s, p, "balance_transaction", params.PageParams, params, check, params.Country != "" || params.MerchantReference != "",
		s.store.ListBalanceTransactions, func(b *BalanceTransaction) Position { return Position{b.CreatedAt, b.ID} })
}

// book writes, in tx, a movement of a merchant's money into or out of its
// balance: its ledger postings (those of zero dropped) and bt, its balance
// transaction, whose ID, Net, times and default Status (available, from
// at) it fills in.
func (s *Service) book(ctx context.Context, tx Tx, bt *BalanceTransaction, kind string, at time.Time, postings ...Posting) error {
	bt.ID = s.newID("txn")
	bt.Net = bt.Amount - bt.Fee
	bt.CreatedAt, bt.UpdatedAt = at, at
	if bt.Status == "" {
		bt.Status = BalanceTxnAvailable
	}
	if bt.AvailableOn.IsZero() {
		bt.AvailableOn = at
	}
	if err := s.postNonZero(ctx, tx, bt.Scope(), bt.Currency, kind, bt.Source, at, postings...); err != nil {
		return err
	}
	return tx.CreateBalanceTransaction(ctx, bt)
}

// postNonZero posts the postings that move something; none is no
// transaction.
func (s *Service) postNonZero(ctx context.Context, tx Tx, scope Scope, currency, kind, ref string, at time.Time, postings ...Posting) error {
	ps := make([]Posting, 0, len(postings))
	for _, p := range postings {
		if p.Amount != 0 {
			ps = append(ps, p)
		}
	}
	if len(ps) == 0 {
		return nil
	}
	return s.post(ctx, tx, scope, currency, kind, ref, at, ps...)
}

// creditPayment books a succeeded payment in tx: its net (amount less the
// Provider's fee, r.Fee) enters the merchant's pending balance, and its
// balance transaction is pending until the Provider settles it. A Provider
// that reports no settlement (no CapSettlement) makes the net available at
// r.AvailableOn, or at once when it states no later date.
func (s *Service) creditPayment(ctx context.Context, tx Tx, pi *PaymentIntent, r Result, now time.Time) error {
	pi.Fee = max(r.Fee, 0)
	net := pi.Amount - pi.Fee
	bt := &BalanceTransaction{MerchantID: pi.MerchantID, Environment: pi.Environment, Type: BalanceTxnPayment,
		Source: pi.ID, Amount: pi.Amount, Fee: pi.Fee, Currency: pi.Currency, Status: BalanceTxnPending, AvailableOn: r.AvailableOn}
	a := s.providers[pi.Provider]
	reports := a != nil && a.caps.Has(CapSettlement)
	if !reports && !r.AvailableOn.After(now) {
		bt.Status, bt.AvailableOn, pi.SettledAt = BalanceTxnAvailable, now, &now
		return s.book(ctx, tx, bt, "payment.succeeded", now,
			Posting{AccountPayments, -pi.Amount}, Posting{AccountAvailable, net}, Posting{AccountFees, pi.Fee})
	}
	if err := s.book(ctx, tx, bt, "payment.succeeded", now,
		Posting{AccountPayments, -pi.Amount}, Posting{AccountPending, net}, Posting{AccountFees, pi.Fee}); err != nil {
		return err
	}
	if reports {
		at := r.AvailableOn
		if !at.After(now) {
			at = now.Add(settlementReadDefault)
		}
		return s.enqueueSoon(ctx, tx, settlementReadJob(pi.Scope(), pi.Provider, at))
	}
	return s.enqueue(ctx, tx, &Job{Kind: jobPaymentSettle, Scope: pi.Scope(), TargetID: pi.ID, RunAt: r.AvailableOn,
		DedupKey: jobPaymentSettle + ":" + pi.ID})
}

// jobPaymentSettle makes a payment's net available at its Provider's
// available date, for Providers that report no settlement.
const jobPaymentSettle = "payment.settle"

// settlePaymentJob settles the job's payment.
func (s *Service) settlePaymentJob(ctx context.Context, j *Job) error {
	return s.inTx(ctx, func(tx Tx) error {
		pi, err := tx.GetPaymentIntent(ctx, j.Scope, j.TargetID)
		if err != nil {
			return err
		}
		return s.settlePayment(ctx, tx, pi, s.Now())
	})
}

// settlePayment moves a succeeded payment's net from the merchant's
// pending balance to its available one, in tx, and marks its balance
// transaction available at at. A payment settled before is left alone.
func (s *Service) settlePayment(ctx context.Context, tx Tx, pi *PaymentIntent, at time.Time) error {
	if pi.Status != PaymentSucceeded || pi.SettledAt != nil {
		return nil
	}
	pi.SettledAt = &at
	if err := tx.UpdatePaymentIntent(ctx, pi); err != nil {
		return err
	}
	net := pi.Amount - pi.Fee
	if err := s.postNonZero(ctx, tx, pi.Scope(), pi.Currency, "payment.settled", pi.ID, at,
		Posting{AccountPending, -net}, Posting{AccountAvailable, net}); err != nil {
		return err
	}
	rows, err := tx.ListBalanceTransactions(ctx, ListQuery[BalanceTransactionListParams]{Scope: pi.Scope(),
		Filter: BalanceTransactionListParams{Types: []BalanceTransactionType{BalanceTxnPayment}, Source: pi.ID}, Limit: 1})
	if err != nil {
		return err
	}
	if len(rows) == 0 {
		return fmt.Errorf("payment %s has no balance transaction", pi.ID)
	}
	bt := &rows[0]
	bt.Status, bt.AvailableOn, bt.UpdatedAt = BalanceTxnAvailable, at, at
	return tx.UpdateBalanceTransaction(ctx, bt)
}
