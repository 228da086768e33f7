package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/paykit/paykit"
)

func refund(scope paykit.Scope, id, ref, paymentIntent string, created time.Time) *paykit.Refund {
	return &paykit.Refund{
		ID: id, MerchantID: scope.MerchantID, Environment: scope.Environment, PaymentIntentID: paymentIntent,
		Amount: 5_000, Currency: "MYR", Status: paykit.RefundPending, MerchantReference: ref,
		ProviderAttempt: paykit.ProviderAttempt{Provider: "sandbox", Attempt: paykit.AttemptCreating}, CreatedAt: created, UpdatedAt: created,
	}
}

func mustCreateRefund(t *testing.T, s paykit.Tx, r *paykit.Refund) {
	t.Helper()
	if err := s.CreateRefund(context.Background(), r); err != nil {
		t.Fatalf("create refund %s: %v", r.ID, err)
	}
}

func refundPosition(r paykit.Refund) paykit.Position {
	return paykit.Position{CreatedAt: r.CreatedAt, ID: r.ID}
}

func refundIDs(rows []paykit.Refund) []string {
	return ids(rows, func(r paykit.Refund) string { return r.ID })
}

func testRefundRoundTrip(t *testing.T, s paykit.Store) {
	is := is.New(t)
	ctx := context.Background()
	plain := refund(scopeA, "re_plain", "refund-1", "pi_1", base)
	is.NoErr(s.CreateRefund(ctx, plain))
	got, err := s.GetRefund(ctx, scopeA, "re_plain")
	is.NoErr(err)
	is.Equal(*got, *plain)
	is.True(got.CompletedAt == nil)

	// Every field set, none left at its zero value.
	full := refund(scopeA, "re_full", "refund-2", "pi_2", at(time.Second))
	full.Amount = 9_000_000_000_000_000 // int64, far above float64's exact range
	full.Currency, full.Status, full.Reason = "THB", paykit.RefundFailed, "requested_by_customer: ลูกค้าขอคืน"
	full.FailureCode, full.Provider, full.ProviderRef = paykit.RefundProviderDeclined, "bank_x", "rf_42"
	full.Attempt, full.CompletedAt = paykit.AttemptClosed, ptr(at(1500*time.Millisecond))
	full.UpdatedAt, full.Version = at(2*time.Second), 0
	is.NoErr(s.CreateRefund(ctx, full))
	*full.CompletedAt = base // the Store kept its own copy
	full.CompletedAt = ptr(at(1500 * time.Millisecond))
	for _, read := range []func() (*paykit.Refund, error){
		func() (*paykit.Refund, error) { return s.GetRefund(ctx, scopeA, "re_full") },
		func() (*paykit.Refund, error) { return s.FindRefund(ctx, "re_full") },
		func() (*paykit.Refund, error) {
			rows, err := s.ListRefunds(ctx, paykit.ListQuery[paykit.RefundListParams]{Scope: scopeA, Filter: paykit.RefundListParams{PaymentIntent: "pi_2"}})
			if err != nil || len(rows) != 1 {
				return nil, fmt.Errorf("list: %d rows, %v", len(rows), err)
			}
			return &rows[0], nil
		},
	} {
		got, err := read()
		is.NoErr(err)
		is.Equal(got.CreatedAt.Location(), time.UTC)
		is.Equal(got.UpdatedAt.Location(), time.UTC)
		is.Equal(got.CompletedAt.Location(), time.UTC)
		is.Equal(*got.CompletedAt, *full.CompletedAt)
		want := *full
		want.CompletedAt = got.CompletedAt
		is.Equal(*got, want)
		*got.CompletedAt = base // returned values are copies
	}
	again, err := s.GetRefund(ctx, scopeA, "re_full")
	is.NoErr(err)
	is.Equal(*again.CompletedAt, at(1500*time.Millisecond))

	_, err = s.GetRefund(ctx, scopeA, "re_missing")
	is.True(errors.Is(err, paykit.ErrNotFound))
	_, err = s.FindRefund(ctx, "re_missing")
	is.True(errors.Is(err, paykit.ErrNotFound))
}

