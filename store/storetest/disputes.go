package storetest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/paykit/paykit"
)

func disputeRow(scope paykit.Scope, id, ref, paymentIntent string, created time.Time) *paykit.Dispute {
	return &paykit.Dispute{
		ID: id, MerchantID: scope.MerchantID, Environment: scope.Environment, PaymentIntentID: paymentIntent,
		Amount: 10_000, Currency: "MYR", Fee: 1_500, Reason: paykit.DisputeGeneral, Status: paykit.DisputeNeedsResponse,
		EvidenceDueBy: created.Add(7 * 24 * time.Hour), Provider: "sandbox", ProviderRef: ref,
		CreatedAt: created, UpdatedAt: created,
	}
}

func mustCreateDispute(t *testing.T, s paykit.Tx, d *paykit.Dispute) {
	t.Helper()
	if err := s.CreateDispute(context.Background(), d); err != nil {
		t.Fatalf("create dispute %s: %v", d.ID, err)
	}
}

func disputePosition(d paykit.Dispute) paykit.Position {
	return paykit.Position{CreatedAt: d.CreatedAt, ID: d.ID}
}

func disputeIDs(rows []paykit.Dispute) []string {
	return ids(rows, func(d paykit.Dispute) string { return d.ID })
}

func testDisputeRoundTrip(t *testing.T, s paykit.Store) {
	is := is.New(t)
	ctx := context.Background()
	plain := disputeRow(scopeA, "dp_plain", "sbx_dp_1", "pi_1", base)
	is.NoErr(s.CreateDispute(ctx, plain))
	got, err := s.GetDispute(ctx, scopeA, "dp_plain")
	is.NoErr(err)
	is.Equal(*got, *plain)
	is.True(got.ClosedAt == nil && got.EvidenceSubmittedAt == nil)

	// Every field set, none left at its zero value.
	full := disputeRow(scopeA, "dp_full", "sbx_dp_2", "pi_2", at(time.Second))
	full.Amount, full.Currency, full.Fee = 9_000_000_000_000_000, "THB", 2_000
	full.Reason, full.Status = paykit.DisputeProductNotReceived, paykit.DisputeWon
	full.Evidence = "Delivered on 3 March, signed by ลูกค้า: winning_evidence " + strings.Repeat("x", 20_000)
	full.EvidenceSubmittedAt, full.ClosedAt = ptr(at(1500*time.Millisecond)), ptr(at(1700*time.Millisecond))
	full.EvidenceDueBy, full.Provider, full.UpdatedAt = at(time.Hour), "stripe", at(2*time.Second)
	is.NoErr(s.CreateDispute(ctx, full))
	*full.ClosedAt = base // the Store kept its own copy
	full.ClosedAt = ptr(at(1700 * time.Millisecond))
	for _, read := range []func() (*paykit.Dispute, error){
		func() (*paykit.Dispute, error) { return s.GetDispute(ctx, scopeA, "dp_full") },
		func() (*paykit.Dispute, error) { return s.FindDisputeByProviderRef(ctx, "stripe", "sbx_dp_2") },
		func() (*paykit.Dispute, error) {
			rows, err := s.ListDisputes(ctx, paykit.ListQuery[paykit.DisputeListParams]{Scope: scopeA, Filter: paykit.DisputeListParams{PaymentIntent: "pi_2"}})
			if err != nil || len(rows) != 1 {
				return nil, fmt.Errorf("list: %d rows, %v", len(rows), err)
			}
			return &rows[0], nil
		},
	} {
		got, err := read()
		is.NoErr(err)
		for _, tm := range []time.Time{got.CreatedAt, got.UpdatedAt, got.EvidenceDueBy, *got.ClosedAt, *got.EvidenceSubmittedAt} {
			is.Equal(tm.Location(), time.UTC)
		}
		is.Equal(*got.ClosedAt, *full.ClosedAt)
		is.Equal(*got.EvidenceSubmittedAt, *full.EvidenceSubmittedAt)
		want := *full
		want.ClosedAt, want.EvidenceSubmittedAt = got.ClosedAt, got.EvidenceSubmittedAt
		is.Equal(*got, want)
		*got.ClosedAt = base // returned values are copies
	}
	again, err := s.GetDispute(ctx, scopeA, "dp_full")
	is.NoErr(err)
	is.Equal(*again.ClosedAt, at(1700*time.Millisecond))

	// Ids are unique across scopes.
	err = s.CreateDispute(ctx, disputeRow(scopeB, "dp_plain", "sbx_dp_3", "pi_b", base))
	is.True(errors.Is(err, paykit.ErrAlreadyExists))
	var c *paykit.ConflictError
	is.True(errors.As(err, &c))
	is.Equal(c.Entity, "dispute")
	is.Equal(c.Key, "id")
	_, err = s.FindDisputeByProviderRef(ctx, "sandbox", "sbx_dp_3")
	is.True(errors.Is(err, paykit.ErrNotFound)) // the failed insert left nothing

	_, err = s.GetDispute(ctx, scopeA, "dp_missing")
	is.True(errors.Is(err, paykit.ErrNotFound))
}

