package paykit

import (
	"context"
	"errors"
	"maps"
	"net/mail"
	"net/url"
	"slices"
	"time"

	"github.com/paykit/paykit/internal/enums"
	"github.com/paykit/paykit/internal/newid"
)

// CheckoutStatus is the lifecycle state of a hosted checkout.
type CheckoutStatus string

// Checkout statuses. A checkout is open until its payment succeeds
// (completed), the merchant cancels it or it expires.
const (
	CheckoutOpen      CheckoutStatus = "open"
	CheckoutCompleted CheckoutStatus = "completed"
	CheckoutExpired   CheckoutStatus = "expired"
	CheckoutCancelled CheckoutStatus = "cancelled"
)

// checkoutStatuses lists every checkout status.
var checkoutStatuses = []CheckoutStatus{CheckoutOpen, CheckoutCompleted, CheckoutExpired, CheckoutCancelled}

// Valid reports whether s is a known checkout status.
func (s CheckoutStatus) Valid() bool { return slices.Contains(checkoutStatuses, s) }

// Provider statuses of a checkout: how far the Provider attempt of the
// linked payment got, without Provider detail.
const (
	providerStatusPending   = "pending"
	providerStatusSucceeded = "succeeded"
	providerStatusFailed    = "failed"
	providerStatusUnknown   = "unknown"
)

// Checkout is a hosted checkout: a signed payer link to the checkout app
// and its linked payment intent, created in requires_payment_method. The
// fields after Version are not stored: the Service fills them from the
// linked intent for the projection.
type Checkout struct {
	ID                   string            `json:"id,omitzero"`
	MerchantID           string            `json:"merchant_id,omitzero"`
	Environment          Environment       `json:"environment,omitzero"`
	Status               CheckoutStatus    `json:"status,omitzero"`
	Amount               int64             `json:"amount,omitzero"`
	Currency             string            `json:"currency,omitzero"`
	Country              string            `json:"country,omitzero"`
	MerchantReference    string            `json:"merchant_reference,omitzero"`
	PaymentIntentID      string            `json:"payment_intent_id,omitzero"`
	Customer             map[string]string `json:"customer,omitzero"`
	Metadata             map[string]string `json:"metadata,omitzero"`
	PaymentMethod        string            `json:"payment_method,omitzero"` // the frozen method; empty when the payer chooses
	PaymentMethodOptions map[string]string `json:"payment_method_options,omitzero"`
	ReturnURL            string            `json:"return_url,omitzero"`
	ExpiresAt            time.Time         `json:"expires_at,omitzero"`
	CreatedAt            time.Time         `json:"created_at,omitzero"`
	UpdatedAt            time.Time         `json:"updated_at,omitzero"`
	Version              int64             `json:"version,omitzero"`

	URL               string        `json:"url,omitzero"`                 // checkout_url
	PaymentStatus     PaymentStatus `json:"payment_status,omitzero"`      // the linked intent's status
	ChosenMethod      string        `json:"chosen_method,omitzero"`       // the linked intent's method, once chosen
	ProviderStatus    string        `json:"provider_status,omitzero"`     // pending, succeeded, failed or unknown; "" (null) until a Provider attempt exists
	ProcessingStaleAt *time.Time    `json:"processing_stale_at,omitzero"` // while the payment is processing
	FailureCode       string        `json:"failure_code,omitzero"`
}

// Scope returns the tenant of the checkout.
func (c *Checkout) Scope() Scope { return Scope{c.MerchantID, c.Environment} }

// CreateCheckoutRequest asks for a hosted checkout. Options are
// allowed only with a payment method; a method freezes the payer's choice
// and is validated (route and payer data) at creation.
type CreateCheckoutRequest struct {
	Amount               int64             `json:"amount" validate:"minor_units"` // minor units
	Currency             string            `json:"currency" validate:"required,currency"`
	Country              string            `json:"country" validate:"required,country"`
	MerchantReference    string            `json:"merchant_reference" validate:"required,max=256"`
	Customer             map[string]string `json:"customer,omitempty" validate:"omitempty,textmap=64:512"`
	ReturnURL            string            `json:"return_url,omitempty" validate:"omitempty,max=2048,http_url"`
	Metadata             map[string]string `json:"metadata,omitempty" validate:"omitempty,max=50,textmap=40:500"`
	PaymentMethod        string            `json:"payment_method,omitempty" validate:"omitempty,payment_method"`
	PaymentMethodOptions map[string]string `json:"payment_method_options,omitempty" validate:"omitempty,textmap=64:256"`
}

