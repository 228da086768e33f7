package httpadapter

import (
	"encoding/json"
	"reflect"
	"strconv"
	"time"

	"github.com/paykit/paykit"
)

// This file holds the contract's JSON projections of the Service's Go
// values: field names, decimal-string amounts, timestamps at millisecond
// precision, null for absent values. project picks the projection of a
// value; everything the API writes goes through it.

// project returns the JSON projection of v; values without one (maps,
// slices of strings) are returned as they are. now is the Service's time,
// read only for projections that depend on it (a webhook endpoint's
// delivery_state).
func project(v any, now func() time.Time) any {
	if rv := reflect.ValueOf(v); rv.Kind() == reflect.Struct {
		p := reflect.New(rv.Type()) // the cases below are pointers
		p.Elem().Set(rv)
		v = p.Interface()
	}
	switch v := v.(type) {
	case *paykit.PaymentIntent:
		return paymentIntentView(v)
	case *paykit.PayoutIntent:
		return payoutView(v)
	case *paykit.Checkout:
		return checkoutView(v)
	case *paykit.Refund:
		return refundView(v)
	case *paykit.Event:
		return eventView(v)
	case *paykit.Merchant:
		return merchantView(v)
	case *paykit.NewAPIKey:
		return newAPIKeyView(v)
	case *paykit.APIKey:
		return apiKeyView(v)
	case *paykit.NewWebhookSecret:
		return newWebhookSecretView(v, now())
	case *paykit.WebhookEndpoint:
		return webhookEndpointView(v, now())
	case *paykit.BalanceAdjustment:
		return balanceAdjustmentView(v)
	case *paykit.Page[paykit.PaymentIntent]:
		return pageView(v, paymentIntentView)
	case *paykit.Page[paykit.PayoutIntent]:
		return pageView(v, payoutView)
	case *paykit.Page[paykit.Checkout]:
		return pageView(v, checkoutView)
	case *paykit.Page[paykit.Refund]:
		return pageView(v, refundView)
	case *paykit.Page[paykit.Event]:
		return pageView(v, eventView)
	case *paykit.Page[paykit.Merchant]:
		return pageView(v, merchantView)
	case *paykit.Page[paykit.APIKey]:
		return pageView(v, apiKeyView)
	case *paykit.Page[paykit.AuditEvent]:
		return pageView(v, auditEventView)
	case *paykit.Page[paykit.Balance]:
		return pageView(v, balanceView)
	case *paykit.Page[paykit.PaymentMethod]:
		return pageView(v, paymentMethodView)
	case *paykit.Page[paykit.WebhookEndpoint]:
		at := now()
		return pageView(v, func(w *paykit.WebhookEndpoint) webhookEndpointJSON { return webhookEndpointView(w, at) })
	case *paykit.Page[paykit.WebhookAttempt]:
		return pageView(v, webhookAttemptView)
	case *paykit.Page[paykit.JobView]:
		return pageView(v, jobView)
	}
	return v
}

// listView is the contract's list envelope; next_cursor is null on the
// last page.
type listView struct {
	Object     string  `json:"object"`
	Data       []any   `json:"data"`
	HasMore    bool    `json:"has_more"`
	NextCursor *string `json:"next_cursor"`
}

func pageView[T any, V any](p *paykit.Page[T], view func(*T) V) listView {
	data := make([]any, len(p.Data))
	for i := range p.Data {
		data[i] = view(&p.Data[i])
	}
	return listView{"list", data, p.HasMore, nullString(p.NextCursor)}
}

// formatTime renders t in the contract's timestamp format.
func formatTime(t time.Time) string { return paykit.FormatTime(t) }

func formatTimePtr(t *time.Time) *string {
	if t == nil {
		return nil
	}
	s := formatTime(*t)
	return &s
}

