package paykit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"
)

// RefundStatus is the public lifecycle state of a refund.
type RefundStatus string

// Refund statuses: the contract's closed set. The last two are terminal.
const (
	RefundPending   RefundStatus = "pending"
	RefundSucceeded RefundStatus = "succeeded"
	RefundFailed    RefundStatus = "failed"
)

// refundStatuses are the refund statuses, in the contract's order.
var refundStatuses = []RefundStatus{RefundPending, RefundSucceeded, RefundFailed}

// Terminal reports whether s is final.
func (s RefundStatus) Terminal() bool { return s == RefundSucceeded || s == RefundFailed }

// Valid reports whether s is one of the refund statuses.
func (s RefundStatus) Valid() bool { return slices.Contains(refundStatuses, s) }

// Refund failure codes.
const (
	// RefundProviderDeclined: the Provider refused the refund.
	RefundProviderDeclined = "provider_declined"
	// RefundProviderError: the Provider reported an error of its own.
	RefundProviderError = "provider_error"
)

// Refund returns money of a succeeded payment intent to its payer, in full
// or in part. Its amount is reserved on the merchant's balance from create
// until the Provider's final word: moved out on success, released on
// failure.
type Refund struct {
	ID                string       `json:"id,omitzero"`
	MerchantID        string       `json:"merchant_id,omitzero"`
	Environment       Environment  `json:"environment,omitzero"`
	PaymentIntentID   string       `json:"payment_intent_id,omitzero"`
	Amount            int64        `json:"amount,omitzero"`
	Currency          string       `json:"currency,omitzero"`
	Status            RefundStatus `json:"status,omitzero"`
	Reason            string       `json:"reason,omitzero"` // "" when none was given
	MerchantReference string       `json:"merchant_reference,omitzero"`
	FailureCode       string       `json:"failure_code,omitzero"` // "", RefundProviderDeclined or RefundProviderError
	ProviderAttempt                // internal: its Provider attempt
	CompletedAt       *time.Time   `json:"completed_at,omitzero"`
	CreatedAt         time.Time    `json:"created_at,omitzero"`
	UpdatedAt         time.Time    `json:"updated_at,omitzero"`
	Version           int64        `json:"version,omitzero"`
}

// Scope returns the tenant of the refund.
func (r *Refund) Scope() Scope { return Scope{r.MerchantID, r.Environment} }

// CreateRefundRequest asks for a refund of a succeeded payment intent.
type CreateRefundRequest struct {
	PaymentIntent     string `json:"payment_intent" validate:"required,max=64"`
	MerchantReference string `json:"merchant_reference" validate:"required,max=256"`
	// Amount in minor units; 0 refunds all that is still refundable.
	Amount int64  `json:"amount,omitempty" validate:"omitempty,minor_units"`
	Reason string `json:"reason,omitempty" validate:"omitempty,max=512"`
}

// RefundListParams are the filters of GET /refunds: those of the other
// lists (Country never matches a refund's) and the payment intent.
type RefundListParams struct {
	ListParams[RefundStatus]
	PaymentIntent string // exact id; empty does not filter
}

// RefundRequest asks a Provider to refund part or all of a payment.
type RefundRequest struct {
	// Key is the Provider idempotency key: the refund's id, so every retry
	// of the same refund carries the same key.
	Key string
	// PaymentKey is the key the payment attempt was created with, and
	// PaymentRef the Provider's id of that attempt (empty if never known).
	PaymentKey string
	PaymentRef string
	Amount     int64
	Currency   string
}

// Background work of refunds.
const (
	jobRefundDispatch = "refund.dispatch" // send (or re-send, same key) the refund
	jobRefundInquire  = "refund.inquire"  // resolve a refund the Provider has not finished
)

func (s *Service) registerRefundJobs() {
	s.handle(jobRefundDispatch, s.dispatchRefundJob, providerJobTimeout, JobPriorityMoney)
	s.handle(jobRefundInquire, s.inquireRefundJob, providerJobTimeout, JobPriorityMoney)
	s.handle(jobPaymentSettle, s.settlePaymentJob, providerJobTimeout, JobPriorityMoney)
	s.handle(jobSettlementRead, s.readSettlementsJob, providerJobTimeout, JobPriorityMoney)
}

