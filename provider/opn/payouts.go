package opn

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/paykit/paykit"
)

// ThaiPayoutBanks maps paykit's canonical Thai bank codes to Opn's
// bank_account[brand] codes. Banks Opn lists no code for (CLICX, EXIM,
// SME) and PromptPay destinations are left out.
func ThaiPayoutBanks() []paykit.PayoutBank {
	codes := []struct{ code, brand string }{
		{"BAAC", "baac"}, {"BAY", "bay"}, {"BBL", "bbl"}, {"CIMB", "cimb"}, {"GHB", "ghb"},
		{"GSB", "gsb"}, {"ISLAMIC", "ibank"}, {"KBANK", "kbank"}, {"KKP", "kk"}, {"KTB", "ktb"},
		{"LHBANK", "lhb"}, {"SCB", "scb"}, {"SCBT", "sc"}, {"TCR", "tcrb"}, {"TISCO", "tisco"},
		{"TTB", "tmb"}, {"UOB", "uob"},
	}
	out := make([]paykit.PayoutBank, len(codes))
	for i, c := range codes {
		out[i] = paykit.PayoutBank{Code: c.code, ProviderCode: c.brand, RequiresHolderNameTH: true}
	}
	return out
}

// transfer is the part of Opn's transfer object the adapter reads.
type transfer struct {
	Object         string            `json:"object"`
	ID             string            `json:"id"`
	Amount         json.Number       `json:"amount"`
	Currency       string            `json:"currency"`
	Sent           bool              `json:"sent"`
	Paid           bool              `json:"paid"`
	Failed         bool              `json:"failed"`
	Deleted        bool              `json:"deleted"`
	FailureCode    string            `json:"failure_code"`
	FailureMessage string            `json:"failure_message"`
	Metadata       map[string]string `json:"metadata"`
}

// CreatePayout creates a recipient (POST /recipients, individual, with
// the bank account) and a transfer to it (POST /transfers), both with
// metadata paykit_key and Idempotency-Keys from the Key, after a search
// for a transfer under the Key.
func (p *Provider) CreatePayout(ctx context.Context, req paykit.PayoutRequest) paykit.Result {
	ctx, cancel := p.withTimeout(ctx)
	defer cancel()
	if found := p.existing(ctx, "transfer", req.Key); found != nil {
		return transferResult(found)
	}
	rform := url.Values{
		"name":                 {req.HolderName},
		"type":                 {"individual"},
		"bank_account[brand]":  {req.BankCode},
		"bank_account[number]": {req.AccountNumber},
		"bank_account[name]":   {req.HolderName},
		"metadata[paykit_key]": {req.Key},
		// The amount lets an inquiry finish a payout whose transfer
		// request never went out (halfMade).
		"metadata[paykit_amount]": {strconv.FormatInt(req.Amount, 10)},
	}
	r := p.call(ctx, http.MethodPost, "/recipients", rform, "paykit-recipient-"+req.Key)
	switch {
	case r.fault != nil:
		return *r.fault
	case r.err != nil && r.status == http.StatusBadRequest && strings.Contains(r.err.Code+" "+r.err.Message, "account"):
		return paykit.Result{Outcome: paykit.OutcomeFailed, FailureCode: paykit.FailureAccountInvalid, Detail: "opn: recipient: " + r.errorDetail()}
	case r.err != nil:
		res := r.createErrorResult()
		res.Detail = "opn: recipient: " + res.Detail
		return res
	}
	var rc struct {
		Object string `json:"object"`
		ID     string `json:"id"`
	}
	if err := decodeJSON(r.body, &rc); err != nil || rc.Object != "recipient" || rc.ID == "" {
		return paykit.Result{Outcome: paykit.OutcomeUnknown, Detail: "opn: recipient answer is not a recipient object"}
	}
	return p.createTransfer(ctx, req.Key, rc.ID, req.Amount)
}

// createTransfer sends amount to recipient under key.
func (p *Provider) createTransfer(ctx context.Context, key, recipient string, amount int64) paykit.Result {
	tform := url.Values{"amount": {fmt.Sprint(amount)}, "recipient": {recipient}, "metadata[paykit_key]": {key}}
	r := p.call(ctx, http.MethodPost, "/transfers", tform, "paykit-transfer-"+key)
	switch {
	case r.fault != nil:
		return *r.fault
	case r.err != nil:
		return r.createErrorResult()
	}
	return transferResult(r.body)
}