func testRefundScoping(t *testing.T, s paykit.Store) {
	is := is.New(t)
	ctx := context.Background()
	mustCreateRefund(t, s, refund(scopeA, "re_a", "ref", "pi_a", base))
	mustCreateRefund(t, s, refund(scopeALive, "re_a_live", "ref", "pi_a_live", base))
	mustCreateRefund(t, s, refund(scopeB, "re_b", "ref", "pi_b", base))

	checkTenantIsolation(t, "re", func(scope paykit.Scope, id string) error {
		_, err := s.GetRefund(ctx, scope, id)
		return err
	}, func(scope paykit.Scope) ([]string, error) {
		list, err := s.ListRefunds(ctx, paykit.ListQuery[paykit.RefundListParams]{Scope: scope, Limit: 10})
		return refundIDs(list), err
	})
	// Provider callbacks find a refund by id alone, whatever its scope.
	for id, scope := range map[string]paykit.Scope{"re_a": scopeA, "re_a_live": scopeALive, "re_b": scopeB} {
		r, err := s.FindRefund(ctx, id)
		is.NoErr(err)
		is.Equal(r.Scope(), scope)
	}
	// A payment intent id of another tenant lists nothing.
	rows, err := s.ListRefunds(ctx, paykit.ListQuery[paykit.RefundListParams]{Scope: scopeA, Filter: paykit.RefundListParams{PaymentIntent: "pi_b"}})
	is.NoErr(err)
	is.Equal(len(rows), 0)

	// An update naming another scope does not touch the row.
	r, err := s.GetRefund(ctx, scopeA, "re_a")
	is.NoErr(err)
	r.MerchantID, r.Status = "mch_b", paykit.RefundSucceeded
	is.True(errors.Is(s.UpdateRefund(ctx, r), paykit.ErrNotFound))
	r.MerchantID, r.Environment = "mch_a", paykit.Live
	is.True(errors.Is(s.UpdateRefund(ctx, r), paykit.ErrNotFound))
	r, err = s.GetRefund(ctx, scopeA, "re_a")
	is.NoErr(err)
	is.Equal(r.Status, paykit.RefundPending)
	is.Equal(r.Version, int64(0))
}

func testRefundUniqueReference(t *testing.T, s paykit.Store) {
	is := is.New(t)
	ctx := context.Background()
	mustCreateRefund(t, s, refund(scopeA, "re_1", "refund-7", "pi_1", base))
	err := s.CreateRefund(ctx, refund(scopeA, "re_2", "refund-7", "pi_2", base))
	is.True(errors.Is(err, paykit.ErrAlreadyExists))
	is.Equal(conflictKey(err), "merchant_reference")
	var c *paykit.ConflictError
	is.True(errors.As(err, &c))
	is.Equal(c.Entity, "refund")
	err = s.CreateRefund(ctx, refund(scopeB, "re_1", "refund-8", "pi_1", base)) // ids are unique across scopes
	is.True(errors.Is(err, paykit.ErrAlreadyExists))
	is.Equal(conflictKey(err), "id")
	is.True(errors.As(err, &c))
	is.Equal(c.Entity, "refund")
	_, err = s.GetRefund(ctx, scopeA, "re_2")
	is.True(errors.Is(err, paykit.ErrNotFound)) // the failed inserts left nothing
	_, err = s.FindRefund(ctx, "re_2")
	is.True(errors.Is(err, paykit.ErrNotFound))
	got, err := s.FindRefund(ctx, "re_1")
	is.NoErr(err)
	is.Equal(got.Scope(), scopeA)
	is.Equal(got.MerchantReference, "refund-7")

	// The same reference is free in another environment and another
	// merchant, and payment and payout references are other namespaces.
	mustCreateRefund(t, s, refund(scopeALive, "re_3", "refund-7", "pi_3", base))
	mustCreateRefund(t, s, refund(scopeB, "re_4", "refund-7", "pi_4", base))
	mustCreatePayment(t, s, payment(scopeA, "pi_1", "refund-7", base))
	mustCreatePayout(t, s, payout(scopeA, "po_1", "refund-7", base))
	// Refund ids are their own namespace too.
	mustCreateRefund(t, s, refund(scopeA, "pi_1", "refund-9", "pi_1", base))
}

