package paykit

import (
	"context"
	"errors"
	"strconv"
	"time"
)

// ApprovePayout releases an approval hold (operator action): the payout
// goes to processing and is dispatched. Anything but a pending hold is
// invalid_state.
func (s *Service) ApprovePayout(ctx context.Context, actor, id, note string) (*PayoutIntent, error) {
	var scope Scope
	err := s.inTx(ctx, func(tx Tx) error {
		po, err := s.pendingApproval(ctx, tx, id)
		if err != nil {
			return err
		}
		now := s.Now()
		scope = po.Scope()
		po.Status, po.ApprovalPending, po.Dispatch, po.UpdatedAt = PayoutProcessing, false, DispatchSending, now
		if err := tx.UpdatePayoutIntent(ctx, po); err != nil {
			return err
		}
		if err := s.scheduleDispatch(ctx, tx, po, now.Add(idempotencyLock), ""); err != nil {
			return err
		}
		return s.audit(ctx, tx, &AuditEvent{Actor: actor, Action: "payout_intent.approve", TargetType: "payout_intent", TargetID: po.ID,
			MerchantID: po.MerchantID, Environment: po.Environment, Details: details("note", note)})
	})
	if err != nil {
		return nil, asServiceError(err)
	}
	if _, _, err := s.dispatch(ctx, scope, id, ""); err != nil {
		if code := ErrorCode(err); code != CodeDispatchUnavailable && code != CodeServiceUnavailable {
			return nil, err
		}
		// Not acknowledged, or the store too busy to finish: the approval
		// is committed and the worker (re)sends it with the same key.
	}
	return s.getPayout(ctx, scope, id)
}

// RejectPayout ends an approval hold as failed (approval_rejected) and
// releases the reservation (operator action).
func (s *Service) RejectPayout(ctx context.Context, actor, id, reason string) (*PayoutIntent, error) {
	if reason == "" || len(reason) > 512 {
		return nil, InvalidRequest("reason", "reason must be 1 to 512 characters.")
	}
	var out *PayoutIntent
	err := s.inTx(ctx, func(tx Tx) error {
		po, err := s.pendingApproval(ctx, tx, id)
		if err != nil {
			return err
		}
		now := s.Now()
		if err := s.release(ctx, tx, po, now); err != nil {
			return err
		}
		po.Status, po.ApprovalPending, po.Dispatch, po.UpdatedAt = PayoutFailed, false, DispatchClosed, now
		po.FailureCode, po.FailureMessage, po.CancelReason = FailureApprovalRejected, failureMessages[FailureApprovalRejected], reason
		if err := tx.UpdatePayoutIntent(ctx, po); err != nil {
			return err
		}
		out = po
		return s.audit(ctx, tx, &AuditEvent{Actor: actor, Action: "payout_intent.reject", TargetType: "payout_intent", TargetID: po.ID,
			MerchantID: po.MerchantID, Environment: po.Environment, Details: details("reason", reason)})
	})
	if err != nil {
		return nil, asServiceError(err)
	}
	return out, nil
}

func (s *Service) pendingApproval(ctx context.Context, tx Tx, id string) (*PayoutIntent, error) {
	po, err := tx.FindPayoutIntent(ctx, id)
	if errors.Is(err, ErrNotFound) {
		return nil, notFound("payout_intent")
	}
	if err != nil {
		return nil, err
	}
	if !po.ApprovalPending {
		return nil, Errorf(CodeInvalidState, "", "This payout intent is %s and has no pending approval.", po.Status)
	}
	return po, nil
}

func details(kv ...string) map[string]string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] != "" {
			m[kv[i]] = kv[i+1]
		}
	}
	return m
}

func (s *Service) getPayout(ctx context.Context, scope Scope, id string) (*PayoutIntent, error) {
	po, err := s.store.GetPayoutIntent(ctx, scope, id)
	if errors.Is(err, ErrNotFound) {
		return nil, notFound("payout_intent")
	}
	if err != nil {
		return nil, Internal(err)
	}
	return po, nil
}

// GetPayoutIntent returns the committed projection of a payout of the
// caller's scope. It never starts Provider work.
func (s *Service) GetPayoutIntent(ctx context.Context, p Principal, id string) (*PayoutIntent, error) {
	return s.getPayout(ctx, p.Scope, id)
}

// PayoutIntentListParams are the filters of GET /payout_intents.
type PayoutIntentListParams = ListParams[PayoutStatus]

