package paykit

import (
	"context"
	"errors"
	"time"
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

// PaymentStatuses lists every payment intent status.
var PaymentStatuses = []PaymentStatus{
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
	for _, v := range PaymentStatuses {
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
	Type      string
	URL       string
	QRData    string
	ImageURL  string
	BankName  string
	Account   string
	Holder    string
	Reference string
	Amount    int64 // bank_transfer_instructions only
	Currency  string
	ExpiresAt time.Time
}

// Receipt is the proof of a succeeded payment.
type Receipt struct {
	Number        string
	PaidAt        time.Time
	Amount        int64
	Currency      string
	PaymentMethod string
}

// AttemptState is the internal state of the Provider attempt of an intent.
type AttemptState string

// Attempt states. Only the Service moves them; they never reach the API.
const (
	AttemptNone     AttemptState = ""         // no Provider attempt yet
	AttemptCreating AttemptState = "creating" // persisted; the create call may or may not have reached the Provider
	AttemptOpen     AttemptState = "open"     // the Provider has it; waiting for the payer or the Provider
	AttemptUnknown  AttemptState = "unknown"  // the create call's outcome is unknown; inquiry resolves it
	AttemptClosed   AttemptState = "closed"   // the Provider reported a final result
)

// PaymentIntent is a direct payment. Its JSON form is the contract's
// projection; Provider fields never appear in it.
type PaymentIntent struct {
	ID                   string
	MerchantID           string
	Environment          Environment
	Status               PaymentStatus
	Amount               int64
	Currency             string
	Country              string
	MerchantReference    string
	PaymentMethod        string // empty while a checkout waits for the payer's choice
	Customer             map[string]string
	PaymentMethodOptions map[string]string
	ReturnURL            string
	CheckoutID           string
	NextAction           *NextAction
	FailureCode          string
	Receipt              *Receipt
	Provider             string            // internal: routed Provider name
	ProviderOptions      map[string]string // internal: the options as the route mapped them for Provider (bank codes) at create; nil on older intents
	ProviderRef          string            // internal: the Provider's id of the attempt
	Attempt              AttemptState
	ProviderURL          string     // internal: the Provider's payer page behind the continuation URL
	CancelRequestedAt    *time.Time // set when a cancel waits for the Provider
	ExpiresAt            time.Time
	CompletedAt          *time.Time
	CreatedAt            time.Time
	UpdatedAt            time.Time
	Version              int64
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

// PaymentIntentListParams are the filters of GET /payment_intents.
type PaymentIntentListParams = ListParams[PaymentStatus]

// ListParams are the filters the lists of payment intents, payout intents
// and checkouts share (the query parameters of GET /payment_intents), with
// S their status type.
// Empty fields do not filter.
type ListParams[S ~string] struct {
	PageParams
	Statuses          []S
	Currency          string
	Country           string
	MerchantReference string
	CreatedAfter      *time.Time // inclusive
	CreatedBefore     *time.Time // exclusive
}

// GetPaymentIntent returns the committed projection of an intent of the
// caller's scope. It never starts Provider work.
func (s *Service) GetPaymentIntent(ctx context.Context, p Principal, id string) (*PaymentIntent, error) {
	pi, err := s.store.GetPaymentIntent(ctx, p.Scope, id)
	if errors.Is(err, ErrNotFound) {
		return nil, notFound("payment_intent")
	}
	if err != nil {
		return nil, Internal(err)
	}
	return pi, nil
}

// ListPaymentIntents lists the caller's intents, newest first.
func (s *Service) ListPaymentIntents(ctx context.Context, p Principal, params PaymentIntentListParams) (*Page[PaymentIntent], error) {
	limit, after, err := s.pageQuery("payment_intent", params.PageParams)
	if err != nil {
		return nil, err
	}
	for _, st := range params.Statuses {
		if !st.Valid() {
			return nil, InvalidRequest("status", "status %q is not a payment intent status.", st)
		}
	}
	if err := validateListFilters(params.Currency, params.Country, params.MerchantReference); err != nil {
		return nil, err
	}
	rows, err := s.store.ListPaymentIntents(ctx, PaymentIntentQuery{
		Scope: p.Scope, Statuses: params.Statuses, Currency: params.Currency, Country: params.Country,
		MerchantReference: params.MerchantReference, CreatedAfter: params.CreatedAfter,
		CreatedBefore: params.CreatedBefore, After: after, Limit: limit + 1,
	})
	if err != nil {
		return nil, Internal(err)
	}
	return makePage(s, "payment_intent", rows, limit, func(pi *PaymentIntent) Position { return Position{pi.CreatedAt, pi.ID} }), nil
}
