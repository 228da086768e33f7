package storetest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/paykit/paykit"
)

func balanceTxn(scope paykit.Scope, id, source string, created time.Time) *paykit.BalanceTransaction {
	return &paykit.BalanceTransaction{
		ID: id, MerchantID: scope.MerchantID, Environment: scope.Environment, Type: paykit.BalanceTxnPayment,
		Source: source, Amount: 10_000, Fee: 390, Net: 9_610, Currency: "MYR", Status: paykit.BalanceTxnPending,
		AvailableOn: created.Add(24 * time.Hour), CreatedAt: created, UpdatedAt: created,
	}
}

func mustCreateBalanceTxn(t *testing.T, s paykit.Tx, b *paykit.BalanceTransaction) {
	t.Helper()
	if err := s.CreateBalanceTransaction(context.Background(), b); err != nil {
		t.Fatalf("create balance transaction %s: %v", b.ID, err)
	}
}

func balanceTxnPosition(b paykit.BalanceTransaction) paykit.Position {
	return paykit.Position{CreatedAt: b.CreatedAt, ID: b.ID}
}

func balanceTxnIDs(rows []paykit.BalanceTransaction) []string {
	return ids(rows, func(b paykit.BalanceTransaction) string { return b.ID })
}

func testBalanceTxnRoundTrip(t *testing.T, s paykit.Store) {
	is := is.New(t)
	ctx := context.Background()
	plain := balanceTxn(scopeA, "txn_plain", "pi_1", base)
	is.NoErr(s.CreateBalanceTransaction(ctx, plain))
	got, err := s.GetBalanceTransaction(ctx, scopeA, "txn_plain")
	is.NoErr(err)
	is.Equal(*got, *plain)

	// Every field set, none at its zero value; amounts signed and far
	// above float64's exact range.
	full := balanceTxn(scopeA, "txn_full", "dp_1", at(time.Second))
	full.Type, full.Status, full.Currency = paykit.BalanceTxnDispute, paykit.BalanceTxnAvailable, "THB"
	full.Amount, full.Fee, full.Net = -9_000_000_000_000_000, 1_500, -9_000_000_000_000_000-1_500
	full.AvailableOn, full.UpdatedAt = at(1500*time.Millisecond), at(2*time.Second)
	is.NoErr(s.CreateBalanceTransaction(ctx, full))
	for _, read := range []func() (*paykit.BalanceTransaction, error){
		func() (*paykit.BalanceTransaction, error) { return s.GetBalanceTransaction(ctx, scopeA, "txn_full") },
		func() (*paykit.BalanceTransaction, error) {
			rows, err := s.ListBalanceTransactions(ctx, paykit.ListQuery[paykit.BalanceTransactionListParams]{Scope: scopeA, Filter: paykit.BalanceTransactionListParams{Source: "dp_1"}})
			if err != nil || len(rows) != 1 {
				return nil, fmt.Errorf("list: %d rows, %v", len(rows), err)
			}
			return &rows[0], nil
		},
	} {
		got, err := read()
		is.NoErr(err)
		is.Equal(*got, *full)
		is.Equal(got.CreatedAt.Location(), time.UTC)
		is.Equal(got.UpdatedAt.Location(), time.UTC)
		is.Equal(got.AvailableOn.Location(), time.UTC)
	}
	// A positive fee larger than the amount leaves a negative net.
	small := balanceTxn(scopeA, "txn_small", "pi_2", at(3*time.Second))
	small.Amount, small.Fee, small.Net = 50, 101, -51
	is.NoErr(s.CreateBalanceTransaction(ctx, small))
	got, err = s.GetBalanceTransaction(ctx, scopeA, "txn_small")
	is.NoErr(err)
	is.Equal(*got, *small)

	// Ids are unique across scopes.
	err = s.CreateBalanceTransaction(ctx, balanceTxn(scopeB, "txn_plain", "pi_b", base))
	is.True(errors.Is(err, paykit.ErrAlreadyExists))
	var c *paykit.ConflictError
	is.True(errors.As(err, &c))
	is.Equal(c.Entity, "balance_transaction")
	is.Equal(c.Key, "id")
	_, err = s.GetBalanceTransaction(ctx, scopeB, "txn_plain")
	is.True(errors.Is(err, paykit.ErrNotFound))
	// Several may share a source (a payment and its adjustment).
	mustCreateBalanceTxn(t, s, balanceTxn(scopeA, "txn_same_source", "pi_1", at(4*time.Second)))

	_, err = s.GetBalanceTransaction(ctx, scopeA, "txn_missing")
	is.True(errors.Is(err, paykit.ErrNotFound))
}