func testRefundVersioning(t *testing.T, s paykit.Store) {
	is := is.New(t)
	ctx := context.Background()
	mustCreateRefund(t, s, refund(scopeA, "re_v", "ref-v", "pi_v", base))
	first, err := s.GetRefund(ctx, scopeA, "re_v")
	is.NoErr(err)
	second := *first

	// Every mutable field changes.
	first.Status, first.FailureCode, first.ProviderRef = paykit.RefundSucceeded, "", "rf_v"
	first.Attempt, first.CompletedAt, first.UpdatedAt = paykit.AttemptClosed, ptr(at(time.Second)), at(2*time.Second)
	first.Reason = "duplicate"
	is.NoErr(s.UpdateRefund(ctx, first))
	is.Equal(first.Version, int64(1)) // a successful update increments the struct's version
	got, err := s.GetRefund(ctx, scopeA, "re_v")
	is.NoErr(err)
	is.Equal(*got.CompletedAt, at(time.Second))
	got.CompletedAt = first.CompletedAt
	is.Equal(*got, *first)

	second.Status, second.FailureCode = paykit.RefundFailed, paykit.RefundProviderError
	is.True(errors.Is(s.UpdateRefund(ctx, &second), paykit.ErrVersionConflict))
	is.Equal(second.Version, int64(0)) // a failed update leaves the struct's version alone
	got, err = s.GetRefund(ctx, scopeA, "re_v")
	is.NoErr(err)
	is.Equal(got.Status, paykit.RefundSucceeded)
	is.Equal(got.Version, int64(1))

	// The next update from the fresh read succeeds and increments again;
	// a pointer can be cleared.
	got.CompletedAt, got.Status = nil, paykit.RefundPending
	is.NoErr(s.UpdateRefund(ctx, got))
	is.Equal(got.Version, int64(2))
	again, err := s.GetRefund(ctx, scopeA, "re_v")
	is.NoErr(err)
	is.True(again.CompletedAt == nil)
	is.Equal(again.Version, int64(2))

	is.True(errors.Is(s.UpdateRefund(ctx, refund(scopeA, "re_missing", "ref-m", "pi_v", base)), paykit.ErrNotFound))
}

