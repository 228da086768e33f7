package sandbox

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// Disputes: the payer's bank takes back (part of) a SUCCESS payment. A
// dispute opens NEEDS_RESPONSE with a deadline for evidence seven days
// later; the merchant accepts it (LOST) or submits evidence (UNDER_REVIEW),
// and after Delay the bank decides by the evidence text: containing
// winning_evidence it is WON, losing_evidence LOST, anything else stays
// UNDER_REVIEW. Without submitted evidence by the deadline it is LOST.
// Its amount and the dispute fee leave the merchant's settlement at
// opening; a WON dispute's amount comes back (the fee does not) and can be
// refunded or disputed again.

// Dispute texts and limits.
const (
	winningEvidence = "winning_evidence"
	losingEvidence  = "losing_evidence"
	// evidenceWindow is how long the merchant has to answer a dispute.
	evidenceWindow = 7 * 24 * time.Hour
	// maxEvidence is the longest evidence text, in characters.
	maxEvidence = 20_000
)

// dispute is the PSP's record of one dispute. Its Key is its ID: a
// dispute is opened by the bank, under no idempotency key.
type dispute struct {
	lifecycle
	PaymentKey          string     `json:"payment_key"`
	PaymentID           string     `json:"payment_id"`
	Merchant            string     `json:"merchant,omitempty"`
	AmountMinor         int64      `json:"amount_minor"`
	Ccy                 string     `json:"ccy"`
	Reason              string     `json:"reason"`
	EvidenceDueBy       time.Time  `json:"evidence_due_by"`
	Evidence            string     `json:"evidence,omitempty"`
	EvidenceSubmittedAt *time.Time `json:"evidence_submitted_at,omitempty"`
	// SettledIn is the batch that settled the dispute's debit, at
	// SettledAt; ReversalSettledIn the one that settled a WON dispute's
	// reversal, at ReversalSettledAt.
	SettledIn         string    `json:"settled_in,omitempty"`
	SettledAt         time.Time `json:"settled_at,omitzero"`
	ReversalSettledIn string    `json:"reversal_settled_in,omitempty"`
	ReversalSettledAt time.Time `json:"reversal_settled_at,omitzero"`
}

// settle applies what time alone decides: a dispute without submitted
// evidence by its deadline is lost, one under review is decided after
// Delay (SettleTo, when its evidence decides it).
func (d *dispute) settle(now time.Time) {
	switch {
	case d.State == stateNeedsResponse && !now.Before(d.EvidenceDueBy):
		d.State, d.Updated = stateLost, d.EvidenceDueBy
	case d.State == stateUnderReview && d.SettleTo != "" && !now.Before(d.SettleAt):
		d.State, d.Updated = d.SettleTo, d.SettleAt
	}
}

// attention is when time next decides the dispute, or (a final state no
// receiver acknowledged) when it was decided.
func (d *dispute) attention() (time.Time, bool) {
	switch {
	case final(d.State) && d.Notified != d.State:
		return d.Updated, true
	case d.State == stateNeedsResponse:
		return d.EvidenceDueBy, true
	case d.State == stateUnderReview && d.SettleTo != "":
		return d.SettleAt, true
	}
	return time.Time{}, false
}

// callback is the generic callback with the dispute.
func (d *dispute) callback(interval time.Duration) callbackView {
	c := d.lifecycle.callback(interval)
	v := d.view()
	c.Dispute = &v
	return c
}

func (d *dispute) merchant() string { return d.Merchant }

// openLines are the dispute's lines not yet settled: its debit from its
// opening, and its reversal once it is won (or, under review with winning
// evidence, will be).
func (d *dispute) openLines() []openLine {
	var out []openLine
	if d.SettledIn == "" {
		out = append(out, openLine{
			at:      d.Created,
			line:    lineView{Type: lineDispute, Reference: d.ID, AmountMinor: -d.AmountMinor, FeeMinor: disputeFee, Ccy: d.Ccy},
			settled: func(b string, at time.Time) { d.SettledIn, d.SettledAt = b, at },
		})
	}
	wonAt, won := d.Updated, d.State == stateWon
	if d.State == stateUnderReview && d.SettleTo == stateWon {
		wonAt, won = d.SettleAt, true
	}
	if won && d.ReversalSettledIn == "" {
		out = append(out, openLine{
			at:      wonAt,
			line:    lineView{Type: lineDisputeReversal, Reference: d.ID, AmountMinor: d.AmountMinor, Ccy: d.Ccy},
			settled: func(b string, at time.Time) { d.ReversalSettledIn, d.ReversalSettledAt = b, at },
		})
	}
	return out
}

