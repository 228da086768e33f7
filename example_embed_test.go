package paykit_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/httpadapter"
	"github.com/paykit/paykit/store/memory"
)

// Example shows a host application embedding paykit: pick a Store, build
// the Service, mount the merchant and operator APIs and the payer pages,
// run the worker.
func Example() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	svc, err := paykit.New(paykit.Config{Store: memory.New()})
	if err != nil {
		panic(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/v1/", http.StripPrefix("/v1", httpadapter.NewMerchantAPI(svc, httpadapter.Options{})))
	mux.Handle("/pay/", http.StripPrefix("/pay", httpadapter.NewPayHandler(svc, httpadapter.PayOptions{}))) // at Config.PublicURL + "/pay"
	mux.Handle("/operator/", http.StripPrefix("/operator", httpadapter.NewOperatorAPI(svc, httpadapter.OperatorOptions{
		Tokens: map[string]string{"ops": "a-long-random-operator-token"},
	})))
	go func() { _ = svc.Run(ctx) }() // background work stops with ctx

	srv := httptest.NewServer(mux) // a real host would use http.ListenAndServe
	defer srv.Close()

	// A merchant and its test keys, here through the Go API.
	m, _ := svc.CreateMerchant(ctx, "ops", "Kedai Kopi")
	key, _ := svc.CreateAPIKey(ctx, "ops", m.ID, paykit.Test)

	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/v1/payment_intents", nil)
	req.SetBasicAuth(key.PublicKey, key.SecretKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		panic(err)
	}
	resp.Body.Close()
	fmt.Println(resp.StatusCode)
	// Output: 200
}
