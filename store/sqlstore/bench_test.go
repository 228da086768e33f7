package sqlstore_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/internal/pgtest"
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
		q := paykit.ListQuery[paykit.ListParams[paykit.PaymentStatus]]{Scope: scope, After: &paykit.Position{CreatedAt: created, ID: id}, Limit: 21}
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

// BenchmarkPostLedger reserves from one hot balance, as concurrent payouts
// of one merchant do: every post is a conditional UPDATE of the same row
// plus the insert of two entries, serialized on that row.
func BenchmarkPostLedger(b *testing.B) {
	ctx := context.Background()
	scope := paykit.Scope{MerchantID: "mch_a", Environment: paykit.Live}
	for name, dsn := range map[string]func() string{
		"sqlite":   func() string { return "sqlite:" + filepath.Join(b.TempDir(), "bench.db") },
		"postgres": func() string { return pgtest.Database(b) },
	} {
		s := open(b, dsn())
		err := s.PostLedger(ctx, &paykit.LedgerTxn{ID: "ltx_fund", Scope: scope, Currency: "THB", Kind: "fund", At: time.Now().UTC(),
			Postings: []paykit.Posting{{Account: paykit.AccountAdjustments, Amount: -1e15}, {Account: paykit.AccountAvailable, Amount: 1e15}}})
		if err != nil {
			b.Fatal(err)
		}
		var n atomic.Int64
		b.Run(name, func(b *testing.B) {
			b.SetParallelism(4) // 4 goroutines per core
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					id := fmt.Sprintf("ltx_%d", n.Add(1))
					err := s.PostLedger(ctx, &paykit.LedgerTxn{ID: id, Scope: scope, Currency: "THB", Kind: "payout.reserved", RefID: id, At: time.Now().UTC(),
						Postings: []paykit.Posting{{Account: paykit.AccountAvailable, Amount: -1}, {Account: paykit.AccountReserved, Amount: 1}}})
					if err != nil && !errors.Is(err, paykit.ErrVersionConflict) {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}
