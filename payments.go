package paykit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/mail"
	"slices"
	"time"

	"github.com/paykit/paykit/internal/validated"
)

// PaymentStatus is the lifecycle state of a payment intent.
type PaymentStatus string

// Payment intent statuses. The last four are terminal.
const (
	PaymentRequiresPaymentMethod PaymentStatus = "requires_payment_method"
	PaymentRequiresAction        PaymentStatus = "requires_action"
	PaymentProcessing            PaymentStatus = "processing"
	PaymentSucceeded             PaymentStatus = "succeeded"
	PaymentFailed                PaymentStatus = "failed"
	PaymentCancelled             PaymentStatus = "cancelled"
	PaymentExpired               PaymentStatus = "expired"
)

// paymentStatuses lists every payment intent status.
var paymentStatuses = []PaymentStatus{
	PaymentRequiresPaymentMethod, PaymentRequiresAction, PaymentProcessing,
	PaymentSucceeded, PaymentFailed, PaymentCancelled, PaymentExpired,
}

// Terminal reports whether no further transition can happen.
func (s PaymentStatus) Terminal() bool {
	switch s {
	case PaymentSucceeded, PaymentFailed, PaymentCancelled, PaymentExpired:
		return true
	}
	return false
}

// Valid reports whether s is a known status.
func (s PaymentStatus) Valid() bool {
	for _, v := range paymentStatuses {
		if v == s {
			return true
		}
	}
	return false
}

// Failure codes shared by payments, checkouts and payouts.
const (
	FailureProviderDeclined = "provider_declined"
	FailureProviderError    = "provider_error"
	FailureExpired          = "expired"
	FailureAccountInvalid   = "account_invalid"
	FailureFundsReturned    = "funds_returned"
	FailureApprovalRejected = "approval_rejected"
)

// NextAction types.
const (
	NextActionRedirectToURL            = "redirect_to_url"
	NextActionDisplayQRCode            = "display_qr_code"
	NextActionBankTransferInstructions = "bank_transfer_instructions"
)

// NextAction is what the payer must do next. Only the fields of its Type are
// rendered.
type NextAction struct {
	Type      string    `json:"type,omitzero"`
	URL       string    `json:"url,omitzero"`
	QRData    string    `json:"qr_data,omitzero"`
	ImageURL  string    `json:"image_url,omitzero"`
	BankName  string    `json:"bank_name,omitzero"`
	Account   string    `json:"account,omitzero"`
	Holder    string    `json:"holder,omitzero"`
	Reference string    `json:"reference,omitzero"`
	Amount    int64     `json:"amount,omitzero"` // bank_transfer_instructions only
	Currency  string    `json:"currency,omitzero"`
	ExpiresAt time.Time `json:"expires_at,omitzero"`
}

// Receipt is the proof of a succeeded payment.
type Receipt struct {
	Number        string    `json:"number,omitzero"`
	PaidAt        time.Time `json:"paid_at,omitzero"`
	Amount        int64     `json:"amount,omitzero"`
	Currency      string    `json:"currency,omitzero"`
	PaymentMethod string    `json:"payment_method,omitzero"`
}

// PaymentIntent is a direct payment. Its json names are those of its
// stored snapshot; the contract's JSON is its Projection, without the
// Provider fields.
type PaymentIntent struct {
	ID                   string            `json:"id,omitzero"`
	MerchantID           string            `json:"merchant_id,omitzero"`
	Environment          Environment       `json:"environment,omitzero"`
	Status               PaymentStatus     `json:"status,omitzero"`
	Amount               int64             `json:"amount,omitzero"`
	Currency             string            `json:"currency,omitzero"`
	Country              string            `json:"country,omitzero"`
	MerchantReference    string            `json:"merchant_reference,omitzero"`
	PaymentMethod        string            `json:"payment_method,omitzero"` // empty while a checkout waits for the payer's choice
	Customer             map[string]string `json:"customer,omitzero"`
	PaymentMethodOptions map[string]string `json:"payment_method_options,omitzero"`
	ReturnURL            string            `json:"return_url,omitzero"`
	CheckoutID           string            `json:"checkout_id,omitzero"`
	NextAction           *NextAction       `json:"next_action,omitzero"`
	FailureCode          string            `json:"failure_code,omitzero"`
	Receipt              *Receipt          `json:"receipt,omitzero"`
	ProviderAttempt                        // internal: its Provider attempt
	CancelRequestedAt    *time.Time        `json:"cancel_requested_at,omitzero"`   // set when a cancel waits for the Provider
	RefundedAmount       int64             `json:"refunded_amount,omitzero"`       // the sum of its succeeded refunds
	RefundPendingAmount  int64             `json:"refund_pending_amount,omitzero"` // the sum of its pending refunds: refundable is Amount minus both and DisputedAmount
	// Fee is the Provider's fee for a succeeded payment, as it stated it.
	Fee int64 `json:"fee,omitzero"`
	// SettledAt is when the Provider settled the payment's net: it moved
	// from the pending balance to the available one.
	SettledAt *time.Time `json:"settled_at,omitzero"`
	// DisputedAmount is the sum of its open and lost disputes, and
	// OpenDisputes how many are open.
	DisputedAmount int64      `json:"disputed_amount,omitzero"`
	OpenDisputes   int        `json:"open_disputes,omitzero"`
	ExpiresAt      time.Time  `json:"expires_at,omitzero"`
	CompletedAt    *time.Time `json:"completed_at,omitzero"`
	CreatedAt      time.Time  `json:"created_at,omitzero"`
	UpdatedAt      time.Time  `json:"updated_at,omitzero"`
	Version        int64      `json:"version,omitzero"`
}

