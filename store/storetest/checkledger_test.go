package storetest

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/store/memory"
)

// fakeLedger is a Tx whose ledger returns whatever it is given, with no
// payouts or payment intents, to show that CheckLedger finds broken
// ledgers. Its other methods are not called.
type fakeLedger struct {
	paykit.Tx
	entries  []paykit.LedgerEntry
	balances []paykit.Balance
}

func (f *fakeLedger) GetBalance(_ context.Context, scope paykit.Scope, currency string) (*paykit.Balance, error) {
	for _, b := range f.balances {
		if b.Scope == scope && b.Currency == currency {
			return &b, nil
		}
	}
	return &paykit.Balance{Scope: scope, Currency: currency}, nil
}

func (f *fakeLedger) ListBalances(context.Context, paykit.Scope) ([]paykit.Balance, error) {
	return f.balances, nil
}

func (f *fakeLedger) ListLedgerEntries(context.Context, paykit.LedgerQuery) ([]paykit.LedgerEntry, error) {
	return f.entries, nil
}

func (f *fakeLedger) ListPayoutIntents(context.Context, paykit.PayoutQuery) ([]paykit.PayoutIntent, error) {
	return nil, nil
}

func (f *fakeLedger) ListPaymentIntents(context.Context, paykit.ListQuery[paykit.ListParams[paykit.PaymentStatus]]) ([]paykit.PaymentIntent, error) {
	return nil, nil
}

// recorder is a testing.TB that keeps what Errorf reports.
type recorder struct {
	testing.TB
	errs []string
}

func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

func TestCheckLedgerFindsBrokenLedgers(t *testing.T) {
	scope := scopeA
	entry := func(txn string, i int, account string, amount int64) paykit.LedgerEntry {
		return paykit.LedgerEntry{ID: fmt.Sprintf("%s.%d", txn, i), TxnID: txn, Scope: scope, Currency: "THB",
			Account: account, Amount: amount, Kind: "k", RefID: "r", CreatedAt: base}
	}
	good := func() *fakeLedger {
		return &fakeLedger{
			entries: []paykit.LedgerEntry{
				entry("ltx_1", 0, paykit.AccountPayments, -100), entry("ltx_1", 1, paykit.AccountAvailable, 100),
				entry("ltx_2", 0, paykit.AccountAvailable, -40), entry("ltx_2", 1, paykit.AccountReserved, 40),
			},
			balances: []paykit.Balance{{Scope: scope, Currency: "THB", Available: 60, Reserved: 40,
				Accounts: map[string]int64{paykit.AccountAvailable: 60, paykit.AccountReserved: 40}, UpdatedAt: base}},
		}
	}
	for name, c := range map[string]struct {
		breakIt func(*fakeLedger)
		want    string // in one of the reported errors; "" for none
	}{
		"consistent": {func(*fakeLedger) {}, ""},
		"unbalanced transaction": {func(f *fakeLedger) {
			f.entries[0].Amount = -101
		}, "transaction ltx_1 sums to -1"},
		"money made": {func(f *fakeLedger) {
			f.entries = append(f.entries, entry("ltx_3", 0, paykit.AccountAdjustments, 5))
		}, "THB entries sum to 5"},
		"balance off its entries": {func(f *fakeLedger) {
			f.balances[0].Available, f.balances[0].Accounts[paykit.AccountAvailable] = 61, 61
		}, "the THB available balance is 61; its entries sum to 60"},
		"available not its account": {func(f *fakeLedger) {
			f.balances[0].Available = 61
		}, "shows available 61, reserved 40, but its accounts hold 60, 40"},
		"negative balance": {func(f *fakeLedger) {
			f.entries = append(f.entries, entry("ltx_3", 0, paykit.AccountReserved, -50), entry("ltx_3", 1, paykit.AccountPayouts, 50))
			f.balances[0].Reserved, f.balances[0].Accounts[paykit.AccountReserved] = -10, -10
		}, "the THB reserved balance is negative: -10"},
		"negative balance an overdraw may leave": {func(f *fakeLedger) {
			f.entries = append(f.entries, entry("ltx_3", 0, paykit.AccountAvailable, -70), entry("ltx_3", 1, paykit.AccountAdjustments, 70))
			f.balances[0].Available, f.balances[0].Accounts[paykit.AccountAvailable] = -10, -10
		}, ""},
		"balance missing": {func(f *fakeLedger) {
			f.balances = nil
		}, "the THB available balance is 0; its entries sum to 60"},
		"balance without entries": {func(f *fakeLedger) {
			f.balances = append(f.balances, paykit.Balance{Scope: scope, Currency: "MYR", Available: 1, Accounts: map[string]int64{paykit.AccountAvailable: 1}})
		}, "the MYR available balance is 1; it has no entries"},
		"account of no balance": {func(f *fakeLedger) {
			f.balances[0].Accounts[paykit.AccountPayments] = 0
		}, `has an account "external:payments"`},
		"entry to an unknown account": {func(f *fakeLedger) {
			f.entries[0].Account = "cash"
		}, `entry ltx_1.0 is to "cash", an account not in the chart`},
		"entry of another scope": {func(f *fakeLedger) {
			f.entries[3].Scope = scopeB
		}, "entry ltx_2.1 belongs to"},
		"transaction split in time": {func(f *fakeLedger) {
			f.entries[1].CreatedAt = base.Add(time.Second)
		}, "differ in currency, kind, reference or time"},
	} {
		t.Run(name, func(t *testing.T) {
			f := good()
			c.breakIt(f)
			r := &recorder{TB: t}
			CheckLedger(r, f, scope)
			switch {
			case c.want == "" && len(r.errs) > 0:
				t.Errorf("reported %q", r.errs)
			case c.want != "" && !strings.Contains(strings.Join(r.errs, "\n"), c.want):
				t.Errorf("reported %q, want %q among them", r.errs, c.want)
			}
		})
	}
}

