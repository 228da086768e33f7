package sqlstore

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/paykit/paykit"
)

// The list filters of every list route, on tables where merchant mch_0
// (every tenth row) takes only MYR in MY and has few rows in a status (or
// event type) that every other merchant's row has, in THB in TH: a filter
// on a value mch_0 never has, or rarely has, must read only matching rows,
// in list order, however large the table. Its rare rows are spread evenly
// through its history: one in a hundred from 300 k rows on, and at least
// 30 (more than a page) in smaller tables, so that the first page of a
// rare value holds the same rows, as scattered, at every size.

// filterSeeds insert rows 1..? of each table in one statement.
var filterSeeds = map[string]string{
	"payment_intents": `INSERT INTO payment_intents (id, merchant_id, environment, status, amount,
		currency, country, merchant_reference, payment_method, return_url, checkout_id, failure_code, provider,
		provider_ref, attempt, provider_url, expires_at, created_at, updated_at, version)
		SELECT 'pi_' || lpad(i::text, 8, '0'), 'mch_' || (i % 10), 'live', ` + rareStatus("'failed'", "'succeeded'") + `,
		1000, ` + currencyCountry + `, 'ref_' || i, 'FPX', '', '', '', 'sandbox', '', 'closed', '', t, t, t, 0` + seedRows,
	"payout_intents": `INSERT INTO payout_intents (id, merchant_id, environment, status, approval_pending,
		amount, currency, country, merchant_reference, recipient_type, bank_code, holder_name, holder_name_th,
		account_last4, account_key_id, reserved_amount, completed_amount, returned_amount, failure_code,
		failure_message, cancel_reason, provider, provider_ref, attempt, created_at, updated_at, version)
		SELECT 'po_' || lpad(i::text, 8, '0'), 'mch_' || (i % 10), 'live', ` + rareStatus("'failed'", "'succeeded'") + `, false,
		1000, ` + currencyCountry + `, 'ref_' || i, 'bank_account', 'KBANK', 'S', '', '6789', 'k', 0, 1000, 0, '', '', '',
		'sandbox', '', 'closed', t, t, 0` + seedRows,
	"checkouts": `INSERT INTO checkouts (id, merchant_id, environment, status, amount, currency,
		country, merchant_reference, payment_intent_id, payment_method, return_url, expires_at, created_at,
		updated_at, version)
		SELECT 'co_' || lpad(i::text, 8, '0'), 'mch_' || (i % 10), 'live', ` + rareStatus("'expired'", "'completed'") + `, 1000,
		` + currencyCountry + `, 'ref_' || i, 'pi_' || i, '', '', t, t, t, 0` + seedRows,
	"paykit_refunds": `INSERT INTO paykit_refunds (id, merchant_id, environment, payment_intent_id,
		amount, currency, status, reason, merchant_reference, failure_code, provider, provider_ref, attempt,
		created_at, updated_at, version)
		SELECT 're_' || lpad(i::text, 8, '0'), 'mch_' || (i % 10), 'live', 'pi_' || (i / 10), 100,
		CASE WHEN i % 10 = 0 THEN 'MYR' ELSE 'THB' END, ` + rareStatus("'failed'", "'succeeded'") + `, '', 'ref_' || i, '',
		'sandbox', '', 'closed', t, t, 0` + seedRows,
	"paykit_balance_transactions": `INSERT INTO paykit_balance_transactions (id, merchant_id, environment, type, source,
		amount, fee, net, currency, status, available_on, created_at, updated_at, version)
		SELECT 'txn_' || lpad(i::text, 8, '0'), 'mch_' || (i % 10), 'live', ` + rareStatus("'refund'", "'payment'") + `,
		'pi_' || (i / 10), 1000, 29, 971, CASE WHEN i % 10 = 0 THEN 'MYR' ELSE 'THB' END,
		` + rareStatus("'pending'", "'available'") + `, t, t, t, 0` + seedRows,
	"paykit_disputes": `INSERT INTO paykit_disputes (id, merchant_id, environment, payment_intent_id, amount,
		currency, fee, reason, status, evidence, evidence_due_by, provider, provider_ref, created_at, updated_at, version)
		SELECT 'dp_' || lpad(i::text, 8, '0'), 'mch_' || (i % 10), 'live', 'pi_' || (i / 10), 1000,
		CASE WHEN i % 10 = 0 THEN 'MYR' ELSE 'THB' END, 1500, 'general', ` + rareStatus("'needs_response'", "'won'") + `, '',
		t, 'sandbox', 'dpr_' || i, t, t, 0` + seedRows,
	"events": `INSERT INTO events (id, merchant_id, environment, type, object_id, data, created_at)
		SELECT 'evt_' || lpad(i::text, 8, '0'), 'mch_' || (i % 10), 'live',
		` + rareStatus("'payout.failed'", "'payment_intent.succeeded'") + `, 'pi_' || i, '{}', t` + seedRows,
}

