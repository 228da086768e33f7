package sandbox

import (
	"fmt"
	"net/http"
	"time"
)

// transfer is the PSP's record of one payout transfer. It keeps the
// account number in memory, as a bank must; no answer ever carries it.
type transfer struct {
	id          string
	key         string
	fingerprint string
	in          payoutCreate
	state       string
	errCode     string
	created     time.Time
	updated     time.Time

	// A PROCESSING transfer becomes settleTo at settleAt.
	settleAt time.Time
	settleTo string

	cancelRequestedAt *time.Time
}

func (t *transfer) settle(now time.Time) {
	if t.state == stateProcessing && !now.Before(t.settleAt) {
		t.state, t.updated = t.settleTo, t.settleAt
	}
}

// view is the PSP's answer about the transfer: last four characters of
// the account only.
func (t *transfer) view() transferView {
	return transferView{
		ID: t.id, Key: t.key, State: t.state, AmountMinor: t.in.AmountMinor, Ccy: t.in.Ccy,
		Country: t.in.Country, Bank: t.in.Bank, AccountLast4: last4(t.in.BeneficiaryAcct),
		ErrorCode: t.errCode, ErrorMessage: errorMessages[t.errCode],
		CreatedAt: t.created, UpdatedAt: t.updated, CancelRequestedAt: t.cancelRequestedAt,
	}
}

func (p *PSP) createPayout(w http.ResponseWriter, r *http.Request) {
	var in payoutCreate
	p.create(w, r, OpCreatePayout, &in, func(key string, now time.Time) answer {
		return p.recordTransfer(key, in, now)
	})
}

// recordTransfer records a new transfer under key, or answers with the
// one recorded before. The outcome is chosen by the account number.
// Called with p.mu held.
func (p *PSP) recordTransfer(key string, in payoutCreate, now time.Time) answer {
	fp := fingerprint(in)
	if t, ok := p.transfers[key]; ok {
		if t.fingerprint != fp {
			return errAnswer(http.StatusConflict, errIdempotency, "This Idempotency-Key was used with a different request.")
		}
		t.settle(now)
		return okAnswer(t.view())
	}
	if msg := validatePayout(&in); msg != "" {
		return errAnswer(http.StatusBadRequest, errValidation, msg)
	}
	t := &transfer{
		id: newID("trf"), key: key, fingerprint: fp, in: in, state: stateProcessing,
		created: now, updated: now, settleAt: p.settleTime(now), settleTo: stateSuccess,
	}
	a := answer{status: http.StatusCreated}
	switch in.BeneficiaryAcct {
	case acctInvalid:
		t.state, t.errCode = stateFailed, errAccount
	case acctTimeout:
		a.hold = true
	case acctDropped:
		a.drop = true // only this first request: retries find the transfer
	case acctSlow:
		t.settleAt = now.Add(slowTransfer)
	}
	p.transfers[key] = t
	p.order = append(p.order, t)
	a.body = t.view()
	return a
}

// validatePayout checks a new transfer. Its messages never quote the
// account number.
func validatePayout(in *payoutCreate) string {
	if c, ok := currencies[in.Country]; !ok || c != in.Ccy {
		return fmt.Sprintf("The PSP pays out %q in %q: not offered.", in.Ccy, in.Country)
	}
	if in.AmountMinor <= 0 {
		return "amount_minor must be positive."
	}
	if _, ok := localBank(in.Country, in.Bank); !ok {
		return fmt.Sprintf("Unknown bank %q in %s.", in.Bank, in.Country)
	}
	if n := len(in.BeneficiaryAcct); n < 4 || n > 34 || !alphanumeric(in.BeneficiaryAcct) {
		return "beneficiary_account must be 4 to 34 letters or digits."
	}
	if in.BeneficiaryName == "" || len(in.BeneficiaryName) > 140 {
		return "beneficiary_name is required (at most 140 characters)."
	}
	if len(in.BeneficiaryNameTH) > 140*4 {
		return "beneficiary_name_th is too long."
	}
	return ""
}

func alphanumeric(s string) bool {
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

func (p *PSP) inquirePayout(w http.ResponseWriter, r *http.Request) {
	keyedOp(p, w, r, OpInquirePayout, p.transfers, func(t *transfer, _ time.Time) answer {
		return okAnswer(t.view())
	})
}

// cancelPayout asks to stop a transfer in flight. The PSP accepts the
// request and answers PROCESSING with cancel_requested_at set; the
// transfer becomes CANCELLED after Delay, or when it would have settled
// if that is sooner. A final transfer is answered as it is.
func (p *PSP) cancelPayout(w http.ResponseWriter, r *http.Request) {
	keyedOp(p, w, r, OpCancelPayout, p.transfers, func(t *transfer, now time.Time) answer {
		if t.state == stateProcessing && t.cancelRequestedAt == nil {
			t.cancelRequestedAt, t.updated, t.settleTo = &now, now, stateCancelled
			if at := p.settleTime(now); at.Before(t.settleAt) {
				t.settleAt = at
			}
			t.settle(now) // with no Delay the cancel is done at once
		}
		return okAnswer(t.view())
	})
}

// returnPayout makes a successful transfer's funds come back (the
// beneficiary bank returned them): SUCCESS becomes REVERSED. No fault
// reaches it.
func (p *PSP) returnPayout(w http.ResponseWriter, r *http.Request) {
	keyedOp(p, w, r, "", p.transfers, func(t *transfer, now time.Time) answer {
		switch t.state {
		case stateSuccess:
			t.state, t.updated = stateReversed, now
		case stateReversed:
		default:
			return errAnswer(http.StatusConflict, errState, fmt.Sprintf("Only a SUCCESS transfer can be returned; this one is %s.", t.state))
		}
		return okAnswer(t.view())
	})
}
