package stripe

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/paykit/paykit"
)

// balanceTransaction is the part of Stripe's BalanceTransaction object
// the adapter reads: amounts in the account's settlement currency.
type balanceTransaction struct {
	ID          string `json:"id"`
	Object      string `json:"object"`
	Amount      int64  `json:"amount"`
	Fee         int64  `json:"fee"`
	Net         int64  `json:"net"`
	Currency    string `json:"currency"`
	AvailableOn int64  `json:"available_on"`
	Status      string `json:"status"`
	Type        string `json:"type"`
}

// charge is the part of Stripe's Charge object the adapter reads.
type charge struct {
	ID                 string          `json:"id"`
	Object             string          `json:"object"`
	Amount             int64           `json:"amount"`
	Currency           string          `json:"currency"`
	BalanceTransaction json.RawMessage `json:"balance_transaction"` // null, an id or an expanded object
}

// expanded decodes an expandable field that Stripe expanded into an
// object of type obj; nil for null, an id, or another object.
func expanded[T any](raw json.RawMessage, obj string, object func(*T) string) *T {
	if len(raw) == 0 || raw[0] != '{' {
		return nil
	}
	var v T
	if json.Unmarshal(raw, &v) != nil || object(&v) != obj {
		return nil
	}
	return &v
}

// expandableID is the id of an expandable field: the id itself, or the
// id of the expanded object; "" for null.
func expandableID(raw json.RawMessage) string {
	var id string
	if json.Unmarshal(raw, &id) == nil {
		return id
	}
	var obj struct {
		ID string `json:"id"`
	}
	if json.Unmarshal(raw, &obj) == nil {
		return obj.ID
	}
	return ""
}

// latestCharge is the PaymentIntent's latest charge, if expanded.
func (pi *paymentIntent) latestCharge() *charge {
	return expanded(pi.LatestCharge, "charge", func(c *charge) string { return c.Object })
}

// balanceTransaction is the balance transaction of the PaymentIntent's
// latest charge, if both are expanded.
func (pi *paymentIntent) balanceTransaction() (*charge, *balanceTransaction) {
	ch := pi.latestCharge()
	if ch == nil {
		return nil, nil
	}
	return ch, expanded(ch.BalanceTransaction, "balance_transaction", func(bt *balanceTransaction) string { return bt.Object })
}

// piExpansion expands a PaymentIntent's latest charge and its balance
// transaction, where Stripe states the fee and when the net is available.
const piExpansion = "latest_charge.balance_transaction"

// withFee completes a Succeeded result with the fee and available date of
// the payment's balance transaction: from pi when it carries them
// (expanded), else read from Stripe (GET /v1/payment_intents/{id} with
// the expansion; piID names it when pi is nil). paykit never guesses a
// fee Stripe states, so a succeeded payment whose balance transaction
// cannot be read now is Unknown (its Reference kept): an inquiry later
// finds it with its fee. Other results pass unchanged.
func (p *Provider) withFee(ctx context.Context, r paykit.Result, pi *paymentIntent, piID string) paykit.Result {
	if r.Outcome != paykit.OutcomeSucceeded {
		return r
	}
	if pi != nil {
		if ch, bt := pi.balanceTransaction(); bt != nil {
			return applyFee(r, pi, ch, bt)
		}
		piID = pi.ID
	}
	undecided := func(why string) paykit.Result {
		return paykit.Result{Outcome: paykit.OutcomeUnknown, Reference: r.Reference, Detail: r.Detail + "; succeeded, fee unknown: " + why}
	}
	if piID == "" {
		return undecided("no PaymentIntent")
	}
	fetched, res := p.fetchPI(ctx, piID)
	if fetched == nil {
		return undecided(res.Detail)
	}
	ch, bt := fetched.balanceTransaction()
	if bt == nil {
		return undecided("the charge has no balance transaction yet")
	}
	return applyFee(r, fetched, ch, bt)
}

// fetchPI reads a PaymentIntent with its charge's balance transaction;
// without one, the Result says why.
func (p *Provider) fetchPI(ctx context.Context, id string) (*paymentIntent, paykit.Result) {
	a, fail := p.call(ctx, http.MethodGet, "/v1/payment_intents/"+url.PathEscape(id), url.Values{"expand[]": {piExpansion}}, "")
	if fail != nil {
		return nil, fail.r
	}
	if a.err != nil {
		return nil, readError(a)
	}
	pi, ok := decodePI(a)
	if !ok {
		return nil, unknown("the answer is not a PaymentIntent")
	}
	return pi, paykit.Result{}
}

// applyFee sets r's Fee and AvailableOn from the balance transaction bt of
// charge ch of pi. Stripe states them in the account's settlement
// currency; when that is not the payment's, the fee is brought to the
// payment's currency at the rate of the charge itself (the charge amount
// over the balance transaction's), rounded half up, in integers.
func applyFee(r paykit.Result, pi *paymentIntent, ch *charge, bt *balanceTransaction) paykit.Result {
	fee := bt.Fee
	if !strings.EqualFold(bt.Currency, pi.Currency) {
		amount := ch.Amount
		if amount <= 0 {
			amount = pi.Amount
		}
		if bt.Amount <= 0 || amount <= 0 || amount > 1e12 || fee > 1e12 || fee < 0 {
			return paykit.Result{Outcome: paykit.OutcomeUnknown, Reference: r.Reference,
				Detail: fmt.Sprintf("%s; succeeded, fee unknown: balance transaction %s of %d %s cannot be converted", r.Detail, bt.ID, bt.Amount, bt.Currency)}
		}
		fee = (2*fee*amount + bt.Amount) / (2 * bt.Amount)
	}
	r.Fee = fee
	if bt.AvailableOn > 0 {
		r.AvailableOn = time.Unix(bt.AvailableOn, 0).UTC()
	}
	r.Detail += fmt.Sprintf("; balance_transaction %s fee %d %s", bt.ID, bt.Fee, bt.Currency)
	return r
}