const (
	currencyCountry = `CASE WHEN i % 10 = 0 THEN 'MYR' ELSE 'THB' END, CASE WHEN i % 10 = 0 THEN 'MY' ELSE 'TH' END`
	seedRows        = `
		FROM generate_series(1, ?) AS i, LATERAL (SELECT TIMESTAMPTZ '2026-01-01 00:00:00+00' + i * INTERVAL '1 millisecond' AS t) x`
)

// rareStatus is rare for mch_0 (one of its rows in {stride}) and every
// other merchant's; common is the rest of mch_0's.
func rareStatus(rare, common string) string {
	return "CASE WHEN i % 10 = 0 AND (i / 10) % {stride} <> 0 THEN " + common + " ELSE " + rare + " END"
}

// rareStride is one in how many of mch_0's n/10 rows have the rare value:
// 100, or fewer so that at least 30 do.
func rareStride(n int) int { return max(1, min(100, n/10/30)) }

// seedFilterTables inserts n rows into every table of filterSeeds and
// refreshes the planner's statistics.
func seedFilterTables(tb testing.TB, s *Store, n int) {
	tb.Helper()
	ctx := context.Background()
	for table, insert := range filterSeeds {
		insert = strings.ReplaceAll(insert, "{stride}", strconv.Itoa(rareStride(n)))
		if _, err := s.db.ExecContext(ctx, insert, n); err != nil {
			tb.Fatalf("%s: %v", table, err)
		}
		if _, err := s.db.ExecContext(ctx, "ANALYZE "+table); err != nil {
			tb.Fatal(err)
		}
	}
}

// filterCase is one list filter: the first page of mch_0 it asks for, as
// SQL and as the Store's answer, and the index that must serve it.
type filterCase struct {
	name  string
	index string
	// merged: the filter takes several values, whose pages are merged
	// (Merge Append); a value common for the merchant may be read from
	// a list index (listIndexes) instead, as its rows are dense there.
	merged      bool
	listIndexes []string
	sql         func(s *Store) string
	list        func(ctx context.Context, s *Store) (int, error)
}

// listCase is a filterCase of a list whose query builder is build and
// whose Store method is list.
func listCase[Q any, R any, V any](name, index string, q Q, build func(tx, *[]R, Q) *bun.SelectQuery,
	list func(tx, context.Context, Q) ([]V, error)) filterCase {
	return filterCase{name: name, index: index,
		sql: func(s *Store) string {
			var rows []R
			return build(s.tx, &rows, q).String()
		},
		list: func(ctx context.Context, s *Store) (int, error) {
			page, err := list(s.tx, ctx, q)
			return len(page), err
		},
	}
}

var (
	filterScope  = paykit.Scope{MerchantID: "mch_0", Environment: paykit.Live}
	filterAfter  = time.Date(2026, 1, 1, 0, 0, 0, 500_000_000, time.UTC)
	filterBefore = filterAfter
)