func nullString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// amount renders minor units as the contract's amount string.
func amount(v int64) string { return strconv.FormatInt(v, 10) }

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
func nextActionView(n *paykit.NextAction) *nextActionJSON {
	if n == nil {
		return nil
	}
	out := &nextActionJSON{Type: n.Type, URL: n.URL, QRData: n.QRData, ImageURL: n.ImageURL, BankName: n.BankName,
		Account: n.Account, Holder: n.Holder, Reference: n.Reference, Currency: n.Currency, ExpiresAt: formatTime(n.ExpiresAt)}
	if n.Type == paykit.NextActionBankTransferInstructions {
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

func receiptView(r *paykit.Receipt) *receiptJSON {
	if r == nil {
		return nil
	}
	return &receiptJSON{r.Number, formatTime(r.PaidAt), amount(r.Amount), r.Currency, r.PaymentMethod}
}

type paymentIntentJSON struct {
	Object            string               `json:"object"`
	ID                string               `json:"id"`
	Status            paykit.PaymentStatus `json:"status"`
	Amount            string               `json:"amount"`
	CapturedAmount    string               `json:"captured_amount"`
	RefundedAmount    string               `json:"refunded_amount"`
	Currency          string               `json:"currency"`
	Country           string               `json:"country"`
	MerchantReference string               `json:"merchant_reference"`
	PaymentMethod     *string              `json:"payment_method"`
	Environment       paykit.Environment   `json:"environment"`
	NextAction        *nextActionJSON      `json:"next_action"`
	FailureCode       *string              `json:"failure_code"`
	Receipt           *receiptJSON         `json:"receipt"`
	ExpiresAt         string               `json:"expires_at"`
	CompletedAt       *string              `json:"completed_at"`
	CreatedAt         string               `json:"created_at"`
	UpdatedAt         string               `json:"updated_at"`
}

// paymentIntentView is the contract's payment_intent projection; Provider
// fields never appear in it.
func paymentIntentView(p *paykit.PaymentIntent) paymentIntentJSON {
	return paymentIntentJSON{
		"payment_intent", p.ID, p.Status, amount(p.Amount), amount(p.CapturedAmount()), amount(p.RefundedAmount),
		p.Currency, p.Country, p.MerchantReference, nullString(p.PaymentMethod), p.Environment,
		nextActionView(p.NextAction), nullString(p.FailureCode), receiptView(p.Receipt), formatTime(p.ExpiresAt),
		formatTimePtr(p.CompletedAt), formatTime(p.CreatedAt), formatTime(p.UpdatedAt),
	}
}

type refundJSON struct {
	Object            string              `json:"object"`
	ID                string              `json:"id"`
	PaymentIntent     string              `json:"payment_intent"`
	Amount            string              `json:"amount"`
	Currency          string              `json:"currency"`
	Status            paykit.RefundStatus `json:"status"`
	Reason            *string             `json:"reason"`
	MerchantReference string              `json:"merchant_reference"`
	Environment       paykit.Environment  `json:"environment"`
	FailureCode       *string             `json:"failure_code"`
	CreatedAt         string              `json:"created_at"`
	UpdatedAt         string              `json:"updated_at"`
	CompletedAt       *string             `json:"completed_at"`
}

// refundView is the contract's refund projection; the Provider's id and
// the dispatch state never appear in it.
func refundView(r *paykit.Refund) refundJSON {
	return refundJSON{
		"refund", r.ID, r.PaymentIntentID, amount(r.Amount), r.Currency, r.Status, nullString(r.Reason),
		r.MerchantReference, r.Environment, nullString(r.FailureCode), formatTime(r.CreatedAt), formatTime(r.UpdatedAt),
		formatTimePtr(r.CompletedAt),
	}
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
	Environment       paykit.Environment  `json:"environment"`
	MerchantReference string              `json:"merchant_reference"`
	Status            paykit.PayoutStatus `json:"status"`
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
func payoutView(p *paykit.PayoutIntent) payoutJSON {
	out := payoutJSON{
		Object: "payout_intent", ID: p.ID, Amount: amount(p.Amount), Currency: p.Currency,
		Country: p.Country, Environment: p.Environment, MerchantReference: p.MerchantReference,
		Status: p.Status, ReservedAmount: amount(p.ReservedAmount),
		CompletedAmount: amount(p.CompletedAmount), ReturnedAmount: amount(p.ReturnedAmount),
		FailureCode: nullString(p.FailureCode), FailureMessage: nullString(p.FailureMessage),
		Recipient: payoutRecipientJSON{p.RecipientType, p.AccountLast4, p.BankCode, p.HolderName},
		CreatedAt: formatTime(p.CreatedAt), UpdatedAt: formatTime(p.UpdatedAt),
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
	paykit.FailureProviderDeclined: "The payment was declined.",
	paykit.FailureProviderError:    "The payment provider could not process the payment.",
	paykit.FailureExpired:          "The payment was not completed in time.",
}

type checkoutJSON struct {
	Object            string                `json:"object"`
	ID                string                `json:"id"`
	Status            paykit.CheckoutStatus `json:"status"`
	Amount            string                `json:"amount"`
	Currency          string                `json:"currency"`
	Country           string                `json:"country"`
	MerchantReference string                `json:"merchant_reference"`
	PaymentIntentID   string                `json:"payment_intent_id"`
	PaymentStatus     paykit.PaymentStatus  `json:"payment_status"`
	PaymentMethod     *string               `json:"payment_method"`
	FailureCode       *string               `json:"failure_code"`
	FailureMessage    *string               `json:"failure_message"`
	CheckoutURL       string                `json:"checkout_url"`
	ReturnURL         *string               `json:"return_url"`
	Metadata          map[string]string     `json:"metadata"`
	ExpiresAt         string                `json:"expires_at"`
	CreatedAt         string                `json:"created_at"`
	UpdatedAt         string                `json:"updated_at"`
	ProcessingStaleAt *string               `json:"processing_stale_at"`
	ProviderStatus    *string               `json:"provider_status"`
}

// checkoutView is the contract's checkout projection, with the state of
// its linked payment intent.
func checkoutView(c *paykit.Checkout) checkoutJSON {
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
		ExpiresAt: formatTime(c.ExpiresAt), CreatedAt: formatTime(c.CreatedAt), UpdatedAt: formatTime(c.UpdatedAt),
		ProcessingStaleAt: formatTimePtr(c.ProcessingStaleAt), ProviderStatus: nullString(c.ProviderStatus),
	}
}

type eventJSON struct {
	ID          string             `json:"id"`
	Object      string             `json:"object"`
	Type        string             `json:"type"`
	Environment paykit.Environment `json:"environment"`
	CreatedAt   string             `json:"created_at"`
	Data        any                `json:"data"`
}

// eventView is the contract's event envelope; webhooks carry the same
// bytes. Its data is the resource as GET showed it right after the change;
// a payout's terminal event adds the merchant's cancellation reason.
func eventView(e *paykit.Event) eventJSON {
	var data any
	switch {
	case e.LegacyData != nil:
		data = json.RawMessage(e.LegacyData)
	case e.PaymentIntent != nil:
		data = paymentIntentView(e.PaymentIntent)
	case e.Checkout != nil:
		data = checkoutView(e.Checkout)
	case e.Refund != nil:
		data = refundView(e.Refund)
	case e.PayoutIntent != nil:
		po := e.PayoutIntent
		data = payoutView(po)
		if po.Status.Terminal() && po.CancelReason != "" {
			data = payoutWithReasonJSON{payoutView(po), po.CancelReason}
		}
	}
	return eventJSON{e.ID, "event", e.Type, e.Environment, formatTime(e.CreatedAt), data}
}

// eventBody is the JSON of an event: the GET /events/{id} body and the
// webhook body.
func eventBody(e *paykit.Event) ([]byte, error) { return json.Marshal(eventView(e)) }

type merchantJSON struct {
	Object    string `json:"object"`
	ID        string `json:"id"`
	Name      string `json:"name"`
	CreatedAt string `json:"created_at"`
}

func merchantView(m *paykit.Merchant) merchantJSON {
	return merchantJSON{"merchant", m.ID, m.Name, formatTime(m.CreatedAt)}
}

type apiKeyJSON struct {
	Object      string             `json:"object"`
	ID          string             `json:"id"`
	MerchantID  string             `json:"merchant_id"`
	Environment paykit.Environment `json:"environment"`
	PublicKey   string             `json:"public_key"`
	SecretLast4 string             `json:"secret_key_last4"`
	CreatedAt   string             `json:"created_at"`
	RevokedAt   *string            `json:"revoked_at"`
}

// apiKeyView renders a key without any secret.
func apiKeyView(k *paykit.APIKey) apiKeyJSON {
	return apiKeyJSON{"api_key", k.ID, k.MerchantID, k.Environment, k.PublicKey, k.SecretLast4, formatTime(k.CreatedAt), formatTimePtr(k.RevokedAt)}
}

type newAPIKeyJSON struct {
	Object      string             `json:"object"`
	ID          string             `json:"id"`
	MerchantID  string             `json:"merchant_id"`
	Environment paykit.Environment `json:"environment"`
	PublicKey   string             `json:"public_key"`
	SecretKey   string             `json:"secret_key"`
	CreatedAt   string             `json:"created_at"`
}

// newAPIKeyView is the one-time answer of key issuance, with the secret.
func newAPIKeyView(k *paykit.NewAPIKey) newAPIKeyJSON {
	return newAPIKeyJSON{"api_key", k.ID, k.MerchantID, k.Environment, k.PublicKey, k.SecretKey, formatTime(k.CreatedAt)}
}

type auditEventJSON struct {
	Object      string            `json:"object"`
	ID          string            `json:"id"`
	Actor       string            `json:"actor"`
	Action      string            `json:"action"`
	TargetType  string            `json:"target_type"`
	TargetID    string            `json:"target_id"`
	MerchantID  *string           `json:"merchant_id"`
	Environment *string           `json:"environment"`
	Details     map[string]string `json:"details"`
	CreatedAt   string            `json:"created_at"`
}

func auditEventView(a *paykit.AuditEvent) auditEventJSON {
	details := a.Details
	if details == nil {
		details = map[string]string{}
	}
	return auditEventJSON{"audit_event", a.ID, a.Actor, a.Action, a.TargetType, a.TargetID, nullString(a.MerchantID),
		nullString(string(a.Environment)), details, formatTime(a.CreatedAt)}
}

type balanceJSON struct {
	Object    string `json:"object"`
	Currency  string `json:"currency"`
	Available string `json:"available"`
	Reserved  string `json:"reserved"`
}

func balanceView(b *paykit.Balance) balanceJSON {
	return balanceJSON{"balance", b.Currency, amount(b.Available), amount(b.Reserved)}
}

type balanceAdjustmentJSON struct {
	Object      string             `json:"object"`
	ID          string             `json:"id"`
	MerchantID  string             `json:"merchant_id"`
	Environment paykit.Environment `json:"environment"`
	Currency    string             `json:"currency"`
	Amount      string             `json:"amount"`
	Reason      string             `json:"reason"`
	Balance     balanceJSON        `json:"balance"`
	CreatedAt   string             `json:"created_at"`
}

// balanceAdjustmentView renders the adjustment with its amount as a signed
// string of minor units and the balance after it.
func balanceAdjustmentView(a *paykit.BalanceAdjustment) balanceAdjustmentJSON {
	return balanceAdjustmentJSON{"balance_adjustment", a.ID, a.MerchantID, a.Environment, a.Currency,
		strconv.FormatInt(a.Amount, 10), a.Reason, balanceView(&a.Balance), formatTime(a.CreatedAt)}
}

type bankJSON struct {
	Code      string `json:"code"`
	Name      string `json:"name"`
	Available bool   `json:"available"`
}

type paymentMethodJSON struct {
	Object         string     `json:"object"`
	Method         string     `json:"payment_method"`
	NextActionType string     `json:"next_action_type"`
	Required       []string   `json:"required_customer_fields"`
	Banks          []bankJSON `json:"banks,omitempty"`
}

// paymentMethodView is the payment_method projection; Provider bank codes
// never appear.
func paymentMethodView(m *paykit.PaymentMethod) paymentMethodJSON {
	out := paymentMethodJSON{Object: "payment_method", Method: m.Method, NextActionType: m.NextActionType, Required: m.RequiredCustomerFields}
	if out.Required == nil {
		out.Required = []string{}
	}
	for _, b := range m.Banks {
		out.Banks = append(out.Banks, bankJSON{b.Code, b.Name, b.Available})
	}
	return out
}

type webhookEndpointJSON struct {
	webhookEndpointFields
	webhookDeliveryJSON
}

// webhookEndpointFields are the fields of an endpoint before its delivery
// state.
type webhookEndpointFields struct {
	Object         string             `json:"object"`
	ID             string             `json:"id"`
	MerchantID     string             `json:"merchant_id"`
	Environment    paykit.Environment `json:"environment"`
	URL            string             `json:"url"`
	Status         string             `json:"status"`
	DisabledReason *string            `json:"disabled_reason"`
	EnabledEvents  []string           `json:"enabled_events"`
	Description    *string            `json:"description"`
	CreatedAt      string             `json:"created_at"`
	UpdatedAt      string             `json:"updated_at"`
}

// webhookDeliveryJSON is an endpoint's delivery state: paused while its
// pause lasts, with the failures in a row that caused it.
type webhookDeliveryJSON struct {
	DeliveryState       string  `json:"delivery_state"`
	ConsecutiveFailures int     `json:"consecutive_failures"`
	PausedUntil         *string `json:"paused_until"`
	PauseReason         *string `json:"pause_reason"`
}

// Delivery states of a webhook endpoint.
const (
	deliveryActive = "active"
	deliveryPaused = "paused"
)

// deliveryState is whether w's deliveries wait on a pause at now.
func deliveryState(w *paykit.WebhookEndpoint, now time.Time) string {
	if w.Paused(now) {
		return deliveryPaused
	}
	return deliveryActive
}

func webhookEndpointFieldsOf(w *paykit.WebhookEndpoint) webhookEndpointFields {
	events := w.EnabledEvents
	if len(events) == 0 {
		events = []string{paykit.AllEvents}
	}
	return webhookEndpointFields{"webhook_endpoint", w.ID, w.MerchantID, w.Environment, w.URL, w.Status,
		nullString(w.DisabledReason), events, nullString(w.Description), formatTime(w.CreatedAt), formatTime(w.UpdatedAt)}
}

func webhookDeliveryView(w *paykit.WebhookEndpoint, now time.Time) webhookDeliveryJSON {
	return webhookDeliveryJSON{deliveryState(w, now), w.Failures, formatTimePtr(w.PausedUntil), nullString(w.PauseReason)}
}

// webhookEndpointView renders an endpoint without its secrets, with its
// delivery state at now.
func webhookEndpointView(w *paykit.WebhookEndpoint, now time.Time) webhookEndpointJSON {
	return webhookEndpointJSON{webhookEndpointFieldsOf(w), webhookDeliveryView(w, now)}
}

type newWebhookSecretJSON struct {
	webhookEndpointFields
	Secret string `json:"secret"`
	webhookDeliveryJSON
}

// newWebhookSecretView renders an endpoint with the secret just made for
// it, the only time it is shown.
func newWebhookSecretView(n *paykit.NewWebhookSecret, now time.Time) newWebhookSecretJSON {
	return newWebhookSecretJSON{webhookEndpointFieldsOf(n.Endpoint), n.Secret, webhookDeliveryView(n.Endpoint, now)}
}

type webhookAttemptJSON struct {
	Object     string  `json:"object"`
	ID         string  `json:"id"`
	EndpointID string  `json:"endpoint_id"`
	EventID    string  `json:"event_id"`
	Number     int     `json:"attempt"`
	StatusCode *int    `json:"status_code"`
	LatencyMS  int64   `json:"latency_ms"`
	Response   string  `json:"response"`
	Error      *string `json:"error"`
	Succeeded  bool    `json:"succeeded"`
	CreatedAt  string  `json:"created_at"`
}

func webhookAttemptView(a *paykit.WebhookAttempt) webhookAttemptJSON {
	var status *int
	if a.StatusCode != 0 {
		status = &a.StatusCode
	}
	return webhookAttemptJSON{"webhook_attempt", a.ID, a.EndpointID, a.EventID, a.Number, status, a.Latency.Milliseconds(),
		a.Response, nullString(a.Error), a.Succeeded, formatTime(a.CreatedAt)}
}

type jobJSON struct {
	Object      string          `json:"object"`
	ID          string          `json:"id"`
	Kind        string          `json:"kind"`
	State       paykit.JobState `json:"state"`
	MerchantID  *string         `json:"merchant_id"`
	Environment *string         `json:"environment"`
	TargetID    *string         `json:"target_id"`
	Attempts    int             `json:"attempts"`
	RunAt       string          `json:"run_at"`
	LeaseUntil  *string         `json:"lease_until"`
	LastError   *string         `json:"last_error"`
	CreatedAt   string          `json:"created_at"`
}

// jobView is the operator projection of a job; LastError was scrubbed by
// the Service.
func jobView(v *paykit.JobView) jobJSON {
	return jobJSON{"job", v.ID, v.Kind, v.State, nullString(v.Scope.MerchantID), nullString(string(v.Scope.Environment)),
		nullString(v.TargetID), v.Attempts, formatTime(v.RunAt), formatTimePtr(v.LeaseUntil),
		nullString(v.LastError), formatTime(v.CreatedAt)}
}

// Marshal returns the contract's JSON of a value the Service returns (a
// payment intent, checkout, payout intent, event, page of them, ...):
// the bytes the API answers with. A webhook endpoint's delivery_state is
// read at the real time; the API reads it on the Service's clock.
func Marshal(v any) ([]byte, error) { return json.Marshal(project(v, time.Now)) }

// AnswerStatus returns the HTTP status of an answer of kind k: 201 for
// created, 202 for accepted, 200 for done.
func AnswerStatus(k paykit.AnswerKind) int { return answerStatus[k] }
