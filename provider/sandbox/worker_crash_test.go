package sandbox_test

import (
	"context"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/internal/answertest"
	"github.com/paykit/paykit/keyring"
	"github.com/paykit/paykit/provider/sandbox"
	"github.com/paykit/paykit/store/sqlstore"
	"github.com/paykit/paykit/store/storetest"
)

// crashKeyring is the account-number key both processes share, as the
// instances of one deployment do.
func crashKeyring(t *testing.T) *keyring.Keyring {
	t.Helper()
	k, err := keyring.New("k1", map[string][]byte{"k1": []byte("0123456789abcdef0123456789abcdef")})
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// crashService is a Service on the SQLite file at dsn with the sandbox
// adapter at base, leasing jobs for two seconds, on the real clock (two
// processes share the leases) moved on by skew, when set.
func crashService(t *testing.T, dsn, base, worker string, timeout time.Duration, skew ...*atomic.Int64) *paykit.Service {
	t.Helper()
	ctx := context.Background()
	store, err := sqlstore.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	if err := store.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	now := time.Now
	if len(skew) > 0 {
		now = func() time.Time { return time.Now().Add(time.Duration(skew[0].Load())) }
	}
	svc, err := paykit.New(paykit.Config{
		Store: store, Now: now, Routing: sandbox.DefaultRouting(), WorkerID: worker, JobLease: 2 * time.Second,
		Providers: map[string]paykit.Provider{sandbox.Name: sandbox.New(sandbox.Config{BaseURL: base, APIKey: testAPIKey, Timeout: timeout})},
		PublicURL: "https://pay.example", SigningKey: []byte("sandbox-test-signing-key"), AccountKeys: crashKeyring(t),
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

// TestCrashChildWorker is the worker process that TestWorkerKilledMidJob
// starts and kills; run on its own it does nothing.
func TestCrashChildWorker(t *testing.T) {
	dsn, base := os.Getenv("PAYKIT_CRASH_DSN"), os.Getenv("PAYKIT_CRASH_PSP")
	if dsn == "" {
		t.Skip("the worker process of TestWorkerKilledMidJob")
	}
	// A long adapter timeout: the process dies inside the Provider call.
	svc := crashService(t, dsn, base, "doomed", time.Hour)
	for {
		if _, err := svc.ProcessDue(context.Background()); err != nil {
			t.Log(err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A worker process killed (SIGKILL) while its payout dispatch job waits on
// the Provider: after the lease runs out a second worker takes the job
// over, resends with the same Provider key, and the PSP holds exactly one
// transfer.
func TestWorkerKilledMidJob(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	e := newEnv(t)
	dsn := "sqlite:" + filepath.Join(t.TempDir(), "crash.db")
	svc := crashService(t, dsn, e.base, "survivor", testTimeout)
	m, err := svc.CreateMerchant(ctx, "ops:test", "Kedai Kopi")
	is.NoErr(err)
	p := paykit.Principal{Scope: paykit.Scope{MerchantID: m.ID, Environment: paykit.Test}}
	_, err = svc.AdjustBalance(ctx, "ops:test", m.ID, paykit.BalanceAdjustmentRequest{Environment: paykit.Test, Currency: "THB", Amount: 1000000, Reason: "float"})
	is.NoErr(err)

	// The request's own dispatch is not acknowledged, so the work goes to
	// the background worker; that worker's call is recorded by the PSP and
	// then hangs.
	e.psp.InjectFault(sandbox.Fault{Op: sandbox.OpCreatePayout, Kind: sandbox.FaultStatus500, Times: 1})
	e.psp.InjectFault(sandbox.Fault{Op: sandbox.OpCreatePayout, Kind: sandbox.FaultTimeout, AfterRecord: true, Times: 1})
	_, err = answertest.From(svc.CreatePayoutIntent(ctx, p, "k-crash", thPayoutIntent("crash", "123456789012")))
	is.Equal(paykit.ErrorCode(err), paykit.CodeDispatchUnavailable)
	page, err := svc.ListPayoutIntents(ctx, p, paykit.ListParams[paykit.PayoutStatus]{})
	is.NoErr(err)
	is.Equal(len(page.Data), 1)
	id := page.Data[0].ID

	child := exec.Command(os.Args[0], "-test.run=^TestCrashChildWorker$", "-test.v")
	child.Env = append(os.Environ(), "PAYKIT_CRASH_DSN="+dsn, "PAYKIT_CRASH_PSP="+e.base)
	child.Stdout, child.Stderr = io.Discard, io.Discard
	is.NoErr(child.Start())
	t.Cleanup(func() { _ = child.Process.Kill(); _ = child.Wait() })

	// Wait until the child is inside the Provider call: the PSP has
	// recorded the transfer and is holding the answer.
	deadline := time.Now().Add(30 * time.Second)
	for e.psp.CreateCalls(id) < 2 {
		if time.Now().After(deadline) {
			t.Fatal("the worker process never reached the Provider")
		}
		time.Sleep(10 * time.Millisecond)
	}
	is.Equal(len(e.psp.Transfers()), 1)
	is.NoErr(child.Process.Kill())
	_ = child.Wait()

	// The dead worker's lease runs out; the survivor finishes the job.
	deadline = time.Now().Add(30 * time.Second)
	for {
		n, err := svc.ProcessDue(ctx)
		is.NoErr(err)
		po, err := svc.GetPayoutIntent(ctx, p, id)
		is.NoErr(err)
		if n > 0 && po.Attempt != paykit.AttemptCreating {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("payout %s never dispatched after the crash", id)
		}
		time.Sleep(50 * time.Millisecond)
	}
	is.Equal(e.psp.CreateCalls(id), 3)  // the request, the dead worker, the survivor
	is.Equal(len(e.psp.Transfers()), 1) // one key, one transfer
}

// TestCrashChildRefund is the request process that
// TestRefundRequestKilledBetweenTransactions starts and kills; run on its
// own it does nothing.
func TestCrashChildRefund(t *testing.T) {
	dsn, base := os.Getenv("PAYKIT_CRASH_REFUND_DSN"), os.Getenv("PAYKIT_CRASH_PSP")
	if dsn == "" {
		t.Skip("the request process of TestRefundRequestKilledBetweenTransactions")
	}
	// The survivor's clock, and a long adapter timeout: the process dies
	// inside the Provider call.
	var skew atomic.Int64
	d, err := time.ParseDuration(os.Getenv("PAYKIT_CRASH_SKEW"))
	if err != nil {
		t.Fatal(err)
	}
	skew.Store(int64(d))
	svc := crashService(t, dsn, base, "doomed", time.Hour, &skew)
	p := paykit.Principal{Scope: paykit.Scope{MerchantID: os.Getenv("PAYKIT_CRASH_MERCHANT"), Environment: paykit.Test}}
	_, _, err = svc.CreateRefund(context.Background(), p, "k-crash", crashRefund(os.Getenv("PAYKIT_CRASH_PAYMENT")))
	t.Fatalf("the refund request returned: %v", err)
}

func crashRefund(payment string) paykit.CreateRefundRequest {
	return paykit.CreateRefundRequest{PaymentIntent: payment, MerchantReference: "refund-crash", Amount: 4000}
}

// A request process killed (SIGKILL) between the two transactions of a
// refund create, inside the Provider call that recorded the refund: its
// first transaction stands (refund pending, amount reserved); once the
// request's lock lapses the survivor's dispatch job sends it again under
// the same key, the PSP holds one refund, the retry with the key replays,
// and the ledger balances.
func TestRefundRequestKilledBetweenTransactions(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	e := newEnv(t)
	dsn := "sqlite:" + filepath.Join(t.TempDir(), "crash.db")
	var skew atomic.Int64
	svc := crashService(t, dsn, e.base, "survivor", testTimeout, &skew)
	later := func(d time.Duration) { skew.Add(int64(d)); e.clock.Advance(d) }
	drain := func() {
		t.Helper()
		for {
			n, err := svc.ProcessDue(ctx)
			is.NoErr(err)
			if n == 0 {
				return
			}
		}
	}
	m, err := svc.CreateMerchant(ctx, "ops:test", "Kedai Kopi")
	is.NoErr(err)
	p := paykit.Principal{Scope: paykit.Scope{MerchantID: m.ID, Environment: paykit.Test}}
	pi, _, err := svc.CreatePaymentIntent(ctx, p, "k-pay", paykit.CreatePaymentIntentRequest{
		Amount: 10000, Currency: "MYR", Country: "MY", MerchantReference: "order-1",
		PaymentMethod: "FPX", Customer: map[string]string{"name": "Aisyah", "email": "aisyah@example.com"},
	})
	is.NoErr(err)
	is.NoErr(e.prov.Approve(ctx, pi.ID))
	later(time.Minute)
	drain()
	pi, err = svc.GetPaymentIntent(ctx, p, pi.ID)
	is.NoErr(err)
	is.Equal(pi.Status, paykit.PaymentSucceeded)
	_, err = svc.SettleTestFunds(ctx, p) // refunds draw on available funds
	is.NoErr(err)

	e.psp.InjectFault(sandbox.Fault{Op: sandbox.OpCreateRefund, Kind: sandbox.FaultTimeout, AfterRecord: true})
	child := exec.Command(os.Args[0], "-test.run=^TestCrashChildRefund$", "-test.v")
	child.Env = append(os.Environ(), "PAYKIT_CRASH_REFUND_DSN="+dsn, "PAYKIT_CRASH_PSP="+e.base,
		"PAYKIT_CRASH_MERCHANT="+m.ID, "PAYKIT_CRASH_PAYMENT="+pi.ID, "PAYKIT_CRASH_SKEW="+time.Duration(skew.Load()).String())
	child.Stdout, child.Stderr = io.Discard, io.Discard
	is.NoErr(child.Start())
	t.Cleanup(func() { _ = child.Process.Kill(); _ = child.Wait() })
	deadline := time.Now().Add(30 * time.Second)
	for len(e.psp.Refunds()) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the request process never reached the Provider")
		}
		time.Sleep(10 * time.Millisecond)
	}
	is.NoErr(child.Process.Kill())
	_ = child.Wait()

	page, err := svc.ListRefunds(ctx, p, paykit.RefundListParams{})
	is.NoErr(err)
	is.Equal(len(page.Data), 1)
	re := page.Data[0]
	is.Equal(re.Status, paykit.RefundPending)
	is.Equal(re.Attempt, paykit.AttemptCreating) // the answer was never applied
	_, _, err = svc.CreateRefund(ctx, p, "k-crash", crashRefund(pi.ID))
	is.Equal(paykit.ErrorCode(err), paykit.CodeIdempotencyInProgress) // the dead request's lock holds

	later(time.Minute) // the lock lapses; the dispatch job is due
	drain()
	again, ans, err := svc.CreateRefund(ctx, p, "k-crash", crashRefund(pi.ID))
	is.NoErr(err)
	is.True(ans.Replayed)
	is.Equal(again.ID, re.ID)
	is.Equal(e.psp.CreateCalls(re.ID), 2) // the dead request, the survivor: one key
	is.Equal(len(e.psp.Refunds()), 1)

	later(time.Minute) // the PSP settles; recovery finds it
	drain()
	got, err := svc.GetRefund(ctx, p, re.ID)
	is.NoErr(err)
	is.Equal(got.Status, paykit.RefundSucceeded)
	pi, err = svc.GetPaymentIntent(ctx, p, pi.ID)
	is.NoErr(err)
	is.Equal([]int64{pi.RefundedAmount, pi.RefundPendingAmount}, []int64{4000, 0})
	store, err := sqlstore.Open(ctx, dsn)
	is.NoErr(err)
	defer store.Close()
	storetest.CheckLedger(t, store, p.Scope)
}
