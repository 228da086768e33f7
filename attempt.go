package paykit

import (
	"context"
	"time"
)

// AttemptState is where the Provider attempt of a resource (a payment
// attempt, a payout's transfer, a refund) stands. Only the Service moves
// it; it never reaches the API.
type AttemptState string

// Attempt states.
const (
	AttemptNone     AttemptState = ""         // no Provider attempt yet (a checkout waiting for the payer, an approval hold)
	AttemptCreating AttemptState = "creating" // persisted; the create call may or may not have reached the Provider
	AttemptOpen     AttemptState = "open"     // the Provider has it; waiting for the payer or the Provider
	AttemptUnknown  AttemptState = "unknown"  // the create call's outcome is unknown; inquiry resolves it
	AttemptClosed   AttemptState = "closed"   // the Provider reported a final result
)

// ProviderAttempt is the Provider state of a resource: which Provider has
// its attempt, under which id, and where the attempt stands. The Store
// persists it; hosts never set it, and it never reaches the API.
type ProviderAttempt struct {
	Provider string `json:"provider,omitzero"` // the routed Provider's name
	// ProviderOptions are, for payments, the options as the route mapped
	// them for the Provider (bank codes) at create.
	ProviderOptions map[string]string `json:"provider_options,omitzero"`
	ProviderRef     string            `json:"provider_ref,omitzero"` // the Provider's id of the attempt, from whichever answer names it first
	Attempt         AttemptState      `json:"attempt,omitzero"`
	// ProviderURL is, for payments, the Provider's payer page behind the
	// continuation URL.
	ProviderURL string `json:"provider_url,omitzero"`
}

// attempt returns a's Provider state; every resource with a Provider
// attempt has it through its embedded ProviderAttempt.
func (a *ProviderAttempt) attempt() *ProviderAttempt { return a }

// learnRef keeps the Provider's id of the attempt from r, unless one is
// known already, and reports whether it did: the first answer that names
// it (a create, an inquiry, a callback) fixes it for every later call.
func (a *ProviderAttempt) learnRef(r Result) bool {
	if r.Reference == "" || a.ProviderRef != "" {
		return false
	}
	a.ProviderRef = r.Reference
	return true
}

// attempted is a resource with a Provider attempt, as a pointer to T:
// *PaymentIntent, *PayoutIntent or *Refund.
type attempted[T any] interface {
	*T
	Resource
	attempt() *ProviderAttempt
	attemptKey() string  // the Provider idempotency key: the resource's id
	touch(now time.Time) // sets its UpdatedAt
}

// attemptKind is what the Provider-attempt core needs of one resource
// type: how to read and write it, how to call its Provider, and its own
// rules for what an answer does to it (its status, ledger and events).
// The core runs the steps every resource shares: persist, then call under
// the attempt key; a refusal may fall back to the next route; learn the
// Provider's id; an unknown answer stays open for inquiry; an attempt the
// Provider never received is sent again under the same key.
type attemptKind[T any, R attempted[T]] struct {
	resource   string // its name in logs: payment_intent, payout_intent, refund
	inquireJob string // the job that asks the Provider until the attempt is final

	get    func(Tx, context.Context, Scope, string) (R, error)
	update func(Tx, context.Context, R) error // its versioned update

	create  func(*Service, context.Context, R) (Result, error) // the create call, logged and counted
	inquire func(*Service, context.Context, R) (Result, error)
	// fallback moves a resource whose Provider refused its create (nothing
	// exists there) to the next route, still creating, and returns it; nil
	// when there is none. A nil fallback: a refusal is final.
	fallback func(*Service, context.Context, R) (R, error)
	// mayResend reports whether a create whose answer never came may be
	// sent again now; nil: always.
	mayResend func(*Service, R) bool

	// applyCreate applies the create call's answer to a resource still
	// creating, in tx.
	applyCreate func(*Service, context.Context, Tx, R, Result) error
	// applyFinal applies a final answer (the resource's own rules); other
	// answers change nothing.
	applyFinal func(*Service, context.Context, Tx, R, Result, time.Time) error
	// done reports whether an answer can no longer change the resource.
	done func(R, Result) bool
	// resend schedules the create to be sent again, under the same key.
	// applyAnswer needs it; payments, whose answers applyInquiry applies
	// (a payment the Provider never received fails), have none.
	resend func(*Service, context.Context, Tx, R, time.Time) error
}

// sendCreate makes the create call of r's attempt. While its Provider
// refuses it, which guarantees nothing exists there, r moves to the next
// route, if any, and the call goes there; it returns r as last moved.
func sendCreate[T any, R attempted[T]](ctx context.Context, s *Service, k *attemptKind[T, R], r R) (R, Result, error) {
	res, err := k.create(s, ctx, r)
	for err == nil && res.Outcome == OutcomeRefused && k.fallback != nil {
		moved, ferr := k.fallback(s, ctx, r)
		if ferr != nil {
			return r, res, asServiceError(ferr)
		}
		if moved == nil {
			break
		}
		r = moved
		res, err = k.create(s, ctx, r)
	}
	return r, res, err
}

