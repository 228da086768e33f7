package paykit

import (
	"context"
	"errors"
	"net/url"
)

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
			return nil, "", Internal(err)
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
