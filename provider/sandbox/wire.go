package sandbox

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"time"
)

// The PSP's JSON API, in its own words. The PSP writes these and the
// adapter reads them; a real adapter would declare its Provider's shapes
// the same way, beside the code that maps them.

// paymentCreate is the body of POST /api/payments.
type paymentCreate struct {
	AmountMinor int64             `json:"amount_minor"`
	Ccy         string            `json:"ccy"`
	Country     string            `json:"country"`
	Channel     string            `json:"channel"`
	Bank        string            `json:"bank,omitempty"` // local FPX bank id
	Payer       map[string]string `json:"payer,omitempty"`
	ReturnURL   string            `json:"return_url,omitempty"`
	ExpiresAt   *time.Time        `json:"expires_at,omitempty"`
	// Merchant is the sub-merchant the payment is for: the PSP settles
	// each merchant's payments in batches of their own.
	Merchant string `json:"merchant,omitempty"`
}

// fingerprint identifies the request among those sent under its key.
func (in *paymentCreate) fingerprint() string {
	var buf [256]byte
	w := newFP(buf[:])
	w.int(in.AmountMinor)
	w.str(in.Ccy)
	w.str(in.Country)
	w.str(in.Channel)
	w.str(in.Bank)
	w.strs(in.Payer)
	w.str(in.ReturnURL)
	w.time(in.ExpiresAt)
	if in.Merchant != "" { // so that a request without one keeps its fingerprint
		w.str(in.Merchant)
	}
	return w.sum()
}

// paymentView is the PSP's answer about a payment attempt.
type paymentView struct {
	ID                string           `json:"id"`
	Key               string           `json:"idempotency_key"`
	State             string           `json:"state"`
	AmountMinor       int64            `json:"amount_minor"`
	Ccy               string           `json:"ccy"`
	Country           string           `json:"country"`
	Channel           string           `json:"channel"`
	Bank              string           `json:"bank,omitempty"`
	ErrorCode         string           `json:"error_code,omitempty"`
	ErrorMessage      string           `json:"error_message,omitempty"`
	PayerAction       *payerActionView `json:"payer_action,omitempty"` // while PAYER_ACTION
	CreatedAt         time.Time        `json:"created_at"`
	UpdatedAt         time.Time        `json:"updated_at"`
	ExpiresAt         time.Time        `json:"expires_at"`
	CancelRequestedAt *time.Time       `json:"cancel_requested_at,omitempty"`
	// FeeMinor and AvailableOn, once SUCCESS: the PSP's fee, and when it
	// pays out the net (the settlement interval's boundary after the
	// success, or when a settle-now settled it).
	FeeMinor    int64     `json:"fee_minor,omitempty"`
	AvailableOn time.Time `json:"available_on,omitzero"`
	Merchant    string    `json:"merchant,omitempty"`
}

// payerActionView says what the payer must do.
type payerActionView struct {
	Kind     string  `json:"kind"`                // REDIRECT, QR or VA
	URL      string  `json:"url,omitempty"`       // REDIRECT: the payer page
	QRString string  `json:"qr_string,omitempty"` // QR: EMVCo payload
	VA       *vaView `json:"va,omitempty"`        // VA: where to transfer to
}

// vaView is a virtual account to transfer into.
type vaView struct {
	BankName  string `json:"bank_name"`
	Number    string `json:"number"`
	Holder    string `json:"holder"`
	Reference string `json:"reference"`
}

// payoutCreate is the body of POST /api/payouts.
type payoutCreate struct {
	AmountMinor       int64  `json:"amount_minor"`
	Ccy               string `json:"ccy"`
	Country           string `json:"country"`
	Bank              string `json:"bank"` // local bank code
	BeneficiaryAcct   string `json:"beneficiary_account"`
	BeneficiaryName   string `json:"beneficiary_name"`
	BeneficiaryNameTH string `json:"beneficiary_name_th,omitempty"`
}

// fingerprint identifies the request among those sent under its key.
func (in *payoutCreate) fingerprint() string {
	var buf [256]byte
	w := newFP(buf[:])
	w.int(in.AmountMinor)
	w.str(in.Ccy)
	w.str(in.Country)
	w.str(in.Bank)
	w.str(in.BeneficiaryAcct)
	w.str(in.BeneficiaryName)
	w.str(in.BeneficiaryNameTH)
	return w.sum()
}

// transferView is the PSP's answer about a transfer. It never carries the
// full account number.
type transferView struct {
	ID                string     `json:"id"`
	Key               string     `json:"idempotency_key"`
	State             string     `json:"state"`
	AmountMinor       int64      `json:"amount_minor"`
	Ccy               string     `json:"ccy"`
	Country           string     `json:"country"`
	Bank              string     `json:"bank"`
	AccountLast4      string     `json:"account_last4"`
	ErrorCode         string     `json:"error_code,omitempty"`
	ErrorMessage      string     `json:"error_message,omitempty"`
	CreatedAt         time.Time  `json:"created_at"`
	UpdatedAt         time.Time  `json:"updated_at"`
	CancelRequestedAt *time.Time `json:"cancel_requested_at,omitempty"`
}

