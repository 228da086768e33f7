package sqlstore_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/paykit/paykit"
)

// BenchmarkListPaymentIntents reads one page 90% deep into a merchant's
// intents on SQLite. With keyset paging over the (merchant_id, environment,
// created_at DESC, id DESC) index the cost should not grow with the table.
func BenchmarkListPaymentIntents(b *testing.B) {
	ctx := context.Background()
	scope := paykit.Scope{MerchantID: "mch_a", Environment: paykit.Live}
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	row := func(i int) (time.Time, string) {
		return base.Add(time.Duration(i/2) * time.Millisecond), fmt.Sprintf("pi_%07d", i)
	}
	for _, n := range []int{10_000, 100_000} {
		s := open(b, "sqlite:"+filepath.Join(b.TempDir(), "bench.db"))
		err := s.InTx(ctx, func(tx paykit.Tx) error {
			for i := range n + n/10 {
				created, id := row(i)
				p := &paykit.PaymentIntent{
					ID: id, MerchantID: scope.MerchantID, Environment: scope.Environment, Status: paykit.PaymentSucceeded,
					Amount: 1000, Currency: "MYR", Country: "MY", MerchantReference: id, PaymentMethod: "FPX",
					Customer: map[string]string{"email": "a@example.com"}, CreatedAt: created, UpdatedAt: created,
				}
				if i >= n { // another merchant's rows, interleaved in time
					created, _ := row(i - n)
					p.MerchantID, p.CreatedAt = "mch_b", created
				}
				if err := tx.CreatePaymentIntent(ctx, p); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
		// The newest row has i = n-1; the page starts 90% of the way down.
		created, id := row(n - 1 - n*9/10)
		q := paykit.PaymentIntentQuery{Scope: scope, After: &paykit.Position{CreatedAt: created, ID: id}, Limit: 21}
		b.Run(fmt.Sprintf("rows=%d", n), func(b *testing.B) {
			for b.Loop() {
				page, err := s.ListPaymentIntents(ctx, q)
				if err != nil || len(page) != 21 {
					b.Fatalf("got %d rows, %v", len(page), err)
				}
			}
		})
	}
}
