package storetest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/paykit/paykit"
)

func ledgerTxn(id string, scope paykit.Scope, currency, kind, ref string, at time.Time, postings ...paykit.Posting) *paykit.LedgerTxn {
	return &paykit.LedgerTxn{ID: id, Scope: scope, Currency: currency, Kind: kind, RefID: ref, Postings: postings, At: at}
}

// credit moves amount from the adjustments account to available.
func credit(id string, scope paykit.Scope, currency string, amount int64, at time.Time) *paykit.LedgerTxn {
	return ledgerTxn(id, scope, currency, "balance.adjusted", "adj_"+id, at,
		paykit.Posting{Account: paykit.AccountAdjustments, Amount: -amount}, paykit.Posting{Account: paykit.AccountAvailable, Amount: amount})
}

// reserve moves amount from available to reserved.
func reserve(id string, scope paykit.Scope, amount int64, ref string, at time.Time) *paykit.LedgerTxn {
	return ledgerTxn(id, scope, "THB", "payout.reserved", ref, at,
		paykit.Posting{Account: paykit.AccountAvailable, Amount: -amount}, paykit.Posting{Account: paykit.AccountReserved, Amount: amount})
}

func entryIDs(rows []paykit.LedgerEntry) []string {
	return ids(rows, func(e paykit.LedgerEntry) string { return e.ID })
}

// ledgerState is everything a scope's ledger shows, to check that a
// refused post changed nothing.
func ledgerState(t *testing.T, s paykit.Tx, scope paykit.Scope) string {
	t.Helper()
	ctx := context.Background()
	entries, err1 := s.ListLedgerEntries(ctx, paykit.LedgerQuery{Scope: scope})
	balances, err2 := s.ListBalances(ctx, scope)
	if err := errors.Join(err1, err2); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%+v %+v", entries, balances)
}

