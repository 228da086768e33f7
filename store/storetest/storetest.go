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

// Run runs every conformance test against Stores made by newStore, several
// at once: newStore must be safe to call from several goroutines.
func Run(t *testing.T, newStore func(t *testing.T) paykit.Store) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s paykit.Store)
	}{
		{"Merchants", testMerchants},
		{"ListMerchants", testListMerchants},
		{"ListJobs", testListJobs},
		{"JobStats", testJobStats},
		{"CountStaleProcessing", testCountStaleProcessing},
		{"CountStatuses", testCountStatuses},
		{"APIKeys", testAPIKeys},
		{"AuditLog", testAuditLog},
		{"PaymentIntentRoundTrip", testPaymentRoundTrip},
		{"PaymentIntentTenantScoping", testPaymentScoping},
		{"PaymentIntentUniqueReference", testPaymentUniqueReference},
		{"PaymentIntentVersioning", testPaymentVersioning},
		{"PaymentIntentListFilters", testPaymentListFilters},
		{"KeysetPagination", testKeysetPagination},
		{"TxCommitAndRollback", testTxRollback},
		{"TxPanicRollsBack", testTxPanic},
		{"ConcurrentUniqueKeyRace", testConcurrentUniqueRace},
		{"ConcurrentUpdatesLoseNothing", testConcurrentUpdates},
		{"IdempotencyRecords", testIdempotency},
		{"Jobs", testJobs},
		{"ConcurrentJobClaims", testConcurrentClaims},
		{"JobLeaseFencing", testJobLeaseFencing},
		{"JobStates", testJobStates},
		{"JobWaiting", testJobWaiting},
		{"CompleteJobByDedupKey", testCompleteJobByDedupKey},
		{"PurgeCompletedJobs", testPurgeCompletedJobs},
		{"Leases", testLeases},
		{"Checkouts", testCheckouts},
		{"PayoutRoundTrip", testPayoutRoundTrip},
		{"PayoutTenantScoping", testPayoutScoping},
		{"PayoutUniqueReference", testPayoutUniqueReference},
		{"PayoutVersioning", testPayoutVersioning},
		{"PayoutListFilters", testPayoutListFilters},
		{"PayoutPagination", testPayoutPagination},
		{"RefundRoundTrip", testRefundRoundTrip},
		{"RefundTenantScoping", testRefundScoping},
		{"RefundUniqueReference", testRefundUniqueReference},
		{"RefundVersioning", testRefundVersioning},
		{"RefundListFilters", testRefundListFilters},
		{"RefundPagination", testRefundPagination},
		{"RefundTxCommitAndRollback", testRefundTx},
		{"FindByProviderRef", testFindByProviderRef},
		{"PaymentIntentRefundAmounts", testPaymentRefundAmounts},
		{"PaymentIntentSettlementFields", testPaymentSettlementFields},
		{"BalanceTransactionRoundTrip", testBalanceTxnRoundTrip},
		{"BalanceTransactionTenantScoping", testBalanceTxnScoping},
		{"BalanceTransactionVersioning", testBalanceTxnVersioning},
		{"BalanceTransactionListFilters", testBalanceTxnListFilters},
		{"BalanceTransactionPagination", testBalanceTxnPagination},
		{"DisputeRoundTrip", testDisputeRoundTrip},
		{"DisputeTenantScoping", testDisputeScoping},
		{"DisputeProviderRef", testDisputeProviderRef},
		{"DisputeVersioning", testDisputeVersioning},
		{"DisputeListFilters", testDisputeListFilters},
		{"DisputePagination", testDisputePagination},
		{"SettledLines", testSettledLines},
		{"ReconciliationRuns", testReconciliationRuns},
		{"ReconciliationBreakRoundTrip", testReconciliationBreakRoundTrip},
		{"ReconciliationBreakVersioning", testReconciliationBreakVersioning},
		{"ReconciliationBreakList", testReconciliationBreakList},
		{"ReconciliationBreakPagination", testReconciliationBreakPagination},
		{"FindOpenBreak", testFindOpenBreak},
		{"CountOpenBreaks", testCountOpenBreaks},
		{"ListUnsettled", testListUnsettled},
		{"ConcurrentRefundsNeverOverReserve", testConcurrentRefundReservations},
		{"LedgerPostAndBalances", testLedgerPostAndBalances},
		{"LedgerInsufficientFundsWritesNothing", testLedgerInsufficientFunds},
		{"LedgerRejectsInvalidTxns", testLedgerRejectsInvalid},
		{"LedgerEntriesImmutable", testLedgerEntriesImmutable},
		{"LedgerBalanceOverflow", testLedgerOverflow},
		{"ConcurrentPostsNeverOverdraw", testConcurrentPosts},
		{"LedgerAccountRules", testLedgerAccountRules},
		{"ConcurrentPostsOneBalanceRow", testConcurrentPostsOneRow},
		{"Events", testEvents},
		{"WebhookEndpoints", testWebhookEndpoints},
		{"WebhookAttempts", testWebhookAttempts},
		{"WebhookEndpointPause", testWebhookEndpointPause},
		{"WebhookEndpointMerchantFields", testWebhookEndpointMerchantFields},
		{"DeliveryFanOut", testDeliveryFanOut},
		{"Heartbeat", testHeartbeat},
		{"KeyChecks", testKeyChecks},
	}
	// The cases run on Stores of their own, several at once: they mostly
	// wait on the database, more than go test's -parallel (GOMAXPROCS)
	// would run.
	sem := make(chan struct{}, concurrentCases)
	var wg sync.WaitGroup
	for _, tc := range tests {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			t.Run(tc.name, func(t *testing.T) {
				s := newStore(t)
				t.Cleanup(func() { _ = s.Close() })
				tc.fn(t, s)
			})
		})
	}
	wg.Wait()
}

// concurrentCases is how many conformance cases Run runs at once.
const concurrentCases = 8