// Scope returns the tenant of the intent.
func (p *PaymentIntent) Scope() Scope { return Scope{p.MerchantID, p.Environment} }

// CapturedAmount is the amount once succeeded, else 0.
func (p *PaymentIntent) CapturedAmount() int64 {
	if p.Status == PaymentSucceeded {
		return p.Amount
	}
	return 0
}

// check validates the filters of a list of kind ("payment intent"):
// its statuses by valid, and the shared filters.
func (l ListParams[S]) check(kind string, valid func(S) bool) error {
	for _, st := range l.Statuses {
		if !valid(st) {
			return invalidRequest("status", "status %q is not a %s status.", st, kind)
		}
	}
	return validateListFilters(l.Currency, l.Country, l.MerchantReference)
}

// GetPaymentIntent returns the committed projection of an intent of the
// caller's scope. It never starts Provider work.
func (s *Service) GetPaymentIntent(ctx context.Context, p Principal, id string) (*PaymentIntent, error) {
	pi, err := s.store.GetPaymentIntent(ctx, p.Scope, id)
	if errors.Is(err, ErrNotFound) {
		return nil, notFound("payment_intent")
	}
	if err != nil {
		return nil, internalError(err)
	}
	return pi, nil
}

// ListPaymentIntents lists the caller's intents, newest first.
func (s *Service) ListPaymentIntents(ctx context.Context, p Principal, params ListParams[PaymentStatus]) (*Page[PaymentIntent], error) {
	limit, after, err := s.pageQuery("payment_intent", params.PageParams)
	if err != nil {
		return nil, err
	}
	if err := params.check("payment intent", PaymentStatus.Valid); err != nil {
		return nil, err
	}
	rows, err := s.store.ListPaymentIntents(ctx, ListQuery[ListParams[PaymentStatus]]{Scope: p.Scope, Filter: params, After: after, Limit: limit + 1})
	if err != nil {
		return nil, internalError(err)
	}
	return makePage(s, "payment_intent", rows, limit, func(pi *PaymentIntent) Position { return Position{pi.CreatedAt, pi.ID} }), nil
}

// CreatePaymentIntentRequest asks for a direct payment. Field names in
// errors are the API's (the json tags).
type CreatePaymentIntentRequest struct {
	Amount               int64             `json:"amount" validate:"minor_units"` // minor units
	Currency             string            `json:"currency" validate:"required,currency"`
	Country              string            `json:"country" validate:"required,country"`
	MerchantReference    string            `json:"merchant_reference" validate:"required,max=256"`
	PaymentMethod        string            `json:"payment_method" validate:"required,payment_method"`
	Customer             map[string]string `json:"customer" validate:"required,textmap=64:512"`
	PaymentMethodOptions map[string]string `json:"payment_method_options,omitempty" validate:"omitempty,textmap=64:256"`
	ReturnURL            string            `json:"return_url,omitempty" validate:"omitempty,max=2048,http_url"`
}

// CancelPaymentIntentRequest is the optional body of a cancel.
type CancelPaymentIntentRequest struct {
	Reason string `json:"reason,omitempty" validate:"omitempty,min=1,max=512"`
}

// Job kinds of payment intents.
const (
	// jobPaymentInquire is the one job that watches an intent's attempt
	// from the transaction that persists it until it is final: it finishes
	// a create whose request stopped midway (or a host transaction's
	// create), asks the Provider about an unknown, pending or waiting
	// attempt, and expires an attempt the payer abandoned.
	jobPaymentInquire = "payment.inquire"
	jobPaymentCancel  = "payment.cancel" // cancel the attempt at the Provider
	// Kinds earlier versions stored, still run: jobPaymentInquire does
	// both now.
	jobPaymentResume = "payment.resume" // finish a create whose request stopped midway
	jobPaymentExpire = "payment.expire" // expire an intent the payer abandoned
)

func (s *Service) registerPaymentJobs() {
	s.handle(jobPaymentResume, s.resumePaymentJob, providerJobTimeout, JobPriorityMoney)
	s.handle(jobPaymentInquire, s.inquirePaymentJob, providerJobTimeout, JobPriorityMoney)
	s.handle(jobPaymentCancel, s.cancelPaymentJob, providerJobTimeout, JobPriorityMoney)
	s.handle(jobPaymentExpire, s.expirePaymentJob, providerJobTimeout, JobPriorityMoney)
}

// resumePayload names the idempotency record a resume job finishes.
type resumePayload struct {
	IdempotencyKey string `json:"idempotency_key"`
}

// resumePayload is the payload of the job that finishes r.
func (r *IdempotencyRecord) resumePayload() []byte {
	b, _ := json.Marshal(resumePayload{IdempotencyKey: r.Key}) // a string: cannot fail
	return b
}

// validatePaymentRoute resolves the route of a create request and checks
// the payer data it requires. Nothing is persisted.
func (s *Service) validatePaymentRoute(env Environment, req *CreatePaymentIntentRequest) (int64, *PaymentRoute, error) {
	return s.checkPaymentRoute(env, req, true, true)
}