// filterCases are every filter of every list route, one at a time.
func filterCases() []filterCase {
	pi := func(name, index string, f paykit.ListParams[paykit.PaymentStatus]) filterCase {
		q := paykit.ListQuery[paykit.ListParams[paykit.PaymentStatus]]{Scope: filterScope, Filter: f, Limit: 26}
		return listCase("payment_intents/"+name, index, q, tx.listPaymentIntentsQuery, tx.ListPaymentIntents)
	}
	po := func(name, index string, f paykit.ListParams[paykit.PayoutStatus]) filterCase {
		q := paykit.PayoutQuery{ListQuery: paykit.ListQuery[paykit.ListParams[paykit.PayoutStatus]]{Scope: filterScope, Filter: f, Limit: 26}}
		return listCase("payout_intents/"+name, index, q, tx.listPayoutIntentsQuery, tx.ListPayoutIntents)
	}
	co := func(name, index string, f paykit.ListParams[paykit.CheckoutStatus]) filterCase {
		q := paykit.ListQuery[paykit.ListParams[paykit.CheckoutStatus]]{Scope: filterScope, Filter: f, Limit: 26}
		return listCase("checkouts/"+name, index, q, tx.listCheckoutsQuery, tx.ListCheckouts)
	}
	re := func(name, index string, f paykit.RefundListParams) filterCase {
		q := paykit.ListQuery[paykit.RefundListParams]{Scope: filterScope, Filter: f, Limit: 26}
		return listCase("refunds/"+name, index, q, tx.listRefundsQuery, tx.ListRefunds)
	}
	bt := func(name, index string, f paykit.BalanceTransactionListParams) filterCase {
		q := paykit.ListQuery[paykit.BalanceTransactionListParams]{Scope: filterScope, Filter: f, Limit: 26}
		return listCase("balance_transactions/"+name, index, q, tx.listBalanceTxnsQuery, tx.ListBalanceTransactions)
	}
	dp := func(name, index string, f paykit.DisputeListParams) filterCase {
		q := paykit.ListQuery[paykit.DisputeListParams]{Scope: filterScope, Filter: f, Limit: 26}
		return listCase("disputes/"+name, index, q, tx.listDisputesQuery, tx.ListDisputes)
	}
	ev := func(name, index string, f paykit.EventListParams) filterCase {
		q := paykit.ListQuery[paykit.EventListParams]{Scope: filterScope, Filter: f, Limit: 26}
		return listCase("events/"+name, index, q, tx.listEventsQuery, tx.ListEvents)
	}
	merged := func(c filterCase, listIndexes ...string) filterCase {
		c.merged, c.listIndexes = true, listIndexes
		return c
	}
	return []filterCase{
		pi("status", "payment_intents_status_list_idx", paykit.ListParams[paykit.PaymentStatus]{Statuses: []paykit.PaymentStatus{paykit.PaymentFailed}}),
		merged(pi("statuses", "payment_intents_status_list_idx", paykit.ListParams[paykit.PaymentStatus]{Statuses: []paykit.PaymentStatus{paykit.PaymentFailed, paykit.PaymentSucceeded}}), "payment_intents_list_idx"),
		pi("currency", "payment_intents_currency_list_idx", paykit.ListParams[paykit.PaymentStatus]{Currency: "THB"}),
		pi("country", "payment_intents_country_list_idx", paykit.ListParams[paykit.PaymentStatus]{Country: "TH"}),
		pi("merchant_reference", "payment_intents_merchant_reference_key", paykit.ListParams[paykit.PaymentStatus]{MerchantReference: "ref_500"}),
		pi("created_after", "payment_intents_list_idx", paykit.ListParams[paykit.PaymentStatus]{CreatedAfter: &filterAfter}),
		pi("created_before", "payment_intents_list_idx", paykit.ListParams[paykit.PaymentStatus]{CreatedBefore: &filterBefore}),

		po("status", "payout_intents_status_list_idx", paykit.ListParams[paykit.PayoutStatus]{Statuses: []paykit.PayoutStatus{paykit.PayoutFailed}}),
		merged(po("statuses", "payout_intents_status_list_idx", paykit.ListParams[paykit.PayoutStatus]{Statuses: []paykit.PayoutStatus{paykit.PayoutFailed, paykit.PayoutSucceeded}}), "payout_intents_list_idx", "payout_intents_all_list_idx"),
		po("currency", "payout_intents_currency_list_idx", paykit.ListParams[paykit.PayoutStatus]{Currency: "THB"}),
		po("country", "payout_intents_country_list_idx", paykit.ListParams[paykit.PayoutStatus]{Country: "TH"}),
		po("merchant_reference", "payout_intents_merchant_reference_key", paykit.ListParams[paykit.PayoutStatus]{MerchantReference: "ref_500"}),
		po("created_after", "payout_intents_list_idx", paykit.ListParams[paykit.PayoutStatus]{CreatedAfter: &filterAfter}),
		po("created_before", "payout_intents_list_idx", paykit.ListParams[paykit.PayoutStatus]{CreatedBefore: &filterBefore}),

		co("status", "checkouts_status_list_idx", paykit.ListParams[paykit.CheckoutStatus]{Statuses: []paykit.CheckoutStatus{paykit.CheckoutExpired}}),
		merged(co("statuses", "checkouts_status_list_idx", paykit.ListParams[paykit.CheckoutStatus]{Statuses: []paykit.CheckoutStatus{paykit.CheckoutExpired, paykit.CheckoutCompleted}}), "checkouts_list_idx"),
		co("currency", "checkouts_currency_list_idx", paykit.ListParams[paykit.CheckoutStatus]{Currency: "THB"}),
		co("country", "checkouts_country_list_idx", paykit.ListParams[paykit.CheckoutStatus]{Country: "TH"}),
		co("merchant_reference", "checkouts_merchant_reference_key", paykit.ListParams[paykit.CheckoutStatus]{MerchantReference: "ref_500"}),
		co("created_after", "checkouts_list_idx", paykit.ListParams[paykit.CheckoutStatus]{CreatedAfter: &filterAfter}),
		co("created_before", "checkouts_list_idx", paykit.ListParams[paykit.CheckoutStatus]{CreatedBefore: &filterBefore}),

		re("status", "paykit_refunds_status_list_idx", paykit.RefundListParams{ListParams: paykit.ListParams[paykit.RefundStatus]{Statuses: []paykit.RefundStatus{paykit.RefundFailed}}}),
		merged(re("statuses", "paykit_refunds_status_list_idx", paykit.RefundListParams{ListParams: paykit.ListParams[paykit.RefundStatus]{Statuses: []paykit.RefundStatus{paykit.RefundFailed, paykit.RefundSucceeded}}}), "paykit_refunds_list_idx"),
		re("currency", "paykit_refunds_currency_list_idx", paykit.RefundListParams{ListParams: paykit.ListParams[paykit.RefundStatus]{Currency: "THB"}}),
		re("payment_intent", "paykit_refunds_payment_intent_idx", paykit.RefundListParams{PaymentIntent: "pi_50"}),
		re("merchant_reference", "paykit_refunds_merchant_reference_key", paykit.RefundListParams{ListParams: paykit.ListParams[paykit.RefundStatus]{MerchantReference: "ref_500"}}),
		re("created_after", "paykit_refunds_list_idx", paykit.RefundListParams{ListParams: paykit.ListParams[paykit.RefundStatus]{CreatedAfter: &filterAfter}}),
		re("created_before", "paykit_refunds_list_idx", paykit.RefundListParams{ListParams: paykit.ListParams[paykit.RefundStatus]{CreatedBefore: &filterBefore}}),

		bt("type", "paykit_balance_transactions_type_list_idx", paykit.BalanceTransactionListParams{Types: []paykit.BalanceTransactionType{paykit.BalanceTxnRefund}}),
		merged(bt("types", "paykit_balance_transactions_type_list_idx", paykit.BalanceTransactionListParams{Types: []paykit.BalanceTransactionType{paykit.BalanceTxnRefund, paykit.BalanceTxnPayment}}), "paykit_balance_transactions_list_idx"),
		bt("status", "paykit_balance_transactions_status_list_idx", paykit.BalanceTransactionListParams{ListParams: paykit.ListParams[paykit.BalanceTransactionStatus]{Statuses: []paykit.BalanceTransactionStatus{paykit.BalanceTxnPending}}}),
		merged(bt("statuses", "paykit_balance_transactions_status_list_idx", paykit.BalanceTransactionListParams{ListParams: paykit.ListParams[paykit.BalanceTransactionStatus]{Statuses: []paykit.BalanceTransactionStatus{paykit.BalanceTxnPending, paykit.BalanceTxnAvailable}}}), "paykit_balance_transactions_list_idx"),
		// A type rare for the merchant with several statuses (its rows are
		// those of a rare status too): each status's page reads the rare
		// rows of either index.
		merged(bt("type_statuses", "paykit_balance_transactions_type_list_idx", paykit.BalanceTransactionListParams{Types: []paykit.BalanceTransactionType{paykit.BalanceTxnRefund},
			ListParams: paykit.ListParams[paykit.BalanceTransactionStatus]{Statuses: []paykit.BalanceTransactionStatus{paykit.BalanceTxnPending, paykit.BalanceTxnAvailable}}}), "paykit_balance_transactions_status_list_idx"),
		bt("currency", "paykit_balance_transactions_currency_list_idx", paykit.BalanceTransactionListParams{ListParams: paykit.ListParams[paykit.BalanceTransactionStatus]{Currency: "THB"}}),
		bt("source", "paykit_balance_transactions_source_idx", paykit.BalanceTransactionListParams{Source: "pi_50"}),
		bt("created_after", "paykit_balance_transactions_list_idx", paykit.BalanceTransactionListParams{ListParams: paykit.ListParams[paykit.BalanceTransactionStatus]{CreatedAfter: &filterAfter}}),
		bt("created_before", "paykit_balance_transactions_list_idx", paykit.BalanceTransactionListParams{ListParams: paykit.ListParams[paykit.BalanceTransactionStatus]{CreatedBefore: &filterBefore}}),

		dp("status", "paykit_disputes_status_list_idx", paykit.DisputeListParams{ListParams: paykit.ListParams[paykit.DisputeStatus]{Statuses: []paykit.DisputeStatus{paykit.DisputeNeedsResponse}}}),
		merged(dp("statuses", "paykit_disputes_status_list_idx", paykit.DisputeListParams{ListParams: paykit.ListParams[paykit.DisputeStatus]{Statuses: []paykit.DisputeStatus{paykit.DisputeNeedsResponse, paykit.DisputeWon}}}), "paykit_disputes_list_idx"),
		dp("currency", "paykit_disputes_currency_list_idx", paykit.DisputeListParams{ListParams: paykit.ListParams[paykit.DisputeStatus]{Currency: "THB"}}),
		dp("payment_intent", "paykit_disputes_payment_intent_idx", paykit.DisputeListParams{PaymentIntent: "pi_50"}),
		dp("created_after", "paykit_disputes_list_idx", paykit.DisputeListParams{ListParams: paykit.ListParams[paykit.DisputeStatus]{CreatedAfter: &filterAfter}}),
		dp("created_before", "paykit_disputes_list_idx", paykit.DisputeListParams{ListParams: paykit.ListParams[paykit.DisputeStatus]{CreatedBefore: &filterBefore}}),

		ev("type", "events_type_list_idx", paykit.EventListParams{Types: []string{"payout.failed"}}),
		merged(ev("types", "events_type_list_idx", paykit.EventListParams{Types: []string{"payout.failed", "payment_intent.succeeded"}}), "events_list_idx"),
		ev("created_after", "events_list_idx", paykit.EventListParams{CreatedAfter: &filterAfter}),
		ev("created_before", "events_list_idx", paykit.EventListParams{CreatedBefore: &filterBefore}),
	}
}