func testDisputeScoping(t *testing.T, s paykit.Store) {
	is := is.New(t)
	ctx := context.Background()
	mustCreateDispute(t, s, disputeRow(scopeA, "dp_a", "ref_a", "pi_x", base))
	mustCreateDispute(t, s, disputeRow(scopeALive, "dp_a_live", "ref_a_live", "pi_x", base))
	mustCreateDispute(t, s, disputeRow(scopeB, "dp_b", "ref_b", "pi_b", base))

	checkTenantIsolation(t, "dp", func(scope paykit.Scope, id string) error {
		_, err := s.GetDispute(ctx, scope, id)
		return err
	}, func(scope paykit.Scope) ([]string, error) {
		list, err := s.ListDisputes(ctx, paykit.ListQuery[paykit.DisputeListParams]{Scope: scope, Limit: 10})
		return disputeIDs(list), err
	})
	// Provider callbacks find a dispute by the Provider's id alone,
	// whatever its scope.
	for ref, want := range map[string]struct {
		id    string
		scope paykit.Scope
	}{"ref_a": {"dp_a", scopeA}, "ref_a_live": {"dp_a_live", scopeALive}, "ref_b": {"dp_b", scopeB}} {
		d, err := s.FindDisputeByProviderRef(ctx, "sandbox", ref)
		is.NoErr(err)
		is.Equal(d.ID, want.id)
		is.Equal(d.Scope(), want.scope)
	}
	// A payment intent id of another tenant lists nothing.
	rows, err := s.ListDisputes(ctx, paykit.ListQuery[paykit.DisputeListParams]{Scope: scopeA, Filter: paykit.DisputeListParams{PaymentIntent: "pi_b"}})
	is.NoErr(err)
	is.Equal(len(rows), 0)

	// An update naming another scope does not touch the row.
	d, err := s.GetDispute(ctx, scopeA, "dp_a")
	is.NoErr(err)
	d.MerchantID, d.Status = "mch_b", paykit.DisputeLost
	is.True(errors.Is(s.UpdateDispute(ctx, d), paykit.ErrNotFound))
	d.MerchantID, d.Environment = "mch_a", paykit.Live
	is.True(errors.Is(s.UpdateDispute(ctx, d), paykit.ErrNotFound))
	d, err = s.GetDispute(ctx, scopeA, "dp_a")
	is.NoErr(err)
	is.Equal(d.Status, paykit.DisputeNeedsResponse)
	is.Equal(d.Version, int64(0))
}

