package stripe_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"
	"github.com/paykit/paykit"
	"github.com/paykit/paykit/provider/stripe"
)

// calls runs every adapter call once against p and returns their results.
func calls(p *stripe.Provider) map[string]paykit.Result {
	ctx := context.Background()
	return map[string]paykit.Result{
		"create":            p.CreatePayment(ctx, request("flt", "FPX", "MY", "MYR", 5000)),
		"create card":       p.CreatePayment(ctx, request("fltc", "CARD", "MY", "MYR", 5000)),
		"inquire by id":     p.InquirePayment(ctx, paykit.AttemptRef{Key: "flt", Reference: "pi_123"}),
		"inquire by key":    p.InquirePayment(ctx, paykit.AttemptRef{Key: "flt"}),
		"inquire session":   p.InquirePayment(ctx, paykit.AttemptRef{Key: "flt", Reference: "cs_test_1"}),
		"cancel":            p.CancelPayment(ctx, paykit.AttemptRef{Key: "flt", Reference: "pi_123"}),
		"cancel session":    p.CancelPayment(ctx, paykit.AttemptRef{Key: "flt", Reference: "cs_test_1"}),
		"refund":            p.CreateRefund(ctx, paykit.RefundRequest{Key: "rf", PaymentRef: "pi_123", Amount: 100, Currency: "MYR"}),
		"inquire refund":    p.InquireRefund(ctx, paykit.AttemptRef{Key: "rf", Reference: "re_123"}),
		"refund by key":     p.InquireRefund(ctx, paykit.AttemptRef{Key: "rf"}),
		"refund of session": p.CreateRefund(ctx, paykit.RefundRequest{Key: "rf", PaymentRef: "cs_test_1", Amount: 100, Currency: "MYR"}),
	}
}

// Faults over real HTTP never end an attempt as failed (or not found):
// timeouts after sending are Unknown; resets, 5xx and 429 Unacknowledged
// (429 keeps Retry-After in Detail); bodies that are not Stripe's Unknown.
func TestFaultsNeverFail(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		handler http.HandlerFunc
		want    paykit.Outcome
		detail  string
	}{
		{"timeout after sending", nil, paykit.OutcomeUnknown, "timeout"}, // held
		{"connection reset", func(w http.ResponseWriter, r *http.Request) {
			conn, _, err := http.NewResponseController(w).Hijack()
			if err == nil {
				_ = conn.Close()
			}
		}, paykit.OutcomeUnacknowledged, ""},
		{"500 api_error", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(500)
			_, _ = w.Write([]byte(`{"error":{"type":"api_error","message":"Something went wrong"}}`))
		}, paykit.OutcomeUnacknowledged, "api_error"},
		{"502 from a proxy", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(502)
			_, _ = w.Write([]byte("<html>bad gateway</html>"))
		}, paykit.OutcomeUnacknowledged, "HTTP 502"},
		{"429 with Retry-After", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", "7")
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(429)
			_, _ = w.Write([]byte(`{"error":{"type":"invalid_request_error","code":"rate_limit","message":"Too many requests"}}`))
		}, paykit.OutcomeUnacknowledged, "Retry-After 7"},
		{"malformed JSON 200", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"id":"pi_1","object":"payment_in`))
		}, paykit.OutcomeUnknown, "not Stripe's JSON"},
		{"JSON of something else", func(w http.ResponseWriter, r *http.Request) {
			_, _ = w.Write([]byte(`{"ok":true}`))
		}, paykit.OutcomeUnknown, "not"},
		{"404 not Stripe's", func(w http.ResponseWriter, r *http.Request) { http.NotFound(w, r) }, paykit.OutcomeUnknown, "not a Stripe error"},
		{"302 from a proxy", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "/login", http.StatusFound)
		}, paykit.OutcomeUnknown, "unexpected status"},
		{"409 idempotency conflict", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(409)
			_, _ = w.Write([]byte(`{"error":{"type":"idempotency_error","message":"There is currently another in-progress request using this Idempotent Key"}}`))
		}, paykit.OutcomeUnknown, "idempotency_error"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			stop := make(chan struct{}) // ends held requests
			h := c.handler
			if h == nil {
				h = func(w http.ResponseWriter, r *http.Request) {
					select {
					case <-r.Context().Done():
					case <-stop:
					}
				}
			}
			srv := httptest.NewServer(h)
			t.Cleanup(srv.Close)
			t.Cleanup(func() { close(stop) }) // runs first
			// Only a held request needs the short timeout; the other
			// faults answer at once, and a loaded machine must not turn
			// them into timeouts.
			timeout := 5 * time.Second
			if c.handler == nil {
				timeout = testTimeout
			}
			within := func(cfg *stripe.Config) { cfg.Timeout = timeout }
			for name, r := range calls(newAdapter(t, srv.URL, within)) {
				// A refund of a card payment reads its Checkout Session
				// first: when that fails, no refund was sent.
				if name == "refund of session" && r.Outcome == paykit.OutcomeUnacknowledged {
					continue
				}
				if r.Outcome != c.want {
					t.Errorf("%s: outcome %s (%s), want %s", name, r.Outcome, r.Detail, c.want)
				}
				is.Equal(r.FailureCode, "")
				is.True(strings.Contains(r.Detail, c.detail))
			}
		})
	}
}

// A refused connection is Unacknowledged.
func TestRefusedConnection(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	for name, r := range calls(newAdapter(t, url)) {
		if r.Outcome != paykit.OutcomeUnacknowledged {
			t.Errorf("%s: outcome %s (%s), want unacknowledged", name, r.Outcome, r.Detail)
		}
	}
}

// Stripe's own 404 resource_missing is NotFound on reads and cancels.
func TestResourceMissingIsNotFound(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(404)
		_, _ = w.Write([]byte(`{"error":{"type":"invalid_request_error","code":"resource_missing","param":"intent","message":"No such payment_intent: 'pi_123'"}}`))
	}))
	defer srv.Close()
	p := newAdapter(t, srv.URL)
	ctx := context.Background()
	is.Equal(p.InquirePayment(ctx, paykit.AttemptRef{Key: "k", Reference: "pi_123"}).Outcome, paykit.OutcomeNotFound)
	is.Equal(p.CancelPayment(ctx, paykit.AttemptRef{Key: "k", Reference: "pi_123"}).Outcome, paykit.OutcomeNotFound)
	is.Equal(p.InquireRefund(ctx, paykit.AttemptRef{Key: "k", Reference: "re_123"}).Outcome, paykit.OutcomeNotFound)
}

// The Idempotency-Key header is the attempt's Key (hashed past 255
// characters), and metadata[paykit_key] carries the Key itself.
func TestIdempotencyKeyHeader(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	var got []string
	var meta []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.Header.Get("Idempotency-Key"))
		_ = r.ParseForm()
		meta = append(meta, r.PostForm.Get("metadata[paykit_key]"))
		w.WriteHeader(500)
	}))
	defer srv.Close()
	p := newAdapter(t, srv.URL)
	long := strings.Repeat("k", 300)
	p.CreatePayment(context.Background(), request("short-key", "FPX", "MY", "MYR", 5000))
	p.CreatePayment(context.Background(), request(long, "FPX", "MY", "MYR", 5000))
	is.Equal(got[0], "short-key")
	is.True(len(got[1]) <= 255 && strings.HasPrefix(got[1], "paykit-"))
	is.Equal(meta[0], "short-key")
	is.Equal(meta[1], long)
}
