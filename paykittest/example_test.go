package paykittest_test

import (
	"context"
	"fmt"
	"os"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/paykittest"
)

// A test takes a payment from creation to success: the payer approves at
// the sandbox PSP, whose callback reaches the Service.
func Example() {
	t := &exampleT{} // in a test: the test's *testing.T
	defer t.cleanup()
	ctx := context.Background()

	env := paykittest.New(t) // or paykittest.New(t, paykittest.WithStore(paykittest.Postgres))
	m := env.Merchant(ctx)
	pi, _, err := env.Service.CreatePaymentIntent(ctx, m.Principal, "order-1", paykit.CreatePaymentIntentRequest{
		Amount: 15000, Currency: "MYR", Country: "MY", MerchantReference: "order-1",
		PaymentMethod: "FPX", Customer: map[string]string{"name": "Aisyah", "email": "aisyah@example.com"},
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(pi.Status)

	if err := env.Pay(ctx, pi.ID); err != nil {
		panic(err)
	}
	fmt.Println("callbacks:", env.SettleAndNotify(ctx))
	pi, _ = env.Service.GetPaymentIntent(ctx, m.Principal, pi.ID)
	fmt.Println(pi.Status)
	// Output:
	// requires_action
	// callbacks: 1
	// succeeded
}

// exampleT stands in for a *testing.T outside a test.
type exampleT struct{ cleanups []func() }

func (*exampleT) Helper()                           {}
func (*exampleT) Errorf(format string, args ...any) { fmt.Fprintf(os.Stderr, format+"\n", args...) }
func (*exampleT) Fatalf(format string, args ...any) { panic(fmt.Sprintf(format, args...)) }
func (t *exampleT) Cleanup(f func())                { t.cleanups = append(t.cleanups, f) }
func (t *exampleT) TempDir() string {
	dir, err := os.MkdirTemp("", "paykittest")
	if err != nil {
		panic(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

func (t *exampleT) cleanup() {
	for i := len(t.cleanups) - 1; i >= 0; i-- {
		t.cleanups[i]()
	}
}