// checkPaymentRoute is validatePaymentRoute; without requireCustomer,
// missing payer fields are allowed (a checkout asks the payer for them);
// without validate, req's validate tags are taken as checked (by
// httpadapter, on a body with the same rules).
func (s *Service) checkPaymentRoute(env Environment, req *CreatePaymentIntentRequest, requireCustomer, validate bool) (int64, *PaymentRoute, error) {
	if validate {
		if err := validateRequest(req); err != nil {
			return 0, nil, err
		}
	}
	amount := req.Amount
	route, ok := s.paymentRoute(env, req.PaymentMethod, req.Country, req.Currency, amount)
	if !ok {
		return 0, nil, errorf(CodePaymentMethodUnavailable, "payment_method",
			"%s is not available for %s %s at this amount in %s.", req.PaymentMethod, req.Country, req.Currency, env)
	}
	for key, v := range req.PaymentMethodOptions {
		if !slices.Contains(route.Options, key) {
			return 0, nil, invalidRequest("payment_method_options."+key, "payment_method_options.%s is not an option of %s.", key, req.PaymentMethod)
		}
		if key == "bank" {
			bank, ok := route.Bank(v)
			if !ok {
				return 0, nil, invalidRequest("payment_method_options.bank", "payment_method_options.bank %q is not a bank of %s; see GET /payment_methods.", v, req.PaymentMethod)
			}
			if !bank.Available {
				return 0, nil, errorf(CodePaymentMethodUnavailable, "payment_method_options.bank", "Bank %s is unavailable right now.", v)
			}
		}
	}
	if err := checkCustomer(route, req.PaymentMethod, req.Customer, requireCustomer); err != nil {
		return 0, nil, err
	}
	return amount, route, nil
}

// checkCustomer checks payer data for a route: the fields it requires
// (when requireAll; a checkout asks the payer for missing ones later) and
// the format of those given.
func checkCustomer(route *PaymentRoute, method string, customer map[string]string, requireAll bool) error {
	for _, f := range route.CustomerFields {
		if requireAll && customer[f] == "" {
			return errorf(CodeMissingRequiredField, "customer."+f, "customer.%s is required for %s.", f, method)
		}
	}
	if email, ok := customer["email"]; ok && email != "" {
		if a, err := mail.ParseAddress(email); err != nil || a.Address != email {
			return invalidRequest("customer.email", "customer.email must be an email address.")
		}
	}
	return nil
}

// CreatePaymentIntent creates a payment intent and starts its Provider
// attempt. Under one Idempotency-Key a request runs once: a retry gets the
// stored response (Replayed), a concurrent one idempotency_in_progress, and
// a retry after a crash resumes the same attempt instead of starting
// another. Once persisted, a Provider decline or an unknown outcome is still
// created (failed, or processing).
func (s *Service) CreatePaymentIntent(ctx context.Context, p Principal, idempotencyKey string, req CreatePaymentIntentRequest) (*PaymentIntent, Answer, error) {
	return s.createPaymentIntent(ctx, nil, p, idempotencyKey, req)
}

// CreatePaymentIntentTx is CreatePaymentIntent inside the host's
// transaction tx (see sqlstore.Store.WrapTx). It persists the intent
// (processing, validated against the routing now) and the job that makes
// the Provider call; the call runs in the worker after the host commits,
// and completes the idempotency record, so a later CreatePaymentIntent
// with the same key and request answers what the Provider said. The
// answer is AnswerAccepted. Rolled back, nothing exists and no job runs.
// It does not retry: see CreateCheckoutTx for its errors.
func (s *Service) CreatePaymentIntentTx(ctx context.Context, tx Tx, p Principal, idempotencyKey string, req CreatePaymentIntentRequest) (*PaymentIntent, Answer, error) {
	if tx == nil {
		return nil, Answer{}, internalError(errNilTx)
	}
	return s.createPaymentIntent(ctx, tx, p, idempotencyKey, req)
}

// createPaymentIntent is CreatePaymentIntent in host's transaction, or in
// its own when host is nil.
func (s *Service) createPaymentIntent(ctx context.Context, host Tx, p Principal, idempotencyKey string, req CreatePaymentIntentRequest) (*PaymentIntent, Answer, error) {
	op, err := newOperation(p.Scope, idempotencyKey, "payment_intent.create", "", req)
	if err != nil {
		return nil, Answer{}, err
	}
	op.deferred = host != nil
	// A known key skips validation: its request was valid when first seen,
	// and a replay must not depend on today's configuration. So a request
	// that fails validation is answered so only when its key is new.
	amount, route, invalid := s.checkPaymentRoute(p.Environment, &req, true, !validated.In(ctx))
	if invalid != nil {
		if _, err := s.reader(host).GetIdempotencyRecord(ctx, p.Scope, idempotencyKey); errors.Is(err, ErrNotFound) {
			return nil, Answer{}, invalid
		} else if err != nil {
			return nil, Answer{}, internalError(err)
		}
	}
	now := s.Now()
	op.resourceID = s.newID("pi")
	var c *claim
	var pi *PaymentIntent
	err = s.within(ctx, host, func(tx Tx) error {
		var err error
		if c, err = s.begin(ctx, tx, op, now); err != nil || c.replay != nil {
			return err
		}
		if c.resumed {
			pi, err = tx.GetPaymentIntent(ctx, p.Scope, c.record.ResourceID)
			return err
		}
		if invalid != nil { // the record we saw was purged meanwhile
			return invalid
		}
		pi = &PaymentIntent{
			ID: op.resourceID, MerchantID: p.MerchantID, Environment: p.Environment,
			Status: PaymentProcessing, Amount: amount, Currency: req.Currency, Country: req.Country,
			MerchantReference: req.MerchantReference, PaymentMethod: req.PaymentMethod,
			Customer: req.Customer, PaymentMethodOptions: req.PaymentMethodOptions, ReturnURL: req.ReturnURL,
			ProviderAttempt: ProviderAttempt{Provider: route.Provider, ProviderOptions: route.providerOptions(req.PaymentMethodOptions), Attempt: AttemptCreating},
			ExpiresAt:       now.Add(s.paymentTTL), CreatedAt: now, UpdatedAt: now,
		}
		if err := tx.CreatePaymentIntent(ctx, pi); err != nil {
			return err
		}
		return s.startAttempt(ctx, tx, pi, c.record, now, op.deferred)
	})
	if errors.Is(err, ErrAlreadyExists) {
		return nil, Answer{}, errorf(CodeDuplicateMerchantReference, "merchant_reference", "merchant_reference %q is already used by another payment intent.", req.MerchantReference)
	}
	if err != nil {
		return nil, Answer{}, serviceError(host, err)
	}
	if c.replay != nil {
		return answered[PaymentIntent](c.replay, true)
	}
	if host != nil {
		return pi, Answer{Kind: AnswerAccepted}, nil
	}
	return s.runAttemptOf(ctx, pi, c.record)
}

