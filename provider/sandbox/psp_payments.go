package sandbox

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// payment is the PSP's record of one payment attempt.
type payment struct {
	id          string
	ref         string // payer-facing reference (QR, virtual account)
	key         string // idempotency key
	fingerprint string // of the create body
	in          paymentCreate
	ch          channel
	state       string
	errCode     string
	created     time.Time
	updated     time.Time
	expires     time.Time
	qr          string // EMVCo payload of QR channels
	va          *vaView

	// A PENDING attempt becomes settleTo (with settleErr) at settleAt.
	settleAt  time.Time
	settleTo  string
	settleErr string

	cancelRequestedAt *time.Time
}

// settle applies what time alone decides: a pending attempt settles, an
// attempt whose payer never acted expires.
func (pm *payment) settle(now time.Time) {
	switch {
	case pm.state == statePending && !now.Before(pm.settleAt):
		pm.state, pm.errCode, pm.updated = pm.settleTo, pm.settleErr, pm.settleAt
	case pm.state == statePayerAction && !now.Before(pm.expires):
		pm.state, pm.updated = stateExpired, pm.expires
	}
}

// decide records the payer's choice on the PSP's page.
func (pm *payment) decide(approve bool, now time.Time) error {
	if pm.state != statePayerAction {
		return fmt.Errorf("the payment is %s, not waiting for the payer", pm.state)
	}
	pm.state, pm.updated = stateSuccess, now
	if !approve {
		pm.state, pm.errCode = stateFailed, errDeclined
	}
	return nil
}

// view is the PSP's answer about the attempt.
func (pm *payment) view(baseURL string) paymentView {
	v := paymentView{
		ID: pm.id, Key: pm.key, State: pm.state, AmountMinor: pm.in.AmountMinor, Ccy: pm.in.Ccy,
		Country: pm.in.Country, Channel: pm.in.Channel, Bank: pm.in.Bank,
		ErrorCode: pm.errCode, ErrorMessage: errorMessages[pm.errCode],
		CreatedAt: pm.created, UpdatedAt: pm.updated, ExpiresAt: pm.expires, CancelRequestedAt: pm.cancelRequestedAt,
	}
	if pm.state == statePayerAction {
		a := &payerActionView{Kind: pm.ch.action}
		switch pm.ch.action {
		case actionQR:
			a.QRString = pm.qr
		case actionVA:
			a.VA = pm.va
		default:
			a.URL = baseURL + "/pay/" + pm.id
		}
		v.PayerAction = a
	}
	return v
}

func (p *PSP) createPayment(w http.ResponseWriter, r *http.Request) {
	var in paymentCreate
	p.create(w, r, OpCreatePayment, &in, func(key string, now time.Time) answer {
		return p.recordPayment(key, in, now)
	})
}

// recordPayment records a new attempt under key, or answers with the one
// recorded before. The outcome is chosen by the amount's last digits.
// Called with p.mu held.
func (p *PSP) recordPayment(key string, in paymentCreate, now time.Time) answer {
	if in.ExpiresAt != nil {
		t := in.ExpiresAt.UTC()
		in.ExpiresAt = &t
	}
	fp := fingerprint(in)
	if pm, ok := p.payments[key]; ok {
		if pm.fingerprint != fp {
			return errAnswer(http.StatusConflict, errIdempotency, "This Idempotency-Key was used with a different request.")
		}
		pm.settle(now)
		return okAnswer(pm.view(p.baseURL))
	}
	ch, msg := validatePayment(&in, now)
	if msg != "" {
		return errAnswer(http.StatusBadRequest, errValidation, msg)
	}
	pm := &payment{
		id: newID("pay"), key: key, fingerprint: fp, in: in, ch: ch, state: statePayerAction,
		created: now, updated: now, expires: now.Add(defaultPaymentTTL),
	}
	pm.ref = strings.ToUpper(strings.TrimPrefix(pm.id, "pay_"))
	if in.ExpiresAt != nil {
		pm.expires = *in.ExpiresAt
	}
	a := answer{status: http.StatusCreated}
	bank, _ := localBank("MY", in.Bank)
	switch magic := in.AmountMinor % 1000; {
	case bank.offline:
		pm.state, pm.errCode = stateFailed, errBankOffline
	case magic == amountDeclined:
		pm.state, pm.errCode = stateFailed, errDeclined
	case magic == amountTimeoutOK, magic == amountTimeoutFail:
		pm.state, pm.settleAt, pm.settleTo = statePending, p.settleTime(now), stateSuccess
		if magic == amountTimeoutFail {
			pm.settleTo, pm.settleErr = stateFailed, errDeclined
		}
		a.hold = true
	}
	switch ch.code {
	case "qr_promptpay":
		pm.qr = promptPayQR(pm.ref, in.AmountMinor)
	case "qr_duitnow":
		pm.qr = duitNowQR(pm.ref, in.AmountMinor)
	}
	if ch.action == actionVA {
		pm.va = virtualAccount(pm.id, pm.ref, in.Country)
	}
	p.payments[key] = pm
	p.paymentID[pm.id] = pm
	a.body = pm.view(p.baseURL)
	return a
}

