package paykit_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"

	"github.com/uptrace/bun"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/keyring"
	"github.com/paykit/paykit/provider/sandbox"
	"github.com/paykit/paykit/store/memory"
	"github.com/paykit/paykit/store/sqlstore"
)

// exampleEnv is what the examples share: a Service on store with the
// sandbox PSP on a loopback server, and a merchant with test keys and a
// THB balance to pay out from. The PSP runs on the Service's clock
// (cfg.Now) and posts its callbacks to the Service's
// HandleProviderCallback, as a host's /providers/sandbox/webhooks route
// would.
type exampleEnv struct {
	svc     *paykit.Service
	p       paykit.Principal
	psp     *sandbox.PSP
	closers []func()
}

// close stops the servers of the example.
func (e *exampleEnv) close() {
	for _, c := range e.closers {
		c()
	}
}

func newExample(store paykit.Store, cfg paykit.Config) *exampleEnv {
	e := &exampleEnv{}
	srv := httptest.NewUnstartedServer(nil)
	base := "http://" + srv.Listener.Addr().String()
	e.psp = sandbox.NewPSP(sandbox.PSPConfig{BaseURL: base, APIKey: "psp-secret", Now: cfg.Now, CallbackURL: base + "/callbacks"})
	mux := http.NewServeMux()
	mux.Handle("/", e.psp)
	mux.HandleFunc("POST /callbacks", func(w http.ResponseWriter, r *http.Request) {
		if err := e.svc.HandleProviderCallback(r.Context(), sandbox.Name, r); err != nil {
			http.Error(w, paykit.ErrorCode(err), http.StatusBadRequest)
		}
	})
	srv.Config.Handler = mux
	cfg.Store = store
	cfg.Routing = sandbox.DefaultRouting()
	cfg.Providers = map[string]paykit.Provider{sandbox.Name: sandbox.New(sandbox.Config{BaseURL: base, APIKey: "psp-secret"})}
	cfg.PublicURL = "https://pay.example"
	svc, err := paykit.New(cfg)
	if err != nil {
		panic(err)
	}
	e.svc, e.closers = svc, []func(){srv.Close}
	srv.Start() // after e.svc is set: the callback route reads it
	ctx := context.Background()
	m, _, err := svc.EnsureMerchant(ctx, "ops", "mch_kopi", "Kedai Kopi")
	if err != nil {
		panic(err)
	}
	key, _ := svc.CreateAPIKey(ctx, "ops", m.ID, paykit.Test)
	p, _ := svc.Authenticate(ctx, key.PublicKey, key.SecretKey)
	if _, err := svc.AdjustBalance(ctx, "ops", m.ID, paykit.BalanceAdjustmentRequest{
		Environment: paykit.Test, Currency: "THB", Amount: 500000, Reason: "opening float",
	}); err != nil {
		panic(err)
	}
	e.p = p
	return e
}

// newTimedExample is newExample on the memory Store with a ManualClock,
// standing at exampleStart, as the Service's and the PSP's clock.
func newTimedExample(cfg paykit.Config) (*exampleEnv, *paykit.ManualClock) {
	clock := paykit.NewManualClock(exampleStart)
	cfg.Now = clock.Now
	return newExample(memory.New(), cfg), clock
}

// drain runs the background work that is due until none is left, as
// Service.Run does every WorkerInterval.
func (e *exampleEnv) drain() {
	for {
		n, err := e.svc.ProcessDue(context.Background())
		if err != nil {
			panic(err)
		}
		if n == 0 {
			return
		}
	}
}

func tngPayment(ref string) paykit.CreatePaymentIntentRequest {
	return paykit.CreatePaymentIntentRequest{
		Amount: 15000, Currency: "MYR", Country: "MY", MerchantReference: ref,
		PaymentMethod: "TNG", Customer: map[string]string{"name": "Aisyah"},
	}
}

func thPayoutTo(ref string) paykit.CreatePayoutIntentRequest {
	return paykit.CreatePayoutIntentRequest{
		Amount: 120000, Currency: "THB", Country: "TH", MerchantReference: ref,
		Recipient: paykit.Recipient{Type: "bank_account", BankCode: "KBANK", AccountNumber: "1234567890",
			HolderName: "Somchai Jaidee", HolderNameTH: "สมชาย ใจดี"},
	}
}

// The Service answers a create with the full resource and how it was
// answered; the same key and request replays the first answer.
func ExampleService_CreatePaymentIntent() {
	e := newExample(memory.New(), paykit.Config{})
	defer e.close()
	ctx := context.Background()

	pi, answer, err := e.svc.CreatePaymentIntent(ctx, e.p, "order-1", tngPayment("order-1"))
	if err != nil {
		panic(err)
	}
	fmt.Println(answer.Kind, answer.Replayed, pi.Status, pi.Amount, pi.NextAction.Type)

	again, answer, _ := e.svc.CreatePaymentIntent(ctx, e.p, "order-1", tngPayment("order-1"))
	fmt.Println(answer.Kind, answer.Replayed, again.ID == pi.ID)

	// The same key with another request is refused with a contract error.
	other := tngPayment("order-1")
	other.Amount = 99
	_, _, err = e.svc.CreatePaymentIntent(ctx, e.p, "order-1", other)
	fmt.Println(paykit.ErrorCode(err))
	// Output:
	// created false requires_action 15000 redirect_to_url
	// created true true
	// idempotency_conflict
}

