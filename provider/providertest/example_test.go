package providertest_test

import (
	"fmt"
	"net/http"
	"time"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/provider/providertest"
	"github.com/paykit/paykit/provider/sandbox"
)

// An adapter's test hands Run a Harness: the fake of its Provider, the
// adapter pointed at a base URL with a short call timeout, requests the
// fake accepts, and hooks that read what the fake received and sign
// callbacks as the Provider does. Inside a test it then calls
// providertest.Run(t, h); provider/sandbox's TestProviderConformance is the
// complete harness.
func Example() {
	psp := sandbox.NewPSP(sandbox.PSPConfig{BaseURL: "http://psp.invalid", APIKey: "secret", Delay: -1})
	h := providertest.Harness{
		Fake: psp,
		New: func(baseURL string) paykit.Provider {
			return sandbox.New(sandbox.Config{BaseURL: baseURL, APIKey: "secret", Timeout: 150 * time.Millisecond})
		},
		Payment: paykit.PaymentRequest{Amount: 1000, Currency: "MYR", Country: "MY", Method: "TNG",
			Customer: map[string]string{"name": "Aisyah", "email": "aisyah@example.com"}},
		Received: func(key string) (int64, string, bool) {
			for _, p := range psp.Payments() {
				if p.Key == key {
					return p.AmountMinor, p.Ccy, true
				}
			}
			return 0, "", false
		},
		Callback: func(key string) *http.Request { return nil /* signed as the PSP signs */ },
	}
	fmt.Println(h.New("http://127.0.0.1:1").Capabilities())
	// Output: payments|cancel|refunds|payouts|payer simulation|returns|disputes|dispute simulation|settlement|settlement simulation
}