// base is a fixed instant at millisecond precision.
var base = time.Date(2026, 3, 14, 9, 26, 53, 589_000_000, time.UTC)

func at(d time.Duration) time.Time { return base.Add(d) }

var (
	scopeA     = paykit.Scope{MerchantID: "mch_a", Environment: paykit.Test}
	scopeALive = paykit.Scope{MerchantID: "mch_a", Environment: paykit.Live}
	scopeB     = paykit.Scope{MerchantID: "mch_b", Environment: paykit.Test}
)

func ptr[T any](v T) *T { return &v }

func conflictKey(err error) string {
	var c *paykit.ConflictError
	if errors.As(err, &c) {
		return c.Key
	}
	return ""
}

func payment(scope paykit.Scope, id, ref string, created time.Time) *paykit.PaymentIntent {
	return &paykit.PaymentIntent{
		ID: id, MerchantID: scope.MerchantID, Environment: scope.Environment,
		Status: paykit.PaymentRequiresAction, Amount: 12_345, Currency: "MYR", Country: "MY",
		MerchantReference: ref, PaymentMethod: "FPX",
		Customer:  map[string]string{"name": "Aisyah", "email": "a@example.com"},
		ExpiresAt: created.Add(30 * time.Minute), CreatedAt: created, UpdatedAt: created,
	}
}

func mustCreatePayment(t *testing.T, s paykit.Tx, p *paykit.PaymentIntent) {
	t.Helper()
	if err := s.CreatePaymentIntent(context.Background(), p); err != nil {
		t.Fatalf("create payment %s: %v", p.ID, err)
	}
}

func testMerchants(t *testing.T, s paykit.Store) {
	is := is.New(t)
	ctx := context.Background()
	m := &paykit.Merchant{ID: "mch_1", Name: "Kedai Kopi", CreatedAt: base}
	is.NoErr(s.CreateMerchant(ctx, m))
	got, err := s.GetMerchant(ctx, "mch_1")
	is.NoErr(err)
	is.Equal(*got, *m)
	is.Equal(got.CreatedAt.Location(), time.UTC) // times come back in UTC

	err = s.CreateMerchant(ctx, &paykit.Merchant{ID: "mch_1", Name: "again", CreatedAt: base})
	is.True(errors.Is(err, paykit.ErrAlreadyExists))
	is.Equal(conflictKey(err), "id")

	_, err = s.GetMerchant(ctx, "mch_missing")
	is.True(errors.Is(err, paykit.ErrNotFound))
}

func testAPIKeys(t *testing.T, s paykit.Store) {
	is := is.New(t)
	ctx := context.Background()
	is.NoErr(s.CreateMerchant(ctx, &paykit.Merchant{ID: "mch_a", Name: "A", CreatedAt: base}))
	is.NoErr(s.CreateMerchant(ctx, &paykit.Merchant{ID: "mch_b", Name: "B", CreatedAt: base}))
	k1 := &paykit.APIKey{ID: "key_1", MerchantID: "mch_a", Environment: paykit.Test, PublicKey: "pk_test_1", SecretHash: "h1", SecretLast4: "abcd", CreatedAt: at(time.Second)}
	k2 := &paykit.APIKey{ID: "key_2", MerchantID: "mch_a", Environment: paykit.Live, PublicKey: "pk_live_2", SecretHash: "h2", SecretLast4: "efgh", CreatedAt: at(2 * time.Second)}
	k3 := &paykit.APIKey{ID: "key_3", MerchantID: "mch_b", Environment: paykit.Test, PublicKey: "pk_test_3", SecretHash: "h3", SecretLast4: "ijkl", CreatedAt: at(3 * time.Second)}
	for _, k := range []*paykit.APIKey{k1, k2, k3} {
		is.NoErr(s.CreateAPIKey(ctx, k))
	}

	got, err := s.GetAPIKeyByPublicKey(ctx, "pk_live_2")
	is.NoErr(err)
	is.Equal(*got, *k2)
	_, err = s.GetAPIKeyByPublicKey(ctx, "pk_live_unknown")
	is.True(errors.Is(err, paykit.ErrNotFound))

	dup := *k1
	dup.ID = "key_other"
	err = s.CreateAPIKey(ctx, &dup)
	is.True(errors.Is(err, paykit.ErrAlreadyExists))
	is.Equal(conflictKey(err), "public_key")

	keys, err := s.ListAPIKeys(ctx, "mch_a")
	is.NoErr(err)
	is.Equal(len(keys), 2)
	is.Equal(keys[0].ID, "key_2") // newest first
	is.Equal(keys[1].ID, "key_1")

	// Revocation through the Version rule.
	stale := *got
	got.RevokedAt = ptr(at(time.Minute))
	is.NoErr(s.UpdateAPIKey(ctx, got))
	is.Equal(got.Version, stale.Version+1)
	stale.SecretLast4 = "zzzz"
	is.True(errors.Is(s.UpdateAPIKey(ctx, &stale), paykit.ErrVersionConflict))
	again, err := s.GetAPIKey(ctx, "key_2")
	is.NoErr(err)
	is.Equal(*again.RevokedAt, at(time.Minute))
	is.Equal(again.SecretLast4, "efgh") // the stale write did not land
	is.Equal(again.Version, got.Version)

	missing := paykit.APIKey{ID: "key_missing", MerchantID: "mch_a", Environment: paykit.Test, PublicKey: "pk_test_x", CreatedAt: base}
	is.True(errors.Is(s.UpdateAPIKey(ctx, &missing), paykit.ErrNotFound))
}