// CreateRefund refunds a succeeded payment intent, in full (Amount 0: all
// that is still refundable) or in part, under the Idempotency-Key. Every
// rule is checked before anything is persisted: an unknown payment
// (not_found), one not succeeded (invalid_state), a route that cannot
// refund (refund_unsupported), an amount above what is refundable
// (amount_exceeds_refundable), a balance that cannot cover it
// (insufficient_balance), a reference already used (duplicate_merchant_reference).
// A persisted refund reserves its amount and is always sent to the
// Provider: the answer is AnswerCreated with the refund pending, or final
// when the Provider answered at once. An unknown outcome stays pending and
// is settled in the background, never failed by giving up.
func (s *Service) CreateRefund(ctx context.Context, p Principal, idempotencyKey string, req CreateRefundRequest) (*Refund, Answer, error) {
	return s.createRefund(ctx, nil, p, idempotencyKey, req)
}

// CreateRefundTx is CreateRefund inside the host's transaction tx (see
// CreateCheckoutTx): the refund, its reservation and its event commit with
// the host's rows, and the worker sends it after the commit (the answer is
// AnswerAccepted, the refund pending).
func (s *Service) CreateRefundTx(ctx context.Context, tx Tx, p Principal, idempotencyKey string, req CreateRefundRequest) (*Refund, Answer, error) {
	if tx == nil {
		return nil, Answer{}, internalError(errNilTx)
	}
	return s.createRefund(ctx, tx, p, idempotencyKey, req)
}

func (s *Service) createRefund(ctx context.Context, host Tx, p Principal, idempotencyKey string, req CreateRefundRequest) (*Refund, Answer, error) {
	op, err := newOperation(p.Scope, idempotencyKey, "refund.create", "", req)
	if err != nil {
		return nil, Answer{}, err
	}
	op.deferred = host != nil
	// As for payments: a known key skips validation, so a request that
	// fails it is answered so only when its key is new.
	invalid := validateRequest(&req)
	if invalid != nil {
		if _, err := s.reader(host).GetIdempotencyRecord(ctx, p.Scope, idempotencyKey); errors.Is(err, ErrNotFound) {
			return nil, Answer{}, invalid
		} else if err != nil {
			return nil, Answer{}, internalError(err)
		}
	}
	now := s.Now()
	op.resourceID = s.newID("re")
	var (
		c  *claim
		re *Refund
		pi *PaymentIntent
	)
	err = s.within(ctx, host, func(tx Tx) error {
		var err error
		re, pi = nil, nil
		if c, err = s.begin(ctx, tx, op, now); err != nil || c.replay != nil {
			return err
		}
		if c.resumed {
			re, err = tx.GetRefund(ctx, p.Scope, c.record.ResourceID)
			return err
		}
		if invalid != nil { // the record we saw was purged meanwhile
			return invalid
		}
		if re, pi, err = s.newRefund(ctx, tx, p, op.resourceID, req, now); err != nil {
			return err
		}
		at := now.Add(idempotencyLock) // the request sends it; the job is the safety net
		if op.deferred {
			at = now
		}
		// A new refund has no dispatch job to expedite.
		return s.enqueue(ctx, tx, refundDispatchJob(re, at, idempotencyKey))
	})
	switch {
	case errors.Is(err, ErrInsufficientFunds):
		return nil, Answer{}, errorf(CodeInsufficientBalance, "amount", "The available balance does not cover this refund.")
	case errors.Is(err, ErrAlreadyExists):
		return nil, Answer{}, errorf(CodeDuplicateMerchantReference, "merchant_reference", "merchant_reference %q is already used by another refund.", req.MerchantReference)
	case err != nil:
		return nil, Answer{}, serviceError(host, err)
	}
	if c.replay != nil {
		return answered[Refund](c.replay, true)
	}
	if host != nil {
		return re, Answer{Kind: AnswerAccepted}, nil
	}
	_, stored, replayed, err := s.dispatchRefund(ctx, re, pi, idempotencyKey, c.record)
	if err != nil {
		return nil, Answer{}, err
	}
	return answered[Refund](stored, replayed)
}