// Job kind of checkouts.
const jobCheckoutExpire = "checkout.expire"

func (s *Service) registerCheckoutJobs() {
	s.handle(jobCheckoutExpire, s.expireCheckoutJob, providerJobTimeout, JobPriorityMoney)
}

// tokenCheckout is the purpose of checkout_url tokens.
const tokenCheckout = "pay.checkout"

// checkoutURL is the signed payer link of c; it expires with c. The token
// is deterministic, so every projection shows the same URL.
func (s *Service) checkoutURL(c *Checkout) string {
	return s.payURL("checkouts", tokenCheckout, c.Scope(), c.ID, c.ExpiresAt, "")
}

// validateCheckout checks a create request; with a payment method it also
// resolves the route and checks its options and the payer data given
// (missing payer fields are left to the payer). Nothing is persisted.
func (s *Service) validateCheckout(env Environment, req *CreateCheckoutRequest) (int64, error) {
	if err := validateRequest(req); err != nil {
		return 0, err
	}
	amount := req.Amount
	if req.PaymentMethod == "" {
		if len(req.PaymentMethodOptions) > 0 {
			return 0, invalidRequest("payment_method_options", "payment_method_options is allowed only together with payment_method.")
		}
		if email := req.Customer["email"]; email != "" {
			if a, err := mail.ParseAddress(email); err != nil || a.Address != email {
				return 0, invalidRequest("customer.email", "customer.email must be an email address.")
			}
		}
		if len(s.eligibleMethods(env, req.Country, req.Currency, amount)) == 0 {
			return 0, errorf(CodePaymentMethodUnavailable, "", "No payment method is available for %s %s at this amount in %s.", req.Country, req.Currency, env)
		}
		return amount, nil
	}
	customer := req.Customer
	if customer == nil {
		customer = map[string]string{}
	}
	_, _, err := s.checkPaymentRoute(env, &CreatePaymentIntentRequest{
		Amount: req.Amount, Currency: req.Currency, Country: req.Country, MerchantReference: req.MerchantReference,
		PaymentMethod: req.PaymentMethod, Customer: customer, PaymentMethodOptions: req.PaymentMethodOptions,
		ReturnURL: req.ReturnURL,
	}, false, true)
	return amount, err
}

// eligibleMethods are the methods with a route for the environment,
// country, currency and amount, in the contract's order.
func (s *Service) eligibleMethods(env Environment, country, currency string, amount int64) []PaymentMethod {
	var out []PaymentMethod
	for _, m := range enums.PaymentMethods {
		if r, ok := s.paymentRoute(env, m, country, currency, amount); ok {
			out = append(out, paymentMethodOf(r))
		}
	}
	return out
}

func paymentMethodOf(r *PaymentRoute) PaymentMethod {
	return PaymentMethod{
		Method: r.Method, NextActionType: r.NextAction,
		RequiredCustomerFields: slices.Clone(r.CustomerFields), Banks: slices.Clone(r.Banks),
	}
}

// CreateCheckout creates a checkout and its linked payment intent in
// requires_payment_method, under the Idempotency-Key. No Provider is
// contacted. The linked intent carries the checkout's merchant_reference,
// so the reference must be new to both checkouts and payment intents.
func (s *Service) CreateCheckout(ctx context.Context, p Principal, idempotencyKey string, req CreateCheckoutRequest) (*Checkout, Answer, error) {
	return s.createCheckout(ctx, nil, p, idempotencyKey, req)
}

