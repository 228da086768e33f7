package paykit

import (
	"context"
	"errors"
	"net/http"
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
		return Errorf(CodeInvalidRequest, "", "The callback could not be verified.")
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
	var err error
	switch e.Kind {
	case "payment":
		var pi *PaymentIntent
		if pi, err = s.store.FindPaymentIntent(ctx, e.Key); err == nil {
			if pi.Provider != provider || attemptKey(pi) != e.Key {
				return nil // not this Provider's attempt
			}
			if pi.Attempt == AttemptCreating {
				// The create call is still out: its answer (or, failing
				// that, recovery) settles the attempt, so the create keeps
				// answering what it saw. Recovery finds this outcome later.
				return nil
			}
			err = s.applyInquiry(ctx, pi.Scope(), pi.ID, e.Result)
		}
	case "payout":
		var po *PayoutIntent
		if po, err = s.store.FindPayoutIntent(ctx, e.Key); err == nil {
			if po.Provider != provider || po.Attempt == AttemptCreating {
				return nil // not ours, or the dispatch call is still out (as above)
			}
			err = s.applyPayoutInquiry(ctx, po.Scope(), po.ID, e.Result)
		}
	case "refund":
		var re *Refund
		if re, err = s.store.FindRefund(ctx, e.Key); err == nil {
			if re.Provider != provider || re.Attempt == AttemptCreating {
				return nil // not ours, or the create call is still out (as above)
			}
			err = s.applyRefundInquiry(ctx, re.Scope(), re.ID, e.Result)
		}
	default:
		return nil
	}
	switch {
	case errors.Is(err, ErrNotFound):
		s.log.WarnContext(ctx, "provider callback about an unknown attempt", "provider", provider, "callback_id", e.ID, "kind", e.Kind)
		return nil
	case errors.Is(err, errNotYet):
		return nil // a non-final state: nothing to apply yet
	case err != nil:
		return Internal(err)
	}
	return nil
}