// newRefund checks req against the payment and the balance and writes, in
// tx, the refund with that id, its share of the payment and its
// reservation. It returns the refund and the payment as written.
func (s *Service) newRefund(ctx context.Context, tx Tx, p Principal, id string, req CreateRefundRequest, now time.Time) (*Refund, *PaymentIntent, error) {
	pi, err := tx.GetPaymentIntent(ctx, p.Scope, req.PaymentIntent)
	if errors.Is(err, ErrNotFound) {
		return nil, nil, errorf(CodeNotFound, "payment_intent", "No such payment_intent: %q.", req.PaymentIntent)
	}
	if err != nil {
		return nil, nil, err
	}
	if pi.Status != PaymentSucceeded {
		return nil, nil, errorf(CodeInvalidState, "payment_intent", "Only a succeeded payment intent can be refunded; this one is %s.", pi.Status)
	}
	if !s.refundable(pi) {
		return nil, nil, errorf(CodeRefundUnsupported, "payment_intent", "Payments made with %s cannot be refunded.", pi.PaymentMethod)
	}
	if pi.OpenDisputes > 0 {
		return nil, nil, errorf(CodeInvalidState, "payment_intent", "A payment intent with an open dispute cannot be refunded.")
	}
	left := pi.Amount - pi.RefundedAmount - pi.RefundPendingAmount - pi.DisputedAmount
	amount := req.Amount
	if amount == 0 {
		amount = left
	}
	if amount <= 0 || amount > left {
		return nil, nil, errorf(CodeAmountExceedsRefundable, "amount", "The refundable amount of this payment intent is %d.", max(left, 0))
	}
	re := &Refund{
		ID: id, MerchantID: p.MerchantID, Environment: p.Environment, PaymentIntentID: pi.ID,
		Amount: amount, Currency: pi.Currency, Status: RefundPending, Reason: req.Reason,
		MerchantReference: req.MerchantReference, ProviderAttempt: ProviderAttempt{Provider: pi.Provider, Attempt: AttemptCreating},
		CreatedAt: now, UpdatedAt: now,
	}
	pi.RefundPendingAmount += amount
	pi.UpdatedAt = now
	if err := tx.UpdatePaymentIntent(ctx, pi); err != nil {
		return nil, nil, err
	}
	if err := tx.CreateRefund(ctx, re); err != nil {
		return nil, nil, err
	}
	return re, pi, s.post(ctx, tx, re.Scope(), re.Currency, "refund.reserved", re.ID, now,
		Posting{AccountAvailable, -amount}, Posting{AccountReserved, amount})
}

// refundable reports whether pi's Provider and route refund.
func (s *Service) refundable(pi *PaymentIntent) bool {
	a, ok := s.providers[pi.Provider]
	if !ok || !a.caps.Has(CapRefunds) {
		return false
	}
	route, ok := s.paymentRouteOf(pi)
	return !ok || !route.NoRefunds // a route removed since keeps its Provider's word
}

// refundDispatchJob is the job that (re)sends re at the latest at at;
// idemKey names the merchant's idempotency record it completes, if any.
func refundDispatchJob(re *Refund, at time.Time, idemKey string) *Job {
	var payload []byte
	if idemKey != "" {
		payload, _ = json.Marshal(resumePayload{IdempotencyKey: idemKey})
	}
	return &Job{Kind: jobRefundDispatch, Scope: re.Scope(), TargetID: re.ID, RunAt: at, Payload: payload, DedupKey: jobRefundDispatch + ":" + re.ID}
}

// scheduleRefundDispatch makes the worker (re)send re at the latest at at.
func (s *Service) scheduleRefundDispatch(ctx context.Context, tx Tx, re *Refund, at time.Time) error {
	return s.enqueueSoon(ctx, tx, refundDispatchJob(re, at, ""))
}

// dispatchRefund sends re, as last committed, to its Provider if it is
// still creating, then in one transaction applies the answer and, when
// idemKey is set, completes that record with the refund (settleCreate).
// pi and rec, when known, are re's payment and the record as committed:
// neither is read, nor is re when the answer writes it.
func (s *Service) dispatchRefund(ctx context.Context, re *Refund, pi *PaymentIntent, idemKey string, rec *IdempotencyRecord) (cur *Refund, stored *StoredAnswer, replayed bool, err error) {
	var result *Result
	if re.Attempt == AttemptCreating {
		r, err := s.createRefundCall(ctx, re, pi, "provider create refund")
		if err != nil {
			return nil, nil, false, err
		}
		result = &r
	}
	known := re
	if result == nil || result.Outcome == OutcomeUnacknowledged {
		known = nil // the answer does not write it
	}
	return settleCreate(ctx, s, refundAttempts, re.Scope(), re.ID, known, re.Provider, result, idemKey, rec)
}

// createRefundCall sends the create of re, a refund of pi (read when nil),
// to its Provider, and logs it with msg.
func (s *Service) createRefundCall(ctx context.Context, re *Refund, pi *PaymentIntent, msg string) (Result, error) {
	rp, payment, err := s.refundProvider(ctx, re, pi)
	if err != nil {
		return Result{}, err
	}
	r := rp.CreateRefund(ctx, refundRequest(re, payment))
	s.observe(re.Provider, r)
	s.log.InfoContext(ctx, msg, "refund", re.ID, "provider", re.Provider, "outcome", r.Outcome, "detail", r.Detail)
	return r, nil
}