// view is the PSP's answer about the dispute.
func (d *dispute) view() disputeView {
	v := disputeView{
		ID: d.ID, State: d.State, PaymentKey: d.PaymentKey, PaymentID: d.PaymentID, Merchant: d.Merchant,
		AmountMinor: d.AmountMinor, Ccy: d.Ccy, FeeMinor: disputeFee, Reason: d.Reason,
		EvidenceDueBy: d.EvidenceDueBy, EvidenceSubmittedAt: d.EvidenceSubmittedAt,
		CreatedAt: d.Created, UpdatedAt: d.Updated,
	}
	if final(d.State) {
		closed := d.Updated
		v.ClosedAt = &closed
	}
	return v
}

// openDispute serves POST /api/disputes: the payer's bank disputes a
// SUCCESS payment, named by its idempotency key (payment_key) or id
// (payment_id), for at most what its refunds and disputes left of it.
// The PSP's refusals are 422 and record nothing.
func (p *PSP) openDispute(ctx context.Context, c apiCall) answer {
	var in disputeCreate
	if err := c.body(&in); err != nil {
		return errAnswer(http.StatusBadRequest, errValidation, "Body: "+err.Error())
	}
	switch {
	case in.PaymentKey == "" && in.PaymentID == "":
		return errAnswer(http.StatusBadRequest, errValidation, "payment_key or payment_id is required.")
	case in.AmountMinor < 0:
		return errAnswer(http.StatusBadRequest, errValidation, "amount_minor must be positive.")
	case in.Reason == "":
		in.Reason = reasonGeneral
	case !slices.Contains(disputeReasons, in.Reason):
		return errAnswer(http.StatusBadRequest, errValidation, fmt.Sprintf("Unknown reason %q.", in.Reason))
	}
	now := p.now()
	won, err := p.wonDisputed(ctx, in.PaymentKey, in.PaymentID)
	if err != nil {
		return stateError(err)
	}
	pm, amount, refusal, err := p.takeDisputable(ctx, in, won)
	if err != nil {
		return stateError(err)
	}
	if refusal != nil {
		return *refusal
	}
	id := newID("dsp")
	d := &dispute{
		lifecycle:  lifecycle{ID: id, Key: id, State: stateNeedsResponse, Created: now, Updated: now},
		PaymentKey: pm.Key, PaymentID: pm.ID, Merchant: pm.In.Merchant, AmountMinor: amount, Ccy: pm.In.Ccy,
		Reason: in.Reason, EvidenceDueBy: now.Add(evidenceWindow),
	}
	stored, err := p.st.disputes().insert(ctx, d)
	if err == nil && !stored {
		err = errors.New("dispute id taken")
	}
	if err != nil {
		// The amount taken for it goes back.
		_, rerr := p.st.payments().update(ctx, byKey(pm.Key), func(pm *payment) { pm.Disputed -= amount })
		return stateError(errors.Join(err, rerr))
	}
	return answer{status: http.StatusCreated, body: d.view()}
}

// wonDisputed is how much of the payment named by its key or id its WON
// disputes gave back: the bank returned it to the merchant, so it can be
// refunded or disputed again. WON is final, so a sum read before the
// payment is updated can only be short, never too much.
func (p *PSP) wonDisputed(ctx context.Context, paymentKey, paymentID string) (int64, error) {
	now := p.now()
	var won int64
	err := p.st.disputes().list(ctx, func(d *dispute) {
		if (paymentKey == "" || d.PaymentKey != paymentKey) && (paymentID == "" || d.PaymentID != paymentID) {
			return
		}
		c := *d // settled on a copy: list only reads
		c.settle(now)
		if c.State == stateWon {
			won += c.AmountMinor
		}
	})
	return won, err
}

