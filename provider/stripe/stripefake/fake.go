// Package stripefake is a stateful fake of the Stripe API endpoints the
// provider/stripe adapter calls (PaymentIntents with search, Checkout
// Sessions, Charges and their balance transactions, Refunds, Disputes,
// Payouts and the balance transactions they paid out) and of Stripe's
// signed webhooks, written from Stripe's API reference: the
// objects carry the documented fields, errors are
// {"error": {"type", "code", "message", "param"}} with the documented
// status codes, and Idempotency-Key is honoured (same key and parameters:
// the saved answer; same key, other parameters: 400 idempotency_error).
// Unlike Stripe's, its search is immediately consistent. Lists (GET
// /v1/payment_intents, /v1/refunds, /v1/disputes) answer the newest
// objects first; those of payouts and balance transactions also page with
// starting_after and ending_before. expand[] works on every answer, for
// the fields that name another object of the fake by id (latest_charge,
// balance_transaction, payment_intent, charge, source), "data." first in
// lists.
//
// A succeeded PaymentIntent has a charge (latest_charge) whose balance
// transaction (type charge for a card, payment for other methods) states
// the fee and available_on. The fee schedule is the fake's own: 3 % of the
// amount rounded half up, plus 100 for cards (Fee reports it); the funds
// become available at 00:00 UTC three days after the charge, unless
// Options.AvailableOn says otherwise. A refund's balance transaction
// (refund, or payment_refund) withdraws its amount when it is made; one
// that fails returns it (adjustment with reporting_category
// refund_failure, or payment_failure_refund). PayOut pays out what is
// available, as automatic payouts do (payouts.go).
//
// Disputes: Stripe's test mode opens one when a payment is made with a
// dispute test card; the fake opens one on OpenDispute (the payer's bank
// disputes the payment), status needs_response, evidence due seven days
// later, with a balance transaction withdrawing the amount and a dispute
// fee of 1500 (the fake's). As in Stripe's test mode, submitted evidence
// whose uncategorized_text contains winning_evidence wins the dispute and
// losing_evidence loses it (the fake decides at once); other evidence
// leaves it under_review. Closing it (POST /v1/disputes/{id}/close) loses
// it. A won dispute reinstates the amount; the fee is kept. A charge with
// a dispute cannot be refunded (charge_disputed).
//
// Test triggers (the fake's own, documented here): a PaymentIntent whose
// amount ends in 901 is declined at confirmation (402, status
// requires_payment_method with last_payment_error); a refund whose amount
// ends in 911 fails (status failed, failure_reason declined).
package stripefake

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/paykit/paykit/internal/emvco"
	"github.com/paykit/paykit/provider/stripe"
)

// Options configure a Fake.
type Options struct {
	// SecretKey is the API key the fake accepts (Bearer or Basic user).
	SecretKey string
	// AccountCountry decides which payment method types the account
	// accepts ("MY" when empty).
	AccountCountry string
	// WebhookSecret signs the events (whsec_...).
	WebhookSecret string
	// WebhookURL, if set, receives every event the fake emits, signed,
	// synchronously when its state changes.
	WebhookURL string
	// Now is the fake's clock; time.Now when nil.
	Now func() time.Time
	// AvailableOn is when the funds of a charge made at paid become
	// available (its balance transaction's available_on, in whole
	// seconds); 00:00 UTC three days after paid when nil.
	AvailableOn func(paid time.Time) time.Time
	// AutomaticPayouts makes the fake pay out what is available (as
	// PayOut("paid") does) before it answers any request, as Stripe's
	// automatic payouts would on a schedule with no delay.
	AutomaticPayouts bool
	// DebitNegativeBalances makes a payout of a negative net a withdrawal
	// from the account's bank (a payout of a negative amount), as Stripe
	// does for accounts in some countries; otherwise a negative balance
	// waits for payments to make it positive.
	DebitNegativeBalances bool
}

// Fake is the stateful Stripe fake. It is an http.Handler.
type Fake struct {
	opts Options
	mu   sync.Mutex
	pis  []*object // PaymentIntents, in creation order
	css  []*object // Checkout Sessions
	res  []*object // Refunds
	chs  []*object // Charges
	bts  []*object // balance transactions
	dps  []*object // Disputes
	pos  []*object // Payouts
	// paidIn names the payout that paid out each balance transaction
	// (a payout's own included).
	paidIn map[string]string
	idem   map[string]*saved
	evts   []map[string]any
}

// object is a Stripe object as a JSON map, with what the fake keeps aside.
type object struct {
	m      map[string]any
	piMeta map[string]any // Checkout Session: payment_intent_data[metadata]
}

// saved is an idempotent request's saved answer.
type saved struct {
	endpoint, params string
	status           int
	body             []byte
}

