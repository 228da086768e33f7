package sandbox_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/paykittest"
	"github.com/paykit/paykit/provider/sandbox"
)

const (
	testAPIKey  = "psp-test-secret"
	testDelay   = 2 * time.Second
	testTimeout = 300 * time.Millisecond
)

// env is a PSP on a real HTTP server (mounted under /sandbox, as the
// example server does) and an adapter talking to it.
type env struct {
	psp   *sandbox.PSP
	srv   *httptest.Server
	prov  *sandbox.Provider
	clock *paykit.ManualClock
	base  string // the PSP's base URL, http://host:port/sandbox
}

func newEnv(t *testing.T) *env {
	t.Helper()
	return newEnvOn(t, stateDB{}, newClock(), testAPIKey, "")
}

// newEnvOn is newEnv with the PSP's state on db (the zero stateDB:
// memory), the given clock, an API key of its own, and callbacks to
// callbackURL when set. The PSP and adapter are a paykittest Env's.
func newEnvOn(t *testing.T, db stateDB, clock *paykit.ManualClock, apiKey, callbackURL string) *env {
	t.Helper()
	pe := paykittest.New(t,
		paykittest.WithPSPConfig(func(c *sandbox.PSPConfig) {
			c.APIKey, c.Delay, c.Now, c.CallbackURL, c.State = apiKey, testDelay, clock.Now, callbackURL, db.state(t)
		}),
		paykittest.WithProviderConfig(func(c *sandbox.Config) { c.Timeout = testTimeout }),
	)
	return &env{psp: pe.PSP, srv: pe.Server, prov: pe.Provider, clock: clock, base: pe.PSPURL}
}

func newClock() *paykit.ManualClock { return paykit.NewManualClock(paykittest.Start) }

var currency = map[string]string{"MY": "MYR", "TH": "THB"}

// payment is a create request of method in country, expiring in 30 min.
func (e *env) payment(key, method, country string, amount int64) paykit.PaymentRequest {
	return paykit.PaymentRequest{
		Key: key, Amount: amount, Currency: currency[country], Country: country, Method: method,
		Customer:  map[string]string{"name": "Aisyah Rahman", "email": "aisyah@example.com", "phone": "+60123456789"},
		Options:   map[string]string{},
		ReturnURL: "https://shop.example/return?order=1",
		ExpiresAt: e.clock.Now().Add(30 * time.Minute),
	}
}

// payout is a TH payout to KBANK of the account.
func payout(key, account string) paykit.PayoutRequest {
	return paykit.PayoutRequest{
		Key: key, Amount: 250000, Currency: "THB", Country: "TH", BankCode: "TH-004",
		AccountNumber: account, HolderName: "Somchai Jaidee", HolderNameTH: "สมชาย ใจดี",
	}
}

// noRedirects is a client that shows redirects instead of following them.
var noRedirects = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// raw calls the PSP's API directly (with the API key) and returns the
// answer's status and body.
func (e *env) raw(t *testing.T, method, path, idemKey, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, e.base+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+testAPIKey)
	if idemKey != "" {
		req.Header.Set("Idempotency-Key", idemKey)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}
