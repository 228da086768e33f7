package paykit

import (
	"slices"
	"time"
)

// DisputeStatus is the public lifecycle state of a dispute.
type DisputeStatus string

// Dispute statuses: the contract's closed set. Won and lost are terminal.
const (
	DisputeNeedsResponse DisputeStatus = "needs_response"
	DisputeUnderReview   DisputeStatus = "under_review"
	DisputeWon           DisputeStatus = "won"
	DisputeLost          DisputeStatus = "lost"
)

// disputeStatuses are the dispute statuses, in the contract's order.
var disputeStatuses = []DisputeStatus{DisputeNeedsResponse, DisputeUnderReview, DisputeWon, DisputeLost}

// Terminal reports whether s is final.
func (s DisputeStatus) Terminal() bool { return s == DisputeWon || s == DisputeLost }

// Valid reports whether s is one of the dispute statuses.
func (s DisputeStatus) Valid() bool { return slices.Contains(disputeStatuses, s) }

// DisputeReason is why the payer disputed a payment.
type DisputeReason string

// Dispute reasons: the contract's closed set.
const (
	DisputeFraudulent          DisputeReason = "fraudulent"
	DisputeProductNotReceived  DisputeReason = "product_not_received"
	DisputeProductUnacceptable DisputeReason = "product_unacceptable"
	DisputeDuplicate           DisputeReason = "duplicate"
	DisputeCreditNotProcessed  DisputeReason = "credit_not_processed"
	DisputeGeneral             DisputeReason = "general"
)

// disputeReasons are the dispute reasons, in the contract's order.
var disputeReasons = []DisputeReason{DisputeFraudulent, DisputeProductNotReceived, DisputeProductUnacceptable,
	DisputeDuplicate, DisputeCreditNotProcessed, DisputeGeneral}

// Valid reports whether r is one of the dispute reasons.
func (r DisputeReason) Valid() bool { return slices.Contains(disputeReasons, r) }

// Dispute is a payer's challenge of a succeeded payment through their
// bank. On opening, its amount and the Provider's dispute fee leave the
// merchant's available balance (even below zero); a won dispute returns
// the amount.
type Dispute struct {
	ID              string        `json:"id,omitzero"`
	MerchantID      string        `json:"merchant_id,omitzero"`
	Environment     Environment   `json:"environment,omitzero"`
	PaymentIntentID string        `json:"payment_intent_id,omitzero"`
	Amount          int64         `json:"amount,omitzero"`
	Currency        string        `json:"currency,omitzero"`
	Fee             int64         `json:"fee,omitzero"`
	Reason          DisputeReason `json:"reason,omitzero"`
	Status          DisputeStatus `json:"status,omitzero"`
	// Evidence is the merchant's evidence text; "" when none was given.
	Evidence string `json:"evidence,omitzero"`
	// EvidenceSubmittedAt is when the evidence went to the Provider.
	EvidenceSubmittedAt *time.Time `json:"evidence_submitted_at,omitzero"`
	EvidenceDueBy       time.Time  `json:"evidence_due_by,omitzero"`
	Provider            string     `json:"provider,omitzero"`     // internal
	ProviderRef         string     `json:"provider_ref,omitzero"` // internal: the Provider's dispute id
	ClosedAt            *time.Time `json:"closed_at,omitzero"`
	CreatedAt           time.Time  `json:"created_at,omitzero"`
	UpdatedAt           time.Time  `json:"updated_at,omitzero"`
	Version             int64      `json:"version,omitzero"`
}

// Scope returns the tenant of the dispute.
func (d *Dispute) Scope() Scope { return Scope{d.MerchantID, d.Environment} }

// DisputeListParams are the filters of GET /disputes: those of the other
// lists (Country and MerchantReference never match a dispute's) and the
// payment intent.
type DisputeListParams struct {
	ListParams[DisputeStatus]
	PaymentIntent string // exact id; empty does not filter
}
