package stripe_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"
	"github.com/paykit/paykit"
	"github.com/paykit/paykit/provider/stripe"
)

// stripeMockModule is the stripe-mock release the request shapes are
// checked against: it validates requests against Stripe's OpenAPI spec.
const stripeMockModule = "github.com/stripe/stripe-mock@v0.203.0"

var (
	stripeMockOnce sync.Once
	stripeMockBin  string
	stripeMockErr  error
)

// stripeMock returns the stripe-mock binary, built once per machine into
// the user cache (go install, through the module proxy).
func stripeMock(t *testing.T) string {
	t.Helper()
	if os.Getenv("PAYKIT_SKIP_STRIPE_MOCK") == "1" {
		t.Skip("PAYKIT_SKIP_STRIPE_MOCK=1")
	}
	stripeMockOnce.Do(func() {
		dir, err := os.UserCacheDir()
		if err != nil {
			dir = os.TempDir()
		}
		dir = filepath.Join(dir, "paykit", "stripe-mock-v0.203.0")
		stripeMockBin = filepath.Join(dir, "stripe-mock")
		if _, err := os.Stat(stripeMockBin); err == nil {
			return
		}
		cmd := exec.Command("go", "install", stripeMockModule)
		cmd.Dir = os.TempDir()
		cmd.Env = append(os.Environ(), "GOBIN="+dir, "GOFLAGS=")
		if out, err := cmd.CombinedOutput(); err != nil {
			stripeMockErr = fmt.Errorf("go install %s: %v\n%s", stripeMockModule, err, out)
		}
	})
	if stripeMockErr != nil {
		t.Fatalf("stripe-mock is needed to check the adapter's requests against Stripe's OpenAPI spec "+
			"(set PAYKIT_SKIP_STRIPE_MOCK=1 to skip): %v", stripeMockErr)
	}
	return stripeMockBin
}

