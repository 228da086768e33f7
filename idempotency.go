package paykit

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// IdempotencyState is the lifecycle of an idempotency record.
type IdempotencyState string

// Idempotency record states.
const (
	IdempotencyInProgress IdempotencyState = "in_progress"
	IdempotencyComplete   IdempotencyState = "complete"
)

// IdempotencyRecord remembers one Idempotency-Key of one scope: the request's
// fingerprint, how far its execution got (RecoveryPoint, in the manner of
// Stripe's idempotency design) and, once complete, the answer to replay.
type IdempotencyRecord struct {
	Scope
	Key           string
	Fingerprint   string
	State         IdempotencyState
	RecoveryPoint string
	ResourceID    string
	LockedUntil   *time.Time
	Answer        *StoredAnswer // set once complete
	CreatedAt     time.Time
	UpdatedAt     time.Time
	ExpiresAt     time.Time
	Version       int64
}

// AnswerKind says what a request that changes state did.
type AnswerKind string

// Answer kinds.
const (
	// AnswerCreated: the resource was created.
	AnswerCreated AnswerKind = "created"
	// AnswerAccepted: the change was accepted and completes in the
	// background (a cancel waiting for the Provider).
	AnswerAccepted AnswerKind = "accepted"
	// AnswerDone: the change is complete.
	AnswerDone AnswerKind = "done"
)

// Answer is how the Service answered a create or cancel under an
// Idempotency-Key.
type Answer struct {
	Kind AnswerKind
	// Replayed: the answer is the stored one of an earlier request with
	// the same key, and the resource is as it was then.
	Replayed bool
}

// StoredAnswer is what an idempotency record keeps of a completed request:
// its kind and the resource as it was answered, so that a replay answers
// the same. A *WebhookEndpoint holds its secrets sealed, as stored.
type StoredAnswer struct {
	Kind     AnswerKind
	Resource Resource
}

// answerOf makes the stored answer of kind with a copy of resource v.
func answerOf(kind AnswerKind, v any) *StoredAnswer {
	r, ok := v.(Resource)
	if !ok {
		panic(fmt.Sprintf("paykit: no stored answer for %T", v))
	}
	return &StoredAnswer{Kind: kind, Resource: r.clone()}
}

// validIdempotencyKey reports whether key is 1 to 255 printable ASCII
// characters (! to ~).
func validIdempotencyKey(key string) bool {
	if len(key) == 0 || len(key) > 255 {
		return false
	}
	for i := 0; i < len(key); i++ {
		if key[i] < '!' || key[i] > '~' {
			return false
		}
	}
	return true
}

// idempotencyLock is how long a request owns its key before a retry or the
// worker may take over its unfinished execution. It outlasts a Provider call.
const idempotencyLock = 30 * time.Second

// operation identifies one idempotent request: its scope, key and
// fingerprint (operation name, target and parameters).
type operation struct {
	scope       Scope
	key         string
	fingerprint string
	// deferred: the work runs in the worker after the host commits, so the
	// record is not locked to this call.
	deferred bool
	// resourceID, when set, is the id of the resource the operation makes:
	// a new record starts at attempt_started with it, as it commits with
	// the resource, instead of being inserted and then checkpointed.
	resourceID string
}

// newOperation fingerprints the request: name is the operation
// ("payment_intent.cancel"), target the id it acts on ("" for a create),
// params the Go request. Semantically equal requests give equal
// fingerprints.
func newOperation(scope Scope, key, name, target string, params any) (operation, error) {
	if !validIdempotencyKey(key) {
		return operation{}, invalidRequest("Idempotency-Key", "Idempotency-Key header must be 1 to 255 printable ASCII characters.")
	}
	fp, err := fingerprint(name+" "+target, params)
	if err != nil {
		return operation{}, err
	}
	return operation{scope: scope, key: key, fingerprint: fp}, nil
}

// fingerprint hashes an operation's name and parsed parameters (their
// json.Marshal).
func fingerprint(name string, params any) (string, error) {
	body, err := json.Marshal(params)
	if err != nil {
		return "", internalError(err)
	}
	return hexSum(sha256.Sum256(append(append([]byte(name), '\n'), body...))), nil
}

// claim is the state of an idempotent operation after begin.
type claim struct {
	record  *IdempotencyRecord
	replay  *StoredAnswer // the stored answer: return it
	resumed bool          // an earlier execution stopped midway; carry on from record.RecoveryPoint
}