func testBalanceTxnScoping(t *testing.T, s paykit.Store) {
	is := is.New(t)
	ctx := context.Background()
	mustCreateBalanceTxn(t, s, balanceTxn(scopeA, "txn_a", "pi_x", base))
	mustCreateBalanceTxn(t, s, balanceTxn(scopeALive, "txn_a_live", "pi_x", base))
	mustCreateBalanceTxn(t, s, balanceTxn(scopeB, "txn_b", "pi_b", base))

	checkTenantIsolation(t, "txn", func(scope paykit.Scope, id string) error {
		_, err := s.GetBalanceTransaction(ctx, scope, id)
		return err
	}, func(scope paykit.Scope) ([]string, error) {
		list, err := s.ListBalanceTransactions(ctx, paykit.ListQuery[paykit.BalanceTransactionListParams]{Scope: scope, Limit: 10})
		return balanceTxnIDs(list), err
	})
	// Another tenant's source lists nothing; the same source in two
	// environments lists each environment's own.
	rows, err := s.ListBalanceTransactions(ctx, paykit.ListQuery[paykit.BalanceTransactionListParams]{Scope: scopeA, Filter: paykit.BalanceTransactionListParams{Source: "pi_b"}})
	is.NoErr(err)
	is.Equal(len(rows), 0)
	rows, err = s.ListBalanceTransactions(ctx, paykit.ListQuery[paykit.BalanceTransactionListParams]{Scope: scopeALive, Filter: paykit.BalanceTransactionListParams{Source: "pi_x"}})
	is.NoErr(err)
	is.Equal(balanceTxnIDs(rows), []string{"txn_a_live"})

	// An update naming another scope does not touch the row.
	b, err := s.GetBalanceTransaction(ctx, scopeA, "txn_a")
	is.NoErr(err)
	b.MerchantID, b.Status = "mch_b", paykit.BalanceTxnAvailable
	is.True(errors.Is(s.UpdateBalanceTransaction(ctx, b), paykit.ErrNotFound))
	b.MerchantID, b.Environment = "mch_a", paykit.Live
	is.True(errors.Is(s.UpdateBalanceTransaction(ctx, b), paykit.ErrNotFound))
	b, err = s.GetBalanceTransaction(ctx, scopeA, "txn_a")
	is.NoErr(err)
	is.Equal(b.Status, paykit.BalanceTxnPending)
	is.Equal(b.Version, int64(0))
}

func testBalanceTxnVersioning(t *testing.T, s paykit.Store) {
	is := is.New(t)
	ctx := context.Background()
	mustCreateBalanceTxn(t, s, balanceTxn(scopeA, "txn_v", "pi_v", base))
	first, err := s.GetBalanceTransaction(ctx, scopeA, "txn_v")
	is.NoErr(err)
	second := *first

	// Every mutable field changes: the Provider settled it with another fee.
	first.Status, first.AvailableOn, first.UpdatedAt = paykit.BalanceTxnAvailable, at(time.Hour), at(2*time.Hour)
	first.Fee, first.Net = 391, 9_609
	is.NoErr(s.UpdateBalanceTransaction(ctx, first))
	is.Equal(first.Version, int64(1)) // a successful update increments the struct's version
	got, err := s.GetBalanceTransaction(ctx, scopeA, "txn_v")
	is.NoErr(err)
	is.Equal(*got, *first)

	second.Status = paykit.BalanceTxnAvailable
	is.True(errors.Is(s.UpdateBalanceTransaction(ctx, &second), paykit.ErrVersionConflict))
	is.Equal(second.Version, int64(0)) // a failed update leaves the struct's version alone
	got, err = s.GetBalanceTransaction(ctx, scopeA, "txn_v")
	is.NoErr(err)
	is.Equal(got.Fee, int64(391))
	is.Equal(got.Version, int64(1))

	got.Status = paykit.BalanceTxnPending
	is.NoErr(s.UpdateBalanceTransaction(ctx, got))
	is.Equal(got.Version, int64(2))
	is.True(errors.Is(s.UpdateBalanceTransaction(ctx, balanceTxn(scopeA, "txn_missing", "pi_v", base)), paykit.ErrNotFound))

	// An update inside a failed transaction is undone, and so is a create.
	err = s.InTx(ctx, func(tx paykit.Tx) error {
		b, err := tx.GetBalanceTransaction(ctx, scopeA, "txn_v")
		if err != nil {
			return err
		}
		b.Status = paykit.BalanceTxnAvailable
		if err := tx.UpdateBalanceTransaction(ctx, b); err != nil {
			return err
		}
		mustCreateBalanceTxn(t, tx, balanceTxn(scopeA, "txn_rb", "pi_v", at(time.Second)))
		rows, err := tx.ListBalanceTransactions(ctx, paykit.ListQuery[paykit.BalanceTransactionListParams]{Scope: scopeA})
		if err != nil {
			return err
		}
		is.Equal(balanceTxnIDs(rows), []string{"txn_rb", "txn_v"}) // reads see the transaction's writes
		return errBoom
	})
	is.True(errors.Is(err, errBoom))
	got, err = s.GetBalanceTransaction(ctx, scopeA, "txn_v")
	is.NoErr(err)
	is.Equal(got.Status, paykit.BalanceTxnPending)
	is.Equal(got.Version, int64(2))
	_, err = s.GetBalanceTransaction(ctx, scopeA, "txn_rb")
	is.True(errors.Is(err, paykit.ErrNotFound))
	mustCreateBalanceTxn(t, s, balanceTxn(scopeA, "txn_rb", "pi_v", at(time.Second))) // its id is free again
}

