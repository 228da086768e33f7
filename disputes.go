package paykit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/paykit/paykit/internal/wire"
)

// DisputeStatus is the public lifecycle state of a dispute.
type DisputeStatus string

// Dispute statuses: the contract's closed set. Won and lost are terminal.
const (
	DisputeNeedsResponse DisputeStatus = "needs_response"
	DisputeUnderReview   DisputeStatus = "under_review"
	DisputeWon           DisputeStatus = "won"
	DisputeLost          DisputeStatus = "lost"
)

// disputeStatuses are the dispute statuses, in the contract's order.
var disputeStatuses = []DisputeStatus{DisputeNeedsResponse, DisputeUnderReview, DisputeWon, DisputeLost}

// Terminal reports whether s is final.
func (s DisputeStatus) Terminal() bool { return s == DisputeWon || s == DisputeLost }

// Valid reports whether s is one of the dispute statuses.
func (s DisputeStatus) Valid() bool { return slices.Contains(disputeStatuses, s) }

// DisputeReason is why the payer disputed a payment.
type DisputeReason string

// Dispute reasons: the contract's closed set.
const (
	DisputeFraudulent          DisputeReason = "fraudulent"
	DisputeProductNotReceived  DisputeReason = "product_not_received"
	DisputeProductUnacceptable DisputeReason = "product_unacceptable"
	DisputeDuplicate           DisputeReason = "duplicate"
	DisputeCreditNotProcessed  DisputeReason = "credit_not_processed"
	DisputeGeneral             DisputeReason = "general"
)

// disputeReasons are the dispute reasons, in the contract's order.
var disputeReasons = []DisputeReason{DisputeFraudulent, DisputeProductNotReceived, DisputeProductUnacceptable,
	DisputeDuplicate, DisputeCreditNotProcessed, DisputeGeneral}

// Valid reports whether r is one of the dispute reasons.
func (r DisputeReason) Valid() bool { return slices.Contains(disputeReasons, r) }

// Dispute is a payer's challenge of a succeeded payment through their
// bank. On opening, its amount and the Provider's dispute fee leave the
// merchant's available balance (even below zero); a won dispute returns
// the amount.
type Dispute struct {
	ID              string        `json:"id,omitzero"`
	MerchantID      string        `json:"merchant_id,omitzero"`
	Environment     Environment   `json:"environment,omitzero"`
	PaymentIntentID string        `json:"payment_intent_id,omitzero"`
	Amount          int64         `json:"amount,omitzero"`
	Currency        string        `json:"currency,omitzero"`
	Fee             int64         `json:"fee,omitzero"`
	Reason          DisputeReason `json:"reason,omitzero"`
	Status          DisputeStatus `json:"status,omitzero"`
	// Evidence is the merchant's evidence text; "" when none was given.
	Evidence string `json:"evidence,omitzero"`
	// EvidenceSubmittedAt is when the evidence went to the Provider.
	EvidenceSubmittedAt *time.Time `json:"evidence_submitted_at,omitzero"`
	EvidenceDueBy       time.Time  `json:"evidence_due_by,omitzero"`
	Provider            string     `json:"provider,omitzero"`     // internal
	ProviderRef         string     `json:"provider_ref,omitzero"` // internal: the Provider's dispute id
	ClosedAt            *time.Time `json:"closed_at,omitzero"`
	CreatedAt           time.Time  `json:"created_at,omitzero"`
	UpdatedAt           time.Time  `json:"updated_at,omitzero"`
	Version             int64      `json:"version,omitzero"`
}

// Scope returns the tenant of the dispute.
func (d *Dispute) Scope() Scope { return Scope{d.MerchantID, d.Environment} }

// DisputeListParams are the filters of GET /disputes: those of the other
// lists (Country and MerchantReference never match a dispute's) and the
// payment intent.
type DisputeListParams struct {
	ListParams[DisputeStatus]
	PaymentIntent string // exact id; empty does not filter
}