// startAttempt records, in the transaction that persisted pi with its
// attempt creating, the recovery point and the intent's inquiry job, which
// finishes the attempt if this request stops before it does and then
// watches it until it is final.
func (s *Service) startAttempt(ctx context.Context, tx Tx, pi *PaymentIntent, rec *IdempotencyRecord, now time.Time, deferred bool) error {
	payload := rec.resumePayload()
	runAt := now.Add(idempotencyLock)
	if deferred { // the worker makes the call as soon as the host commits
		runAt = now
	}
	if rec.RecoveryPoint != recoveryAttempt || rec.ResourceID != pi.ID { // begin may have started it there
		if err := checkpoint(ctx, tx, rec, recoveryAttempt, pi.ID, now); err != nil {
			return err
		}
	}
	j := s.inquiryJob(pi, runAt)
	j.Payload = payload
	return s.enqueue(ctx, tx, j)
}

// runAttempt makes the Provider call of an intent whose attempt is
// creating (outside any transaction), applies the answer, and completes the
// idempotency record under idemKey with the intent's projection.
// A store that turns a step away (503) unlocks the record, so that the
// retry resumes at once.
func (s *Service) runAttempt(ctx context.Context, scope Scope, id, idemKey string) (*PaymentIntent, Answer, error) {
	pi, ans, err := s.attempt(ctx, scope, id, idemKey, nil, nil)
	if err != nil {
		s.unlockIfUnavailable(ctx, scope, idemKey, err)
	}
	return pi, ans, err
}

// runAttemptOf is runAttempt for the request that just committed pi and
// owns rec: neither is read again before the Provider call, and rec's
// version lets the answer be stored without reading it first.
func (s *Service) runAttemptOf(ctx context.Context, pi *PaymentIntent, rec *IdempotencyRecord) (*PaymentIntent, Answer, error) {
	out, ans, err := s.attempt(ctx, pi.Scope(), pi.ID, rec.Key, pi, rec)
	if err != nil {
		s.unlockIfUnavailable(ctx, pi.Scope(), rec.Key, err)
	}
	return out, ans, err
}

// attempt is runAttempt without the unlock. pi and rec, when known, are
// the intent and idempotency record as this request committed them.
func (s *Service) attempt(ctx context.Context, scope Scope, id, idemKey string, pi *PaymentIntent, rec *IdempotencyRecord) (*PaymentIntent, Answer, error) {
	if pi == nil {
		var err error
		if pi, err = s.store.GetPaymentIntent(ctx, scope, id); err != nil {
			return nil, Answer{}, asServiceError(err)
		}
	}
	var (
		result *Result
		known  *PaymentIntent // as this request last knew it, when the answer writes it
	)
	if pi.Attempt == AttemptCreating {
		moved, r, err := sendCreate(ctx, s, paymentAttempts, pi)
		if err != nil {
			return nil, Answer{}, err
		}
		pi, known, result = moved, moved, &r
	}
	_, stored, replayed, err := settleCreate(ctx, s, paymentAttempts, scope, id, known, pi.Provider, result, idemKey, rec)
	if err != nil {
		return nil, Answer{}, err
	}
	return answered[PaymentIntent](stored, replayed)
}

// paymentAttempts is the Provider-attempt core's view of payment intents.
// Its answers are applied by applyInquiry: a payment's attempt waits for
// its payer, and one the Provider never received fails it.
var paymentAttempts = &attemptKind[PaymentIntent, *PaymentIntent]{
	resource: "payment_intent", inquireJob: jobPaymentInquire,
	get:    Tx.GetPaymentIntent,
	update: Tx.UpdatePaymentIntent,
	create: (*Service).callCreate,
	inquire: func(s *Service, ctx context.Context, pi *PaymentIntent) (Result, error) {
		prov, err := s.provider(ctx, pi.Provider, CapPayments)
		if err != nil {
			return Result{}, err
		}
		return prov.InquirePayment(ctx, pi.attemptRef()), nil
	},
	fallback:    (*Service).moveToFallback,
	mayResend:   func(s *Service, pi *PaymentIntent) bool { return s.Now().Before(pi.ExpiresAt) },
	applyCreate: (*Service).applyCreateResult,
	applyFinal:  (*Service).applyFinal,
	done:        func(pi *PaymentIntent, _ Result) bool { return pi.Status.Terminal() },
}

// callCreate sends the create call of pi's attempt to its Provider.
func (s *Service) callCreate(ctx context.Context, pi *PaymentIntent) (Result, error) {
	prov, err := s.provider(ctx, pi.Provider, CapPayments)
	if err != nil {
		return Result{}, internalError(fmt.Errorf("payment %s: %w", pi.ID, err))
	}
	// The route chosen at create, never today's configuration.
	opts := pi.ProviderOptions
	if opts == nil && len(pi.PaymentMethodOptions) > 0 {
		// Stored before the Provider's options were: map them by the
		// route, which must still exist.
		route, ok := s.paymentRouteOf(pi)
		if !ok {
			return Result{}, internalError(fmt.Errorf("payment %s: no route of %s to %s any more, and its Provider options were not recorded at create", pi.ID, pi.PaymentMethod, pi.Provider))
		}
		opts = route.providerOptions(pi.PaymentMethodOptions)
	}
	if opts == nil {
		opts = map[string]string{}
	}
	res := prov.CreatePayment(ctx, PaymentRequest{
		Key: pi.attemptKey(), Amount: pi.Amount, Currency: pi.Currency, Country: pi.Country,
		Method: pi.PaymentMethod, Customer: pi.Customer, Options: opts,
		ReturnURL: s.payURL("return", tokenReturn, pi.Scope(), pi.ID, pi.ExpiresAt.Add(24*time.Hour), ""),
		ExpiresAt: pi.ExpiresAt, Merchant: pi.MerchantID,
	})
	s.providerCreated(ctx, pi.Provider, "create_payment", res, slog.String("payment_intent", pi.ID))
	return res, nil
}