// testDisputeProviderRef: a Provider's id of a dispute names one dispute,
// across every scope; disputes without one are many.
func testDisputeProviderRef(t *testing.T, s paykit.Store) {
	is := is.New(t)
	ctx := context.Background()
	mustCreateDispute(t, s, disputeRow(scopeA, "dp_1", "ch_dp_1", "pi_1", base))
	for _, d := range []*paykit.Dispute{
		disputeRow(scopeA, "dp_2", "ch_dp_1", "pi_2", base),     // same scope
		disputeRow(scopeB, "dp_2", "ch_dp_1", "pi_2", base),     // another merchant
		disputeRow(scopeALive, "dp_2", "ch_dp_1", "pi_2", base), // another environment
	} {
		err := s.CreateDispute(ctx, d)
		is.True(errors.Is(err, paykit.ErrAlreadyExists))
		var c *paykit.ConflictError
		is.True(errors.As(err, &c))
		is.Equal(c.Entity, "dispute")
		is.Equal(c.Key, "provider_ref")
		_, err = s.GetDispute(ctx, d.Scope(), "dp_2")
		is.True(errors.Is(err, paykit.ErrNotFound)) // the failed insert left nothing
	}
	found, err := s.FindDisputeByProviderRef(ctx, "sandbox", "ch_dp_1")
	is.NoErr(err)
	is.Equal(found.ID, "dp_1")

	// Another Provider's same id is another dispute.
	other := disputeRow(scopeB, "dp_2", "ch_dp_1", "pi_2", base)
	other.Provider = "stripe"
	mustCreateDispute(t, s, other)
	found, err = s.FindDisputeByProviderRef(ctx, "stripe", "ch_dp_1")
	is.NoErr(err)
	is.Equal(found.ID, "dp_2")
	is.Equal(found.Scope(), scopeB)
	_, err = s.FindDisputeByProviderRef(ctx, "xendit", "ch_dp_1")
	is.True(errors.Is(err, paykit.ErrNotFound))
	_, err = s.FindDisputeByProviderRef(ctx, "sandbox", "ch_dp")
	is.True(errors.Is(err, paykit.ErrNotFound))

	// Disputes the Provider has not named yet do not collide, and are not
	// found by the empty reference.
	mustCreateDispute(t, s, disputeRow(scopeA, "dp_3", "", "pi_3", base))
	mustCreateDispute(t, s, disputeRow(scopeA, "dp_4", "", "pi_4", base))
	_, err = s.FindDisputeByProviderRef(ctx, "sandbox", "")
	is.True(errors.Is(err, paykit.ErrNotFound))

	// An update may give a dispute its reference, not another's.
	d, err := s.GetDispute(ctx, scopeA, "dp_3")
	is.NoErr(err)
	d.ProviderRef = "ch_dp_1"
	err = s.UpdateDispute(ctx, d)
	is.True(errors.Is(err, paykit.ErrAlreadyExists))
	is.Equal(conflictKey(err), "provider_ref")
	is.Equal(d.Version, int64(0))
	d.ProviderRef = "ch_dp_3"
	is.NoErr(s.UpdateDispute(ctx, d))
	found, err = s.FindDisputeByProviderRef(ctx, "sandbox", "ch_dp_3")
	is.NoErr(err)
	is.Equal(found.ID, "dp_3")
	d.Status = paykit.DisputeUnderReview // keeping its own reference is no conflict
	is.NoErr(s.UpdateDispute(ctx, d))

	// A reference changed or rolled back is free again.
	d.ProviderRef = "ch_dp_3b"
	is.NoErr(s.UpdateDispute(ctx, d))
	_, err = s.FindDisputeByProviderRef(ctx, "sandbox", "ch_dp_3")
	is.True(errors.Is(err, paykit.ErrNotFound))
	err = s.InTx(ctx, func(tx paykit.Tx) error {
		mustCreateDispute(t, tx, disputeRow(scopeB, "dp_5", "ch_dp_5", "pi_5", base))
		if _, err := tx.FindDisputeByProviderRef(ctx, "sandbox", "ch_dp_5"); err != nil {
			return err
		}
		return errBoom
	})
	is.True(errors.Is(err, errBoom))
	_, err = s.FindDisputeByProviderRef(ctx, "sandbox", "ch_dp_5")
	is.True(errors.Is(err, paykit.ErrNotFound))
	mustCreateDispute(t, s, disputeRow(scopeA, "dp_6", "ch_dp_5", "pi_5", base))
	mustCreateDispute(t, s, disputeRow(scopeA, "dp_7", "ch_dp_3", "pi_5", base))
}

