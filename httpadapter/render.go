package httpadapter

import (
	"encoding/json"
	"reflect"
	"strconv"
	"time"

	"github.com/paykit/paykit"
	jsonview "github.com/paykit/paykit/internal/view"
	"github.com/paykit/paykit/internal/wire"
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
	case *paykit.PaymentIntent, *paykit.PayoutIntent, *paykit.Checkout, *paykit.Refund, *paykit.Event,
		*paykit.Dispute, *paykit.BalanceTransaction:
		out, _ := paykit.Projection(v)
		return out
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
	case *paykit.ReconciliationBreak:
		return breakView(v)
	case *paykit.Page[paykit.ReconciliationBreak]:
		return pageView(v, breakView)
	case *paykit.Page[paykit.ReconciliationRun]:
		return pageView(v, runView)
	case *paykit.Page[paykit.PaymentIntent]:
		return pageView(v, projection[paykit.PaymentIntent])
	case *paykit.Page[paykit.PayoutIntent]:
		return pageView(v, projection[paykit.PayoutIntent])
	case *paykit.Page[paykit.Checkout]:
		return pageView(v, projection[paykit.Checkout])
	case *paykit.Page[paykit.Refund]:
		return pageView(v, projection[paykit.Refund])
	case *paykit.Page[paykit.Dispute]:
		return pageView(v, projection[paykit.Dispute])
	case *paykit.Page[paykit.BalanceTransaction]:
		return pageView(v, projection[paykit.BalanceTransaction])
	case *paykit.Page[paykit.Event]:
		return pageView(v, projection[paykit.Event])
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

// projection is paykit.Projection of a resource the root package renders.
func projection[T any](v *T) any {
	out, _ := paykit.Projection(v)
	return out
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
func formatTime(t time.Time) string { return wire.FormatTime(t) }

var (
	nullString = jsonview.NullString
	amount     = jsonview.Amount
)

func formatTimePtr(t *time.Time) *string { return jsonview.Time(t, wire.TimeLayout) }

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
	Pending   string `json:"pending"`
	Reserved  string `json:"reserved"`
}

func balanceView(b *paykit.Balance) balanceJSON {
	return balanceJSON{"balance", b.Currency, amount(b.Available), amount(b.Pending), amount(b.Reserved)}
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