func testLedgerPostAndBalances(t *testing.T, s paykit.Store) {
	is := is.New(t)
	ctx := context.Background()
	// Nothing posted: a zero balance, not ErrNotFound, and no list entry.
	b, err := s.GetBalance(ctx, scopeA, "THB")
	is.NoErr(err)
	is.Equal(*b, paykit.Balance{Scope: scopeA, Currency: "THB"})
	balances, err := s.ListBalances(ctx, scopeA)
	is.NoErr(err)
	is.Equal(len(balances), 0)

	payIn := ledgerTxn("ltx_1", scopeA, "THB", "payment.succeeded", "pi_1", base,
		paykit.Posting{Account: paykit.AccountPayments, Amount: -100_000}, paykit.Posting{Account: paykit.AccountAvailable, Amount: 100_000})
	is.NoErr(s.PostLedger(ctx, payIn))
	is.NoErr(s.PostLedger(ctx, reserve("ltx_2", scopeA, 30_000, "po_1", at(time.Second))))
	is.NoErr(s.PostLedger(ctx, ledgerTxn("ltx_3", scopeA, "THB", "payout.succeeded", "po_1", at(2*time.Second),
		paykit.Posting{Account: paykit.AccountReserved, Amount: -10_000}, paykit.Posting{Account: paykit.AccountPayouts, Amount: 10_000})))
	is.NoErr(s.PostLedger(ctx, credit("ltx_4", scopeA, "MYR", 5_000, at(3*time.Second))))
	// Other tenants, one with the same reference.
	is.NoErr(s.PostLedger(ctx, credit("ltx_5", scopeB, "THB", 777, at(4*time.Second))))
	is.NoErr(s.PostLedger(ctx, reserve("ltx_6", scopeB, 700, "po_1", at(5*time.Second))))
	is.NoErr(s.PostLedger(ctx, credit("ltx_7", scopeALive, "THB", 1, at(6*time.Second))))
	// Between external accounts only: the balance does not move.
	is.NoErr(s.PostLedger(ctx, ledgerTxn("ltx_8", scopeA, "THB", "payment.refunded", "pi_1", at(7*time.Second),
		paykit.Posting{Account: paykit.AccountAdjustments, Amount: -1}, paykit.Posting{Account: paykit.AccountPayments, Amount: 1})))

	b, err = s.GetBalance(ctx, scopeA, "THB")
	is.NoErr(err)
	thb := paykit.Balance{Scope: scopeA, Currency: "THB", Available: 70_000, Reserved: 20_000,
		Accounts: map[string]int64{paykit.AccountAvailable: 70_000, paykit.AccountReserved: 20_000}, UpdatedAt: at(2 * time.Second)}
	is.Equal(*b, thb)
	is.Equal(b.UpdatedAt.Location(), time.UTC)
	balances, err = s.ListBalances(ctx, scopeA)
	is.NoErr(err)
	is.Equal(balances, []paykit.Balance{ // by currency
		{Scope: scopeA, Currency: "MYR", Available: 5_000, Accounts: map[string]int64{paykit.AccountAvailable: 5_000}, UpdatedAt: at(3 * time.Second)},
		thb,
	})
	b, err = s.GetBalance(ctx, scopeB, "THB")
	is.NoErr(err)
	is.Equal([2]int64{b.Available, b.Reserved}, [2]int64{77, 700})

	entries, err := s.ListLedgerEntries(ctx, paykit.LedgerQuery{Scope: scopeA})
	is.NoErr(err)
	is.Equal(entryIDs(entries), []string{"ltx_1.0", "ltx_1.1", "ltx_2.0", "ltx_2.1", "ltx_3.0", "ltx_3.1", "ltx_4.0", "ltx_4.1", "ltx_8.0", "ltx_8.1"}) // oldest first
	is.Equal(entries[3], paykit.LedgerEntry{ID: "ltx_2.1", TxnID: "ltx_2", Scope: scopeA, Currency: "THB",
		Account: paykit.AccountReserved, Amount: 30_000, Kind: "payout.reserved", RefID: "po_1", CreatedAt: at(time.Second)})
	is.Equal(entries[0].Amount, int64(-100_000))
	is.Equal(entries[0].CreatedAt.Location(), time.UTC)

	list := func(q paykit.LedgerQuery) []string {
		t.Helper()
		rows, err := s.ListLedgerEntries(ctx, q)
		is.NoErr(err)
		return entryIDs(rows)
	}
	is.Equal(list(paykit.LedgerQuery{Scope: scopeA, Currency: "MYR"}), []string{"ltx_4.0", "ltx_4.1"})
	is.Equal(list(paykit.LedgerQuery{Scope: scopeA, RefID: "po_1"}), []string{"ltx_2.0", "ltx_2.1", "ltx_3.0", "ltx_3.1"})
	is.Equal(list(paykit.LedgerQuery{RefID: "po_1"}), []string{"ltx_2.0", "ltx_2.1", "ltx_3.0", "ltx_3.1", "ltx_6.0", "ltx_6.1"}) // every scope
	is.Equal(list(paykit.LedgerQuery{Scope: scopeALive}), []string{"ltx_7.0", "ltx_7.1"})
	is.Equal(len(list(paykit.LedgerQuery{})), 16)

	// The Store kept its own copy of the postings.
	payIn.Postings[1].Amount = 1
	is.Equal(list(paykit.LedgerQuery{Scope: scopeA, RefID: "pi_1"})[:2], []string{"ltx_1.0", "ltx_1.1"})
	entries, err = s.ListLedgerEntries(ctx, paykit.LedgerQuery{Scope: scopeA, RefID: "pi_1"})
	is.NoErr(err)
	is.Equal(entries[1].Amount, int64(100_000))

	for _, scope := range []paykit.Scope{scopeA, scopeB, scopeALive} {
		checkLedger(t, s, scope, false)
	}
}

