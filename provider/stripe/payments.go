package stripe

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/paykit/paykit"
)

// checkoutMetadata marks the PaymentIntent of a Checkout Session (CARD):
// its state is read through the session, whose id is the Reference.
const checkoutMetadata = "paykit_checkout"

// lastError is a PaymentIntent's last_payment_error.
type lastError struct {
	Type        string `json:"type"`
	Code        string `json:"code"`
	DeclineCode string `json:"decline_code"`
	Message     string `json:"message"`
}

// urlAction is a next action naming a payer page.
type urlAction struct {
	URL string `json:"url"`
}

// qrAction is a next action showing a QR code.
type qrAction struct {
	Data                  string `json:"data"`
	HostedInstructionsURL string `json:"hosted_instructions_url"`
}

// nextAction is a PaymentIntent's next_action (the types the adapter uses).
type nextAction struct {
	Type                   string     `json:"type"`
	RedirectToURL          *urlAction `json:"redirect_to_url"`
	AlipayHandleRedirect   *urlAction `json:"alipay_handle_redirect"`
	PromptPayDisplayQRCode *qrAction  `json:"promptpay_display_qr_code"`
	WeChatPayDisplayQRCode *qrAction  `json:"wechat_pay_display_qr_code"`
}

// paymentIntent is the part of Stripe's PaymentIntent object the adapter
// reads.
type paymentIntent struct {
	ID               string            `json:"id"`
	Object           string            `json:"object"`
	Amount           int64             `json:"amount"`
	Currency         string            `json:"currency"`
	Status           string            `json:"status"`
	Metadata         map[string]string `json:"metadata"`
	NextAction       *nextAction       `json:"next_action"`
	LastPaymentError *lastError        `json:"last_payment_error"`
	LatestCharge     json.RawMessage   `json:"latest_charge"` // null, an id or an expanded Charge
}

// checkoutSession is the part of a Checkout Session the adapter reads.
type checkoutSession struct {
	ID            string            `json:"id"`
	Object        string            `json:"object"`
	Status        string            `json:"status"`
	PaymentStatus string            `json:"payment_status"`
	URL           string            `json:"url"`
	Metadata      map[string]string `json:"metadata"`
	PaymentIntent json.RawMessage   `json:"payment_intent"` // null, an id or an expanded object
}

// paymentIntentID returns the id of the session's PaymentIntent, if any.
func (s *checkoutSession) paymentIntentID() string { return expandableID(s.PaymentIntent) }

// expandedPI is the session's PaymentIntent, if expanded.
func (s *checkoutSession) expandedPI() *paymentIntent {
	return expanded(s.PaymentIntent, "payment_intent", func(pi *paymentIntent) string { return pi.Object })
}

// piOutcome is piResult with, for a succeeded payment, its fee.
func (p *Provider) piOutcome(ctx context.Context, pi *paymentIntent) paykit.Result {
	return p.withFee(ctx, piResult(pi), pi, "")
}

// sessionOutcome is sessionResult with, for a paid session, the fee of
// its PaymentIntent.
func (p *Provider) sessionOutcome(ctx context.Context, s *checkoutSession) paykit.Result {
	return p.withFee(ctx, sessionResult(s), s.expandedPI(), s.paymentIntentID())
}

// list is a Stripe list or search_result.
type list[T any] struct {
	Object string `json:"object"`
	Data   []T    `json:"data"`
}

// unknown is a Result for an answer that is Stripe's yet not what was
// asked for.
func unknown(format string, args ...any) paykit.Result {
	return paykit.Result{Outcome: paykit.OutcomeUnknown, Detail: "stripe: " + fmt.Sprintf(format, args...)}
}

// decodePI decodes a PaymentIntent answer.
func decodePI(a *answer) (*paymentIntent, bool) {
	var pi paymentIntent
	if json.Unmarshal(a.body, &pi) != nil || pi.Object != "payment_intent" || pi.ID == "" {
		return nil, false
	}
	return &pi, true
}

// decodeSession decodes a Checkout Session answer.
func decodeSession(a *answer) (*checkoutSession, bool) {
	var s checkoutSession
	if json.Unmarshal(a.body, &s) != nil || s.Object != "checkout.session" || s.ID == "" {
		return nil, false
	}
	return &s, true
}

