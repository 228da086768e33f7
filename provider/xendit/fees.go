package xendit

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"time"

	"github.com/paykit/paykit"
)

// transaction is the part of a Transactions API transaction the adapter
// reads: the balance movement of a payment, refund, dispute or payout.
type transaction struct {
	ID                      string  `json:"id"`
	ProductID               string  `json:"product_id"`
	Type                    string  `json:"type"`
	Status                  string  `json:"status"`
	ReferenceID             string  `json:"reference_id"`
	Currency                string  `json:"currency"`
	Amount                  amount  `json:"amount"`
	NetAmount               amount  `json:"net_amount"`
	NetAmountCurrency       string  `json:"net_amount_currency"`
	Cashflow                string  `json:"cashflow"`
	SettlementStatus        *string `json:"settlement_status"`
	EstimatedSettlementTime *string `json:"estimated_settlement_time"`
	Created                 string  `json:"created"`
	Fee                     *struct {
		XenditFee                amount `json:"xendit_fee"`
		ValueAddedTax            amount `json:"value_added_tax"`
		XenditWithholdingTax     amount `json:"xendit_withholding_tax"`
		ThirdPartyWithholdingTax amount `json:"third_party_withholding_tax"`
		Status                   string `json:"status"`
	} `json:"fee"`
	ProductData *struct {
		PaymentRequestID string `json:"payment_request_id"`
	} `json:"product_data"`
}

// fee is the fee Xendit states for t: xendit_fee plus value_added_tax,
// in minor units of t's currency; why says why there is none yet (the
// fee is still being computed) or why it cannot be read.
func (t transaction) fee() (fee int64, why string) {
	if t.Fee == nil {
		return 0, "the transaction states no fee object"
	}
	switch t.Fee.Status {
	case "COMPLETED", "NOT_APPLICABLE":
	default:
		return 0, "its fee is " + t.Fee.Status
	}
	f, err := orZero(t.Fee.XenditFee, t.Currency)
	if err != nil {
		return 0, "xendit_fee: " + err.Error()
	}
	vat, err := orZero(t.Fee.ValueAddedTax, t.Currency)
	if err != nil {
		return 0, "value_added_tax: " + err.Error()
	}
	return f + vat, ""
}

func orZero(a amount, ccy string) (int64, error) {
	if a == "" {
		return 0, nil
	}
	return a.minor(ccy)
}

// settlesAt is when Xendit estimates t's funds settle; zero when it
// states none.
func (t transaction) settlesAt() time.Time {
	if t.EstimatedSettlementTime == nil {
		return time.Time{}
	}
	at, err := time.Parse(time.RFC3339, *t.EstimatedSettlementTime)
	if err != nil {
		return time.Time{}
	}
	return at.UTC()
}

// paymentTransaction finds the PAYMENT transaction of payment request pr
// (GET /transactions?reference_id=…&types=PAYMENT, the transaction whose
// product_data names pr). Without it, the reason.
func (p *Provider) paymentTransaction(ctx context.Context, pr paymentRequest) (*transaction, string) {
	q := url.Values{"reference_id": {pr.ReferenceID}, "types": {"PAYMENT"}, "limit": {"50"}}
	body, end := p.get(ctx, "/transactions", q, false)
	if end != nil {
		return nil, end.Detail
	}
	var l struct {
		Data []transaction `json:"data"`
	}
	if err := json.Unmarshal(body, &l); err != nil || l.Data == nil {
		return nil, "GET /transactions: the answer is not a list"
	}
	for i := range l.Data {
		t := &l.Data[i]
		if t.Type == "PAYMENT" && t.Status == "SUCCESS" && t.ProductData != nil && t.ProductData.PaymentRequestID == pr.ID {
			return t, ""
		}
	}
	return nil, "no SUCCESS PAYMENT transaction of " + pr.ID + " is listed yet"
}

// withFee completes a succeeded payment request's result with the fee of
// its transaction and the time Xendit estimates its funds settle.
// paykit never guesses a fee Xendit states, so a succeeded payment whose
// transaction (or fee) cannot be read now is Unknown, its Reference kept:
// a later inquiry finds it with its fee.
func (p *Provider) withFee(ctx context.Context, pr paymentRequest, res paykit.Result) paykit.Result {
	t, why := p.paymentTransaction(ctx, pr)
	if t == nil {
		return paykit.Result{Outcome: paykit.OutcomeUnknown, Reference: pr.ID, Detail: res.Detail + "; succeeded, but " + why}
	}
	if t.Currency != pr.Currency {
		return paykit.Result{Outcome: paykit.OutcomeUnknown, Reference: pr.ID, Detail: fmt.Sprintf("%s; succeeded, but its transaction %s is in %s", res.Detail, t.ID, t.Currency)}
	}
	fee, why := t.fee()
	if why != "" {
		return paykit.Result{Outcome: paykit.OutcomeUnknown, Reference: pr.ID, Detail: res.Detail + "; succeeded, but " + why}
	}
	res.Outcome, res.Fee, res.AvailableOn = paykit.OutcomeSucceeded, fee, t.settlesAt()
	res.Detail += fmt.Sprintf("; transaction %s fee %d", t.ID, fee)
	return res
}