func testRefundListFilters(t *testing.T, s paykit.Store) {
	is := is.New(t)
	ctx := context.Background()
	type row struct {
		scope    paykit.Scope
		id       string
		pi       string
		status   paykit.RefundStatus
		currency string
		offset   time.Duration
	}
	for _, r := range []row{
		{scopeA, "re_1", "pi_1", paykit.RefundSucceeded, "MYR", 0},
		{scopeA, "re_2", "pi_1", paykit.RefundFailed, "MYR", time.Minute},
		{scopeA, "re_3", "pi_2", paykit.RefundPending, "THB", 2 * time.Minute},
		{scopeA, "re_4", "pi_2", paykit.RefundSucceeded, "THB", 3 * time.Minute},
		{scopeA, "re_5", "pi_1", paykit.RefundPending, "MYR", 4 * time.Minute},
		{scopeB, "re_b1", "pi_1", paykit.RefundPending, "MYR", 2 * time.Minute}, // ties re_3, same intent id as scopeA's
		{scopeB, "re_b2", "pi_b", paykit.RefundSucceeded, "THB", 5 * time.Minute},
		{scopeALive, "re_l1", "pi_1", paykit.RefundPending, "MYR", 6 * time.Minute},
	} {
		rf := refund(r.scope, r.id, "ref-"+r.id, r.pi, at(r.offset))
		rf.Status, rf.Currency = r.status, r.currency
		mustCreateRefund(t, s, rf)
	}
	type params = paykit.ListParams[paykit.RefundStatus]
	list := func(f paykit.RefundListParams) []string {
		t.Helper()
		rows, err := s.ListRefunds(ctx, paykit.ListQuery[paykit.RefundListParams]{Scope: scopeA, Filter: f, Limit: 100})
		is.NoErr(err)
		return refundIDs(rows)
	}
	is.Equal(list(paykit.RefundListParams{}), []string{"re_5", "re_4", "re_3", "re_2", "re_1"})
	is.Equal(list(paykit.RefundListParams{ListParams: params{Statuses: []paykit.RefundStatus{paykit.RefundSucceeded, paykit.RefundFailed}}}), []string{"re_4", "re_2", "re_1"})
	is.Equal(list(paykit.RefundListParams{ListParams: params{Statuses: []paykit.RefundStatus{paykit.RefundPending}}}), []string{"re_5", "re_3"})
	is.Equal(list(paykit.RefundListParams{ListParams: params{Currency: "THB"}}), []string{"re_4", "re_3"})
	is.Equal(list(paykit.RefundListParams{ListParams: params{Currency: "SGD"}}), []string(nil))
	is.Equal(list(paykit.RefundListParams{ListParams: params{MerchantReference: "ref-re_3"}}), []string{"re_3"})
	is.Equal(list(paykit.RefundListParams{ListParams: params{MerchantReference: "ref-re_b1"}}), []string(nil)) // other tenant
	is.Equal(list(paykit.RefundListParams{PaymentIntent: "pi_1"}), []string{"re_5", "re_2", "re_1"})
	is.Equal(list(paykit.RefundListParams{PaymentIntent: "pi_2"}), []string{"re_4", "re_3"})
	is.Equal(list(paykit.RefundListParams{PaymentIntent: "pi_b"}), []string(nil)) // other tenant
	is.Equal(list(paykit.RefundListParams{ListParams: params{Statuses: []paykit.RefundStatus{paykit.RefundPending}}, PaymentIntent: "pi_1"}), []string{"re_5"})
	// created_after is inclusive, created_before exclusive.
	is.Equal(list(paykit.RefundListParams{ListParams: params{CreatedAfter: ptr(at(time.Minute)), CreatedBefore: ptr(at(3 * time.Minute))}}), []string{"re_3", "re_2"})
	is.Equal(list(paykit.RefundListParams{ListParams: params{CreatedAfter: ptr(at(4 * time.Minute))}}), []string{"re_5"})
	is.Equal(list(paykit.RefundListParams{ListParams: params{CreatedBefore: ptr(base)}}), []string(nil))
	is.Equal(list(paykit.RefundListParams{ListParams: params{Currency: "MYR", CreatedAfter: ptr(at(time.Minute)), Statuses: []paykit.RefundStatus{paykit.RefundFailed}}, PaymentIntent: "pi_1"}), []string{"re_2"})

	// An update moves a refund between status filters.
	r, err := s.GetRefund(ctx, scopeA, "re_3")
	is.NoErr(err)
	r.Status = paykit.RefundSucceeded
	is.NoErr(s.UpdateRefund(ctx, r))
	is.Equal(list(paykit.RefundListParams{ListParams: params{Statuses: []paykit.RefundStatus{paykit.RefundPending}}}), []string{"re_5"})
}