func testAuditLog(t *testing.T, s paykit.Store) {
	is := is.New(t)
	ctx := context.Background()
	for i := range 7 {
		mch := "mch_a"
		if i%2 == 1 {
			mch = "mch_b"
		}
		e := &paykit.AuditEvent{
			ID: fmt.Sprintf("aud_%02d", i), Actor: "ops", Action: "merchant.create", TargetType: "merchant",
			TargetID: mch, MerchantID: mch, Details: map[string]string{"n": fmt.Sprint(i)},
			CreatedAt: at(time.Duration(i/2) * time.Second), // pairs share a timestamp
		}
		if i == 6 {
			e.Action, e.Environment = "api_key.revoke", paykit.Live
		}
		is.NoErr(s.CreateAuditEvent(ctx, e))
	}
	err := s.CreateAuditEvent(ctx, &paykit.AuditEvent{ID: "aud_00", Actor: "ops", Action: "x", CreatedAt: base})
	is.True(errors.Is(err, paykit.ErrAlreadyExists))

	all, err := s.ListAuditEvents(ctx, paykit.ListQuery[paykit.AuditListParams]{Limit: 100})
	is.NoErr(err)
	is.Equal(ids(all, func(e paykit.AuditEvent) string { return e.ID }),
		[]string{"aud_06", "aud_05", "aud_04", "aud_03", "aud_02", "aud_01", "aud_00"})
	is.Equal(all[0].Details, map[string]string{"n": "6"})
	is.Equal(all[0].Environment, paykit.Live)

	// Keyset pages concatenate to the full list.
	paged := walkPages(t, 3, func(after *paykit.Position, limit int) ([]paykit.AuditEvent, error) {
		return s.ListAuditEvents(ctx, paykit.ListQuery[paykit.AuditListParams]{After: after, Limit: limit})
	}, func(e paykit.AuditEvent) paykit.Position { return paykit.Position{CreatedAt: e.CreatedAt, ID: e.ID} })
	is.Equal(paged, ids(all, func(e paykit.AuditEvent) string { return e.ID }))

	byMerchant, err := s.ListAuditEvents(ctx, paykit.ListQuery[paykit.AuditListParams]{Filter: paykit.AuditListParams{MerchantID: "mch_b"}, Limit: 100})
	is.NoErr(err)
	is.Equal(ids(byMerchant, func(e paykit.AuditEvent) string { return e.ID }), []string{"aud_05", "aud_03", "aud_01"})
	byAction, err := s.ListAuditEvents(ctx, paykit.ListQuery[paykit.AuditListParams]{Filter: paykit.AuditListParams{Action: "api_key.revoke"}, Limit: 100})
	is.NoErr(err)
	is.Equal(len(byAction), 1)
}

func testPaymentRoundTrip(t *testing.T, s paykit.Store) {
	is := is.New(t)
	ctx := context.Background()
	plain := payment(scopeA, "pi_plain", "order-1", base)
	is.NoErr(s.CreatePaymentIntent(ctx, plain))
	got, err := s.GetPaymentIntent(ctx, scopeA, "pi_plain")
	is.NoErr(err)
	is.Equal(normalized(*got), normalized(*plain))
	is.True(got.NextAction == nil && got.Receipt == nil && got.CompletedAt == nil)

	full := payment(scopeA, "pi_full", "order-2", at(time.Second))
	full.Status = paykit.PaymentSucceeded
	full.PaymentMethodOptions = map[string]string{"bank": "MAYBANK"}
	full.ReturnURL = "https://shop.example/return?x=1"
	full.CheckoutID = "cs_1"
	full.NextAction = &paykit.NextAction{Type: paykit.NextActionBankTransferInstructions, BankName: "Maybank", Account: "5140 1234", Holder: "Paykit Sdn Bhd", Reference: "REF1", Amount: 12_345, Currency: "MYR", ExpiresAt: at(time.Hour)}
	full.Receipt = &paykit.Receipt{Number: "R-1", PaidAt: at(2 * time.Second), Amount: 12_345, Currency: "MYR", PaymentMethod: "FPX"}
	full.FailureCode = ""
	full.Provider, full.ProviderRef = "sandbox", "sbx_123"
	full.ProviderOptions = map[string]string{"bank": "MBB0228"}
	full.Attempt, full.ProviderURL = paykit.AttemptClosed, "https://psp.example/pay/sbx_123"
	full.CancelRequestedAt = ptr(at(1500 * time.Millisecond))
	full.CompletedAt = ptr(at(2 * time.Second))
	full.Amount = 9_000_000_000_000_000 // int64, far above float64's exact range
	is.NoErr(s.CreatePaymentIntent(ctx, full))
	got, err = s.GetPaymentIntent(ctx, scopeA, "pi_full")
	is.NoErr(err)
	is.Equal(*got.NextAction, *full.NextAction)
	is.Equal(*got.Receipt, *full.Receipt)
	is.Equal(*got.CompletedAt, *full.CompletedAt)
	is.Equal(*got.CancelRequestedAt, *full.CancelRequestedAt)
	got.NextAction, got.Receipt, got.CompletedAt, got.CancelRequestedAt = full.NextAction, full.Receipt, full.CompletedAt, full.CancelRequestedAt
	is.Equal(normalized(*got), normalized(*full))
	is.Equal(got.CreatedAt.Location(), time.UTC)

	// Returned values are copies: changing them changes nothing stored.
	got.Customer["name"] = "changed"
	again, err := s.GetPaymentIntent(ctx, scopeA, "pi_full")
	is.NoErr(err)
	is.Equal(again.Customer["name"], "Aisyah")
}