// CreateCheckoutTx is CreateCheckout inside the host's transaction tx (see
// sqlstore.Store.WrapTx): the checkout, its payment intent, their event and
// their jobs commit or roll back with the host's own rows. It does not
// retry: an error matching ErrVersionConflict or ErrUnavailable asks the
// host to roll back and run its transaction again; after any error tx may
// be unusable (it is on PostgreSQL).
func (s *Service) CreateCheckoutTx(ctx context.Context, tx Tx, p Principal, idempotencyKey string, req CreateCheckoutRequest) (*Checkout, Answer, error) {
	if tx == nil {
		return nil, Answer{}, internalError(errNilTx)
	}
	return s.createCheckout(ctx, tx, p, idempotencyKey, req)
}

// createCheckout is CreateCheckout in host's transaction, or in its own
// when host is nil.
func (s *Service) createCheckout(ctx context.Context, host Tx, p Principal, idempotencyKey string, req CreateCheckoutRequest) (*Checkout, Answer, error) {
	op, err := newOperation(p.Scope, idempotencyKey, "checkout.create", "", req)
	if err != nil {
		return nil, Answer{}, err
	}
	// A known key skips validation, as in CreatePaymentIntent.
	var amount int64
	validated := false
	if _, err := s.reader(host).GetIdempotencyRecord(ctx, p.Scope, idempotencyKey); errors.Is(err, ErrNotFound) {
		if amount, err = s.validateCheckout(p.Environment, &req); err != nil {
			return nil, Answer{}, err
		}
		validated = true
	} else if err != nil {
		return nil, Answer{}, internalError(err)
	}
	now := s.Now()
	var (
		stored   *StoredAnswer
		replayed bool
	)
	err = s.within(ctx, host, func(tx Tx) error {
		c, err := s.begin(ctx, tx, op, now)
		if err != nil {
			return err
		}
		if c.replay != nil {
			stored, replayed = c.replay, true
			return nil
		}
		if c.resumed { // never left in progress (one transaction), but be safe
			co, err := tx.GetCheckout(ctx, p.Scope, c.record.ResourceID)
			if err != nil {
				return err
			}
			pi, err := tx.GetPaymentIntent(ctx, p.Scope, co.PaymentIntentID)
			if err != nil {
				return err
			}
			stored, err = finish(ctx, tx, c.record, AnswerCreated, s.project(co, pi), now)
			return err
		}
		if !validated { // the record we saw was purged meanwhile
			return ErrVersionConflict
		}
		co := &Checkout{
			ID: s.newID("co"), MerchantID: p.MerchantID, Environment: p.Environment, Status: CheckoutOpen,
			Amount: amount, Currency: req.Currency, Country: req.Country, MerchantReference: req.MerchantReference,
			Customer: req.Customer, Metadata: req.Metadata, PaymentMethod: req.PaymentMethod,
			PaymentMethodOptions: req.PaymentMethodOptions, ReturnURL: req.ReturnURL,
			ExpiresAt: now.Add(s.checkoutTTL), CreatedAt: now, UpdatedAt: now,
		}
		pi := &PaymentIntent{
			ID: s.newID("pi"), MerchantID: p.MerchantID, Environment: p.Environment,
			Status: PaymentRequiresPaymentMethod, Amount: amount, Currency: req.Currency, Country: req.Country,
			MerchantReference: req.MerchantReference, PaymentMethod: req.PaymentMethod,
			Customer: req.Customer, PaymentMethodOptions: req.PaymentMethodOptions, CheckoutID: co.ID,
			ExpiresAt: co.ExpiresAt, CreatedAt: now, UpdatedAt: now,
		}
		co.PaymentIntentID = pi.ID
		if err := tx.CreatePaymentIntent(ctx, pi); err != nil {
			return err
		}
		if err := tx.CreateCheckout(ctx, co); err != nil {
			return err
		}
		if err := s.enqueue(ctx, tx, &Job{
			Kind: jobCheckoutExpire, Scope: p.Scope, TargetID: co.ID, RunAt: co.ExpiresAt,
			DedupKey: jobCheckoutExpire + ":" + co.ID,
		}); err != nil {
			return err
		}
		c.record.ResourceID = co.ID
		stored, err = finish(ctx, tx, c.record, AnswerCreated, s.project(co, pi), now)
		return err
	})
	if errors.Is(err, ErrAlreadyExists) {
		return nil, Answer{}, errorf(CodeDuplicateMerchantReference, "merchant_reference", "merchant_reference %q is already used by another checkout or payment intent.", req.MerchantReference)
	}
	if err != nil {
		return nil, Answer{}, serviceError(host, err)
	}
	return answered[Checkout](stored, replayed)
}

