package sandbox

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"
)

// refund is the PSP's record of one refund of a successful payment.
type refund struct {
	lifecycle
	PaymentKey  string `json:"payment_key"`
	PaymentID   string `json:"payment_id"`
	AmountMinor int64  `json:"amount_minor"`
	Ccy         string `json:"ccy"`
	// Merchant is the refunded payment's.
	Merchant string `json:"merchant,omitempty"`
	// SettledIn is the batch that settled the refund, at SettledAt.
	SettledIn string    `json:"settled_in,omitempty"`
	SettledAt time.Time `json:"settled_at,omitzero"`
}

func (rf *refund) merchant() string { return rf.Merchant }

// openLines is the refund's line once it succeeded (or, in flight, will),
// until settled: its amount back, without a fee.
func (rf *refund) openLines() []openLine {
	at, ok := rf.successAt()
	if !ok || rf.SettledIn != "" {
		return nil
	}
	return []openLine{{
		at:      at,
		line:    lineView{Type: lineRefund, Reference: rf.ID, Key: rf.Key, AmountMinor: -rf.AmountMinor, Ccy: rf.Ccy},
		settled: func(b string, at time.Time) { rf.SettledIn, rf.SettledAt = b, at },
	}}
}

// view is the PSP's answer about the refund.
func (rf *refund) view() refundView {
	return refundView{
		ID: rf.ID, Key: rf.Key, State: rf.State, PaymentKey: rf.PaymentKey, PaymentID: rf.PaymentID,
		AmountMinor: rf.AmountMinor, Ccy: rf.Ccy, ErrorCode: rf.ErrCode, ErrorMessage: errorMessages[rf.ErrCode],
		CreatedAt: rf.Created, UpdatedAt: rf.Updated,
	}
}

// createRefund serves POST /api/refunds: a refund of a SUCCESS payment of
// the PSP, named by its idempotency key (payment_key) or id (payment_id),
// of at most what the PSP has not refunded of it yet. The same key with
// the same request answers the refund recorded before; a refund is never
// made twice under a key. The outcome is chosen by the amount's last
// digits: 911 FAILED ERR_REFUND_DECLINED at once, 912 a held request (the
// refund is recorded and settles SUCCESS after Delay), anything else
// PROCESSING then SUCCESS after Delay. The PSP's refusals are 422 with
// one of its refund codes, and record nothing.
func (p *PSP) createRefund(ctx context.Context, c apiCall) answer {
	var in refundCreate
	return p.create(ctx, c, OpCreateRefund, &in, func(ctx context.Context, key string) answer {
		return p.recordRefund(ctx, key, in)
	})
}

// recordRefund answers a refund create under key with the refund recorded
// before, or records a new one. The amount of a refund that is not
// declined is taken from the payment's refundable amount before the
// refund is stored, and given back if the refund cannot be stored.
func (p *PSP) recordRefund(ctx context.Context, key string, in refundCreate) answer {
	fp := in.fingerprint()
	view := func(rf *refund) any { return rf.view() }
	for range 3 {
		a, found, err := replay(ctx, p, p.st.refunds(), key, fp, view)
		if err != nil {
			return stateError(err)
		}
		if found {
			return a
		}
		if in.AmountMinor <= 0 {
			return errAnswer(http.StatusBadRequest, errValidation, "amount_minor must be positive.")
		}
		if in.PaymentKey == "" && in.PaymentID == "" {
			return errAnswer(http.StatusBadRequest, errValidation, "payment_key or payment_id is required.")
		}
		now := p.now()
		declined := in.AmountMinor%1000 == amountRefundDeclined
		won, err := p.wonDisputed(ctx, in.PaymentKey, in.PaymentID)
		if err != nil {
			return stateError(err)
		}
		pm, refusal, err := p.takeRefundable(ctx, in, !declined, won)
		if err != nil {
			return stateError(err)
		}
		if refusal != nil {
			return *refusal
		}
		rf := &refund{
			lifecycle: lifecycle{
				ID: newID("rfd"), Key: key, Fingerprint: fp, State: stateProcessing,
				Created: now, Updated: now, SettleAt: p.settleTime(now), SettleTo: stateSuccess,
			},
			PaymentKey: pm.Key, PaymentID: pm.ID, AmountMinor: in.AmountMinor, Ccy: in.Ccy,
			Merchant: pm.In.Merchant,
		}
		a = answer{status: http.StatusCreated}
		switch {
		case declined:
			rf.State, rf.ErrCode = stateFailed, errRefundDeclined
		case in.AmountMinor%1000 == amountRefundTimeout:
			a.hold = true
		}
		a.body = rf.view()
		stored, err := p.st.refunds().insert(ctx, rf)
		if !stored && !declined {
			// Another create under the key won (or the insert broke): the
			// amount taken for this one goes back.
			if rerr := p.giveBackRefundable(ctx, pm.Key, in.AmountMinor); rerr != nil {
				err = errors.Join(err, rerr)
			}
		}
		if err != nil {
			return stateError(err)
		}
		if stored {
			return a
		}
	}
	return stateError(errors.New("creates under this key kept colliding"))
}

