package sandbox

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// payment is the PSP's record of one payment attempt. It keeps the
// request without the payer's details, which are checked at creation and
// needed no more.
type payment struct {
	lifecycle
	Ref string        `json:"ref"` // payer-facing reference (QR, virtual account)
	In  paymentCreate `json:"in"`
	QR  string        `json:"qr,omitempty"` // EMVCo payload of QR channels
	VA  *vaView       `json:"va,omitempty"`
	// Refunded is how much of the payment its refunds took (declined
	// refunds take nothing).
	Refunded int64 `json:"refunded,omitempty"`
	// Disputed is how much of the payment its disputes took.
	Disputed int64 `json:"disputed,omitempty"`
	// SettledIn is the batch that settled the payment, at SettledAt.
	SettledIn string    `json:"settled_in,omitempty"`
	SettledAt time.Time `json:"settled_at,omitzero"`
}

// fee is the PSP's fee for the payment, once SUCCESS.
func (pm *payment) fee() int64 { return paymentFee(pm.In.AmountMinor, pm.channel()) }

// availableOn is when the PSP pays out a SUCCESS payment's net: when a
// batch settled it, else the boundary after its success (which an amount
// ending in 922 never keeps).
func (pm *payment) availableOn(interval time.Duration) time.Time {
	if pm.SettledIn != "" {
		return pm.SettledAt
	}
	return boundary(pm.Updated, interval)
}

func (pm *payment) merchant() string { return pm.In.Merchant }

// openLines is the payment's line once it succeeded (or, pending, will),
// until settled; an amount ending in 922 has none, one ending in 921
// states a fee one minor unit above the one its answers stated.
func (pm *payment) openLines() []openLine {
	at, ok := pm.successAt()
	if !ok || pm.SettledIn != "" || pm.In.AmountMinor%1000 == amountNeverSettle {
		return nil
	}
	fee := pm.fee()
	if pm.In.AmountMinor%1000 == amountFeeMismatch {
		fee++
	}
	return []openLine{{
		at:      at,
		line:    lineView{Type: linePayment, Reference: pm.ID, Key: pm.Key, AmountMinor: pm.In.AmountMinor, FeeMinor: fee, Ccy: pm.In.Ccy},
		settled: func(b string, at time.Time) { pm.SettledIn, pm.SettledAt = b, at },
	}}
}

// callback is the generic callback with, once SUCCESS, the fee and when
// the net is paid out.
func (pm *payment) callback(interval time.Duration) callbackView {
	c := pm.lifecycle.callback(interval)
	if pm.State == stateSuccess {
		c.FeeMinor, c.AvailableOn = pm.fee(), pm.availableOn(interval)
	}
	return c
}

// channel is the attempt's channel, which creation checked.
func (pm *payment) channel() channel {
	ch, _ := channelByCode(pm.In.Channel)
	return ch
}

// decide records the payer's choice on the PSP's page.
func (pm *payment) decide(approve bool, now time.Time) error {
	if pm.State != statePayerAction {
		return fmt.Errorf("the payment is %s, not waiting for the payer", pm.State)
	}
	pm.State, pm.Updated = stateSuccess, now
	if !approve {
		pm.State, pm.ErrCode = stateFailed, errDeclined
	}
	return nil
}

// view is the PSP's answer about the attempt.
func (pm *payment) view(p *PSP) paymentView {
	v := paymentView{
		ID: pm.ID, Key: pm.Key, State: pm.State, AmountMinor: pm.In.AmountMinor, Ccy: pm.In.Ccy,
		Country: pm.In.Country, Channel: pm.In.Channel, Bank: pm.In.Bank,
		ErrorCode: pm.ErrCode, ErrorMessage: errorMessages[pm.ErrCode],
		CreatedAt: pm.Created, UpdatedAt: pm.Updated, ExpiresAt: pm.Expires, CancelRequestedAt: pm.CancelRequestedAt,
		Merchant: pm.In.Merchant,
	}
	if pm.State == stateSuccess {
		v.FeeMinor, v.AvailableOn = pm.fee(), pm.availableOn(p.interval)
	}
	if pm.State == statePayerAction {
		a := &payerActionView{Kind: pm.channel().action}
		switch a.Kind {
		case actionQR:
			a.QRString = pm.QR
		case actionVA:
			a.VA = pm.VA
		default:
			a.URL = p.baseURL + "/pay/" + pm.ID
		}
		v.PayerAction = a
	}
	return v
}

