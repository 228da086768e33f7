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

func payout(scope paykit.Scope, id, ref string, created time.Time) *paykit.PayoutIntent {
	return &paykit.PayoutIntent{
		ID: id, MerchantID: scope.MerchantID, Environment: scope.Environment,
		Status: paykit.PayoutProcessing, Amount: 250_000, Currency: "THB", Country: "TH", MerchantReference: ref,
		RecipientType: "bank_account", BankCode: "KBANK", ProviderBankCode: "TH-004", HolderName: "Somchai", HolderNameTH: "สมชาย",
		AccountLast4: "6789", AccountCiphertext: []byte{0x00, 0x9f, 0xff, 'a', 0x00, 0x80}, AccountKeyID: "key-2026",
		ProviderAttempt: paykit.ProviderAttempt{Provider: "sandbox", Attempt: paykit.AttemptCreating}, CreatedAt: created, UpdatedAt: created,
	}
}

func mustCreatePayout(t *testing.T, s paykit.Tx, p *paykit.PayoutIntent) {
	t.Helper()
	if err := s.CreatePayoutIntent(context.Background(), p); err != nil {
		t.Fatalf("create payout %s: %v", p.ID, err)
	}
}

// normalizedPayout treats empty ciphertext like none: backends need not
// keep the difference.
func normalizedPayout(p paykit.PayoutIntent) paykit.PayoutIntent {
	if len(p.AccountCiphertext) == 0 {
		p.AccountCiphertext = nil
	}
	return p
}

func payoutPosition(p paykit.PayoutIntent) paykit.Position {
	return paykit.Position{CreatedAt: p.CreatedAt, ID: p.ID}
}

func payoutIDs(rows []paykit.PayoutIntent) []string {
	return ids(rows, func(p paykit.PayoutIntent) string { return p.ID })
}

func testPayoutRoundTrip(t *testing.T, s paykit.Store) {
	is := is.New(t)
	ctx := context.Background()
	plain := payout(scopeA, "po_plain", "payout-1", base)
	plain.AccountCiphertext = nil
	is.NoErr(s.CreatePayoutIntent(ctx, plain))
	got, err := s.GetPayoutIntent(ctx, scopeA, "po_plain")
	is.NoErr(err)
	is.Equal(normalizedPayout(*got), *plain)
	is.True(got.CancelRequestedAt == nil && got.ApprovalExpiresAt == nil)

	full := payout(scopeA, "po_full", "payout-2", at(time.Second))
	full.Status, full.ApprovalPending = paykit.PayoutRequiresApproval, true
	full.Amount = 9_000_000_000_000_000 // int64, far above float64's exact range
	full.ReservedAmount, full.CompletedAmount, full.ReturnedAmount = 7, 8, 9
	full.FailureCode, full.FailureMessage, full.CancelReason = "funds_returned", "The funds came back.", "changed their mind"
	full.ProviderRef, full.Attempt = "tr_1", paykit.AttemptUnknown
	full.CancelRequestedAt = ptr(at(1500 * time.Millisecond))
	full.ApprovalExpiresAt = ptr(at(72 * time.Hour))
	is.NoErr(s.CreatePayoutIntent(ctx, full))
	sealed := string(full.AccountCiphertext)
	full.AccountCiphertext[0] = 'x' // the Store kept its own copy
	for _, read := range []func() (*paykit.PayoutIntent, error){
		func() (*paykit.PayoutIntent, error) { return s.GetPayoutIntent(ctx, scopeA, "po_full") },
		func() (*paykit.PayoutIntent, error) { return s.FindPayoutIntent(ctx, "po_full") },
	} {
		got, err := read()
		is.NoErr(err)
		is.Equal(string(got.AccountCiphertext), sealed) // bytes kept exactly
		is.Equal(got.CreatedAt.Location(), time.UTC)
		is.Equal(*got.CancelRequestedAt, *full.CancelRequestedAt)
		is.Equal(*got.ApprovalExpiresAt, *full.ApprovalExpiresAt)
		want := *full
		want.AccountCiphertext = []byte(sealed)
		want.CancelRequestedAt, want.ApprovalExpiresAt = got.CancelRequestedAt, got.ApprovalExpiresAt
		is.Equal(*got, want)

		// Returned values are copies: changing them changes nothing stored.
		got.AccountCiphertext[1] = 'y'
		*got.ApprovalExpiresAt = base
	}
	again, err := s.GetPayoutIntent(ctx, scopeA, "po_full")
	is.NoErr(err)
	is.Equal(string(again.AccountCiphertext), sealed)
	is.Equal(*again.ApprovalExpiresAt, at(72*time.Hour))
}