// New returns a Fake.
func New(opts Options) *Fake {
	if opts.AccountCountry == "" {
		opts.AccountCountry = "MY"
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.AvailableOn == nil {
		opts.AvailableOn = func(paid time.Time) time.Time { return paid.UTC().Truncate(24 * time.Hour).Add(72 * time.Hour) }
	}
	return &Fake{opts: opts, idem: map[string]*saved{}, paidIn: map[string]string{}}
}

// apiErr is an error answer.
type apiErr struct {
	status                    int
	typ, code, message, param string
	pi                        map[string]any
}

func (e *apiErr) body() []byte {
	in := map[string]any{"type": e.typ, "message": e.message}
	if e.code != "" {
		in["code"] = e.code
		in["doc_url"] = "https://docs.stripe.com/error-codes/" + strings.ReplaceAll(e.code, "_", "-")
	}
	if e.param != "" {
		in["param"] = e.param
	}
	if e.pi != nil {
		in["payment_intent"] = e.pi
		if lpe, ok := e.pi["last_payment_error"].(map[string]any); ok {
			if dc, ok := lpe["decline_code"]; ok {
				in["decline_code"] = dc
			}
		}
	}
	b, _ := json.Marshal(map[string]any{"error": in})
	return b
}

func invalid(param, format string, args ...any) *apiErr {
	return &apiErr{status: 400, typ: "invalid_request_error", param: param, message: fmt.Sprintf(format, args...)}
}

func missing(kind, id string) *apiErr {
	return &apiErr{status: 404, typ: "invalid_request_error", code: "resource_missing", param: "id",
		message: fmt.Sprintf("No such %s: '%s'", kind, id)}
}

const alnum = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

func newID(prefix string, n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = alnum[int(b[i])%len(alnum)]
	}
	return prefix + string(b)
}

// ServeHTTP serves the API.
func (f *Fake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Request-Id", newID("req_", 14))
	w.Header().Set("Content-Type", "application/json")
	if !f.authorized(r) {
		writeErr(w, &apiErr{status: 401, typ: "invalid_request_error",
			message: "Invalid API Key provided: " + redact(bearer(r))})
		return
	}
	if err := r.ParseForm(); err != nil {
		writeErr(w, invalid("", "Invalid request body"))
		return
	}
	form := r.Form
	if r.Method == http.MethodPost {
		form = r.PostForm
	}
	endpoint := r.Method + " " + r.URL.Path
	key := r.Header.Get("Idempotency-Key")
	params := form.Encode()
	var evts []map[string]any
	f.mu.Lock()
	if key != "" && r.Method == http.MethodPost {
		if s, ok := f.idem[key]; ok {
			f.mu.Unlock()
			if s.endpoint != endpoint || s.params != params {
				writeErr(w, &apiErr{status: 400, typ: "idempotency_error",
					message: "Keys for idempotent requests can only be used with the same parameters they were first used with. Try using a key other than '" + key + "' if you meant to execute a different request."})
				return
			}
			w.Header().Set("Idempotent-Replayed", "true")
			w.WriteHeader(s.status)
			_, _ = w.Write(s.body)
			return
		}
	}
	before := len(f.evts)
	if f.opts.AutomaticPayouts {
		f.payOut("paid")
	}
	status, body, executed := f.route(r.Method, r.URL.Path, form)
	if key != "" && r.Method == http.MethodPost && executed {
		// Stripe saves an answer once the endpoint began executing; not
		// for requests that failed validation.
		f.idem[key] = &saved{endpoint: endpoint, params: params, status: status, body: body}
	}
	evts = slices.Clone(f.evts[before:])
	f.mu.Unlock()
	f.deliver(evts)
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

func writeErr(w http.ResponseWriter, e *apiErr) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(e.status)
	_, _ = w.Write(e.body())
}

func bearer(r *http.Request) string {
	h := r.Header.Get("Authorization")
	if k, ok := strings.CutPrefix(h, "Bearer "); ok {
		return k
	}
	if u, _, ok := r.BasicAuth(); ok {
		return u
	}
	return ""
}

func redact(k string) string {
	if len(k) > 8 {
		return k[:3] + strings.Repeat("*", 8) + k[len(k)-4:]
	}
	return "****"
}

func (f *Fake) authorized(r *http.Request) bool {
	k := bearer(r)
	return k != "" && hmac.Equal([]byte(k), []byte(f.opts.SecretKey))
}

