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

// testPaymentSettlementFields: a payment intent's fee, settlement time
// and dispute amounts round-trip through every read and change under the
// Version rule.
func testPaymentSettlementFields(t *testing.T, s paykit.Store) {
	is := is.New(t)
	ctx := context.Background()
	fresh := payment(scopeA, "pi_fresh", "ref-fresh", base)
	mustCreatePayment(t, s, fresh)
	got, err := s.GetPaymentIntent(ctx, scopeA, "pi_fresh")
	is.NoErr(err)
	is.Equal(got.Fee, int64(0))
	is.True(got.SettledAt == nil)
	is.Equal(got.DisputedAmount, int64(0))
	is.Equal(got.OpenDisputes, 0)

	p := payment(scopeA, "pi_set", "ref-set", at(time.Second))
	p.Status, p.Amount = paykit.PaymentSucceeded, 9_000_000_000_000_000
	p.Fee, p.SettledAt = 261_000_000_000_100, ptr(at(1500*time.Millisecond))
	p.DisputedAmount, p.OpenDisputes = 8_999_999_999_999_999, 2
	mustCreatePayment(t, s, p)
	*p.SettledAt = base // the Store kept its own copy
	p.SettledAt = ptr(at(1500 * time.Millisecond))
	reads := func(id, ref string) []func() (*paykit.PaymentIntent, error) {
		return []func() (*paykit.PaymentIntent, error){
			func() (*paykit.PaymentIntent, error) { return s.GetPaymentIntent(ctx, scopeA, id) },
			func() (*paykit.PaymentIntent, error) { return s.FindPaymentIntent(ctx, id) },
			func() (*paykit.PaymentIntent, error) {
				rows, err := s.ListPaymentIntents(ctx, paykit.ListQuery[paykit.ListParams[paykit.PaymentStatus]]{Scope: scopeA, Filter: paykit.ListParams[paykit.PaymentStatus]{MerchantReference: ref}})
				if err != nil || len(rows) != 1 {
					return nil, fmt.Errorf("list: %d rows, %v", len(rows), err)
				}
				return &rows[0], nil
			},
		}
	}
	for _, read := range reads("pi_set", "ref-set") {
		got, err := read()
		is.NoErr(err)
		is.Equal(got.Fee, p.Fee)
		is.Equal(got.DisputedAmount, p.DisputedAmount)
		is.Equal(got.OpenDisputes, 2)
		is.Equal(*got.SettledAt, at(1500*time.Millisecond))
		is.Equal(got.SettledAt.Location(), time.UTC)
		*got.SettledAt = base // returned values are copies
	}
	got, err = s.GetPaymentIntent(ctx, scopeA, "pi_set")
	is.NoErr(err)
	is.Equal(*got.SettledAt, at(1500*time.Millisecond))

	// They change through UpdatePaymentIntent under the Version rule,
	// SettledAt from nil and back.
	first, err := s.GetPaymentIntent(ctx, scopeA, "pi_fresh")
	is.NoErr(err)
	stale := *first
	first.Status, first.Fee, first.SettledAt = paykit.PaymentSucceeded, 458, ptr(at(time.Hour))
	first.DisputedAmount, first.OpenDisputes = 5_000, 1
	is.NoErr(s.UpdatePaymentIntent(ctx, first))
	is.Equal(first.Version, int64(1))
	stale.OpenDisputes = 3
	is.True(errors.Is(s.UpdatePaymentIntent(ctx, &stale), paykit.ErrVersionConflict))
	for _, read := range reads("pi_fresh", "ref-fresh") {
		got, err := read()
		is.NoErr(err)
		is.Equal(got.Fee, int64(458))
		is.Equal(*got.SettledAt, at(time.Hour))
		is.Equal(got.DisputedAmount, int64(5_000))
		is.Equal(got.OpenDisputes, 1)
		is.Equal(got.Version, int64(1))
	}
	got, err = s.GetPaymentIntent(ctx, scopeA, "pi_fresh")
	is.NoErr(err)
	got.SettledAt, got.OpenDisputes, got.DisputedAmount = nil, 0, 0
	is.NoErr(s.UpdatePaymentIntent(ctx, got))
	again, err := s.GetPaymentIntent(ctx, scopeA, "pi_fresh")
	is.NoErr(err)
	is.True(again.SettledAt == nil)
	is.Equal(again.OpenDisputes, 0)
	is.Equal(again.DisputedAmount, int64(0))
	is.Equal(again.Fee, int64(458))
	is.Equal(again.Version, int64(2))
}
