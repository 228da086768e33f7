package paykit

import (
	"encoding/json"
	"time"

	"github.com/paykit/paykit/internal/view"
	"github.com/paykit/paykit/internal/wire"
)

// The contract's JSON projections of the resources that events carry:
// field names, decimal-string amounts, timestamps at millisecond
// precision, null for absent values. The merchant API and webhooks render
// them alike.

var (
	nullString = view.NullString
	amount     = view.Amount
)

func formatTimePtr(t *time.Time) *string { return view.Time(t, wire.TimeLayout) }

type nextActionJSON struct {
	Type      string `json:"type"`
	URL       string `json:"url,omitempty"`
	QRData    string `json:"qr_data,omitempty"`
	ImageURL  string `json:"image_url,omitempty"`
	BankName  string `json:"bank_name,omitempty"`
	Account   string `json:"account_number,omitempty"`
	Holder    string `json:"account_holder,omitempty"`
	Reference string `json:"reference,omitempty"`
	Currency  string `json:"currency,omitempty"`
	Amount    string `json:"amount,omitempty"`
	ExpiresAt string `json:"expires_at"`
}

// nextActionView renders only the fields of the action's type.
func nextActionView(n *NextAction) *nextActionJSON {
	if n == nil {
		return nil
	}
	out := &nextActionJSON{Type: n.Type, URL: n.URL, QRData: n.QRData, ImageURL: n.ImageURL, BankName: n.BankName,
		Account: n.Account, Holder: n.Holder, Reference: n.Reference, Currency: n.Currency, ExpiresAt: wire.FormatTime(n.ExpiresAt)}
	if n.Type == NextActionBankTransferInstructions {
		out.Amount = amount(n.Amount)
	}
	return out
}

type receiptJSON struct {
	Number        string `json:"number"`
	PaidAt        string `json:"paid_at"`
	Amount        string `json:"amount"`
	Currency      string `json:"currency"`
	PaymentMethod string `json:"payment_method"`
}

func receiptView(r *Receipt) *receiptJSON {
	if r == nil {
		return nil
	}
	return &receiptJSON{r.Number, wire.FormatTime(r.PaidAt), amount(r.Amount), r.Currency, r.PaymentMethod}
}

type paymentIntentJSON struct {
	Object            string          `json:"object"`
	ID                string          `json:"id"`
	Status            PaymentStatus   `json:"status"`
	Amount            string          `json:"amount"`
	CapturedAmount    string          `json:"captured_amount"`
	RefundedAmount    string          `json:"refunded_amount"`
	DisputedAmount    string          `json:"disputed_amount"`
	Currency          string          `json:"currency"`
	Country           string          `json:"country"`
	MerchantReference string          `json:"merchant_reference"`
	PaymentMethod     *string         `json:"payment_method"`
	Environment       Environment     `json:"environment"`
	NextAction        *nextActionJSON `json:"next_action"`
	FailureCode       *string         `json:"failure_code"`
	Receipt           *receiptJSON    `json:"receipt"`
	ExpiresAt         string          `json:"expires_at"`
	CompletedAt       *string         `json:"completed_at"`
	CreatedAt         string          `json:"created_at"`
	UpdatedAt         string          `json:"updated_at"`
}

// paymentIntentView is the contract's payment_intent projection; Provider
// fields never appear in it.
func paymentIntentView(p *PaymentIntent) paymentIntentJSON {
	return paymentIntentJSON{
		"payment_intent", p.ID, p.Status, amount(p.Amount), amount(p.CapturedAmount()), amount(p.RefundedAmount),
		amount(p.DisputedAmount), p.Currency, p.Country, p.MerchantReference, nullString(p.PaymentMethod), p.Environment,
		nextActionView(p.NextAction), nullString(p.FailureCode), receiptView(p.Receipt), wire.FormatTime(p.ExpiresAt),
		formatTimePtr(p.CompletedAt), wire.FormatTime(p.CreatedAt), wire.FormatTime(p.UpdatedAt),
	}
}

type refundJSON struct {
	Object            string       `json:"object"`
	ID                string       `json:"id"`
	PaymentIntent     string       `json:"payment_intent"`
	Amount            string       `json:"amount"`
	Currency          string       `json:"currency"`
	Status            RefundStatus `json:"status"`
	Reason            *string      `json:"reason"`
	MerchantReference string       `json:"merchant_reference"`
	Environment       Environment  `json:"environment"`
	FailureCode       *string      `json:"failure_code"`
	CreatedAt         string       `json:"created_at"`
	UpdatedAt         string       `json:"updated_at"`
	CompletedAt       *string      `json:"completed_at"`
}