func testBalanceTxnListFilters(t *testing.T, s paykit.Store) {
	is := is.New(t)
	ctx := context.Background()
	type row struct {
		scope    paykit.Scope
		id       string
		typ      paykit.BalanceTransactionType
		source   string
		status   paykit.BalanceTransactionStatus
		currency string
		offset   time.Duration
	}
	for _, r := range []row{
		{scopeA, "txn_1", paykit.BalanceTxnPayment, "pi_1", paykit.BalanceTxnAvailable, "MYR", 0},
		{scopeA, "txn_2", paykit.BalanceTxnRefund, "re_1", paykit.BalanceTxnAvailable, "MYR", time.Minute},
		{scopeA, "txn_3", paykit.BalanceTxnPayment, "pi_2", paykit.BalanceTxnPending, "THB", 2 * time.Minute},
		{scopeA, "txn_4", paykit.BalanceTxnDispute, "dp_1", paykit.BalanceTxnAvailable, "MYR", 3 * time.Minute},
		{scopeA, "txn_5", paykit.BalanceTxnPayout, "po_1", paykit.BalanceTxnAvailable, "THB", 4 * time.Minute},
		{scopeA, "txn_6", paykit.BalanceTxnAdjustment, "pi_1", paykit.BalanceTxnPending, "MYR", 5 * time.Minute},
		{scopeA, "txn_7", paykit.BalanceTxnPayment, "pi_3", paykit.BalanceTxnPending, "MYR", 6 * time.Minute},
		{scopeB, "txn_b1", paykit.BalanceTxnPayment, "pi_1", paykit.BalanceTxnPending, "MYR", 2 * time.Minute}, // ties txn_3, same source as scopeA's
		{scopeB, "txn_b2", paykit.BalanceTxnRefund, "re_b", paykit.BalanceTxnAvailable, "THB", 7 * time.Minute},
		{scopeALive, "txn_l1", paykit.BalanceTxnPayment, "pi_1", paykit.BalanceTxnPending, "MYR", 8 * time.Minute},
	} {
		b := balanceTxn(r.scope, r.id, r.source, at(r.offset))
		b.Type, b.Status, b.Currency = r.typ, r.status, r.currency
		mustCreateBalanceTxn(t, s, b)
	}
	type params = paykit.ListParams[paykit.BalanceTransactionStatus]
	type f = paykit.BalanceTransactionListParams
	types := func(ts ...paykit.BalanceTransactionType) []paykit.BalanceTransactionType { return ts }
	statuses := func(ss ...paykit.BalanceTransactionStatus) []paykit.BalanceTransactionStatus { return ss }
	list := func(filter f) []string {
		t.Helper()
		rows, err := s.ListBalanceTransactions(ctx, paykit.ListQuery[paykit.BalanceTransactionListParams]{Scope: scopeA, Filter: filter, Limit: 100})
		is.NoErr(err)
		return balanceTxnIDs(rows)
	}
	all := []string{"txn_7", "txn_6", "txn_5", "txn_4", "txn_3", "txn_2", "txn_1"}
	is.Equal(list(f{}), all)
	// Types: any of them.
	is.Equal(list(f{Types: types(paykit.BalanceTxnPayment)}), []string{"txn_7", "txn_3", "txn_1"})
	is.Equal(list(f{Types: types(paykit.BalanceTxnRefund, paykit.BalanceTxnDispute, paykit.BalanceTxnAdjustment)}), []string{"txn_6", "txn_4", "txn_2"})
	is.Equal(list(f{Types: types(paykit.BalanceTxnDisputeReversal)}), []string(nil))
	is.Equal(list(f{Types: types(paykit.BalanceTxnPayoutReturn, paykit.BalanceTxnDisputeReversal)}), []string(nil))
	// Statuses: any of them.
	is.Equal(list(f{ListParams: params{Statuses: statuses(paykit.BalanceTxnPending)}}), []string{"txn_7", "txn_6", "txn_3"})
	is.Equal(list(f{ListParams: params{Statuses: statuses(paykit.BalanceTxnPending, paykit.BalanceTxnAvailable)}}), all)
	// Types and statuses together, each of one or several values.
	is.Equal(list(f{Types: types(paykit.BalanceTxnPayment), ListParams: params{Statuses: statuses(paykit.BalanceTxnPending)}}), []string{"txn_7", "txn_3"})
	is.Equal(list(f{Types: types(paykit.BalanceTxnPayment, paykit.BalanceTxnAdjustment), ListParams: params{Statuses: statuses(paykit.BalanceTxnPending)}}), []string{"txn_7", "txn_6", "txn_3"})
	is.Equal(list(f{Types: types(paykit.BalanceTxnPayment), ListParams: params{Statuses: statuses(paykit.BalanceTxnAvailable, paykit.BalanceTxnPending)}}), []string{"txn_7", "txn_3", "txn_1"})
	is.Equal(list(f{Types: types(paykit.BalanceTxnPayment, paykit.BalanceTxnPayout), ListParams: params{Statuses: statuses(paykit.BalanceTxnAvailable, paykit.BalanceTxnPending)}}), []string{"txn_7", "txn_5", "txn_3", "txn_1"})
	// Source: exact.
	is.Equal(list(f{Source: "pi_1"}), []string{"txn_6", "txn_1"})
	is.Equal(list(f{Source: "pi"}), []string(nil))
	is.Equal(list(f{Source: "re_b"}), []string(nil)) // other tenant
	is.Equal(list(f{Source: "pi_1", Types: types(paykit.BalanceTxnAdjustment)}), []string{"txn_6"})
	// Currency.
	is.Equal(list(f{ListParams: params{Currency: "THB"}}), []string{"txn_5", "txn_3"})
	is.Equal(list(f{ListParams: params{Currency: "SGD"}}), []string(nil))
	// created_after is inclusive, created_before exclusive.
	is.Equal(list(f{ListParams: params{CreatedAfter: ptr(at(time.Minute)), CreatedBefore: ptr(at(3 * time.Minute))}}), []string{"txn_3", "txn_2"})
	is.Equal(list(f{ListParams: params{CreatedAfter: ptr(at(6 * time.Minute))}}), []string{"txn_7"})
	is.Equal(list(f{ListParams: params{CreatedBefore: ptr(base)}}), []string(nil))
	// Everything at once.
	is.Equal(list(f{Types: types(paykit.BalanceTxnPayment, paykit.BalanceTxnAdjustment), Source: "pi_1",
		ListParams: params{Statuses: statuses(paykit.BalanceTxnAvailable), Currency: "MYR", CreatedAfter: ptr(base), CreatedBefore: ptr(at(time.Minute))}}), []string{"txn_1"})
	// Country and merchant reference do not apply to balance transactions.
	is.Equal(list(f{ListParams: params{Country: "TH", MerchantReference: "ref"}}), all)

	// An update moves a balance transaction between status filters.
	b, err := s.GetBalanceTransaction(ctx, scopeA, "txn_3")
	is.NoErr(err)
	b.Status = paykit.BalanceTxnAvailable
	is.NoErr(s.UpdateBalanceTransaction(ctx, b))
	is.Equal(list(f{ListParams: params{Statuses: statuses(paykit.BalanceTxnPending)}}), []string{"txn_7", "txn_6"})
	is.Equal(list(f{Types: types(paykit.BalanceTxnPayment, paykit.BalanceTxnRefund), ListParams: params{Statuses: statuses(paykit.BalanceTxnAvailable)}}), []string{"txn_3", "txn_2", "txn_1"})
}