func testPayoutScoping(t *testing.T, s paykit.Store) {
	is := is.New(t)
	ctx := context.Background()
	mustCreatePayout(t, s, payout(scopeA, "po_a", "ref", base))
	mustCreatePayout(t, s, payout(scopeALive, "po_a_live", "ref", base))
	mustCreatePayout(t, s, payout(scopeB, "po_b", "ref", base))

	checkTenantIsolation(t, "po", func(scope paykit.Scope, id string) error {
		_, err := s.GetPayoutIntent(ctx, scope, id)
		return err
	}, func(scope paykit.Scope) ([]string, error) {
		list, err := s.ListPayoutIntents(ctx, paykit.PayoutQuery{ListQuery: paykit.ListQuery[paykit.ListParams[paykit.PayoutStatus]]{Scope: scope, Limit: 10}})
		return payoutIDs(list), err
	})
	// Operators find a payout by id alone, whatever its scope.
	for id, scope := range map[string]paykit.Scope{"po_a": scopeA, "po_a_live": scopeALive, "po_b": scopeB} {
		p, err := s.FindPayoutIntent(ctx, id)
		is.NoErr(err)
		is.Equal(p.Scope(), scope)
	}
	_, err := s.FindPayoutIntent(ctx, "po_missing")
	is.True(errors.Is(err, paykit.ErrNotFound))

	// An update naming another scope does not touch the row.
	p, err := s.GetPayoutIntent(ctx, scopeA, "po_a")
	is.NoErr(err)
	p.MerchantID, p.Status = "mch_b", paykit.PayoutCancelled
	is.True(errors.Is(s.UpdatePayoutIntent(ctx, p), paykit.ErrNotFound))
	p, err = s.GetPayoutIntent(ctx, scopeA, "po_a")
	is.NoErr(err)
	is.Equal(p.Status, paykit.PayoutProcessing)
}

func testPayoutUniqueReference(t *testing.T, s paykit.Store) {
	is := is.New(t)
	ctx := context.Background()
	mustCreatePayout(t, s, payout(scopeA, "po_1", "payout-7", base))
	err := s.CreatePayoutIntent(ctx, payout(scopeA, "po_2", "payout-7", base))
	is.True(errors.Is(err, paykit.ErrAlreadyExists))
	is.Equal(conflictKey(err), "merchant_reference")
	var c *paykit.ConflictError
	is.True(errors.As(err, &c))
	is.Equal(c.Entity, "payout_intent")
	err = s.CreatePayoutIntent(ctx, payout(scopeB, "po_1", "payout-8", base)) // ids are unique across scopes
	is.True(errors.Is(err, paykit.ErrAlreadyExists))
	is.Equal(conflictKey(err), "id")
	_, err = s.GetPayoutIntent(ctx, scopeA, "po_2")
	is.True(errors.Is(err, paykit.ErrNotFound)) // the failed insert left nothing
	// The same reference is free in another environment and another
	// merchant, and payment references are another namespace.
	mustCreatePayout(t, s, payout(scopeALive, "po_3", "payout-7", base))
	mustCreatePayout(t, s, payout(scopeB, "po_4", "payout-7", base))
	mustCreatePayment(t, s, payment(scopeA, "pi_1", "payout-7", base))

	// An update onto a taken reference is a conflict and leaves the row.
	mustCreatePayout(t, s, payout(scopeA, "po_5", "payout-9", base))
	p, err := s.GetPayoutIntent(ctx, scopeA, "po_5")
	is.NoErr(err)
	p.MerchantReference = "payout-7"
	err = s.UpdatePayoutIntent(ctx, p)
	is.True(errors.Is(err, paykit.ErrAlreadyExists))
	is.Equal(conflictKey(err), "merchant_reference")
	is.Equal(p.Version, int64(0))
	p.MerchantReference = "payout-10" // a free one is fine, and frees the old
	is.NoErr(s.UpdatePayoutIntent(ctx, p))
	mustCreatePayout(t, s, payout(scopeA, "po_6", "payout-9", base))
}

