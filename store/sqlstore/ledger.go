package sqlstore

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
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

// balanceRow is a row of balances: the merchant accounts of a scope and
// currency.
type balanceRow struct {
	bun.BaseModel `bun:"table:balances"`

	MerchantID  string    `bun:"merchant_id,pk"`
	Environment string    `bun:"environment,pk"`
	Currency    string    `bun:"currency,pk"`
	Available   int64     `bun:"available"`
	Reserved    int64     `bun:"reserved"`
	UpdatedAt   time.Time `bun:"updated_at"`
}

func (r *balanceRow) balance() paykit.Balance {
	return paykit.Balance{
		Scope:    paykit.Scope{MerchantID: r.MerchantID, Environment: paykit.Environment(r.Environment)},
		Currency: r.Currency, Available: r.Available, Reserved: r.Reserved, UpdatedAt: r.UpdatedAt.UTC(),
	}
}

// PostLedger implements paykit.LedgerStore in one transaction (InTx's, or
// its own): a check that the id is free, one statement on the balance row
// of the transaction's scope and currency, one insert of the entries.
//
// The balance statement is what makes concurrent posts safe. A debit is
//
//	UPDATE balances SET available = available + d ... WHERE <row> AND available + d >= 0 AND reserved + r >= 0
//
// and no row changed means ErrInsufficientFunds, with nothing written yet.
// On PostgreSQL the UPDATE takes the row lock and, when another
// transaction changed the row meanwhile, re-checks its WHERE against the
// committed row before it writes, so concurrent debits queue on the row
// and each sees the balance the previous one left: none can overdraw.
// Every transaction touches one balance row, so posts cannot deadlock one
// another. A credit (nothing goes down) is an upsert. On SQLite
// transactions hold the write lock from BEGIN, so posts simply take turns.
// CHECK constraints (available >= 0, reserved >= 0) back the rule up.
func (t tx) PostLedger(ctx context.Context, lt *paykit.LedgerTxn) error {
	d, err := ledgertxn.Check(lt)
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
		if err := t.applyBalance(ctx, lt, d); err != nil {
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

// applyBalance applies d to the balance row of lt's scope and currency.
func (t tx) applyBalance(ctx context.Context, lt *paykit.LedgerTxn, d ledgertxn.Delta) error {
	at := lt.At.UTC()
	switch {
	case d.Zero():
		return nil
	case d.Credit():
		_, err := t.db.NewRaw(`INSERT INTO balances (merchant_id, environment, currency, available, reserved, updated_at)
			VALUES (?, ?, ?, ?, ?, ?)
			ON CONFLICT (merchant_id, environment, currency) DO UPDATE SET available = balances.available + excluded.available,
			reserved = balances.reserved + excluded.reserved, updated_at = excluded.updated_at`,
			lt.Scope.MerchantID, lt.Scope.Environment, lt.Currency, d.Available, d.Reserved, at).Exec(ctx)
		return mapError("post ledger", err)
	}
	res, err := inScope(t.db.NewUpdate().Table("balances"), lt.Scope).Where("currency = ?", lt.Currency).
		Set("available = available + ?", d.Available).Set("reserved = reserved + ?", d.Reserved).Set("updated_at = ?", at).
		Where("available + ? >= 0", d.Available).Where("reserved + ? >= 0", d.Reserved).
		Exec(ctx)
	if err != nil {
		return mapError("post ledger", err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return cmp.Or(mapError("post ledger", err), paykit.ErrInsufficientFunds)
	}
	return nil
}

// GetBalance implements paykit.LedgerStore.
func (t tx) GetBalance(ctx context.Context, scope paykit.Scope, currency string) (*paykit.Balance, error) {
	var row balanceRow
	err := inScope(t.db.NewSelect().Model(&row), scope).Where("currency = ?", currency).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return &paykit.Balance{Scope: scope, Currency: currency}, nil
	}
	if err != nil {
		return nil, mapError("get balance", err)
	}
	b := row.balance()
	return &b, nil
}

// ListBalances implements paykit.LedgerStore.
func (t tx) ListBalances(ctx context.Context, scope paykit.Scope) ([]paykit.Balance, error) {
	var rows []balanceRow
	if err := inScope(t.db.NewSelect().Model(&rows), scope).OrderExpr("currency").Scan(ctx); err != nil {
		return nil, mapError("list balances", err)
	}
	out := make([]paykit.Balance, len(rows))
	for i := range rows {
		out[i] = rows[i].balance()
	}
	return out, nil
}

// ListLedgerEntries implements paykit.LedgerStore.
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