// project fills c's projection fields from its linked intent pi and
// returns c.
func (s *Service) project(c *Checkout, pi *PaymentIntent) *Checkout {
	c.URL = s.checkoutURL(c)
	c.PaymentStatus = pi.Status
	c.ChosenMethod = pi.PaymentMethod
	c.FailureCode = pi.FailureCode
	c.ProviderStatus = providerStatus(pi)
	c.ProcessingStaleAt = processingStaleAt(pi)
	if pi.UpdatedAt.After(c.UpdatedAt) {
		c.UpdatedAt = pi.UpdatedAt // the payment's progress is the checkout's too
	}
	return c
}

// providerStatus says how far the Provider attempt of pi got: "" before
// one exists.
func providerStatus(pi *PaymentIntent) string {
	if pi.Provider == "" {
		return ""
	}
	switch pi.Attempt {
	case AttemptNone, AttemptCreating, AttemptOpen:
		return providerStatusPending
	case AttemptUnknown:
		return providerStatusUnknown
	}
	if pi.Status == PaymentSucceeded {
		return providerStatusSucceeded
	}
	return providerStatusFailed
}

// processingStaleAt is when recovery escalates pi, while it is processing
// (see staleAt).
func processingStaleAt(pi *PaymentIntent) *time.Time {
	return staleAt(pi.Status == PaymentProcessing, pi.UpdatedAt)
}

// loadCheckout reads a checkout of scope and its linked intent.
func loadCheckout(ctx context.Context, tx Tx, scope Scope, id string) (*Checkout, *PaymentIntent, error) {
	c, err := tx.GetCheckout(ctx, scope, id)
	if err != nil {
		return nil, nil, err
	}
	pi, err := tx.GetPaymentIntent(ctx, scope, c.PaymentIntentID)
	if err != nil {
		return nil, nil, err
	}
	return c, pi, nil
}

// GetCheckout returns the committed projection of a checkout of the
// caller's scope. It never starts Provider work.
func (s *Service) GetCheckout(ctx context.Context, p Principal, id string) (*Checkout, error) {
	c, pi, err := loadCheckout(ctx, s.store, p.Scope, id)
	if errors.Is(err, ErrNotFound) {
		return nil, notFound("checkout")
	}
	if err != nil {
		return nil, internalError(err)
	}
	return s.project(c, pi), nil
}

// ListCheckouts lists the caller's checkouts, newest first.
func (s *Service) ListCheckouts(ctx context.Context, p Principal, params ListParams[CheckoutStatus]) (*Page[Checkout], error) {
	limit, after, err := s.pageQuery("checkout", params.PageParams)
	if err != nil {
		return nil, err
	}
	if err := params.check("checkout", CheckoutStatus.Valid); err != nil {
		return nil, err
	}
	rows, err := s.store.ListCheckouts(ctx, ListQuery[ListParams[CheckoutStatus]]{Scope: p.Scope, Filter: params, After: after, Limit: limit + 1})
	if err != nil {
		return nil, internalError(err)
	}
	for i := range rows {
		if i == limit {
			break // makePage drops it
		}
		pi, err := s.store.GetPaymentIntent(ctx, p.Scope, rows[i].PaymentIntentID)
		if err != nil {
			return nil, internalError(err)
		}
		s.project(&rows[i], pi)
	}
	return makePage(s, "checkout", rows, limit, func(c *Checkout) Position { return Position{c.CreatedAt, c.ID} }), nil
}