// moveToFallback moves a payment whose Provider refused its attempt to the
// next route (fallbackRoute), still creating, and returns it; nil when
// there is none, or when the attempt is no longer creating at the refusing
// Provider (another worker moved it first).
func (s *Service) moveToFallback(ctx context.Context, pi *PaymentIntent) (*PaymentIntent, error) {
	route, ok := s.fallbackRoute(pi)
	if !ok {
		return nil, nil
	}
	var moved *PaymentIntent
	err := s.inTx(ctx, func(tx Tx) error {
		cur, err := tx.GetPaymentIntent(ctx, pi.Scope(), pi.ID)
		if err != nil || cur.Attempt != AttemptCreating || cur.Provider != pi.Provider {
			return err
		}
		cur.Provider, cur.ProviderOptions = route.Provider, route.providerOptions(cur.PaymentMethodOptions)
		cur.UpdatedAt = s.Now()
		if err := tx.UpdatePaymentIntent(ctx, cur); err != nil {
			return err
		}
		moved = cur
		return nil
	})
	if err != nil || moved == nil {
		return nil, err
	}
	s.log.InfoContext(ctx, "provider refused the attempt; next route", "payment_intent", pi.ID, "refused_by", pi.Provider, "provider", moved.Provider)
	return moved, nil
}

// resendCreate reports whether recovery sends an attempt's create again
// under its key: the create's answer never came (uncertain), no answer
// ever named the Provider's id, and the inquiry by key could not tell
// either (an adapter whose Provider finds attempts only by id). The
// Provider's idempotency on the key makes the resend safe: it returns the
// attempt it has, or makes the one it never received.
func resendCreate(uncertain bool, ref string, inquiry Result) bool {
	return uncertain && ref == "" && inquiry.Outcome.Uncertain()
}

// attemptKey is the Provider idempotency key of an intent's attempt:
// derived from the intent id, so every retry names the same attempt.
func (pi *PaymentIntent) attemptKey() string { return pi.ID }

// attemptRef names pi's attempt at its Provider.
func (pi *PaymentIntent) attemptRef() AttemptRef {
	return AttemptRef{Key: pi.attemptKey(), Reference: pi.ProviderRef}
}

// applyCreateResult moves an intent whose attempt was creating by the
// Provider's answer, in tx, and schedules what the answer calls for.
func (s *Service) applyCreateResult(ctx context.Context, tx Tx, pi *PaymentIntent, r Result) error {
	now := s.Now()
	pi.learnRef(r)
	switch {
	case r.Outcome.Uncertain():
		pi.Attempt = AttemptUnknown
		pi.Status = PaymentProcessing
		if err := s.scheduleInquiry(ctx, tx, pi, now.Add(time.Second)); err != nil {
			return err
		}
	case r.Outcome == OutcomeRequiresAction && r.Action != nil:
		pi.Attempt = AttemptOpen
		pi.Status = PaymentRequiresAction
		pi.NextAction = s.nextAction(pi, r.Action)
		if r.Action.Type == NextActionRedirectToURL {
			pi.ProviderURL = r.Action.URL
		}
		// The inquiry job startAttempt scheduled polls as a fallback for
		// callbacks, and expires the attempt of a payer who never comes
		// back; only an intent that expires before its first poll moves it.
		if pi.ExpiresAt.Before(now.Add(payerPollMin)) {
			if err := s.scheduleInquiry(ctx, tx, pi, pi.ExpiresAt); err != nil {
				return err
			}
		}
	case r.Outcome == OutcomePending || r.Outcome == OutcomeRequiresAction:
		pi.Attempt = AttemptOpen
		pi.Status = PaymentProcessing
		if err := s.scheduleInquiry(ctx, tx, pi, now.Add(time.Second)); err != nil {
			return err
		}
	default:
		return s.applyFinal(ctx, tx, pi, r, now)
	}
	pi.UpdatedAt = now
	return tx.UpdatePaymentIntent(ctx, pi)
}

