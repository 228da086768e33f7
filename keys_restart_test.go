package paykit_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/internal/answertest"
	"github.com/paykit/paykit/keyring"
	"github.com/paykit/paykit/store/memory"
	"github.com/paykit/paykit/store/sqlstore"
)

// A Service on a persistent Store refuses to start without keys that
// survive the process, and says which to set; an ephemeral Store may draw
// random ones.
func TestNewRefusesPersistentStoreWithoutKeys(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	file, err := sqlstore.Open(ctx, "sqlite:"+filepath.Join(t.TempDir(), "paykit.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	mem, err := sqlstore.Open(ctx, "sqlite::memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	for _, s := range []*sqlstore.Store{file, mem} {
		if err := s.Migrate(ctx); err != nil { // New checks the keys against the Store's records
			t.Fatal(err)
		}
	}
	signing := []byte("restart-tests-signing-key-32byte")
	for _, c := range []struct {
		name    string
		cfg     paykit.Config
		missing []string // "" when New must succeed
	}{
		{"sqlite file, no keys", paykit.Config{Store: file}, []string{"Config.SigningKey", "Config.AccountKeys"}},
		{"sqlite file, signing key only", paykit.Config{Store: file, SigningKey: signing}, []string{"Config.AccountKeys"}},
		{"sqlite file, account keys only", paykit.Config{Store: file, AccountKeys: keyring.Random()}, []string{"Config.SigningKey"}},
		{"sqlite file, both", paykit.Config{Store: file, SigningKey: signing, AccountKeys: keyring.Random()}, nil},
		{"sqlite memory, no keys", paykit.Config{Store: mem}, nil},
		{"memory, no keys", paykit.Config{Store: memory.New()}, nil},
		{"short signing key", paykit.Config{Store: memory.New(), SigningKey: []byte("short")}, []string{"at least 16"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			_, err := paykit.New(c.cfg)
			if c.missing == nil {
				is.NoErr(err)
				return
			}
			is.True(err != nil)
			for _, m := range c.missing {
				is.True(strings.Contains(err.Error(), m)) // the error says what to set
			}
		})
	}
}

// With configured keys a payout held for approval before a restart is
// approved and dispatched after it: its sealed account number opens, and
// the transfer carries the Provider bank code of the route it was created
// on, though the restarted Service no longer has that route.
func TestHeldPayoutApprovedAfterRestart(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	dsn := "sqlite:" + filepath.Join(t.TempDir(), "paykit.db")
	clock := paykit.NewManualClock(time.Date(2026, 6, 1, 8, 0, 0, 0, time.UTC))
	ring, err := keyring.New("k1", map[string][]byte{"k1": []byte("0123456789abcdef0123456789abcdef")})
	is.NoErr(err)
	routing := thPayoutRouting()
	boot := func(routing paykit.Routing) (*paykit.Service, *fakeBank, *sqlstore.Store) {
		store, err := sqlstore.Open(ctx, dsn)
		is.NoErr(err)
		is.NoErr(store.Migrate(ctx))
		bank := newFakeBank()
		svc, err := paykit.New(paykit.Config{
			Store: store, Now: clock.Now, Routing: routing, Providers: map[string]paykit.Provider{"fake": bank},
			PublicURL: "https://pay.example", ApprovalThreshold: 1000, SigningKey: []byte("restart-tests-signing-key-32byte"),
			// A keyring made anew from the same key material, as a restart reads it.
			AccountKeys: ring,
		})
		is.NoErr(err)
		return svc, bank, store
	}
	svc, _, store := boot(routing)
	is.NoErr(store.CreateMerchant(ctx, &paykit.Merchant{ID: "mch_1", Name: "One", CreatedAt: clock.Now()}))
	_, err = svc.AdjustBalance(ctx, "ops", "mch_1", paykit.BalanceAdjustmentRequest{Environment: paykit.Test, Currency: "THB", Amount: 500000, Reason: "float"})
	is.NoErr(err)
	p := paykit.Principal{Scope: paykit.Scope{MerchantID: "mch_1", Environment: paykit.Test}}
	resp, err := answertest.From(svc.CreatePayoutIntent(ctx, p, "po-held", thPayout(250000, "po-held", "000123456789")))
	is.NoErr(err)
	var held paykit.PayoutIntent
	is.NoErr(resp.Decode(&held))
	is.Equal(held.Status, paykit.PayoutRequiresApproval)
	is.NoErr(store.Close())

	svc, bank, store := boot(fakeRouting) // a new process: same database, same keys, no payout routes
	defer store.Close()
	approved, err := svc.ApprovePayout(ctx, "ops", held.ID, "")
	is.NoErr(err)
	is.Equal(approved.Status, paykit.PayoutProcessing)
	is.Equal(bank.calls(approved.ID), 1) // dispatched with the opened account number
	is.Equal(bank.bankCode(approved.ID), "TH-004")
}

// New refuses a payout route to a Provider that is missing or cannot pay
// out, as it refuses a payment route to a missing one.
func TestNewRefusesPayoutRouteWithoutPayoutProvider(t *testing.T) {
	t.Parallel()
	route := paykit.PayoutRoute{Environment: paykit.Test, Country: "TH", Currency: "THB", Provider: "fake",
		Banks: []paykit.PayoutBank{{Code: "KBANK", ProviderCode: "TH-004"}}}
	for _, c := range []struct {
		name      string
		providers map[string]paykit.Provider
		want      string // "" when New must succeed
	}{
		{"missing", map[string]paykit.Provider{}, "not in Config.Providers"},
		{"payments only", map[string]paykit.Provider{"fake": newFakeProvider()}, "cannot pay out"},
		{"pays out", map[string]paykit.Provider{"fake": newFakeBank()}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			_, err := paykit.New(paykit.Config{Store: memory.New(), Routing: paykit.Routing{Payouts: []paykit.PayoutRoute{route}}, Providers: c.providers})
			if c.want == "" {
				is.NoErr(err)
				return
			}
			is.True(err != nil && strings.Contains(err.Error(), c.want))
		})
	}
}