// TestListFilterPlansUseIndexes checks, without timing anything, that
// every list filter on PostgreSQL reads the index led by the scope and
// that filter, and no other (no sequential scan): it reads only the rows
// that match (per value, for several). When the planner expects few of them (a unique key, a value
// rare for the merchant) it may sort them; otherwise it reads them in
// list order, and the page stops after its rows.
func TestListFilterPlansUseIndexes(t *testing.T) {
	t.Parallel()
	s := openPostgres(t)
	seedFilterTables(t, s, 20_000)
	for _, c := range filterCases() {
		var plan []string
		if err := s.db.NewRaw("EXPLAIN "+c.sql(s)).Scan(context.Background(), &plan); err != nil {
			t.Fatal(err)
		}
		text := strings.Join(plan, "\n")
		used := regexp.MustCompile(`(?:Index Scan using|Index Scan on) (\w+)`).FindAllStringSubmatch(text, -1)
		if len(used) == 0 || strings.Contains(text, "Seq Scan") {
			t.Errorf("%s: plan reads no index:\n%s", c.name, text)
		}
		if c.merged && !strings.Contains(text, "Merge Append") {
			t.Errorf("%s: plan does not merge the pages of each value:\n%s", c.name, text)
		}
		for _, u := range used {
			if u[1] != c.index && (!c.merged || !slices.Contains(c.listIndexes, u[1])) {
				t.Errorf("%s: plan reads %s, not %s:\n%s", c.name, u[1], c.index, text)
			}
		}
	}
}

