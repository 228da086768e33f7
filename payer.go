package paykit

import (
	"context"
	"errors"
	"fmt"
	"net/url"
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
	prov, err := s.provider(ctx, pi.Provider, CapPayments|CapPayerSimulation)
	if err != nil {
		return nil, errorf(CodeInvalidState, "", "The Provider of this payment intent cannot simulate a payer.")
	}
	act := prov.payer.Decline
	if approve {
		act = prov.payer.Approve
	}
	actErr := act(ctx, pi.attemptKey())
	// Whether or not the Provider took the payer's action, its current
	// answer decides the intent.
	r := prov.InquirePayment(ctx, pi.attemptRef())
	if err := s.applyInquiry(ctx, p.Scope, pi.ID, r); err != nil && !errors.Is(err, errNotYet) {
		return nil, internalError(err)
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
	return nil, internalError(fmt.Errorf("simulate payer: %w", actErr))
}

func errNotAwaitingPayer(status PaymentStatus) error {
	return errorf(CodeInvalidState, "", "This payment intent is %s; only one awaiting its payer (requires_action) can be approved or declined.", status)
}

// ErrLinkInvalid is returned for a payer link that is forged, altered,
// expired or no longer usable. Payer pages show it without detail.
var ErrLinkInvalid = errors.New("paykit: payer link is invalid or expired")

// ContinuePayment resolves a continuation link (next_action.url) to the
// Provider page the payer must visit. The Provider's URL is never shown to
// merchants; only the payer's browser is redirected to it.
func (s *Service) ContinuePayment(ctx context.Context, token string) (string, error) {
	scope, id, ok := s.openLinkToken(tokenContinue, token)
	if !ok {
		return "", ErrLinkInvalid
	}
	pi, err := s.store.GetPaymentIntent(ctx, scope, id)
	if err != nil || pi.Status != PaymentRequiresAction || pi.ProviderURL == "" {
		return "", ErrLinkInvalid
	}
	return pi.ProviderURL, nil
}

// PaymentReturn handles the payer coming back from the Provider: it asks
// the worker to look at the attempt now (the payer's return says something
// happened) and returns where to send the payer: the merchant's return_url
// with payment_intent added, or "" when there is none.
func (s *Service) PaymentReturn(ctx context.Context, token string) (*PaymentIntent, string, error) {
	scope, id, ok := s.openLinkToken(tokenReturn, token)
	if !ok {
		return nil, "", ErrLinkInvalid
	}
	pi, err := s.store.GetPaymentIntent(ctx, scope, id)
	if err != nil {
		return nil, "", ErrLinkInvalid
	}
	if !pi.Status.Terminal() && pi.Attempt != AttemptNone {
		err := s.inTx(ctx, func(tx Tx) error {
			return s.enqueueSoon(ctx, tx, &Job{Kind: jobPaymentInquire, Scope: scope, TargetID: pi.ID, DedupKey: jobPaymentInquire + ":" + pi.ID})
		})
		if err != nil {
			return nil, "", internalError(err)
		}
	}
	if pi.CheckoutID != "" {
		return pi, s.checkoutReturn(ctx, pi), nil
	}
	if pi.ReturnURL == "" {
		return pi, "", nil
	}
	u, err := url.Parse(pi.ReturnURL)
	if err != nil {
		return pi, "", nil
	}
	q := u.Query()
	q.Set("payment_intent", pi.ID)
	u.RawQuery = q.Encode()
	return pi, u.String(), nil
}

// PaymentQRData returns the EMVCo payload behind a QR image link.
func (s *Service) PaymentQRData(ctx context.Context, token string) (string, error) {
	scope, id, ok := s.openLinkToken(tokenQR, token)
	if !ok {
		return "", ErrLinkInvalid
	}
	pi, err := s.store.GetPaymentIntent(ctx, scope, id)
	if err != nil || pi.NextAction == nil || pi.NextAction.QRData == "" {
		return "", ErrLinkInvalid
	}
	return pi.NextAction.QRData, nil
}