// refundView is the contract's refund projection; the Provider's id and
// the dispatch state never appear in it.
func refundView(r *Refund) refundJSON {
	return refundJSON{
		"refund", r.ID, r.PaymentIntentID, amount(r.Amount), r.Currency, r.Status, nullString(r.Reason),
		r.MerchantReference, r.Environment, nullString(r.FailureCode), wire.FormatTime(r.CreatedAt), wire.FormatTime(r.UpdatedAt),
		formatTimePtr(r.CompletedAt),
	}
}

type disputeEvidenceJSON struct {
	Text string `json:"text"`
}

type disputeJSON struct {
	Object        string               `json:"object"`
	ID            string               `json:"id"`
	PaymentIntent string               `json:"payment_intent"`
	Amount        string               `json:"amount"`
	Currency      string               `json:"currency"`
	Reason        DisputeReason        `json:"reason"`
	Status        DisputeStatus        `json:"status"`
	Evidence      *disputeEvidenceJSON `json:"evidence"`
	EvidenceDueBy string               `json:"evidence_due_by"`
	Environment   Environment          `json:"environment"`
	CreatedAt     string               `json:"created_at"`
	UpdatedAt     string               `json:"updated_at"`
	ClosedAt      *string              `json:"closed_at"`
}

// disputeView is the contract's dispute projection; the Provider's id and
// fee never appear in it (the fee is in its balance transaction).
func disputeView(d *Dispute) disputeJSON {
	var ev *disputeEvidenceJSON
	if d.Evidence != "" {
		ev = &disputeEvidenceJSON{d.Evidence}
	}
	return disputeJSON{"dispute", d.ID, d.PaymentIntentID, amount(d.Amount), d.Currency, d.Reason, d.Status, ev,
		wire.FormatTime(d.EvidenceDueBy), d.Environment, wire.FormatTime(d.CreatedAt), wire.FormatTime(d.UpdatedAt),
		formatTimePtr(d.ClosedAt)}
}

type balanceTransactionJSON struct {
	Object      string                   `json:"object"`
	ID          string                   `json:"id"`
	Type        BalanceTransactionType   `json:"type"`
	Source      string                   `json:"source"`
	Amount      string                   `json:"amount"`
	Fee         string                   `json:"fee"`
	Net         string                   `json:"net"`
	Currency    string                   `json:"currency"`
	Status      BalanceTransactionStatus `json:"status"`
	AvailableOn string                   `json:"available_on"`
	Environment Environment              `json:"environment"`
	CreatedAt   string                   `json:"created_at"`
}

// balanceTransactionView is the contract's balance_transaction projection.
func balanceTransactionView(b *BalanceTransaction) balanceTransactionJSON {
	return balanceTransactionJSON{"balance_transaction", b.ID, b.Type, b.Source, amount(b.Amount), amount(b.Fee), amount(b.Net),
		b.Currency, b.Status, wire.FormatTime(b.AvailableOn), b.Environment, wire.FormatTime(b.CreatedAt)}
}

type payoutRecipientJSON struct {
	Type         string `json:"type"`
	AccountLast4 string `json:"account_last4"`
	BankCode     string `json:"bank_code"`
	HolderName   string `json:"holder_name"`
}

type payoutJSON struct {
	Object            string              `json:"object"`
	ID                string              `json:"id"`
	Amount            string              `json:"amount"`
	Currency          string              `json:"currency"`
	Country           string              `json:"country"`
	Environment       Environment         `json:"environment"`
	MerchantReference string              `json:"merchant_reference"`
	Status            PayoutStatus        `json:"status"`
	ApprovalStatus    string              `json:"approval_status,omitempty"`
	ReservedAmount    string              `json:"reserved_amount"`
	CompletedAmount   string              `json:"completed_amount"`
	ReturnedAmount    string              `json:"returned_amount"`
	NextAction        *nextActionJSON     `json:"next_action"`
	FailureCode       *string             `json:"failure_code"`
	FailureMessage    *string             `json:"failure_message"`
	Recipient         payoutRecipientJSON `json:"recipient"`
	CreatedAt         string              `json:"created_at"`
	UpdatedAt         string              `json:"updated_at"`
}

// payoutView is the contract's payout_intent projection: the recipient's
// account shows its last four digits only.
func payoutView(p *PayoutIntent) payoutJSON {
	out := payoutJSON{
		Object: "payout_intent", ID: p.ID, Amount: amount(p.Amount), Currency: p.Currency,
		Country: p.Country, Environment: p.Environment, MerchantReference: p.MerchantReference,
		Status: p.Status, ReservedAmount: amount(p.ReservedAmount),
		CompletedAmount: amount(p.CompletedAmount), ReturnedAmount: amount(p.ReturnedAmount),
		FailureCode: nullString(p.FailureCode), FailureMessage: nullString(p.FailureMessage),
		Recipient: payoutRecipientJSON{p.RecipientType, p.AccountLast4, p.BankCode, p.HolderName},
		CreatedAt: wire.FormatTime(p.CreatedAt), UpdatedAt: wire.FormatTime(p.UpdatedAt),
	}
	if p.ApprovalPending {
		out.ApprovalStatus = "pending"
	}
	return out
}