// halfMade handles a payout under key with no transfer: if its recipient
// exists (the create's transfer request never went out), finish makes the
// transfer, under the same Idempotency-Key the create uses, from the
// amount the recipient's metadata keeps; without finish (a cancel) the
// answer is Cancelled, as no transfer exists to move money. Without a
// recipient, Opn has nothing under key.
func (p *Provider) halfMade(ctx context.Context, key string, finish bool) paykit.Result {
	found, fault := p.search(ctx, "recipient", key)
	switch {
	case fault != nil:
		return *fault
	case len(found) == 0:
		return missingByKey("transfer", key)
	}
	var rc struct {
		ID       string            `json:"id"`
		Metadata map[string]string `json:"metadata"`
	}
	if err := decodeJSON(found[0], &rc); err != nil || rc.ID == "" {
		return paykit.Result{Outcome: paykit.OutcomeUnknown, Detail: "opn: search gave an unreadable recipient"}
	}
	if !finish {
		return paykit.Result{Outcome: paykit.OutcomeCancelled, Detail: "opn: recipient " + rc.ID + " exists, no transfer was made"}
	}
	amount, err := strconv.ParseInt(rc.Metadata["paykit_amount"], 10, 64)
	if err != nil || amount <= 0 {
		return paykit.Result{Outcome: paykit.OutcomeUnknown, Detail: "opn: recipient " + rc.ID + " has no paykit_amount"}
	}
	res := p.createTransfer(ctx, key, rc.ID, amount)
	res.Detail = "opn: finished a payout whose transfer was never sent; " + res.Detail
	return res
}

// InquirePayout reads the transfer: GET /transfers/{id}, or a search by
// Key.
func (p *Provider) InquirePayout(ctx context.Context, ref paykit.AttemptRef) paykit.Result {
	ctx, cancel := p.withTimeout(ctx)
	defer cancel()
	return p.inquirePayout(ctx, ref, true)
}

func (p *Provider) inquirePayout(ctx context.Context, ref paykit.AttemptRef, finish bool) paykit.Result {
	if ref.Reference == "" {
		found, fault := p.search(ctx, "transfer", ref.Key)
		switch {
		case fault != nil:
			return *fault
		case len(found) == 0:
			return p.halfMade(ctx, ref.Key, finish)
		}
		return transferResult(found[0])
	}
	body, end := p.get(ctx, "/transfers/"+url.PathEscape(ref.Reference))
	if end != nil {
		return *end
	}
	return transferResult(body)
}

// CancelPayout destroys a transfer not yet sent (DELETE /transfers/{id});
// one already sent keeps its state, which is the answer.
func (p *Provider) CancelPayout(ctx context.Context, ref paykit.AttemptRef) paykit.Result {
	ctx, cancel := p.withTimeout(ctx)
	defer cancel()
	cur := p.inquirePayout(ctx, ref, false)
	if cur.Outcome != paykit.OutcomePending || cur.Reference == "" {
		return cur
	}
	r := p.call(ctx, http.MethodDelete, "/transfers/"+url.PathEscape(cur.Reference), nil, "")
	switch {
	case r.fault != nil:
		return *r.fault
	case r.err != nil && r.status == http.StatusNotFound:
		return r.errorResult()
	case r.err != nil:
		res := p.inquirePayout(ctx, paykit.AttemptRef{Key: ref.Key, Reference: cur.Reference}, false)
		res.Detail = r.errorDetail() + "; " + res.Detail
		return res
	}
	return transferResult(r.body)
}

// transferResult maps a transfer object.
func transferResult(raw []byte) paykit.Result {
	var t transfer
	if err := decodeJSON(raw, &t); err != nil || t.Object != "transfer" || t.ID == "" {
		return paykit.Result{Outcome: paykit.OutcomeUnknown, Detail: "opn: answer is not a transfer object"}
	}
	res := paykit.Result{Reference: t.ID}
	switch {
	case t.Deleted:
		res.Outcome, res.Detail = paykit.OutcomeCancelled, "opn: transfer deleted"
	case t.Failed || t.FailureCode != "":
		res.Outcome, res.FailureCode = paykit.OutcomeFailed, paykit.FailureProviderDeclined
		if strings.Contains(t.FailureCode, "account") || strings.Contains(t.FailureCode, "recipient") {
			res.FailureCode = paykit.FailureAccountInvalid
		}
		res.Detail = fmt.Sprintf("opn: transfer failed: %s: %s", t.FailureCode, t.FailureMessage)
	case t.Paid:
		res.Outcome, res.Detail = paykit.OutcomeSucceeded, "opn: transfer paid"
	default:
		res.Outcome, res.Detail = paykit.OutcomePending, fmt.Sprintf("opn: transfer sent=%v", t.Sent)
	}
	return res
}