// Errors are *paykit.Error values: a code, a message and the parameter
// at fault.
func ExampleService_CreatePaymentIntent_errors() {
	e := newExample(memory.New(), paykit.Config{})
	defer e.close()
	req := tngPayment("order-2")
	req.Currency = "THB"
	_, _, err := e.svc.CreatePaymentIntent(context.Background(), e.p, "order-2", req)
	var perr *paykit.Error
	if errors.As(err, &perr) {
		fmt.Println(perr.Code, perr.Param)
	}
	// Output: payment_method_unavailable payment_method
}

func ExampleService_CancelPaymentIntent() {
	e := newExample(memory.New(), paykit.Config{})
	defer e.close()
	ctx := context.Background()
	pi, _, _ := e.svc.CreatePaymentIntent(ctx, e.p, "order-3", tngPayment("order-3"))

	canceled, answer, err := e.svc.CancelPaymentIntent(ctx, e.p, "cancel-order-3", pi.ID, paykit.CancelPaymentIntentRequest{})
	if err != nil {
		panic(err)
	}
	fmt.Println(answer.Kind, canceled.Status) // the Provider is asked in the background
	e.drain()
	pi, _ = e.svc.GetPaymentIntent(ctx, e.p, pi.ID)
	fmt.Println(pi.Status)
	// Output:
	// accepted requires_action
	// cancelled
}

func ExampleService_ListPaymentMethods() {
	e := newExample(memory.New(), paykit.Config{})
	defer e.close()
	page, err := e.svc.ListPaymentMethods(context.Background(), e.p, paykit.PaymentMethodsRequest{Amount: 15000, Currency: "THB", Country: "TH"})
	if err != nil {
		panic(err)
	}
	for _, m := range page.Data {
		fmt.Println(m.Method, m.NextActionType)
	}
	// Output:
	// PROMPTPAY display_qr_code
	// TRUEMONEY redirect_to_url
	// BANK_TRANSFER bank_transfer_instructions
	// CARD redirect_to_url
}

// A checkout is created without a Provider call; its payer link is signed.
func ExampleService_CreateCheckout() {
	e := newExample(memory.New(), paykit.Config{})
	defer e.close()
	ctx := context.Background()
	co, answer, err := e.svc.CreateCheckout(ctx, e.p, "order-4", paykit.CreateCheckoutRequest{
		Amount: 2500, Currency: "MYR", Country: "MY", MerchantReference: "order-4",
	})
	if err != nil {
		panic(err)
	}
	pi, _ := e.svc.GetPaymentIntent(ctx, e.p, co.PaymentIntentID)
	fmt.Println(answer.Kind, co.Status, co.Amount, pi.Status)

	canceled, answer, _ := e.svc.CancelCheckout(ctx, e.p, "cancel-order-4", co.ID)
	fmt.Println(answer.Kind, canceled.Status)
	// Output:
	// created open 2500 requires_payment_method
	// done cancelled
}

// Payouts reserve their amount on create; at or above the approval
// threshold they wait for an operator.
func ExampleService_CreatePayoutIntent() {
	e := newExample(memory.New(), paykit.Config{ApprovalThreshold: 100000})
	defer e.close()
	ctx := context.Background()

	po, answer, err := e.svc.CreatePayoutIntent(ctx, e.p, "payout-inv-8", thPayoutTo("inv-8"))
	if err != nil {
		panic(err)
	}
	fmt.Println(answer.Kind, po.Status, po.ReservedAmount, po.AccountLast4)

	approved, err := e.svc.ApprovePayout(ctx, "ops", po.ID, "invoice checked")
	if err != nil {
		panic(err)
	}
	e.drain()
	now, _ := e.svc.GetPayoutIntent(ctx, e.p, po.ID)
	fmt.Println(approved.Status, now.Status)
	// Output:
	// created requires_approval 120000 7890
	// processing processing
}

func ExampleService_CancelPayoutIntent() {
	e := newExample(memory.New(), paykit.Config{ApprovalThreshold: 100000})
	defer e.close()
	ctx := context.Background()
	po, _, _ := e.svc.CreatePayoutIntent(ctx, e.p, "payout-inv-9", thPayoutTo("inv-9"))

	canceled, answer, err := e.svc.CancelPayoutIntent(ctx, e.p, "cancel-inv-9", po.ID, paykit.CancelPayoutIntentRequest{})
	if err != nil {
		panic(err)
	}
	balances, _ := e.svc.ListBalances(ctx, e.p)
	fmt.Println(answer.Kind, canceled.Status, balances.Data[0].Available, balances.Data[0].Reserved)
	// Output: accepted cancelled 500000 0
}