// route runs a request under f.mu: its status, body, and whether the
// endpoint began executing (so its answer is saved for the idempotency key).
func (f *Fake) route(method, path string, form url.Values) (int, []byte, bool) {
	seg := strings.Split(strings.Trim(path, "/"), "/")
	var (
		res  map[string]any
		err  *apiErr
		exec bool
	)
	switch {
	case method == "POST" && path == "/v1/payment_intents":
		res, err, exec = f.createPI(form)
	case method == "GET" && path == "/v1/payment_intents/search":
		res, err = f.searchPIs(form.Get("query"))
	case method == "GET" && path == "/v1/payment_intents":
		res = f.list(f.pis, "/v1/payment_intents", form.Get("limit"))
	case method == "GET" && len(seg) == 3 && seg[1] == "payment_intents":
		res, err = f.get(f.pis, "payment_intent", seg[2])
	case method == "POST" && len(seg) == 4 && seg[1] == "payment_intents" && seg[3] == "cancel":
		res, err = f.cancelPI(seg[2])
		exec = true
	case method == "POST" && path == "/v1/checkout/sessions":
		res, err = f.createSession(form)
		exec = err == nil
	case method == "GET" && path == "/v1/checkout/sessions":
		res = f.listSessions(form.Get("payment_intent"), form.Get("limit"))
	case method == "GET" && len(seg) == 4 && seg[1] == "checkout" && seg[2] == "sessions":
		res, err = f.get(f.css, "checkout.session", seg[3])
	case method == "POST" && len(seg) == 5 && seg[1] == "checkout" && seg[4] == "expire":
		res, err = f.expireSession(seg[3])
		exec = true
	case method == "POST" && path == "/v1/refunds":
		res, err = f.createRefund(form)
		exec = err == nil
	case method == "GET" && path == "/v1/refunds":
		res = f.list(f.res, "/v1/refunds", form.Get("limit"))
	case method == "GET" && len(seg) == 3 && seg[1] == "refunds":
		res, err = f.get(f.res, "refund", seg[2])
	case method == "GET" && len(seg) == 3 && seg[1] == "charges":
		res, err = f.get(f.chs, "charge", seg[2])
	case method == "GET" && path == "/v1/balance_transactions":
		res, err = f.listBalanceTransactions(form)
	case method == "GET" && len(seg) == 3 && seg[1] == "balance_transactions":
		res, err = f.get(f.bts, "balance_transaction", seg[2])
	case method == "GET" && path == "/v1/payouts":
		res, err = f.listPayouts(form)
	case method == "GET" && len(seg) == 3 && seg[1] == "payouts":
		res, err = f.get(f.pos, "payout", seg[2])
	case method == "GET" && path == "/v1/disputes":
		res = f.list(f.dps, "/v1/disputes", form.Get("limit"))
	case method == "GET" && len(seg) == 3 && seg[1] == "disputes":
		res, err = f.get(f.dps, "dispute", seg[2])
	case method == "POST" && len(seg) == 3 && seg[1] == "disputes":
		res, err = f.updateDispute(seg[2], form)
		exec = true
	case method == "POST" && len(seg) == 4 && seg[1] == "disputes" && seg[3] == "close":
		res, err = f.closeDispute(seg[2])
		exec = true
	default:
		err = &apiErr{status: 404, typ: "invalid_request_error",
			message: fmt.Sprintf("Unrecognized request URL (%s: %s). Please see https://stripe.com/docs or we can help at https://support.stripe.com/.", method, path)}
	}
	if err == nil && len(form["expand[]"]) > 0 {
		res, err = f.expand(res, form["expand[]"])
	}
	if err != nil {
		return err.status, err.body(), exec
	}
	b, _ := json.Marshal(res)
	return 200, b, exec
}

func (f *Fake) get(objs []*object, kind, id string) (map[string]any, *apiErr) {
	if o := find(objs, "id", id); o != nil {
		return o.m, nil
	}
	return nil, missing(kind, id)
}

func find(objs []*object, field, v string) *object {
	for _, o := range objs {
		if s, _ := o.m[field].(string); s == v {
			return o
		}
	}
	return nil
}

func byKey(objs []*object, key string) *object {
	for i := len(objs) - 1; i >= 0; i-- {
		if md, _ := objs[i].m["metadata"].(map[string]any); md["paykit_key"] == key {
			return objs[i]
		}
	}
	return nil
}

// metadata collects prefix[k]=v form fields.
func metadata(form url.Values, prefix string) map[string]any {
	md := map[string]any{}
	for k, v := range form {
		if name, ok := strings.CutPrefix(k, prefix+"["); ok && strings.HasSuffix(name, "]") && !strings.Contains(name, "[") {
			md[strings.TrimSuffix(name, "]")] = v[0]
		}
	}
	return md
}

// minimums are Stripe's minimum charge amounts (minor units) of the
// currencies the fake knows; maxAmount is the eight-digit maximum.
var minimums = map[string]int64{"myr": 200, "thb": 1000, "sgd": 50, "usd": 50, "hkd": 400, "aud": 50, "eur": 50, "gbp": 30, "jpy": 50, "cny": 400}

const maxAmount = 99999999