// refundCreate is the body of POST /api/refunds. It names the payment by
// its idempotency key or its id (both: they must agree).
type refundCreate struct {
	PaymentKey  string `json:"payment_key,omitempty"`
	PaymentID   string `json:"payment_id,omitempty"`
	AmountMinor int64  `json:"amount_minor"`
	Ccy         string `json:"ccy"`
}

// fingerprint identifies the request among those sent under its key.
func (in *refundCreate) fingerprint() string {
	var buf [256]byte
	w := newFP(buf[:])
	w.str(in.PaymentKey)
	w.str(in.PaymentID)
	w.int(in.AmountMinor)
	w.str(in.Ccy)
	return w.sum()
}

// refundView is the PSP's answer about a refund.
type refundView struct {
	ID           string    `json:"id"`
	Key          string    `json:"idempotency_key"`
	State        string    `json:"state"`
	PaymentKey   string    `json:"payment_key"`
	PaymentID    string    `json:"payment_id"`
	AmountMinor  int64     `json:"amount_minor"`
	Ccy          string    `json:"ccy"`
	ErrorCode    string    `json:"error_code,omitempty"`
	ErrorMessage string    `json:"error_message,omitempty"`
	CreatedAt    time.Time `json:"created_at"`
	UpdatedAt    time.Time `json:"updated_at"`
}

// errorView is the body of every PSP error answer.
type errorView struct {
	Code    string `json:"error_code"`
	Message string `json:"error_message"`
}

// disputeCreate is the body of POST /api/disputes: the payer's bank
// disputes a SUCCESS payment, named by its idempotency key or its id (both:
// they must agree).
type disputeCreate struct {
	PaymentKey string `json:"payment_key,omitempty"`
	PaymentID  string `json:"payment_id,omitempty"`
	// AmountMinor is the disputed amount; 0 disputes what the payment's
	// refunds and disputes left of it.
	AmountMinor int64  `json:"amount_minor,omitempty"`
	Reason      string `json:"reason,omitempty"` // a local reason; default GENERAL
}

// evidenceSubmit is the body of POST /api/disputes/{id}/evidence.
type evidenceSubmit struct {
	Text   string `json:"text"`
	Submit bool   `json:"submit,omitempty"` // send it to the bank: UNDER_REVIEW
}

// disputeView is the PSP's answer about a dispute.
type disputeView struct {
	ID                  string     `json:"id"`
	State               string     `json:"state"`
	PaymentKey          string     `json:"payment_key"`
	PaymentID           string     `json:"payment_id"`
	Merchant            string     `json:"merchant,omitempty"`
	AmountMinor         int64      `json:"amount_minor"`
	Ccy                 string     `json:"ccy"`
	FeeMinor            int64      `json:"fee_minor"`
	Reason              string     `json:"reason"`
	EvidenceDueBy       time.Time  `json:"evidence_due_by"`
	EvidenceSubmittedAt *time.Time `json:"evidence_submitted_at,omitempty"`
	CreatedAt           time.Time  `json:"created_at"`
	UpdatedAt           time.Time  `json:"updated_at"`
	ClosedAt            *time.Time `json:"closed_at,omitempty"`
}

// lineView is one line of a settlement batch: a payment, refund, dispute
// or dispute reversal, with its signed amount and the PSP's fee for it.
type lineView struct {
	Type        string `json:"type"`
	Reference   string `json:"reference"`                 // the PSP's id of the payment, refund or dispute
	Key         string `json:"idempotency_key,omitempty"` // of a payment or refund
	AmountMinor int64  `json:"amount_minor"`
	FeeMinor    int64  `json:"fee_minor"`
	Ccy         string `json:"ccy"`
}

// batchView is a settlement batch: what the PSP paid a merchant in one
// currency at SettledAt, line by line, with its totals: the sums of the
// lines' amounts (gross) and fees, and what it paid (net = gross - fee).
type batchView struct {
	ID         string     `json:"id"`
	Merchant   string     `json:"merchant"`
	Ccy        string     `json:"ccy"`
	SettledAt  time.Time  `json:"settled_at"`
	Lines      []lineView `json:"lines"`
	GrossMinor int64      `json:"gross_minor"`
	FeeMinor   int64      `json:"fee_minor"`
	NetMinor   int64      `json:"net_minor"`
}

// batchListView is the answer of GET /api/settlements and of a settle-now.
type batchListView struct {
	Data    []batchView `json:"data"`
	HasMore bool        `json:"has_more"`
}

// settlementQuery is the query of GET /api/settlements.
type settlementQuery struct {
	After string // the id of the last batch already read; "" from the first
	Limit int    // 1 to maxBatchPage; 0: defaultBatchPage
}

// query is q as URL parameters.
func (q settlementQuery) query() url.Values {
	v := url.Values{}
	if q.After != "" {
		v.Set("after", q.After)
	}
	if q.Limit != 0 {
		v.Set("limit", strconv.Itoa(q.Limit))
	}
	return v
}

// fromQuery reads q from URL parameters.
func (q *settlementQuery) fromQuery(v url.Values) error {
	for name := range v {
		if name != "after" && name != "limit" {
			return fmt.Errorf("unknown parameter %q", name)
		}
	}
	q.After = v.Get("after")
	if s := v.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return errors.New("limit must be 1 to 100")
		}
		q.Limit = n
	}
	return nil
}
