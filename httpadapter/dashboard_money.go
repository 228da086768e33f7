package httpadapter

import (
	"context"
	"net/http"
	"time"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/internal/contract"
	"github.com/paykit/paykit/internal/enums"
)

// The pages of the money as the Provider holds it: a merchant's balance
// transactions and disputes, and a payment's fee and settlement.

// dateLayout is the layout of the created range filters (a browser's date
// input sends it); the dates are UTC days.
const dateLayout = "2006-01-02"

// balanceTxnQuery is the filter of the balance transactions page beyond
// the shared ones: type, source and the created range (both days
// included).
type balanceTxnQuery struct {
	Type, Source, From, To string
}

func readBalanceTxnQuery(r *http.Request) balanceTxnQuery {
	q := r.URL.Query()
	return balanceTxnQuery{Type: q.Get("type"), Source: q.Get("source"), From: q.Get("created_from"), To: q.Get("created_to")}
}

// params is the Service's filter of the query: a status, a type, the
// range [From 00:00, the day after To 00:00) in UTC.
func (bq balanceTxnQuery) params(lq listQuery) (paykit.BalanceTransactionListParams, error) {
	p := paykit.BalanceTransactionListParams{Source: bq.Source, ListParams: paykit.ListParams[paykit.BalanceTransactionStatus]{
		PageParams: paykit.PageParams{Cursor: lq.Cursor}, Currency: lq.Currency}}
	if lq.Status != "" {
		p.Statuses = []paykit.BalanceTransactionStatus{paykit.BalanceTransactionStatus(lq.Status)}
	}
	if bq.Type != "" {
		p.Types = []paykit.BalanceTransactionType{paykit.BalanceTransactionType(bq.Type)}
	}
	if bq.From != "" {
		from, err := time.Parse(dateLayout, bq.From)
		if err != nil {
			return p, invalidRequest("created_from", "Created from must be a date: YYYY-MM-DD.")
		}
		p.CreatedAfter = &from
	}
	if bq.To != "" {
		to, err := time.Parse(dateLayout, bq.To)
		if err != nil {
			return p, invalidRequest("created_to", "Created to must be a date: YYYY-MM-DD.")
		}
		to = to.AddDate(0, 0, 1)
		p.CreatedBefore = &to
	}
	return p, nil
}

func (d *dashboard) balanceTxnList(w http.ResponseWriter, r *http.Request, s *session) error {
	bq := readBalanceTxnQuery(r)
	filtersOf := func(sc scoped, lq listQuery) *filters {
		return &filters{
			Hidden: []hidden{{"merchant", sc.MerchantID}, {"env", string(sc.Environment)}},
			Fields: []formField{
				{Name: "type", Label: "Type", Options: options(bq.Type, append([]string{""}, enums.BalanceTransactionTypes...)...)},
				{Name: "status", Label: "Status", Options: options(lq.Status, append([]string{""}, enums.BalanceTransactionStatuses...)...)},
				{Name: "currency", Label: "Currency", Value: lq.Currency},
				{Name: "source", Label: "Source id", Value: bq.Source},
				{Name: "created_from", Label: "Created from (UTC)", Type: "date", Value: bq.From},
				{Name: "created_to", Label: "Created to (UTC)", Type: "date", Value: bq.To},
			},
		}
	}
	return d.filteredListPage(w, r, s, "/balance_transactions", "Balance transactions", filtersOf,
		func(ctx context.Context, sc scoped, lq listQuery) (*table, string, error) {
			params, err := bq.params(lq)
			if err != nil {
				return nil, "", err
			}
			page, err := d.svc.ListBalanceTransactions(ctx, sc.principal(), params)
			if err != nil {
				return nil, "", err
			}
			t := &table{Head: []string{"Balance transaction", "Type", "Status", "Amount", "Fee", "Net", "Source", "Available on", "Created"},
				Empty: "No balance transactions match."}
			for _, bt := range page.Data {
				t.Rows = append(t.Rows, []cell{mono(bt.ID), word(string(bt.Type)), statusCell(string(bt.Status)), money(bt.Amount, bt.Currency),
					money(bt.Fee, bt.Currency), money(bt.Net, bt.Currency), sourceCell(r, sc, &bt), text(when(bt.AvailableOn)), text(when(bt.CreatedAt))})
			}
			return t, page.NextCursor, nil
		})
}

// sourceCell links a balance transaction's source to its page; an
// adjustment has none.
func sourceCell(r *http.Request, sc scoped, bt *paykit.BalanceTransaction) cell {
	var path string
	switch bt.Type {
	case paykit.BalanceTxnPayment:
		path = "/payment_intents/"
	case paykit.BalanceTxnRefund:
		path = "/refunds/"
	case paykit.BalanceTxnPayout, paykit.BalanceTxnPayoutReturn:
		path = "/payouts/"
	case paykit.BalanceTxnDispute, paykit.BalanceTxnDisputeReversal:
		path = "/disputes/"
	default:
		return mono(bt.Source)
	}
	return linked(bt.Source, link(r, path+pathID(bt.Source), sc.params()...))
}