// Dispute jobs.
const (
	jobDisputeDeadline = "dispute.deadline" // lost at evidence_due_by without submitted evidence
	jobDisputeSubmit   = "dispute.submit"   // the evidence goes to the Provider
	jobDisputeAccept   = "dispute.accept"   // the merchant's concession goes to the Provider
	jobDisputeInquire  = "dispute.inquire"  // the Provider's decision of a dispute under review
	jobDisputeHold     = "dispute.hold"     // gives back a simulated dispute's hold its request never used
)

// disputeInquiryEvery is how often a dispute under review is asked about
// when no callback decided it.
const disputeInquiryEvery = time.Hour

// defaultEvidenceWindow is the time to respond when a Provider states no
// evidence deadline.
const defaultEvidenceWindow = 7 * 24 * time.Hour

func (s *Service) registerDisputeJobs() {
	s.handle(jobDisputeDeadline, s.disputeDeadlineJob, providerJobTimeout, JobPriorityMoney)
	s.handle(jobDisputeSubmit, s.disputeSubmitJob, providerJobTimeout, JobPriorityMoney)
	s.handle(jobDisputeAccept, s.disputeAcceptJob, providerJobTimeout, JobPriorityMoney)
	s.handle(jobDisputeInquire, s.disputeInquireJob, providerJobTimeout, JobPriorityMoney)
	s.handle(jobDisputeHold, s.disputeHoldJob, providerJobTimeout, JobPriorityMoney)
}

// disputeJob is the job of kind about d at at.
func disputeJob(kind string, d *Dispute, at time.Time) *Job {
	return &Job{Kind: kind, Scope: d.Scope(), TargetID: d.ID, RunAt: at, DedupKey: kind + ":" + d.ID}
}

// GetDispute returns a dispute of the caller's scope.
func (s *Service) GetDispute(ctx context.Context, p Principal, id string) (*Dispute, error) {
	return getScoped(ctx, p, "dispute", id, s.store.GetDispute)
}

// ListDisputes returns the caller's disputes, newest first.
func (s *Service) ListDisputes(ctx context.Context, p Principal, params DisputeListParams) (*Page[Dispute], error) {
	check := func() error {
		if err := params.check("dispute", DisputeStatus.Valid); err != nil {
			return err
		}
		return checkIDFilter("payment_intent", params.PaymentIntent)
	}
	// Disputes have neither a country nor a reference: nothing matches one.
	return listScoped(ctx, s, p, "dispute", params.PageParams, params, check, params.Country != "" || params.MerchantReference != "",
		s.store.ListDisputes, func(d *Dispute) Position { return Position{d.CreatedAt, d.ID} })
}

// DisputeEvidenceRequest is the merchant's evidence for a dispute; with
// Submit it goes to the Provider for review.
type DisputeEvidenceRequest struct {
	Text   string `json:"text" validate:"required,min=1,max=20000"`
	Submit bool   `json:"submit,omitempty"`
}

// SubmitDisputeEvidence stores the merchant's evidence for a dispute that
// needs a response, under the Idempotency-Key; with Submit the dispute is
// under review at once and the evidence goes to the Provider in the
// background. A dispute that does not need a response is invalid_state.
func (s *Service) SubmitDisputeEvidence(ctx context.Context, p Principal, idempotencyKey, id string, req DisputeEvidenceRequest) (*Dispute, Answer, error) {
	op, err := newOperation(p.Scope, idempotencyKey, "dispute.evidence", id, req)
	if err != nil {
		return nil, Answer{}, err
	}
	if err := validateRequest(&req); err != nil {
		return nil, Answer{}, err
	}
	if !wire.ValidText(req.Text) {
		return nil, Answer{}, invalidRequest("text", "text must be UTF-8 text without NUL characters.")
	}
	return idempotent(ctx, s, op, func(tx Tx, now time.Time) (AnswerKind, *Dispute, error) {
		d, err := s.disputeNeedingResponse(ctx, tx, p.Scope, id)
		if err != nil {
			return "", nil, err
		}
		d.Evidence, d.UpdatedAt = req.Text, now
		if !req.Submit {
			if err := tx.UpdateDispute(ctx, d); err != nil {
				return "", nil, err
			}
			return AnswerDone, d, s.emit(ctx, tx, d.Scope(), EventDisputeUpdated, d.ID, &Event{Resource: d.clone()})
		}
		d.Status, d.EvidenceSubmittedAt = DisputeUnderReview, &now
		if err := tx.UpdateDispute(ctx, d); err != nil {
			return "", nil, err
		}
		if err := s.completeJob(ctx, tx, jobDisputeDeadline, d.ID); err != nil {
			return "", nil, err
		}
		return AnswerDone, d, s.enqueue(ctx, tx, disputeJob(jobDisputeSubmit, d, now))
	})
}