func testLedgerInsufficientFunds(t *testing.T, s paykit.Store) {
	is := is.New(t)
	ctx := context.Background()
	is.NoErr(s.PostLedger(ctx, credit("ltx_fund", scopeA, "THB", 1_000, base)))
	before := ledgerState(t, s, scopeA)

	for name, lt := range map[string]*paykit.LedgerTxn{
		"available short by one": reserve("ltx_x1", scopeA, 1_001, "po_1", at(time.Second)),
		"nothing reserved": ledgerTxn("ltx_x2", scopeA, "THB", "payout.succeeded", "po_1", at(time.Second),
			paykit.Posting{Account: paykit.AccountReserved, Amount: -1}, paykit.Posting{Account: paykit.AccountPayouts, Amount: 1}),
		"never funded currency":  credit("ltx_x3", scopeA, "MYR", -1, at(time.Second)),
		"another tenant's money": reserve("ltx_x4", scopeB, 1, "po_1", at(time.Second)),
		"one of two accounts short": ledgerTxn("ltx_x5", scopeA, "THB", "mixed", "", at(time.Second),
			paykit.Posting{Account: paykit.AccountAvailable, Amount: 1_000}, paykit.Posting{Account: paykit.AccountReserved, Amount: -1_000}),
	} {
		err := s.PostLedger(ctx, lt)
		if !errors.Is(err, paykit.ErrInsufficientFunds) {
			t.Errorf("%s: got %v, want ErrInsufficientFunds", name, err)
		}
	}
	is.Equal(ledgerState(t, s, scopeA), before) // nothing written, not even a zero MYR balance
	is.Equal(ledgerState(t, s, scopeB), ledgerState(t, s, paykit.Scope{MerchantID: "mch_none", Environment: paykit.Test}))

	// Down to exactly zero is fine.
	is.NoErr(s.PostLedger(ctx, reserve("ltx_all", scopeA, 1_000, "po_1", at(time.Second))))
	b, err := s.GetBalance(ctx, scopeA, "THB")
	is.NoErr(err)
	is.Equal([2]int64{b.Available, b.Reserved}, [2]int64{0, 1_000})

	// In a transaction, returning the error rolls back what came before it.
	err = s.InTx(ctx, func(tx paykit.Tx) error {
		if err := tx.CreatePayoutIntent(ctx, payout(scopeA, "po_2", "payout-2", at(2*time.Second))); err != nil {
			return err
		}
		return tx.PostLedger(ctx, reserve("ltx_po_2", scopeA, 1, "po_2", at(2*time.Second)))
	})
	is.True(errors.Is(err, paykit.ErrInsufficientFunds))
	_, err = s.GetPayoutIntent(ctx, scopeA, "po_2")
	is.True(errors.Is(err, paykit.ErrNotFound))
	checkLedger(t, s, scopeA, false)
}

