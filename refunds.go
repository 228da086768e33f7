package paykit

import (
	"context"
	"time"
)

// RefundStatus is the public lifecycle state of a refund.
type RefundStatus string

// Refund statuses: the contract's closed set. The last two are terminal.
const (
	RefundPending   RefundStatus = "pending"
	RefundSucceeded RefundStatus = "succeeded"
	RefundFailed    RefundStatus = "failed"
)

// Terminal reports whether s is final.
func (s RefundStatus) Terminal() bool { return s == RefundSucceeded || s == RefundFailed }

// Valid reports whether s is one of the refund statuses.
func (s RefundStatus) Valid() bool { return s == RefundPending || s.Terminal() }

// Refund failure codes.
const (
	// RefundProviderDeclined: the Provider refused the refund.
	RefundProviderDeclined = "provider_declined"
	// RefundProviderError: the Provider reported an error of its own.
	RefundProviderError = "provider_error"
)

// Refund returns money of a succeeded payment intent to its payer, in full
// or in part. Its amount is reserved on the merchant's balance from create
// until the Provider's final word: moved out on success, released on
// failure.
type Refund struct {
	ID                string
	MerchantID        string
	Environment       Environment
	PaymentIntentID   string
	Amount            int64
	Currency          string
	Status            RefundStatus
	Reason            string // "" when none was given
	MerchantReference string
	FailureCode       string // "", RefundProviderDeclined or RefundProviderError
	Provider          string        // internal: the payment's Provider, which refunds it
	ProviderRef       string        // internal: the Provider's id of the refund, from whichever answer names it first
	Dispatch          DispatchState // internal: where the Provider call stands
	CompletedAt       *time.Time
	CreatedAt         time.Time
	UpdatedAt         time.Time
	Version           int64
}

// Scope returns the tenant of the refund.
func (r *Refund) Scope() Scope { return Scope{r.MerchantID, r.Environment} }

// CreateRefundRequest asks for a refund of a succeeded payment intent.
type CreateRefundRequest struct {
	PaymentIntent     string `json:"payment_intent" validate:"required,max=64"`
	MerchantReference string `json:"merchant_reference" validate:"required,max=256"`
	// Amount in minor units; 0 refunds all that is still refundable.
	Amount int64  `json:"amount,omitempty" validate:"omitempty,minor_units"`
	Reason string `json:"reason,omitempty" validate:"omitempty,max=512"`
}

// RefundListParams are the filters of GET /refunds: those of the other
// lists (Country never matches a refund's) and the payment intent.
type RefundListParams struct {
	ListParams[RefundStatus]
	PaymentIntent string // exact id; empty does not filter
}

// RefundQuery selects refunds of one scope.
type RefundQuery struct {
	Scope             Scope
	Statuses          []RefundStatus
	Currency          string
	MerchantReference string
	PaymentIntentID   string
	CreatedAfter      *time.Time // inclusive
	CreatedBefore     *time.Time // exclusive
	After             *Position
	Limit             int
}

// RefundStore persists refunds.
type RefundStore interface {
	// CreateRefund inserts r; ErrAlreadyExists (Key "id" or
	// "merchant_reference") when the id, or the merchant reference within
	// the scope, is taken.
	CreateRefund(ctx context.Context, r *Refund) error
	// GetRefund returns the refund of that scope or ErrNotFound.
	GetRefund(ctx context.Context, scope Scope, id string) (*Refund, error)
	// FindRefund returns the refund of any scope or ErrNotFound: for
	// Provider callbacks, which name our id but not the tenant.
	FindRefund(ctx context.Context, id string) (*Refund, error)
	// UpdateRefund writes r under the Version rule.
	UpdateRefund(ctx context.Context, r *Refund) error
	// ListRefunds returns at most q.Limit refunds, newest first.
	ListRefunds(ctx context.Context, q RefundQuery) ([]Refund, error)
}

// RefundRequest asks a Provider to refund part or all of a payment.
type RefundRequest struct {
	// Key is the Provider idempotency key: the refund's id, so every retry
	// of the same refund carries the same key.
	Key string
	// PaymentKey is the key the payment attempt was created with, and
	// PaymentRef the Provider's id of that attempt (empty if never known).
	PaymentKey string
	PaymentRef string
	Amount     int64
	Currency   string
}

// RefundProvider is the method set of CapRefunds: refund a succeeded
// payment and ask about a refund by its key. Callbacks about refunds come
// through ParseCallback with Kind "refund".
type RefundProvider interface {
	CreateRefund(ctx context.Context, req RefundRequest) Result
	InquireRefund(ctx context.Context, key string) Result
}
