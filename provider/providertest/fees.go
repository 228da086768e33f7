package providertest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/paykit/paykit"
)

// plausible bounds an AvailableOn that is set: a date the Provider could
// mean (a unit mistake, seconds read as milliseconds say, lands outside).
var (
	earliest = time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
	latest   = time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC)
)

// fees checks that succeeded payments carry the Provider's fee, by
// inquiry (by key and by the Provider's id) and by callback.
func (s *suite) fees(t *testing.T) {
	ctx := context.Background()
	for _, amount := range s.amounts() {
		t.Run(fmt.Sprint(amount), func(t *testing.T) {
			req, r := s.pay(t, "fee", amount)
			s.fee(t, "inquiry by key", req.Key, r)
			s.fee(t, "inquiry by id", req.Key, checked(t, "inquiry by id",
				s.prov.InquirePayment(ctx, paykit.AttemptRef{Key: req.Key, Reference: r.Reference})))
			events, err := s.prov.ParseCallback(ctx, s.h.Callback(req.Key))
			if err != nil {
				t.Fatalf("a callback about the succeeded payment is refused: %v", err)
			}
			for _, e := range events {
				if checked(t, "callback", e.Result).Outcome == paykit.OutcomeSucceeded {
					s.fee(t, "callback", req.Key, e.Result)
				}
			}
		})
	}
}

// fee checks the fee and available date of r, a result about the payment
// under key that must have succeeded.
func (s *suite) fee(t *testing.T, what, key string, r paykit.Result) {
	t.Helper()
	if r.Outcome != paykit.OutcomeSucceeded {
		t.Errorf("%s: %s (%s), want succeeded", what, r.Outcome, r.Detail)
		return
	}
	if r.Fee < 0 {
		t.Errorf("%s: Fee %d: a fee is never negative", what, r.Fee)
	}
	if s.h.Fee != nil {
		switch charged, ok := s.h.Fee(key); {
		case !ok:
			t.Errorf("%s: Harness.Fee knows no fee of the succeeded payment %s", what, key)
		case r.Fee != charged:
			t.Errorf("%s: Fee %d, the Provider charged %d", what, r.Fee, charged)
		}
	}
	if !r.AvailableOn.IsZero() && (r.AvailableOn.Before(earliest) || r.AvailableOn.After(latest)) {
		t.Errorf("%s: AvailableOn %s is no date the Provider means", what, r.AvailableOn)
	}
}
