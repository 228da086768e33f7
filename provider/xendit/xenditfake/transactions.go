package xenditfake

import (
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// transaction is a Transactions API transaction: a movement of the
// account's balance.
type transaction struct {
	ID                      string       `json:"id"`
	ProductID               string       `json:"product_id"`
	Type                    string       `json:"type"`
	Status                  string       `json:"status"`
	ChannelCategory         string       `json:"channel_category"`
	ChannelCode             string       `json:"channel_code"`
	ReferenceID             string       `json:"reference_id"`
	AccountIdentifier       *string      `json:"account_identifier"`
	Currency                string       `json:"currency"`
	Amount                  json.Number  `json:"amount"`
	NetAmount               json.Number  `json:"net_amount"`
	NetAmountCurrency       string       `json:"net_amount_currency"`
	Cashflow                string       `json:"cashflow"`
	SettlementStatus        *string      `json:"settlement_status"`
	EstimatedSettlementTime *string      `json:"estimated_settlement_time"`
	BusinessID              string       `json:"business_id"`
	Created                 string       `json:"created"`
	Updated                 string       `json:"updated"`
	Fee                     fee          `json:"fee"`
	ProductData             *productData `json:"product_data,omitempty"`

	created time.Time
	settles time.Time // money in: when its funds settle
}

type fee struct {
	XenditFee                json.Number `json:"xendit_fee"`
	ValueAddedTax            json.Number `json:"value_added_tax"`
	XenditWithholdingTax     json.Number `json:"xendit_withholding_tax"`
	ThirdPartyWithholdingTax json.Number `json:"third_party_withholding_tax"`
	Status                   string      `json:"status"`
}

type productData struct {
	PaymentRequestID string `json:"payment_request_id"`
}

// vatRates are the fake's tax on its fee, in tenths of a percent, by
// currency.
var vatRates = map[string]int64{"MYR": 80, "THB": 70}

// fees are the fake's fee and tax on a payment of amount: 2.5 % and the
// currency's rate of that, each rounded half up.
func fees(amount int64, ccy string) (fee, vat int64) {
	fee = (amount*25 + 500) / 1000
	vat = (fee*vatRates[ccy] + 500) / 1000
	return fee, vat
}

// Fee reports the fee and tax the fake charged for the paid payment
// request under key, in minor units, and whether it has one.
func (f *Fake) Fee(key string) (int64, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	pr := f.prByRef(key)
	if pr == nil || pr.Status != "SUCCEEDED" {
		return 0, false
	}
	fee, vat := fees(pr.amount, pr.Currency)
	return fee + vat, true
}

// paymentTxn records the PAYMENT transaction of a paid payment request.
// f.mu is held.
func (f *Fake) paymentTxn(pr *paymentRequest, py *payment) {
	now := f.now()
	fee, vat := fees(pr.amount, pr.Currency)
	category := "EWALLET"
	switch {
	case strings.HasSuffix(pr.ChannelCode, "_FPX"):
		category = "DIRECT_DEBIT"
	case pr.ChannelCode == "QRPROMPTPAY":
		category = "QR_CODE"
	case strings.HasSuffix(pr.ChannelCode, "_VIRTUAL_ACCOUNT"):
		category = "VIRTUAL_ACCOUNT"
	}
	t := f.txn("PAYMENT", "MONEY_IN", py.PaymentID, pr.ReferenceID, pr.Currency, pr.amount, now)
	t.ChannelCategory, t.ChannelCode = category, pr.ChannelCode
	t.NetAmount = decimal(pr.amount - fee - vat)
	t.Fee = fee2(fee, vat)
	t.settles = f.settledAt(now)
	at := stamp(t.settles)
	t.EstimatedSettlementTime = &at
	t.ProductData = &productData{PaymentRequestID: pr.ID}
}

func fee2(xendit, vat int64) fee {
	return fee{XenditFee: decimal(xendit), ValueAddedTax: decimal(vat), XenditWithholdingTax: "0", ThirdPartyWithholdingTax: "0", Status: "COMPLETED"}
}

// txn records a SUCCESS transaction of amount without fee. f.mu is held.
func (f *Fake) txn(typ, cashflow, product, ref, ccy string, amount int64, at time.Time) *transaction {
	t := &transaction{
		ID: "txn_" + f.newID("")[0:36], ProductID: product, Type: typ, Status: "SUCCESS", ChannelCategory: "OTHER", ChannelCode: "DEFAULT",
		ReferenceID: ref, Currency: ccy, Amount: decimal(amount), NetAmount: decimal(amount), NetAmountCurrency: ccy,
		Cashflow: cashflow, BusinessID: businessID, Created: stamp(at), Updated: stamp(at),
		Fee:     fee{XenditFee: "0", ValueAddedTax: "0", XenditWithholdingTax: "0", ThirdPartyWithholdingTax: "0", Status: "NOT_APPLICABLE"},
		created: at,
	}
	f.txns = append(f.txns, t)
	return t
}

// view is t as the API shows it now: a money-in transaction's funds are
// settled once its estimated settlement time has passed. f.mu is held.
func (f *Fake) view(t *transaction) json.RawMessage {
	v := *t
	if !t.settles.IsZero() {
		status := "PENDING"
		if !f.now().Before(t.settles) {
			status = "SETTLED"
		}
		v.SettlementStatus = &status
	}
	return clone(v)
}

func (f *Fake) listTransactions(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	bound := func(name string) (time.Time, bool) {
		v := q.Get(name)
		if v == "" {
			return time.Time{}, true
		}
		t, err := time.Parse(time.RFC3339, v)
		return t, err == nil
	}
	gte, ok1 := bound("created[gte]")
	lte, ok2 := bound("created[lte]")
	limit, err := strconv.Atoi(q.Get("limit"))
	if q.Get("limit") == "" {
		limit, err = 10, nil
	}
	if !ok1 || !ok2 || err != nil || limit < 1 || limit > 50 {
		writeError(w, http.StatusBadRequest, "API_VALIDATION_ERROR", "invalid filter or limit (1 to 50)")
		return
	}
	var types []string
	for _, v := range q["types"] {
		types = append(types, strings.Split(v, ",")...)
	}
	f.mu.Lock()
	all := slices.Clone(f.txns)
	slices.SortStableFunc(all, func(a, b *transaction) int { return b.created.Compare(a.created) }) // newest first
	var page []json.RawMessage
	started := q.Get("after_id") == ""
	more := false
	for _, t := range all {
		if !started {
			started = t.ID == q.Get("after_id")
			continue
		}
		if (len(types) > 0 && !slices.Contains(types, t.Type)) || (q.Get("reference_id") != "" && t.ReferenceID != q.Get("reference_id")) ||
			(q.Get("currency") != "" && t.Currency != q.Get("currency")) ||
			(!gte.IsZero() && t.created.Before(gte)) || (!lte.IsZero() && t.created.After(lte)) {
			continue
		}
		if len(page) == limit {
			more = true
			break
		}
		page = append(page, f.view(t))
	}
	f.mu.Unlock()
	if page == nil {
		page = []json.RawMessage{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": page, "has_more": more, "links": []any{}})
}

func (f *Fake) getTransaction(w http.ResponseWriter, id string) {
	f.mu.Lock()
	var out json.RawMessage
	for _, t := range f.txns {
		if t.ID == id {
			out = f.view(t)
		}
	}
	f.mu.Unlock()
	if out == nil {
		writeError(w, http.StatusNotFound, "DATA_NOT_FOUND", "transaction "+id+" cannot be found")
		return
	}
	writeJSON(w, http.StatusOK, out)
}

// txnStatus sets the status of the transaction of product. f.mu is held.
func (f *Fake) txnStatus(product, status string, at time.Time) {
	for _, t := range f.txns {
		if t.ProductID == product {
			t.Status, t.Updated = status, stamp(at)
		}
	}
}