func amount(form url.Values, param, currency string) (int64, *apiErr) {
	s := form.Get(param)
	if s == "" {
		return 0, invalid(param, "Missing required param: %s.", param)
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 1 {
		return 0, invalid(param, "Invalid integer: %s", s)
	}
	if n > maxAmount {
		e := invalid(param, "Amount must be no more than 99999999")
		e.code = "amount_too_large"
		return 0, e
	}
	if min, ok := minimums[currency]; ok && n < min {
		e := invalid(param, "Amount must convert to at least %d %s minor units.", min, currency)
		e.code = "amount_too_small"
		return 0, e
	}
	return n, nil
}

// accepts lists, per payment method type, the account countries and the
// currencies Stripe documents for it.
var accepts = map[string]struct{ countries, currencies []string }{
	"fpx":        {[]string{"MY"}, []string{"myr"}},
	"grabpay":    {[]string{"MY", "SG"}, []string{"myr", "sgd"}},
	"promptpay":  {[]string{"TH"}, []string{"thb"}},
	"alipay":     {[]string{"MY", "SG", "HK", "JP", "AU", "US", "GB"}, []string{"myr", "sgd", "hkd", "jpy", "aud", "usd", "gbp", "eur", "cny"}},
	"wechat_pay": {[]string{"SG", "HK", "JP", "AU", "US", "GB"}, []string{"sgd", "hkd", "jpy", "aud", "usd", "gbp", "eur", "cny"}},
	"card":       {nil, nil},
}

var fpxBanks = []string{"affin_bank", "agrobank", "alliance_bank", "ambank", "bank_islam", "bank_muamalat", "bank_rakyat", "bsn",
	"cimb", "hong_leong_bank", "hsbc", "kfh", "maybank2u", "ocbc", "public_bank", "rhb", "standard_chartered", "uob",
	"deutsche_bank", "maybank2e", "pb_enterprise", "bank_of_china"}

func (f *Fake) now() int64 { return f.opts.Now().Unix() }

func (f *Fake) createPI(form url.Values) (map[string]any, *apiErr, bool) {
	currency := form.Get("currency")
	if currency == "" {
		return nil, invalid("currency", "Missing required param: currency."), false
	}
	amt, e := amount(form, "amount", currency)
	if e != nil {
		return nil, e, false
	}
	typ := form.Get("payment_method_data[type]")
	if t := form.Get("payment_method_types[0]"); t != "" && typ != "" && t != typ {
		return nil, invalid("payment_method_data[type]", "The payment method type %q is not in payment_method_types.", typ), false
	}
	acc, ok := accepts[typ]
	if !ok || typ == "card" {
		return nil, invalid("payment_method_data[type]", "Invalid payment_method_data[type]: %q", typ), false
	}
	if !slices.Contains(acc.countries, f.opts.AccountCountry) {
		return nil, invalid("payment_method_types", "The payment method type %q is invalid. Please ensure the provided type is activated in your dashboard and your account is enabled for any preview features that you are trying to use.", typ), false
	}
	if !slices.Contains(acc.currencies, currency) {
		return nil, invalid("currency", "The currency provided (%s) is invalid for one or more payment method types on this PaymentIntent.", currency), false
	}
	confirm := form.Get("confirm") == "true"
	switch typ {
	case "fpx":
		if b := form.Get("payment_method_data[fpx][bank]"); !slices.Contains(fpxBanks, b) {
			return nil, invalid("payment_method_data[fpx][bank]", "Invalid payment_method_data[fpx][bank]: must be one of %s", strings.Join(fpxBanks, ", ")), false
		}
	case "promptpay":
		if form.Get("payment_method_data[billing_details][email]") == "" {
			return nil, invalid("payment_method_data[billing_details][email]", "Missing required param: payment_method_data[billing_details][email]."), false
		}
	case "wechat_pay":
		if confirm && form.Get("payment_method_options[wechat_pay][client]") == "" {
			return nil, invalid("payment_method_options[wechat_pay][client]", "Missing required param: payment_method_options[wechat_pay][client]."), false
		}
	}
	redirect := typ == "fpx" || typ == "grabpay" || typ == "alipay"
	if confirm && redirect && form.Get("return_url") == "" {
		return nil, invalid("return_url", "A return_url must be specified because this Payment Intent is configured to automatically accept the payment methods enabled in the Dashboard, some of which may require a full page redirect to succeed."), false
	}
	id := newID("pi_", 24)
	pi := map[string]any{
		"id": id, "object": "payment_intent", "amount": amt, "amount_capturable": 0, "amount_received": int64(0),
		"currency": currency, "status": "requires_confirmation", "metadata": metadata(form, "metadata"),
		"next_action": nil, "last_payment_error": nil, "latest_charge": nil, "payment_method": newID("pm_", 24),
		"payment_method_types": []string{typ}, "capture_method": "automatic", "confirmation_method": "automatic",
		"client_secret": id + "_secret_" + newID("", 25), "created": f.now(), "livemode": false,
		"canceled_at": nil, "cancellation_reason": nil, "description": nil,
	}
	o := &object{m: pi}
	f.pis = append(f.pis, o)
	f.emit("payment_intent.created", pi)
	if !confirm {
		return pi, nil, true
	}
	if amt%1000 == 901 {
		f.fail(o)
		return nil, &apiErr{status: 402, typ: "card_error", code: "payment_method_provider_decline",
			message: "The payment failed. The customer's bank or wallet declined it.", pi: pi}, true
	}
	pi["status"] = "requires_action"
	ret := form.Get("return_url")
	switch typ {
	case "fpx", "grabpay":
		pi["next_action"] = map[string]any{"type": "redirect_to_url", "redirect_to_url": map[string]any{
			"url": "https://pm-redirects.stripe.com/authorize/acct_fake/pa_nonce_" + newID("", 32), "return_url": ret}}
	case "alipay":
		pi["next_action"] = map[string]any{"type": "alipay_handle_redirect", "alipay_handle_redirect": map[string]any{
			"url": "https://hooks.stripe.com/redirect/authenticate/src_" + newID("", 24), "return_url": ret,
			"native_url": nil, "native_data": nil}}
	case "promptpay":
		pi["next_action"] = map[string]any{"type": "promptpay_display_qr_code", "promptpay_display_qr_code": map[string]any{
			"data": PromptPayPayload(id, amt), "expires_at": f.now() + 900,
			"hosted_instructions_url": "https://payments.stripe.com/qr/instructions/" + newID("", 40),
			"image_url_png":           "https://qr.stripe.com/" + newID("", 40) + ".png",
			"image_url_svg":           "https://qr.stripe.com/" + newID("", 40) + ".svg"}}
	case "wechat_pay":
		pi["next_action"] = map[string]any{"type": "wechat_pay_display_qr_code", "wechat_pay_display_qr_code": map[string]any{
			"data": "weixin://wxpay/bizpayurl?pr=" + newID("", 7), "hosted_instructions_url": "https://payments.stripe.com/qr/instructions/" + newID("", 40),
			"image_data_url": "data:image/png;base64,iVBORw0KGgo=", "image_url_png": "https://qr.stripe.com/" + newID("", 40) + ".png",
			"image_url_svg": "https://qr.stripe.com/" + newID("", 40) + ".svg"}}
	}
	f.emit("payment_intent.requires_action", pi)
	return pi, nil, true
}

// fail puts a PaymentIntent in requires_payment_method with a
// last_payment_error (a declined confirmation).
func (f *Fake) fail(o *object) {
	pi := o.m
	pi["status"] = "requires_payment_method"
	pi["next_action"] = nil
	pi["last_payment_error"] = map[string]any{"type": "card_error", "code": "payment_method_provider_decline",
		"message": "The payment failed. The customer's bank or wallet declined it."}
	f.emit("payment_intent.payment_failed", pi)
}

// searchPIs answers metadata['paykit_key']:'VALUE' queries, the only form
// the fake knows.
func (f *Fake) searchPIs(q string) (map[string]any, *apiErr) {
	field, rest, ok := strings.Cut(q, ":")
	name, ok2 := strings.CutPrefix(field, "metadata['")
	if !ok || !ok2 || !strings.HasSuffix(name, "']") || len(rest) < 2 || rest[0] != '\'' || rest[len(rest)-1] != '\'' {
		return nil, invalid("query", "The fake only understands metadata['NAME']:'VALUE' queries; got %q", q)
	}
	name = strings.TrimSuffix(name, "']")
	var val strings.Builder
	inner := rest[1 : len(rest)-1]
	for i := 0; i < len(inner); i++ {
		if inner[i] == '\\' && i+1 < len(inner) {
			i++
		}
		val.WriteByte(inner[i])
	}
	data := []map[string]any{}
	for i := len(f.pis) - 1; i >= 0; i-- {
		if md, _ := f.pis[i].m["metadata"].(map[string]any); md[name] == val.String() {
			data = append(data, f.pis[i].m)
		}
	}
	return map[string]any{"object": "search_result", "url": "/v1/payment_intents/search", "has_more": false, "next_page": nil, "data": data}, nil
}

var cancellable = []string{"requires_payment_method", "requires_capture", "requires_confirmation", "requires_action", "processing"}

func (f *Fake) cancelPI(id string) (map[string]any, *apiErr) {
	o := find(f.pis, "id", id)
	if o == nil {
		return nil, missing("payment_intent", id)
	}
	pi := o.m
	if md, _ := pi["metadata"].(map[string]any); md["paykit_checkout"] != nil {
		return nil, invalid("", "You cannot cancel this PaymentIntent because it was created by Checkout. Expire the Checkout Session instead.")
	}
	st, _ := pi["status"].(string)
	if !slices.Contains(cancellable, st) {
		e := invalid("", "You cannot cancel this PaymentIntent because it has a status of %s. Only a PaymentIntent with one of the following statuses may be canceled: %s.", st, strings.Join(cancellable, ", "))
		e.code, e.pi = "payment_intent_unexpected_state", pi
		return nil, e
	}
	pi["status"], pi["next_action"], pi["canceled_at"], pi["cancellation_reason"] = "canceled", nil, f.now(), "requested_by_customer"
	f.emit("payment_intent.canceled", pi)
	return pi, nil
}

func (f *Fake) createSession(form url.Values) (map[string]any, *apiErr) {
	if form.Get("mode") != "payment" {
		return nil, invalid("mode", "The fake only serves mode=payment.")
	}
	if form.Get("success_url") == "" {
		return nil, invalid("success_url", "Missing required param: success_url.")
	}
	if t := form.Get("payment_method_types[0]"); t != "" && t != "card" {
		return nil, invalid("payment_method_types[0]", "The fake serves card Checkout Sessions only.")
	}
	currency := form.Get("line_items[0][price_data][currency]")
	if currency == "" {
		return nil, invalid("line_items[0][price_data][currency]", "Missing required param: line_items[0][price_data][currency].")
	}
	if form.Get("line_items[0][price_data][product_data][name]") == "" {
		return nil, invalid("line_items[0][price_data][product_data][name]", "Missing required param: line_items[0][price_data][product_data][name].")
	}
	if form.Get("line_items[0][quantity]") != "1" {
		return nil, invalid("line_items[0][quantity]", "The fake takes a quantity of 1.")
	}
	amt, e := amount(form, "line_items[0][price_data][unit_amount]", currency)
	if e != nil {
		return nil, e
	}
	id := newID("cs_test_", 58)
	s := map[string]any{
		"id": id, "object": "checkout.session", "mode": "payment", "status": "open", "payment_status": "unpaid",
		"url": "https://checkout.stripe.com/c/pay/" + id, "amount_total": amt, "amount_subtotal": amt, "currency": currency,
		"metadata": metadata(form, "metadata"), "payment_intent": nil, "success_url": form.Get("success_url"),
		"cancel_url": form.Get("cancel_url"), "customer_email": nilIfEmpty(form.Get("customer_email")),
		"payment_method_types": []string{"card"}, "created": f.now(), "expires_at": f.now() + 24*3600, "livemode": false,
	}
	f.css = append(f.css, &object{m: s, piMeta: metadata(form, "payment_intent_data[metadata]")})
	return s, nil
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// listSessions lists the newest sessions, of one PaymentIntent if pi is
// set.
func (f *Fake) listSessions(pi, limit string) map[string]any {
	var objs []*object
	for _, o := range f.css {
		if pi == "" || o.m["payment_intent"] == pi {
			objs = append(objs, o)
		}
	}
	return f.list(objs, "/v1/checkout/sessions", limit)
}

func (f *Fake) expireSession(id string) (map[string]any, *apiErr) {
	o := find(f.css, "id", id)
	if o == nil {
		return nil, missing("checkout.session", id)
	}
	if o.m["status"] != "open" {
		return nil, invalid("", `Only Checkout Sessions with a status in ["open"] can be expired.`)
	}
	o.m["status"] = "expired"
	f.emit("checkout.session.expired", o.m)
	return o.m, nil
}

// refunded is what the non-failed refunds of a PaymentIntent took.
func (f *Fake) refunded(pi string) int64 {
	var n int64
	for _, o := range f.res {
		if o.m["payment_intent"] == pi && o.m["status"] != "failed" && o.m["status"] != "canceled" {
			n += o.m["amount"].(int64)
		}
	}
	return n
}

func (f *Fake) createRefund(form url.Values) (map[string]any, *apiErr) {
	piID := form.Get("payment_intent")
	if piID == "" && form.Get("charge") == "" {
		return nil, invalid("", "One of the following params should be provided for this request: payment_intent or charge.")
	}
	o := find(f.pis, "id", piID)
	if o == nil {
		e := invalid("payment_intent", "No such payment_intent: '%s'", piID)
		e.code = "resource_missing"
		return nil, e
	}
	pi := o.m
	if pi["status"] != "succeeded" {
		return nil, invalid("payment_intent", "This PaymentIntent (%s) does not have a successful charge to refund.", piID)
	}
	if ch := find(f.chs, "id", str(pi["latest_charge"])); ch != nil && ch.m["disputed"] == true {
		e := invalid("", "Charge %s has been charged back; cannot issue a refund.", ch.m["id"])
		e.code = "charge_disputed"
		return nil, e
	}
	left := pi["amount_received"].(int64) - f.refunded(piID)
	amt := left
	if form.Get("amount") != "" {
		n, err := strconv.ParseInt(form.Get("amount"), 10, 64)
		if err != nil || n < 1 {
			return nil, invalid("amount", "Invalid integer: %s", form.Get("amount"))
		}
		amt = n
	}
	if left == 0 {
		e := invalid("", "Charge %s has already been refunded.", pi["latest_charge"])
		e.code = "charge_already_refunded"
		return nil, e
	}
	if amt > left {
		return nil, invalid("amount", "Refund amount (%d) is greater than unrefunded amount on charge (%d)", amt, left)
	}
	rf := map[string]any{
		"id": newID("re_", 24), "object": "refund", "amount": amt, "currency": pi["currency"], "status": "pending",
		"payment_intent": piID, "charge": pi["latest_charge"], "metadata": metadata(form, "metadata"), "reason": nil,
		"created": f.now(), "balance_transaction": nil, "failure_balance_transaction": nil, "receipt_number": nil,
	}
	f.res = append(f.res, &object{m: rf})
	rf["balance_transaction"] = f.refundTransaction(rf, pi, false)
	f.emit("refund.created", rf)
	if amt%1000 == 911 {
		rf["status"], rf["failure_reason"] = "failed", "declined"
		rf["failure_balance_transaction"] = f.refundTransaction(rf, pi, true)
		f.emit("refund.failed", rf)
	}
	return rf, nil
}

// list is a list answer of the newest objects, limit (1-100, default 10)
// at most.
func (f *Fake) list(objs []*object, u, limit string) map[string]any {
	n, err := strconv.Atoi(limit)
	if err != nil || n < 1 || n > 100 {
		n = 10
	}
	data := []map[string]any{}
	for i := len(objs) - 1; i >= 0 && len(data) < n; i-- {
		data = append(data, objs[i].m)
	}
	return map[string]any{"object": "list", "url": u, "has_more": len(objs) > n, "data": data}
}

// emit records an event about a snapshot of obj (under f.mu).
func (f *Fake) emit(typ string, obj map[string]any) {
	b, _ := json.Marshal(obj)
	f.evts = append(f.evts, map[string]any{
		"id": newID("evt_", 24), "object": "event", "api_version": "2025-03-31.basil", "created": f.now(),
		"type": typ, "livemode": false, "pending_webhooks": 1, "data": map[string]any{"object": json.RawMessage(b)},
		"request": map[string]any{"id": nil, "idempotency_key": nil},
	})
}

// deliver posts events to WebhookURL, signed (not under f.mu).
func (f *Fake) deliver(evts []map[string]any) {
	if f.opts.WebhookURL == "" {
		return
	}
	c := &http.Client{Timeout: 5 * time.Second}
	for _, e := range evts {
		req, err := f.signed(e)
		if err != nil {
			continue
		}
		if resp, err := c.Do(req); err == nil {
			resp.Body.Close()
		}
	}
}

// signed is a webhook request carrying event e, signed as Stripe signs.
func (f *Fake) signed(e map[string]any) (*http.Request, error) {
	body, err := json.Marshal(e)
	if err != nil {
		return nil, err
	}
	u := f.opts.WebhookURL
	if u == "" {
		u = "http://localhost/webhooks/stripe"
	}
	req, err := http.NewRequest(http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json; charset=utf-8")
	req.Header.Set("User-Agent", "Stripe/1.0 (+https://stripe.com/docs/webhooks)")
	req.Header.Set("Stripe-Signature", Sign(body, f.opts.WebhookSecret, f.opts.Now()))
	return req, nil
}

// Sign is a Stripe-Signature value for payload: t and v1, the hex
// HMAC-SHA256 of "t.payload" under secret, as stripe.Sign makes it.
func Sign(payload []byte, secret string, t time.Time) string {
	return stripe.Sign(payload, secret, t)
}

// Events returns the types of the events emitted so far, oldest first.
func (f *Fake) Events() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, e := range f.evts {
		out = append(out, e["type"].(string))
	}
	return out
}

// ErrNotFound: nothing under the key.
var ErrNotFound = errors.New("stripefake: nothing under that key")

// Approve acts as the payer completing the next action of the attempt
// under key: a PaymentIntent waiting for action succeeds
// (payment_intent.succeeded); an open Checkout Session completes paid
// (checkout.session.completed) with a succeeded PaymentIntent.
func (f *Fake) Approve(key string) error {
	return f.act(func() error { return f.approve(key) })
}

func (f *Fake) approve(key string) error {
	if o := byKey(f.pis, key); o != nil && o.m["metadata"].(map[string]any)["paykit_checkout"] == nil {
		if st := o.m["status"]; st != "requires_action" && st != "processing" {
			return fmt.Errorf("stripefake: PaymentIntent %s is %s, not waiting for the payer", o.m["id"], st)
		}
		f.succeed(o.m)
		return nil
	}
	s := byKey(f.css, key)
	if s == nil {
		return ErrNotFound
	}
	if s.m["status"] != "open" {
		return fmt.Errorf("stripefake: Checkout Session %s is %s", s.m["id"], s.m["status"])
	}
	pi := f.sessionPI(s)
	f.succeed(pi)
	s.m["status"], s.m["payment_status"] = "complete", "paid"
	f.emit("checkout.session.completed", s.m)
	return nil
}

// sessionPI returns the session's PaymentIntent, creating it (a card
// payment) on first use.
func (f *Fake) sessionPI(s *object) map[string]any {
	if id, ok := s.m["payment_intent"].(string); ok {
		return find(f.pis, "id", id).m
	}
	id := newID("pi_", 24)
	md := map[string]any{}
	for k, v := range s.piMeta {
		md[k] = v
	}
	pi := map[string]any{
		"id": id, "object": "payment_intent", "amount": s.m["amount_total"], "amount_capturable": 0, "amount_received": int64(0),
		"currency": s.m["currency"], "status": "requires_payment_method", "metadata": md, "next_action": nil,
		"last_payment_error": nil, "latest_charge": nil, "payment_method_types": []string{"card"}, "capture_method": "automatic",
		"client_secret": id + "_secret_" + newID("", 25), "created": f.now(), "livemode": false, "canceled_at": nil, "cancellation_reason": nil,
	}
	f.pis = append(f.pis, &object{m: pi})
	s.m["payment_intent"] = id
	return pi
}

func (f *Fake) succeed(pi map[string]any) {
	pi["status"], pi["next_action"], pi["last_payment_error"] = "succeeded", nil, nil
	pi["amount_received"], pi["latest_charge"] = pi["amount"], f.charge(pi)
	pi["payment_method"] = newID("pm_", 24)
	f.emit("payment_intent.succeeded", pi)
}

// Decline acts as the payer's bank or wallet declining the attempt under
// key: a PaymentIntent goes to requires_payment_method with a
// last_payment_error (payment_intent.payment_failed). An open Checkout
// Session stays open (the payer may try another card); its PaymentIntent
// records the failure.
func (f *Fake) Decline(key string) error {
	return f.act(func() error { return f.decline(key) })
}

func (f *Fake) decline(key string) error {
	if o := byKey(f.pis, key); o != nil && o.m["metadata"].(map[string]any)["paykit_checkout"] == nil {
		if st := o.m["status"]; st != "requires_action" && st != "processing" {
			return fmt.Errorf("stripefake: PaymentIntent %s is %s, not waiting for the payer", o.m["id"], st)
		}
		f.fail(o)
		return nil
	}
	s := byKey(f.css, key)
	if s == nil {
		return ErrNotFound
	}
	if s.m["status"] != "open" {
		return fmt.Errorf("stripefake: Checkout Session %s is %s", s.m["id"], s.m["status"])
	}
	f.fail(&object{m: f.sessionPI(s)})
	return nil
}

// SettleRefund makes the pending refund under key succeed (refund.updated).
func (f *Fake) SettleRefund(key string) error {
	return f.act(func() error {
		o := byKey(f.res, key)
		switch {
		case o == nil:
			return ErrNotFound
		case o.m["status"] != "pending":
			return fmt.Errorf("stripefake: refund %s is %s", o.m["id"], o.m["status"])
		}
		o.m["status"] = "succeeded"
		f.emit("refund.updated", o.m)
		return nil
	})
}

// act runs fn under the lock, then delivers the events fn emitted.
func (f *Fake) act(fn func() error) error {
	f.mu.Lock()
	before := len(f.evts)
	err := fn()
	evts := slices.Clone(f.evts[before:])
	f.mu.Unlock()
	f.deliver(evts)
	return err
}

// Webhook returns a signed webhook request of type eventType about the
// current state of the object under key: payment_intent.* events are about
// the PaymentIntent, checkout.session.* about the Checkout Session,
// refund.* and charge.refund.updated about the Refund, and charge.dispute.*
// about the newest dispute of the payment under key.
func (f *Fake) Webhook(eventType, key string) (*http.Request, error) {
	f.mu.Lock()
	var objs []*object
	switch {
	case strings.HasPrefix(eventType, "payment_intent."):
		objs = f.pis
	case strings.HasPrefix(eventType, "checkout.session."):
		objs = f.css
	case strings.HasPrefix(eventType, "refund.") || eventType == "charge.refund.updated":
		objs = f.res
	case strings.HasPrefix(eventType, "charge.dispute."):
		objs = f.disputesOf(key)
	default:
		f.mu.Unlock()
		return nil, fmt.Errorf("stripefake: no object for event type %q", eventType)
	}
	o := byKey(objs, key)
	if strings.HasPrefix(eventType, "charge.dispute.") && len(objs) > 0 {
		o = objs[len(objs)-1]
	}
	if o == nil {
		f.mu.Unlock()
		return nil, ErrNotFound
	}
	f.emit(eventType, o.m)
	e := f.evts[len(f.evts)-1]
	f.evts = f.evts[:len(f.evts)-1] // not an event of the fake's own
	f.mu.Unlock()
	return f.signed(e)
}

// Received reports the amount and currency (uppercase) recorded for the
// PaymentIntent, Checkout Session or Refund under key.
func (f *Fake) Received(key string) (int64, string, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if o := byKey(f.res, key); o != nil {
		return o.m["amount"].(int64), strings.ToUpper(o.m["currency"].(string)), true
	}
	if o := byKey(f.css, key); o != nil {
		return o.m["amount_total"].(int64), strings.ToUpper(o.m["currency"].(string)), true
	}
	if o := byKey(f.pis, key); o != nil {
		return o.m["amount"].(int64), strings.ToUpper(o.m["currency"].(string)), true
	}
	return 0, "", false
}

// PromptPayPayload returns an EMVCo merchant-presented QR payload for a
// PromptPay bill payment of amount satang, ending in its CRC-16/CCITT.
func PromptPayPayload(ref string, amount int64) string {
	ref = strings.ToUpper(strings.NewReplacer("_", "").Replace(ref))
	if len(ref) > 20 {
		ref = ref[len(ref)-20:]
	}
	merchant := emvco.TLV("00", "A000000677010112") + emvco.TLV("01", "010753600010286") + emvco.TLV("02", ref)
	return emvco.Payload(emvco.TLV("00", "01"), emvco.TLV("01", "12"), emvco.TLV("30", merchant),
		emvco.TLV("53", "764"), emvco.TLV("54", emvco.Amount(amount)), emvco.TLV("58", "TH"))
}