func testRefundPagination(t *testing.T, s paykit.Store) {
	is := is.New(t)
	ctx := context.Background()
	// 24 refunds of three tenants over 8 timestamps, so ties are broken by
	// id, within a tenant and across tenants.
	scopes := []paykit.Scope{scopeA, scopeB, scopeALive}
	var ofA, ofAIntent []string
	for i := 23; i >= 0; i-- {
		id := fmt.Sprintf("re_%03d", i)
		pi := fmt.Sprintf("pi_%d", i%2)
		mustCreateRefund(t, s, refund(scopes[i%3], id, "ref-"+id, pi, at(time.Duration(i/3)*time.Second)))
		if i%3 == 0 {
			ofA = append(ofA, id)
			if pi == "pi_0" {
				ofAIntent = append(ofAIntent, id)
			}
		}
	}
	// Same timestamp as the newest of scopeA, ids on both sides of it.
	for _, id := range []string{"re_0205", "re_0225"} {
		mustCreateRefund(t, s, refund(scopeA, id, "ref-"+id, "pi_9", at(7*time.Second)))
	}
	// re_0225 > re_021 > re_0205 in id order.
	ofA = append([]string{"re_0225", ofA[0], "re_0205"}, ofA[1:]...)
	is.Equal(len(ofA), 10)
	for _, limit := range []int{1, 2, 3, 4, 7, 10, 50} {
		mine := walkPages(t, limit, func(after *paykit.Position, limit int) ([]paykit.Refund, error) {
			return s.ListRefunds(ctx, paykit.ListQuery[paykit.RefundListParams]{Scope: scopeA, After: after, Limit: limit})
		}, refundPosition)
		is.Equal(mine, ofA) // every refund of the tenant exactly once, newest first
		byIntent := walkPages(t, limit, func(after *paykit.Position, limit int) ([]paykit.Refund, error) {
			return s.ListRefunds(ctx, paykit.ListQuery[paykit.RefundListParams]{Scope: scopeA, Filter: paykit.RefundListParams{PaymentIntent: "pi_0"}, After: after, Limit: limit})
		}, refundPosition)
		is.Equal(byIntent, ofAIntent)
	}
	// Strictly after the position: its own row is not repeated, and a
	// position between rows works too.
	rows, err := s.ListRefunds(ctx, paykit.ListQuery[paykit.RefundListParams]{Scope: scopeA, After: &paykit.Position{CreatedAt: at(7 * time.Second), ID: "re_0225"}, Limit: 2})
	is.NoErr(err)
	is.Equal(refundIDs(rows), []string{"re_021", "re_0205"})
	rows, err = s.ListRefunds(ctx, paykit.ListQuery[paykit.RefundListParams]{Scope: scopeA, After: &paykit.Position{CreatedAt: at(7 * time.Second), ID: "re_0206"}, Limit: 2})
	is.NoErr(err)
	is.Equal(refundIDs(rows), []string{"re_0205", "re_018"})
	// Limit 0 means no limit.
	rows, err = s.ListRefunds(ctx, paykit.ListQuery[paykit.RefundListParams]{Scope: scopeA})
	is.NoErr(err)
	is.Equal(refundIDs(rows), ofA)
}