// AcceptDispute concedes a dispute that needs a response, under the
// Idempotency-Key: it is lost at once, and the Provider is told in the
// background. A dispute that does not need a response is invalid_state.
func (s *Service) AcceptDispute(ctx context.Context, p Principal, idempotencyKey, id string) (*Dispute, Answer, error) {
	op, err := newOperation(p.Scope, idempotencyKey, "dispute.accept", id, struct{}{})
	if err != nil {
		return nil, Answer{}, err
	}
	return idempotent(ctx, s, op, func(tx Tx, now time.Time) (AnswerKind, *Dispute, error) {
		d, err := s.disputeNeedingResponse(ctx, tx, p.Scope, id)
		if err != nil {
			return "", nil, err
		}
		if err := s.closeDispute(ctx, tx, d, DisputeLost, now); err != nil {
			return "", nil, err
		}
		return AnswerDone, d, s.enqueue(ctx, tx, disputeJob(jobDisputeAccept, d, now))
	})
}

// disputeNeedingResponse reads the dispute id of scope in tx: not_found,
// or invalid_state unless it needs a response.
func (s *Service) disputeNeedingResponse(ctx context.Context, tx Tx, scope Scope, id string) (*Dispute, error) {
	d, err := tx.GetDispute(ctx, scope, id)
	if errors.Is(err, ErrNotFound) {
		return nil, notFound("dispute")
	}
	if err != nil {
		return nil, err
	}
	if d.Status != DisputeNeedsResponse {
		return nil, errorf(CodeInvalidState, "", "This dispute is %s; only a dispute that needs a response takes evidence or can be accepted.", d.Status)
	}
	return d, nil
}

// SimulateDisputeRequest asks the sandbox to open a dispute on a payment.
// Amount 0 disputes what is neither refunded nor disputed; Reason ""
// is general.
type SimulateDisputeRequest struct {
	Amount int64         `json:"amount,omitempty" validate:"omitempty,minor_units"`
	Reason DisputeReason `json:"reason,omitempty"`
}

