package sqlstore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/store/internal/ledgertxn"
)

// ledgerEntryRow is a row of ledger_entries, which triggers keep
// immutable.
type ledgerEntryRow struct {
	bun.BaseModel `bun:"table:ledger_entries"`

	ID          string    `bun:"id,pk"`
	TxnID       string    `bun:"txn_id"`
	MerchantID  string    `bun:"merchant_id"`
	Environment string    `bun:"environment"`
	Currency    string    `bun:"currency"`
	Account     string    `bun:"account"`
	Amount      int64     `bun:"amount"`
	Kind        string    `bun:"kind"`
	RefID       string    `bun:"ref_id"`
	CreatedAt   time.Time `bun:"created_at"`
}

// balanceRow is a row of balances: one account of a scope and currency.
type balanceRow struct {
	bun.BaseModel `bun:"table:balances"`

	MerchantID  string    `bun:"merchant_id,pk"`
	Environment string    `bun:"environment,pk"`
	Currency    string    `bun:"currency,pk"`
	Account     string    `bun:"account,pk"`
	Amount      int64     `bun:"amount"`
	UpdatedAt   time.Time `bun:"updated_at"`
}

// balances folds rows, ordered by currency, into one Balance per currency.
func balances(scope paykit.Scope, rows []balanceRow) []paykit.Balance {
	out := []paykit.Balance{}
	for i := 0; i < len(rows); {
		j := i
		accounts := map[string]int64{}
		var updated time.Time
		for ; j < len(rows) && rows[j].Currency == rows[i].Currency; j++ {
			accounts[rows[j].Account] = rows[j].Amount
			if rows[j].UpdatedAt.After(updated) {
				updated = rows[j].UpdatedAt
			}
		}
		out = append(out, ledgertxn.NewBalance(scope, rows[i].Currency, accounts, updated))
		i = j
	}
	return out
}

// PostLedger implements paykit.Tx in one transaction (InTx's, or
// its own): a check that the id is free, one statement on the balance rows
// of the transaction's scope and currency (balanceStatement), one insert of
// the entries.
//
// The balance statement is what makes concurrent posts safe. When a debit
// is guarded (its account may not go below zero for the transaction's
// kind), the statement first locks the rows the transaction changes, in
// account order, then writes all of them only if every guarded one stays
// at or above zero: no row changed means ErrInsufficientFunds, with
// nothing written yet. On PostgreSQL the locking read waits for another
// transaction that holds a row and then reads the row as it committed it,
// so concurrent debits queue on the row and each sees the balance the
// previous one left: none can overdraw. Each post locks its rows in
// account order, so posts of one row set queue rather than deadlock (a
// deadlock between database transactions of several posts is
// ErrVersionConflict, mapError's). A transaction without a guarded debit
// is a plain upsert. On SQLite transactions hold the write lock from
// BEGIN, so posts simply take turns.
func (t tx) PostLedger(ctx context.Context, lt *paykit.LedgerTxn) error {
	changes, err := ledgertxn.Check(lt)
	if err != nil {
		return err
	}
	return t.atomic(ctx, func(t tx) error {
		taken, err := exists(ctx, t.db.NewSelect().Table("ledger_entries").Where("id = ?", ledgertxn.EntryID(lt.ID, 0)))
		if err != nil {
			return mapError("post ledger", err)
		}
		if taken {
			return &paykit.ConflictError{Entity: "ledger_txn", Key: "id"}
		}
		if err := t.applyBalance(ctx, lt, changes); err != nil {
			return err
		}
		entries := ledgertxn.Entries(lt)
		rows := make([]ledgerEntryRow, len(entries))
		for i, e := range entries {
			rows[i] = ledgerEntryRow{
				ID: e.ID, TxnID: e.TxnID, MerchantID: e.Scope.MerchantID, Environment: string(e.Scope.Environment),
				Currency: e.Currency, Account: e.Account, Amount: e.Amount, Kind: e.Kind, RefID: e.RefID, CreatedAt: e.CreatedAt,
			}
		}
		if _, err := t.db.NewInsert().Model(&rows).Exec(ctx); err != nil {
			err = mapError("post ledger", err)
			if errors.Is(err, paykit.ErrAlreadyExists) {
				// The balance is already written: this must roll back, so
				// it is no ErrAlreadyExists (which leaves a transaction usable).
				return fmt.Errorf("sqlstore: post ledger: transaction %s was posted concurrently: %v", lt.ID, err)
			}
			return err
		}
		return nil
	})
}

