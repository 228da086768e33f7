package storetest

import (
	"context"
	"errors"
	"testing"

	"github.com/matryer/is"

	"github.com/paykit/paykit"
)

// testFindByProviderRef: a payment intent, a payout intent and a refund
// are each found, in any scope, by their Provider and the Provider's id
// of their attempt, from the update that records the id on; an unknown id,
// another Provider's or an empty one is not found, and a rolled-back id
// is forgotten.
func testFindByProviderRef(t *testing.T, s paykit.Store) {
	is := is.New(t)
	ctx := context.Background()
	notFound := func(provider, ref string) {
		t.Helper()
		_, err := s.FindByProviderRef(ctx, provider, ref)
		if !errors.Is(err, paykit.ErrNotFound) {
			t.Errorf("FindByProviderRef(%q, %q): %v, want ErrNotFound", provider, ref, err)
		}
	}

	pi := payment(scopeA, "pi_ref", "pay-ref", base)
	pi.Provider, pi.Attempt = "sandbox", paykit.AttemptCreating
	is.NoErr(s.CreatePaymentIntent(ctx, pi))
	po := payout(scopeB, "po_ref", "payout-ref", base)
	po.ProviderRef, po.Attempt = "tr_1", paykit.AttemptOpen // known at create
	is.NoErr(s.CreatePayoutIntent(ctx, po))
	re := refund(scopeA, "re_ref", "refund-ref", "pi_ref", base)
	is.NoErr(s.CreateRefund(ctx, re))

	notFound("sandbox", "")    // no attempt is found by an empty id
	notFound("sandbox", "p_1") // not recorded yet

	pi.ProviderRef, pi.Attempt = "p_1", paykit.AttemptOpen
	is.NoErr(s.UpdatePaymentIntent(ctx, pi))
	re.ProviderRef, re.Attempt = "rf_1", paykit.AttemptUnknown
	is.NoErr(s.UpdateRefund(ctx, re))

	for _, want := range []paykit.AttemptOwner{
		{Object: "payment_intent", Scope: scopeA, ID: "pi_ref", Attempt: paykit.AttemptOpen},
		{Object: "payout_intent", Scope: scopeB, ID: "po_ref", Attempt: paykit.AttemptOpen},
		{Object: "refund", Scope: scopeA, ID: "re_ref", Attempt: paykit.AttemptUnknown},
	} {
		ref := map[string]string{"payment_intent": "p_1", "payout_intent": "tr_1", "refund": "rf_1"}[want.Object]
		got, err := s.FindByProviderRef(ctx, "sandbox", ref)
		is.NoErr(err)
		is.Equal(got, want)
	}
	notFound("other", "p_1") // another Provider's id
	notFound("sandbox", "p_2")

	// The state found is the latest.
	pi.Attempt = paykit.AttemptClosed
	is.NoErr(s.UpdatePaymentIntent(ctx, pi))
	got, err := s.FindByProviderRef(ctx, "sandbox", "p_1")
	is.NoErr(err)
	is.Equal(got.Attempt, paykit.AttemptClosed)

	// An id written by a transaction that rolled back is not found.
	rollback := errors.New("rollback")
	err = s.InTx(ctx, func(tx paykit.Tx) error {
		cur, err := tx.GetPayoutIntent(ctx, scopeB, "po_ref")
		if err != nil {
			return err
		}
		cur.Provider, cur.ProviderRef = "other", "tr_2"
		if err := tx.UpdatePayoutIntent(ctx, cur); err != nil {
			return err
		}
		if _, err := tx.FindByProviderRef(ctx, "other", "tr_2"); err != nil {
			return err // its own write is seen inside
		}
		return rollback
	})
	is.True(errors.Is(err, rollback))
	notFound("other", "tr_2")
	got, err = s.FindByProviderRef(ctx, "sandbox", "tr_1")
	is.NoErr(err)
	is.Equal(got.ID, "po_ref")
}
