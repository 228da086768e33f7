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

// fakeLedger is a Tx whose ledger and balance transactions are whatever
// it is given, with no payouts or payment intents, to show that
// CheckLedger finds broken ledgers. Its other methods are not called.
type fakeLedger struct {
	paykit.Tx
	entries  []paykit.LedgerEntry
	balances []paykit.Balance
	txns     []paykit.BalanceTransaction
}

func (f *fakeLedger) ListBalanceTransactions(context.Context, paykit.ListQuery[paykit.BalanceTransactionListParams]) ([]paykit.BalanceTransaction, error) {
	return f.txns, nil
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
	txn := func(id string, typ paykit.BalanceTransactionType, amount, fee int64, status paykit.BalanceTransactionStatus) paykit.BalanceTransaction {
		return paykit.BalanceTransaction{ID: id, MerchantID: scope.MerchantID, Environment: scope.Environment, Type: typ,
			Source: "src_" + id, Amount: amount, Fee: fee, Net: amount - fee, Currency: "THB", Status: status,
			AvailableOn: base, CreatedAt: base, UpdatedAt: base}
	}
	// A payment of 100 (fee 3) settled, 40 of it reserved for a payout,
	// and a payment of 50 (fee 2) pending.
	good := func() *fakeLedger {
		return &fakeLedger{
			entries: []paykit.LedgerEntry{
				entry("ltx_1", 0, paykit.AccountPayments, -100), entry("ltx_1", 1, paykit.AccountFees, 3), entry("ltx_1", 2, paykit.AccountPending, 97),
				entry("ltx_2", 0, paykit.AccountPending, -97), entry("ltx_2", 1, paykit.AccountAvailable, 97),
				entry("ltx_3", 0, paykit.AccountAvailable, -40), entry("ltx_3", 1, paykit.AccountReserved, 40),
				entry("ltx_4", 0, paykit.AccountPayments, -50), entry("ltx_4", 1, paykit.AccountFees, 2), entry("ltx_4", 2, paykit.AccountPending, 48),
			},
			balances: []paykit.Balance{{Scope: scope, Currency: "THB", Available: 57, Pending: 48, Reserved: 40,
				Accounts: map[string]int64{paykit.AccountAvailable: 57, paykit.AccountPending: 48, paykit.AccountReserved: 40}, UpdatedAt: base}},
			txns: []paykit.BalanceTransaction{
				txn("txn_1", paykit.BalanceTxnPayment, 100, 3, paykit.BalanceTxnAvailable),
				txn("txn_2", paykit.BalanceTxnPayment, 50, 2, paykit.BalanceTxnPending),
			},
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
			f.entries = append(f.entries, entry("ltx_5", 0, paykit.AccountAdjustments, 5))
		}, "THB entries sum to 5"},
		"balance off its entries": {func(f *fakeLedger) {
			f.balances[0].Available, f.balances[0].Accounts[paykit.AccountAvailable] = 58, 58
		}, "the THB available balance is 58; its entries sum to 57"},
		"available not its account": {func(f *fakeLedger) {
			f.balances[0].Available = 58
		}, "shows available 58, reserved 40, but its accounts hold 57, 40"},
		"pending not its account": {func(f *fakeLedger) {
			f.balances[0].Pending = 47
		}, "the THB balance shows pending 47, but its account holds 48"},
		"pending off its entries": {func(f *fakeLedger) {
			f.balances[0].Pending, f.balances[0].Accounts[paykit.AccountPending] = 49, 49
		}, "the THB pending balance is 49; its entries sum to 48"},
		"negative balance": {func(f *fakeLedger) {
			f.entries = append(f.entries, entry("ltx_5", 0, paykit.AccountReserved, -50), entry("ltx_5", 1, paykit.AccountPayouts, 50))
			f.balances[0].Reserved, f.balances[0].Accounts[paykit.AccountReserved] = -10, -10
			f.txns = append(f.txns, txn("txn_5", paykit.BalanceTxnPayout, -50, 0, paykit.BalanceTxnAvailable))
		}, "the THB reserved balance is negative: -10"},
		"negative balance an overdraw may leave": {func(f *fakeLedger) {
			f.entries = append(f.entries, entry("ltx_5", 0, paykit.AccountAvailable, -70), entry("ltx_5", 1, paykit.AccountAdjustments, 70))
			f.balances[0].Available, f.balances[0].Accounts[paykit.AccountAvailable] = -13, -13
			f.txns = append(f.txns, txn("txn_5", paykit.BalanceTxnAdjustment, -70, 0, paykit.BalanceTxnAvailable))
		}, ""},
		"balance missing": {func(f *fakeLedger) {
			f.balances = nil
		}, "the THB available balance is 0; its entries sum to 57"},
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
		}, "entry ltx_2.0 belongs to"},
		"transaction split in time": {func(f *fakeLedger) {
			f.entries[1].CreatedAt = base.Add(time.Second)
		}, "differ in currency, kind, reference or time"},
		"movement without a balance transaction": {func(f *fakeLedger) {
			f.txns = f.txns[:1]
		}, "the THB balance transactions' nets sum to 97, but available + pending + reserved is 145"},
		"balance transaction without a movement": {func(f *fakeLedger) {
			f.txns = append(f.txns, txn("txn_5", paykit.BalanceTxnAdjustment, 10, 0, paykit.BalanceTxnAvailable))
		}, "the THB balance transactions' nets sum to 155, but available + pending + reserved is 145"},
		"fee left out of the ledger": {func(f *fakeLedger) {
			f.txns[1].Fee, f.txns[1].Net = 0, 50
		}, "the THB balance transactions' nets sum to 147, but available + pending + reserved is 145"},
		"net not amount less fee": {func(f *fakeLedger) {
			f.txns[0].Net = 98
		}, "balance transaction txn_1 nets 98, not its amount 100 less its fee 3"},
		"balance transaction of a currency never posted": {func(f *fakeLedger) {
			f.txns = append(f.txns, txn("txn_5", paykit.BalanceTxnAdjustment, 5, 0, paykit.BalanceTxnAvailable))
			f.txns[2].Currency = "MYR"
		}, "the MYR balance transactions' nets sum to 5, but the balance has no entries"},
		"balance transaction of another scope": {func(f *fakeLedger) {
			f.txns[1].MerchantID = scopeB.MerchantID
		}, "balance transaction txn_2 belongs to"},
		"balance transaction of no type": {func(f *fakeLedger) {
			f.txns[1].Type = "charge"
		}, `balance transaction txn_2 has type "charge"`},
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
	// paid credits a payment's net to pending, with its balance transaction.
	paid := func(ltx, ref string, amount, fee int64) {
		t.Helper()
		post(ltx, "payment.succeeded", ref, paykit.Posting{Account: paykit.AccountPayments, Amount: -amount},
			paykit.Posting{Account: paykit.AccountFees, Amount: fee}, paykit.Posting{Account: paykit.AccountPending, Amount: amount - fee})
		if err := s.CreateBalanceTransaction(ctx, &paykit.BalanceTransaction{ID: "txn_" + ref, MerchantID: scopeA.MerchantID,
			Environment: scopeA.Environment, Type: paykit.BalanceTxnPayment, Source: ref, Amount: amount, Fee: fee, Net: amount - fee,
			Currency: "THB", Status: paykit.BalanceTxnPending, AvailableOn: base, CreatedAt: base, UpdatedAt: base}); err != nil {
			t.Fatal(err)
		}
	}
	paid("ltx_in", "pi_paid", 100, 3)
	paid("ltx_in2", "pi_settled", 200, 6)
	post("ltx_settle", "payment.settled", "pi_settled", paykit.Posting{Account: paykit.AccountPending, Amount: -194}, paykit.Posting{Account: paykit.AccountAvailable, Amount: 194})
	post("ltx_res", "payout.reserved", "po_held", paykit.Posting{Account: paykit.AccountAvailable, Amount: -40}, paykit.Posting{Account: paykit.AccountReserved, Amount: 40})
	payout := func(id string, reserved int64) {
		t.Helper()
		if err := s.CreatePayoutIntent(ctx, &paykit.PayoutIntent{ID: id, MerchantID: scopeA.MerchantID, Environment: scopeA.Environment,
			Status: paykit.PayoutProcessing, Amount: 40, Currency: "THB", Country: "TH", MerchantReference: id,
			ReservedAmount: reserved, CreatedAt: base, UpdatedAt: base}); err != nil {
			t.Fatal(err)
		}
	}
	intent := func(id string, status paykit.PaymentStatus, amount, fee int64, settled *time.Time) {
		t.Helper()
		if err := s.CreatePaymentIntent(ctx, &paykit.PaymentIntent{ID: id, MerchantID: scopeA.MerchantID, Environment: scopeA.Environment,
			Status: status, Amount: amount, Currency: "THB", Country: "TH", MerchantReference: id, PaymentMethod: "PROMPTPAY",
			Fee: fee, SettledAt: settled, CreatedAt: base, UpdatedAt: base}); err != nil {
			t.Fatal(err)
		}
	}
	payout("po_held", 40)
	intent("pi_paid", paykit.PaymentSucceeded, 100, 3, nil)
	intent("pi_settled", paykit.PaymentSucceeded, 200, 6, ptr(base))
	intent("pi_open", paykit.PaymentRequiresAction, 100, 0, nil)
	r := &recorder{TB: t}
	CheckLedger(r, s, scopeA)
	if len(r.errs) > 0 {
		t.Fatalf("consistent ledger reported %q", r.errs)
	}

	payout("po_ghost", 40)                                         // claims a reservation the ledger never made
	intent("pi_uncredited", paykit.PaymentSucceeded, 100, 0, nil)  // succeeded without a credit
	paid("ltx_in3", "pi_early", 300, 9)                            // credited to pending...
	intent("pi_early", paykit.PaymentSucceeded, 300, 9, ptr(base)) // ...but says it was settled
	paid("ltx_in4", "pi_fee", 400, 12)                             // credited less its fee...
	intent("pi_fee", paykit.PaymentSucceeded, 400, 0, nil)         // ...but says it had none
	r = &recorder{TB: t}
	CheckLedger(r, s, scopeA)
	all := strings.Join(r.errs, "\n")
	for _, want := range []string{
		"payout po_ghost (processing) shows reserved 40",
		"payment intent pi_uncredited (succeeded, amount 100, fee 0, settled false) shows in its entries paid in 0, fee 0, pending 0, available 0",
		"payment intent pi_early (succeeded, amount 300, fee 9, settled true) shows in its entries paid in 300, fee 9, pending 291, available 0",
		"payment intent pi_fee (succeeded, amount 400, fee 0, settled false) shows in its entries paid in 400, fee 12, pending 388, available 0",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("reported %q, want %q among them", r.errs, want)
		}
	}
	if len(r.errs) != 4 {
		t.Errorf("reported %d errors, want 4: %q", len(r.errs), r.errs)
	}
}