func testLedgerRejectsInvalid(t *testing.T, s paykit.Store) {
	ctx := context.Background()
	p := func(account string, amount int64) paykit.Posting {
		return paykit.Posting{Account: account, Amount: amount}
	}
	for name, lt := range map[string]*paykit.LedgerTxn{
		"unbalanced":      ledgerTxn("ltx_1", scopeA, "THB", "k", "r", base, p(paykit.AccountAdjustments, -100), p(paykit.AccountAvailable, 99)),
		"one posting":     ledgerTxn("ltx_2", scopeA, "THB", "k", "r", base, p(paykit.AccountAvailable, 0)),
		"no postings":     ledgerTxn("ltx_3", scopeA, "THB", "k", "r", base),
		"zero posting":    ledgerTxn("ltx_4", scopeA, "THB", "k", "r", base, p(paykit.AccountAdjustments, -100), p(paykit.AccountAvailable, 100), p(paykit.AccountPayments, 0)),
		"unknown account": ledgerTxn("ltx_5", scopeA, "THB", "k", "r", base, p("cash", -100), p(paykit.AccountAvailable, 100)),
		"bare external":   ledgerTxn("ltx_6", scopeA, "THB", "k", "r", base, p("external:", -100), p(paykit.AccountAvailable, 100)),
		// The sum wraps around to zero in int64.
		"overflowing postings": ledgerTxn("ltx_7", scopeA, "THB", "k", "r", base,
			p(paykit.AccountPayments, math.MaxInt64), p(paykit.AccountAdjustments, math.MaxInt64), p(paykit.AccountAvailable, 2)),
		"no id":       credit("", scopeA, "THB", 100, base),
		"no scope":    credit("ltx_8", paykit.Scope{}, "THB", 100, base),
		"no currency": credit("ltx_9", scopeA, "", 100, base),
	} {
		err := s.PostLedger(ctx, lt)
		switch {
		case err == nil:
			t.Errorf("%s: posted", name)
		case errors.Is(err, paykit.ErrInsufficientFunds), errors.Is(err, paykit.ErrAlreadyExists),
			errors.Is(err, paykit.ErrNotFound), errors.Is(err, paykit.ErrVersionConflict):
			t.Errorf("%s: got the sentinel %v, want a plain error", name, err)
		}
	}
	entries, err := s.ListLedgerEntries(ctx, paykit.LedgerQuery{})
	is.New(t).NoErr(err)
	is.New(t).Equal(len(entries), 0)
	balances, err := s.ListBalances(ctx, scopeA)
	is.New(t).NoErr(err)
	is.New(t).Equal(len(balances), 0)
}

func testLedgerEntriesImmutable(t *testing.T, s paykit.Store) {
	is := is.New(t)
	ctx := context.Background()
	is.NoErr(s.PostLedger(ctx, credit("ltx_1", scopeA, "THB", 500, base)))
	is.NoErr(s.PostLedger(ctx, reserve("ltx_2", scopeA, 200, "po_1", at(time.Second))))
	before := ledgerState(t, s, scopeA)

	// A transaction id is posted once: a second post under it, whatever
	// its postings, is refused and changes nothing.
	for _, again := range []*paykit.LedgerTxn{
		credit("ltx_1", scopeA, "THB", 500, base),
		reserve("ltx_2", scopeA, 1, "po_9", at(time.Hour)),
		credit("ltx_1", scopeB, "MYR", 5, base),
	} {
		err := s.PostLedger(ctx, again)
		is.True(errors.Is(err, paykit.ErrAlreadyExists))
		var c *paykit.ConflictError
		is.True(errors.As(err, &c))
		is.Equal(*c, paykit.ConflictError{Entity: "ledger_txn", Key: "id"})
	}
	is.Equal(ledgerState(t, s, scopeA), before)
	balances, err := s.ListBalances(ctx, scopeB)
	is.NoErr(err)
	is.Equal(len(balances), 0)

	// Corrections are new entries: the reservation is released, and both
	// movements stay in the ledger.
	is.NoErr(s.PostLedger(ctx, ledgerTxn("ltx_3", scopeA, "THB", "payout.released", "po_1", at(2*time.Second),
		paykit.Posting{Account: paykit.AccountReserved, Amount: -200}, paykit.Posting{Account: paykit.AccountAvailable, Amount: 200})))
	entries, err := s.ListLedgerEntries(ctx, paykit.LedgerQuery{Scope: scopeA, RefID: "po_1"})
	is.NoErr(err)
	is.Equal(entryIDs(entries), []string{"ltx_2.0", "ltx_2.1", "ltx_3.0", "ltx_3.1"})
	b, err := s.GetBalance(ctx, scopeA, "THB")
	is.NoErr(err)
	is.Equal([2]int64{b.Available, b.Reserved}, [2]int64{500, 0})
	checkLedger(t, s, scopeA, false)
}