// refundAttempts is the Provider-attempt core's view of refunds. A
// refusal fails the refund: it stays with its payment's Provider.
var refundAttempts = &attemptKind[Refund, *Refund]{
	resource: "refund", inquireJob: jobRefundInquire,
	get:    Tx.GetRefund,
	update: Tx.UpdateRefund,
	create: func(s *Service, ctx context.Context, re *Refund) (Result, error) {
		return s.createRefundCall(ctx, re, nil, "provider create refund again")
	},
	inquire: func(s *Service, ctx context.Context, re *Refund) (Result, error) {
		a, err := s.provider(ctx, re.Provider, CapRefunds)
		if err != nil {
			return Result{}, internalError(fmt.Errorf("refund %s: %w", re.ID, err))
		}
		return a.refunds.InquireRefund(ctx, re.attemptRef()), nil
	},
	applyCreate: (*Service).applyRefundCreate,
	applyFinal:  (*Service).applyRefundFinal,
	done:        func(re *Refund, _ Result) bool { return re.Status.Terminal() },
	resend: func(s *Service, ctx context.Context, tx Tx, re *Refund, now time.Time) error {
		return s.scheduleRefundDispatch(ctx, tx, re, now)
	},
}

// attemptKey is the Provider idempotency key of the refund: its id.
func (r *Refund) attemptKey() string { return r.ID }

// attemptRef names the refund at its Provider.
func (r *Refund) attemptRef() AttemptRef {
	return AttemptRef{Key: r.attemptKey(), Reference: r.ProviderRef}
}

// applyRefundCreate applies the answer to the create of re, still
// creating, in tx. An unacknowledged call leaves it creating, for the
// dispatch job to send again under the same key.
func (s *Service) applyRefundCreate(ctx context.Context, tx Tx, re *Refund, r Result) error {
	now := s.Now()
	if r.Outcome == OutcomeUnacknowledged {
		return s.scheduleRefundDispatch(ctx, tx, re, now.Add(2*time.Second))
	}
	re.learnRef(r)
	switch r.Outcome {
	case OutcomeUnknown:
		re.Attempt = AttemptUnknown
	case OutcomeSucceeded, OutcomeFailed, OutcomeRefused:
		return s.applyRefundFinal(ctx, tx, re, r, now)
	default: // pending, or anything not final
		re.Attempt = AttemptOpen
	}
	re.UpdatedAt = now
	if err := s.enqueue(ctx, tx, &Job{Kind: jobRefundInquire, Scope: re.Scope(), TargetID: re.ID, RunAt: now.Add(time.Second), DedupKey: jobRefundInquire + ":" + re.ID}); err != nil {
		return err
	}
	return tx.UpdateRefund(ctx, re)
}

// refundRequest is the Provider request of re, a refund of pi.
func refundRequest(re *Refund, pi *PaymentIntent) RefundRequest {
	return RefundRequest{Key: re.attemptKey(), PaymentKey: pi.attemptKey(), PaymentRef: pi.ProviderRef, Amount: re.Amount, Currency: re.Currency}
}

// refundProvider is the Provider that refunds re, with the payment it
// refunds: pi, or read when nil.
func (s *Service) refundProvider(ctx context.Context, re *Refund, pi *PaymentIntent) (RefundProvider, *PaymentIntent, error) {
	a, err := s.provider(ctx, re.Provider, CapRefunds)
	if err != nil {
		return nil, nil, internalError(fmt.Errorf("refund %s: %w", re.ID, err))
	}
	if pi == nil {
		if pi, err = s.store.GetPaymentIntent(ctx, re.Scope(), re.PaymentIntentID); err != nil {
			return nil, nil, internalError(fmt.Errorf("refund %s: %w", re.ID, err))
		}
	}
	return a.refunds, pi, nil
}