// ListPayoutIntents lists the caller's payouts, newest first.
func (s *Service) ListPayoutIntents(ctx context.Context, p Principal, params PayoutIntentListParams) (*Page[PayoutIntent], error) {
	limit, after, err := s.pageQuery("payout_intent", params.PageParams)
	if err != nil {
		return nil, err
	}
	for _, st := range params.Statuses {
		if !st.Valid() {
			return nil, InvalidRequest("status", "status %q is not a payout intent status.", st)
		}
	}
	if err := validateListFilters(params.Currency, params.Country, params.MerchantReference); err != nil {
		return nil, err
	}
	rows, err := s.store.ListPayoutIntents(ctx, PayoutQuery{
		Scope: p.Scope, Statuses: params.Statuses, Currency: params.Currency, Country: params.Country,
		MerchantReference: params.MerchantReference, CreatedAfter: params.CreatedAfter,
		CreatedBefore: params.CreatedBefore, After: after, Limit: limit + 1,
	})
	if err != nil {
		return nil, Internal(err)
	}
	return makePage(s, "payout_intent", rows, limit, func(po *PayoutIntent) Position { return Position{po.CreatedAt, po.ID} }), nil
}

// ListPendingApprovals lists payouts of every merchant waiting for an
// operator, newest first.
func (s *Service) ListPendingApprovals(ctx context.Context, params PageParams) (*Page[PayoutIntent], error) {
	limit, after, err := s.pageQuery("payout_approval", params)
	if err != nil {
		return nil, err
	}
	rows, err := s.store.ListPayoutIntents(ctx, PayoutQuery{AllTenants: true, ApprovalPending: true, After: after, Limit: limit + 1})
	if err != nil {
		return nil, Internal(err)
	}
	return makePage(s, "payout_approval", rows, limit, func(po *PayoutIntent) Position { return Position{po.CreatedAt, po.ID} }), nil
}

// BalanceAdjustmentRequest is an operator's correction of a balance.
type BalanceAdjustmentRequest struct {
	Environment Environment `json:"environment" validate:"required,environment"`
	Currency    string      `json:"currency" validate:"required,currency"`
	Amount      int64       `json:"amount"` // signed minor units: 5000 credits, -5000 debits
	Reason      string      `json:"reason" validate:"required,min=1,max=512"`
}

// AdjustmentAmountMessage explains the amount of a balance adjustment.
const AdjustmentAmountMessage = "amount must be a non-zero integer of minor units, negative to debit."

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
	if err := Validate(&req); err != nil {
		return nil, err
	}
	amount := req.Amount
	if amount == 0 || !ValidMinorUnits(max(amount, -amount)) {
		return nil, InvalidRequest("amount", AdjustmentAmountMessage)
	}
	scope := Scope{MerchantID: merchantID, Environment: req.Environment}
	adj := &BalanceAdjustment{ID: s.newID("adj"), MerchantID: merchantID, Environment: scope.Environment, Currency: req.Currency, Amount: amount, Reason: req.Reason, CreatedAt: s.Now()}
	err := s.inTx(ctx, func(tx Tx) error {
		if _, err := tx.GetMerchant(ctx, merchantID); err != nil {
			return err
		}
		if err := s.post(ctx, tx, scope, req.Currency, "balance.adjusted", adj.ID, adj.CreatedAt,
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
		return nil, Errorf(CodeInsufficientBalance, "amount", "The available balance does not cover this debit.")
	case err != nil:
		return nil, asServiceError(err)
	}
	return adj, nil
}

// ListBalances returns the caller's balances, one per currency.
func (s *Service) ListBalances(ctx context.Context, p Principal) (*Page[Balance], error) {
	rows, err := s.store.ListBalances(ctx, p.Scope)
	if err != nil {
		return nil, Internal(err)
	}
	if rows == nil {
		rows = []Balance{}
	}
	return &Page[Balance]{Data: rows}, nil
}

// SimulateReturn makes a succeeded test-environment payout come back (the
// bank returned the funds): the payout becomes failed with funds_returned
// and the amount is credited back. Live keys get not_found.
func (s *Service) SimulateReturn(ctx context.Context, p Principal, id string) (*PayoutIntent, error) {
	if p.Environment != Test {
		return nil, notFound("test helper")
	}
	po, err := s.getPayout(ctx, p.Scope, id)
	if err != nil {
		return nil, err
	}
	if po.Status != PayoutSucceeded {
		return nil, Errorf(CodeInvalidState, "", "Only a succeeded payout can be returned; this one is %s.", po.Status)
	}
	if a, err := s.provider(po.Provider, CapReturns); err == nil {
		if err := a.returns.ReturnPayout(ctx, po.ID); err != nil {
			return nil, Internal(err)
		}
	}
	err = s.inTx(ctx, func(tx Tx) error {
		cur, err := tx.GetPayoutIntent(ctx, p.Scope, id)
		if err != nil {
			return err
		}
		return s.applyPayoutFinal(ctx, tx, cur, Result{Outcome: OutcomeReturned}, s.Now())
	})
	if err != nil {
		return nil, asServiceError(err)
	}
	return s.getPayout(ctx, p.Scope, id)
}