// piResult maps a PaymentIntent to paykit's vocabulary.
func piResult(pi *paymentIntent) paykit.Result {
	r := paykit.Result{Reference: pi.ID, Detail: "stripe: payment_intent " + pi.Status}
	switch pi.Status {
	case "requires_action":
		if a := piAction(pi.NextAction); a != nil {
			r.Outcome, r.Action = paykit.OutcomeRequiresAction, a
		} else {
			r.Outcome = paykit.OutcomePending
			if pi.NextAction != nil {
				r.Detail += " next_action " + pi.NextAction.Type + " not handled"
			}
		}
	case "requires_payment_method":
		if e := pi.LastPaymentError; e != nil {
			r.Outcome, r.FailureCode = paykit.OutcomeFailed, paykit.FailureProviderDeclined
			r.Detail += fmt.Sprintf(": last_payment_error %s code=%s decline_code=%s: %s", e.Type, e.Code, e.DeclineCode, e.Message)
		} else {
			r.Outcome = paykit.OutcomePending
		}
	case "requires_confirmation", "processing", "requires_capture":
		r.Outcome = paykit.OutcomePending
	case "succeeded":
		r.Outcome = paykit.OutcomeSucceeded
	case "canceled":
		r.Outcome = paykit.OutcomeCancelled
	default:
		r.Outcome = paykit.OutcomeUnknown
	}
	return r
}

// piAction is paykit's action of a next_action, nil when none applies.
func piAction(na *nextAction) *paykit.ProviderAction {
	switch {
	case na == nil:
		return nil
	case na.RedirectToURL != nil && na.RedirectToURL.URL != "":
		return &paykit.ProviderAction{Type: paykit.NextActionRedirectToURL, URL: na.RedirectToURL.URL}
	case na.AlipayHandleRedirect != nil && na.AlipayHandleRedirect.URL != "":
		return &paykit.ProviderAction{Type: paykit.NextActionRedirectToURL, URL: na.AlipayHandleRedirect.URL}
	case na.PromptPayDisplayQRCode != nil && na.PromptPayDisplayQRCode.Data != "":
		return &paykit.ProviderAction{Type: paykit.NextActionDisplayQRCode, QRData: na.PromptPayDisplayQRCode.Data}
	case na.WeChatPayDisplayQRCode != nil && na.WeChatPayDisplayQRCode.HostedInstructionsURL != "":
		// Its data is a weixin:// URL, not the EMVCo payload paykit's
		// display_qr_code promises: the payer goes to Stripe's page that
		// shows the code.
		return &paykit.ProviderAction{Type: paykit.NextActionRedirectToURL, URL: na.WeChatPayDisplayQRCode.HostedInstructionsURL}
	}
	return nil
}

// sessionResult maps a Checkout Session to paykit's vocabulary.
func sessionResult(s *checkoutSession) paykit.Result {
	r := paykit.Result{Reference: s.ID, Detail: fmt.Sprintf("stripe: checkout.session %s payment_status %s", s.Status, s.PaymentStatus)}
	switch s.Status {
	case "open":
		if s.URL != "" {
			r.Outcome, r.Action = paykit.OutcomeRequiresAction, &paykit.ProviderAction{Type: paykit.NextActionRedirectToURL, URL: s.URL}
		} else {
			r.Outcome = paykit.OutcomePending
		}
	case "complete":
		if s.PaymentStatus == "paid" || s.PaymentStatus == "no_payment_required" {
			r.Outcome = paykit.OutcomeSucceeded
		} else {
			r.Outcome = paykit.OutcomePending // an asynchronous method not settled yet
		}
	case "expired":
		r.Outcome = paykit.OutcomeCancelled
	default:
		r.Outcome = paykit.OutcomeUnknown
	}
	return r
}

// refused is the Result of a request the adapter did not send.
func refused(format string, args ...any) paykit.Result {
	return paykit.Result{Outcome: paykit.OutcomeRefused, Detail: "stripe: not sent: " + fmt.Sprintf(format, args...)}
}

// stripeType is the payment_method_data[type] of each paykit method.
var stripeType = map[string]string{
	"FPX": "fpx", "PROMPTPAY": "promptpay", "GRABPAY": "grabpay", "ALIPAY": "alipay", "WECHAT_PAY": "wechat_pay", "CARD": "card",
}

