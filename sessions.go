package paykit

import (
	"context"
	"time"
)

// Operator console sessions live in the host's cookies; what paykit keeps
// is their end. A session ended on one instance is ended on every instance
// on the Store, and after a restart: the end is a Store lease held until
// the session would have expired.

// sessionLease names the lease that marks a session ended.
func sessionLease(id string) string { return "operator_session.ended." + id }

// endOperatorSession records that the operator console session id, valid
// until until, is over (a sign-out), and audits it as actor's.
func (s *Service) endOperatorSession(ctx context.Context, actor, id string, until time.Time) error {
	if id == "" {
		return invalidRequest("session", "A session id is required.")
	}
	now := s.Now()
	if until.After(now) {
		if _, err := s.store.TakeLease(ctx, Lease{Name: sessionLease(id), Owner: actor, Now: now, Until: until.UTC()}); err != nil {
			return asServiceError(err)
		}
	}
	err := s.inTx(ctx, func(tx Tx) error {
		return s.audit(ctx, tx, &AuditEvent{Actor: actor, Action: "operator_session.end", TargetType: "operator_session", TargetID: id})
	})
	if err != nil {
		return asServiceError(err)
	}
	return nil
}

// operatorSessionEnded reports whether the session id was ended by
// endOperatorSession.
func (s *Service) operatorSessionEnded(ctx context.Context, id string) (bool, error) {
	ended, err := s.store.LeaseHeld(ctx, sessionLease(id), s.Now())
	if err != nil {
		return false, asServiceError(err)
	}
	return ended, nil
}
