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
		return nil, Errorf(CodeInvalidState, "", "This payment intent is %s; only one awaiting its payer (requires_action) can be approved or declined.", pi.Status)
	}
	prov, ok := s.providers[pi.Provider].(PayerSimulator)
	if !ok {
		return nil, Errorf(CodeInvalidState, "", "The Provider of this payment intent cannot simulate a payer.")
	}
	act := prov.Decline
	if approve {
		act = prov.Approve
	}
	if err := act(ctx, attemptKey(pi)); err != nil {
		return nil, Internal(fmt.Errorf("simulate payer: %w", err))
	}
	r := s.providers[pi.Provider].InquirePayment(ctx, attemptKey(pi))
	if err := s.applyInquiry(ctx, p.Scope, pi.ID, r); err != nil && !errors.Is(err, errNotYet) {
		return nil, Internal(err)
	}
	return s.GetPaymentIntent(ctx, p, id)
}