// CreatePayment creates and confirms a PaymentIntent (a Checkout Session
// for CARD) under the Key's Idempotency-Key.
func (p *Provider) CreatePayment(ctx context.Context, req paykit.PaymentRequest) paykit.Result {
	if !slices.Contains(p.methods, req.Method) {
		return refused("method %s is not configured for this account", req.Method)
	}
	if req.Amount <= 0 || req.Currency == "" || req.Key == "" {
		return refused("a payment needs a key, a positive amount and a currency")
	}
	if req.Method == "CARD" {
		return p.createCheckout(ctx, req)
	}
	typ := stripeType[req.Method]
	f := url.Values{}
	f.Set("amount", strconv.FormatInt(req.Amount, 10))
	f.Set("currency", strings.ToLower(req.Currency))
	f.Set("confirm", "true")
	f.Set("payment_method_types[0]", typ)
	f.Set("payment_method_data[type]", typ)
	f.Set("metadata["+MetadataKey+"]", req.Key)
	if req.ReturnURL != "" {
		f.Set("return_url", req.ReturnURL)
	}
	if v := req.Customer["name"]; v != "" {
		f.Set("payment_method_data[billing_details][name]", v)
	}
	if v := req.Customer["email"]; v != "" {
		f.Set("payment_method_data[billing_details][email]", v)
	}
	switch req.Method {
	case "FPX":
		bank := req.Options["bank"]
		if bank == "" {
			return refused("FPX needs a bank")
		}
		f.Set("payment_method_data[fpx][bank]", bank)
	case "PROMPTPAY":
		if req.Customer["email"] == "" {
			return refused("Stripe requires the payer's email for PromptPay")
		}
	case "WECHAT_PAY":
		f.Set("payment_method_options[wechat_pay][client]", "web")
	}
	a, fail := p.call(ctx, http.MethodPost, "/v1/payment_intents", f, req.Key)
	if fail != nil {
		return fail.r
	}
	if a.err == nil {
		pi, ok := decodePI(a)
		if !ok {
			return unknown("the create answer is not a PaymentIntent")
		}
		return p.piOutcome(ctx, pi)
	}
	return p.createError(ctx, a)
}

// createError maps a Stripe error answer to a create: a PaymentIntent it
// names is the attempt; a request error (validation, authentication)
// created nothing, as Stripe saves no idempotent result for a request that
// failed validation, so it is Refused.
func (p *Provider) createError(ctx context.Context, a *answer) paykit.Result {
	d := errDetail(a)
	if idempotencyConflict(a) {
		return paykit.Result{Outcome: paykit.OutcomeUnknown, Detail: d}
	}
	if pi := a.err.PaymentIntent; pi != nil && pi.ID != "" {
		r := piResult(pi)
		if pi.Status == "requires_payment_method" {
			// The confirmation failed; the adapter never confirms again.
			r.Outcome, r.FailureCode, r.Action = paykit.OutcomeFailed, paykit.FailureProviderDeclined, nil
		}
		r.Detail += "; " + d
		return p.withFee(ctx, r, pi, "")
	}
	switch a.status {
	case http.StatusPaymentRequired:
		return paykit.Result{Outcome: paykit.OutcomeFailed, FailureCode: paykit.FailureProviderDeclined, Detail: d}
	case http.StatusBadRequest, http.StatusUnauthorized, http.StatusForbidden:
		return paykit.Result{Outcome: paykit.OutcomeRefused, Detail: d}
	}
	return paykit.Result{Outcome: paykit.OutcomeUnknown, Detail: d}
}

// createCheckout creates a Checkout Session in payment mode for a card
// payment: the payer enters card data on Stripe's page (session.url).
func (p *Provider) createCheckout(ctx context.Context, req paykit.PaymentRequest) paykit.Result {
	if req.ReturnURL == "" {
		return refused("a card payment needs a ReturnURL (success_url)")
	}
	f := url.Values{}
	f.Set("mode", "payment")
	f.Set("payment_method_types[0]", "card")
	f.Set("line_items[0][quantity]", "1")
	f.Set("line_items[0][price_data][currency]", strings.ToLower(req.Currency))
	f.Set("line_items[0][price_data][unit_amount]", strconv.FormatInt(req.Amount, 10))
	f.Set("line_items[0][price_data][product_data][name]", "Payment")
	f.Set("success_url", req.ReturnURL)
	f.Set("cancel_url", req.ReturnURL)
	f.Set("metadata["+MetadataKey+"]", req.Key)
	f.Set("payment_intent_data[metadata]["+MetadataKey+"]", req.Key)
	f.Set("payment_intent_data[metadata]["+checkoutMetadata+"]", "true")
	if v := req.Customer["email"]; v != "" {
		f.Set("customer_email", v)
	}
	a, fail := p.call(ctx, http.MethodPost, "/v1/checkout/sessions", f, req.Key)
	if fail != nil {
		return fail.r
	}
	if a.err != nil {
		return p.createError(ctx, a)
	}
	s, ok := decodeSession(a)
	if !ok {
		return unknown("the create answer is not a Checkout Session")
	}
	return p.sessionOutcome(ctx, s)
}