// SimulateDispute is the dispute test helper: the payment's sandbox
// Provider (CapDisputeSimulation) opens a dispute on a succeeded
// test-environment payment, and paykit records it as a callback would.
// A payment that is not succeeded, or whose Provider cannot simulate
// disputes, is invalid_state; an amount above what is neither refunded nor
// disputed is amount_exceeds_refundable. Live keys get not_found.
func (s *Service) SimulateDispute(ctx context.Context, p Principal, paymentIntentID string, req SimulateDisputeRequest) (*Dispute, error) {
	if p.Environment != Test {
		return nil, notFound("test helper")
	}
	if err := validateRequest(&req); err != nil {
		return nil, err
	}
	if req.Reason == "" {
		req.Reason = DisputeGeneral
	}
	if !req.Reason.Valid() {
		return nil, invalidRequest("reason", "reason %q is not a dispute reason.", req.Reason)
	}
	pi, err := s.GetPaymentIntent(ctx, p, paymentIntentID)
	if err != nil {
		return nil, err
	}
	if pi.Status != PaymentSucceeded {
		return nil, errorf(CodeInvalidState, "", "Only a succeeded payment intent can be disputed; this one is %s.", pi.Status)
	}
	a, err := s.provider(ctx, pi.Provider, CapDisputeSimulation)
	if err != nil {
		return nil, errorf(CodeInvalidState, "", "The provider of this payment intent cannot simulate disputes.")
	}
	// Hold the amount on the payment first, so that refunds created
	// meanwhile and the dispute never exceed it together. A job gives the
	// hold back should this request die before it records the dispute.
	h := &disputeHold{ID: s.newID("dh"), Payment: paymentIntentID}
	err = s.inTx(ctx, func(tx Tx) error {
		cur, err := tx.GetPaymentIntent(ctx, p.Scope, paymentIntentID)
		if err != nil {
			return err
		}
		left := cur.Amount - cur.RefundedAmount - cur.RefundPendingAmount - cur.DisputedAmount
		h.Amount = req.Amount
		if h.Amount == 0 {
			h.Amount = left
		}
		if h.Amount <= 0 || h.Amount > left {
			return errorf(CodeAmountExceedsRefundable, "amount", "The disputable amount of this payment intent is %d.", max(left, 0))
		}
		cur.DisputedAmount += h.Amount
		cur.OpenDisputes++
		if err := tx.UpdatePaymentIntent(ctx, cur); err != nil {
			return err
		}
		payload, err := json.Marshal(h)
		if err != nil {
			return err
		}
		return s.enqueue(ctx, tx, &Job{Kind: jobDisputeHold, Scope: p.Scope, TargetID: h.ID, Payload: payload,
			RunAt: s.Now().Add(idempotencyLock), DedupKey: jobDisputeHold + ":" + h.ID})
	})
	if err != nil {
		return nil, asServiceError(err)
	}
	release := func() {
		err := s.inTx(context.WithoutCancel(ctx), func(tx Tx) error { return s.releaseHold(ctx, tx, p.Scope, h) })
		if err != nil {
			s.log.ErrorContext(ctx, "release dispute hold failed; its job will", "payment_intent", paymentIntentID, "err", err)
		}
	}
	pd, err := a.disputeSim.OpenDispute(ctx, DisputeOpening{PaymentKey: pi.attemptKey(), PaymentRef: pi.ProviderRef, Amount: h.Amount, Reason: req.Reason})
	if err != nil {
		release()
		return nil, internalError(fmt.Errorf("open sandbox dispute: %w", err))
	}
	d, err := s.recordDispute(ctx, pi.Provider, pd, h)
	if err != nil {
		release()
		return nil, asServiceError(err)
	}
	return d, nil
}

// disputeHold is what SimulateDispute holds on a payment for the dispute
// it asks the Provider to open, until it records the dispute: the
// dispute's amount, and one more open dispute. While a hold lasts, the
// payment's DisputedAmount and OpenDisputes exceed what its recorded
// disputes account for by it.
type disputeHold struct {
	ID      string `json:"id"`
	Payment string `json:"payment_intent"`
	Amount  int64  `json:"amount"`
}

// holdLeft reports, in tx, whether pi still carries a hold of amount:
// more open disputes, and at least amount more disputed, than its
// recorded disputes account for. A hold is used once, by whichever comes
// first: its dispute recorded (by the request or a callback), or its
// release.
func holdLeft(ctx context.Context, tx Tx, pi *PaymentIntent, amount int64) (bool, error) {
	if pi.OpenDisputes <= 0 {
		return false, nil
	}
	recorded, err := tx.ListDisputes(ctx, ListQuery[DisputeListParams]{Scope: pi.Scope(), Filter: DisputeListParams{PaymentIntent: pi.ID}})
	if err != nil {
		return false, err
	}
	var disputed int64
	open := 0
	for _, d := range recorded {
		if d.Status != DisputeWon {
			disputed += d.Amount
		}
		if !d.Status.Terminal() {
			open++
		}
	}
	return pi.OpenDisputes > open && pi.DisputedAmount-disputed >= amount, nil
}

// releaseHold gives h back, in tx, unless it was used, and completes its
// job.
func (s *Service) releaseHold(ctx context.Context, tx Tx, scope Scope, h *disputeHold) error {
	pi, err := tx.GetPaymentIntent(ctx, scope, h.Payment)
	if err != nil {
		return err
	}
	left, err := holdLeft(ctx, tx, pi, h.Amount)
	if err != nil {
		return err
	}
	if left {
		pi.DisputedAmount -= h.Amount
		pi.OpenDisputes--
		pi.UpdatedAt = s.Now()
		if err := tx.UpdatePaymentIntent(ctx, pi); err != nil {
			return err
		}
	}
	return s.completeJob(ctx, tx, jobDisputeHold, h.ID)
}

