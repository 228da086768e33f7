package paykit

import (
	"encoding/json"
	"fmt"
	"strconv"
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

// MarshalJSON renders the contract's payout_intent projection.
func (p PayoutIntent) MarshalJSON() ([]byte, error) {
	type recipient struct {
		Type         string `json:"type"`
		AccountLast4 string `json:"account_last4"`
		BankCode     string `json:"bank_code"`
		HolderName   string `json:"holder_name"`
	}
	out := struct {
		Object            string       `json:"object"`
		ID                string       `json:"id"`
		Amount            string       `json:"amount"`
		Currency          string       `json:"currency"`
		Country           string       `json:"country"`
		Environment       Environment  `json:"environment"`
		MerchantReference string       `json:"merchant_reference"`
		Status            PayoutStatus `json:"status"`
		ApprovalStatus    string       `json:"approval_status,omitempty"`
		ReservedAmount    string       `json:"reserved_amount"`
		CompletedAmount   string       `json:"completed_amount"`
		ReturnedAmount    string       `json:"returned_amount"`
		NextAction        *NextAction  `json:"next_action"`
		FailureCode       *string      `json:"failure_code"`
		FailureMessage    *string      `json:"failure_message"`
		Recipient         recipient    `json:"recipient"`
		CreatedAt         string       `json:"created_at"`
		UpdatedAt         string       `json:"updated_at"`
	}{
		Object: "payout_intent", ID: p.ID, Amount: FormatAmount(p.Amount), Currency: p.Currency,
		Country: p.Country, Environment: p.Environment, MerchantReference: p.MerchantReference,
		Status: p.Status, ReservedAmount: FormatAmount(p.ReservedAmount),
		CompletedAmount: FormatAmount(p.CompletedAmount), ReturnedAmount: FormatAmount(p.ReturnedAmount),
		FailureCode: nullString(p.FailureCode), FailureMessage: nullString(p.FailureMessage),
		Recipient: recipient{p.RecipientType, p.AccountLast4, p.BankCode, p.HolderName},
		CreatedAt: FormatTime(p.CreatedAt), UpdatedAt: FormatTime(p.UpdatedAt),
	}
	if p.ApprovalPending {
		out.ApprovalStatus = "pending"
	}
	return json.Marshal(out)
}

// UnmarshalJSON reads the projection MarshalJSON writes (for example a
// Response body), so Go callers get typed payouts back. Internal fields
// stay empty.
func (p *PayoutIntent) UnmarshalJSON(b []byte) error {
	var in struct {
		ID                string       `json:"id"`
		Amount            string       `json:"amount"`
		Currency          string       `json:"currency"`
		Country           string       `json:"country"`
		Environment       Environment  `json:"environment"`
		MerchantReference string       `json:"merchant_reference"`
		Status            PayoutStatus `json:"status"`
		ApprovalStatus    string       `json:"approval_status"`
		ReservedAmount    string       `json:"reserved_amount"`
		CompletedAmount   string       `json:"completed_amount"`
		ReturnedAmount    string       `json:"returned_amount"`
		FailureCode       *string      `json:"failure_code"`
		FailureMessage    *string      `json:"failure_message"`
		Recipient         struct {
			Type         string `json:"type"`
			AccountLast4 string `json:"account_last4"`
			BankCode     string `json:"bank_code"`
			HolderName   string `json:"holder_name"`
		} `json:"recipient"`
		CreatedAt time.Time `json:"created_at"`
		UpdatedAt time.Time `json:"updated_at"`
	}
	if err := json.Unmarshal(b, &in); err != nil {
		return err
	}
	amounts := make([]int64, 4)
	for i, s := range []string{in.Amount, in.ReservedAmount, in.CompletedAmount, in.ReturnedAmount} {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil || v < 0 {
			return fmt.Errorf("payout_intent: amount %q is not a non-negative integer", s)
		}
		amounts[i] = v
	}
	*p = PayoutIntent{
		ID: in.ID, Amount: amounts[0], Currency: in.Currency, Country: in.Country, Environment: in.Environment,
		MerchantReference: in.MerchantReference, Status: in.Status, ApprovalPending: in.ApprovalStatus == "pending",
		ReservedAmount: amounts[1], CompletedAmount: amounts[2], ReturnedAmount: amounts[3],
		RecipientType: in.Recipient.Type, AccountLast4: in.Recipient.AccountLast4, BankCode: in.Recipient.BankCode,
		HolderName: in.Recipient.HolderName, CreatedAt: in.CreatedAt.UTC(), UpdatedAt: in.UpdatedAt.UTC(),
	}
	if in.FailureCode != nil {
		p.FailureCode = *in.FailureCode
	}
	if in.FailureMessage != nil {
		p.FailureMessage = *in.FailureMessage
	}
	return nil
}
