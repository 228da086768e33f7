package httpadapter_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/paykit/paykit"
)

// holdingProvider is a Provider whose API (a real HTTP server) holds every
// payment request until the caller gives up: a Provider that does not
// answer. entered receives a value when a request arrives.
type holdingProvider struct {
	url     string
	entered chan struct{}
}

func newHoldingProvider(t *testing.T) *holdingProvider {
	p := &holdingProvider{entered: make(chan struct{}, 1)}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.entered <- struct{}{}
		<-r.Context().Done() // held until the caller goes away
	}))
	t.Cleanup(srv.Close)
	p.url = srv.URL
	return p
}

func (p *holdingProvider) Capabilities() paykit.Capabilities {
	return paykit.CapPayments | paykit.CapCancel
}

func (p *holdingProvider) CreatePayment(ctx context.Context, _ paykit.PaymentRequest) paykit.Result {
	req, err := http.NewRequestWithContext(ctx, "POST", p.url+"/payments", nil)
	if err != nil {
		return paykit.Result{Outcome: paykit.OutcomeUnacknowledged, Detail: err.Error()}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return paykit.Result{Outcome: paykit.OutcomeUnknown, Detail: err.Error()}
	}
	resp.Body.Close()
	return paykit.Result{Outcome: paykit.OutcomePending}
}

func (p *holdingProvider) InquirePayment(context.Context, paykit.AttemptRef) paykit.Result {
	return paykit.Result{Outcome: paykit.OutcomeUnknown}
}

func (p *holdingProvider) CancelPayment(context.Context, paykit.AttemptRef) paykit.Result {
	return paykit.Result{Outcome: paykit.OutcomeUnknown}
}

func (p *holdingProvider) ParseCallback(context.Context, *http.Request) ([]paykit.CallbackEvent, error) {
	return nil, errors.New("holding provider: no callbacks")
}

// A client that goes away while its request waits for a Provider is logged
// as what it is: a warning with status 499 (as nginx logs it) and no error
// code, counted as 499 in the metrics; never an internal error.
func TestClientDisconnectIsNotAnInternalError(t *testing.T) {
	forEachStore(t, func(t *testing.T, open func(t *testing.T) paykit.Store) {
		is := is.New(t)
		prov := newHoldingProvider(t)
		e := newEnv(t, open, envConfig{
			routing: paykit.Routing{Payments: []paykit.PaymentRoute{{
				Environment: paykit.Test, Method: "GRABPAY", Country: "MY", Currency: "MYR", Provider: "holding",
				NextAction: paykit.NextActionRedirectToURL, CustomerFields: []string{"name"},
			}}},
			providers: map[string]paykit.Provider{"holding": prov},
		})
		k := e.merchant(paykit.Test)

		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, "POST", e.srv.URL+"/v1/payment_intents", strings.NewReader(
			`{"amount":"1500","currency":"MYR","country":"MY","merchant_reference":"gone-1","payment_method":"GRABPAY","customer":{"name":"Aisyah"}}`))
		is.NoErr(err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Idempotency-Key", "gone-1")
		basic(k)(req.Header)
		done := make(chan error, 1)
		go func() {
			resp, err := http.DefaultClient.Do(req)
			if err == nil {
				resp.Body.Close()
			}
			done <- err
		}()
		select {
		case <-prov.entered: // the handler waits for the Provider
		case err := <-done:
			t.Fatalf("answered before the Provider was called: %v", err)
		case <-time.After(10 * time.Second):
			t.Fatal("the Provider was never called")
		}
		cancel() // the client goes away
		is.True(errors.Is(<-done, context.Canceled))

		// The handler finishes after the client left: wait for its line.
		var line map[string]any
		for deadline := time.Now().Add(10 * time.Second); line == nil && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			for _, l := range logLines(t, e) {
				if l["msg"] == "http request" && l["route"] == "POST /payment_intents" {
					line = l
				}
			}
		}
		if line == nil {
			t.Fatalf("no access log line; logs:\n%s", e.logs.String())
		}
		is.Equal(line["level"], "WARN")
		is.Equal(line["status"], float64(499))
		is.Equal(line["error"], "client disconnected")
		_, hasCode := line["error_code"]
		is.True(!hasCode)
		for _, l := range logLines(t, e) {
			if l["level"] == "ERROR" {
				t.Errorf("logged as an error: %v", l)
			}
		}
		is.True(!strings.Contains(e.logs.String(), "already been committed or rolled back"))

		count := func(status string) float64 {
			m := metricValue(t, e, "paykit_http_requests_total", map[string]string{"api": "merchant", "route": "POST /payment_intents", "status": status})
			if m == nil {
				return 0
			}
			return m.GetCounter().GetValue()
		}
		is.Equal(count("499"), 1.0)
		is.Equal(count("500"), 0.0)
	})
}