func testPaymentScoping(t *testing.T, s paykit.Store) {
	is := is.New(t)
	ctx := context.Background()
	mustCreatePayment(t, s, payment(scopeA, "pi_a", "ref", base))
	mustCreatePayment(t, s, payment(scopeALive, "pi_a_live", "ref", base))
	mustCreatePayment(t, s, payment(scopeB, "pi_b", "ref", base))

	checkTenantIsolation(t, "pi", func(scope paykit.Scope, id string) error {
		_, err := s.GetPaymentIntent(ctx, scope, id)
		return err
	}, func(scope paykit.Scope) ([]string, error) {
		list, err := s.ListPaymentIntents(ctx, paykit.ListQuery[paykit.ListParams[paykit.PaymentStatus]]{Scope: scope, Limit: 10})
		return ids(list, func(p paykit.PaymentIntent) string { return p.ID }), err
	})
	// Find reads across tenants: callbacks name only our id.
	for id, scope := range map[string]paykit.Scope{"pi_a": scopeA, "pi_a_live": scopeALive, "pi_b": scopeB} {
		found, err := s.FindPaymentIntent(ctx, id)
		is.NoErr(err)
		is.Equal(found.Scope(), scope)
	}
	_, err := s.FindPaymentIntent(ctx, "pi_missing")
	is.True(errors.Is(err, paykit.ErrNotFound))
	// An update naming another scope does not touch the row.
	p, err := s.GetPaymentIntent(ctx, scopeA, "pi_a")
	is.NoErr(err)
	p.MerchantID = "mch_b"
	is.True(errors.Is(s.UpdatePaymentIntent(ctx, p), paykit.ErrNotFound))
}

func testPaymentUniqueReference(t *testing.T, s paykit.Store) {
	is := is.New(t)
	ctx := context.Background()
	mustCreatePayment(t, s, payment(scopeA, "pi_1", "order-7", base))
	err := s.CreatePaymentIntent(ctx, payment(scopeA, "pi_2", "order-7", base))
	is.True(errors.Is(err, paykit.ErrAlreadyExists))
	is.Equal(conflictKey(err), "merchant_reference")
	err = s.CreatePaymentIntent(ctx, payment(scopeA, "pi_1", "order-8", base))
	is.True(errors.Is(err, paykit.ErrAlreadyExists))
	is.Equal(conflictKey(err), "id")
	// The same reference is free in another environment and another merchant.
	mustCreatePayment(t, s, payment(scopeALive, "pi_3", "order-7", base))
	mustCreatePayment(t, s, payment(scopeB, "pi_4", "order-7", base))
	_, err = s.GetPaymentIntent(ctx, scopeA, "pi_2")
	is.True(errors.Is(err, paykit.ErrNotFound)) // the failed insert left nothing
}

func testPaymentVersioning(t *testing.T, s paykit.Store) {
	is := is.New(t)
	ctx := context.Background()
	mustCreatePayment(t, s, payment(scopeA, "pi_v", "ref-v", base))
	first, err := s.GetPaymentIntent(ctx, scopeA, "pi_v")
	is.NoErr(err)
	second := *first

	first.Status = paykit.PaymentProcessing
	first.UpdatedAt = at(time.Second)
	is.NoErr(s.UpdatePaymentIntent(ctx, first))
	is.Equal(first.Version, int64(1))

	second.Status = paykit.PaymentCancelled
	is.True(errors.Is(s.UpdatePaymentIntent(ctx, &second), paykit.ErrVersionConflict))
	is.Equal(second.Version, int64(0)) // a failed update leaves the struct's version alone

	got, err := s.GetPaymentIntent(ctx, scopeA, "pi_v")
	is.NoErr(err)
	is.Equal(got.Status, paykit.PaymentProcessing)
	is.Equal(got.UpdatedAt, at(time.Second))
	is.Equal(got.Version, int64(1))

	missing := payment(scopeA, "pi_missing", "ref-m", base)
	is.True(errors.Is(s.UpdatePaymentIntent(ctx, missing), paykit.ErrNotFound))
}

func testPaymentListFilters(t *testing.T, s paykit.Store) {
	is := is.New(t)
	ctx := context.Background()
	type row struct {
		id       string
		status   paykit.PaymentStatus
		currency string
		country  string
		offset   time.Duration
	}
	for _, r := range []row{
		{"pi_1", paykit.PaymentSucceeded, "MYR", "MY", 0},
		{"pi_2", paykit.PaymentFailed, "MYR", "MY", time.Minute},
		{"pi_3", paykit.PaymentProcessing, "THB", "TH", 2 * time.Minute},
		{"pi_4", paykit.PaymentSucceeded, "THB", "TH", 3 * time.Minute},
		{"pi_5", paykit.PaymentRequiresAction, "MYR", "MY", 4 * time.Minute},
	} {
		p := payment(scopeA, r.id, "ref-"+r.id, at(r.offset))
		p.Status, p.Currency, p.Country = r.status, r.currency, r.country
		mustCreatePayment(t, s, p)
	}
	mustCreatePayment(t, s, payment(scopeB, "pi_other", "ref-other", at(time.Minute)))
	type params = paykit.ListParams[paykit.PaymentStatus]
	list := func(f params) []string {
		t.Helper()
		rows, err := s.ListPaymentIntents(ctx, paykit.ListQuery[params]{Scope: scopeA, Filter: f, Limit: 100})
		is.NoErr(err)
		return ids(rows, func(p paykit.PaymentIntent) string { return p.ID })
	}
	is.Equal(list(params{}), []string{"pi_5", "pi_4", "pi_3", "pi_2", "pi_1"})
	is.Equal(list(params{Statuses: []paykit.PaymentStatus{paykit.PaymentSucceeded}}), []string{"pi_4", "pi_1"})
	is.Equal(list(params{Statuses: []paykit.PaymentStatus{paykit.PaymentFailed, paykit.PaymentProcessing}}), []string{"pi_3", "pi_2"})
	is.Equal(list(params{Currency: "THB"}), []string{"pi_4", "pi_3"})
	is.Equal(list(params{Country: "MY", Statuses: []paykit.PaymentStatus{paykit.PaymentSucceeded}}), []string{"pi_1"})
	is.Equal(list(params{MerchantReference: "ref-pi_3"}), []string{"pi_3"})
	is.Equal(list(params{MerchantReference: "ref-other"}), []string(nil)) // other tenant
	// created_after is inclusive, created_before exclusive.
	is.Equal(list(params{CreatedAfter: ptr(at(time.Minute)), CreatedBefore: ptr(at(3 * time.Minute))}), []string{"pi_3", "pi_2"})
	is.Equal(list(params{CreatedAfter: ptr(at(4 * time.Minute))}), []string{"pi_5"})
	is.Equal(list(params{CreatedBefore: ptr(at(time.Minute))}), []string{"pi_1"})
}