// takeDisputable checks the payment a dispute names and adds the dispute's
// amount (0: all that is left) to what its disputes took; won is what its
// WON disputes gave back (wonDisputed). It returns the payment (a copy) and
// the amount, or the PSP's refusal.
func (p *PSP) takeDisputable(ctx context.Context, in disputeCreate, won int64) (payment, int64, *answer, error) {
	l := byKey(in.PaymentKey)
	if in.PaymentKey == "" {
		l = byID(in.PaymentID)
	}
	var out payment
	var amount int64
	var refusal *answer
	refuse := func(code, msg string) {
		a := errAnswer(http.StatusUnprocessableEntity, code, msg)
		refusal = &a
	}
	found, err := p.st.payments().update(ctx, l, func(pm *payment) {
		pm.settle(p.now())
		left := pm.In.AmountMinor - pm.Refunded - pm.Disputed + won
		amount = in.AmountMinor
		if amount == 0 {
			amount = left
		}
		switch {
		case in.PaymentID != "" && pm.ID != in.PaymentID:
			refuse(errDisputePayment, "payment_key and payment_id name different payments.")
		case pm.State != stateSuccess:
			refuse(errDisputePayment, fmt.Sprintf("Only a SUCCESS payment can be disputed; this one is %s.", pm.State))
		case amount <= 0 || amount > left:
			refuse(errDisputeAmount, fmt.Sprintf("At most %d of the payment can still be disputed.", left))
		default:
			pm.Disputed += amount
			out = *pm
		}
	})
	if err == nil && !found {
		refuse(errDisputePayment, "The PSP has no such payment.")
	}
	return out, amount, refusal, err
}

func (p *PSP) inquireDispute(ctx context.Context, c apiCall) answer {
	return keyedOp(p, ctx, c, "", p.st.disputes(), func(d *dispute, _ time.Time) answer {
		return okAnswer(d.view())
	})
}

// disputeEvidence serves POST /api/disputes/{id}/evidence: the merchant's
// evidence text (1 to 20 000 characters) is kept and, with submit, sent
// to the bank: UNDER_REVIEW, decided after Delay by the text. Only a
// NEEDS_RESPONSE dispute takes evidence (409 ERR_STATE otherwise).
func (p *PSP) disputeEvidence(ctx context.Context, c apiCall) answer {
	var in evidenceSubmit
	if err := c.body(&in); err != nil {
		return errAnswer(http.StatusBadRequest, errValidation, "Body: "+err.Error())
	}
	if n := utf8.RuneCountInString(in.Text); n == 0 || n > maxEvidence || !utf8.ValidString(in.Text) {
		return errAnswer(http.StatusBadRequest, errValidation, "text must be 1 to 20000 characters.")
	}
	return keyedOp(p, ctx, c, "", p.st.disputes(), func(d *dispute, now time.Time) answer {
		if d.State != stateNeedsResponse {
			return errAnswer(http.StatusConflict, errState, fmt.Sprintf("Only a NEEDS_RESPONSE dispute takes evidence; this one is %s.", d.State))
		}
		d.Evidence, d.Updated = in.Text, now
		if in.Submit {
			d.State, d.EvidenceSubmittedAt = stateUnderReview, &now
			switch {
			case strings.Contains(in.Text, winningEvidence):
				d.SettleTo, d.SettleAt = stateWon, p.settleTime(now)
			case strings.Contains(in.Text, losingEvidence):
				d.SettleTo, d.SettleAt = stateLost, p.settleTime(now)
			}
			d.settle(now) // with no Delay the bank decides at once
		}
		return okAnswer(d.view())
	})
}

// acceptDispute serves POST /api/disputes/{id}/accept: the merchant
// concedes, LOST. The answer says so; no callback follows. Only a
// NEEDS_RESPONSE dispute can be accepted (409 ERR_STATE otherwise).
func (p *PSP) acceptDispute(ctx context.Context, c apiCall) answer {
	return keyedOp(p, ctx, c, "", p.st.disputes(), func(d *dispute, now time.Time) answer {
		if d.State != stateNeedsResponse {
			return errAnswer(http.StatusConflict, errState, fmt.Sprintf("Only a NEEDS_RESPONSE dispute can be accepted; this one is %s.", d.State))
		}
		d.State, d.Updated, d.Notified = stateLost, now, stateLost
		return okAnswer(d.view())
	})
}
