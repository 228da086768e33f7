package paykit

import (
	"time"
)

// PayoutStatus is the public lifecycle state of a payout intent.
type PayoutStatus string

// Payout statuses: the contract's closed set. The last four are terminal.
const (
	PayoutProcessing       PayoutStatus = "processing"
	PayoutRequiresAction   PayoutStatus = "requires_action"
	PayoutRequiresApproval PayoutStatus = "requires_approval"
	PayoutSucceeded        PayoutStatus = "succeeded"
	PayoutFailed           PayoutStatus = "failed"
	PayoutCancelled        PayoutStatus = "cancelled"
	PayoutExpired          PayoutStatus = "expired"
)

// PayoutStatuses lists every payout status.
var PayoutStatuses = []PayoutStatus{
	PayoutProcessing, PayoutRequiresAction, PayoutRequiresApproval,
	PayoutSucceeded, PayoutFailed, PayoutCancelled, PayoutExpired,
}

// Terminal reports whether a cancel is refused (invalid_state).
func (s PayoutStatus) Terminal() bool {
	switch s {
	case PayoutSucceeded, PayoutFailed, PayoutCancelled, PayoutExpired:
		return true
	}
	return false
}

// Valid reports whether s is a payout status.
func (s PayoutStatus) Valid() bool {
	for _, v := range PayoutStatuses {
		if v == s {
			return true
		}
	}
	return false
}

// DispatchState is the internal state of a payout's Provider transfer.
type DispatchState string

// Dispatch states; never rendered.
const (
	DispatchNone       DispatchState = ""           // not sent (approval hold, or cancelled before)
	DispatchSending    DispatchState = "sending"    // persisted; the create call may or may not have reached the Provider
	DispatchAccepted   DispatchState = "accepted"   // the Provider has it in flight
	DispatchUncertain  DispatchState = "uncertain"  // no trustworthy answer; inquiry resolves it
	DispatchCancelling DispatchState = "cancelling" // a cancel waits for the Provider's confirmation
	DispatchClosed     DispatchState = "closed"     // the Provider reported a final result
)

// Recipient is where a payout goes. The full account number exists only in
// requests and, encrypted, in the Store; projections show its last four.
type Recipient struct {
	Type          string `json:"type" validate:"required,oneof=bank_account"`
	AccountNumber string `json:"account_number" validate:"required,min=4,max=34,alphanum"`
	BankCode      string `json:"bank_code" validate:"required,max=32"`
	HolderName    string `json:"holder_name" validate:"required,min=1,max=140"`
	HolderNameTH  string `json:"holder_name_th,omitempty" validate:"omitempty,min=1,max=140"`
}

// PayoutIntent is a payout to a bank account. Its JSON form is the
// contract's projection.
type PayoutIntent struct {
	ID                string
	MerchantID        string
	Environment       Environment
	Status            PayoutStatus
	ApprovalPending   bool // renders approval_status "pending"
	Amount            int64
	Currency          string
	Country           string
	MerchantReference string

	RecipientType     string
	BankCode          string // canonical
	ProviderBankCode  string // the route's code for BankCode, frozen at create: later route edits do not change it
	HolderName        string
	HolderNameTH      string
	AccountLast4      string
	AccountCiphertext []byte // AES-256-GCM of the full account number
	AccountKeyID      string // which key encrypted it

	ReservedAmount  int64 // held on the merchant's balance now
	CompletedAmount int64 // paid out
	ReturnedAmount  int64 // came back after paying out

	FailureCode    string
	FailureMessage string
	CancelReason   string

	Provider          string // internal: routed Provider
	ProviderRef       string // internal: the Provider's transfer id
	Dispatch          DispatchState
	CancelRequestedAt *time.Time
	ApprovalExpiresAt *time.Time // end of an approval hold
	CreatedAt         time.Time
	UpdatedAt         time.Time
	Version           int64
}

// Scope returns the tenant of the payout.
func (p *PayoutIntent) Scope() Scope { return Scope{p.MerchantID, p.Environment} }
