package xenditfake

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/paykit/paykit/internal/emvco"
)

// channelSpec is what the fake knows of a payment channel: its country,
// currency, amount limits (minor units), how the payer acts and whether
// it refunds.
type channelSpec struct {
	country, currency string
	min, max          int64
	action            string // REDIRECT, QR or VA
	refund, partial   bool
}

// fpxBanks are the {Bank Name} of the FPX channel codes ({Bank Name}_FPX).
var fpxBanks = []string{"AFFIN", "AGRO", "ALLIANCE", "AMBANK", "BOC", "BSN", "CIMB", "HLB", "HSBC", "ISLAM", "KFH",
	"MAYB2E", "MAYB2U", "MUAMALAT", "OCBC", "PUBLIC", "RAKYAT", "RHB", "SCH", "UOB"}

// spec finds the channel of a payment request.
func spec(code, country string) (channelSpec, bool) {
	if bank, ok := strings.CutSuffix(code, "_FPX"); ok {
		for _, b := range fpxBanks {
			if b == bank {
				return channelSpec{"MY", "MYR", 100, 3000000, "REDIRECT", false, false}, country == "MY"
			}
		}
		return channelSpec{}, false
	}
	specs := map[string]channelSpec{
		"MY/TOUCHNGO":               {"MY", "MYR", 100, 2500000, "REDIRECT", true, true},
		"MY/GRABPAY":                {"MY", "MYR", 100, 150000, "REDIRECT", true, true},
		"MY/WECHATPAY":              {"MY", "MYR", 10, 2500000, "REDIRECT", true, false},
		"MY/AMBANK_VIRTUAL_ACCOUNT": {"MY", "MYR", 100, 1000000000, "VA", false, false},
		"TH/TRUEMONEY":              {"TH", "THB", 100, 5000000, "REDIRECT", true, true},
		"TH/QRPROMPTPAY":            {"TH", "THB", 100, 70000000, "QR", false, false},
		"TH/WECHATPAY":              {"TH", "THB", 100, 2500000, "REDIRECT", false, false},
	}
	s, ok := specs[country+"/"+code]
	return s, ok
}

// paymentRequest is a Payments API v3 payment request.
type paymentRequest struct {
	BusinessID        string         `json:"business_id"`
	ReferenceID       string         `json:"reference_id"`
	ID                string         `json:"payment_request_id"`
	LatestPaymentID   string         `json:"latest_payment_id,omitempty"`
	Type              string         `json:"type"`
	Country           string         `json:"country"`
	Currency          string         `json:"currency"`
	RequestAmount     json.Number    `json:"request_amount"`
	CaptureMethod     string         `json:"capture_method"`
	ChannelCode       string         `json:"channel_code"`
	ChannelProperties map[string]any `json:"channel_properties"`
	Actions           []action       `json:"actions"`
	Status            string         `json:"status"`
	FailureCode       string         `json:"failure_code,omitempty"`
	Description       string         `json:"description,omitempty"`
	Metadata          map[string]any `json:"metadata,omitempty"`
	Created           string         `json:"created"`
	Updated           string         `json:"updated"`

	amount int64
}

type action struct {
	Type       string `json:"type"`
	Descriptor string `json:"descriptor"`
	Value      string `json:"value"`
}

// payment is a Payments API v3 payment.
type payment struct {
	PaymentID        string         `json:"payment_id"`
	BusinessID       string         `json:"business_id"`
	ReferenceID      string         `json:"reference_id"`
	PaymentRequestID string         `json:"payment_request_id"`
	Type             string         `json:"type"`
	Country          string         `json:"country"`
	Currency         string         `json:"currency"`
	RequestAmount    json.Number    `json:"request_amount"`
	CaptureMethod    string         `json:"capture_method"`
	ChannelCode      string         `json:"channel_code"`
	Status           string         `json:"status"`
	FailureCode      string         `json:"failure_code,omitempty"`
	Metadata         map[string]any `json:"metadata,omitempty"`
	Created          string         `json:"created"`
	Updated          string         `json:"updated"`
}