// applyBalance applies changes to the balance rows of lt's scope and
// currency.
func (t tx) applyBalance(ctx context.Context, lt *paykit.LedgerTxn, changes []ledgertxn.Change) error {
	if len(changes) == 0 {
		return nil
	}
	query, args := balanceStatement(t.pg, lt, changes)
	res, err := t.db.NewRaw(query, args...).Exec(ctx)
	if err != nil {
		return mapError("post ledger", err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return cmp.Or(mapError("post ledger", err), paykit.ErrInsufficientFunds)
	}
	return nil
}

// balanceStatement is the one statement that applies changes (by account
// name) to the balance rows of lt's scope and currency: an upsert of every
// row, which, when a change is guarded, writes nothing unless each guarded
// row exists and stays at or above zero. On PostgreSQL it first locks the
// rows it reads (FOR UPDATE), in account order.
//
//	WITH d (account, amount, guarded) AS (VALUES ...),
//	  h AS (SELECT account, amount FROM balances WHERE <scope, currency, accounts> ORDER BY account FOR UPDATE)
//	INSERT INTO balances (...) SELECT <scope, currency>, d.account, d.amount, <at> FROM d
//	WHERE (SELECT count(*) FROM d JOIN h ON h.account = d.account WHERE d.guarded AND h.amount + d.amount >= 0)
//	  = (SELECT count(*) FROM d WHERE d.guarded)
//	ORDER BY d.account
//	ON CONFLICT (merchant_id, environment, currency, account) DO UPDATE SET amount = balances.amount + excluded.amount, ...
func balanceStatement(pg bool, lt *paykit.LedgerTxn, changes []ledgertxn.Change) (string, []any) {
	scope := []any{lt.Scope.MerchantID, lt.Scope.Environment, lt.Currency}
	at := lt.At.UTC()
	var q strings.Builder
	var args []any
	guarded := slices.ContainsFunc(changes, func(c ledgertxn.Change) bool { return c.Guarded })
	if !guarded {
		q.WriteString("INSERT INTO balances (merchant_id, environment, currency, account, amount, updated_at) VALUES ")
		for i, c := range changes {
			if i > 0 {
				q.WriteString(", ")
			}
			q.WriteString("(?, ?, ?, ?, ?, ?)")
			args = append(append(args, scope...), c.Account, c.Amount, at)
		}
	} else {
		q.WriteString("WITH d (account, amount, guarded) AS (VALUES ")
		for i, c := range changes {
			if i > 0 {
				q.WriteString(", ")
			}
			q.WriteString("(?, CAST(? AS BIGINT), ?)")
			args = append(args, c.Account, c.Amount, c.Guarded)
		}
		q.WriteString("), h AS (SELECT account, amount FROM balances WHERE merchant_id = ? AND environment = ? AND currency = ? AND account IN (?) ORDER BY account")
		names := make([]string, len(changes))
		for i, c := range changes {
			names[i] = c.Account
		}
		args = append(append(args, scope...), bun.List(names))
		if pg {
			q.WriteString(" FOR UPDATE")
		}
		q.WriteString(`)
			INSERT INTO balances (merchant_id, environment, currency, account, amount, updated_at)
			SELECT ?, ?, ?, d.account, d.amount, ? FROM d
			WHERE (SELECT count(*) FROM d JOIN h ON h.account = d.account WHERE d.guarded AND h.amount + d.amount >= 0)
				= (SELECT count(*) FROM d WHERE d.guarded)
			ORDER BY d.account`)
		args = append(append(args, scope...), at)
	}
	q.WriteString(` ON CONFLICT (merchant_id, environment, currency, account) DO UPDATE SET amount = balances.amount + excluded.amount,
		updated_at = excluded.updated_at`)
	return q.String(), args
}

// GetBalance implements paykit.Tx.
func (t tx) GetBalance(ctx context.Context, scope paykit.Scope, currency string) (*paykit.Balance, error) {
	var rows []balanceRow
	if err := inScope(t.db.NewSelect().Model(&rows), scope).Where("currency = ?", currency).Scan(ctx); err != nil {
		return nil, mapError("get balance", err)
	}
	if len(rows) == 0 {
		return &paykit.Balance{Scope: scope, Currency: currency}, nil
	}
	return &balances(scope, rows)[0], nil
}

// ListBalances implements paykit.Tx.
func (t tx) ListBalances(ctx context.Context, scope paykit.Scope) ([]paykit.Balance, error) {
	var rows []balanceRow
	if err := inScope(t.db.NewSelect().Model(&rows), scope).OrderExpr("currency").Scan(ctx); err != nil {
		return nil, mapError("list balances", err)
	}
	return balances(scope, rows), nil
}

// ListLedgerEntries implements paykit.Tx.
func (t tx) ListLedgerEntries(ctx context.Context, q paykit.LedgerQuery) ([]paykit.LedgerEntry, error) {
	var rows []ledgerEntryRow
	sel := t.db.NewSelect().Model(&rows)
	for _, f := range [][2]string{
		{"merchant_id", q.Scope.MerchantID}, {"environment", string(q.Scope.Environment)},
		{"currency", q.Currency}, {"ref_id", q.RefID},
	} {
		if f[1] != "" {
			sel = sel.Where("? = ?", bun.Ident(f[0]), f[1])
		}
	}
	if err := sel.OrderExpr("created_at, id").Scan(ctx); err != nil {
		return nil, mapError("list ledger entries", err)
	}
	out := make([]paykit.LedgerEntry, len(rows))
	for i, r := range rows {
		out[i] = paykit.LedgerEntry{
			ID: r.ID, TxnID: r.TxnID, Scope: paykit.Scope{MerchantID: r.MerchantID, Environment: paykit.Environment(r.Environment)},
			Currency: r.Currency, Account: r.Account, Amount: r.Amount, Kind: r.Kind, RefID: r.RefID, CreatedAt: r.CreatedAt.UTC(),
		}
	}
	return out, nil
}