// takeRefundable checks the payment a refund names and, with take, adds
// the refund's amount to what the PSP has refunded of it; won is what its
// WON disputes gave back (wonDisputed). It returns the payment (a copy) or
// the PSP's refusal.
func (p *PSP) takeRefundable(ctx context.Context, in refundCreate, take bool, won int64) (payment, *answer, error) {
	l := byKey(in.PaymentKey)
	if in.PaymentKey == "" {
		l = byID(in.PaymentID)
	}
	var out payment
	var refusal *answer
	refuse := func(code, msg string) {
		a := errAnswer(http.StatusUnprocessableEntity, code, msg)
		refusal = &a
	}
	found, err := p.st.payments().update(ctx, l, func(pm *payment) {
		pm.settle(p.now())
		switch {
		case in.PaymentID != "" && pm.ID != in.PaymentID:
			refuse(errRefundPayment, "payment_key and payment_id name different payments.")
		case pm.State != stateSuccess:
			refuse(errRefundPayment, fmt.Sprintf("Only a SUCCESS payment can be refunded; this one is %s.", pm.State))
		case pm.channel().action == actionVA:
			refuse(errRefundUnsupported, fmt.Sprintf("Payments by %s cannot be refunded.", pm.In.Channel))
		case pm.In.Ccy != in.Ccy:
			refuse(errRefundPayment, fmt.Sprintf("The payment is in %s, not %q.", pm.In.Ccy, in.Ccy))
		case in.AmountMinor > pm.In.AmountMinor-pm.Refunded-pm.Disputed+won:
			refuse(errRefundAmount, fmt.Sprintf("At most %d of the payment can still be refunded.", pm.In.AmountMinor-pm.Refunded-pm.Disputed+won))
		default:
			if take {
				pm.Refunded += in.AmountMinor
			}
			out = *pm
		}
	})
	if err == nil && !found {
		refuse(errRefundPayment, "The PSP has no such payment.")
	}
	return out, refusal, err
}

// giveBackRefundable undoes takeRefundable's take.
func (p *PSP) giveBackRefundable(ctx context.Context, paymentKey string, amount int64) error {
	_, err := p.st.payments().update(ctx, byKey(paymentKey), func(pm *payment) { pm.Refunded -= amount })
	return err
}

func (p *PSP) inquireRefund(ctx context.Context, c apiCall) answer {
	return keyedOp(p, ctx, c, OpInquireRefund, p.st.refunds(), func(rf *refund, _ time.Time) answer {
		return okAnswer(rf.view())
	})
}

// Refund is the PSP's record of one refund, as tests see it.
type Refund struct {
	Key         string // the idempotency key it was created under
	ID          string // the PSP's id
	PaymentKey  string // the idempotency key of the refunded payment
	State       string // the PSP's local state (PROCESSING, SUCCESS, FAILED)
	AmountMinor int64
	Ccy         string
	ErrorCode   string
}

// Refunds returns every distinct refund the PSP recorded, in creation
// order, settled to the PSP's current time. Refusals (422) record none.
func (p *PSP) Refunds() []Refund {
	now := p.now()
	out := []Refund{}
	must(p.st.refunds().list(context.Background(), func(rf *refund) {
		l := rf.lifecycle // settled on a copy: list only reads
		l.settle(now)
		out = append(out, Refund{
			Key: l.Key, ID: l.ID, PaymentKey: rf.PaymentKey, State: l.State,
			AmountMinor: rf.AmountMinor, Ccy: rf.Ccy, ErrorCode: l.ErrCode,
		})
	}))
	return out
}