// InquirePayment reads the attempt by its id, or finds it by Key through
// the search API (eventually consistent: nothing found is Unknown).
func (p *Provider) InquirePayment(ctx context.Context, ref paykit.AttemptRef) paykit.Result {
	if ref.Reference == "" {
		return p.inquireByKey(ctx, ref.Key)
	}
	if strings.HasPrefix(ref.Reference, "cs_") {
		return p.getSession(ctx, ref.Reference)
	}
	return p.getPI(ctx, ref.Reference)
}

// getPI reads a PaymentIntent with its charge's balance transaction.
func (p *Provider) getPI(ctx context.Context, id string) paykit.Result {
	pi, r := p.fetchPI(ctx, id)
	if pi == nil {
		return r
	}
	return p.piOutcome(ctx, pi)
}

func (p *Provider) getSession(ctx context.Context, id string) paykit.Result {
	s, r := p.session(ctx, id)
	if s == nil {
		return r
	}
	return p.sessionOutcome(ctx, s)
}

// session reads a Checkout Session with its PaymentIntent's balance
// transaction; without one, the Result says why.
func (p *Provider) session(ctx context.Context, id string) (*checkoutSession, paykit.Result) {
	a, fail := p.call(ctx, http.MethodGet, "/v1/checkout/sessions/"+url.PathEscape(id), url.Values{"expand[]": {"payment_intent." + piExpansion}}, "")
	if fail != nil {
		return nil, fail.r
	}
	if a.err != nil {
		return nil, readError(a)
	}
	s, ok := decodeSession(a)
	if !ok {
		return nil, unknown("the answer is not a Checkout Session")
	}
	return s, paykit.Result{}
}

// readError maps an error answer to a read: NotFound only on Stripe's
// resource_missing.
func readError(a *answer) paykit.Result {
	if resourceMissing(a) {
		return paykit.Result{Outcome: paykit.OutcomeNotFound, Detail: errDetail(a)}
	}
	return paykit.Result{Outcome: paykit.OutcomeUnknown, Detail: errDetail(a)}
}

// searchQuery is the search query for metadata[paykit_key] = key.
func searchQuery(key string) string {
	v := strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(key)
	return "metadata['" + MetadataKey + "']:'" + v + "'"
}

// attempt is what a Key-only lookup found: a PaymentIntent, or a Checkout
// Session (with its PaymentIntent, if it has one yet).
type attempt struct {
	pi *paymentIntent
	cs *checkoutSession
}

// result is the attempt's state: the session's for a Checkout payment.
func (a *attempt) result(ctx context.Context, p *Provider) paykit.Result {
	if a.cs != nil {
		return p.sessionOutcome(ctx, a.cs)
	}
	return p.piOutcome(ctx, a.pi)
}

// id is the attempt's Reference.
func (a *attempt) id() string {
	if a.cs != nil {
		return a.cs.ID
	}
	return a.pi.ID
}

// paymentIntentID is the id of the attempt's PaymentIntent, "" if none.
func (a *attempt) paymentIntentID() string {
	if a.pi != nil {
		return a.pi.ID
	}
	return a.cs.paymentIntentID()
}

// lookup finds the attempt created under key: by search (eventually
// consistent), then in the newest PaymentIntents and Checkout Sessions of
// the list APIs (not subject to search's delay). Absent from complete
// lists is NotFound; otherwise not found is Unknown. Without an attempt,
// the Result says why.
func (p *Provider) lookup(ctx context.Context, key string) (*attempt, paykit.Result) {
	a, fail := p.call(ctx, http.MethodGet, "/v1/payment_intents/search", url.Values{"query": {searchQuery(key)}}, "")
	if fail != nil {
		return nil, fail.r
	}
	if a.err != nil {
		return nil, paykit.Result{Outcome: paykit.OutcomeUnknown, Detail: errDetail(a)}
	}
	var found list[paymentIntent]
	if json.Unmarshal(a.body, &found) != nil || found.Object != "search_result" {
		return nil, unknown("the search answer is not a search_result")
	}
	pi := keyed(found.Data, key, piMeta)
	if pi == nil {
		pis, r := listNewest[paymentIntent](ctx, p, "/v1/payment_intents")
		if r.Outcome != "" {
			return nil, r
		}
		pi = keyed(pis, key, piMeta)
	}
	if pi != nil {
		if pi.Metadata[checkoutMetadata] == "" {
			return &attempt{pi: pi}, paykit.Result{}
		}
		if cs := p.sessionOf(ctx, pi.ID); cs != nil {
			return &attempt{pi: pi, cs: cs}, paykit.Result{}
		}
		return nil, unknown("the Checkout Session of %s was not found", pi.ID)
	}
	css, r := listNewest[checkoutSession](ctx, p, "/v1/checkout/sessions")
	if r.Outcome != "" {
		return nil, r
	}
	if cs := keyed(css, key, func(cs *checkoutSession) (bool, map[string]string) {
		return cs.Object == "checkout.session", cs.Metadata
	}); cs != nil {
		return &attempt{cs: cs}, paykit.Result{}
	}
	// Not Stripe's word that nothing exists: an object still being made is
	// in no list yet. paykit recovers by sending the create again under
	// the key, which Stripe's Idempotency-Key makes the same attempt.
	return nil, unknown("nothing found under the key by search (eventually consistent) nor among the newest %d PaymentIntents and Checkout Sessions", listScan)
}