func testLedgerOverflow(t *testing.T, s paykit.Store) {
	is := is.New(t)
	ctx := context.Background()
	is.NoErr(s.PostLedger(ctx, credit("ltx_1", scopeA, "THB", math.MaxInt64-1, base)))
	before := ledgerState(t, s, scopeA)
	err := s.PostLedger(ctx, credit("ltx_2", scopeA, "THB", 2, at(time.Second)))
	is.True(err != nil) // a balance past int64 is an error, never a wrapped-around one
	is.True(!errors.Is(err, paykit.ErrInsufficientFunds))
	is.Equal(ledgerState(t, s, scopeA), before)
	is.NoErr(s.PostLedger(ctx, credit("ltx_3", scopeA, "THB", 1, at(time.Second))))
	b, err := s.GetBalance(ctx, scopeA, "THB")
	is.NoErr(err)
	is.Equal(b.Available, int64(math.MaxInt64))
}

// testConcurrentPosts races 50 reservations of 100 against an available
// balance of 2,000: exactly 20 may succeed. Half post on their own, half
// inside InTx with a payout, as the Service reserves. Meanwhile 10 credits
// race to create a new currency's balance.
func testConcurrentPosts(t *testing.T, s paykit.Store) {
	is := is.New(t)
	ctx := context.Background()
	is.NoErr(s.PostLedger(ctx, credit("ltx_fund", scopeA, "THB", 2_000, base)))
	const racers, credits = 50, 10
	errs := make([]error, racers+credits)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range racers + credits {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			id := fmt.Sprintf("%03d", i)
			for {
				var err error
				switch {
				case i >= racers:
					err = s.PostLedger(ctx, credit("ltx_myr_"+id, scopeA, "MYR", 100, at(time.Second)))
				case i%2 == 0:
					err = s.PostLedger(ctx, reserve("ltx_"+id, scopeA, 100, "po_"+id, at(time.Second)))
				default:
					err = s.InTx(ctx, func(tx paykit.Tx) error {
						po := payout(scopeA, "po_"+id, "ref-"+id, at(time.Second))
						po.Amount = 100
						if err := tx.CreatePayoutIntent(ctx, po); err != nil {
							return err
						}
						if err := tx.PostLedger(ctx, reserve("ltx_"+id, scopeA, 100, po.ID, at(time.Second))); err != nil {
							return err
						}
						po.ReservedAmount = 100
						return tx.UpdatePayoutIntent(ctx, po)
					})
				}
				if !errors.Is(err, paykit.ErrVersionConflict) { // a backend may ask for a retry
					errs[i] = err
					return
				}
			}
		}()
	}
	close(start)
	wg.Wait()
	ok, short := 0, 0
	for i, err := range errs[:racers] {
		switch {
		case err == nil:
			ok++
		case errors.Is(err, paykit.ErrInsufficientFunds):
			short++
		default:
			t.Errorf("racer %d: %v", i, err)
		}
	}
	for i, err := range errs[racers:] {
		if err != nil {
			t.Errorf("credit %d: %v", i, err)
		}
	}
	is.Equal(ok, 20)
	is.Equal(short, racers-20)
	b, err := s.GetBalance(ctx, scopeA, "THB")
	is.NoErr(err)
	is.Equal([2]int64{b.Available, b.Reserved}, [2]int64{0, 2_000})
	b, err = s.GetBalance(ctx, scopeA, "MYR")
	is.NoErr(err)
	is.Equal(b.Available, int64(credits*100))
	// The payouts whose reservation failed rolled back with it.
	payouts, err := s.ListPayoutIntents(ctx, paykit.PayoutQuery{ListQuery: paykit.ListQuery[paykit.ListParams[paykit.PayoutStatus]]{Scope: scopeA}})
	is.NoErr(err)
	for _, p := range payouts {
		is.Equal(p.ReservedAmount, int64(100))
		entries, err := s.ListLedgerEntries(ctx, paykit.LedgerQuery{Scope: scopeA, RefID: p.ID})
		is.NoErr(err)
		is.Equal(len(entries), 2)
	}
	entries, err := s.ListLedgerEntries(ctx, paykit.LedgerQuery{Scope: scopeA, Currency: "THB"})
	is.NoErr(err)
	is.Equal(len(entries), 2+20*2)
	checkLedger(t, s, scopeA, false)
}