// begin looks the key up inside tx. It returns a stored response to replay,
// a conflict error, or ownership of the key: a new in-progress record
// (created in tx, so it commits with the caller's first writes) or an
// abandoned one whose lock expired, taken over for resumption.
//
// It inserts first, as most keys are new: one statement then, and the
// lookup only when the key is taken.
func (s *Service) begin(ctx context.Context, tx Tx, op operation, now time.Time) (*claim, error) {
	lock := now.Add(idempotencyLock)
	if op.deferred {
		lock = now
	}
	rec := &IdempotencyRecord{
		Scope: op.scope, Key: op.key, Fingerprint: op.fingerprint, State: IdempotencyInProgress,
		RecoveryPoint: recoveryStarted, LockedUntil: &lock, CreatedAt: now, UpdatedAt: now,
		ExpiresAt: now.Add(s.retention),
	}
	if op.resourceID != "" {
		rec.RecoveryPoint, rec.ResourceID = recoveryAttempt, op.resourceID
	}
	err := tx.CreateIdempotencyRecord(ctx, rec)
	if err == nil {
		return &claim{record: rec}, nil
	}
	if !errors.Is(err, ErrAlreadyExists) {
		return nil, err
	}
	rec, err = tx.GetIdempotencyRecord(ctx, op.scope, op.key)
	if errors.Is(err, ErrNotFound) {
		return nil, ErrVersionConflict // deleted in between: try again
	}
	if err != nil {
		return nil, err
	}
	if rec.Fingerprint != op.fingerprint {
		return nil, errKeyReused()
	}
	if rec.State == IdempotencyComplete {
		return &claim{record: rec, replay: rec.Answer}, nil
	}
	if rec.LockedUntil != nil && rec.LockedUntil.After(now) {
		e := errorf(CodeIdempotencyInProgress, "Idempotency-Key", "A request with this Idempotency-Key is still being processed; retry later.")
		e.RetryAfter = max(time.Second, rec.LockedUntil.Sub(now).Round(time.Second))
		return nil, e
	}
	rec.LockedUntil, rec.UpdatedAt = &lock, now
	if err := tx.UpdateIdempotencyRecord(ctx, rec); err != nil {
		return nil, err
	}
	return &claim{record: rec, resumed: true}, nil
}

// idempotencyKeyConflict is adapterhooks.IdempotencyKeyConflict: the
// idempotency_conflict error when key was already used in scope, nil when
// it is free.
func (s *Service) idempotencyKeyConflict(ctx context.Context, scope Scope, key string) error {
	_, err := s.store.GetIdempotencyRecord(ctx, scope, key)
	switch {
	case errors.Is(err, ErrNotFound):
		return nil
	case err != nil:
		return internalError(err)
	}
	return errKeyReused()
}

func errKeyReused() *Error {
	return errorf(CodeIdempotencyConflict, "Idempotency-Key", "This Idempotency-Key was already used with a different request.")
}

// Recovery points of an idempotent operation.
const (
	recoveryStarted  = "started"         // nothing durable yet but the record
	recoveryAttempt  = "attempt_started" // resource persisted; the Provider call may have happened
	recoveryFinished = "finished"
)

// checkpoint records progress of an owned operation in tx.
func checkpoint(ctx context.Context, tx Tx, rec *IdempotencyRecord, point, resourceID string, now time.Time) error {
	rec.RecoveryPoint, rec.ResourceID, rec.UpdatedAt = point, resourceID, now
	return tx.UpdateIdempotencyRecord(ctx, rec)
}

// finish stores the answer (kind, and resource v as it is now) in tx and
// releases the lock.
func finish(ctx context.Context, tx Tx, rec *IdempotencyRecord, kind AnswerKind, v any, now time.Time) (*StoredAnswer, error) {
	a := answerOf(kind, v)
	rec.State, rec.RecoveryPoint, rec.LockedUntil = IdempotencyComplete, recoveryFinished, nil
	rec.Answer, rec.UpdatedAt = a, now
	if err := tx.UpdateIdempotencyRecord(ctx, rec); err != nil {
		return nil, err
	}
	return a, nil
}

// finishOwned completes the record under key in tx with v (created),
// unless it is complete already: then its stored answer is returned,
// replayed. *known, when set, is the record as this request committed it:
// its versioned update spares reading it. It is taken (set to nil), so a
// retry of the transaction reads the record.
func finishOwned(ctx context.Context, tx Tx, scope Scope, key string, known **IdempotencyRecord, v any, now time.Time) (*StoredAnswer, bool, error) {
	rec := *known
	*known = nil
	if rec == nil {
		var err error
		if rec, err = tx.GetIdempotencyRecord(ctx, scope, key); err != nil {
			return nil, false, err
		}
	}
	if rec.State == IdempotencyComplete { // a worker or a retry finished first
		return rec.Answer, true, nil
	}
	a, err := finish(ctx, tx, rec, AnswerCreated, v, now)
	return a, false, err
}