// CancelCheckout cancels an open checkout (done, with the checkout); a
// checkout no longer open is invalid_state. The linked payment is
// cancelled at once when the payer has not started it; an attempt waiting
// for the payer is cancelled at the Provider in the background; a
// processing or uncertain attempt is left to finish (if it succeeds, the
// checkout becomes completed).
func (s *Service) CancelCheckout(ctx context.Context, p Principal, idempotencyKey, id string) (*Checkout, Answer, error) {
	op, err := newOperation(p.Scope, idempotencyKey, "checkout.cancel", id, struct{}{})
	if err != nil {
		return nil, Answer{}, err
	}
	return idempotent(ctx, s, op, func(tx Tx, now time.Time) (AnswerKind, *Checkout, error) {
		co, pi, err := loadCheckout(ctx, tx, p.Scope, id)
		if errors.Is(err, ErrNotFound) {
			return "", nil, notFound("checkout")
		}
		if err != nil {
			return "", nil, err
		}
		if co.Status != CheckoutOpen {
			return "", nil, errorf(CodeInvalidState, "", "This checkout is already %s.", co.Status)
		}
		if err := s.cancelLinkedIntent(ctx, tx, pi, now); err != nil {
			return "", nil, err
		}
		co.Status, co.UpdatedAt = CheckoutCancelled, now
		if err := tx.UpdateCheckout(ctx, co); err != nil {
			return "", nil, err
		}
		if err := s.completeJob(ctx, tx, jobCheckoutExpire, co.ID); err != nil { // nothing left to expire
			return "", nil, err
		}
		return AnswerDone, s.project(co, pi), nil
	})
}

// cancelLinkedIntent ends the payer's part of a checkout's intent when the
// checkout is cancelled; see CancelCheckout.
func (s *Service) cancelLinkedIntent(ctx context.Context, tx Tx, pi *PaymentIntent, now time.Time) error {
	switch {
	case pi.Status.Terminal() || pi.CancelRequestedAt != nil:
		return nil
	case pi.Attempt == AttemptNone:
		pi.Status, pi.Attempt, pi.CompletedAt, pi.NextAction = PaymentCancelled, AttemptClosed, &now, nil
	case pi.Status == PaymentRequiresAction:
		if err := s.enqueue(ctx, tx, &Job{Kind: jobPaymentCancel, Scope: pi.Scope(), TargetID: pi.ID, RunAt: now, DedupKey: jobPaymentCancel + ":" + pi.ID}); err != nil {
			return err
		}
	default:
		return nil // processing or uncertain: never cut short
	}
	pi.CancelRequestedAt, pi.UpdatedAt = &now, now
	return tx.UpdatePaymentIntent(ctx, pi)
}

// expireCheckoutJob ends an open checkout at its expiry: a payment the
// payer never started expires with it; an attempt in flight is left to its
// own lifecycle (if it succeeds, the checkout becomes completed). A
// checkout that ended already (completed, cancelled) ends the job without
// a transaction.
func (s *Service) expireCheckoutJob(ctx context.Context, j *Job) error {
	co, err := s.store.GetCheckout(ctx, j.Scope, j.TargetID)
	if errors.Is(err, ErrNotFound) {
		return nil
	}
	if err != nil || co.Status != CheckoutOpen {
		return err
	}
	return s.inTx(ctx, func(tx Tx) error {
		co, pi, err := loadCheckout(ctx, tx, j.Scope, j.TargetID)
		if errors.Is(err, ErrNotFound) {
			return nil
		}
		if err != nil || co.Status != CheckoutOpen {
			return err
		}
		now := s.Now()
		if co.ExpiresAt.After(now) {
			return errNotYet
		}
		if pi.Attempt == AttemptNone && !pi.Status.Terminal() {
			pi.Status, pi.FailureCode, pi.Attempt, pi.CompletedAt, pi.UpdatedAt = PaymentExpired, FailureExpired, AttemptClosed, &now, now
			if err := tx.UpdatePaymentIntent(ctx, pi); err != nil {
				return err
			}
		}
		co.Status, co.UpdatedAt = CheckoutExpired, now
		if pi.Status == PaymentSucceeded {
			co.Status = CheckoutCompleted
		}
		return tx.UpdateCheckout(ctx, co)
	})
}