// dispute takes amount out of available back to the payer, as the opening
// of a dispute does: the one kind of transaction the chart lets overdraw
// available.
func dispute(id string, scope paykit.Scope, currency string, amount int64, at time.Time) *paykit.LedgerTxn {
	return ledgerTxn(id, scope, currency, "dispute.created", "dp_"+id, at,
		paykit.Posting{Account: paykit.AccountAvailable, Amount: -amount}, paykit.Posting{Account: paykit.AccountPayments, Amount: amount})
}

// testLedgerAccountRules checks that each account's rule of the chart
// decides whether a posting may take it below zero: available may go
// negative by a dispute and by nothing else, reserved never, and while
// available is negative only what raises it passes.
func testLedgerAccountRules(t *testing.T, s paykit.Store) {
	is := is.New(t)
	ctx := context.Background()
	avail, _ := paykit.LookupAccount(paykit.AccountAvailable)
	reserved, _ := paykit.LookupAccount(paykit.AccountReserved)
	is.True(avail.MayOverdraw("dispute.created") && !avail.MayOverdraw("payout.reserved") && !avail.MayOverdraw("balance.adjusted"))
	is.True(!reserved.MayOverdraw("dispute.created"))
	balance := func(currency string) map[string]int64 {
		t.Helper()
		b, err := s.GetBalance(ctx, scopeA, currency)
		is.NoErr(err)
		is.Equal([2]int64{b.Available, b.Reserved}, [2]int64{b.Accounts[paykit.AccountAvailable], b.Accounts[paykit.AccountReserved]})
		return b.Accounts
	}
	is.NoErr(s.PostLedger(ctx, credit("ltx_fund", scopeA, "THB", 1_000, base)))
	is.NoErr(s.PostLedger(ctx, reserve("ltx_res", scopeA, 300, "po_1", at(time.Second))))

	// A dispute of more than is available takes available below zero.
	is.NoErr(s.PostLedger(ctx, dispute("ltx_dp1", scopeA, "THB", 1_200, at(2*time.Second))))
	is.Equal(balance("THB"), map[string]int64{paykit.AccountAvailable: -500, paykit.AccountReserved: 300})

	// While it is negative, nothing that lowers it passes but another
	// dispute; a reservation, a payout from reserved taking reserved below
	// zero, or a dispute that also overdraws reserved write nothing.
	before := ledgerState(t, s, scopeA)
	for name, lt := range map[string]*paykit.LedgerTxn{
		"payout reservation": reserve("ltx_x1", scopeA, 1, "po_2", at(3*time.Second)),
		"operator debit":     credit("ltx_x2", scopeA, "THB", -1, at(3*time.Second)),
		"reserved below zero": ledgerTxn("ltx_x3", scopeA, "THB", "payout.succeeded", "po_1", at(3*time.Second),
			paykit.Posting{Account: paykit.AccountReserved, Amount: -301}, paykit.Posting{Account: paykit.AccountPayouts, Amount: 301}),
		"a dispute may not overdraw reserved": ledgerTxn("ltx_x4", scopeA, "THB", "dispute.created", "dp_x4", at(3*time.Second),
			paykit.Posting{Account: paykit.AccountAvailable, Amount: -10}, paykit.Posting{Account: paykit.AccountReserved, Amount: -301},
			paykit.Posting{Account: paykit.AccountPayments, Amount: 311}),
	} {
		if err := s.PostLedger(ctx, lt); !errors.Is(err, paykit.ErrInsufficientFunds) {
			t.Errorf("%s: got %v, want ErrInsufficientFunds", name, err)
		}
	}
	is.Equal(ledgerState(t, s, scopeA), before)

	// A credit raises it, even when it stays negative, and a release of
	// the reservation too; then a reservation fits again.
	is.NoErr(s.PostLedger(ctx, credit("ltx_in", scopeA, "THB", 100, at(4*time.Second))))
	is.NoErr(s.PostLedger(ctx, ledgerTxn("ltx_rel", scopeA, "THB", "payout.released", "po_1", at(5*time.Second),
		paykit.Posting{Account: paykit.AccountReserved, Amount: -300}, paykit.Posting{Account: paykit.AccountAvailable, Amount: 300})))
	is.Equal(balance("THB"), map[string]int64{paykit.AccountAvailable: -100, paykit.AccountReserved: 0})
	is.NoErr(s.PostLedger(ctx, dispute("ltx_dp2", scopeA, "THB", 50, at(6*time.Second))))
	is.NoErr(s.PostLedger(ctx, credit("ltx_in2", scopeA, "THB", 200, at(7*time.Second))))
	is.NoErr(s.PostLedger(ctx, reserve("ltx_res2", scopeA, 50, "po_3", at(8*time.Second))))
	is.Equal(balance("THB"), map[string]int64{paykit.AccountAvailable: 0, paykit.AccountReserved: 50})

	// A dispute in a currency never funded makes its balance, negative.
	is.NoErr(s.PostLedger(ctx, dispute("ltx_dp3", scopeA, "MYR", 70, at(9*time.Second))))
	is.Equal(balance("MYR"), map[string]int64{paykit.AccountAvailable: -70})
	balances, err := s.ListBalances(ctx, scopeA)
	is.NoErr(err)
	is.Equal(len(balances), 2)
	is.Equal(balances[0].Accounts, map[string]int64{paykit.AccountAvailable: -70})
	is.Equal(balances[0].UpdatedAt, at(9*time.Second))
	checkLedger(t, s, scopeA, false)
}

