package paykit_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/matryer/is"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/paykittest"
)

// Payments created in one millisecond (the clock stands still) list
// newest first in exactly the reverse of their creation order, page by
// page, on every Store.
func TestSameMillisecondPaymentsListInCreationOrder(t *testing.T) {
	t.Parallel()
	for _, kind := range paykittest.Stores {
		t.Run(string(kind), func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			ctx := context.Background()
			e := paykittest.New(t, paykittest.WithStore(kind))
			m := e.Merchant(ctx)
			var created []string
			for i := range 30 {
				ref := fmt.Sprintf("same-ms-%d", i)
				pi, _, err := e.Service.CreatePaymentIntent(ctx, m.Principal, ref, paykit.CreatePaymentIntentRequest{
					Amount: 1000, Currency: "MYR", Country: "MY", MerchantReference: ref, PaymentMethod: "TNG",
					Customer: map[string]string{"name": "Aisyah", "email": "aisyah@example.com"},
				})
				is.NoErr(err)
				is.True(pi.CreatedAt.Equal(paykittest.Start))
				created = append(created, pi.ID)
			}
			slices.Reverse(created)
			var listed []string
			params := paykit.ListParams[paykit.PaymentStatus]{PageParams: paykit.PageParams{Limit: 7}}
			for {
				page, err := e.Service.ListPaymentIntents(ctx, m.Principal, params)
				is.NoErr(err)
				for _, pi := range page.Data {
					listed = append(listed, pi.ID)
				}
				if !page.HasMore {
					break
				}
				params.Cursor = page.NextCursor
			}
			is.Equal(listed, created)
		})
	}
}