// syncCheckout follows a final payment of a checkout's intent in tx: a
// success completes the checkout (whatever its status: the money moved); a
// cancel of the payment cancels an open checkout. A failure leaves the
// checkout open until it expires; its projection shows the failure.
func (s *Service) syncCheckout(ctx context.Context, tx Tx, pi *PaymentIntent, now time.Time) error {
	if pi.CheckoutID == "" {
		return nil
	}
	co, err := tx.GetCheckout(ctx, pi.Scope(), pi.CheckoutID)
	if err != nil {
		return err
	}
	switch {
	case pi.Status == PaymentSucceeded && co.Status != CheckoutCompleted:
		co.Status = CheckoutCompleted
	case pi.Status == PaymentCancelled && co.Status == CheckoutOpen:
		co.Status = CheckoutCancelled
	default:
		return nil
	}
	co.UpdatedAt = now
	return tx.UpdateCheckout(ctx, co)
}

// CheckoutReturnURL is where the payer goes when c's payment is done: the
// merchant's return_url with checkout_id added, or "" when there is none.
func (s *Service) CheckoutReturnURL(c *Checkout) string {
	if c.ReturnURL == "" {
		return ""
	}
	u, err := url.Parse(c.ReturnURL)
	if err != nil {
		return ""
	}
	q := u.Query()
	q.Set("checkout_id", c.ID)
	u.RawQuery = q.Encode()
	return u.String()
}

// PayerCheckout is what the checkout app shows a payer: the checkout, its
// linked intent, the merchant's name and the methods the payer may choose
// (only the frozen one when the merchant chose).
type PayerCheckout struct {
	Checkout     *Checkout
	Intent       *PaymentIntent
	MerchantName string
	Methods      []PaymentMethod
}

// OpenCheckout resolves a checkout_url token. A forged, altered, expired
// or foreign token, or one whose checkout is gone, is ErrLinkInvalid.
func (s *Service) OpenCheckout(ctx context.Context, token string) (*PayerCheckout, error) {
	scope, id, ok := s.openLinkToken(tokenCheckout, token)
	if !ok {
		return nil, ErrLinkInvalid
	}
	co, pi, err := loadCheckout(ctx, s.store, scope, id)
	if errors.Is(err, ErrNotFound) {
		return nil, ErrLinkInvalid
	}
	if err != nil {
		return nil, internalError(err)
	}
	m, err := s.store.GetMerchant(ctx, scope.MerchantID)
	if err != nil {
		return nil, internalError(err)
	}
	pc := &PayerCheckout{Checkout: s.project(co, pi), Intent: pi, MerchantName: m.Name}
	if co.PaymentMethod != "" {
		if r, ok := s.paymentRoute(co.Environment, co.PaymentMethod, co.Country, co.Currency, co.Amount); ok {
			pc.Methods = []PaymentMethod{paymentMethodOf(r)}
		}
	} else {
		pc.Methods = s.eligibleMethods(co.Environment, co.Country, co.Currency, co.Amount)
	}
	return pc, nil
}

// PayCheckoutRequest is what the payer submits in the checkout app.
// SubmissionID identifies one rendering of the form: a double submit
// carries the same one and is the same request.
type PayCheckoutRequest struct {
	PaymentMethod string
	Customer      map[string]string
	Options       map[string]string
	SubmissionID  string
}