// CheckLedger compares the money in payout and payment projections with the
// ledger when the store keeps them.
func TestCheckLedgerComparesProjections(t *testing.T) {
	ctx := context.Background()
	s := memory.New()
	post := func(id, kind, ref string, postings ...paykit.Posting) {
		t.Helper()
		if err := s.PostLedger(ctx, &paykit.LedgerTxn{ID: id, Scope: scopeA, Currency: "THB", Kind: kind, RefID: ref, Postings: postings, At: base}); err != nil {
			t.Fatal(err)
		}
	}
	post("ltx_in", "payment.succeeded", "pi_paid", paykit.Posting{Account: paykit.AccountPayments, Amount: -100}, paykit.Posting{Account: paykit.AccountAvailable, Amount: 100})
	post("ltx_res", "payout.reserved", "po_held", paykit.Posting{Account: paykit.AccountAvailable, Amount: -40}, paykit.Posting{Account: paykit.AccountReserved, Amount: 40})
	payout := func(id string, reserved int64) {
		t.Helper()
		if err := s.CreatePayoutIntent(ctx, &paykit.PayoutIntent{ID: id, MerchantID: scopeA.MerchantID, Environment: scopeA.Environment,
			Status: paykit.PayoutProcessing, Amount: 40, Currency: "THB", Country: "TH", MerchantReference: id,
			ReservedAmount: reserved, CreatedAt: base, UpdatedAt: base}); err != nil {
			t.Fatal(err)
		}
	}
	intent := func(id string, status paykit.PaymentStatus) {
		t.Helper()
		if err := s.CreatePaymentIntent(ctx, &paykit.PaymentIntent{ID: id, MerchantID: scopeA.MerchantID, Environment: scopeA.Environment,
			Status: status, Amount: 100, Currency: "THB", Country: "TH", MerchantReference: id, PaymentMethod: "PROMPTPAY",
			CreatedAt: base, UpdatedAt: base}); err != nil {
			t.Fatal(err)
		}
	}
	payout("po_held", 40)
	intent("pi_paid", paykit.PaymentSucceeded)
	intent("pi_open", paykit.PaymentRequiresAction)
	r := &recorder{TB: t}
	CheckLedger(r, s, scopeA)
	if len(r.errs) > 0 {
		t.Fatalf("consistent ledger reported %q", r.errs)
	}

	payout("po_ghost", 40)                           // claims a reservation the ledger never made
	intent("pi_uncredited", paykit.PaymentSucceeded) // succeeded without a credit
	r = &recorder{TB: t}
	CheckLedger(r, s, scopeA)
	all := strings.Join(r.errs, "\n")
	for _, want := range []string{"payout po_ghost (processing) shows reserved 40", "payment intent pi_uncredited (succeeded, amount 100) credited 0"} {
		if !strings.Contains(all, want) {
			t.Errorf("reported %q, want %q among them", r.errs, want)
		}
	}
	if len(r.errs) != 2 {
		t.Errorf("reported %d errors, want 2: %q", len(r.errs), r.errs)
	}
}
