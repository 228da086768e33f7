package sandbox

import (
	"context"
	"fmt"
	"net/http"
	"time"
)

// transfer is the PSP's record of one payout transfer. Of the account it
// keeps the last four characters, all that any answer carries; the
// fingerprint of the request covers the rest.
type transfer struct {
	lifecycle
	AmountMinor  int64  `json:"amount_minor"`
	Ccy          string `json:"ccy"`
	Country      string `json:"country"`
	Bank         string `json:"bank"`
	AccountLast4 string `json:"account_last4"`
}

// view is the PSP's answer about the transfer.
func (t *transfer) view() transferView {
	return transferView{
		ID: t.ID, Key: t.Key, State: t.State, AmountMinor: t.AmountMinor, Ccy: t.Ccy,
		Country: t.Country, Bank: t.Bank, AccountLast4: t.AccountLast4,
		ErrorCode: t.ErrCode, ErrorMessage: errorMessages[t.ErrCode],
		CreatedAt: t.Created, UpdatedAt: t.Updated, CancelRequestedAt: t.CancelRequestedAt,
	}
}

func (p *PSP) createPayout(ctx context.Context, c apiCall) answer {
	var in payoutCreate
	return p.create(ctx, c, OpCreatePayout, &in, func(ctx context.Context, key string) answer {
		fp := in.fingerprint()
		view := func(t *transfer) any { return t.view() }
		return recordNew(ctx, p, p.st.transfers(), key, fp, view, func(now time.Time) (*transfer, answer, bool) {
			return p.newTransfer(key, fp, in, now)
		})
	})
}

// newTransfer makes the transfer a create request asks for, with the
// answer to give once it is recorded, or refuses the request. The outcome
// is chosen by the account number.
func (p *PSP) newTransfer(key, fp string, in payoutCreate, now time.Time) (*transfer, answer, bool) {
	if msg := validatePayout(&in); msg != "" {
		return nil, errAnswer(http.StatusBadRequest, errValidation, msg), false
	}
	t := &transfer{
		lifecycle: lifecycle{
			ID: newID("trf"), Key: key, Fingerprint: fp, State: stateProcessing,
			Created: now, Updated: now, SettleAt: p.settleTime(now), SettleTo: stateSuccess,
		},
		AmountMinor: in.AmountMinor, Ccy: in.Ccy, Country: in.Country, Bank: in.Bank,
		AccountLast4: last4(in.BeneficiaryAcct),
	}
	a := answer{status: http.StatusCreated}
	switch in.BeneficiaryAcct {
	case acctInvalid:
		t.State, t.ErrCode = stateFailed, errAccount
	case acctTimeout:
		a.hold = true
	case acctDropped:
		a.drop = true // only this first request: retries find the transfer
	case acctSlow:
		t.SettleAt = now.Add(slowTransfer)
	}
	a.body = t.view()
	return t, a, true
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

func (p *PSP) inquirePayout(ctx context.Context, c apiCall) answer {
	return keyedOp(p, ctx, c, OpInquirePayout, p.st.transfers(), func(t *transfer, _ time.Time) answer {
		return okAnswer(t.view())
	})
}

// cancelPayout asks to stop a transfer in flight. The PSP accepts the
// request and answers PROCESSING with cancel_requested_at set; the
// transfer becomes CANCELLED after Delay, or when it would have settled
// if that is sooner. A final transfer is answered as it is.
func (p *PSP) cancelPayout(ctx context.Context, c apiCall) answer {
	return keyedOp(p, ctx, c, OpCancelPayout, p.st.transfers(), func(t *transfer, now time.Time) answer {
		if t.State == stateProcessing && t.CancelRequestedAt == nil {
			t.CancelRequestedAt, t.Updated, t.SettleTo = &now, now, stateCancelled
			if at := p.settleTime(now); at.Before(t.SettleAt) {
				t.SettleAt = at
			}
			t.settle(now) // with no Delay the cancel is done at once
		}
		return okAnswer(t.view())
	})
}

// returnPayout makes a successful transfer's funds come back (the
// beneficiary bank returned them): SUCCESS becomes REVERSED. No fault
// reaches it.
func (p *PSP) returnPayout(ctx context.Context, c apiCall) answer {
	return keyedOp(p, ctx, c, "", p.st.transfers(), func(t *transfer, now time.Time) answer {
		switch t.State {
		case stateSuccess:
			t.State, t.Updated = stateReversed, now
		case stateReversed:
		default:
			return errAnswer(http.StatusConflict, errState, fmt.Sprintf("Only a SUCCESS transfer can be returned; this one is %s.", t.State))
		}
		return okAnswer(t.view())
	})
}