// piMeta is keyed's view of a PaymentIntent.
func piMeta(pi *paymentIntent) (bool, map[string]string) {
	return pi.Object == "payment_intent", pi.Metadata
}

// keyed returns the element of objs of the right object type whose
// metadata names key.
func keyed[T any](objs []T, key string, meta func(*T) (bool, map[string]string)) *T {
	for i := range objs {
		if ok, md := meta(&objs[i]); ok && md[MetadataKey] == key {
			return &objs[i]
		}
	}
	return nil
}

// listNewest reads the newest listScan objects of a list API (strongly
// consistent, unlike search). A Result with an Outcome says why it could
// not.
func listNewest[T any](ctx context.Context, p *Provider, path string) ([]T, paykit.Result) {
	a, fail := p.call(ctx, http.MethodGet, path, url.Values{"limit": {strconv.Itoa(listScan)}}, "")
	if fail != nil {
		return nil, fail.r
	}
	if a.err != nil {
		return nil, paykit.Result{Outcome: paykit.OutcomeUnknown, Detail: errDetail(a)}
	}
	var l list[T]
	if json.Unmarshal(a.body, &l) != nil || l.Object != "list" {
		return nil, unknown("the %s answer is not a list", path)
	}
	return l.Data, paykit.Result{}
}

// listScan is how many of the newest objects a Key-only lookup reads
// from a list API.
const listScan = 100

func (p *Provider) inquireByKey(ctx context.Context, key string) paykit.Result {
	at, r := p.lookup(ctx, key)
	if at == nil {
		return r
	}
	return at.result(ctx, p)
}

// sessionOf finds the Checkout Session of a PaymentIntent, nil if none or
// on any failure.
func (p *Provider) sessionOf(ctx context.Context, piID string) *checkoutSession {
	a, fail := p.call(ctx, http.MethodGet, "/v1/checkout/sessions", url.Values{"payment_intent": {piID}}, "")
	if fail != nil || a.err != nil {
		return nil
	}
	var l list[checkoutSession]
	if json.Unmarshal(a.body, &l) != nil || l.Object != "list" || len(l.Data) == 0 || l.Data[0].Object != "checkout.session" {
		return nil
	}
	return &l.Data[0]
}

// CancelPayment cancels the PaymentIntent (expires the Checkout Session)
// and answers its state afterwards.
func (p *Provider) CancelPayment(ctx context.Context, ref paykit.AttemptRef) paykit.Result {
	id := ref.Reference
	if id == "" {
		at, r := p.lookup(ctx, ref.Key)
		if at == nil {
			return r
		}
		id = at.id()
	}
	if strings.HasPrefix(id, "cs_") {
		a, fail := p.call(ctx, http.MethodPost, "/v1/checkout/sessions/"+url.PathEscape(id)+"/expire", nil, "")
		if fail != nil {
			return fail.r
		}
		if a.err == nil {
			if s, ok := decodeSession(a); ok {
				return p.sessionOutcome(ctx, s)
			}
			return unknown("the expire answer is not a Checkout Session")
		}
		if a.status == http.StatusBadRequest && !idempotencyConflict(a) {
			return p.getSession(ctx, id) // no longer open: its state
		}
		return readError(a)
	}
	a, fail := p.call(ctx, http.MethodPost, "/v1/payment_intents/"+url.PathEscape(id)+"/cancel", nil, "")
	if fail != nil {
		return fail.r
	}
	if a.err == nil {
		if pi, ok := decodePI(a); ok {
			return p.piOutcome(ctx, pi)
		}
		return unknown("the cancel answer is not a PaymentIntent")
	}
	if a.status == http.StatusBadRequest && !idempotencyConflict(a) {
		// payment_intent_unexpected_state: it succeeded, or is processing.
		if pi := a.err.PaymentIntent; pi != nil && pi.ID != "" {
			return p.piOutcome(ctx, pi)
		}
		return p.getPI(ctx, id)
	}
	return readError(a)
}
