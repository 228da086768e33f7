package paykit

import (
	"context"
	"errors"
	"fmt"
)

// SimulatePayer acts as the payer of a test-environment intent that waits
// for them: approve pays, decline refuses, on the sandbox Provider's page.
// The intent then follows the Provider's answer. Live keys get not_found,
// as if the operation did not exist; an intent that does not wait for a
// payer is invalid_state.
func (s *Service) SimulatePayer(ctx context.Context, p Principal, id string, approve bool) (*PaymentIntent, error) {
	if p.Environment != Test {
		return nil, notFound("test helper")
	}
	pi, err := s.GetPaymentIntent(ctx, p, id)
	if err != nil {
		return nil, err
	}
	if pi.Status != PaymentRequiresAction || pi.Attempt != AttemptOpen {
		return nil, errNotAwaitingPayer(pi.Status)
	}
	prov, err := s.provider(pi.Provider, CapPayments|CapPayerSimulation)
	if err != nil {
		return nil, Errorf(CodeInvalidState, "", "The Provider of this payment intent cannot simulate a payer.")
	}
	act := prov.payer.Decline
	if approve {
		act = prov.payer.Approve
	}
	actErr := act(ctx, attemptKey(pi))
	// Whether or not the Provider took the payer's action, its current
	// answer decides the intent.
	r := prov.InquirePayment(ctx, attemptKey(pi))
	if err := s.applyInquiry(ctx, p.Scope, pi.ID, r); err != nil && !errors.Is(err, errNotYet) {
		return nil, Internal(err)
	}
	cur, err := s.GetPaymentIntent(ctx, p, id)
	if err != nil || actErr == nil {
		return cur, err
	}
	if cur.Status != PaymentRequiresAction {
		// The attempt stopped waiting before the worker noticed (the payer
		// ran out of time, or it settled): nothing left to act on.
		return nil, errNotAwaitingPayer(cur.Status)
	}
	return nil, Internal(fmt.Errorf("simulate payer: %w", actErr))
}

func errNotAwaitingPayer(status PaymentStatus) error {
	return Errorf(CodeInvalidState, "", "This payment intent is %s; only one awaiting its payer (requires_action) can be approved or declined.", status)
}