func testKeysetPagination(t *testing.T, s paykit.Store) {
	is := is.New(t)
	ctx := context.Background()
	// 23 intents over 8 distinct timestamps, so ties are broken by id.
	var want []string
	for i := range 23 {
		id := fmt.Sprintf("pi_%03d", i)
		mustCreatePayment(t, s, payment(scopeA, id, "ref-"+id, at(time.Duration(i/3)*time.Second)))
	}
	for i := 22; i >= 0; i-- {
		want = append(want, fmt.Sprintf("pi_%03d", i))
	}
	for _, limit := range []int{1, 2, 3, 5, 7, 23, 50} {
		got := walkPages(t, limit, func(after *paykit.Position, limit int) ([]paykit.PaymentIntent, error) {
			return s.ListPaymentIntents(ctx, paykit.ListQuery[paykit.ListParams[paykit.PaymentStatus]]{Scope: scopeA, After: after, Limit: limit})
		}, func(p paykit.PaymentIntent) paykit.Position { return paykit.Position{CreatedAt: p.CreatedAt, ID: p.ID} })
		is.Equal(got, want) // every row exactly once, newest first
	}
	// A row inserted ahead of the cursor does not shift later pages.
	first, err := s.ListPaymentIntents(ctx, paykit.ListQuery[paykit.ListParams[paykit.PaymentStatus]]{Scope: scopeA, Limit: 5})
	is.NoErr(err)
	mustCreatePayment(t, s, payment(scopeA, "pi_new", "ref-new", at(time.Hour)))
	last := first[len(first)-1]
	next, err := s.ListPaymentIntents(ctx, paykit.ListQuery[paykit.ListParams[paykit.PaymentStatus]]{Scope: scopeA, After: &paykit.Position{CreatedAt: last.CreatedAt, ID: last.ID}, Limit: 5})
	is.NoErr(err)
	is.Equal(ids(next, func(p paykit.PaymentIntent) string { return p.ID }), want[5:10])
}

var errBoom = errors.New("boom")

func testTxRollback(t *testing.T, s paykit.Store) {
	is := is.New(t)
	ctx := context.Background()
	err := s.InTx(ctx, func(tx paykit.Tx) error {
		is.NoErr(tx.CreateMerchant(ctx, &paykit.Merchant{ID: "mch_commit", Name: "C", CreatedAt: base}))
		mustCreatePayment(t, tx, payment(scopeA, "pi_commit", "ref-c", base))
		// Reads inside the transaction see its own writes.
		_, err := tx.GetPaymentIntent(ctx, scopeA, "pi_commit")
		return err
	})
	is.NoErr(err)
	_, err = s.GetMerchant(ctx, "mch_commit")
	is.NoErr(err)

	err = s.InTx(ctx, func(tx paykit.Tx) error {
		is.NoErr(tx.CreateMerchant(ctx, &paykit.Merchant{ID: "mch_rollback", Name: "R", CreatedAt: base}))
		p, err := tx.GetPaymentIntent(ctx, scopeA, "pi_commit")
		is.NoErr(err)
		p.Status = paykit.PaymentFailed
		is.NoErr(tx.UpdatePaymentIntent(ctx, p))
		is.NoErr(tx.EnqueueJob(ctx, &paykit.Job{ID: "job_rb", Kind: "k", RunAt: base, CreatedAt: base}))
		return fmt.Errorf("wrapped: %w", errBoom)
	})
	is.True(errors.Is(err, errBoom)) // fn's error comes back unchanged
	_, err = s.GetMerchant(ctx, "mch_rollback")
	is.True(errors.Is(err, paykit.ErrNotFound))
	p, err := s.GetPaymentIntent(ctx, scopeA, "pi_commit")
	is.NoErr(err)
	is.Equal(p.Status, paykit.PaymentRequiresAction)
	is.Equal(p.Version, int64(0))
	_, err = s.GetJob(ctx, "job_rb")
	is.True(errors.Is(err, paykit.ErrNotFound))

	// A unique-key failure inside a transaction can be returned to roll back.
	err = s.InTx(ctx, func(tx paykit.Tx) error {
		is.NoErr(tx.CreateMerchant(ctx, &paykit.Merchant{ID: "mch_dup", Name: "D", CreatedAt: base}))
		return tx.CreatePaymentIntent(ctx, payment(scopeA, "pi_dup", "ref-c", base))
	})
	is.True(errors.Is(err, paykit.ErrAlreadyExists))
	_, err = s.GetMerchant(ctx, "mch_dup")
	is.True(errors.Is(err, paykit.ErrNotFound))
}

func testTxPanic(t *testing.T, s paykit.Store) {
	is := is.New(t)
	ctx := context.Background()
	func() {
		defer func() { is.Equal(recover(), "kaboom") }() // the panic propagates
		_ = s.InTx(ctx, func(tx paykit.Tx) error {
			is.NoErr(tx.CreateMerchant(ctx, &paykit.Merchant{ID: "mch_panic", Name: "P", CreatedAt: base}))
			panic("kaboom")
		})
	}()
	_, err := s.GetMerchant(ctx, "mch_panic")
	is.True(errors.Is(err, paykit.ErrNotFound))
	// The Store still works after the panic.
	is.NoErr(s.InTx(ctx, func(tx paykit.Tx) error {
		return tx.CreateMerchant(ctx, &paykit.Merchant{ID: "mch_after", Name: "A", CreatedAt: base})
	}))
}