// PayCheckout starts the Provider attempt of the checkout's linked intent
// with the payer's choice and details, through the same flow as
// CreatePaymentIntent (route and payer data checked first, idempotent,
// resumable). The payer's entries complete the merchant's customer data
// and, for a frozen method, its options. Only one attempt is ever started:
// when the payment has started already the answer is invalid_state, and a
// repeated submission returns the intent as it is.
func (s *Service) PayCheckout(ctx context.Context, token string, req PayCheckoutRequest) (*PaymentIntent, error) {
	pc, err := s.OpenCheckout(ctx, token)
	if err != nil {
		return nil, err
	}
	co, scope := pc.Checkout, pc.Checkout.Scope()
	if co.PaymentMethod != "" && req.PaymentMethod != co.PaymentMethod {
		return nil, invalidRequest("payment_method", "This checkout takes only %s.", co.PaymentMethod)
	}
	customer := maps.Clone(co.Customer)
	if customer == nil {
		customer = map[string]string{}
	}
	maps.Copy(customer, req.Customer)
	var options map[string]string
	if co.PaymentMethod != "" {
		options = maps.Clone(co.PaymentMethodOptions)
	}
	if len(req.Options) > 0 {
		if options == nil {
			options = map[string]string{}
		}
		maps.Copy(options, req.Options)
	}
	creq := CreatePaymentIntentRequest{
		Amount: co.Amount, Currency: co.Currency, Country: co.Country,
		MerchantReference: co.MerchantReference, PaymentMethod: req.PaymentMethod,
		Customer: customer, PaymentMethodOptions: options,
	}
	_, route, err := s.validatePaymentRoute(co.Environment, &creq)
	if err != nil {
		return nil, err
	}
	submission := req.SubmissionID
	if submission == "" {
		submission = newid.Random("sub")
	}
	// A space never occurs in a merchant's Idempotency-Key, so the payer's
	// keys cannot collide with the merchant's.
	key := "checkout " + co.ID + " " + submission
	fp, err := fingerprint("checkout.pay "+co.ID, creq)
	if err != nil {
		return nil, err
	}
	op := operation{scope: scope, key: key, fingerprint: fp}
	now := s.Now()
	var c *claim
	var piID string
	err = s.inTx(ctx, func(tx Tx) error {
		var err error
		if c, err = s.begin(ctx, tx, op, now); err != nil || c.replay != nil {
			return err
		}
		cur, pi, err := loadCheckout(ctx, tx, scope, co.ID)
		if err != nil {
			return err
		}
		piID = pi.ID
		if c.resumed {
			return nil
		}
		if cur.Status != CheckoutOpen || !now.Before(cur.ExpiresAt) {
			return errorf(CodeInvalidState, "", "This checkout is %s.", cur.Status)
		}
		if pi.Status != PaymentRequiresPaymentMethod || pi.Attempt != AttemptNone {
			return errorf(CodeInvalidState, "", "The payment of this checkout has already started.")
		}
		pi.PaymentMethod, pi.Customer, pi.PaymentMethodOptions = creq.PaymentMethod, creq.Customer, creq.PaymentMethodOptions
		pi.Provider, pi.Attempt, pi.Status = route.Provider, AttemptCreating, PaymentProcessing
		pi.ProviderOptions = route.providerOptions(creq.PaymentMethodOptions)
		pi.ExpiresAt = now.Add(s.paymentTTL)
		if cur.ExpiresAt.Before(pi.ExpiresAt) {
			pi.ExpiresAt = cur.ExpiresAt // the payer's window ends with the checkout
		}
		pi.UpdatedAt = now
		if err := tx.UpdatePaymentIntent(ctx, pi); err != nil {
			return err
		}
		return s.startAttempt(ctx, tx, pi, c.record, now, false)
	})
	switch code := ErrorCode(err); {
	case code == CodeIdempotencyInProgress || code == CodeIdempotencyConflict:
		// The same submission is being (or was) handled: show where it is.
		return s.currentIntent(ctx, scope, co.PaymentIntentID)
	case err != nil:
		return nil, asServiceError(err)
	case c.replay != nil:
		return s.currentIntent(ctx, scope, co.PaymentIntentID)
	}
	if _, _, err := s.runAttempt(ctx, scope, piID, key); err != nil {
		return nil, err
	}
	return s.currentIntent(ctx, scope, piID)
}

func (s *Service) currentIntent(ctx context.Context, scope Scope, id string) (*PaymentIntent, error) {
	pi, err := s.store.GetPaymentIntent(ctx, scope, id)
	if err != nil {
		return nil, asServiceError(err)
	}
	return pi, nil
}

// checkoutReturn is where PaymentReturn sends the payer of a checkout's
// payment: the merchant's return_url once the payment is final, else back
// to the checkout page while its link lives; "" for the result page.
func (s *Service) checkoutReturn(ctx context.Context, pi *PaymentIntent) string {
	co, err := s.store.GetCheckout(ctx, pi.Scope(), pi.CheckoutID)
	if err != nil {
		return ""
	}
	if pi.Status.Terminal() {
		if u := s.CheckoutReturnURL(co); u != "" {
			return u
		}
	}
	if s.Now().Before(co.ExpiresAt) {
		return s.checkoutURL(co)
	}
	return ""
}
