// Package xenditfake is a stateful fake of the Xendit API endpoints the
// provider/xendit adapter uses, for tests: payment requests and payments
// (Payments API v3, with the test-mode simulate endpoint), refunds,
// payouts (Payouts API v2), transactions (the Transactions API, with fees
// and settlement status) and disputes (the Disputes API, with its sandbox
// simulate endpoint), answering with the JSON objects and error objects
// of Xendit's API reference, written from the documentation. Webhooks carry
// the account's x-callback-token.
//
// Idempotency: POST /v2/payouts requires an Idempotency-key and POST
// /refunds honours one, as documented: the same key with the same body
// answers the first answer again, with another body 409 DUPLICATE_ERROR.
// POST /v3/payment_requests documents no idempotency key and the fake
// honours none (the adapter looks for the reference_id first).
//
// Channels take the amounts their documentation states (TOUCHNGO 1 to
// 25,000 MYR, GRABPAY 1 to 1,500, WECHATPAY 0.10 to 25,000, FPX 1 to
// 30,000, AMBANK_VIRTUAL_ACCOUNT 1 to 10,000,000, TRUEMONEY 1 to 50,000
// THB, QRPROMPTPAY 1 to 700,000): an amount outside is 400
// INVALID_VALUE_ERROR, as is a channel the account does not have
// (DisableChannel). Refunds follow each channel's page: FPX, PromptPay,
// virtual accounts and Thai WeChat Pay take none (403
// REFUND_NOT_SUPPORTED), Malaysian WeChat Pay only full ones.
//
// A payment request waits for the payer (REQUIRES_ACTION, with Xendit's
// page as a WEB_URL, a QR_STRING or a VIRTUAL_ACCOUNT_NUMBER) until the
// simulate endpoint (or Approve) pays it: the payment request SUCCEEDS,
// a payment (py-…) and its PAYMENT transaction are made, and the webhook
// payment.capture is sent. The transaction states the fake's fee: 2.5 %
// of the amount (xendit_fee) plus 8 % (MYR) or 7 % (THB) of it as
// value_added_tax, each rounded half up to a minor unit, and
// estimated_settlement_time Options.SettleAfter after the payment (default
// 48 hours); its settlement_status is PENDING until then, SETTLED after.
//
// Magic values (the fake's own): a payment amount whose minor units end
// in 901 fails at once (failure_code DECLINED_BY_PROCESSOR); a refund
// amount ending in 911 fails (REFUND_FAILED); a payout to account number
// InvalidAccount fails (INVALID_DESTINATION); one to 131313 stays
// ACCEPTED, as Xendit's payout test scenarios document. With Options.Auto
// a payout is sent and succeeds (or fails) and a refund succeeds right
// after its create answer, as in Xendit's test mode; otherwise the test
// moves them (SendPayout, CompletePayout, FailPayout, ReversePayout,
// SettleRefund). A dispute challenged with text containing
// winning_evidence is won at once, losing_evidence lost.
package xenditfake

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/paykit/paykit/internal/emvco"
)

// InvalidAccount is the account number whose payouts fail with
// INVALID_DESTINATION.
const InvalidAccount = "999000999000"

// HoldAccount is the account number whose payouts stay ACCEPTED (Xendit's
// documented test scenario for cancelling a payout).
const HoldAccount = "131313"

// Options configures a Fake.
type Options struct {
	SecretKey string // required on every call (HTTP Basic user)
	// CallbackToken is the account's webhook verification token; default
	// a random one (see Fake.CallbackToken).
	CallbackToken string
	// WebhookURL, if set, receives every webhook, synchronously, after
	// the call that caused it has answered.
	WebhookURL string
	// Now is the fake's clock; default time.Now.
	Now func() time.Time
	// SettleAfter is how long after a payment its funds settle; default
	// 48 hours.
	SettleAfter time.Duration
	// Auto makes payouts and refunds complete right after their create
	// answer (Xendit's test mode).
	Auto bool
	// Client posts webhooks; default http.DefaultClient.
	Client *http.Client
}