// applyRefundFinal applies a final Provider result to re in tx, with its
// ledger movement and the payment's refunded amount: a refusal (nothing
// was created) fails it with provider_error. Non-final results change
// nothing.
func (s *Service) applyRefundFinal(ctx context.Context, tx Tx, re *Refund, r Result, now time.Time) error {
	if re.Status.Terminal() {
		return nil
	}
	re.learnRef(r)
	if r.Outcome == OutcomeRefused { // refused before any refund existed
		r = Result{Outcome: OutcomeFailed, FailureCode: RefundProviderError}
	}
	var kind, to string
	switch r.Outcome {
	case OutcomeSucceeded:
		kind, to = "refund.succeeded", AccountPayments
		re.Status = RefundSucceeded
	case OutcomeFailed:
		kind, to = "refund.released", AccountAvailable
		re.Status, re.FailureCode = RefundFailed, RefundProviderDeclined
		if r.FailureCode == RefundProviderError {
			re.FailureCode = RefundProviderError
		}
	default:
		return nil
	}
	re.Attempt, re.CompletedAt, re.UpdatedAt = AttemptClosed, &now, now
	// The versioned update first, as for payouts (see updatePayout).
	if err := tx.UpdateRefund(ctx, re); err != nil {
		return err
	}
	pi, err := tx.GetPaymentIntent(ctx, re.Scope(), re.PaymentIntentID)
	if err != nil {
		return err
	}
	pi.RefundPendingAmount -= re.Amount
	if re.Status == RefundSucceeded {
		pi.RefundedAmount += re.Amount
	}
	pi.UpdatedAt = now
	if err := tx.UpdatePaymentIntent(ctx, pi); err != nil {
		return err
	}
	if re.Status == RefundSucceeded {
		if err := s.expectSettlement(ctx, tx, re.Scope(), re.Provider, now); err != nil {
			return err
		}
		// Its settlement line may have come before paykit learnt of the
		// success.
		if err := s.judgeLate(ctx, tx, re.Provider, "refund", re.ProviderRef, re.Scope(), re.ID,
			SettlementAmounts{Amount: -re.Amount, Currency: re.Currency}, nil, now); err != nil {
			return err
		}
		return s.book(ctx, tx, &BalanceTransaction{MerchantID: re.MerchantID, Environment: re.Environment, Type: BalanceTxnRefund,
			Source: re.ID, Amount: -re.Amount, Currency: re.Currency}, kind, now, Posting{AccountReserved, -re.Amount}, Posting{to, re.Amount})
	}
	return s.post(ctx, tx, re.Scope(), re.Currency, kind, re.ID, now, Posting{AccountReserved, -re.Amount}, Posting{to, re.Amount})
}

// dispatchRefundJob sends a refund that is still creating (after a crash,
// an unacknowledged call, or a host's commit) and completes the request's
// idempotency record when the request did not.
func (s *Service) dispatchRefundJob(ctx context.Context, j *Job) error {
	re, err := s.store.GetRefund(ctx, j.Scope, j.TargetID)
	if err != nil {
		return err
	}
	key, err := resumeKey(j)
	if err != nil {
		return err
	}
	rec, err := s.openRecord(ctx, j.Scope, key)
	switch {
	case err != nil:
		return err
	case rec == nil:
		key = "" // nothing to complete
	case rec.LockedUntil != nil && rec.LockedUntil.After(s.Now()):
		return errNotYet // the request still owns it
	}
	if re.Attempt != AttemptCreating && key == "" {
		return nil
	}
	cur, _, _, err := s.dispatchRefund(ctx, re, nil, key, rec)
	if err != nil {
		return err
	}
	if cur.Attempt == AttemptCreating {
		return errNotYet
	}
	return nil
}

// inquireRefundJob asks the Provider about a refund it has not finished.
// A refund it never received is sent again under the same key; nothing is
// failed without the Provider's word.
func (s *Service) inquireRefundJob(ctx context.Context, j *Job) error {
	re, err := s.store.GetRefund(ctx, j.Scope, j.TargetID)
	if err != nil {
		return err
	}
	if re.Attempt == AttemptClosed || re.Status.Terminal() {
		return nil
	}
	r, err := inquireAttempt(ctx, s, refundAttempts, re)
	if err != nil {
		return err
	}
	return s.applyRefundInquiry(ctx, j.Scope, re.ID, r)
}

// applyRefundInquiry applies what an inquiry or a callback said about a
// refund (applyAnswer). It returns errNotYet while the refund is not final.
func (s *Service) applyRefundInquiry(ctx context.Context, scope Scope, id string, r Result) error {
	return applyAnswer(ctx, s, refundAttempts, scope, id, r)
}

// GetRefund returns a refund of the caller's scope.
func (s *Service) GetRefund(ctx context.Context, p Principal, id string) (*Refund, error) {
	return getScoped(ctx, p, "refund", id, s.store.GetRefund)
}

// ListRefunds returns the caller's refunds, newest first.
func (s *Service) ListRefunds(ctx context.Context, p Principal, params RefundListParams) (*Page[Refund], error) {
	check := func() error {
		if err := params.check("refund", RefundStatus.Valid); err != nil {
			return err
		}
		return checkIDFilter("payment_intent", params.PaymentIntent)
	}
	// Refunds have no country: nothing matches one.
	return listScoped(ctx, s, p, "refund", params.PageParams, params, check, params.Country != "", s.store.ListRefunds,
		func(r *Refund) Position { return Position{r.CreatedAt, r.ID} })
}