func testConcurrentUniqueRace(t *testing.T, s paykit.Store) {
	is := is.New(t)
	ctx := context.Background()
	const racers = 8
	errs := make([]error, racers)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range racers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			errs[i] = s.InTx(ctx, func(tx paykit.Tx) error {
				// Each racer reads first, then inserts: the classic check-then-act race.
				if _, err := tx.ListPaymentIntents(ctx, paykit.ListQuery[paykit.ListParams[paykit.PaymentStatus]]{Scope: scopeA, Filter: paykit.ListParams[paykit.PaymentStatus]{MerchantReference: "race"}, Limit: 1}); err != nil {
					return err
				}
				if err := tx.CreatePaymentIntent(ctx, payment(scopeA, fmt.Sprintf("pi_race_%d", i), "race", base)); err != nil {
					return err
				}
				return tx.EnqueueJob(ctx, &paykit.Job{ID: fmt.Sprintf("job_race_%d", i), Kind: "k", RunAt: base, CreatedAt: base})
			})
		}()
	}
	close(start)
	wg.Wait()
	wins := 0
	for _, err := range errs {
		switch {
		case err == nil:
			wins++
		case errors.Is(err, paykit.ErrAlreadyExists):
			is.Equal(conflictKey(err), "merchant_reference")
		default:
			t.Fatalf("a racer got %v, want nil or a merchant_reference conflict", err)
		}
	}
	is.Equal(wins, 1) // exactly one wins
	rows, err := s.ListPaymentIntents(ctx, paykit.ListQuery[paykit.ListParams[paykit.PaymentStatus]]{Scope: scopeA, Limit: 100})
	is.NoErr(err)
	is.Equal(len(rows), 1)
	jobs, err := s.Queue().ClaimJobs(ctx, paykit.ClaimParams{Owner: "w", Now: base, LeaseUntil: at(time.Minute), Limit: 100})
	is.NoErr(err)
	is.Equal(len(jobs), 1) // the losers' other writes rolled back
}

func testConcurrentUpdates(t *testing.T, s paykit.Store) {
	is := is.New(t)
	ctx := context.Background()
	mustCreatePayment(t, s, payment(scopeA, "pi_counter", "counter", base))
	const workers, increments = 4, 10
	var wg sync.WaitGroup
	var mu sync.Mutex
	conflicts := 0
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range increments {
				for {
					err := s.InTx(ctx, func(tx paykit.Tx) error {
						p, err := tx.GetPaymentIntent(ctx, scopeA, "pi_counter")
						if err != nil {
							return err
						}
						p.Amount++
						return tx.UpdatePaymentIntent(ctx, p)
					})
					if errors.Is(err, paykit.ErrVersionConflict) {
						mu.Lock()
						conflicts++
						mu.Unlock()
						continue
					}
					if err != nil {
						t.Errorf("increment: %v", err)
					}
					break
				}
			}
		}()
	}
	wg.Wait()
	p, err := s.GetPaymentIntent(ctx, scopeA, "pi_counter")
	is.NoErr(err)
	is.Equal(p.Amount, int64(12_345+workers*increments)) // no lost update
	is.Equal(p.Version, int64(workers*increments))
	t.Logf("%d version conflicts retried", conflicts)
}

func testIdempotency(t *testing.T, s paykit.Store) {
	is := is.New(t)
	ctx := context.Background()
	rec := &paykit.IdempotencyRecord{
		Scope: scopeA, Key: "key-1", Fingerprint: "fp1", State: paykit.IdempotencyInProgress,
		RecoveryPoint: "started", LockedUntil: ptr(at(time.Minute)), CreatedAt: base, UpdatedAt: base, ExpiresAt: at(24 * time.Hour),
	}
	is.NoErr(s.CreateIdempotencyRecord(ctx, rec))
	err := s.CreateIdempotencyRecord(ctx, &paykit.IdempotencyRecord{Scope: scopeA, Key: "key-1", Fingerprint: "fp2", State: paykit.IdempotencyInProgress, CreatedAt: base, UpdatedAt: base, ExpiresAt: base})
	is.True(errors.Is(err, paykit.ErrAlreadyExists))
	is.Equal(conflictKey(err), "key")
	// The same key is independent in another scope.
	is.NoErr(s.CreateIdempotencyRecord(ctx, &paykit.IdempotencyRecord{Scope: scopeALive, Key: "key-1", Fingerprint: "fp3", State: paykit.IdempotencyComplete, CreatedAt: base, UpdatedAt: base, ExpiresAt: at(time.Hour)}))

	got, err := s.GetIdempotencyRecord(ctx, scopeA, "key-1")
	is.NoErr(err)
	is.Equal(got.Fingerprint, "fp1")
	is.Equal(*got.LockedUntil, at(time.Minute))
	_, err = s.GetIdempotencyRecord(ctx, scopeB, "key-1")
	is.True(errors.Is(err, paykit.ErrNotFound))

	stale := *got
	got.State, got.RecoveryPoint, got.ResourceID = paykit.IdempotencyComplete, "finished", "pi_1"
	got.LockedUntil = nil
	answered := &paykit.PaymentIntent{ID: "pi_1", MerchantID: scopeA.MerchantID, Environment: scopeA.Environment,
		Status: paykit.PaymentRequiresAction, Amount: 100, Currency: "THB", Customer: map[string]string{"name": "สมชาย"},
		NextAction: &paykit.NextAction{Type: paykit.NextActionDisplayQRCode, QRData: "000201", ExpiresAt: at(time.Hour)},
		CreatedAt:  base, UpdatedAt: base}
	got.Answer = &paykit.StoredAnswer{Kind: paykit.AnswerCreated, Resource: answered}
	is.NoErr(s.UpdateIdempotencyRecord(ctx, got))
	is.True(errors.Is(s.UpdateIdempotencyRecord(ctx, &stale), paykit.ErrVersionConflict))
	again, err := s.GetIdempotencyRecord(ctx, scopeA, "key-1")
	is.NoErr(err)
	is.Equal(*again.Answer.Resource.(*paykit.PaymentIntent), *answered) // the resource as answered, exactly
	is.Equal(again.Answer.Kind, paykit.AnswerCreated)
	again.Answer, got.Answer = nil, nil
	is.Equal(*again, *got)

	// Purge drops only complete records that expired.
	is.NoErr(s.CreateIdempotencyRecord(ctx, &paykit.IdempotencyRecord{Scope: scopeB, Key: "running", Fingerprint: "f", State: paykit.IdempotencyInProgress, CreatedAt: base, UpdatedAt: base, ExpiresAt: at(time.Second)}))
	n, err := s.PurgeIdempotencyRecords(ctx, at(2*time.Hour))
	is.NoErr(err)
	is.Equal(n, 1) // scopeALive's record (expired at +1h)
	_, err = s.GetIdempotencyRecord(ctx, scopeALive, "key-1")
	is.True(errors.Is(err, paykit.ErrNotFound))
	_, err = s.GetIdempotencyRecord(ctx, scopeB, "running")
	is.NoErr(err)
	_, err = s.GetIdempotencyRecord(ctx, scopeA, "key-1")
	is.NoErr(err)

	is.NoErr(s.DeleteIdempotencyRecord(ctx, scopeB, "running"))
	is.True(errors.Is(s.DeleteIdempotencyRecord(ctx, scopeB, "running"), paykit.ErrNotFound))
}