func testDisputeVersioning(t *testing.T, s paykit.Store) {
	is := is.New(t)
	ctx := context.Background()
	mustCreateDispute(t, s, disputeRow(scopeA, "dp_v", "ref_v", "pi_v", base))
	first, err := s.GetDispute(ctx, scopeA, "dp_v")
	is.NoErr(err)
	second := *first

	// Every mutable field changes.
	first.Status, first.Evidence, first.EvidenceSubmittedAt = paykit.DisputeLost, "losing_evidence", ptr(at(time.Second))
	first.ClosedAt, first.UpdatedAt, first.Amount, first.Fee = ptr(at(time.Minute)), at(2*time.Minute), 9_000, 1_600
	first.Reason, first.EvidenceDueBy = paykit.DisputeFraudulent, at(48*time.Hour)
	is.NoErr(s.UpdateDispute(ctx, first))
	is.Equal(first.Version, int64(1)) // a successful update increments the struct's version
	got, err := s.GetDispute(ctx, scopeA, "dp_v")
	is.NoErr(err)
	is.Equal(*got.ClosedAt, at(time.Minute))
	is.Equal(*got.EvidenceSubmittedAt, at(time.Second))
	got.ClosedAt, got.EvidenceSubmittedAt = first.ClosedAt, first.EvidenceSubmittedAt
	is.Equal(*got, *first)

	second.Status = paykit.DisputeWon
	is.True(errors.Is(s.UpdateDispute(ctx, &second), paykit.ErrVersionConflict))
	is.Equal(second.Version, int64(0)) // a failed update leaves the struct's version alone
	got, err = s.GetDispute(ctx, scopeA, "dp_v")
	is.NoErr(err)
	is.Equal(got.Status, paykit.DisputeLost)
	is.Equal(got.Version, int64(1))

	// The next update from the fresh read succeeds; pointers can be cleared.
	got.ClosedAt, got.EvidenceSubmittedAt, got.Evidence, got.Status = nil, nil, "", paykit.DisputeNeedsResponse
	is.NoErr(s.UpdateDispute(ctx, got))
	is.Equal(got.Version, int64(2))
	again, err := s.GetDispute(ctx, scopeA, "dp_v")
	is.NoErr(err)
	is.True(again.ClosedAt == nil && again.EvidenceSubmittedAt == nil)
	is.Equal(*again, *got)

	is.True(errors.Is(s.UpdateDispute(ctx, disputeRow(scopeA, "dp_missing", "ref_m", "pi_v", base)), paykit.ErrNotFound))

	// An update inside a failed transaction is undone.
	err = s.InTx(ctx, func(tx paykit.Tx) error {
		d, err := tx.GetDispute(ctx, scopeA, "dp_v")
		if err != nil {
			return err
		}
		d.Status = paykit.DisputeWon
		if err := tx.UpdateDispute(ctx, d); err != nil {
			return err
		}
		return errBoom
	})
	is.True(errors.Is(err, errBoom))
	again, err = s.GetDispute(ctx, scopeA, "dp_v")
	is.NoErr(err)
	is.Equal(again.Status, paykit.DisputeNeedsResponse)
	is.Equal(again.Version, int64(2))
}