func testPayoutVersioning(t *testing.T, s paykit.Store) {
	is := is.New(t)
	ctx := context.Background()
	held := payout(scopeA, "po_v", "ref-v", base)
	held.Status, held.ApprovalPending, held.Attempt = paykit.PayoutRequiresApproval, true, paykit.AttemptNone
	held.ApprovalExpiresAt, held.ReservedAmount = ptr(at(72*time.Hour)), held.Amount
	mustCreatePayout(t, s, held)
	first, err := s.GetPayoutIntent(ctx, scopeA, "po_v")
	is.NoErr(err)
	second := *first

	// Every mutable field changes, pointers are cleared and set.
	first.Status, first.ApprovalPending, first.ApprovalExpiresAt = paykit.PayoutSucceeded, false, nil
	first.Attempt, first.ProviderRef = paykit.AttemptClosed, "tr_v"
	first.ReservedAmount, first.CompletedAmount, first.ReturnedAmount = 0, 250_000, 1
	first.FailureCode, first.FailureMessage, first.CancelReason = "f", "m", "r"
	first.CancelRequestedAt, first.UpdatedAt = ptr(at(time.Second)), at(2*time.Second)
	is.NoErr(s.UpdatePayoutIntent(ctx, first))
	is.Equal(first.Version, int64(1))
	got, err := s.GetPayoutIntent(ctx, scopeA, "po_v")
	is.NoErr(err)
	is.True(got.ApprovalExpiresAt == nil)
	is.Equal(*got.CancelRequestedAt, at(time.Second))
	got.CancelRequestedAt = first.CancelRequestedAt
	is.Equal(*got, *first)

	second.Status = paykit.PayoutCancelled
	is.True(errors.Is(s.UpdatePayoutIntent(ctx, &second), paykit.ErrVersionConflict))
	is.Equal(second.Version, int64(0)) // a failed update leaves the struct's version alone
	got, err = s.GetPayoutIntent(ctx, scopeA, "po_v")
	is.NoErr(err)
	is.Equal(got.Status, paykit.PayoutSucceeded)
	is.Equal(got.Version, int64(1))

	is.True(errors.Is(s.UpdatePayoutIntent(ctx, payout(scopeA, "po_missing", "ref-m", base)), paykit.ErrNotFound))
}

func testPayoutListFilters(t *testing.T, s paykit.Store) {
	is := is.New(t)
	ctx := context.Background()
	type row struct {
		scope    paykit.Scope
		id       string
		status   paykit.PayoutStatus
		currency string
		offset   time.Duration
	}
	for _, r := range []row{
		{scopeA, "po_1", paykit.PayoutSucceeded, "MYR", 0},
		{scopeA, "po_2", paykit.PayoutFailed, "MYR", time.Minute},
		{scopeA, "po_3", paykit.PayoutRequiresApproval, "THB", 2 * time.Minute},
		{scopeA, "po_4", paykit.PayoutProcessing, "THB", 3 * time.Minute},
		{scopeA, "po_5", paykit.PayoutRequiresApproval, "MYR", 4 * time.Minute},
		{scopeB, "po_b1", paykit.PayoutRequiresApproval, "THB", 2 * time.Minute}, // ties po_3
		{scopeB, "po_b2", paykit.PayoutProcessing, "THB", 5 * time.Minute},
		{scopeALive, "po_l1", paykit.PayoutRequiresApproval, "MYR", 6 * time.Minute},
	} {
		p := payout(r.scope, r.id, "ref-"+r.id, at(r.offset))
		p.Status, p.Currency, p.ApprovalPending = r.status, r.currency, r.status == paykit.PayoutRequiresApproval
		if r.currency == "MYR" {
			p.Country = "MY"
		}
		mustCreatePayout(t, s, p)
	}
	type params = paykit.ListParams[paykit.PayoutStatus]
	list := func(q paykit.PayoutQuery) []string {
		t.Helper()
		if !q.AllTenants {
			q.Scope = scopeA
		}
		q.Limit = 100
		rows, err := s.ListPayoutIntents(ctx, q)
		is.NoErr(err)
		return payoutIDs(rows)
	}
	is.Equal(list(paykit.PayoutQuery{}), []string{"po_5", "po_4", "po_3", "po_2", "po_1"})
	is.Equal(list(paykit.PayoutQuery{ListQuery: paykit.ListQuery[params]{Filter: params{Statuses: []paykit.PayoutStatus{paykit.PayoutSucceeded, paykit.PayoutFailed}}}}), []string{"po_2", "po_1"})
	is.Equal(list(paykit.PayoutQuery{ListQuery: paykit.ListQuery[params]{Filter: params{Currency: "THB"}}}), []string{"po_4", "po_3"})
	is.Equal(list(paykit.PayoutQuery{ListQuery: paykit.ListQuery[params]{Filter: params{Country: "MY", Statuses: []paykit.PayoutStatus{paykit.PayoutFailed}}}}), []string{"po_2"})
	is.Equal(list(paykit.PayoutQuery{ListQuery: paykit.ListQuery[params]{Filter: params{MerchantReference: "ref-po_3"}}}), []string{"po_3"})
	is.Equal(list(paykit.PayoutQuery{ListQuery: paykit.ListQuery[params]{Filter: params{MerchantReference: "ref-po_b1"}}}), []string(nil)) // other tenant
	// created_after is inclusive, created_before exclusive.
	is.Equal(list(paykit.PayoutQuery{ListQuery: paykit.ListQuery[params]{Filter: params{CreatedAfter: ptr(at(time.Minute)), CreatedBefore: ptr(at(3 * time.Minute))}}}), []string{"po_3", "po_2"})
	is.Equal(list(paykit.PayoutQuery{ApprovalPending: true}), []string{"po_5", "po_3"})
	is.Equal(list(paykit.PayoutQuery{ListQuery: paykit.ListQuery[params]{Filter: params{Currency: "THB"}}, ApprovalPending: true}), []string{"po_3"})

	// Across tenants, for operators.
	is.Equal(list(paykit.PayoutQuery{AllTenants: true}), []string{"po_l1", "po_b2", "po_5", "po_4", "po_b1", "po_3", "po_2", "po_1"})
	is.Equal(list(paykit.PayoutQuery{AllTenants: true, ApprovalPending: true}), []string{"po_l1", "po_5", "po_b1", "po_3"})
	is.Equal(list(paykit.PayoutQuery{ListQuery: paykit.ListQuery[params]{Filter: params{Statuses: []paykit.PayoutStatus{paykit.PayoutProcessing}, Currency: "THB"}}, AllTenants: true}), []string{"po_b2", "po_4"})
	is.Equal(list(paykit.PayoutQuery{ListQuery: paykit.ListQuery[params]{Filter: params{CreatedBefore: ptr(at(2 * time.Minute))}}, AllTenants: true}), []string{"po_2", "po_1"})

	// A resolved hold leaves the approval queue.
	p, err := s.FindPayoutIntent(ctx, "po_b1")
	is.NoErr(err)
	p.Status, p.ApprovalPending = paykit.PayoutProcessing, false
	is.NoErr(s.UpdatePayoutIntent(ctx, p))
	is.Equal(list(paykit.PayoutQuery{AllTenants: true, ApprovalPending: true}), []string{"po_l1", "po_5", "po_3"})
}