// disputeHoldJob gives back the hold of a simulated dispute whose request
// stopped before it recorded the dispute. Should the Provider have opened
// it all the same, its callback records it later, as any dispute.
func (s *Service) disputeHoldJob(ctx context.Context, j *Job) error {
	var h disputeHold
	if err := json.Unmarshal(j.Payload, &h); err != nil {
		return nil // not a hold this version can make sense of
	}
	return s.inTx(ctx, func(tx Tx) error { return s.releaseHold(ctx, tx, j.Scope, &h) })
}

// recordDispute applies a Provider's account of a dispute: a dispute paykit
// does not know yet is created on its payment, with its ledger move; a
// known one moves to the state the Provider states. A dispute of a
// payment that carries a hold of its amount (SimulateDispute's: held, or
// one whose request died) uses the hold; held is released when its
// dispute was recorded first by a callback that found no hold to use.
func (s *Service) recordDispute(ctx context.Context, provider string, pd ProviderDispute, held *disputeHold) (*Dispute, error) {
	var out *Dispute
	err := s.inTx(ctx, func(tx Tx) error {
		now := s.Now()
		d, err := tx.FindDisputeByProviderRef(ctx, provider, pd.Reference)
		if err == nil {
			if held != nil { // a callback recorded it first
				if err := s.releaseHold(ctx, tx, d.Scope(), held); err != nil {
					return err
				}
			}
			out = d
			return s.moveDispute(ctx, tx, d, pd, now)
		}
		if !errors.Is(err, ErrNotFound) {
			return err
		}
		pi, err := s.disputedPayment(ctx, tx, provider, pd, held)
		if err != nil {
			return err
		}
		if pi.Status != PaymentSucceeded {
			// Paid at the Provider, not yet here: the payment's own
			// recovery learns it, and the Provider sends the dispute again.
			return fmt.Errorf("dispute %s of payment %s, which is %s: %w", pd.Reference, pi.ID, pi.Status, errNotYet)
		}
		d = &Dispute{
			ID: s.newID("dp"), MerchantID: pi.MerchantID, Environment: pi.Environment, PaymentIntentID: pi.ID,
			Amount: pd.Amount, Currency: pi.Currency, Fee: max(pd.Fee, 0), Reason: pd.Reason, Status: DisputeNeedsResponse,
			EvidenceDueBy: pd.EvidenceDueBy, Provider: provider, ProviderRef: pd.Reference, CreatedAt: now, UpdatedAt: now,
		}
		if !d.Reason.Valid() {
			d.Reason = DisputeGeneral
		}
		if d.EvidenceDueBy.IsZero() {
			d.EvidenceDueBy = now.Add(defaultEvidenceWindow)
		}
		d.EvidenceDueBy = d.EvidenceDueBy.Truncate(time.Millisecond)
		used, err := holdLeft(ctx, tx, pi, d.Amount)
		if err != nil {
			return err
		}
		if !used {
			pi.DisputedAmount += d.Amount
			pi.OpenDisputes++
		}
		pi.UpdatedAt = now // written either way: a release of the hold meanwhile must retry
		if err := tx.UpdatePaymentIntent(ctx, pi); err != nil {
			return err
		}
		if held != nil {
			if err := s.completeJob(ctx, tx, jobDisputeHold, held.ID); err != nil {
				return err
			}
		}
		if err := tx.CreateDispute(ctx, d); err != nil {
			return err
		}
		if err := s.book(ctx, tx, &BalanceTransaction{MerchantID: d.MerchantID, Environment: d.Environment, Type: BalanceTxnDispute,
			Source: d.ID, Amount: -d.Amount, Fee: d.Fee, Currency: d.Currency}, "dispute.created", now,
			Posting{AccountAvailable, -(d.Amount + d.Fee)}, Posting{AccountDisputes, d.Amount}, Posting{AccountFees, d.Fee}); err != nil {
			return err
		}
		if err := s.enqueue(ctx, tx, disputeJob(jobDisputeDeadline, d, d.EvidenceDueBy)); err != nil {
			return err
		}
		if err := s.expectSettlement(ctx, tx, d.Scope(), provider, now); err != nil {
			return err
		}
		// Its settlement line may have come before paykit learnt of it.
		if err := s.judgeLate(ctx, tx, provider, "dispute", d.ProviderRef, d.Scope(), d.ID,
			SettlementAmounts{Amount: -d.Amount, Fee: d.Fee, Currency: d.Currency}, nil, now); err != nil {
			return err
		}
		out = d
		return s.moveDispute(ctx, tx, d, pd, now)
	})
	return out, err
}