func (p *PSP) createPayment(ctx context.Context, c apiCall) answer {
	var in paymentCreate
	return p.create(ctx, c, OpCreatePayment, &in, func(ctx context.Context, key string) answer {
		return p.recordPayment(ctx, key, in)
	})
}

// recordPayment records a new attempt under key, or answers with the one
// recorded before. The outcome is chosen by the amount's last digits.
func (p *PSP) recordPayment(ctx context.Context, key string, in paymentCreate) answer {
	if in.ExpiresAt != nil {
		t := in.ExpiresAt.UTC()
		in.ExpiresAt = &t
	}
	fp := in.fingerprint()
	view := func(pm *payment) any { return pm.view(p) }
	return recordNew(ctx, p, p.st.payments(), key, fp, view, func(now time.Time) (*payment, answer, bool) {
		return p.newPayment(key, fp, in, now)
	})
}

// newPayment makes the attempt a create request asks for, with the answer
// to give once it is recorded, or refuses the request.
func (p *PSP) newPayment(key, fp string, in paymentCreate, now time.Time) (*payment, answer, bool) {
	ch, msg := validatePayment(&in, now)
	if msg != "" {
		return nil, errAnswer(http.StatusBadRequest, errValidation, msg), false
	}
	in.Payer = nil
	pm := &payment{lifecycle: lifecycle{
		ID: newID("pay"), Key: key, Fingerprint: fp, State: statePayerAction,
		Created: now, Updated: now, Expires: now.Add(defaultPaymentTTL),
	}, In: in}
	pm.Ref = strings.ToUpper(strings.TrimPrefix(pm.ID, "pay_"))
	if in.ExpiresAt != nil {
		pm.Expires = *in.ExpiresAt
	}
	a := answer{status: http.StatusCreated}
	bank, _ := localBank("MY", in.Bank)
	switch magic := in.AmountMinor % 1000; {
	case bank.offline:
		pm.State, pm.ErrCode = stateFailed, errBankOffline
	case magic == amountDeclined:
		pm.State, pm.ErrCode = stateFailed, errDeclined
	case magic == amountTimeoutOK, magic == amountTimeoutFail:
		pm.State, pm.SettleAt, pm.SettleTo = statePending, p.settleTime(now), stateSuccess
		if magic == amountTimeoutFail {
			pm.SettleTo, pm.SettleErr = stateFailed, errDeclined
		}
		a.hold = true
	}
	switch ch.code {
	case "qr_promptpay":
		pm.QR = promptPayQR(pm.Ref, in.AmountMinor)
	case "qr_duitnow":
		pm.QR = duitNowQR(pm.Ref, in.AmountMinor)
	}
	if ch.action == actionVA {
		pm.VA = virtualAccount(pm.ID, pm.Ref, in.Country)
	}
	a.body = pm.view(p)
	return pm, a, true
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

func (p *PSP) inquirePayment(ctx context.Context, c apiCall) answer {
	return keyedOp(p, ctx, c, OpInquirePayment, p.st.payments(), func(pm *payment, _ time.Time) answer {
		return okAnswer(pm.view(p))
	})
}

// cancelPayment cancels an attempt that waits for its payer. A pending
// one is already at the bank: the cancel is recorded, and it settles as it
// would have. A final one is answered as it is.
func (p *PSP) cancelPayment(ctx context.Context, c apiCall) answer {
	return keyedOp(p, ctx, c, OpCancelPayment, p.st.payments(), func(pm *payment, now time.Time) answer {
		if !final(pm.State) && pm.CancelRequestedAt == nil {
			pm.CancelRequestedAt = &now
			if pm.State == statePayerAction {
				pm.State, pm.Updated = stateCancelled, now
			}
		}
		return okAnswer(pm.view(p))
	})
}

// payerAPI acts as the payer over the API (paykit's test helpers use it
// through the adapter's Approve and Decline). No fault reaches it.
func (p *PSP) payerAPI(ctx context.Context, c apiCall, approve bool) answer {
	a := keyedOp(p, ctx, c, "", p.st.payments(), func(pm *payment, now time.Time) answer {
		if err := pm.decide(approve, now); err != nil {
			return errAnswer(http.StatusConflict, errState, err.Error())
		}
		return okAnswer(pm.view(p))
	})
	p.wake() // once the choice is kept, so the round sees it
	return a
}