func (f *Fake) createPaymentRequest(w http.ResponseWriter, body []byte) {
	var in struct {
		ReferenceID       string          `json:"reference_id"`
		Type              string          `json:"type"`
		Country           string          `json:"country"`
		Currency          string          `json:"currency"`
		RequestAmount     json.RawMessage `json:"request_amount"`
		CaptureMethod     string          `json:"capture_method"`
		ChannelCode       string          `json:"channel_code"`
		ChannelProperties map[string]any  `json:"channel_properties"`
		Description       string          `json:"description"`
		Metadata          map[string]any  `json:"metadata"`
	}
	if err := json.Unmarshal(body, &in); err != nil {
		writeError(w, http.StatusBadRequest, "API_VALIDATION_ERROR", "request body is not valid JSON")
		return
	}
	amount, ok := parseAmount(in.RequestAmount)
	switch {
	case in.ReferenceID == "" || len(in.ReferenceID) > 255:
		writeError(w, http.StatusBadRequest, "API_VALIDATION_ERROR", "reference_id is required (1 to 255 characters)")
		return
	case in.Type != "PAY":
		writeError(w, http.StatusBadRequest, "API_VALIDATION_ERROR", "type must be PAY")
		return
	case !ok:
		writeError(w, http.StatusBadRequest, "API_VALIDATION_ERROR", "request_amount must be a positive amount")
		return
	case in.ChannelCode == "" || in.ChannelProperties == nil:
		writeError(w, http.StatusBadRequest, "API_VALIDATION_ERROR", "channel_code and channel_properties are required")
		return
	}
	ch, known := spec(in.ChannelCode, in.Country)
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case !known || f.disabled[in.ChannelCode]:
		writeError(w, http.StatusBadRequest, "INVALID_VALUE_ERROR", fmt.Sprintf("channel_code %s is not activated for %s", in.ChannelCode, in.Country))
		return
	case in.Currency != ch.currency:
		writeError(w, http.StatusBadRequest, "INVALID_VALUE_ERROR", fmt.Sprintf("currency %s is not supported by %s", in.Currency, in.ChannelCode))
		return
	case amount < ch.min || amount > ch.max:
		writeError(w, http.StatusBadRequest, "INVALID_VALUE_ERROR", fmt.Sprintf("request_amount must be between %s and %s for %s", decimal(ch.min), decimal(ch.max), in.ChannelCode))
		return
	}
	now := f.now()
	pr := &paymentRequest{
		BusinessID: businessID, ReferenceID: in.ReferenceID, ID: f.newID("pr-"), Type: "PAY", Country: in.Country,
		Currency: in.Currency, RequestAmount: decimal(amount), CaptureMethod: "AUTOMATIC", ChannelCode: in.ChannelCode,
		ChannelProperties: in.ChannelProperties, Status: "REQUIRES_ACTION", Description: in.Description, Metadata: in.Metadata,
		Created: stamp(now), Updated: stamp(now), amount: amount,
	}
	switch ch.action {
	case "QR":
		pr.Actions = []action{{Type: "PRESENT_TO_CUSTOMER", Descriptor: "QR_STRING", Value: PromptPayQR(pr.ID, amount)}}
	case "VA":
		pr.Actions = []action{{Type: "PRESENT_TO_CUSTOMER", Descriptor: "VIRTUAL_ACCOUNT_NUMBER", Value: fmt.Sprintf("8881%08d", f.seq)}}
	default:
		pr.Actions = []action{{Type: "REDIRECT_CUSTOMER", Descriptor: "WEB_URL", Value: "https://checkout-staging.xendit.co/v3/" + pr.ID}}
	}
	if amount%1000 == 901 { // declined at once
		pr.Status, pr.FailureCode, pr.Actions = "FAILED", "DECLINED_BY_PROCESSOR", []action{}
		f.pay(pr, "FAILED")
	}
	f.prs[pr.ID] = pr
	f.prOrder = append(f.prOrder, pr.ID)
	f.prByKey[pr.ReferenceID] = append(f.prByKey[pr.ReferenceID], pr.ID)
	f.creates[pr.ReferenceID]++
	writeJSON(w, http.StatusCreated, pr)
}

func (f *Fake) listPaymentRequests(w http.ResponseWriter, r *http.Request) {
	ref := r.URL.Query().Get("reference_id")
	f.mu.Lock()
	ids := f.prOrder
	if ref != "" {
		ids = f.prByKey[ref]
	}
	var out []json.RawMessage
	for _, id := range ids {
		out = append(out, clone(f.prs[id]))
	}
	f.mu.Unlock()
	writeList(w, out)
}

func (f *Fake) getPaymentRequest(w http.ResponseWriter, id string) {
	getObject(f, w, f.prs, id, "payment request")
}

// awaiting returns the payment request id awaiting the payer, or answers
// Xendit's error and returns nil. f.mu is held.
func (f *Fake) awaiting(w http.ResponseWriter, id string) *paymentRequest {
	pr, ok := f.prs[id]
	switch {
	case !ok:
		writeError(w, http.StatusNotFound, "DATA_NOT_FOUND", "payment request "+id+" cannot be found")
		return nil
	case pr.Status != "REQUIRES_ACTION":
		writeError(w, http.StatusBadRequest, "INACTIVE_PAYMENT_REQUEST", "Payment request is already inactive.")
		return nil
	}
	return pr
}

func (f *Fake) cancelPaymentRequest(w http.ResponseWriter, id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	pr := f.awaiting(w, id)
	if pr == nil {
		return
	}
	pr.Status, pr.Updated = "CANCELED", stamp(f.now())
	writeJSON(w, http.StatusOK, pr)
}

// simulatePayment is the test-mode payment of a payment request.
func (f *Fake) simulatePayment(w http.ResponseWriter, id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	pr := f.awaiting(w, id)
	if pr == nil {
		return
	}
	f.complete(pr, "SUCCEEDED", "")
	writeJSON(w, http.StatusOK, map[string]string{"status": "PENDING",
		"message": "A simulated payment for the specified payment request id is being processed. You will be informed of the result via a webhook."})
}

