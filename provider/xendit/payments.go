package xendit

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/paykit/paykit"
)

// paymentRequest is the part of a Payments API v3 payment request the
// adapter reads.
type paymentRequest struct {
	ID                string            `json:"payment_request_id"`
	ReferenceID       string            `json:"reference_id"`
	LatestPaymentID   string            `json:"latest_payment_id"`
	Country           string            `json:"country"`
	Currency          string            `json:"currency"`
	RequestAmount     amount            `json:"request_amount"`
	ChannelCode       string            `json:"channel_code"`
	Status            string            `json:"status"`
	FailureCode       string            `json:"failure_code"`
	Actions           []action          `json:"actions"`
	ChannelProperties map[string]any    `json:"channel_properties"`
	Metadata          map[string]string `json:"metadata"`
	Created           string            `json:"created"`
}

// action is one entry of a payment request's actions.
type action struct {
	Type       string `json:"type"`
	Descriptor string `json:"descriptor"`
	Value      string `json:"value"`
}

const paymentRequestsPath = "/v3/payment_requests"

// CreatePayment creates a payment request (POST /v3/payment_requests,
// type PAY, reference_id and metadata paykit_key = Key). It first lists
// payment requests under the Key, so that a retry never charges twice.
func (p *Provider) CreatePayment(ctx context.Context, req paykit.PaymentRequest) paykit.Result {
	ctx, cancel := p.withTimeout(ctx)
	defer cancel()
	ch, ok := channelFor(req.Method, req.Country)
	if !ok || !slices.Contains(p.methods, req.Method) {
		return paykit.Result{Outcome: paykit.OutcomeRefused, Detail: fmt.Sprintf("xendit: method %s in %s is not served", req.Method, req.Country)}
	}
	if req.Currency != ch.Currency {
		return paykit.Result{Outcome: paykit.OutcomeRefused, Detail: fmt.Sprintf("xendit: %s in %s is paid in %s, not %s", req.Method, req.Country, ch.Currency, req.Currency)}
	}
	code := ch.Code
	if req.Method == "FPX" {
		code = req.Options["bank"]
		if code == "" {
			return paykit.Result{Outcome: paykit.OutcomeRefused, Detail: "xendit: FPX needs the route's bank (channel code)"}
		}
	}
	value, err := Decimal(req.Amount, req.Currency)
	if err != nil {
		return paykit.Result{Outcome: paykit.OutcomeRefused, Detail: err.Error()}
	}
	if found := p.existing(ctx, paymentRequestsPath, req.Key, true); found != nil {
		return p.paymentResult(ctx, req.Key, found)
	}
	props := map[string]any{}
	if req.ReturnURL != "" && ch.NextAction == paykit.NextActionRedirectToURL {
		props["success_return_url"], props["failure_return_url"], props["cancel_return_url"] = req.ReturnURL, req.ReturnURL, req.ReturnURL
	}
	if ch.NextAction != paykit.NextActionRedirectToURL && !req.ExpiresAt.IsZero() {
		props["expires_at"] = req.ExpiresAt.UTC().Format(time.RFC3339)
	}
	if ch.NextAction == paykit.NextActionDisplayQRCode {
		props["qr_string_type"] = "DYNAMIC"
	}
	if ch.NextAction == paykit.NextActionBankTransferInstructions && p.displayName != "" {
		props["display_name"] = p.displayName
	}
	body := map[string]any{
		"reference_id": req.Key, "type": "PAY", "country": req.Country, "currency": req.Currency,
		"request_amount": value, "capture_method": "AUTOMATIC", "channel_code": code,
		"channel_properties": props, "metadata": map[string]string{"paykit_key": req.Key},
	}
	r := p.do(ctx, request{method: http.MethodPost, path: paymentRequestsPath, body: body, idem: req.Key, version: true})
	switch {
	case r.fault != nil:
		return *r.fault
	case r.err != nil && r.refusedCreate():
		return paykit.Result{Outcome: paykit.OutcomeRefused, Detail: r.errorDetail()}
	case r.err != nil:
		return paykit.Result{Outcome: paykit.OutcomeUnknown, Detail: r.errorDetail()}
	}
	return p.paymentResult(ctx, req.Key, r.body)
}

// existing looks, before a create, for an object under key at path (a
// list by reference_id), so that a retry never creates twice. The
// lookup gets half the call's time; when it is inconclusive, the create
// goes ahead (under its Idempotency-key where Xendit honours one).
func (p *Provider) existing(ctx context.Context, path, key string, version bool) json.RawMessage {
	lctx, cancel := context.WithTimeout(ctx, p.timeout/2)
	defer cancel()
	found, end := p.byReference(lctx, path, key, version)
	if end != nil || len(found) == 0 {
		return nil
	}
	return oldest(found)
}

// oldest is the first made of the listed objects (by created).
func oldest(found []json.RawMessage) json.RawMessage {
	best, at := found[0], ""
	for _, raw := range found {
		var m struct {
			Created string `json:"created"`
		}
		_ = json.Unmarshal(raw, &m)
		if at == "" || (m.Created != "" && m.Created < at) {
			best, at = raw, m.Created
		}
	}
	return best
}

// InquirePayment reads the payment request: by id
// (GET /v3/payment_requests/{id}) with a Reference, otherwise listed by
// reference_id.
func (p *Provider) InquirePayment(ctx context.Context, ref paykit.AttemptRef) paykit.Result {
	ctx, cancel := p.withTimeout(ctx)
	defer cancel()
	raw, end := p.findPayment(ctx, ref)
	if end != nil {
		return *end
	}
	return p.paymentResult(ctx, ref.Key, raw)
}