// startStripeMock runs stripe-mock on a free port until the test ends and
// returns its base URL.
func startStripeMock(t *testing.T) string {
	bin := stripeMock(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	cmd := exec.Command(bin, "-http-addr", addr)
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting stripe-mock: %v", err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	deadline := time.Now().Add(15 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err == nil {
			_ = c.Close()
			return "http://" + addr
		}
		if time.Now().After(deadline) {
			t.Fatalf("stripe-mock did not listen on %s: %v", addr, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// recorder records the status of every answer.
type recorder struct {
	mu    sync.Mutex
	calls []string
	bad   []string
}

func (rc *recorder) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(r)
	rc.mu.Lock()
	defer rc.mu.Unlock()
	what := r.Method + " " + r.URL.Path
	if r.URL.RawQuery != "" {
		what += "?" + r.URL.RawQuery
	}
	rc.calls = append(rc.calls, what)
	switch {
	case err != nil:
		rc.bad = append(rc.bad, what+": "+err.Error())
	case resp.StatusCode/100 != 2:
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		resp.Body = io.NopCloser(strings.NewReader(string(body)))
		rc.bad = append(rc.bad, fmt.Sprintf("%s: HTTP %d %s", what, resp.StatusCode, body))
	}
	return resp, err
}

func (rc *recorder) take() (calls, bad []string) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	calls, bad = rc.calls, rc.bad
	rc.calls, rc.bad = nil, nil
	return calls, bad
}

// Every request shape the adapter sends validates against Stripe's OpenAPI
// spec in stripe-mock: each call gets a 2xx.
func TestRequestsValidateInStripeMock(t *testing.T) {
	base := startStripeMock(t)
	rc := &recorder{}
	adapter := func(country string) *stripe.Provider {
		p, err := stripe.New(stripe.Config{
			SecretKey: "sk_test_123", WebhookSecrets: []string{"whsec_x"}, BaseURL: base,
			HTTPClient: &http.Client{Transport: rc}, Timeout: 5 * time.Second, AccountCountry: country,
		})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	my, th, sg := adapter("MY"), adapter("TH"), adapter("SG")
	ctx := context.Background()
	email := map[string]string{"name": "Somchai", "email": "somchai@example.com"}
	check := func(name string, call func() paykit.Result, also ...paykit.Outcome) {
		t.Run(name, func(t *testing.T) {
			is := is.New(t)
			r := call()
			calls, bad := rc.take()
			is.True(len(calls) > 0) // the adapter called stripe-mock
			if len(bad) > 0 {
				t.Errorf("stripe-mock refused %s (result %s %q)", strings.Join(bad, "; "), r.Outcome, r.Detail)
			}
			// An answer the adapter understood (a lookup by key of
			// stripe-mock's fixtures, which carry no paykit key, finds
			// nothing: Unknown).
			is.True((!r.Outcome.Uncertain() && r.Outcome != paykit.OutcomeRefused) || slices.Contains(also, r.Outcome))
		})
	}
	pay := func(p *stripe.Provider, method, country, ccy string, opts map[string]string) func() paykit.Result {
		return func() paykit.Result {
			return p.CreatePayment(ctx, paykit.PaymentRequest{
				Key: "mock_" + method, Amount: 12345, Currency: ccy, Country: country, Method: method,
				Customer: email, Options: opts, ReturnURL: "https://pay.example/return",
			})
		}
	}
	check("create FPX", pay(my, "FPX", "MY", "MYR", map[string]string{"bank": "maybank2u"}))
	check("create GRABPAY", pay(my, "GRABPAY", "MY", "MYR", nil))
	check("create ALIPAY", pay(my, "ALIPAY", "MY", "MYR", nil))
	check("create CARD (Checkout Session)", pay(my, "CARD", "MY", "MYR", nil))
	check("create PROMPTPAY", pay(th, "PROMPTPAY", "TH", "THB", nil))
	check("create WECHAT_PAY", pay(sg, "WECHAT_PAY", "SG", "SGD", nil))
	check("inquire PaymentIntent", func() paykit.Result {
		return my.InquirePayment(ctx, paykit.AttemptRef{Key: "k", Reference: "pi_123"})
	})
	check("inquire Checkout Session", func() paykit.Result {
		return my.InquirePayment(ctx, paykit.AttemptRef{Key: "k", Reference: "cs_test_123"})
	})
	check("inquire by key (search)", func() paykit.Result {
		return my.InquirePayment(ctx, paykit.AttemptRef{Key: "mock_FPX"})
	}, paykit.OutcomeUnknown)
	check("cancel PaymentIntent", func() paykit.Result {
		return my.CancelPayment(ctx, paykit.AttemptRef{Key: "k", Reference: "pi_123"})
	})
	check("expire Checkout Session", func() paykit.Result {
		return my.CancelPayment(ctx, paykit.AttemptRef{Key: "k", Reference: "cs_test_123"})
	})
	check("create refund", func() paykit.Result {
		return my.CreateRefund(ctx, paykit.RefundRequest{Key: "rf_mock", PaymentKey: "mock_FPX", PaymentRef: "pi_123", Amount: 100, Currency: "MYR"})
	})
	check("inquire refund", func() paykit.Result {
		return my.InquireRefund(ctx, paykit.AttemptRef{Key: "rf_mock", Reference: "re_123"})
	})
	check("inquire refund by key (list)", func() paykit.Result {
		return my.InquireRefund(ctx, paykit.AttemptRef{Key: "rf_mock"})
	}, paykit.OutcomeUnknown)
	dispute := func(name string, call func() (paykit.ProviderDispute, error)) {
		t.Run(name, func(t *testing.T) {
			is := is.New(t)
			d, err := call()
			calls, bad := rc.take()
			is.True(len(calls) > 0)
			if len(bad) > 0 {
				t.Errorf("stripe-mock refused %s", strings.Join(bad, "; "))
			}
			is.NoErr(err) // stripe-mock's dispute maps to paykit's words
			is.True(d.Status.Valid() && d.Reason.Valid() && d.Amount > 0 && d.Reference != "")
		})
	}
	dispute("inquire dispute", func() (paykit.ProviderDispute, error) { return my.InquireDispute(ctx, "dp_123") })
	dispute("submit dispute evidence", func() (paykit.ProviderDispute, error) {
		return my.SubmitDisputeEvidence(ctx, "dp_123", "The payer received the goods.")
	})
	dispute("accept (close) dispute", func() (paykit.ProviderDispute, error) { return my.AcceptDispute(ctx, "dp_123") })
	for _, after := range []string{"", "po_123"} {
		t.Run("settlement batches after "+after, func(t *testing.T) {
			is := is.New(t)
			batches, err := my.SettlementBatches(ctx, after, 10)
			calls, bad := rc.take()
			is.True(len(calls) > 0)
			if len(bad) > 0 {
				t.Errorf("stripe-mock refused %s", strings.Join(bad, "; "))
			}
			t.Logf("calls %v: %d batches, error %v", calls, len(batches), err)
		})
	}
	// stripe-mock's payouts are in transit: the lines of one, and the
	// Checkout Session of a card payment, are read directly.
	t.Run("balance transactions of a payout", func(t *testing.T) {
		is := is.New(t)
		lines, err := stripe.PayoutLines(my, ctx, "po_123")
		calls, bad := rc.take()
		is.True(len(calls) > 0)
		if len(bad) > 0 {
			t.Errorf("stripe-mock refused %s", strings.Join(bad, "; "))
		}
		t.Logf("calls %v: lines %+v, error %v", calls, lines, err)
	})
	t.Run("Checkout Session of a settled card payment", func(t *testing.T) {
		is := is.New(t)
		ref, err := stripe.CheckoutPaymentRef(my, ctx, "pi_123")
		calls, bad := rc.take()
		is.True(len(calls) > 0)
		if len(bad) > 0 {
			t.Errorf("stripe-mock refused %s", strings.Join(bad, "; "))
		}
		is.NoErr(err)
		is.True(strings.HasPrefix(ref, "cs_"))
	})
}
