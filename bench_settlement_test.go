package paykit_test

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/keyring"
	"github.com/paykit/paykit/paykittest"
)

// settlementBenchLines and settlementBenchBatch are how many settlement
// lines one run of BenchmarkSettlementIngestion reads, and how many lines
// each batch holds.
const (
	settlementBenchLines = 100_000
	settlementBenchBatch = 1_000
)

// reportingProvider is the fake Provider with settlement reports: its
// batches are whatever the benchmark appended, read in order.
type reportingProvider struct {
	*fakeProvider
	mu      sync.Mutex
	batches []paykit.SettlementBatch
}

func (p *reportingProvider) Capabilities() paykit.Capabilities {
	return p.fakeProvider.Capabilities() | paykit.CapSettlement | paykit.CapSettlementSimulation
}

// SettlementBatches returns at most limit batches after the one named after.
func (p *reportingProvider) SettlementBatches(_ context.Context, after string, limit int) ([]paykit.SettlementBatch, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	from := 0
	if after != "" {
		i := slices.IndexFunc(p.batches, func(b paykit.SettlementBatch) bool { return b.Reference == after })
		if i < 0 {
			return nil, fmt.Errorf("no batch %s", after)
		}
		from = i + 1
	}
	return slices.Clone(p.batches[from:min(from+limit, len(p.batches))]), nil
}

// SettleNow closes nothing: the benchmark appends the batches itself.
func (p *reportingProvider) SettleNow(context.Context, string) ([]paykit.SettlementBatch, error) {
	return nil, nil
}

// seedSettledDay stores n succeeded MYR payment intents of provider in
// scope, each with its fee, its pending payment balance transaction and
// its net on the pending balance (one ledger transaction per chunk), and
// returns the batches a Provider settles them in, every line matching.
func seedSettledDay(b *testing.B, store paykit.Store, scope paykit.Scope, provider, tag string, n int, at time.Time) []paykit.SettlementBatch {
	b.Helper()
	ctx := context.Background()
	var batches []paykit.SettlementBatch
	for start := 0; start < n; start += settlementBenchBatch {
		batch := paykit.SettlementBatch{Reference: fmt.Sprintf("batch_%s_%06d", tag, start), Currency: "MYR", SettledAt: at}
		var gross, fees int64
		err := store.InTx(ctx, func(tx paykit.Tx) error {
			batch.Lines, gross, fees = batch.Lines[:0], 0, 0
			for i := start; i < min(start+settlementBenchBatch, n); i++ {
				amount := int64(1000 + i%50_000)
				fee := (amount*29 + 500) / 1000
				id := fmt.Sprintf("pi_%s%07d", tag, i)
				ref := fmt.Sprintf("psp_%s%07d", tag, i)
				done := at
				pi := &paykit.PaymentIntent{ID: id, MerchantID: scope.MerchantID, Environment: scope.Environment,
					Status: paykit.PaymentSucceeded, Amount: amount, Currency: "MYR", Country: "MY", MerchantReference: "order-" + id,
					PaymentMethod: "FPX", Customer: map[string]string{"name": "Aisyah"},
					ProviderAttempt: paykit.ProviderAttempt{Provider: provider, ProviderRef: ref, Attempt: paykit.AttemptClosed},
					Fee:             fee, ExpiresAt: at.Add(time.Hour), CompletedAt: &done, CreatedAt: at, UpdatedAt: at}
				if err := tx.CreatePaymentIntent(ctx, pi); err != nil {
					return err
				}
				if err := tx.CreateBalanceTransaction(ctx, &paykit.BalanceTransaction{ID: "txn_" + id, MerchantID: scope.MerchantID,
					Environment: scope.Environment, Type: paykit.BalanceTxnPayment, Source: id, Amount: amount, Fee: fee, Net: amount - fee,
					Currency: "MYR", Status: paykit.BalanceTxnPending, AvailableOn: at, CreatedAt: at, UpdatedAt: at}); err != nil {
					return err
				}
				gross, fees = gross+amount, fees+fee
				batch.Lines = append(batch.Lines, paykit.SettlementLine{Type: "payment", Reference: ref, Amount: amount, Fee: fee, Currency: "MYR"})
			}
			return tx.PostLedger(ctx, &paykit.LedgerTxn{ID: "ltx_" + batch.Reference, Scope: scope, Currency: "MYR", Kind: "payment.succeeded",
				RefID: batch.Reference, At: at, Postings: []paykit.Posting{
					{Account: paykit.AccountPayments, Amount: -gross}, {Account: paykit.AccountPending, Amount: gross - fees},
					{Account: paykit.AccountFees, Amount: fees}}})
		})
		if err != nil {
			b.Fatalf("seed: %v", err)
		}
		batch.Gross, batch.Fee, batch.Net = gross, fees, gross-fees
		batches = append(batches, batch)
	}
	return batches
}

// BenchmarkSettlementIngestion measures reading and matching 100,000
// settlement lines (100 batches of 1,000) of one merchant's succeeded
// payments on each SQL Store through the settlement test helper: each
// line is found by its Provider reference and settles its payment
// (pending → available). It reports lines/s and the peak heap in use
// while reading; seeding the payments is not timed. One iteration takes
// long: run it with -benchtime 1x.
func BenchmarkSettlementIngestion(b *testing.B) {
	ctx := context.Background()
	for _, name := range []string{"sqlite", "postgres"} {
		b.Run(name, func(b *testing.B) {
			dsn := "sqlite:" + filepath.Join(b.TempDir(), "bench.db")
			if name == "postgres" {
				dsn = paykittest.PostgresDSN(b)
			}
			store := paykittest.OpenSQL(b, dsn)
			prov := &reportingProvider{fakeProvider: newFakeProvider()}
			svc, err := paykit.New(paykit.Config{
				Store: store, Logger: slog.New(slog.DiscardHandler), Routing: fakeRouting, PublicURL: "https://pay.example/",
				Providers: map[string]paykit.Provider{"fake": prov}, SigningKey: benchSigningKey, AccountKeys: keyring.Random(),
			})
			if err != nil {
				b.Fatal(err)
			}
			p := paykit.Principal{Scope: paykit.Scope{MerchantID: "mch_bench", Environment: paykit.Test}}
			var peak uint64
			var seconds float64
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				batches := seedSettledDay(b, store, p.Scope, "fake", fmt.Sprintf("%s%d", name[:2], i), settlementBenchLines, svc.Now())
				prov.mu.Lock()
				prov.batches = append(prov.batches, batches...)
				prov.mu.Unlock()
				runtime.GC()
				stop := sampleHeap(&peak)
				began := time.Now()
				b.StartTimer()

				if _, err := svc.SettleTestFunds(ctx, p); err != nil {
					b.Fatal(err)
				}

				b.StopTimer()
				seconds += time.Since(began).Seconds()
				stop()
				bal, err := store.GetBalance(ctx, p.Scope, "MYR")
				if err != nil || bal.Pending != 0 {
					b.Fatalf("after the read: balance %+v, %v; want nothing pending", bal, err)
				}
				b.StartTimer()
			}
			b.ReportMetric(float64(settlementBenchLines*b.N)/seconds, "lines/s")
			b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
		})
	}
}

// sampleHeap records the largest HeapInuse into peak every 10 ms until
// the returned stop is called.
func sampleHeap(peak *uint64) (stop func()) {
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(10 * time.Millisecond)
		defer t.Stop()
		var m runtime.MemStats
		for {
			runtime.ReadMemStats(&m)
			*peak = max(*peak, m.HeapInuse)
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() { close(done); <-finished }
}