// Fake is the fake Xendit API; it is an http.Handler.
type Fake struct {
	opt Options

	mu       sync.Mutex
	seq      int
	prs      map[string]*paymentRequest // payment_request_id →
	prOrder  []string
	prByKey  map[string][]string // reference_id → payment_request_ids, oldest first
	payments map[string]*payment // payment_id →
	refunds  map[string]*refund
	rfOrder  []string
	payouts  map[string]*payout
	poOrder  []string
	disputes map[string]*dispute
	dsOrder  []string
	txns     []*transaction
	idem     map[string]stored
	creates  map[string]int  // reference_id → payment requests created under it
	disabled map[string]bool // channel codes the account does not have
	outbox   [][]byte
}

type stored struct {
	digest [32]byte // of the request body
	status int
	body   []byte
}

// New returns a Fake.
func New(opt Options) *Fake {
	if opt.Now == nil {
		opt.Now = time.Now
	}
	if opt.SettleAfter <= 0 {
		opt.SettleAfter = 48 * time.Hour
	}
	if opt.Client == nil {
		opt.Client = http.DefaultClient
	}
	if opt.CallbackToken == "" {
		b := make([]byte, 24)
		_, _ = rand.Read(b)
		opt.CallbackToken = hex.EncodeToString(b)
	}
	return &Fake{
		opt: opt, prs: map[string]*paymentRequest{}, payments: map[string]*payment{}, refunds: map[string]*refund{},
		payouts: map[string]*payout{}, disputes: map[string]*dispute{}, idem: map[string]stored{},
		creates: map[string]int{}, disabled: map[string]bool{}, prByKey: map[string][]string{},
	}
}

// CallbackToken is the verification token the fake's webhooks carry.
func (f *Fake) CallbackToken() string { return f.opt.CallbackToken }

// businessID is the fake account's business id.
const businessID = "5f27a14a9bf05c73dd040bc8"

// newID returns a Xendit-style id: prefix, then a UUID-shaped random
// string ("pr-" + 36 characters is Xendit's 39).
func (f *Fake) newID(prefix string) string {
	f.seq++
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	binary := fmt.Sprintf("%08x", f.seq) + hex.EncodeToString(b[4:])
	return fmt.Sprintf("%s%s-%s-%s-%s-%s", prefix, binary[0:8], binary[8:12], binary[12:16], binary[16:20], binary[20:32])
}

func (f *Fake) now() time.Time { return f.opt.Now().UTC() }

func stamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// ServeHTTP serves the API.
func (f *Fake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	user, _, ok := r.BasicAuth()
	if !ok || user != f.opt.SecretKey {
		writeError(w, http.StatusUnauthorized, "INVALID_API_KEY", "API key is invalid")
		return
	}
	if v := r.Header.Get("api-version"); v != "" && v != "2024-11-11" {
		writeError(w, http.StatusBadRequest, "API_VALIDATION_ERROR", "api-version "+v+" is not supported")
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		writeError(w, http.StatusBadRequest, "API_VALIDATION_ERROR", "unreadable body")
		return
	}
	key := r.Header.Get("Idempotency-key")
	idempotent := r.Method == http.MethodPost && (r.URL.Path == "/v2/payouts" || r.URL.Path == "/refunds")
	if r.URL.Path == "/v2/payouts" && r.Method == http.MethodPost && key == "" {
		writeError(w, http.StatusBadRequest, "API_VALIDATION_ERROR", "Idempotency-key header is required")
		return
	}
	if !idempotent || key == "" {
		f.route(w, r, body)
		f.answered(w)
		return
	}
	ik, digest := r.URL.Path+" "+key, sha256.Sum256(body)
	f.mu.Lock()
	prev, seen := f.idem[ik]
	f.mu.Unlock()
	if seen {
		if prev.digest != digest {
			writeError(w, http.StatusConflict, "DUPLICATE_ERROR", "Idempotency key has been used before with another request")
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(prev.status)
		_, _ = w.Write(prev.body)
		return
	}
	rec := httptest.NewRecorder()
	f.route(rec, r, body)
	f.mu.Lock()
	if _, raced := f.idem[ik]; !raced && rec.Code < 500 {
		f.idem[ik] = stored{digest, rec.Code, rec.Body.Bytes()}
	}
	f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(rec.Code)
	_, _ = w.Write(rec.Body.Bytes())
	f.answered(w)
}

// answered sends the answer on its way, then the webhooks the call
// queued: Xendit answers first and notifies after.
func (f *Fake) answered(w http.ResponseWriter) {
	if fl, ok := w.(http.Flusher); ok {
		fl.Flush()
	}
	f.flush()
}

func (f *Fake) route(w http.ResponseWriter, r *http.Request, body []byte) {
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	at := func(n int, segs ...string) bool {
		if len(parts) != n {
			return false
		}
		for i, s := range segs {
			if s != "*" && parts[i] != s {
				return false
			}
		}
		return true
	}
	get, post := r.Method == http.MethodGet, r.Method == http.MethodPost
	switch {
	case post && at(2, "v3", "payment_requests"):
		f.createPaymentRequest(w, body)
	case get && at(2, "v3", "payment_requests"):
		f.listPaymentRequests(w, r)
	case get && at(3, "v3", "payment_requests"):
		f.getPaymentRequest(w, parts[2])
	case post && at(4, "v3", "payment_requests", "*", "cancel"):
		f.cancelPaymentRequest(w, parts[2])
	case post && at(4, "v3", "payment_requests", "*", "simulate"):
		f.simulatePayment(w, parts[2])
	case get && at(3, "v3", "payments"):
		f.getPayment(w, parts[2])
	case post && at(1, "refunds"):
		f.createRefund(w, body)
	case get && at(1, "refunds"):
		f.listRefunds(w, r)
	case get && at(2, "refunds"):
		f.getRefund(w, parts[1])
	case post && at(2, "v2", "payouts"):
		f.createPayout(w, body)
	case get && at(2, "v2", "payouts"):
		f.listPayouts(w, r)
	case get && at(3, "v2", "payouts"):
		f.getPayout(w, parts[2])
	case post && at(4, "v2", "payouts", "*", "cancel"):
		f.cancelPayout(w, parts[2])
	case get && at(1, "transactions"):
		f.listTransactions(w, r)
	case get && at(2, "transactions"):
		f.getTransaction(w, parts[1])
	case post && at(3, "v1", "disputes", "simulate"):
		f.simulateDispute(w, body)
	case get && at(3, "v1", "disputes"):
		f.getDispute(w, parts[2])
	case post && at(4, "v1", "disputes", "*", "evidences"):
		f.addEvidence(w, r, body, parts[2])
	case post && at(4, "v1", "disputes", "*", "challenge"):
		f.challengeDispute(w, parts[2])
	case post && at(4, "v1", "disputes", "*", "accept"):
		f.acceptDispute(w, parts[2])
	default:
		writeError(w, http.StatusNotFound, "DATA_NOT_FOUND", "ID specified in request cannot be found")
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// writeError answers Xendit's error object.
func writeError(w http.ResponseWriter, status int, code, msg string) {
	writeJSON(w, status, map[string]string{"error_code": code, "message": msg})
}

// list answers Xendit's list envelope.
func writeList[T any](w http.ResponseWriter, data []T) {
	if data == nil {
		data = []T{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": data, "has_more": false, "links": []any{}})
}

// getObject answers the object id of objects, or Xendit's 404.
func getObject[T any](f *Fake, w http.ResponseWriter, objects map[string]*T, id, what string) {
	f.mu.Lock()
	obj, ok := objects[id]
	var out json.RawMessage
	if ok {
		out = clone(obj)
	}
	f.mu.Unlock()
	if !ok {
		writeError(w, http.StatusNotFound, "DATA_NOT_FOUND", what+" "+id+" cannot be found")
		return
	}
	writeJSON(w, http.StatusOK, out)
}

// decimal renders minor units of a two-decimal currency as Xendit's
// amount ("150.25").
func decimal(minor int64) json.Number { return json.Number(emvco.Amount(minor)) }

// parseAmount reads a request amount (a JSON number or string) of a
// two-decimal currency in minor units.
func parseAmount(raw json.RawMessage) (int64, bool) {
	s := strings.Trim(string(raw), `"`)
	whole, frac, _ := strings.Cut(s, ".")
	if whole == "" || len(frac) > 2 || strings.ContainsAny(s, "eE+-") {
		return 0, false
	}
	frac += strings.Repeat("0", 2-len(frac))
	n, err := strconv.ParseInt(whole+frac, 10, 64)
	if err != nil || n <= 0 {
		return 0, false
	}
	return n, true
}

// clone is a deep copy of v as JSON, for answers and webhooks.
func clone(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// emit queues a webhook. f.mu is held.
func (f *Fake) emit(event string, data any) {
	if f.opt.WebhookURL == "" {
		return
	}
	f.outbox = append(f.outbox, envelope(event, data, f.now()))
}

// envelope is the body of a payment, refund or payout webhook.
func envelope(event string, data any, at time.Time) []byte {
	return clone(map[string]any{"event": event, "business_id": businessID, "created": stamp(at), "data": data})
}

// flush posts the queued webhooks in order (f.mu is not held: the
// receiver may call the fake).
func (f *Fake) flush() {
	f.mu.Lock()
	out := f.outbox
	f.outbox = nil
	f.mu.Unlock()
	for _, body := range out {
		resp, err := f.opt.Client.Do(f.signed(f.opt.WebhookURL, body))
		if err != nil {
			continue
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
	}
}

// signed is a webhook request of body carrying the callback token.
func (f *Fake) signed(target string, body []byte) *http.Request {
	r, err := http.NewRequest(http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		panic(err)
	}
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("x-callback-token", f.opt.CallbackToken)
	return r
}

// Webhook returns the webhook of event (payment.capture, refund.succeeded,
// payout.failed, dispute.action_required, …) about the newest payment
// request, refund, payout or dispute under reference_id key, as Xendit
// would POST it now.
func (f *Fake) Webhook(event, key string) (*http.Request, error) {
	f.mu.Lock()
	body, err := f.webhookBody(event, key)
	f.mu.Unlock()
	if err != nil {
		return nil, err
	}
	target := f.opt.WebhookURL
	if target == "" {
		target = "http://merchant.invalid/webhooks/xendit"
	}
	return f.signed(target, body), nil
}

// webhookBody builds a webhook body. f.mu is held.
func (f *Fake) webhookBody(event, key string) ([]byte, error) {
	family, _, _ := strings.Cut(event, ".")
	switch family {
	case "payment":
		pr := f.prByRef(key)
		if pr == nil {
			return nil, fmt.Errorf("xenditfake: no payment request under %s", key)
		}
		return envelope(event, f.paymentView(pr), f.now()), nil
	case "refund":
		rf := f.refundByRef(key)
		if rf == nil {
			return nil, fmt.Errorf("xenditfake: no refund under %s", key)
		}
		return envelope(event, rf, f.now()), nil
	case "payout":
		po := f.payoutByRef(key)
		if po == nil {
			return nil, fmt.Errorf("xenditfake: no payout under %s", key)
		}
		return envelope(event, po, f.now()), nil
	case "dispute":
		d := f.disputeByRef(key)
		if d == nil {
			return nil, fmt.Errorf("xenditfake: no dispute of the payment under %s", key)
		}
		return disputeEnvelope(event, d), nil
	}
	return nil, fmt.Errorf("xenditfake: event %s is not one the fake sends", event)
}