func (f *Fake) getPayment(w http.ResponseWriter, id string) {
	getObject(f, w, f.payments, id, "payment")
}

// pay makes the payment of pr with status. f.mu is held.
func (f *Fake) pay(pr *paymentRequest, status string) *payment {
	now := f.now()
	py := &payment{
		PaymentID: f.newID("py-"), BusinessID: businessID, ReferenceID: pr.ReferenceID, PaymentRequestID: pr.ID, Type: "PAY",
		Country: pr.Country, Currency: pr.Currency, RequestAmount: pr.RequestAmount, CaptureMethod: pr.CaptureMethod,
		ChannelCode: pr.ChannelCode, Status: status, FailureCode: pr.FailureCode, Metadata: pr.Metadata, Created: stamp(now), Updated: stamp(now),
	}
	f.payments[py.PaymentID] = py
	pr.LatestPaymentID = py.PaymentID
	return py
}

// complete ends the waiting pr with status (SUCCEEDED or FAILED), its
// payment, its transaction if paid, and the webhook. f.mu is held.
func (f *Fake) complete(pr *paymentRequest, status, failure string) {
	pr.Status, pr.FailureCode, pr.Actions, pr.Updated = status, failure, []action{}, stamp(f.now())
	py := f.pay(pr, status)
	if status == "SUCCEEDED" {
		f.paymentTxn(pr, py)
		f.emit("payment.capture", py)
		return
	}
	f.emit("payment.failure", py)
}

// paymentView is the payment object a webhook about pr carries: its
// latest payment, or what it would be while none exists. f.mu is held.
func (f *Fake) paymentView(pr *paymentRequest) *payment {
	if py, ok := f.payments[pr.LatestPaymentID]; ok {
		return py
	}
	return &payment{
		BusinessID: businessID, ReferenceID: pr.ReferenceID, PaymentRequestID: pr.ID, Type: "PAY", Country: pr.Country,
		Currency: pr.Currency, RequestAmount: pr.RequestAmount, CaptureMethod: pr.CaptureMethod, ChannelCode: pr.ChannelCode,
		Status: pr.Status, Metadata: pr.Metadata, Created: pr.Created, Updated: pr.Updated,
	}
}

// prByRef is the newest payment request under reference_id key. f.mu is
// held.
func (f *Fake) prByRef(key string) *paymentRequest {
	if ids := f.prByKey[key]; len(ids) > 0 {
		return f.prs[ids[len(ids)-1]]
	}
	return nil
}

// Approve pays the waiting payment request under key, as the payer does:
// SUCCEEDED, with its payment and transaction, webhook payment.capture.
func (f *Fake) Approve(key string) error { return f.finish(key, "SUCCEEDED", "") }

// Decline makes the payer decline the waiting payment request under key:
// FAILED (USER_DECLINED_PAYMENT), webhook payment.failure.
func (f *Fake) Decline(key string) error { return f.finish(key, "FAILED", "USER_DECLINED_PAYMENT") }

// Expire makes the waiting payment request under key expire.
func (f *Fake) Expire(key string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	pr := f.prByRef(key)
	if pr == nil || pr.Status != "REQUIRES_ACTION" {
		return fmt.Errorf("xenditfake: no waiting payment request under %s", key)
	}
	pr.Status, pr.Actions, pr.Updated = "EXPIRED", []action{}, stamp(f.now())
	return nil
}

func (f *Fake) finish(key, status, failure string) error {
	defer f.flush()
	f.mu.Lock()
	defer f.mu.Unlock()
	pr := f.prByRef(key)
	if pr == nil || pr.Status != "REQUIRES_ACTION" {
		return fmt.Errorf("xenditfake: no waiting payment request under %s", key)
	}
	f.complete(pr, status, failure)
	return nil
}

// PaymentRequests is how many payment requests were created under
// reference_id key.
func (f *Fake) PaymentRequests(key string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.creates[key]
}

// DisableChannel makes the account lose (or, with on, regain) a channel:
// payment requests for it are refused with 400 INVALID_VALUE_ERROR.
func (f *Fake) DisableChannel(code string, disabled bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.disabled[code] = disabled
}

// PromptPayQR is the fake's EMVCo PromptPay payload of a payment request.
func PromptPayQR(id string, amount int64) string {
	merchant := emvco.TLV("00", "A000000677010112") + emvco.TLV("01", "010753600010286") + emvco.TLV("02", id[:20])
	return emvco.Payload(emvco.TLV("00", "01"), emvco.TLV("01", "12"), emvco.TLV("30", merchant), emvco.TLV("53", "764"),
		emvco.TLV("54", emvco.Amount(amount)), emvco.TLV("58", "TH"), emvco.TLV("59", "XENDIT FAKE"), emvco.TLV("60", "BANGKOK"))
}

// settledAt is when a payment made at paid settles.
func (f *Fake) settledAt(paid time.Time) time.Time { return paid.Add(f.opt.SettleAfter).UTC() }
