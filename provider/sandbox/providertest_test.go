package sandbox_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/provider/providertest"
	"github.com/paykit/paykit/provider/sandbox"
)

// The sandbox adapter passes the Provider conformance suite against the
// sandbox PSP, which settles at once and keeps real time; the suite
// settles the funds of its merchant through the adapter's SettleNow.
func TestProviderConformance(t *testing.T) {
	psp := sandbox.NewPSP(sandbox.PSPConfig{BaseURL: "http://psp.invalid", APIKey: testAPIKey, Delay: -1, Hold: 5 * time.Second})
	declined := paykit.PaymentRequest{
		Amount: 10901, Currency: "MYR", Country: "MY", Method: "TNG", // ends in 901: declined
		Customer: map[string]string{"name": "Aisyah Rahman", "email": "aisyah@example.com"},
	}
	failed := payout("", "000111111116") // a closed account
	providertest.Run(t, providertest.Harness{
		Fake: psp,
		New: func(baseURL string) paykit.Provider {
			return sandbox.New(sandbox.Config{BaseURL: baseURL, APIKey: testAPIKey, Timeout: testTimeout})
		},
		Payment: paykit.PaymentRequest{
			Currency: "MYR", Country: "MY", Method: "TNG",
			Customer:  map[string]string{"name": "Aisyah Rahman", "email": "aisyah@example.com"},
			ReturnURL: "https://pay.example/pay/return/t",
			Merchant:  "mch_conformance",
		},
		Payout:       payout("", "123456789012"),
		Amounts:      []int64{1, 12345, 1<<53 + 1, 1<<62 + 7},
		Declined:     &declined,
		FailedPayout: &failed,
		// 1<<62+7 ends in 911, a declined refund: the last amount differs.
		RefundAmounts:  []int64{1, 12345, 1<<53 + 1, 1<<62 + 10},
		DeclinedRefund: 20911,
		Received: func(key string) (int64, string, bool) {
			for _, p := range psp.Payments() {
				if p.Key == key {
					return p.AmountMinor, p.Ccy, true
				}
			}
			for _, tr := range psp.Transfers() {
				if tr.Key == key {
					return tr.AmountMinor, tr.Ccy, true
				}
			}
			for _, rf := range psp.Refunds() {
				if rf.Key == key {
					return rf.AmountMinor, rf.Ccy, true
				}
			}
			return 0, "", false
		},
		Callback: func(key string) *http.Request {
			// The PSP's callback about the attempt, signed as it signs them.
			body := fmt.Sprintf(`{"id":"evt_%s","kind":"payment","key":%q,"state":"SUCCESS"}`, key, key)
			r := httptest.NewRequest(http.MethodPost, "/providers/sandbox/webhooks", strings.NewReader(body))
			r.Header.Set("Content-Type", "application/json")
			m := hmac.New(sha256.New, []byte(testAPIKey))
			m.Write([]byte(body))
			r.Header.Set(sandbox.SignatureHeader, hex.EncodeToString(m.Sum(nil)))
			return r
		},
		RefundCallback: func(key string) *http.Request {
			body := fmt.Sprintf(`{"id":"evt_%s","kind":"refund","key":%q,"state":"SUCCESS"}`, key, key)
			r := httptest.NewRequest(http.MethodPost, "/providers/sandbox/webhooks", strings.NewReader(body))
			r.Header.Set("Content-Type", "application/json")
			m := hmac.New(sha256.New, []byte(testAPIKey))
			m.Write([]byte(body))
			r.Header.Set(sandbox.SignatureHeader, hex.EncodeToString(m.Sum(nil)))
			return r
		},
	})
}