// BenchmarkListFiltersPostgres measures the first page of every list
// filter of mch_0 at 1 k and at 1 M rows per table and reports its median
// (p50-ms); with the filters' indexes the two are alike. The two sizes
// run one after the other per filter, on vacuumed tables, so that load on
// the machine and background vacuuming weigh on both alike.
func BenchmarkListFiltersPostgres(b *testing.B) {
	ctx := context.Background()
	sizes := []int{1_000, 1_000_000}
	stores := make([]*Store, len(sizes))
	for i, n := range sizes {
		stores[i] = openPostgres(b)
		seedFilterTables(b, stores[i], n)
		for table := range filterSeeds {
			if _, err := stores[i].db.ExecContext(ctx, "VACUUM ANALYZE "+table); err != nil {
				b.Fatal(err)
			}
		}
	}
	for _, c := range filterCases() {
		for i, n := range sizes {
			s := stores[i]
			b.Run(fmt.Sprintf("%s/rows=%d", c.name, n), func(b *testing.B) {
				var took []time.Duration
				for b.Loop() {
					start := time.Now()
					if _, err := c.list(ctx, s); err != nil {
						b.Fatal(err)
					}
					took = append(took, time.Since(start))
				}
				slices.Sort(took)
				b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "p50-ms")
			})
		}
	}
}
