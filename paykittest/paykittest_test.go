package paykittest_test

import (
	"context"
	"testing"

	"github.com/matryer/is"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/paykittest"
)

// Every Store kind takes a payment through the sandbox, and a declined one.
func TestEnvOnEveryStore(t *testing.T) {
	for _, kind := range paykittest.Stores {
		t.Run(string(kind), func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			ctx := context.Background()
			env := paykittest.New(t, paykittest.WithStore(kind))
			is.Equal(env.Kind, kind)
			m := env.Merchant(ctx)
			p, err := env.Service.Authenticate(ctx, m.PublicKey, m.SecretKey)
			is.NoErr(err)
			is.Equal(p, m.Principal)
			for i, approve := range []bool{true, false} {
				ref := []string{"paid", "declined"}[i]
				pi, _, err := env.Service.CreatePaymentIntent(ctx, m.Principal, ref, paykit.CreatePaymentIntentRequest{
					Amount: 15000, Currency: "MYR", Country: "MY", MerchantReference: ref,
					PaymentMethod: "FPX", Customer: map[string]string{"name": "Aisyah", "email": "aisyah@example.com"},
				})
				is.NoErr(err)
				is.Equal(pi.Status, paykit.PaymentRequiresAction)
				if approve {
					is.NoErr(env.Pay(ctx, pi.ID))
				} else {
					is.NoErr(env.Decline(ctx, pi.ID))
				}
				is.Equal(env.SettleAndNotify(ctx), 1)
				pi, err = env.Service.GetPaymentIntent(ctx, m.Principal, pi.ID)
				is.NoErr(err)
				is.Equal(pi.Status, map[bool]paykit.PaymentStatus{true: paykit.PaymentSucceeded, false: paykit.PaymentFailed}[approve])
			}
			n, err := env.RunJobs(ctx)
			is.NoErr(err)
			is.Equal(n, 0) // drained
		})
	}
}