func testRefundTx(t *testing.T, s paykit.Store) {
	is := is.New(t)
	ctx := context.Background()
	pi := payment(scopeA, "pi_tx", "ref-pi", base)
	pi.Status = paykit.PaymentSucceeded
	mustCreatePayment(t, s, pi)

	// A refund and its reservation on the intent roll back together.
	err := s.InTx(ctx, func(tx paykit.Tx) error {
		p, err := tx.GetPaymentIntent(ctx, scopeA, "pi_tx")
		if err != nil {
			return err
		}
		p.RefundPendingAmount += 1_000
		if err := tx.UpdatePaymentIntent(ctx, p); err != nil {
			return err
		}
		r := refund(scopeA, "re_rb", "ref-rb", "pi_tx", at(time.Second))
		r.Amount = 1_000
		if err := tx.CreateRefund(ctx, r); err != nil {
			return err
		}
		// Reads inside the transaction see its own writes.
		if _, err := tx.GetRefund(ctx, scopeA, "re_rb"); err != nil {
			return err
		}
		rows, err := tx.ListRefunds(ctx, paykit.ListQuery[paykit.RefundListParams]{Scope: scopeA, Filter: paykit.RefundListParams{PaymentIntent: "pi_tx"}})
		if err != nil {
			return err
		}
		is.Equal(refundIDs(rows), []string{"re_rb"})
		return fmt.Errorf("wrapped: %w", errBoom)
	})
	is.True(errors.Is(err, errBoom))
	_, err = s.GetRefund(ctx, scopeA, "re_rb")
	is.True(errors.Is(err, paykit.ErrNotFound))
	_, err = s.FindRefund(ctx, "re_rb")
	is.True(errors.Is(err, paykit.ErrNotFound))
	rows, err := s.ListRefunds(ctx, paykit.ListQuery[paykit.RefundListParams]{Scope: scopeA})
	is.NoErr(err)
	is.Equal(len(rows), 0)
	p, err := s.GetPaymentIntent(ctx, scopeA, "pi_tx")
	is.NoErr(err)
	is.Equal(p.RefundPendingAmount, int64(0))
	is.Equal(p.Version, int64(0))
	// Its merchant reference and id are free again.
	mustCreateRefund(t, s, refund(scopeA, "re_rb", "ref-rb", "pi_tx", at(2*time.Second)))

	// An update inside a failed transaction is undone too.
	err = s.InTx(ctx, func(tx paykit.Tx) error {
		r, err := tx.GetRefund(ctx, scopeA, "re_rb")
		if err != nil {
			return err
		}
		r.Status = paykit.RefundSucceeded
		if err := tx.UpdateRefund(ctx, r); err != nil {
			return err
		}
		return errBoom
	})
	is.True(errors.Is(err, errBoom))
	r, err := s.GetRefund(ctx, scopeA, "re_rb")
	is.NoErr(err)
	is.Equal(r.Status, paykit.RefundPending)
	is.Equal(r.Version, int64(0))

	// A unique-key failure inside a transaction rolls back what came before.
	err = s.InTx(ctx, func(tx paykit.Tx) error {
		mustCreateRefund(t, tx, refund(scopeA, "re_first", "ref-first", "pi_tx", at(3*time.Second)))
		return tx.CreateRefund(ctx, refund(scopeA, "re_second", "ref-rb", "pi_tx", at(3*time.Second)))
	})
	is.True(errors.Is(err, paykit.ErrAlreadyExists))
	is.Equal(conflictKey(err), "merchant_reference")
	_, err = s.FindRefund(ctx, "re_first")
	is.True(errors.Is(err, paykit.ErrNotFound))

	// A committed transaction keeps both writes.
	is.NoErr(s.InTx(ctx, func(tx paykit.Tx) error {
		p, err := tx.GetPaymentIntent(ctx, scopeA, "pi_tx")
		if err != nil {
			return err
		}
		p.RefundPendingAmount += 500
		if err := tx.UpdatePaymentIntent(ctx, p); err != nil {
			return err
		}
		r := refund(scopeA, "re_ok", "ref-ok", "pi_tx", at(4*time.Second))
		r.Amount = 500
		return tx.CreateRefund(ctx, r)
	}))
	_, err = s.GetRefund(ctx, scopeA, "re_ok")
	is.NoErr(err)
	p, err = s.GetPaymentIntent(ctx, scopeA, "pi_tx")
	is.NoErr(err)
	is.Equal(p.RefundPendingAmount, int64(500))
}

func testPaymentRefundAmounts(t *testing.T, s paykit.Store) {
	is := is.New(t)
	ctx := context.Background()
	fresh := payment(scopeA, "pi_zero", "ref-zero", base)
	mustCreatePayment(t, s, fresh)
	got, err := s.GetPaymentIntent(ctx, scopeA, "pi_zero")
	is.NoErr(err)
	is.Equal(got.RefundedAmount, int64(0))
	is.Equal(got.RefundPendingAmount, int64(0))

	p := payment(scopeA, "pi_ref", "ref-ref", at(time.Second))
	p.Status, p.Amount = paykit.PaymentSucceeded, 9_000_000_000_000_000
	p.RefundedAmount, p.RefundPendingAmount = 8_000_000_000_000_001, 999_999_999_999_998
	mustCreatePayment(t, s, p)
	for _, read := range []func() (*paykit.PaymentIntent, error){
		func() (*paykit.PaymentIntent, error) { return s.GetPaymentIntent(ctx, scopeA, "pi_ref") },
		func() (*paykit.PaymentIntent, error) { return s.FindPaymentIntent(ctx, "pi_ref") },
		func() (*paykit.PaymentIntent, error) {
			rows, err := s.ListPaymentIntents(ctx, paykit.ListQuery[paykit.ListParams[paykit.PaymentStatus]]{Scope: scopeA, Filter: paykit.ListParams[paykit.PaymentStatus]{MerchantReference: "ref-ref"}})
			if err != nil || len(rows) != 1 {
				return nil, fmt.Errorf("list: %d rows, %v", len(rows), err)
			}
			return &rows[0], nil
		},
	} {
		got, err := read()
		is.NoErr(err)
		is.Equal(got.RefundedAmount, p.RefundedAmount)
		is.Equal(got.RefundPendingAmount, p.RefundPendingAmount)
	}

	// The two amounts change through UpdatePaymentIntent under the Version
	// rule.
	first, err := s.GetPaymentIntent(ctx, scopeA, "pi_ref")
	is.NoErr(err)
	stale := *first
	first.RefundedAmount, first.RefundPendingAmount = 9_000_000_000_000_000, 0
	is.NoErr(s.UpdatePaymentIntent(ctx, first))
	is.Equal(first.Version, int64(1))
	stale.RefundPendingAmount = 1
	is.True(errors.Is(s.UpdatePaymentIntent(ctx, &stale), paykit.ErrVersionConflict))
	got, err = s.GetPaymentIntent(ctx, scopeA, "pi_ref")
	is.NoErr(err)
	is.Equal(got.RefundedAmount, int64(9_000_000_000_000_000))
	is.Equal(got.RefundPendingAmount, int64(0))
	is.Equal(got.Version, int64(1))
}

