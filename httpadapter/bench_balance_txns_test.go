package httpadapter_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/httpadapter"
	"github.com/paykit/paykit/keyring"
	"github.com/paykit/paykit/paykittest"
	"github.com/paykit/paykit/store/sqlstore"
)

// BenchmarkGetBalanceTransactionsPostgres measures GET
// /v1/balance_transactions over HTTP on PostgreSQL when the merchant has
// 1 k and 1 M balance transactions: the first page, a page of one type and
// one source, and the next page by its cursor; it reports each one's
// median (p50-ms). The keyset indexes keep the sizes alike. The two sizes
// run one after the other per query, so that load on the machine weighs on
// both alike.
func BenchmarkGetBalanceTransactionsPostgres(b *testing.B) {
	ctx := context.Background()
	sizes := []int{1_000, 1_000_000}
	type server struct {
		url, pk, sk, next string
	}
	servers := make([]server, len(sizes))
	for i, n := range sizes {
		store, err := sqlstore.Open(ctx, paykittest.MigratedDSN(b, paykittest.Postgres))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = store.Close() })
		svc, err := paykit.New(paykit.Config{Store: store, Logger: slog.New(slog.DiscardHandler),
			SigningKey: []byte("bench-signing-key-of-32-bytes!!!"), AccountKeys: keyring.Random()})
		if err != nil {
			b.Fatal(err)
		}
		m, err := svc.CreateMerchant(ctx, "ops:bench", "Bench")
		if err != nil {
			b.Fatal(err)
		}
		key, err := svc.CreateAPIKey(ctx, "ops:bench", m.ID, paykit.Test)
		if err != nil {
			b.Fatal(err)
		}
		// n transactions of the merchant, one in ten a refund, beside as
		// many of nine other merchants.
		_, err = store.DB().ExecContext(ctx, `INSERT INTO paykit_balance_transactions (id, merchant_id, environment, type,
			source, amount, fee, net, currency, status, available_on, created_at, updated_at, version)
			SELECT 'txn_' || lpad(i::text, 9, '0'), CASE WHEN i % 10 = 0 THEN ? ELSE 'mch_other' || (i % 10) END, 'test',
			CASE WHEN i % 100 = 50 THEN 'refund' ELSE 'payment' END, 'pi_' || i, 10000, 290, 9710, 'MYR', 'available', t, t, t, 0
			FROM generate_series(1, ?) AS i, LATERAL (SELECT TIMESTAMPTZ '2026-01-01 00:00:00+00' + i * INTERVAL '1 millisecond' AS t) x`,
			m.ID, 10*n)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := store.DB().ExecContext(ctx, "VACUUM ANALYZE paykit_balance_transactions"); err != nil {
			b.Fatal(err)
		}
		srv := httptest.NewServer(http.StripPrefix("/v1", httpadapter.NewMerchantAPI(svc, httpadapter.Options{Logger: slog.New(slog.DiscardHandler)})))
		b.Cleanup(srv.Close)
		servers[i] = server{url: srv.URL + "/v1/balance_transactions", pk: key.PublicKey, sk: key.SecretKey}
		first, err := svc.ListBalanceTransactions(ctx, paykit.Principal{Scope: paykit.Scope{MerchantID: m.ID, Environment: paykit.Test}},
			paykit.BalanceTransactionListParams{})
		if err != nil || first.NextCursor == "" {
			b.Fatalf("first page: %v", err)
		}
		servers[i].next = first.NextCursor
	}
	get := func(b *testing.B, s server, query string) {
		req, _ := http.NewRequest(http.MethodGet, s.url+query, nil)
		req.SetBasicAuth(s.pk, s.sk)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("GET %s: %d", query, resp.StatusCode)
		}
	}
	for _, q := range []struct{ name, query string }{
		{"first", ""},
		{"type", "?type=refund"},
		{"source", "?source=pi_5000"},
		{"next", "?cursor="},
	} {
		for i, n := range sizes {
			s := servers[i]
			query := q.query
			if q.name == "next" {
				query += s.next
			}
			b.Run(fmt.Sprintf("%s/rows=%d", q.name, n), func(b *testing.B) {
				var took []time.Duration
				for b.Loop() {
					start := time.Now()
					get(b, s, query)
					took = append(took, time.Since(start))
				}
				slices.Sort(took)
				b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "p50-ms")
			})
		}
	}
}