func (d *dashboard) disputeList(w http.ResponseWriter, r *http.Request, s *session) error {
	payment := r.URL.Query().Get("payment_intent")
	filtersOf := func(sc scoped, lq listQuery) *filters {
		return &filters{
			Hidden: []hidden{{"merchant", sc.MerchantID}, {"env", string(sc.Environment)}},
			Fields: []formField{
				{Name: "status", Label: "Status", Options: options(lq.Status, append([]string{""}, enums.DisputeStatuses...)...)},
				{Name: "currency", Label: "Currency", Value: lq.Currency},
				{Name: "payment_intent", Label: "Payment intent id", Value: payment},
			},
		}
	}
	return d.filteredListPage(w, r, s, "/disputes", "Disputes", filtersOf,
		func(ctx context.Context, sc scoped, lq listQuery) (*table, string, error) {
			params := paykit.DisputeListParams{PaymentIntent: payment, ListParams: paykit.ListParams[paykit.DisputeStatus]{
				PageParams: paykit.PageParams{Cursor: lq.Cursor}, Currency: lq.Currency}}
			if lq.Status != "" {
				params.Statuses = []paykit.DisputeStatus{paykit.DisputeStatus(lq.Status)}
			}
			page, err := d.svc.ListDisputes(ctx, sc.principal(), params)
			if err != nil {
				return nil, "", err
			}
			t := &table{Head: []string{"Dispute", "Status", "Amount", "Reason", "Payment intent", "Evidence due by", "Created"}, Empty: "No disputes match."}
			for _, dp := range page.Data {
				t.Rows = append(t.Rows, []cell{linked(dp.ID, link(r, "/disputes/"+pathID(dp.ID), sc.params()...)),
					statusCell(string(dp.Status)), money(dp.Amount, dp.Currency), word(string(dp.Reason)),
					linked(dp.PaymentIntentID, link(r, "/payment_intents/"+pathID(dp.PaymentIntentID), sc.params()...)),
					text(when(dp.EvidenceDueBy)), text(when(dp.CreatedAt))})
			}
			return t, page.NextCursor, nil
		})
}

func (d *dashboard) disputeDetail(w http.ResponseWriter, r *http.Request, s *session) error {
	sc, err := d.detailScope(r)
	if err != nil {
		return err
	}
	dp, err := d.svc.GetDispute(r.Context(), sc.principal(), r.PathValue("id"))
	if err != nil {
		return err
	}
	evidence := dp.Evidence
	if evidence == "" {
		evidence = "none"
	}
	f := []field{
		{Label: "Status", ID: "status", Value: statusCell(string(dp.Status))},
		{Label: "Amount", ID: "amount", Value: text(formatMoney(dp.Amount, dp.Currency))},
		{Label: "Dispute fee", ID: "fee", Value: text(formatMoney(dp.Fee, dp.Currency))},
		{Label: "Reason", ID: "reason", Value: text(string(dp.Reason))},
		{Label: "Payment intent", ID: "payment-intent", Value: linked(dp.PaymentIntentID, link(r, "/payment_intents/"+pathID(dp.PaymentIntentID), sc.params()...))},
		{Label: "Merchant", Value: merchantCell(r, dp.MerchantID)},
		{Label: "Environment", Value: text(string(dp.Environment))},
		{Label: "Evidence", ID: "evidence", Value: text(evidence)},
		{Label: "Evidence submitted", ID: "evidence-submitted", Value: text(whenPtr(dp.EvidenceSubmittedAt))},
		{Label: "Evidence due by", ID: "evidence-due-by", Value: text(when(dp.EvidenceDueBy))},
		{Label: "Closed", ID: "closed-at", Value: text(whenPtr(dp.ClosedAt))},
		{Label: "Created", Value: text(when(dp.CreatedAt))},
		{Label: "Updated", Value: text(when(dp.UpdatedAt))},
	}
	internal := []field{
		{Label: "Provider", Value: text(dp.Provider)},
		{Label: "Provider reference", Value: mono(dp.ProviderRef)},
	}
	txns, err := d.svc.ListBalanceTransactions(r.Context(), sc.principal(), paykit.BalanceTransactionListParams{Source: dp.ID,
		ListParams: paykit.ListParams[paykit.BalanceTransactionStatus]{PageParams: paykit.PageParams{Limit: contract.MaxPageLimit}}})
	if err != nil {
		return err
	}
	bt := &table{Head: []string{"Balance transaction", "Type", "Status", "Amount", "Fee", "Net", "Created"}, Empty: "No balance transactions."}
	for _, t := range txns.Data {
		bt.Rows = append(bt.Rows, []cell{mono(t.ID), word(string(t.Type)), statusCell(string(t.Status)), money(t.Amount, t.Currency),
			money(t.Fee, t.Currency), money(t.Net, t.Currency), text(when(t.CreatedAt))})
	}
	p := &dashPageView{Title: "Dispute " + dp.ID, Sections: []section{{ID: "details", Heading: "Details", Fields: f},
		{ID: "provider", Heading: "Provider (internal)", Fields: internal},
		{ID: "balance-transactions", Heading: "Balance transactions", Table: bt},
		d.timelineSection(r.Context(), dp)}}
	d.show(w, r, s, http.StatusOK, "/disputes", nil, p)
	return nil
}

// word is a value that is not broken across lines (a type name).
func word(s string) cell { return cell{Text: s, Class: "word"} }

// succeededMoney is an amount of a payment's money that exists once it
// succeeded (its fee, its net); nothing before.
func succeededMoney(pi *paykit.PaymentIntent, minor int64) cell {
	if pi.Status != paykit.PaymentSucceeded {
		return text("")
	}
	return text(formatMoney(minor, pi.Currency))
}

// settlementCell is where a succeeded payment's net is: pending until the
// Provider settles it, then available.
func settlementCell(pi *paykit.PaymentIntent) cell {
	switch {
	case pi.SettledAt != nil:
		return cell{Text: "settled at " + when(*pi.SettledAt), Tone: "ok"}
	case pi.Status == paykit.PaymentSucceeded:
		return cell{Text: "pending until settled", Tone: "wait"}
	}
	return text("")
}
