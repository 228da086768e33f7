package httpadapter_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/httpadapter"
	"github.com/paykit/paykit/internal/enums"
	"github.com/paykit/paykit/paykittest"
)

// BenchmarkDashboardPages serves each dashboard page, signed in, from a
// SQLite Store holding 10,000 payment intents (each with an event) of one
// merchant, 100 payouts waiting for approval and a webhook endpoint with
// attempts. Every page must answer in well under 100 ms (ns/op).
func BenchmarkDashboardPages(b *testing.B) {
	ctx := context.Background()
	pk := paykittest.New(b, paykittest.WithStore(paykittest.SQLite))
	svc, store := pk.Service, pk.Store
	m, err := svc.CreateMerchant(ctx, "bench", "Kedai Bench")
	if err != nil {
		b.Fatal(err)
	}
	scope := paykit.Scope{MerchantID: m.ID, Environment: paykit.Test}
	now := svc.Now()
	statuses := enums.PaymentStatuses
	var lastPI string
	err = store.InTx(ctx, func(tx paykit.Tx) error {
		for i := range 10_000 {
			at := now.Add(-time.Duration(i) * 7 * time.Second)
			st := paykit.PaymentStatus(statuses[i%len(statuses)])
			pi := &paykit.PaymentIntent{ID: fmt.Sprintf("pi_bench%06d", i), MerchantID: m.ID, Environment: paykit.Test, Status: st,
				Amount: int64(1000 + i), Currency: "MYR", Country: "MY", MerchantReference: fmt.Sprintf("order-%06d", i),
				PaymentMethod: "FPX", ProviderAttempt: paykit.ProviderAttempt{Provider: "sandbox"}, ExpiresAt: at.Add(time.Hour), CreatedAt: at, UpdatedAt: at, Version: 1}
			if err := tx.CreatePaymentIntent(ctx, pi); err != nil {
				return err
			}
			snap := *pi
			if err := tx.CreateEvent(ctx, &paykit.Event{ID: fmt.Sprintf("evt_bench%06d", i), MerchantID: m.ID, Environment: paykit.Test,
				Type: "payment_intent." + string(st), ObjectID: pi.ID, Resource: &snap, CreatedAt: at}); err != nil {
				return err
			}
			if i == 5_000 {
				lastPI = pi.ID
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := svc.AdjustBalance(ctx, "bench", m.ID, paykit.BalanceAdjustmentRequest{Environment: paykit.Test, Currency: "THB",
		Amount: 1_000_000_000, Reason: "float"}); err != nil {
		b.Fatal(err)
	}
	var payout string
	for i := range 30 {
		po, _, err := svc.CreatePayoutIntent(ctx, paykit.Principal{Scope: scope}, fmt.Sprintf("po-%d", i), paykit.CreatePayoutIntentRequest{
			Amount: 50_000, Currency: "THB", Country: "TH", MerchantReference: fmt.Sprintf("po-%d", i),
			Recipient: paykit.Recipient{Type: "bank_account", AccountNumber: "123456789012", BankCode: "KBANK", HolderName: "Somchai Jaidee", HolderNameTH: "สมชาย ใจดี"},
		})
		if err != nil {
			b.Fatal(err)
		}
		payout = po.ID
	}
	ep, err := svc.CreateWebhookEndpoint(ctx, "bench", m.ID, paykit.CreateWebhookEndpointRequest{Environment: "test", URL: "http://127.0.0.1:9/hooks"})
	if err != nil {
		b.Fatal(err)
	}

	h := httpadapter.NewDashboard(svc, httpadapter.DashboardOptions{Tokens: map[string]string{"alice": dashToken},
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	srv := httptest.NewServer(http.StripPrefix("/dashboard", h))
	b.Cleanup(srv.Close)
	cookie := benchSignIn(b, srv.URL+"/dashboard")
	sc := "?merchant=" + m.ID + "&env=test"
	pages := []struct{ name, path string }{
		{"overview", "/" + sc},
		{"payment_intents", "/payment_intents" + sc},
		{"payment_intents_filtered", "/payment_intents" + sc + "&status=succeeded&currency=MYR"},
		{"payment_intent", "/payment_intents/" + lastPI + sc},
		{"checkouts", "/checkouts" + sc},
		{"payouts", "/payouts" + sc},
		{"payout", "/payouts/" + payout + sc},
		{"refunds", "/refunds" + sc},
		{"approvals", "/approvals"},
		{"merchants", "/merchants"},
		{"merchant", "/merchants/" + m.ID},
		{"webhook_endpoint", "/webhook_endpoints/" + ep.Endpoint.ID},
		{"jobs", "/jobs?state="},
		{"audit", "/audit"},
	}
	client := srv.Client()
	for _, p := range pages {
		b.Run(p.name, func(b *testing.B) {
			for b.Loop() {
				req, _ := http.NewRequest("GET", srv.URL+"/dashboard"+p.path, nil)
				req.AddCookie(cookie)
				resp, err := client.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					b.Fatalf("%s: %d", p.path, resp.StatusCode)
				}
			}
		})
	}
}

// benchSignIn signs in and returns the session cookie.
func benchSignIn(b *testing.B, base string) *http.Cookie {
	b.Helper()
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Get(base + "/signin")
	if err != nil {
		b.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	m := csrfField.FindSubmatch(body)
	if m == nil {
		b.Fatal("no CSRF field")
	}
	req, _ := http.NewRequest("POST", base+"/signin", nil)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	form := url.Values{"csrf": {string(m[1])}, "token": {dashToken}}
	req.Body = io.NopCloser(strings.NewReader(form.Encode()))
	for _, c := range resp.Cookies() {
		req.AddCookie(c)
	}
	resp, err = client.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	resp.Body.Close()
	for _, c := range resp.Cookies() {
		if c.Name == "paykit_dashboard" {
			return c
		}
	}
	b.Fatalf("sign-in: %d, no session cookie", resp.StatusCode)
	return nil
}