// findPayment reads the payment request of ref.
func (p *Provider) findPayment(ctx context.Context, ref paykit.AttemptRef) (json.RawMessage, *paykit.Result) {
	return p.find(ctx, paymentRequestsPath, ref, "payment request", true)
}

// CancelPayment cancels a payment request still waiting for the payer
// (POST /v3/payment_requests/{id}/cancel) and answers its state
// afterwards.
func (p *Provider) CancelPayment(ctx context.Context, ref paykit.AttemptRef) paykit.Result {
	ctx, cancel := p.withTimeout(ctx)
	defer cancel()
	id := ref.Reference
	if id == "" {
		raw, end := p.findPayment(ctx, ref)
		if end != nil {
			return *end
		}
		var pr paymentRequest
		if err := json.Unmarshal(raw, &pr); err != nil || pr.ID == "" {
			return paykit.Result{Outcome: paykit.OutcomeUnknown, Detail: "xendit: the listed payment request is unreadable"}
		}
		if !waiting(pr.Status) {
			return p.paymentResult(ctx, ref.Key, raw)
		}
		id = pr.ID
	}
	r := p.do(ctx, request{method: http.MethodPost, path: paymentRequestsPath + "/" + url.PathEscape(id) + "/cancel", version: true})
	switch {
	case r.fault != nil:
		return *r.fault
	case r.notFound():
		return r.errorResult()
	case r.err != nil:
		// Not cancellable (already final, say): its state is the answer.
		res := p.InquirePayment(ctx, paykit.AttemptRef{Key: ref.Key, Reference: id})
		res.Detail = r.errorDetail() + "; " + res.Detail
		return res
	}
	return p.paymentResult(ctx, ref.Key, r.body)
}

// waiting reports whether a payment request status still waits for the
// payer.
func waiting(status string) bool {
	return status == "REQUIRES_ACTION" || status == "ACCEPTING_PAYMENTS"
}

// paymentResult maps a payment request to a Result. key, if set, is the
// attempt's Key: a request under another reference_id is no answer about
// it.
func (p *Provider) paymentResult(ctx context.Context, key string, raw []byte) paykit.Result {
	var pr paymentRequest
	if err := json.Unmarshal(raw, &pr); err != nil || pr.ID == "" {
		return paykit.Result{Outcome: paykit.OutcomeUnknown, Detail: "xendit: the answer is not a payment request"}
	}
	if key != "" && pr.ReferenceID != key {
		return paykit.Result{Outcome: paykit.OutcomeUnknown, Detail: fmt.Sprintf("xendit: payment request %s has reference_id %q, not %q", pr.ID, pr.ReferenceID, key)}
	}
	res := paykit.Result{Reference: pr.ID, Detail: "xendit: payment request " + pr.Status}
	switch pr.Status {
	case "REQUIRES_ACTION", "ACCEPTING_PAYMENTS":
		res.Outcome = paykit.OutcomePending
		if a := pr.action(); a != nil {
			res.Outcome, res.Action = paykit.OutcomeRequiresAction, a
		}
	case "SUCCEEDED":
		return p.withFee(ctx, pr, res)
	case "FAILED":
		res.Outcome, res.FailureCode = paykit.OutcomeFailed, paykit.FailureProviderDeclined
		res.Detail = "xendit: payment request FAILED: " + pr.FailureCode
	case "CANCELED", "EXPIRED":
		res.Outcome = paykit.OutcomeCancelled
	default:
		// AUTHORIZED (the adapter captures automatically) or a status it
		// does not know: the attempt exists, its result comes later.
		res.Outcome = paykit.OutcomePending
		res.Detail = "xendit: payment request status " + pr.Status + " is not final"
	}
	return res
}

// action is the payer's next step of a waiting payment request: a QR
// string, a virtual account, or the URL of Xendit's page (a web URL
// rather than a deep link, which only a phone opens).
func (pr paymentRequest) action() *paykit.ProviderAction {
	var expires time.Time
	if s, _ := pr.ChannelProperties["expires_at"].(string); s != "" {
		if t, err := time.Parse(time.RFC3339, s); err == nil {
			expires = t.UTC()
		}
	}
	find := func(typ, descriptor string) string {
		for _, a := range pr.Actions {
			if a.Type == typ && a.Descriptor == descriptor && a.Value != "" {
				return a.Value
			}
		}
		return ""
	}
	if v := find("PRESENT_TO_CUSTOMER", "QR_STRING"); v != "" {
		return &paykit.ProviderAction{Type: paykit.NextActionDisplayQRCode, QRData: v, ExpiresAt: expires}
	}
	if v := find("PRESENT_TO_CUSTOMER", "VIRTUAL_ACCOUNT_NUMBER"); v != "" {
		a := &paykit.ProviderAction{Type: paykit.NextActionBankTransferInstructions, AccountNumber: v, ExpiresAt: expires}
		if ch, ok := channelByCode(pr.ChannelCode); ok {
			a.BankName = ch.BankName
		}
		if name, _ := pr.ChannelProperties["display_name"].(string); name != "" {
			a.AccountHolder = name
		}
		return a
	}
	for _, d := range []string{"WEB_URL", "DEEPLINK_URL"} {
		if v := find("REDIRECT_CUSTOMER", d); v != "" && (strings.HasPrefix(v, "https://") || strings.HasPrefix(v, "http://")) {
			return &paykit.ProviderAction{Type: paykit.NextActionRedirectToURL, URL: v, ExpiresAt: expires}
		}
	}
	return nil
}

// channelByCode finds the channel of a channel code.
func channelByCode(code string) (channel, bool) {
	for _, c := range channels {
		if c.Code == code && code != "" {
			return c, true
		}
	}
	return channel{}, false
}
