package paykit

import (
	"context"
	"errors"
	"net/http"
	"time"
)

// HandleProviderCallback verifies an inbound callback of the named
// Provider with its adapter and applies each event it carries through the
// same state machine as inquiry results. A callback that repeats one
// already applied, or races a recovery job, finds the resource already in
// the state it reports and changes nothing: one transition, one event.
//
// It answers not_found for an unknown Provider and invalid_request for a
// callback that does not verify (no detail: the caller may be anybody).
// Events about resources paykit does not know are acknowledged and
// ignored, so the Provider stops resending them.
func (s *Service) HandleProviderCallback(ctx context.Context, provider string, r *http.Request) error {
	prov, err := s.provider(ctx, provider, 0)
	if err != nil {
		return notFound("provider")
	}
	events, err := prov.ParseCallback(ctx, r)
	if err != nil {
		s.log.WarnContext(ctx, "provider callback refused", "provider", provider, "err", err)
		return errorf(CodeInvalidRequest, "", "The callback could not be verified.")
	}
	for _, e := range events {
		if err := s.applyCallback(ctx, provider, e); err != nil {
			return err
		}
	}
	return nil
}

func (s *Service) applyCallback(ctx context.Context, provider string, e CallbackEvent) error {
	s.log.InfoContext(ctx, "provider callback", "provider", provider, "callback_id", e.ID, "kind", e.Kind, "outcome", e.Result.Outcome)
	if e.Kind == "dispute" {
		if e.Dispute == nil {
			return nil
		}
		_, err := s.recordDispute(ctx, provider, *e.Dispute, nil)
		switch {
		case errors.Is(err, ErrNotFound):
			s.log.WarnContext(ctx, "provider callback about a dispute of an unknown payment", "provider", provider, "callback_id", e.ID)
			return nil
		case errors.Is(err, errNotYet):
			// Refused, so that the Provider sends it again once the
			// payment's success is known here.
			s.log.WarnContext(ctx, "provider callback about a dispute of a payment not succeeded yet", "provider", provider, "callback_id", e.ID)
			return &Error{Code: CodeServiceUnavailable, Message: "The payment of this dispute is not known as paid yet; send it again later.",
				RetryAfter: time.Minute, Err: err}
		case err != nil:
			return internalError(err)
		}
		return nil
	}
	object, ok := callbackObjects[e.Kind]
	if !ok {
		return nil
	}
	o, ours, err := s.callbackOwner(ctx, provider, object, e)
	switch {
	case errors.Is(err, ErrNotFound):
		s.log.WarnContext(ctx, "provider callback about an unknown attempt", "provider", provider, "callback_id", e.ID, "kind", e.Kind)
		return nil
	case err != nil:
		return internalError(err)
	case !ours:
		return nil // not this Provider's attempt
	case o.Attempt == AttemptCreating:
		// The create call is still out: its answer (or, failing that,
		// recovery) settles the attempt, so the create keeps answering
		// what it saw. Recovery finds this outcome later.
		return nil
	}
	switch object {
	case "payment_intent":
		err = s.applyInquiry(ctx, o.Scope, o.ID, e.Result)
	case "payout_intent":
		err = s.applyPayoutInquiry(ctx, o.Scope, o.ID, e.Result)
	default:
		err = s.applyRefundInquiry(ctx, o.Scope, o.ID, e.Result)
	}
	switch {
	case errors.Is(err, ErrNotFound):
		s.log.WarnContext(ctx, "provider callback about an unknown attempt", "provider", provider, "callback_id", e.ID, "kind", e.Kind)
		return nil
	case errors.Is(err, errNotYet):
		return nil // a non-final state: nothing to apply yet
	case err != nil:
		return internalError(err)
	}
	return nil
}

// callbackObjects is the resource each kind of callback is about.
var callbackObjects = map[string]string{"payment": "payment_intent", "payout": "payout_intent", "refund": "refund"}

// callbackOwner finds the resource (object) a callback of provider is
// about, and whether it is this Provider's attempt: by the Provider's id,
// when the callback names one that is known, in one lookup; else by the
// attempt's key, which is the resource's id.
func (s *Service) callbackOwner(ctx context.Context, provider, object string, e CallbackEvent) (AttemptOwner, bool, error) {
	o, err := s.store.FindByProviderRef(ctx, provider, e.Result.Reference)
	if err == nil {
		return o, o.Object == object && (e.Key == "" || e.Key == o.ID), nil
	}
	if !errors.Is(err, ErrNotFound) {
		return o, false, err
	}
	var a *ProviderAttempt
	switch object {
	case "payment_intent":
		var pi *PaymentIntent
		if pi, err = s.store.FindPaymentIntent(ctx, e.Key); err == nil {
			o, a = AttemptOwner{Object: object, Scope: pi.Scope(), ID: pi.ID}, &pi.ProviderAttempt
		}
	case "payout_intent":
		var po *PayoutIntent
		if po, err = s.store.FindPayoutIntent(ctx, e.Key); err == nil {
			o, a = AttemptOwner{Object: object, Scope: po.Scope(), ID: po.ID}, &po.ProviderAttempt
		}
	default:
		var re *Refund
		if re, err = s.store.FindRefund(ctx, e.Key); err == nil {
			o, a = AttemptOwner{Object: object, Scope: re.Scope(), ID: re.ID}, &re.ProviderAttempt
		}
	}
	if err != nil {
		return o, false, err
	}
	o.Attempt = a.Attempt
	return o, a.Provider == provider && o.ID == e.Key, nil
}
