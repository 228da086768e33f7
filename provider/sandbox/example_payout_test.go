package sandbox_test

import (
	"context"
	"fmt"
	"net/http/httptest"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/provider/sandbox"
	"github.com/paykit/paykit/store/memory"
)

// Example_payout funds a merchant's test balance as an operator, pays a
// supplier out through the sandbox, and shows the balance move from
// available to reserved while the transfer is in flight. Payouts of at
// least the ApprovalThreshold would wait in requires_approval for an
// operator (ApprovePayout / RejectPayout).
func Example_payout() {
	srv := httptest.NewUnstartedServer(nil)
	psp := sandbox.NewPSP(sandbox.PSPConfig{BaseURL: "http://" + srv.Listener.Addr().String(), APIKey: "psp-secret"})
	srv.Config.Handler = psp
	srv.Start()
	defer srv.Close()

	svc, err := paykit.New(paykit.Config{
		Store:     memory.New(),
		Routing:   sandbox.DefaultRouting(),
		Providers: map[string]paykit.Provider{sandbox.Name: sandbox.New(sandbox.Config{BaseURL: srv.URL, APIKey: "psp-secret"})},
		// Production hosts load AccountKeys from their secret store; the
		// default is a random key that dies with the process.
		ApprovalThreshold: 1_000_000,
	})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	m, _ := svc.CreateMerchant(ctx, "ops", "Kedai Kopi")
	key, _ := svc.CreateAPIKey(ctx, "ops", m.ID, paykit.Test)
	p, _ := svc.Authenticate(ctx, key.PublicKey, key.SecretKey)
	if _, err := svc.AdjustBalance(ctx, "ops", m.ID, paykit.BalanceAdjustmentRequest{
		Environment: paykit.Test, Currency: "THB", Amount: 500000, Reason: "opening float",
	}); err != nil {
		panic(err)
	}

	po, answer, err := svc.CreatePayoutIntent(ctx, p, "payout-inv-7", paykit.CreatePayoutIntentRequest{
		Amount: 120000, Currency: "THB", Country: "TH", MerchantReference: "inv-7",
		Recipient: paykit.Recipient{Type: "bank_account", BankCode: "KBANK", AccountNumber: "1234567890",
			HolderName: "Somchai Jaidee", HolderNameTH: "สมชาย ใจดี"},
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(answer.Kind, po.Status, po.AccountLast4)

	balances, _ := svc.ListBalances(ctx, p)
	b := balances.Data[0]
	fmt.Println(b.Currency, b.Available, b.Reserved, len(psp.Transfers()))
	// Output:
	// created processing 7890
	// THB 380000 120000 1
}