// answered returns the resource of a stored answer as T, and how it was
// answered.
func answered[T any](a *StoredAnswer, replayed bool) (*T, Answer, error) {
	out, ok := any(a.Resource).(*T)
	if !ok {
		return nil, Answer{}, internalError(fmt.Errorf("stored answer holds %T, want %T", a.Resource, out))
	}
	return out, Answer{Kind: a.Kind, Replayed: replayed}, nil
}

// finishCreate completes the idempotency record under idemKey with the
// resource id as get reads it now (created), unless someone finished it
// first; either way it answers what the record holds.
func finishCreate[T any](ctx context.Context, s *Service, scope Scope, id, idemKey string, get func(Tx, context.Context, Scope, string) (*T, error)) (*T, Answer, error) {
	var (
		stored   *StoredAnswer
		replayed bool
	)
	err := s.inTx(ctx, func(tx Tx) error {
		rec, err := tx.GetIdempotencyRecord(ctx, scope, idemKey)
		if err != nil {
			return err
		}
		if rec.State == IdempotencyComplete {
			stored, replayed = rec.Answer, true
			return nil
		}
		v, err := get(tx, ctx, scope, id)
		if err != nil {
			return err
		}
		stored, err = finish(ctx, tx, rec, AnswerCreated, v, s.Now())
		return err
	})
	if err != nil {
		return nil, Answer{}, asServiceError(err)
	}
	return answered[T](stored, replayed)
}

// openRecord is the record under key that a job completes with its
// answer: nil when there is nothing to complete (no key, the record gone
// or complete already).
func (s *Service) openRecord(ctx context.Context, scope Scope, key string) (*IdempotencyRecord, error) {
	if key == "" {
		return nil, nil
	}
	rec, err := s.store.GetIdempotencyRecord(ctx, scope, key)
	switch {
	case errors.Is(err, ErrNotFound) || err == nil && rec.State == IdempotencyComplete:
		return nil, nil
	case err != nil:
		return nil, err
	}
	return rec, nil
}

// unlock lets a retry of the operation under key take over at once,
// unless it completed meanwhile.
func unlock(ctx context.Context, tx Tx, scope Scope, key string, now time.Time) error {
	rec, err := tx.GetIdempotencyRecord(ctx, scope, key)
	if err != nil || rec.State == IdempotencyComplete {
		return err
	}
	rec.LockedUntil, rec.UpdatedAt = &now, now
	return tx.UpdateIdempotencyRecord(ctx, rec)
}

// unlockIfUnavailable unlocks the record under key when err is
// service_unavailable: the store refused a later step of an operation whose
// first step committed, and the merchant's retry (after Retry-After) should
// resume it rather than meet idempotency_in_progress until the lock lapses.
// Best effort: on a store still overloaded the lock lapses by itself.
func (s *Service) unlockIfUnavailable(ctx context.Context, scope Scope, key string, err error) {
	if ErrorCode(err) != CodeServiceUnavailable || ctx.Err() != nil {
		return
	}
	_ = s.store.InTx(ctx, func(tx Tx) error { return unlock(ctx, tx, scope, key, s.Now()) })
}

// idempotent runs a single-transaction operation under its Idempotency-Key:
// a replay answers the stored answer; otherwise fn does the work in tx and
// its answer (kind and resource) is stored with the key. An error from fn
// stores nothing, so the key may be used again.
func idempotent[T any](ctx context.Context, s *Service, op operation, fn func(tx Tx, now time.Time) (AnswerKind, *T, error)) (*T, Answer, error) {
	now := s.Now()
	var (
		stored   *StoredAnswer
		replayed bool
	)
	err := s.inTx(ctx, func(tx Tx) error {
		c, err := s.begin(ctx, tx, op, now)
		if err != nil {
			return err
		}
		if c.replay != nil {
			stored, replayed = c.replay, true
			return nil
		}
		kind, v, err := fn(tx, now)
		if err != nil {
			return err
		}
		stored, err = finish(ctx, tx, c.record, kind, v, now)
		return err
	})
	if err != nil {
		return nil, Answer{}, asServiceError(err)
	}
	return answered[T](stored, replayed)
}