// settleCreate applies, in one transaction, the answer of a create call
// sent to provider (result; nil when none was sent) to the resource id, and
// completes the idempotency record under idemKey, if any, with it
// (finishOwned). known and rec, when set, are the resource and the record
// as last committed: the answer is applied to known by a versioned update,
// which fails if anyone changed it since, and the retry reads it.
func settleCreate[T any, R attempted[T]](ctx context.Context, s *Service, k *attemptKind[T, R], scope Scope, id string, known R, provider string, result *Result, idemKey string, rec *IdempotencyRecord) (cur R, stored *StoredAnswer, replayed bool, err error) {
	err = s.inTx(ctx, func(tx Tx) error {
		if known != nil {
			c := *known
			cur, known = &c, nil
			remember(tx, cur)
		} else {
			var err error
			if cur, err = k.get(tx, ctx, scope, id); err != nil {
				return err
			}
		}
		if a := cur.attempt(); result != nil && a.Attempt == AttemptCreating && a.Provider == provider {
			if err := k.applyCreate(s, ctx, tx, cur, *result); err != nil {
				return err
			}
		}
		if idemKey == "" {
			return nil
		}
		var err error
		stored, replayed, err = finishOwned(ctx, tx, scope, idemKey, &rec, cur, s.Now())
		return err
	})
	if err != nil {
		return nil, nil, false, asServiceError(err)
	}
	return cur, stored, replayed, nil
}

// inquireAttempt asks r's Provider about its attempt. When the create's
// answer never came, no answer ever named the Provider's id and the
// inquiry cannot tell either (resendCreate), the create is sent again
// under the same key, which gives the attempt the Provider has or makes
// the one it never received; its answer is returned instead.
func inquireAttempt[T any, R attempted[T]](ctx context.Context, s *Service, k *attemptKind[T, R], r R) (Result, error) {
	res, err := k.inquire(s, ctx, r)
	if err != nil {
		return res, err
	}
	a := r.attempt()
	s.observe(a.Provider, res)
	s.log.InfoContext(ctx, "provider inquiry", k.resource, r.attemptKey(), "provider", a.Provider, "outcome", res.Outcome, "detail", res.Detail)
	if resendCreate(a.Attempt == AttemptUnknown, a.ProviderRef, res) && (k.mayResend == nil || k.mayResend(s, r)) {
		return k.create(s, ctx, r)
	}
	return res, nil
}

// applyAnswer applies what an inquiry, a cancel or a callback said about
// the attempt of resource id, in one transaction: the Provider's id is
// learnt; an attempt the Provider confirms it never received (not found
// while creating or unknown) is sent again under the same key, by the job
// resend schedules; an attempt the Provider has (pending, waiting) is no
// longer unknown; an uncertain answer changes nothing; anything else goes
// to the resource's applyFinal, and an attempt it closes completes the
// inquiry job. It returns errNotYet while the attempt is not final for
// the caller (an inquiry job asks again: also after a resend, whose create
// may run beside this job and find its inquiry job still pending, so
// schedule none).
func applyAnswer[T any, R attempted[T]](ctx context.Context, s *Service, k *attemptKind[T, R], scope Scope, id string, r Result) error {
	final := false
	err := s.inTx(ctx, func(tx Tx) error {
		final = false
		cur, err := k.get(tx, ctx, scope, id)
		if err != nil {
			return err
		}
		if k.done(cur, r) {
			final = true
			return nil
		}
		a, now := cur.attempt(), s.Now()
		changed := a.learnRef(r)
		switch {
		case r.Outcome == OutcomeNotFound:
			if a.Attempt != AttemptUnknown && a.Attempt != AttemptCreating {
				break // the Provider forgot an attempt it acknowledged: keep asking
			}
			a.Attempt = AttemptCreating
			cur.touch(now)
			if err := k.update(tx, ctx, cur); err != nil {
				return err
			}
			return k.resend(s, ctx, tx, cur, now)
		case r.Outcome == OutcomePending || r.Outcome == OutcomeRequiresAction:
			if a.Attempt == AttemptUnknown {
				a.Attempt, changed = AttemptOpen, true
			}
		case r.Outcome.Uncertain():
		default:
			open := a.Attempt != AttemptClosed
			if err := k.applyFinal(s, ctx, tx, cur, r, now); err != nil {
				return err
			}
			if final = a.Attempt == AttemptClosed; final && open {
				// Decided here (by a callback, a cancel or the inquiry
				// job): the inquiry job, if not this one, has nothing
				// left to ask.
				return s.completeJob(ctx, tx, k.inquireJob, id)
			}
			return nil
		}
		if !changed {
			return nil
		}
		cur.touch(now)
		return k.update(tx, ctx, cur)
	})
	if err != nil {
		return err
	}
	if !final {
		return errNotYet
	}
	return nil
}

// touch sets the resource's UpdatedAt to now.
func (p *PaymentIntent) touch(now time.Time) { p.UpdatedAt = now }
func (p *PayoutIntent) touch(now time.Time)  { p.UpdatedAt = now }
func (r *Refund) touch(now time.Time)        { r.UpdatedAt = now }
