package paykit

import (
	"slices"
	"time"
)

// BreakType says how a settlement line and paykit's records disagree.
type BreakType string

// Break types: the contract's closed set.
const (
	BreakFeeMismatch      BreakType = "fee_mismatch"      // the Provider settled another fee than it stated
	BreakAmountMismatch   BreakType = "amount_mismatch"   // another amount than paykit recorded
	BreakCurrencyMismatch BreakType = "currency_mismatch" // another currency
	BreakDuplicateLine    BreakType = "duplicate_line"    // a line settled twice
	BreakUnknownToPaykit  BreakType = "unknown_to_paykit" // a line no paykit record matches: it has no merchant
	BreakMissingInReport  BreakType = "missing_in_report" // succeeded longer ago than the SLA and in no settled batch
)

// breakTypes are the break types, in the contract's order.
var breakTypes = []BreakType{BreakFeeMismatch, BreakAmountMismatch, BreakCurrencyMismatch, BreakDuplicateLine,
	BreakUnknownToPaykit, BreakMissingInReport}

// Valid reports whether t is one of the break types.
func (t BreakType) Valid() bool { return slices.Contains(breakTypes, t) }

// BreakStatus is open until an operator, or a late matching line,
// resolves the break.
type BreakStatus string

// Break statuses.
const (
	BreakOpen     BreakStatus = "open"
	BreakResolved BreakStatus = "resolved"
)

// Valid reports whether s is a break status.
func (s BreakStatus) Valid() bool { return s == BreakOpen || s == BreakResolved }

// BreakResolution says how a break was resolved.
type BreakResolution string

// Break resolutions.
const (
	// ResolveAcceptPaykit settles the funds as paykit recorded them.
	ResolveAcceptPaykit BreakResolution = "accept_paykit"
	// ResolveAcceptProvider settles them as the Provider reported, and
	// books the difference as an adjustment of the merchant's balance.
	ResolveAcceptProvider BreakResolution = "accept_provider"
	// ResolveMatched: a missing_in_report break whose line came later and
	// matched; paykit resolves it itself.
	ResolveMatched BreakResolution = "matched"
)

// SettlementAmounts are a settlement line's money as one side states it.
type SettlementAmounts struct {
	Amount   int64  `json:"amount"` // signed
	Fee      int64  `json:"fee"`
	Currency string `json:"currency"`
}

// ReconciliationBreak is a disagreement between a Provider's settlement
// report and paykit's records, open until resolved. Its funds stay
// pending until then.
type ReconciliationBreak struct {
	ID       string
	Type     BreakType
	Status   BreakStatus
	Provider string
	// MerchantID and Environment are the tenant of Source; empty for a
	// line unknown to paykit.
	MerchantID  string
	Environment Environment
	// Source is the paykit id the line concerns (a payment intent,
	// refund or dispute); "" when none.
	Source string
	// LineType and Reference are the line's type and Provider reference;
	// Batch the Provider's batch it came in ("" for missing_in_report).
	LineType   string
	Reference  string
	Batch      string
	Expected   *SettlementAmounts // paykit's record; nil for unknown_to_paykit
	Reported   *SettlementAmounts // the Provider's line; nil for missing_in_report
	Resolution BreakResolution    // "" while open
	Note       string
	CreatedAt  time.Time
	ResolvedAt *time.Time
	Version    int64
}

// Scope returns the tenant of the break (empty for a line unknown to
// paykit).
func (b *ReconciliationBreak) Scope() Scope { return Scope{b.MerchantID, b.Environment} }

// ReconciliationRun is one read of one settlement batch of a Provider.
type ReconciliationRun struct {
	ID         string
	Provider   string
	Batch      string
	Lines      int
	Matched    int
	Breaks     int
	StartedAt  time.Time
	FinishedAt time.Time
}

// SettledLine is paykit's record of one settlement line it read: a line
// is known by its Provider, type and reference, so a batch read again
// changes nothing and a line settled twice is seen.
type SettledLine struct {
	Provider  string
	Type      string
	Reference string
	Batch     string
	Source    string // the matched paykit id; "" when none matched
	CreatedAt time.Time
}

// BreakListParams are the filters of the operator's list of breaks.
type BreakListParams struct {
	PageParams
	Status     BreakStatus // "" for any
	Type       BreakType   // "" for any
	MerchantID string
	Provider   string
}

// RunListParams are the filters of the operator's list of runs.
type RunListParams struct {
	PageParams
	Provider string
}

// Unsettled is a succeeded payment intent or refund of a Provider that no
// settlement line named yet.
type Unsettled struct {
	Object      string // "payment_intent" or "refund"
	Scope       Scope
	ID          string
	Reference   string // the Provider's id of its attempt
	Amount      int64  // signed as its line would be: a refund is negative
	Fee         int64
	Currency    string
	CompletedAt time.Time
}

// UnsettledQuery selects the succeeded payment intents and refunds of
// Provider completed before Before whose attempt reference no SettledLine
// of the Provider names and that have no open missing_in_report break,
// oldest first (by completion, then id), at most Limit. A payment whose
// funds were settled otherwise (SettledAt set) is not selected.
type UnsettledQuery struct {
	Provider string
	Before   time.Time
	Limit    int
}