// applyFinal applies a final Provider result (succeeded, failed, cancelled,
// not found) to pi in tx. Non-final results, and any result for an intent
// already final, change nothing. A success credits the merchant's available
// balance in the same transaction.
func (s *Service) applyFinal(ctx context.Context, tx Tx, pi *PaymentIntent, r Result, now time.Time) error {
	if pi.Status.Terminal() {
		return nil
	}
	switch r.Outcome {
	case OutcomeSucceeded:
		pi.Status = PaymentSucceeded
		pi.Receipt = &Receipt{Number: s.newID("rcpt"), PaidAt: now, Amount: pi.Amount, Currency: pi.Currency, PaymentMethod: pi.PaymentMethod}
		if err := s.creditPayment(ctx, tx, pi, r, now); err != nil {
			return err
		}
	case OutcomeFailed:
		pi.Status = PaymentFailed
		pi.FailureCode = r.FailureCode
		if pi.FailureCode == "" {
			pi.FailureCode = FailureProviderDeclined
		}
	case OutcomeCancelled:
		pi.Status = PaymentCancelled
		if pi.CancelRequestedAt == nil { // the Provider expired it: our expiry, not a merchant cancel
			pi.Status, pi.FailureCode = PaymentExpired, FailureExpired
		}
	case OutcomeNotFound, OutcomeRefused:
		// The Provider confirms it never received the attempt, or refused
		// it before creating anything: no money can have moved.
		pi.Status, pi.FailureCode = PaymentFailed, FailureProviderError
	default:
		return nil
	}
	pi.Attempt = AttemptClosed
	pi.NextAction = nil
	pi.CompletedAt = &now
	pi.UpdatedAt = now
	if err := tx.UpdatePaymentIntent(ctx, pi); err != nil {
		return err
	}
	if pi.Status == PaymentSucceeded {
		// Its settlement line may have come before paykit learnt of the
		// success.
		if err := s.judgeLate(ctx, tx, pi.Provider, "payment", pi.ProviderRef, pi.Scope(), pi.ID,
			SettlementAmounts{Amount: pi.Amount, Fee: pi.Fee, Currency: pi.Currency}, pi, now); err != nil {
			return err
		}
	}
	return s.syncCheckout(ctx, tx, pi, now)
}

// nextAction turns the Provider's action into the merchant-facing one:
// every URL points at the service.
func (s *Service) nextAction(pi *PaymentIntent, a *ProviderAction) *NextAction {
	exp := a.ExpiresAt
	if exp.IsZero() || exp.After(pi.ExpiresAt) {
		exp = pi.ExpiresAt
	}
	na := &NextAction{Type: a.Type, ExpiresAt: exp}
	switch a.Type {
	case NextActionRedirectToURL:
		na.URL = s.payURL("continue", tokenContinue, pi.Scope(), pi.ID, exp, "")
	case NextActionDisplayQRCode:
		na.QRData = a.QRData
		na.ImageURL = s.payURL("qr", tokenQR, pi.Scope(), pi.ID, exp, ".png")
	case NextActionBankTransferInstructions:
		na.BankName, na.Account, na.Holder, na.Reference = a.BankName, a.AccountNumber, a.AccountHolder, a.Reference
		na.Amount, na.Currency = pi.Amount, pi.Currency
	}
	return na
}

// scheduleInquiry makes pi's inquiry job run no later than at.
func (s *Service) scheduleInquiry(ctx context.Context, tx Tx, pi *PaymentIntent, at time.Time) error {
	return s.enqueueSoon(ctx, tx, s.inquiryJob(pi, at))
}

func (s *Service) inquiryJob(pi *PaymentIntent, at time.Time) *Job {
	return &Job{Kind: jobPaymentInquire, Scope: pi.Scope(), TargetID: pi.ID, RunAt: at, DedupKey: jobPaymentInquire + ":" + pi.ID}
}

// errNotYet asks the worker to retry a job later with backoff.
var errNotYet = errors.New("provider outcome not final yet")

// resumePaymentJob finishes a create whose request stopped after
// persisting, for a job an earlier version stored; that version scheduled
// the inquiry job when the create answered, so it is scheduled here.
func (s *Service) resumePaymentJob(ctx context.Context, j *Job) error {
	key, err := resumeKey(j)
	if err != nil {
		return err
	}
	pi, err := s.resumeCreate(ctx, j.Scope, j.TargetID, key)
	if err != nil || pi == nil || pi.Status.Terminal() {
		return err
	}
	return s.inTx(ctx, func(tx Tx) error { return s.enqueue(ctx, tx, s.inquiryJob(pi, s.Now())) })
}

// resumeKey is the idempotency key j's payload names ("" without one).
func resumeKey(j *Job) (string, error) {
	var p resumePayload
	if len(j.Payload) == 0 {
		return "", nil
	}
	err := json.Unmarshal(j.Payload, &p)
	return p.IdempotencyKey, err
}

