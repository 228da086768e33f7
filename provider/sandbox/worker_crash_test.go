package sandbox_test

import (
	"context"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/internal/answertest"
	"github.com/paykit/paykit/provider/sandbox"
	"github.com/paykit/paykit/store/sqlstore"
)

// crashKeyring is the account-number key both processes share, as the
// instances of one deployment do.
func crashKeyring(t *testing.T) *paykit.Keyring {
	t.Helper()
	k, err := paykit.NewKeyring("k1", map[string][]byte{"k1": []byte("0123456789abcdef0123456789abcdef")})
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// crashService is a Service on the SQLite file at dsn with the sandbox
// adapter at base, leasing jobs for two seconds, on the real clock (two
// processes share the leases).
func crashService(t *testing.T, dsn, base, worker string, timeout time.Duration) *paykit.Service {
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
	svc, err := paykit.New(paykit.Config{
		Store: store, Routing: sandbox.DefaultRouting(), WorkerID: worker, JobLease: 2 * time.Second,
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
	page, err := svc.ListPayoutIntents(ctx, p, paykit.PayoutIntentListParams{})
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
		if n > 0 && po.Dispatch != paykit.DispatchSending {
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