// A host creates its order row and the checkout in one transaction of its
// own: committed, both exist; rolled back, neither does.
func ExampleService_CreateCheckoutTx() {
	dir, _ := os.MkdirTemp("", "paykit-example")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	store, err := sqlstore.Open(ctx, "sqlite:"+filepath.Join(dir, "shop.db"))
	if err != nil {
		panic(err)
	}
	defer store.Close()
	if err := store.Migrate(ctx); err != nil {
		panic(err)
	}
	db := store.DB() // the host's own tables live beside paykit's
	if _, err := db.ExecContext(ctx, "CREATE TABLE orders (id TEXT PRIMARY KEY, checkout_id TEXT NOT NULL)"); err != nil {
		panic(err)
	}
	keys, _ := keyring.New("k1", map[string][]byte{"k1": []byte("an-example-32-byte-account-key!!")})
	e := newExample(store, paykit.Config{SigningKey: []byte("an-example-signing-key-of-32-byt"), AccountKeys: keys})
	defer e.close()

	placeOrder := func(orderID string, commit bool) string {
		var checkoutID string
		err := db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			co, _, err := e.svc.CreateCheckoutTx(ctx, store.WrapTx(tx), e.p, "checkout-"+orderID, paykit.CreateCheckoutRequest{
				Amount: 4200, Currency: "MYR", Country: "MY", MerchantReference: orderID,
			})
			if err != nil {
				return err
			}
			checkoutID = co.ID
			if _, err := tx.ExecContext(ctx, "INSERT INTO orders (id, checkout_id) VALUES (?, ?)", orderID, co.ID); err != nil {
				return err
			}
			if !commit {
				return errors.New("out of stock")
			}
			return nil
		})
		if err != nil {
			fmt.Println("rolled back:", err)
		}
		return checkoutID
	}

	kept := placeOrder("order-10", true)
	co, err := e.svc.GetCheckout(ctx, e.p, kept)
	fmt.Println(co.Status, err)

	lost := placeOrder("order-11", false)
	_, err = e.svc.GetCheckout(ctx, e.p, lost)
	var orders int
	_ = db.NewRaw("SELECT count(*) FROM orders").Scan(ctx, &orders)
	fmt.Println(paykit.ErrorCode(err), orders)
	// Output:
	// open <nil>
	// rolled back: out of stock
	// not_found 1
}

// CreatePaymentIntentTx persists the intent and the job that calls the
// Provider; the worker makes the call once the host's transaction has
// committed. On the memory Store the host's transaction is Store.InTx's.
func ExampleService_CreatePaymentIntentTx() {
	store := memory.New()
	e := newExample(store, paykit.Config{})
	defer e.close()
	ctx := context.Background()

	var pi *paykit.PaymentIntent
	err := store.InTx(ctx, func(tx paykit.Tx) error {
		var answer paykit.Answer
		var err error
		pi, answer, err = e.svc.CreatePaymentIntentTx(ctx, tx, e.p, "order-12", tngPayment("order-12"))
		fmt.Println(answer.Kind, pi.Status)
		return err
	})
	if err != nil {
		panic(err)
	}
	e.drain() // Service.Run does this in the background
	pi, _ = e.svc.GetPaymentIntent(ctx, e.p, pi.ID)
	fmt.Println(pi.Status, pi.NextAction.Type)
	// Output:
	// accepted processing
	// requires_action redirect_to_url
}

// A succeeded payment is refunded in part; the amount stays reserved on
// the balance until the Provider's final word. Refunds draw on available
// funds: the payment's are, once the Provider settled them.
func ExampleService_CreateRefund() {
	e := newExample(memory.New(), paykit.Config{})
	defer e.close()
	ctx := context.Background()
	pi, _, _ := e.svc.CreatePaymentIntent(ctx, e.p, "order-20", tngPayment("order-20"))
	if _, err := e.svc.SimulatePayer(ctx, e.p, pi.ID, true); err != nil {
		panic(err)
	}
	if _, err := e.svc.SettleTestFunds(ctx, e.p); err != nil {
		panic(err)
	}

	re, answer, err := e.svc.CreateRefund(ctx, e.p, "refund-20", paykit.CreateRefundRequest{
		PaymentIntent: pi.ID, MerchantReference: "refund-20", Amount: 5000, Reason: "one item returned",
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(answer.Kind, re.Status, re.Amount, re.Currency)

	_, _, err = e.svc.CreateRefund(ctx, e.p, "refund-21", paykit.CreateRefundRequest{
		PaymentIntent: pi.ID, MerchantReference: "refund-21", Amount: 10001,
	})
	fmt.Println(paykit.ErrorCode(err))
	// Output:
	// created pending 5000 MYR
	// amount_exceeds_refundable
}