func testBalanceTxnPagination(t *testing.T, s paykit.Store) {
	is := is.New(t)
	ctx := context.Background()
	// 24 balance transactions of three tenants over 8 timestamps, so ties
	// are broken by id, within a tenant and across tenants; scopeA's
	// alternate between payments (pending) and refunds (available).
	scopes := []paykit.Scope{scopeA, scopeB, scopeALive}
	var ofA, ofAPayments []string
	for i := 23; i >= 0; i-- {
		id := fmt.Sprintf("txn_%03d", i)
		b := balanceTxn(scopes[i%3], id, fmt.Sprintf("pi_%d", i), at(time.Duration(i/3)*time.Second))
		if i%2 == 1 {
			b.Type, b.Status = paykit.BalanceTxnRefund, paykit.BalanceTxnAvailable
		}
		mustCreateBalanceTxn(t, s, b)
		if i%3 == 0 {
			ofA = append(ofA, id)
			if i%2 == 0 {
				ofAPayments = append(ofAPayments, id)
			}
		}
	}
	// Same timestamp as the newest of scopeA, ids on both sides of it.
	for _, id := range []string{"txn_0205", "txn_0225"} {
		mustCreateBalanceTxn(t, s, balanceTxn(scopeA, id, "pi_x", at(7*time.Second)))
	}
	// txn_0225 > txn_021 > txn_0205 in id order; both are payments.
	ofA = append([]string{"txn_0225", ofA[0], "txn_0205"}, ofA[1:]...)
	ofAPayments = append([]string{"txn_0225", "txn_0205"}, ofAPayments...)
	is.Equal(len(ofA), 10)
	is.Equal(len(ofAPayments), 6)
	page := func(f paykit.BalanceTransactionListParams) func(after *paykit.Position, limit int) ([]paykit.BalanceTransaction, error) {
		return func(after *paykit.Position, limit int) ([]paykit.BalanceTransaction, error) {
			return s.ListBalanceTransactions(ctx, paykit.ListQuery[paykit.BalanceTransactionListParams]{Scope: scopeA, Filter: f, After: after, Limit: limit})
		}
	}
	for _, limit := range []int{1, 2, 3, 4, 7, 10, 50} {
		is.Equal(walkPages(t, limit, page(paykit.BalanceTransactionListParams{}), balanceTxnPosition), ofA) // every one of the tenant's exactly once, newest first
		is.Equal(walkPages(t, limit, page(paykit.BalanceTransactionListParams{Types: []paykit.BalanceTransactionType{paykit.BalanceTxnPayment}}), balanceTxnPosition), ofAPayments)
		// Several values: pages of each merged.
		is.Equal(walkPages(t, limit, page(paykit.BalanceTransactionListParams{Types: []paykit.BalanceTransactionType{paykit.BalanceTxnRefund, paykit.BalanceTxnPayment}}), balanceTxnPosition), ofA)
		is.Equal(walkPages(t, limit, page(paykit.BalanceTransactionListParams{ListParams: paykit.ListParams[paykit.BalanceTransactionStatus]{
			Statuses: []paykit.BalanceTransactionStatus{paykit.BalanceTxnAvailable, paykit.BalanceTxnPending}}}), balanceTxnPosition), ofA)
	}
	// Strictly after the position: its own row is not repeated, and a
	// position between rows works too.
	rows, err := page(paykit.BalanceTransactionListParams{})(&paykit.Position{CreatedAt: at(7 * time.Second), ID: "txn_0225"}, 2)
	is.NoErr(err)
	is.Equal(balanceTxnIDs(rows), []string{"txn_021", "txn_0205"})
	rows, err = page(paykit.BalanceTransactionListParams{})(&paykit.Position{CreatedAt: at(7 * time.Second), ID: "txn_0206"}, 2)
	is.NoErr(err)
	is.Equal(balanceTxnIDs(rows), []string{"txn_0205", "txn_018"})
	// Limit 0 means no limit.
	rows, err = page(paykit.BalanceTransactionListParams{})(nil, 0)
	is.NoErr(err)
	is.Equal(balanceTxnIDs(rows), ofA)
	rows, err = page(paykit.BalanceTransactionListParams{Types: []paykit.BalanceTransactionType{paykit.BalanceTxnRefund, paykit.BalanceTxnPayment}})(nil, 0)
	is.NoErr(err)
	is.Equal(balanceTxnIDs(rows), ofA)
}
