package memory

import (
	"cmp"
	"context"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/store/internal/ledgertxn"
)

// --- ledger ---

// balanceKey names the balance of a scope and currency.
type balanceKey struct {
	scope    paykit.Scope
	currency string
}

// accountRow is the balance of one account of a scope and currency.
type accountRow struct {
	amount  int64
	updated time.Time
}

// PostLedger implements paykit.Tx: it checks everything before it
// writes anything, so a refused transaction leaves no trace. A balance's
// rows are copied on write, so that a rolled back transaction leaves the
// old ones.
func (t *txn) PostLedger(_ context.Context, lt *paykit.LedgerTxn) error {
	changes, err := ledgertxn.Check(lt)
	if err != nil {
		return err
	}
	if _, taken := t.d.ledger[ledgertxn.EntryID(lt.ID, 0)]; taken {
		return conflict("ledger_txn", "id")
	}
	if len(changes) > 0 {
		k := balanceKey{lt.Scope, lt.Currency}
		rows := maps.Clone(t.d.balances[k])
		if rows == nil {
			rows = make(map[string]accountRow, len(changes))
		}
		for _, c := range changes {
			amount, err := ledgertxn.Next(lt, rows[c.Account].amount, c)
			if err != nil {
				return err
			}
			rows[c.Account] = accountRow{amount, lt.At.UTC()}
		}
		put(t, t.d.balances, k, rows)
	}
	for _, e := range ledgertxn.Entries(lt) {
		put(t, t.d.ledger, e.ID, e)
	}
	return nil
}

// balance is the Balance of k with rows.
func balance(k balanceKey, rows map[string]accountRow) paykit.Balance {
	var accounts map[string]int64
	var updated time.Time
	for name, r := range rows {
		if accounts == nil {
			accounts = make(map[string]int64, len(rows))
		}
		accounts[name] = r.amount
		if r.updated.After(updated) {
			updated = r.updated
		}
	}
	return ledgertxn.NewBalance(k.scope, k.currency, accounts, updated)
}

// GetBalance implements paykit.Tx.
func (t *txn) GetBalance(_ context.Context, scope paykit.Scope, currency string) (*paykit.Balance, error) {
	k := balanceKey{scope, currency}
	b := balance(k, t.d.balances[k])
	return &b, nil
}

// ListBalances implements paykit.Tx.
func (t *txn) ListBalances(_ context.Context, scope paykit.Scope) ([]paykit.Balance, error) {
	var out []paykit.Balance
	for k, rows := range t.d.balances {
		if k.scope == scope {
			out = append(out, balance(k, rows))
		}
	}
	slices.SortFunc(out, func(a, b paykit.Balance) int { return strings.Compare(a.Currency, b.Currency) })
	return out, nil
}

// ListLedgerEntries implements paykit.Tx.
func (t *txn) ListLedgerEntries(_ context.Context, q paykit.LedgerQuery) ([]paykit.LedgerEntry, error) {
	var out []paykit.LedgerEntry
	for _, e := range t.d.ledger {
		if (q.Scope.MerchantID == "" || e.Scope.MerchantID == q.Scope.MerchantID) &&
			(q.Scope.Environment == "" || e.Scope.Environment == q.Scope.Environment) &&
			(q.Currency == "" || e.Currency == q.Currency) && (q.RefID == "" || e.RefID == q.RefID) {
			out = append(out, e)
		}
	}
	slices.SortFunc(out, func(a, b paykit.LedgerEntry) int { // oldest first
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), strings.Compare(a.ID, b.ID))
	})
	return out, nil
}
