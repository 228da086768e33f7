package paykit_test

import (
	"context"
	"testing"

	"github.com/matryer/is"

	"github.com/paykit/paykit"
)

// TestCallbackFindsItsAttemptByProviderRef: a callback that names only
// the Provider's id of an attempt (no key) settles the intent that holds
// it; one whose key names another intent than the id does, or that names
// an id no attempt holds, changes nothing.
func TestCallbackFindsItsAttemptByProviderRef(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	e := newFlowEnv(t)
	ctx := context.Background()
	a, _, err := e.svc.CreatePaymentIntent(ctx, e.test, "cb-ref-a", fpx(15000, "cb-ref-a"))
	is.NoErr(err)
	b, _, err := e.svc.CreatePaymentIntent(ctx, e.test, "cb-ref-b", fpx(15000, "cb-ref-b"))
	is.NoErr(err)
	is.Equal(a.Status, paykit.PaymentRequiresAction)
	is.Equal(a.ProviderRef, "fake_"+a.ID) // the create's answer named it

	succeeded := paykit.Result{Outcome: paykit.OutcomeSucceeded}
	// The key of b with the id of a's attempt: not about one attempt.
	mixed := succeeded
	mixed.Reference = "fake_" + a.ID
	unknown := succeeded
	unknown.Reference = "fake_pi_nobody"
	postCallback(t, e.svc,
		paykit.CallbackEvent{ID: "cb-1", Kind: "payment", Key: b.ID, Result: mixed},
		paykit.CallbackEvent{ID: "cb-2", Kind: "payment", Result: unknown},
		paykit.CallbackEvent{ID: "cb-3", Kind: "payout", Result: mixed}, // a payment's id, as a payout's
	)
	for _, id := range []string{a.ID, b.ID} {
		pi, err := e.svc.GetPaymentIntent(ctx, e.test, id)
		is.NoErr(err)
		is.Equal(pi.Status, paykit.PaymentRequiresAction)
	}

	byRef := succeeded
	byRef.Reference = "fake_" + a.ID
	postCallback(t, e.svc, paykit.CallbackEvent{ID: "cb-4", Kind: "payment", Result: byRef})
	got, err := e.svc.GetPaymentIntent(ctx, e.test, a.ID)
	is.NoErr(err)
	is.Equal(got.Status, paykit.PaymentSucceeded)
	other, err := e.svc.GetPaymentIntent(ctx, e.test, b.ID)
	is.NoErr(err)
	is.Equal(other.Status, paykit.PaymentRequiresAction)
}