// validatePayment checks a new attempt and returns its channel, or a
// message saying what is wrong.
func validatePayment(in *paymentCreate, now time.Time) (channel, string) {
	ch, ok := channelByCode(in.Channel)
	switch {
	case !ok:
		return ch, fmt.Sprintf("Unknown channel %q.", in.Channel)
	case ch.country != in.Country:
		return ch, fmt.Sprintf("Channel %s is not offered in %q.", ch.code, in.Country)
	case currencies[in.Country] != in.Ccy:
		return ch, fmt.Sprintf("Channel %s takes %s, not %q.", ch.code, currencies[in.Country], in.Ccy)
	case in.AmountMinor <= 0:
		return ch, "amount_minor must be positive."
	case in.ExpiresAt != nil && !in.ExpiresAt.After(now):
		return ch, "expires_at must be in the future."
	}
	for _, f := range ch.payerFields() {
		if in.Payer[f] == "" {
			return ch, fmt.Sprintf("payer.%s is required for %s.", f, ch.code)
		}
	}
	if in.Bank != "" {
		if ch.code != fpxChannel {
			return ch, "bank applies to " + fpxChannel + " only."
		}
		if _, ok := localBank("MY", in.Bank); !ok {
			return ch, fmt.Sprintf("Unknown bank %q.", in.Bank)
		}
	}
	if in.ReturnURL != "" && returnOrigin(in.ReturnURL) == "" {
		return ch, "return_url must be an absolute http or https URL of at most 2048 characters."
	}
	return ch, ""
}

// returnOrigin is the scheme and host of an acceptable return URL, or ""
// for an unacceptable one.
func returnOrigin(raw string) string {
	if len(raw) > 2048 {
		return ""
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return ""
	}
	for _, c := range u.Host {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune(".-:[]", c)) {
			return ""
		}
	}
	return u.Scheme + "://" + u.Host
}

// virtualAccount is the account a BANK_TRANSFER payer pays into: a number
// derived from the attempt, so it is stable across inquiries.
func virtualAccount(id, ref, country string) *vaView {
	sum := sha256.Sum256([]byte(id))
	va := &vaView{
		BankName:  "Maybank",
		Number:    fmt.Sprintf("88%010d", binary.BigEndian.Uint64(sum[:8])%10_000_000_000),
		Holder:    "SANDBOX PSP SDN BHD",
		Reference: ref,
	}
	if country == "TH" {
		va.BankName, va.Holder = "Kasikornbank", "SANDBOX PSP CO., LTD."
	}
	return va
}

func (p *PSP) inquirePayment(w http.ResponseWriter, r *http.Request) {
	keyedOp(p, w, r, OpInquirePayment, p.payments, func(pm *payment, _ time.Time) answer {
		return okAnswer(pm.view(p.baseURL))
	})
}

// cancelPayment cancels an attempt that waits for its payer. A pending
// one is already at the bank: the cancel is recorded, and it settles as it
// would have. A final one is answered as it is.
func (p *PSP) cancelPayment(w http.ResponseWriter, r *http.Request) {
	keyedOp(p, w, r, OpCancelPayment, p.payments, func(pm *payment, now time.Time) answer {
		if !final(pm.state) && pm.cancelRequestedAt == nil {
			pm.cancelRequestedAt = &now
			if pm.state == statePayerAction {
				pm.state, pm.updated = stateCancelled, now
			}
		}
		return okAnswer(pm.view(p.baseURL))
	})
}

// payerAPI acts as the payer over the API (paykit's test helpers use it
// through the adapter's Approve and Decline). No fault reaches it.
func (p *PSP) payerAPI(approve bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		keyedOp(p, w, r, "", p.payments, func(pm *payment, now time.Time) answer {
			if err := pm.decide(approve, now); err != nil {
				return errAnswer(http.StatusConflict, errState, err.Error())
			}
			p.wake()
			return okAnswer(pm.view(p.baseURL))
		})
	}
}
