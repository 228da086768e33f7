package sandbox

import "time"

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
