package httpadapter_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/httpadapter"
	"github.com/paykit/paykit/store/memory"
)

// Example mounts both APIs the way examples/server does: the merchant API
// under /v1, the operator API under /operator, each with http.StripPrefix.
// An operator then creates a merchant and a test key pair, and the merchant
// lists its payment intents.
func Example() {
	svc, err := paykit.New(paykit.Config{Store: memory.New()})
	if err != nil {
		panic(err)
	}
	logger := slog.New(slog.DiscardHandler) // a real host passes its own
	metrics := prometheus.NewRegistry()     // served with promhttp by the host

	mux := http.NewServeMux()
	mux.Handle("/v1/", http.StripPrefix("/v1", httpadapter.NewMerchantAPI(svc, httpadapter.Options{
		Logger: logger, RateLimit: 100, Registerer: metrics,
	})))
	mux.Handle("/operator/", http.StripPrefix("/operator", httpadapter.NewOperatorAPI(svc, httpadapter.OperatorOptions{
		Tokens: map[string]string{"alice": "a-long-random-operator-token"}, Logger: logger, Registerer: metrics,
	})))
	srv := httptest.NewServer(mux) // a real host: http.Server{Addr: ..., Handler: mux}
	defer srv.Close()

	// call sends a request and returns "STATUS BODY", decoding the body
	// into out when given.
	call := func(method, path, body string, auth func(*http.Request), out any) string {
		req, _ := http.NewRequestWithContext(context.Background(), method, srv.URL+path, strings.NewReader(body))
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		auth(req)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			panic(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if out != nil {
			_ = json.Unmarshal(b, out)
		}
		return fmt.Sprintf("%d %s", resp.StatusCode, strings.TrimSpace(string(b)))
	}
	operator := func(r *http.Request) { r.Header.Set("Authorization", "Bearer a-long-random-operator-token") }

	var merchant struct {
		ID string `json:"id"`
	}
	var key struct {
		PublicKey string `json:"public_key"`
		SecretKey string `json:"secret_key"` // shown once
	}
	fmt.Println(call("POST", "/operator/merchants", `{"name":"Kedai Kopi"}`, operator, &merchant)[:3])
	fmt.Println(call("POST", "/operator/merchants/"+merchant.ID+"/api_keys", `{"environment":"test"}`, operator, &key)[:3])

	merchantKey := func(r *http.Request) { r.SetBasicAuth(key.PublicKey, key.SecretKey) }
	fmt.Println(call("GET", "/v1/payment_intents", "", merchantKey, nil))
	fmt.Println(call("GET", "/v1/payment_intents", "", func(*http.Request) {}, nil)[:3])
	// Output:
	// 201
	// 201
	// 200 {"object":"list","data":[],"has_more":false,"next_cursor":null}
	// 401
}