func testDisputeListFilters(t *testing.T, s paykit.Store) {
	is := is.New(t)
	ctx := context.Background()
	type row struct {
		scope    paykit.Scope
		id       string
		pi       string
		status   paykit.DisputeStatus
		currency string
		offset   time.Duration
	}
	for _, r := range []row{
		{scopeA, "dp_1", "pi_1", paykit.DisputeWon, "MYR", 0},
		{scopeA, "dp_2", "pi_1", paykit.DisputeLost, "MYR", time.Minute},
		{scopeA, "dp_3", "pi_2", paykit.DisputeNeedsResponse, "THB", 2 * time.Minute},
		{scopeA, "dp_4", "pi_2", paykit.DisputeUnderReview, "THB", 3 * time.Minute},
		{scopeA, "dp_5", "pi_1", paykit.DisputeNeedsResponse, "MYR", 4 * time.Minute},
		{scopeB, "dp_b1", "pi_1", paykit.DisputeNeedsResponse, "MYR", 2 * time.Minute}, // ties dp_3, same intent id as scopeA's
		{scopeB, "dp_b2", "pi_b", paykit.DisputeWon, "THB", 5 * time.Minute},
		{scopeALive, "dp_l1", "pi_1", paykit.DisputeNeedsResponse, "MYR", 6 * time.Minute},
	} {
		d := disputeRow(r.scope, r.id, "ref_"+r.id, r.pi, at(r.offset))
		d.Status, d.Currency = r.status, r.currency
		mustCreateDispute(t, s, d)
	}
	type params = paykit.ListParams[paykit.DisputeStatus]
	type f = paykit.DisputeListParams
	statuses := func(ss ...paykit.DisputeStatus) []paykit.DisputeStatus { return ss }
	list := func(filter f) []string {
		t.Helper()
		rows, err := s.ListDisputes(ctx, paykit.ListQuery[paykit.DisputeListParams]{Scope: scopeA, Filter: filter, Limit: 100})
		is.NoErr(err)
		return disputeIDs(rows)
	}
	all := []string{"dp_5", "dp_4", "dp_3", "dp_2", "dp_1"}
	is.Equal(list(f{}), all)
	is.Equal(list(f{ListParams: params{Statuses: statuses(paykit.DisputeWon, paykit.DisputeLost)}}), []string{"dp_2", "dp_1"})
	is.Equal(list(f{ListParams: params{Statuses: statuses(paykit.DisputeNeedsResponse)}}), []string{"dp_5", "dp_3"})
	is.Equal(list(f{ListParams: params{Statuses: statuses(paykit.DisputeNeedsResponse, paykit.DisputeUnderReview)}}), []string{"dp_5", "dp_4", "dp_3"})
	is.Equal(list(f{ListParams: params{Currency: "THB"}}), []string{"dp_4", "dp_3"})
	is.Equal(list(f{ListParams: params{Currency: "SGD"}}), []string(nil))
	is.Equal(list(f{PaymentIntent: "pi_1"}), []string{"dp_5", "dp_2", "dp_1"})
	is.Equal(list(f{PaymentIntent: "pi_2"}), []string{"dp_4", "dp_3"})
	is.Equal(list(f{PaymentIntent: "pi_b"}), []string(nil)) // other tenant
	is.Equal(list(f{PaymentIntent: "pi_1", ListParams: params{Statuses: statuses(paykit.DisputeNeedsResponse, paykit.DisputeUnderReview)}}), []string{"dp_5"})
	// created_after is inclusive, created_before exclusive.
	is.Equal(list(f{ListParams: params{CreatedAfter: ptr(at(time.Minute)), CreatedBefore: ptr(at(3 * time.Minute))}}), []string{"dp_3", "dp_2"})
	is.Equal(list(f{ListParams: params{CreatedAfter: ptr(at(4 * time.Minute))}}), []string{"dp_5"})
	is.Equal(list(f{ListParams: params{CreatedBefore: ptr(base)}}), []string(nil))
	is.Equal(list(f{PaymentIntent: "pi_1", ListParams: params{Currency: "MYR", CreatedAfter: ptr(at(time.Minute)), Statuses: statuses(paykit.DisputeLost)}}), []string{"dp_2"})
	// Country and merchant reference do not apply to disputes.
	is.Equal(list(f{ListParams: params{Country: "TH", MerchantReference: "ref_dp_1"}}), all)

	// An update moves a dispute between status filters.
	d, err := s.GetDispute(ctx, scopeA, "dp_3")
	is.NoErr(err)
	d.Status = paykit.DisputeUnderReview
	is.NoErr(s.UpdateDispute(ctx, d))
	is.Equal(list(f{ListParams: params{Statuses: statuses(paykit.DisputeNeedsResponse)}}), []string{"dp_5"})
}

