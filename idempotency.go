package paykit

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"regexp"
	"time"
)

// Response is what an idempotent operation answered: the HTTP status and
// the exact JSON bytes, stored so that a retry with the same Idempotency-Key
// gets them back byte for byte.
type Response struct {
	Status   int
	Body     json.RawMessage
	Replayed bool
}

// Decode unmarshals the body into v, e.g. a *PaymentIntent.
func (r *Response) Decode(v any) error { return json.Unmarshal(r.Body, v) }

var idempotencyKeyPattern = regexp.MustCompile(`^[!-~]{1,255}$`)

// ValidIdempotencyKey reports whether key is 1 to 255 printable ASCII
// characters.
func ValidIdempotencyKey(key string) bool { return idempotencyKeyPattern.MatchString(key) }

// idempotencyLock is how long a request owns its key before a retry or the
// worker may take over its unfinished execution. It outlasts a Provider call.
const idempotencyLock = 30 * time.Second

// operation identifies one idempotent request: its scope, key and
// fingerprint (operation name, target and parameters).
type operation struct {
	scope       Scope
	key         string
	fingerprint string
}

// newOperation fingerprints the request: name is "METHOD /path" with the
// target id, params the parsed request. Semantically equal JSON bodies give
// equal params, so equal fingerprints.
func newOperation(scope Scope, key, name string, params any) (operation, error) {
	if !ValidIdempotencyKey(key) {
		return operation{}, InvalidRequest("Idempotency-Key", "Idempotency-Key header must be 1 to 255 printable ASCII characters.")
	}
	fp, err := fingerprint(name, params)
	if err != nil {
		return operation{}, err
	}
	return operation{scope: scope, key: key, fingerprint: fp}, nil
}

// fingerprint hashes an operation's name and parsed parameters.
func fingerprint(name string, params any) (string, error) {
	body, err := json.Marshal(params)
	if err != nil {
		return "", Internal(err)
	}
	sum := sha256.Sum256(append([]byte(name+"\n"), body...))
	return hex.EncodeToString(sum[:]), nil
}

// claim is the state of an idempotent operation after begin.
type claim struct {
	record  *IdempotencyRecord
	replay  *Response // the stored answer: return it
	resumed bool      // an earlier execution stopped midway; carry on from record.RecoveryPoint
}

// begin looks the key up inside tx. It returns a stored response to replay,
// a conflict error, or ownership of the key: a new in-progress record
// (created in tx, so it commits with the caller's first writes) or an
// abandoned one whose lock expired, taken over for resumption.
func (s *Service) begin(ctx context.Context, tx Tx, op operation, now time.Time) (*claim, error) {
	rec, err := tx.GetIdempotencyRecord(ctx, op.scope, op.key)
	if errors.Is(err, ErrNotFound) {
		lock := now.Add(idempotencyLock)
		rec = &IdempotencyRecord{
			Scope: op.scope, Key: op.key, Fingerprint: op.fingerprint, State: IdempotencyInProgress,
			RecoveryPoint: recoveryStarted, LockedUntil: &lock, CreatedAt: now, UpdatedAt: now,
			ExpiresAt: now.Add(s.retention),
		}
		if err := tx.CreateIdempotencyRecord(ctx, rec); err != nil {
			if errors.Is(err, ErrAlreadyExists) {
				return nil, ErrVersionConflict // a concurrent request won: retry and find its record
			}
			return nil, err
		}
		return &claim{record: rec}, nil
	}
	if err != nil {
		return nil, err
	}
	if rec.Fingerprint != op.fingerprint {
		return nil, Errorf(CodeIdempotencyConflict, "Idempotency-Key", "This Idempotency-Key was already used with a different request.")
	}
	if rec.State == IdempotencyComplete {
		return &claim{record: rec, replay: &Response{Status: rec.ResponseStatus, Body: rec.ResponseBody, Replayed: true}}, nil
	}
	if rec.LockedUntil != nil && rec.LockedUntil.After(now) {
		e := Errorf(CodeIdempotencyInProgress, "Idempotency-Key", "A request with this Idempotency-Key is still being processed; retry later.")
		e.RetryAfter = max(time.Second, rec.LockedUntil.Sub(now).Round(time.Second))
		return nil, e
	}
	lock := now.Add(idempotencyLock)
	rec.LockedUntil, rec.UpdatedAt = &lock, now
	if err := tx.UpdateIdempotencyRecord(ctx, rec); err != nil {
		return nil, err
	}
	return &claim{record: rec, resumed: true}, nil
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

// finish stores the final response in tx and releases the lock.
func finish(ctx context.Context, tx Tx, rec *IdempotencyRecord, status int, v any, now time.Time) (*Response, error) {
	body, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	rec.State, rec.RecoveryPoint, rec.LockedUntil = IdempotencyComplete, recoveryFinished, nil
	rec.ResponseStatus, rec.ResponseBody, rec.UpdatedAt = status, body, now
	if err := tx.UpdateIdempotencyRecord(ctx, rec); err != nil {
		return nil, err
	}
	return &Response{Status: status, Body: body}, nil
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
// a replay answers the stored response; otherwise fn does the work in tx
// and its answer (status and projection) is stored with the key. An error
// from fn stores nothing, so the key may be used again.
func (s *Service) idempotent(ctx context.Context, op operation, fn func(tx Tx, now time.Time) (int, any, error)) (*Response, error) {
	now := s.Now()
	var resp *Response
	err := s.inTx(ctx, func(tx Tx) error {
		c, err := s.begin(ctx, tx, op, now)
		if err != nil {
			return err
		}
		if c.replay != nil {
			resp = c.replay
			return nil
		}
		status, v, err := fn(tx, now)
		if err != nil {
			return err
		}
		resp, err = finish(ctx, tx, c.record, status, v, now)
		return err
	})
	if err != nil {
		return nil, asServiceError(err)
	}
	return resp, nil
}
