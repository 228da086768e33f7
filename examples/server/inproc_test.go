package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/provider/sandbox"
)

// TestInProcessFailuresReadAsOverTCP: through the in-process transport the
// sandbox adapter classifies a PSP that answers, holds the request past
// the timeout, drops the connection, or is gone as it would over TCP.
func TestInProcessFailuresReadAsOverTCP(t *testing.T) {
	psp := sandbox.NewPSP(sandbox.PSPConfig{BaseURL: "http://psp.invalid", APIKey: "in-process-key", Delay: -1})
	hold := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
	drop := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { panic(http.ErrAbortHandler) })
	req := paykit.PaymentRequest{
		Key: "pi_inproc1", Amount: 15000, Currency: "MYR", Country: "MY", Method: "FPX",
		Options:  map[string]string{"bank": "MBB0228"},
		Customer: map[string]string{"name": "Aisyah", "email": "aisyah@example.com"}, ReturnURL: "https://pay.example/return",
	}
	for _, c := range []struct {
		name    string
		handler http.Handler
		closed  bool
		want    paykit.Outcome
		detail  string
	}{
		{"answered", psp, false, paykit.OutcomeRequiresAction, ""},
		{"held past the timeout", hold, false, paykit.OutcomeUnknown, "sent, no answer within"},
		{"connection dropped", drop, false, paykit.OutcomeUnacknowledged, "sent, connection ended before an answer"},
		{"server stopped", psp, true, paykit.OutcomeUnacknowledged, "not sent"},
	} {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			tr := &inProcess{h: c.handler}
			if c.closed {
				tr.close()
			}
			p := sandbox.New(sandbox.Config{BaseURL: "http://in-process", APIKey: "in-process-key", Client: tr.client(), Timeout: 200 * time.Millisecond})
			r := p.CreatePayment(context.Background(), req)
			is.Equal(r.Outcome, c.want)
			is.True(strings.HasPrefix(r.Detail, c.detail)) // the detail says how far the call got
		})
	}
}

// TestStripPrefixAsNetHTTP: the in-process transport strips its prefix
// as http.StripPrefix does.
func TestStripPrefixAsNetHTTP(t *testing.T) {
	for _, raw := range []string{"/sandbox/api/payments", "/sandbox", "/sandbox/", "/sandboxes/x", "/other/api",
		"/sandbox/api/payments/k%2Fey", "/sandbo%78/api", "/%73andbox/api", "/sandbox/api?x=1"} {
		u, err := url.Parse("http://127.0.0.1" + raw)
		if err != nil {
			t.Fatal(err)
		}
		var want *url.URL
		http.StripPrefix("/sandbox", http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { want = r.URL })).
			ServeHTTP(httptest.NewRecorder(), &http.Request{URL: u})
		got := *u
		ok := stripPrefix("/sandbox", &got)
		if ok != (want != nil) || ok && (got.Path != want.Path || got.RawPath != want.RawPath) {
			t.Errorf("%s: stripped %v to %q %q; http.StripPrefix: %+v", raw, ok, got.Path, got.RawPath, want)
		}
	}
}