func testJobs(t *testing.T, s paykit.Store) {
	is := is.New(t)
	ctx := context.Background()
	job := func(id string, runAt time.Time, dedup string) *paykit.Job {
		return &paykit.Job{ID: id, Kind: "recover", Scope: scopeA, TargetID: "pi_" + id, Payload: []byte(`{"n":1}`), DedupKey: dedup, RunAt: runAt, CreatedAt: base}
	}
	const parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	traced := job("job_1", at(time.Second), "recover:pi_1")
	traced.TraceParent = parent
	is.NoErr(s.EnqueueJob(ctx, traced))
	is.NoErr(s.EnqueueJob(ctx, job("job_2", at(2*time.Second), "")))
	is.NoErr(s.EnqueueJob(ctx, job("job_3", at(time.Hour), "")))
	err := s.EnqueueJob(ctx, job("job_4", base, "recover:pi_1"))
	is.True(errors.Is(err, paykit.ErrAlreadyExists))
	is.Equal(conflictKey(err), "dedup_key")

	got, err := s.GetJob(ctx, "job_1")
	is.NoErr(err)
	is.Equal(got.Scope, scopeA)
	is.Equal(string(got.Payload), `{"n":1}`)
	is.Equal(got.Attempts, 0)
	is.Equal(got.Status, paykit.JobAvailable) // an empty Status is stored as available
	is.True(got.AttemptedAt == nil && got.CompletedAt == nil)
	is.Equal(got.TraceParent, parent)

	// Nothing is due before its time.
	none, err := s.Queue().ClaimJobs(ctx, paykit.ClaimParams{Owner: "w1", Now: base, LeaseUntil: at(time.Minute), Limit: 10})
	is.NoErr(err)
	is.Equal(len(none), 0)

	now := at(10 * time.Second)
	claimed, err := s.Queue().ClaimJobs(ctx, paykit.ClaimParams{Owner: "w1", Now: now, LeaseUntil: now.Add(time.Minute), Limit: 10})
	is.NoErr(err)
	is.Equal(ids(claimed, func(j paykit.Job) string { return j.ID }), []string{"job_1", "job_2"}) // oldest run_at first
	is.Equal(claimed[0].LeaseOwner, "w1")
	is.Equal(*claimed[0].LeaseUntil, now.Add(time.Minute))
	is.Equal(claimed[0].Attempts, 1)
	is.Equal(claimed[0].Status, paykit.JobRunning)
	is.Equal(*claimed[0].AttemptedAt, now)
	is.Equal(claimed[0].TraceParent, parent) // the run's span links to it
	is.Equal(claimed[1].TraceParent, "")

	// A live lease keeps others out.
	other, err := s.Queue().ClaimJobs(ctx, paykit.ClaimParams{Owner: "w2", Now: now.Add(30 * time.Second), LeaseUntil: now.Add(2 * time.Minute), Limit: 10})
	is.NoErr(err)
	is.Equal(len(other), 0)

	is.True(errors.Is(completeJob(ctx, s, "job_1", "w2", now), paykit.ErrNotFound)) // not the owner
	is.NoErr(completeJob(ctx, s, "job_1", "w1", now.Add(time.Second)))
	is.True(errors.Is(completeJob(ctx, s, "job_1", "w1", now), paykit.ErrNotFound)) // completed once
	done, err := s.GetJob(ctx, "job_1")
	is.NoErr(err) // kept, completed
	is.Equal(done.Status, paykit.JobCompleted)
	is.Equal(*done.CompletedAt, now.Add(time.Second))
	is.Equal(done.CompletedAt.Location(), time.UTC)
	is.Equal(done.LeaseOwner, "")
	is.True(done.LeaseUntil == nil)
	// A completed job frees its dedup key.
	is.NoErr(s.EnqueueJob(ctx, job("job_5", at(time.Hour), "recover:pi_1")))
	// Expediting moves a job earlier, never later.
	is.NoErr(s.ExpediteJob(ctx, "recover:pi_1", at(20*time.Minute)))
	is.NoErr(s.ExpediteJob(ctx, "recover:pi_1", at(2*time.Hour)))
	j5, err := s.GetJob(ctx, "job_5")
	is.NoErr(err)
	is.Equal(j5.RunAt, at(20*time.Minute))
	is.True(errors.Is(s.ExpediteJob(ctx, "recover:nothing", base), paykit.ErrNotFound))

	is.NoErr(retryJob(ctx, s, "job_2", "w1", now.Add(5*time.Second), "provider timeout"))
	is.True(errors.Is(retryJob(ctx, s, "job_2", "w1", now, "again"), paykit.ErrNotFound)) // lease released
	retried, err := s.GetJob(ctx, "job_2")
	is.NoErr(err)
	is.Equal(retried.LastError, "provider timeout")
	is.Equal(retried.RunAt, now.Add(5*time.Second))
	is.Equal(retried.LeaseOwner, "")
	is.True(retried.LeaseUntil == nil)
	is.Equal(retried.Status, paykit.JobRetrying)

	// A crashed worker's lease expires and another worker takes over.
	later := now.Add(10 * time.Second)
	c1, err := s.Queue().ClaimJobs(ctx, paykit.ClaimParams{Owner: "w1", Now: later, LeaseUntil: later.Add(time.Minute), Limit: 10})
	is.NoErr(err)
	is.Equal(ids(c1, func(j paykit.Job) string { return j.ID }), []string{"job_2"})
	expired := later.Add(time.Minute)
	c2, err := s.Queue().ClaimJobs(ctx, paykit.ClaimParams{Owner: "w2", Now: expired, LeaseUntil: expired.Add(time.Minute), Limit: 10})
	is.NoErr(err)
	is.Equal(len(c2), 1)
	is.Equal(c2[0].LeaseOwner, "w2")
	is.Equal(c2[0].Attempts, 3)
	is.True(errors.Is(completeJob(ctx, s, "job_2", "w1", expired), paykit.ErrNotFound)) // the old owner lost it
	is.NoErr(completeJob(ctx, s, "job_2", "w2", expired))

	// Completed jobs are never claimed again.
	rest, err := s.Queue().ClaimJobs(ctx, paykit.ClaimParams{Owner: "w3", Now: at(24 * time.Hour), LeaseUntil: at(25 * time.Hour), Limit: 10})
	is.NoErr(err)
	is.Equal(ids(rest, func(j paykit.Job) string { return j.ID }), []string{"job_5", "job_3"})
}

