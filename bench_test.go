package paykit_test

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/internal/answertest"
	"github.com/paykit/paykit/keyring"
	"github.com/paykit/paykit/paykittest"
	"github.com/paykit/paykit/store/memory"
)

// benchStores opens each Store once for a benchmark.
func benchStores(b *testing.B) map[string]paykit.Store {
	b.Helper()
	out := map[string]paykit.Store{"memory": memory.New()}
	for name, dsn := range map[string]string{
		"sqlite":   "sqlite:" + filepath.Join(b.TempDir(), "bench.db"),
		"postgres": paykittest.PostgresDSN(b),
	} {
		out[name] = paykittest.OpenSQL(b, dsn)
	}
	return out
}

// BenchmarkCreatePaymentIntent measures POST /payment_intents in the Go API
// on each Store: validation, routing, the idempotency record, the intent, the
// Provider call (an in-process Provider, so the figure is paykit's own cost)
// and the stored answer. "parallel" runs GOMAXPROCS creators at once.
// benchSigningKey is the Services' signing key: the SQL Stores need one.
var benchSigningKey = []byte("paykit-benchmark-signing-key-32b")

func BenchmarkCreatePaymentIntent(b *testing.B) {
	ctx := context.Background()
	stores := benchStores(b)
	for _, name := range []string{"memory", "sqlite", "postgres"} {
		svc, err := paykit.New(paykit.Config{
			Store: stores[name], Logger: slog.New(slog.DiscardHandler), Routing: fakeRouting, PublicURL: "https://pay.example/",
			Providers: map[string]paykit.Provider{"fake": newFakeProvider()}, SigningKey: benchSigningKey, AccountKeys: keyring.Random(),
		})
		if err != nil {
			b.Fatal(err)
		}
		p := paykit.Principal{Scope: paykit.Scope{MerchantID: "mch_bench", Environment: paykit.Test}}
		var n atomic.Int64
		create := func(b *testing.B) {
			i := n.Add(1)
			ref := fmt.Sprintf("%s-%d", name, i)
			resp, err := answertest.From(svc.CreatePaymentIntent(ctx, p, "key-"+ref, fpx(5000, ref)))
			if err != nil || resp.Status != 201 {
				b.Errorf("create: %v", err)
			}
		}
		b.Run(name+"/serial", func(b *testing.B) {
			for b.Loop() {
				create(b)
			}
		})
		b.Run(name+"/parallel", func(b *testing.B) {
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					create(b)
				}
			})
		})
	}
}

// BenchmarkCreatePayoutIntent measures POST /payout_intents in the Go API
// on each Store: validation, routing, sealing the account number, the
// reservation on the ledger, the payout, its event and the Provider
// dispatch (an in-process Provider), and the stored answer.
func BenchmarkCreatePayoutIntent(b *testing.B) {
	ctx := context.Background()
	stores := benchStores(b)
	routing := thPayoutRouting()
	for _, name := range []string{"memory", "sqlite", "postgres"} {
		svc, err := paykit.New(paykit.Config{
			Store: stores[name], Logger: slog.New(slog.DiscardHandler), Routing: routing, PublicURL: "https://pay.example/",
			Providers: map[string]paykit.Provider{"fake": newFakeBank()}, SigningKey: benchSigningKey, AccountKeys: keyring.Random(),
		})
		if err != nil {
			b.Fatal(err)
		}
		if err := stores[name].CreateMerchant(ctx, &paykit.Merchant{ID: "mch_bench", Name: "Bench", CreatedAt: svc.Now()}); err != nil {
			b.Fatal(err)
		}
		if _, err := svc.AdjustBalance(ctx, "bench", "mch_bench", paykit.BalanceAdjustmentRequest{
			Environment: "test", Currency: "THB", Amount: 900000000000000000, Reason: "float"}); err != nil {
			b.Fatal(err)
		}
		p := paykit.Principal{Scope: paykit.Scope{MerchantID: "mch_bench", Environment: paykit.Test}}
		var n atomic.Int64
		create := func(b *testing.B) {
			ref := fmt.Sprintf("%s-%d", name, n.Add(1))
			resp, err := answertest.From(svc.CreatePayoutIntent(ctx, p, "key-"+ref, thPayout(1000, ref, "000123456789")))
			if err != nil || resp.Status != 201 {
				b.Errorf("create: %v", err)
			}
		}
		b.Run(name+"/serial", func(b *testing.B) {
			for b.Loop() {
				create(b)
			}
		})
		b.Run(name+"/parallel", func(b *testing.B) {
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					create(b)
				}
			})
		})
	}
}

// BenchmarkCreateRefund measures POST /refunds in the Go API on each
// Store: validation, the payment's refundable share, the reservation on
// the ledger, the refund, its event, the Provider call (an in-process
// Provider) and the stored answer. Refunds spread over 64 succeeded
// payments, as a shop's do; refunds of one payment serialize by design.
func BenchmarkCreateRefund(b *testing.B) {
	ctx := context.Background()
	stores := benchStores(b)
	for _, name := range []string{"memory", "sqlite", "postgres"} {
		clock := paykit.NewManualClock(time.Date(2026, 6, 1, 8, 0, 0, 0, time.UTC))
		prov := newFakeProvider()
		svc, err := paykit.New(paykit.Config{
			Store: stores[name], Now: clock.Now, Logger: slog.New(slog.DiscardHandler), Routing: fakeRouting, PublicURL: "https://pay.example/",
			Providers: map[string]paykit.Provider{"fake": prov}, SigningKey: benchSigningKey, AccountKeys: keyring.Random(),
		})
		if err != nil {
			b.Fatal(err)
		}
		p := paykit.Principal{Scope: paykit.Scope{MerchantID: "mch_bench", Environment: paykit.Test}}
		var payments []string
		for i := range 64 {
			ref := fmt.Sprintf("%s-pay-%d", name, i)
			pi, _, err := svc.CreatePaymentIntent(ctx, p, "key-"+ref, fpx(100_000_000_000, ref))
			if err != nil {
				b.Fatal(err)
			}
			prov.approve(pi.ID)
			payments = append(payments, pi.ID)
		}
		clock.Advance(time.Minute)
		for {
			n, err := svc.ProcessDue(ctx)
			if err != nil {
				b.Fatal(err)
			}
			if n == 0 {
				break
			}
		}
		var n atomic.Int64
		create := func(b *testing.B) {
			i := n.Add(1)
			ref := fmt.Sprintf("%s-%d", name, i)
			re, _, err := svc.CreateRefund(ctx, p, "key-"+ref, paykit.CreateRefundRequest{
				PaymentIntent: payments[int(i)%len(payments)], MerchantReference: ref, Amount: 1000})
			if err != nil || re.Status != paykit.RefundPending {
				b.Errorf("refund: %v", err)
			}
		}
		b.Run(name+"/serial", func(b *testing.B) {
			for b.Loop() {
				create(b)
			}
		})
		b.Run(name+"/parallel", func(b *testing.B) {
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					create(b)
				}
			})
		})
	}
}