// resumeCreate finishes the create of intent id, whose attempt is
// creating, and completes its idempotency record under key, once the
// request that owns the record no longer holds it (until then it answers
// notYetAt the lock's end). It returns the intent as the create left it,
// or nil when the record is gone or complete: nothing is left to finish.
func (s *Service) resumeCreate(ctx context.Context, scope Scope, id, key string) (*PaymentIntent, error) {
	rec, err := s.store.GetIdempotencyRecord(ctx, scope, key)
	if errors.Is(err, ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if rec.State == IdempotencyComplete {
		return nil, nil
	}
	if rec.LockedUntil != nil && rec.LockedUntil.After(s.Now()) {
		return nil, notYetAt{*rec.LockedUntil} // the request still owns it
	}
	pi, _, err := s.runAttempt(ctx, scope, id, key)
	return pi, err
}

// inquirePaymentJob is the job that watches an intent's attempt from the
// transaction that persisted it: it finishes a create whose request
// stopped midway (or a create in a host's transaction), asks the Provider
// about an unknown, pending or waiting attempt and applies a final answer,
// and expires an attempt whose payer did not finish in time. Until the
// intent is final it runs again (notYet).
func (s *Service) inquirePaymentJob(ctx context.Context, j *Job) error {
	pi, err := s.store.GetPaymentIntent(ctx, j.Scope, j.TargetID)
	if err != nil {
		return err
	}
	if pi.Attempt == AttemptCreating {
		key, err := resumeKey(j)
		if err != nil {
			return err
		}
		resumed, err := s.resumeCreate(ctx, j.Scope, pi.ID, key)
		if err != nil {
			return err
		}
		if resumed == nil {
			return nil // no record to finish: a create of an earlier version, with a resume job of its own
		}
		return s.notYet(resumed, j.Attempts) // just answered: ask again on the schedule
	}
	if pi.Status.Terminal() || pi.Attempt == AttemptClosed || pi.Attempt == AttemptNone {
		return nil
	}
	if pi.Status == PaymentRequiresAction && pi.Attempt == AttemptOpen && !s.Now().Before(pi.ExpiresAt) {
		return s.expireAttempt(ctx, pi)
	}
	s.logStale(ctx, "payment_intent", pi.ID, pi.Provider, processingStaleAt(pi))
	r, err := inquireAttempt(ctx, s, paymentAttempts, pi)
	if err != nil {
		return err
	}
	if pi.Attempt == AttemptOpen && (r.Reference == "" || pi.ProviderRef != "") && !changesOpenAttempt(r.Outcome) {
		// Nothing to record: wait, without a transaction that would change nothing.
		return s.notYet(pi, j.Attempts)
	}
	if err := s.applyInquiry(ctx, j.Scope, pi.ID, r); !errors.Is(err, errNotYet) {
		return err
	}
	return s.notYet(pi, j.Attempts)
}

// changesOpenAttempt reports whether an inquiry's outcome changes an open
// attempt: a final one does; pending, waiting for the payer, not found
// (the Provider forgot an attempt it acknowledged) and uncertain answers
// leave it as it is.
func changesOpenAttempt(o Outcome) bool {
	switch o {
	case OutcomeRequiresAction, OutcomePending, OutcomeNotFound, OutcomeUnknown, OutcomeUnacknowledged:
		return false
	}
	return true
}

// notYet is the inquiry job's answer, in its run number attempts, while pi
// is not final: a payment waiting for its payer is asked about again after
// as long as it has waited (30 s, 1 min, 2 min, ... at most payerPollMax),
// since callbacks bring the payer's outcome first and polling is only
// their fallback for a callback lost on the way; an attempt pending at the
// Provider is retried on the backoff schedule.
//
// Every poll is a run of the job, which needs attention after its kind's
// MaxAttempts runs. With the defaults (25 runs, PaymentTTL 30 min) a payer
// who never pays takes 10 runs, the last at expires_at; a longer TTL would
// get to 25 about 108 min after the create. So when the polls left at most
// payerPollSpare short of the limit would not cover the time to expires_at
// every payerPollMax, they are spread evenly over it instead: a payer's
// wait alone never needs attention.
func (s *Service) notYet(pi *PaymentIntent, attempts int) error {
	if pi.Status.Terminal() || pi.Attempt == AttemptClosed {
		return nil
	}
	if pi.Status != PaymentRequiresAction || pi.Attempt != AttemptOpen {
		return errNotYet
	}
	now := s.Now()
	wait := min(max(now.Sub(pi.CreatedAt), payerPollMin), payerPollMax)
	left := s.maxAttempts(jobPaymentInquire) - payerPollSpare - attempts
	if rest := pi.ExpiresAt.Sub(now); left < 1 || rest > time.Duration(left)*payerPollMax {
		wait = max(wait, rest/time.Duration(max(left, 1)))
	}
	at := now.Add(wait)
	if pi.ExpiresAt.Before(at) { // expire it on time
		at = pi.ExpiresAt
	}
	return notYetAt{at}
}

// The bounds of the interval between inquiries about a payment waiting for
// its payer, and the runs of its job kept past the last one, for the
// expiry's cancel at the Provider and its retries.
const (
	payerPollMin   = 30 * time.Second
	payerPollMax   = 5 * time.Minute
	payerPollSpare = 5
)

// notYetAt is errNotYet with the time the job runs again.
type notYetAt struct{ at time.Time }

func (e notYetAt) Error() string        { return errNotYet.Error() }
func (e notYetAt) Is(target error) bool { return target == errNotYet }

// applyInquiry applies an inquiry (or callback) result. A final result
// closes the intent, and completes its inquiry job when another path
// decided it; a pending one keeps it waiting (errNotYet).
func (s *Service) applyInquiry(ctx context.Context, scope Scope, id string, r Result) error {
	final := false
	err := s.inTx(ctx, func(tx Tx) error {
		pi, err := tx.GetPaymentIntent(ctx, scope, id)
		if err != nil {
			return err
		}
		if pi.Status.Terminal() {
			final = true
			return nil
		}
		if pi.learnRef(r) {
			// The create's answer never came: the Provider's id, learnt
			// now, names the attempt in every later call (refunds too).
			if err := tx.UpdatePaymentIntent(ctx, pi); err != nil {
				return err
			}
		}
		switch {
		case r.Outcome == OutcomeRequiresAction && pi.Attempt == AttemptUnknown && r.Action != nil:
			// The attempt exists after all and waits for the payer.
			return s.applyCreateResult(ctx, tx, pi, r)
		case r.Outcome == OutcomeNotFound && pi.Attempt == AttemptOpen:
			return nil // the Provider forgot an attempt it acknowledged: keep asking
		}
		before := pi.Status
		if err := s.applyFinal(ctx, tx, pi, r, s.Now()); err != nil {
			return err
		}
		if final = pi.Status != before; final {
			// A callback or another job decided it: the inquiry job
			// has nothing left to ask.
			return s.completeJob(ctx, tx, jobPaymentInquire, pi.ID)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if !final {
		return errNotYet
	}
	return nil
}

// CancelPaymentIntent cancels a pending payment (accepted, with the intent).
// Without a Provider attempt it is cancelled at once; with one, the cancel
// runs durably at the Provider and the status changes when the Provider
// confirms (it may still end succeeded). A terminal intent is invalid_state.
func (s *Service) CancelPaymentIntent(ctx context.Context, p Principal, idempotencyKey, id string, req CancelPaymentIntentRequest) (*PaymentIntent, Answer, error) {
	op, err := newOperation(p.Scope, idempotencyKey, "payment_intent.cancel", id, req)
	if err != nil {
		return nil, Answer{}, err
	}
	if err := validateRequest(&req); err != nil {
		return nil, Answer{}, err
	}
	return idempotent(ctx, s, op, func(tx Tx, now time.Time) (AnswerKind, *PaymentIntent, error) {
		pi, err := tx.GetPaymentIntent(ctx, p.Scope, id)
		if errors.Is(err, ErrNotFound) {
			return "", nil, notFound("payment_intent")
		}
		if err != nil {
			return "", nil, err
		}
		if pi.Status.Terminal() {
			return "", nil, errorf(CodeInvalidState, "", "This payment intent is already %s.", pi.Status)
		}
		if pi.CancelRequestedAt == nil {
			pi.CancelRequestedAt = &now
			if pi.Attempt == AttemptNone {
				pi.Status, pi.Attempt, pi.CompletedAt, pi.NextAction = PaymentCancelled, AttemptClosed, &now, nil
			} else if err := s.enqueue(ctx, tx, &Job{Kind: jobPaymentCancel, Scope: p.Scope, TargetID: pi.ID, RunAt: now, DedupKey: jobPaymentCancel + ":" + pi.ID}); err != nil {
				return "", nil, err
			}
			pi.UpdatedAt = now
			if err := tx.UpdatePaymentIntent(ctx, pi); err != nil {
				return "", nil, err
			}
			if err := s.syncCheckout(ctx, tx, pi, now); err != nil {
				return "", nil, err
			}
		}
		return AnswerAccepted, pi, nil
	})
}

// cancelPaymentJob asks the Provider to cancel an open attempt.
func (s *Service) cancelPaymentJob(ctx context.Context, j *Job) error {
	pi, err := s.store.GetPaymentIntent(ctx, j.Scope, j.TargetID)
	if err != nil {
		return err
	}
	if pi.Status.Terminal() {
		return nil
	}
	if pi.Attempt == AttemptCreating {
		return errNotYet // wait until the create call settled
	}
	prov, err := s.provider(ctx, pi.Provider, CapCancel)
	if err != nil {
		return err
	}
	r := prov.CancelPayment(ctx, pi.attemptRef())
	s.log.InfoContext(ctx, "provider cancel payment", "payment_intent", pi.ID, "outcome", r.Outcome, "detail", r.Detail)
	if r.Outcome == OutcomeNotFound && pi.Attempt == AttemptUnknown {
		r.Outcome = OutcomeCancelled // never reached the Provider: nothing to cancel there
	}
	return s.applyInquiry(ctx, j.Scope, pi.ID, r)
}

// expirePaymentJob ends an intent whose payer did not finish in time:
// without an attempt at once; with one, only once the Provider confirms it
// cancelled the attempt or holds none (if the Provider says it succeeded
// meanwhile, it succeeded). An uncertain answer is asked again later.
func (s *Service) expirePaymentJob(ctx context.Context, j *Job) error {
	pi, err := s.store.GetPaymentIntent(ctx, j.Scope, j.TargetID)
	if err != nil {
		return err
	}
	if pi.Status.Terminal() {
		return nil
	}
	if pi.ExpiresAt.After(s.Now()) {
		return errNotYet
	}
	if pi.Attempt == AttemptNone {
		return s.expirePayment(ctx, j.Scope, pi.ID)
	}
	if pi.Attempt == AttemptCreating || pi.Status == PaymentProcessing {
		return nil // the attempt's own jobs resolve it; expiry never fails money in flight
	}
	return s.expireAttempt(ctx, pi)
}

// expireAttempt cancels, at its Provider, the open attempt of pi, past its
// expires_at, and applies the answer: cancelled (or not found) expires
// the intent, succeeded if the payer paid meanwhile, anything else is
// asked again later.
func (s *Service) expireAttempt(ctx context.Context, pi *PaymentIntent) error {
	prov, err := s.provider(ctx, pi.Provider, CapCancel)
	if err != nil {
		return err
	}
	r := prov.CancelPayment(ctx, pi.attemptRef())
	s.log.InfoContext(ctx, "provider cancel payment at expiry", "payment_intent", pi.ID, "outcome", r.Outcome, "detail", r.Detail)
	if r.Outcome == OutcomeNotFound {
		// Past expires_at the Provider confirms it holds no attempt (it
		// lost or forgot it): none can succeed there any more.
		return s.expirePayment(ctx, pi.Scope(), pi.ID)
	}
	// A cancelled answer becomes expired (no merchant asked to cancel).
	return s.applyInquiry(ctx, pi.Scope(), pi.ID, r)
}

// expirePayment ends the intent as expired (cancelled, when the merchant
// asked to cancel it), unless it is final already (a callback or another
// job may have settled it meanwhile).
func (s *Service) expirePayment(ctx context.Context, scope Scope, id string) error {
	return s.inTx(ctx, func(tx Tx) error {
		pi, err := tx.GetPaymentIntent(ctx, scope, id)
		if err != nil || pi.Status.Terminal() {
			return err
		}
		now := s.Now()
		pi.Status, pi.FailureCode, pi.Attempt, pi.NextAction = PaymentExpired, FailureExpired, AttemptClosed, nil
		if pi.CancelRequestedAt != nil {
			pi.Status, pi.FailureCode = PaymentCancelled, ""
		}
		pi.CompletedAt, pi.UpdatedAt = &now, now
		return tx.UpdatePaymentIntent(ctx, pi)
	})
}

// asServiceError keeps contract errors and hides everything else.
func asServiceError(err error) error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	if errors.Is(err, ErrNotFound) {
		return notFound("resource")
	}
	return internalError(err)
}