func testConcurrentClaims(t *testing.T, s paykit.Store) {
	is := is.New(t)
	ctx := context.Background()
	const total = 60
	is.NoErr(s.InTx(ctx, func(tx paykit.Tx) error {
		for i := range total {
			if err := tx.EnqueueJob(ctx, &paykit.Job{ID: fmt.Sprintf("job_%03d", i), Kind: "k", RunAt: base, CreatedAt: base}); err != nil {
				return err
			}
		}
		return nil
	}))
	var mu sync.Mutex
	seen := map[string]string{}
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			owner := fmt.Sprintf("w%d", w)
			for {
				jobs, err := s.Queue().ClaimJobs(ctx, paykit.ClaimParams{Owner: owner, Now: at(time.Second), LeaseUntil: at(time.Hour), Limit: 7})
				if errors.Is(err, paykit.ErrVersionConflict) {
					continue // a backend may ask for a retry under contention
				}
				if err != nil {
					t.Errorf("claim: %v", err)
					return
				}
				if len(jobs) == 0 {
					return
				}
				mu.Lock()
				for _, j := range jobs {
					if prev, dup := seen[j.ID]; dup {
						t.Errorf("job %s claimed by %s and %s", j.ID, prev, owner)
					}
					seen[j.ID] = owner
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	is.Equal(len(seen), total) // every job claimed exactly once
}

// normalized treats an empty map like a nil one: backends need not keep the
// difference.
func normalized(p paykit.PaymentIntent) paykit.PaymentIntent {
	if len(p.Customer) == 0 {
		p.Customer = nil
	}
	if len(p.PaymentMethodOptions) == 0 {
		p.PaymentMethodOptions = nil
	}
	return p
}

// checkTenantIsolation checks the reads of three rows, prefix_a of scopeA,
// prefix_a_live of scopeALive and prefix_b of scopeB: get finds each in its
// own scope only (ErrNotFound elsewhere), list of a scope returns its row only.
func checkTenantIsolation(t *testing.T, prefix string, get func(paykit.Scope, string) error, list func(paykit.Scope) ([]string, error)) {
	t.Helper()
	is := is.New(t)
	own := map[string]paykit.Scope{prefix + "_a": scopeA, prefix + "_a_live": scopeALive, prefix + "_b": scopeB}
	for id, home := range own {
		for _, scope := range []paykit.Scope{scopeA, scopeALive, scopeB} {
			err := get(scope, id)
			if scope == home {
				is.NoErr(err)
			} else {
				is.True(errors.Is(err, paykit.ErrNotFound)) // another tenant's row is not found
			}
		}
		rows, err := list(home)
		is.NoErr(err)
		is.Equal(rows, []string{id})
	}
}

// walkPages reads a list page by page, limit rows a page, each page after
// the position of the previous page's last row, and returns the ids of all.
func walkPages[T any](t *testing.T, limit int, list func(after *paykit.Position, limit int) ([]T, error), pos func(T) paykit.Position) []string {
	t.Helper()
	var got []string
	var after *paykit.Position
	for range 100 {
		rows, err := list(after, limit)
		if err != nil {
			t.Fatalf("list a page of %d: %v", limit, err)
		}
		if len(rows) > limit {
			t.Fatalf("a page of %d rows, limit %d", len(rows), limit)
		}
		for _, r := range rows {
			got = append(got, pos(r).ID)
		}
		if len(rows) < limit {
			return got
		}
		last := pos(rows[len(rows)-1])
		after = &last
	}
	t.Fatalf("more than 100 pages of %d", limit)
	return nil
}

func ids[T any](rows []T, id func(T) string) []string {
	var out []string
	for _, r := range rows {
		out = append(out, id(r))
	}
	return out
}
