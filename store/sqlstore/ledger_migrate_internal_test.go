package sqlstore

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/paykit/paykit"
)

// TestBalanceAccountsMigration upgrades a database whose balances predate
// migration 0020 (a column per account): each balance becomes a row per
// account with its amount and time, and posts go on from there.
func TestBalanceAccountsMigration(t *testing.T) {
	t.Parallel()
	onOldSchemas(t, 20, func(t *testing.T, s *Store) {
		is := is.New(t)
		ctx := context.Background()
		then := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		_, err := s.db.ExecContext(ctx, `INSERT INTO balances (merchant_id, environment, currency, available, reserved, updated_at)
			VALUES ('mch_1', 'test', 'THB', 700, 300, ?), ('mch_1', 'test', 'MYR', 5, 0, ?)`, then, then.Add(time.Hour))
		is.NoErr(err)
		is.NoErr(s.Migrate(ctx))

		scope := paykit.Scope{MerchantID: "mch_1", Environment: paykit.Test}
		balances, err := s.ListBalances(ctx, scope)
		is.NoErr(err)
		is.Equal(balances, []paykit.Balance{
			{Scope: scope, Currency: "MYR", Available: 5, Accounts: map[string]int64{"available": 5, "reserved": 0}, UpdatedAt: then.Add(time.Hour)},
			{Scope: scope, Currency: "THB", Available: 700, Reserved: 300, Accounts: map[string]int64{"available": 700, "reserved": 300}, UpdatedAt: then},
		})
		move := func(id string, amount int64) error {
			return s.PostLedger(ctx, &paykit.LedgerTxn{ID: id, Scope: scope, Currency: "THB", Kind: "payout.reserved", RefID: "po_" + id, At: then.Add(time.Minute),
				Postings: []paykit.Posting{{Account: paykit.AccountAvailable, Amount: -amount}, {Account: paykit.AccountReserved, Amount: amount}}})
		}
		is.True(errors.Is(move("ltx_1", 701), paykit.ErrInsufficientFunds))
		is.NoErr(move("ltx_2", 700))
		b, err := s.GetBalance(ctx, scope, "THB")
		is.NoErr(err)
		is.Equal(b.Accounts, map[string]int64{"available": 0, "reserved": 1_000})
		is.Equal(b.UpdatedAt, then.Add(time.Minute))
	})
}