// payoutWithReasonJSON is a payout's projection with the merchant's
// cancellation reason: the data of a payout's terminal event.
type payoutWithReasonJSON struct {
	payoutJSON
	Reason string `json:"reason"`
}

// checkoutFailureMessages explain failure codes to merchants.
var checkoutFailureMessages = map[string]string{
	FailureProviderDeclined: "The payment was declined.",
	FailureProviderError:    "The payment provider could not process the payment.",
	FailureExpired:          "The payment was not completed in time.",
}

type checkoutJSON struct {
	Object            string            `json:"object"`
	ID                string            `json:"id"`
	Status            CheckoutStatus    `json:"status"`
	Amount            string            `json:"amount"`
	Currency          string            `json:"currency"`
	Country           string            `json:"country"`
	MerchantReference string            `json:"merchant_reference"`
	PaymentIntentID   string            `json:"payment_intent_id"`
	PaymentStatus     PaymentStatus     `json:"payment_status"`
	PaymentMethod     *string           `json:"payment_method"`
	FailureCode       *string           `json:"failure_code"`
	FailureMessage    *string           `json:"failure_message"`
	CheckoutURL       string            `json:"checkout_url"`
	ReturnURL         *string           `json:"return_url"`
	Metadata          map[string]string `json:"metadata"`
	ExpiresAt         string            `json:"expires_at"`
	CreatedAt         string            `json:"created_at"`
	UpdatedAt         string            `json:"updated_at"`
	ProcessingStaleAt *string           `json:"processing_stale_at"`
	ProviderStatus    *string           `json:"provider_status"`
}

// checkoutView is the contract's checkout projection, with the state of
// its linked payment intent.
func checkoutView(c *Checkout) checkoutJSON {
	method := c.ChosenMethod
	if method == "" {
		method = c.PaymentMethod
	}
	var msg *string
	if c.FailureCode != "" {
		m, ok := checkoutFailureMessages[c.FailureCode]
		if !ok {
			m = "The payment failed."
		}
		msg = &m
	}
	var meta map[string]string
	if len(c.Metadata) > 0 {
		meta = c.Metadata
	}
	return checkoutJSON{
		Object: "checkout", ID: c.ID, Status: c.Status, Amount: amount(c.Amount), Currency: c.Currency,
		Country: c.Country, MerchantReference: c.MerchantReference, PaymentIntentID: c.PaymentIntentID,
		PaymentStatus: c.PaymentStatus, PaymentMethod: nullString(method), FailureCode: nullString(c.FailureCode),
		FailureMessage: msg, CheckoutURL: c.URL, ReturnURL: nullString(c.ReturnURL), Metadata: meta,
		ExpiresAt: wire.FormatTime(c.ExpiresAt), CreatedAt: wire.FormatTime(c.CreatedAt), UpdatedAt: wire.FormatTime(c.UpdatedAt),
		ProcessingStaleAt: formatTimePtr(c.ProcessingStaleAt), ProviderStatus: nullString(c.ProviderStatus),
	}
}

type eventJSON struct {
	ID          string      `json:"id"`
	Object      string      `json:"object"`
	Type        string      `json:"type"`
	Environment Environment `json:"environment"`
	CreatedAt   string      `json:"created_at"`
	Data        any         `json:"data"`
}

// eventView is the contract's event envelope; webhooks carry the same
// bytes. Its data is the resource as GET showed it right after the change;
// a payout's terminal event adds the merchant's cancellation reason.
func eventView(e *Event) eventJSON {
	var data any
	if e.Resource != nil {
		data = e.Resource.eventData()
	}
	return eventJSON{e.ID, "event", e.Type, e.Environment, wire.FormatTime(e.CreatedAt), data}
}

// EventBody is the JSON of an event: the GET /events/{id} body and the
// webhook body.
func EventBody(e *Event) ([]byte, error) { return json.Marshal(eventView(e)) }

// Projection returns the contract's JSON projection of a *PaymentIntent,
// *PayoutIntent, *Checkout, *Refund, *Dispute, *BalanceTransaction or
// *Event (a value json.Marshal
// renders as the merchant API answers it), and false for any other value.
func Projection(v any) (any, bool) {
	switch v := v.(type) {
	case *PaymentIntent:
		return paymentIntentView(v), true
	case *PayoutIntent:
		return payoutView(v), true
	case *Checkout:
		return checkoutView(v), true
	case *Refund:
		return refundView(v), true
	case *Dispute:
		return disputeView(v), true
	case *BalanceTransaction:
		return balanceTransactionView(v), true
	case *Event:
		return eventView(v), true
	}
	return nil, false
}