func testDisputePagination(t *testing.T, s paykit.Store) {
	is := is.New(t)
	ctx := context.Background()
	// 24 disputes of three tenants over 8 timestamps, so ties are broken
	// by id, within a tenant and across tenants.
	scopes := []paykit.Scope{scopeA, scopeB, scopeALive}
	var ofA, ofAIntent []string
	for i := 23; i >= 0; i-- {
		id := fmt.Sprintf("dp_%03d", i)
		pi := fmt.Sprintf("pi_%d", i%2)
		d := disputeRow(scopes[i%3], id, "ref_"+id, pi, at(time.Duration(i/3)*time.Second))
		if i%4 == 1 {
			d.Status = paykit.DisputeUnderReview
		}
		mustCreateDispute(t, s, d)
		if i%3 == 0 {
			ofA = append(ofA, id)
			if pi == "pi_0" {
				ofAIntent = append(ofAIntent, id)
			}
		}
	}
	// Same timestamp as the newest of scopeA, ids on both sides of it.
	for _, id := range []string{"dp_0205", "dp_0225"} {
		mustCreateDispute(t, s, disputeRow(scopeA, id, "ref_"+id, "pi_9", at(7*time.Second)))
	}
	// dp_0225 > dp_021 > dp_0205 in id order.
	ofA = append([]string{"dp_0225", ofA[0], "dp_0205"}, ofA[1:]...)
	is.Equal(len(ofA), 10)
	page := func(f paykit.DisputeListParams) func(after *paykit.Position, limit int) ([]paykit.Dispute, error) {
		return func(after *paykit.Position, limit int) ([]paykit.Dispute, error) {
			return s.ListDisputes(ctx, paykit.ListQuery[paykit.DisputeListParams]{Scope: scopeA, Filter: f, After: after, Limit: limit})
		}
	}
	for _, limit := range []int{1, 2, 3, 4, 7, 10, 50} {
		is.Equal(walkPages(t, limit, page(paykit.DisputeListParams{}), disputePosition), ofA) // every dispute of the tenant exactly once, newest first
		is.Equal(walkPages(t, limit, page(paykit.DisputeListParams{PaymentIntent: "pi_0"}), disputePosition), ofAIntent)
		// Several statuses: pages of each merged.
		is.Equal(walkPages(t, limit, page(paykit.DisputeListParams{ListParams: paykit.ListParams[paykit.DisputeStatus]{
			Statuses: []paykit.DisputeStatus{paykit.DisputeUnderReview, paykit.DisputeNeedsResponse}}}), disputePosition), ofA)
	}
	// Strictly after the position: its own row is not repeated, and a
	// position between rows works too.
	rows, err := page(paykit.DisputeListParams{})(&paykit.Position{CreatedAt: at(7 * time.Second), ID: "dp_0225"}, 2)
	is.NoErr(err)
	is.Equal(disputeIDs(rows), []string{"dp_021", "dp_0205"})
	rows, err = page(paykit.DisputeListParams{})(&paykit.Position{CreatedAt: at(7 * time.Second), ID: "dp_0206"}, 2)
	is.NoErr(err)
	is.Equal(disputeIDs(rows), []string{"dp_0205", "dp_018"})
	// Limit 0 means no limit.
	rows, err = page(paykit.DisputeListParams{})(nil, 0)
	is.NoErr(err)
	is.Equal(disputeIDs(rows), ofA)
}