// disputedPayment finds the payment a Provider's dispute is about: held's,
// or the attempt the Provider names by its id or by paykit's key.
func (s *Service) disputedPayment(ctx context.Context, tx Tx, provider string, pd ProviderDispute, held *disputeHold) (*PaymentIntent, error) {
	if held != nil {
		return tx.FindPaymentIntent(ctx, held.Payment)
	}
	if pd.PaymentRef != "" {
		o, err := tx.FindByProviderRef(ctx, provider, pd.PaymentRef)
		if err == nil && o.Object == "payment_intent" {
			return tx.GetPaymentIntent(ctx, o.Scope, o.ID)
		}
		if err != nil && !errors.Is(err, ErrNotFound) {
			return nil, err
		}
	}
	if pd.PaymentKey != "" {
		pi, err := tx.FindPaymentIntent(ctx, pd.PaymentKey)
		if err == nil && pi.Provider == provider {
			return pi, nil
		}
		if err != nil && !errors.Is(err, ErrNotFound) {
			return nil, err
		}
	}
	return nil, ErrNotFound
}

// moveDispute moves d, in tx, to the state the Provider states: under
// review, won or lost. A closed dispute stays as it is.
func (s *Service) moveDispute(ctx context.Context, tx Tx, d *Dispute, pd ProviderDispute, now time.Time) error {
	if d.Status.Terminal() || pd.Status == d.Status {
		return nil
	}
	switch pd.Status {
	case DisputeUnderReview:
		d.Status, d.UpdatedAt = DisputeUnderReview, now
		if err := tx.UpdateDispute(ctx, d); err != nil {
			return err
		}
		return s.completeJob(ctx, tx, jobDisputeDeadline, d.ID)
	case DisputeWon, DisputeLost:
		return s.closeDispute(ctx, tx, d, pd.Status, now)
	}
	return nil
}

// closeDispute ends d, in tx, as won or lost: the payment no longer holds
// it open, and a won dispute's amount comes back to the available balance.
func (s *Service) closeDispute(ctx context.Context, tx Tx, d *Dispute, status DisputeStatus, now time.Time) error {
	d.Status, d.ClosedAt, d.UpdatedAt = status, &now, now
	if err := tx.UpdateDispute(ctx, d); err != nil {
		return err
	}
	pi, err := tx.GetPaymentIntent(ctx, d.Scope(), d.PaymentIntentID)
	if err != nil {
		return err
	}
	pi.OpenDisputes--
	if status == DisputeWon {
		pi.DisputedAmount -= d.Amount
	}
	if err := tx.UpdatePaymentIntent(ctx, pi); err != nil {
		return err
	}
	if err := s.completeJob(ctx, tx, jobDisputeDeadline, d.ID); err != nil {
		return err
	}
	if err := s.completeJob(ctx, tx, jobDisputeInquire, d.ID); err != nil {
		return err
	}
	if status != DisputeWon {
		return nil
	}
	if err := s.expectSettlement(ctx, tx, d.Scope(), d.Provider, now); err != nil {
		return err
	}
	// The reversal's settlement line may have come before paykit learnt
	// the dispute was won.
	if err := s.judgeLate(ctx, tx, d.Provider, "dispute_reversal", d.ProviderRef, d.Scope(), d.ID,
		SettlementAmounts{Amount: d.Amount, Currency: d.Currency}, nil, now); err != nil {
		return err
	}
	return s.book(ctx, tx, &BalanceTransaction{MerchantID: d.MerchantID, Environment: d.Environment, Type: BalanceTxnDisputeReversal,
		Source: d.ID, Amount: d.Amount, Currency: d.Currency}, "dispute.won", now,
		Posting{AccountDisputes, -d.Amount}, Posting{AccountAvailable, d.Amount})
}