// testConcurrentRefundReservations races refunds of one payment intent:
// each reserves its amount on the intent (RefundPendingAmount) and creates
// its refund in one transaction, after checking what is still refundable.
// The Version rule must keep them from reserving more than the intent's
// amount: exactly Amount/x of them succeed.
func testConcurrentRefundReservations(t *testing.T, s paykit.Store) {
	is := is.New(t)
	ctx := context.Background()
	const amount, x, racers = 1_000, 300, 12
	p := payment(scopeA, "pi_race", "ref-race", base)
	p.Status, p.Amount = paykit.PaymentSucceeded, amount
	mustCreatePayment(t, s, p)

	errExhausted := errors.New("not enough left to refund")
	errs := make([]error, racers)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range racers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			id := fmt.Sprintf("re_race_%02d", i)
			for {
				err := s.InTx(ctx, func(tx paykit.Tx) error {
					p, err := tx.GetPaymentIntent(ctx, scopeA, "pi_race")
					if err != nil {
						return err
					}
					if p.Amount-p.RefundedAmount-p.RefundPendingAmount < x {
						return errExhausted
					}
					p.RefundPendingAmount += x
					if err := tx.UpdatePaymentIntent(ctx, p); err != nil {
						return err
					}
					r := refund(scopeA, id, "ref-"+id, "pi_race", at(time.Duration(i)*time.Millisecond))
					r.Amount = x
					return tx.CreateRefund(ctx, r)
				})
				if !errors.Is(err, paykit.ErrVersionConflict) { // retry with fresh reads
					errs[i] = err
					return
				}
			}
		}()
	}
	close(start)
	wg.Wait()

	succeeded := 0
	for i, err := range errs {
		switch {
		case err == nil:
			succeeded++
		case errors.Is(err, errExhausted):
		default:
			t.Errorf("racer %d: %v", i, err)
		}
	}
	is.Equal(succeeded, amount/x) // never over-reserved, and no racer lost for nothing

	got, err := s.GetPaymentIntent(ctx, scopeA, "pi_race")
	is.NoErr(err)
	is.Equal(got.RefundPendingAmount, int64(succeeded*x))
	is.Equal(got.Version, int64(succeeded))
	rows, err := s.ListRefunds(ctx, paykit.ListQuery[paykit.RefundListParams]{Scope: scopeA, Filter: paykit.RefundListParams{PaymentIntent: "pi_race"}})
	is.NoErr(err)
	is.Equal(len(rows), succeeded) // a refund exactly for each reservation
	sum := int64(0)
	for _, r := range rows {
		sum += r.Amount
	}
	is.Equal(sum, got.RefundPendingAmount)
	is.True(got.Amount-got.RefundedAmount-got.RefundPendingAmount >= 0)
}
