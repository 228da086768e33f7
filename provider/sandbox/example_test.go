package sandbox_test

import (
	"context"
	"fmt"
	"net/http/httptest"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/provider/sandbox"
	"github.com/paykit/paykit/store/memory"
)

// Example runs the sandbox PSP on a test HTTP server, points the adapter
// at it, and plugs both into a paykit Service with the sandbox routes.
func Example() {
	// The PSP needs its external URL for its payer pages, so take the
	// listener's address before starting.
	srv := httptest.NewUnstartedServer(nil)
	psp := sandbox.NewPSP(sandbox.PSPConfig{BaseURL: "http://" + srv.Listener.Addr().String(), APIKey: "psp-secret"})
	srv.Config.Handler = psp
	srv.Start()
	defer srv.Close()

	adapter := sandbox.New(sandbox.Config{BaseURL: srv.URL, APIKey: "psp-secret"})
	svc, err := paykit.New(paykit.Config{
		Store:     memory.New(),
		Routing:   sandbox.DefaultRouting(),
		Providers: map[string]paykit.Provider{sandbox.Name: adapter},
		PublicURL: "https://pay.example",
	})
	if err != nil {
		panic(err)
	}

	ctx := context.Background()
	m, _ := svc.CreateMerchant(ctx, "ops", "Kedai Kopi")
	key, _ := svc.CreateAPIKey(ctx, "ops", m.ID, paykit.Test)
	p, _ := svc.Authenticate(ctx, key.PublicKey, key.SecretKey)

	pi, answer, err := svc.CreatePaymentIntent(ctx, p, "create-order-1", paykit.CreatePaymentIntentRequest{
		Amount: 15000, Currency: "MYR", Country: "MY", MerchantReference: "order-1",
		PaymentMethod: "TNG", Customer: map[string]string{"name": "Aisyah"},
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(answer.Kind, pi.Status, pi.NextAction.Type)

	// Act as the payer on the PSP's page (the merchant API's test helper).
	paid, err := svc.SimulatePayer(ctx, p, pi.ID, true)
	if err != nil {
		panic(err)
	}
	fmt.Println(paid.Status, psp.PaymentCount())
	// Output:
	// created requires_action redirect_to_url
	// succeeded 1
}