// disputeDeadlineJob loses a dispute still needing a response at its
// evidence deadline.
func (s *Service) disputeDeadlineJob(ctx context.Context, j *Job) error {
	return s.inTx(ctx, func(tx Tx) error {
		d, err := tx.GetDispute(ctx, j.Scope, j.TargetID)
		if err != nil {
			return err
		}
		now := s.Now()
		if d.Status != DisputeNeedsResponse {
			return nil
		}
		if now.Before(d.EvidenceDueBy) {
			return notYetAt{d.EvidenceDueBy}
		}
		return s.closeDispute(ctx, tx, d, DisputeLost, now)
	})
}

// disputeProvider returns the dispute methods of d's Provider.
func (s *Service) disputeProvider(ctx context.Context, d *Dispute) (DisputeProvider, error) {
	a, err := s.provider(ctx, d.Provider, CapDisputes)
	if err != nil {
		return nil, err
	}
	return a.disputes, nil
}

// disputeSubmitJob sends a dispute's evidence to its Provider and applies
// the answer; while the Provider reviews it, it is asked again later.
func (s *Service) disputeSubmitJob(ctx context.Context, j *Job) error {
	d, err := s.store.GetDispute(ctx, j.Scope, j.TargetID)
	if err != nil {
		return err
	}
	if d.Status.Terminal() {
		return nil
	}
	dp, err := s.disputeProvider(ctx, d)
	if err != nil {
		return err
	}
	pd, err := dp.SubmitDisputeEvidence(ctx, d.ProviderRef, d.Evidence)
	if err != nil {
		return err
	}
	return s.afterDisputeCall(ctx, d, pd)
}

// disputeAcceptJob tells a dispute's Provider that the merchant concedes.
func (s *Service) disputeAcceptJob(ctx context.Context, j *Job) error {
	d, err := s.store.GetDispute(ctx, j.Scope, j.TargetID)
	if err != nil {
		return err
	}
	dp, err := s.disputeProvider(ctx, d)
	if err != nil {
		return err
	}
	_, err = dp.AcceptDispute(ctx, d.ProviderRef)
	return err
}

// disputeInquireJob asks the Provider about a dispute under review.
func (s *Service) disputeInquireJob(ctx context.Context, j *Job) error {
	d, err := s.store.GetDispute(ctx, j.Scope, j.TargetID)
	if err != nil {
		return err
	}
	if d.Status.Terminal() {
		return nil
	}
	dp, err := s.disputeProvider(ctx, d)
	if err != nil {
		return err
	}
	pd, err := dp.InquireDispute(ctx, d.ProviderRef)
	if err != nil {
		return err
	}
	if err := s.afterDisputeCall(ctx, d, pd); err != nil {
		return err
	}
	if pd.Status.Terminal() {
		return nil
	}
	return notYetAt{s.Now().Add(disputeInquiryEvery)}
}

// afterDisputeCall applies the Provider's answer about d and, while it is
// not decided, makes sure it is asked again.
func (s *Service) afterDisputeCall(ctx context.Context, d *Dispute, pd ProviderDispute) error {
	return s.inTx(ctx, func(tx Tx) error {
		cur, err := tx.GetDispute(ctx, d.Scope(), d.ID)
		if err != nil {
			return err
		}
		now := s.Now()
		if err := s.moveDispute(ctx, tx, cur, pd, now); err != nil {
			return err
		}
		if cur.Status.Terminal() {
			return nil
		}
		return s.enqueue(ctx, tx, disputeJob(jobDisputeInquire, cur, now.Add(disputeInquiryEvery)))
	})
}
