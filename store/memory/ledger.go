package memory

import (
	"cmp"
	"context"
	"slices"
	"strings"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/store/internal/ledgertxn"
)

// --- ledger ---

// balanceKey names the balance of a scope and currency.
type balanceKey struct {
	scope    paykit.Scope
	currency string
}

// PostLedger implements paykit.LedgerStore: it checks everything before it
// writes anything, so a refused transaction leaves no trace.
func (t *txn) PostLedger(_ context.Context, lt *paykit.LedgerTxn) error {
	d, err := ledgertxn.Check(lt)
	if err != nil {
		return err
	}
	if _, taken := t.d.ledger[ledgertxn.EntryID(lt.ID, 0)]; taken {
		return conflict("ledger_txn", "id")
	}
	if !d.Zero() {
		k := balanceKey{lt.Scope, lt.Currency}
		b, ok := ledgertxn.Apply(t.d.balances[k], d)
		if !ok {
			return ledgertxn.Overflow(lt)
		}
		if b.Available < 0 || b.Reserved < 0 {
			return paykit.ErrInsufficientFunds
		}
		b.Scope, b.Currency, b.UpdatedAt = lt.Scope, lt.Currency, lt.At.UTC()
		put(t, t.d.balances, k, b)
	}
	for _, e := range ledgertxn.Entries(lt) {
		put(t, t.d.ledger, e.ID, e)
	}
	return nil
}

// GetBalance implements paykit.LedgerStore.
func (t *txn) GetBalance(_ context.Context, scope paykit.Scope, currency string) (*paykit.Balance, error) {
	b, ok := t.d.balances[balanceKey{scope, currency}]
	if !ok {
		b = paykit.Balance{Scope: scope, Currency: currency}
	}
	return &b, nil
}

// ListBalances implements paykit.LedgerStore.
func (t *txn) ListBalances(_ context.Context, scope paykit.Scope) ([]paykit.Balance, error) {
	var out []paykit.Balance
	for k, b := range t.d.balances {
		if k.scope == scope {
			out = append(out, b)
		}
	}
	slices.SortFunc(out, func(a, b paykit.Balance) int { return strings.Compare(a.Currency, b.Currency) })
	return out, nil
}

// ListLedgerEntries implements paykit.LedgerStore.
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