func testPayoutPagination(t *testing.T, s paykit.Store) {
	is := is.New(t)
	ctx := context.Background()
	// 24 held payouts of three tenants over 8 timestamps, so ties are broken
	// by id, within a tenant and across tenants.
	scopes := []paykit.Scope{scopeA, scopeB, scopeALive}
	var all, ofA []string
	for i := 23; i >= 0; i-- {
		id := fmt.Sprintf("po_%03d", i)
		p := payout(scopes[i%3], id, "ref-"+id, at(time.Duration(i/3)*time.Second))
		p.Status, p.ApprovalPending = paykit.PayoutRequiresApproval, true
		mustCreatePayout(t, s, p)
		all = append(all, id)
		if i%3 == 0 {
			ofA = append(ofA, id)
		}
	}
	mustCreatePayout(t, s, payout(scopeA, "po_not_held", "ref-not-held", at(time.Hour)))
	for _, limit := range []int{1, 2, 3, 5, 7, 24, 50} {
		queue := walkPages(t, limit, func(after *paykit.Position, limit int) ([]paykit.PayoutIntent, error) {
			return s.ListPayoutIntents(ctx, paykit.PayoutQuery{ListQuery: paykit.ListQuery[paykit.ListParams[paykit.PayoutStatus]]{After: after, Limit: limit}, AllTenants: true, ApprovalPending: true})
		}, payoutPosition)
		is.Equal(queue, all) // every held payout exactly once, newest first
		mine := walkPages(t, limit, func(after *paykit.Position, limit int) ([]paykit.PayoutIntent, error) {
			return s.ListPayoutIntents(ctx, paykit.PayoutQuery{ListQuery: paykit.ListQuery[paykit.ListParams[paykit.PayoutStatus]]{Scope: scopeA, After: after, Limit: limit}, ApprovalPending: true})
		}, payoutPosition)
		is.Equal(mine, ofA)
	}
	// Limit 0 means no limit.
	rows, err := s.ListPayoutIntents(ctx, paykit.PayoutQuery{AllTenants: true})
	is.NoErr(err)
	is.Equal(len(rows), 25)
}