// testConcurrentPostsOneRow races, on one balance row, credits, disputes
// (debits the chart lets overdraw, so unguarded) and guarded reservations
// that also write a second row: no update is lost, whatever order they
// commit in, and the rows agree with the entries.
func testConcurrentPostsOneRow(t *testing.T, s paykit.Store) {
	is := is.New(t)
	ctx := context.Background()
	is.NoErr(s.PostLedger(ctx, credit("ltx_fund", scopeA, "THB", 1_000, base)))
	const each = 20
	errs := make([]error, 3*each)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range 3 * each {
		wg.Go(func() {
			<-start
			id := fmt.Sprintf("%03d", i)
			for {
				var err error
				switch i % 3 {
				case 0:
					err = s.PostLedger(ctx, credit("ltx_c"+id, scopeA, "THB", 100, at(time.Second)))
				case 1:
					err = s.PostLedger(ctx, dispute("ltx_d"+id, scopeA, "THB", 50, at(time.Second)))
				default:
					err = s.PostLedger(ctx, reserve("ltx_r"+id, scopeA, 10, "po_"+id, at(time.Second)))
				}
				if !errors.Is(err, paykit.ErrVersionConflict) { // a backend may ask for a retry
					errs[i] = err
					return
				}
			}
		})
	}
	close(start)
	wg.Wait()
	reserved := int64(0)
	for i, err := range errs {
		switch {
		case err == nil && i%3 == 2:
			reserved += 10
		case err == nil:
		case i%3 == 2 && errors.Is(err, paykit.ErrInsufficientFunds): // available was below 10 then
		default:
			t.Errorf("post %d: %v", i, err)
		}
	}
	b, err := s.GetBalance(ctx, scopeA, "THB")
	is.NoErr(err)
	is.Equal(b.Accounts[paykit.AccountAvailable], 1_000+each*100-each*50-reserved)
	is.Equal(b.Reserved, reserved)
	checkLedger(t, s, scopeA, false)
}
