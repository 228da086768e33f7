package sqlstore

import (
	"context"
	"database/sql"
	"errors"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/schema"

	"github.com/paykit/paykit"
)

// WrapTx makes the host's transaction btx a paykit.Tx for the Service's
// …Tx calls (CreateCheckoutTx, CreatePaymentIntentTx,
// CreatePayoutIntentTx): what they write commits or rolls back with btx.
// btx must be on the Store's database (paykit's tables migrated there).
// The host begins, commits and rolls back btx; paykit never does.
func (s *Store) WrapTx(btx bun.Tx) paykit.Tx { return tx{db: btx, pg: s.pg} }

// WrapSQLTx is WrapTx for a database/sql transaction begun on the Store's
// database (s.DB().DB).
func (s *Store) WrapSQLTx(stx *sql.Tx) paykit.Tx {
	return tx{db: sqlTxDB{db: s.db, tx: stx}, pg: s.pg}
}

// sqlTxDB runs bun's queries on a database/sql transaction: every builder
// is the Store's own with the transaction as its connection.
type sqlTxDB struct {
	db *bun.DB
	tx *sql.Tx
}

var _ bun.IDB = sqlTxDB{}

// errNested: paykit never begins a transaction inside a host's.
var errNested = errors.New("sqlstore: a wrapped host transaction cannot begin another")

func (d sqlTxDB) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return d.tx.ExecContext(ctx, query, args...)
}

func (d sqlTxDB) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return d.tx.QueryContext(ctx, query, args...)
}

func (d sqlTxDB) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	return d.tx.QueryRowContext(ctx, query, args...)
}

func (d sqlTxDB) Dialect() schema.Dialect { return d.db.Dialect() }

func (d sqlTxDB) NewValues(model any) *bun.ValuesQuery { return d.db.NewValues(model).Conn(d.tx) }
func (d sqlTxDB) NewSelect() *bun.SelectQuery          { return d.db.NewSelect().Conn(d.tx) }
func (d sqlTxDB) NewInsert() *bun.InsertQuery          { return d.db.NewInsert().Conn(d.tx) }
func (d sqlTxDB) NewUpdate() *bun.UpdateQuery          { return d.db.NewUpdate().Conn(d.tx) }
func (d sqlTxDB) NewDelete() *bun.DeleteQuery          { return d.db.NewDelete().Conn(d.tx) }
func (d sqlTxDB) NewMerge() *bun.MergeQuery            { return d.db.NewMerge().Conn(d.tx) }
func (d sqlTxDB) NewRaw(query string, args ...any) *bun.RawQuery {
	return d.db.NewRaw(query, args...).Conn(d.tx)
}
func (d sqlTxDB) NewCreateTable() *bun.CreateTableQuery { return d.db.NewCreateTable().Conn(d.tx) }
func (d sqlTxDB) NewDropTable() *bun.DropTableQuery     { return d.db.NewDropTable().Conn(d.tx) }
func (d sqlTxDB) NewCreateIndex() *bun.CreateIndexQuery { return d.db.NewCreateIndex().Conn(d.tx) }
func (d sqlTxDB) NewDropIndex() *bun.DropIndexQuery     { return d.db.NewDropIndex().Conn(d.tx) }
func (d sqlTxDB) NewTruncateTable() *bun.TruncateTableQuery {
	return d.db.NewTruncateTable().Conn(d.tx)
}
func (d sqlTxDB) NewAddColumn() *bun.AddColumnQuery   { return d.db.NewAddColumn().Conn(d.tx) }
func (d sqlTxDB) NewDropColumn() *bun.DropColumnQuery { return d.db.NewDropColumn().Conn(d.tx) }

func (d sqlTxDB) BeginTx(context.Context, *sql.TxOptions) (bun.Tx, error) {
	return bun.Tx{}, errNested
}

func (d sqlTxDB) RunInTx(context.Context, *sql.TxOptions, func(context.Context, bun.Tx) error) error {
	return errNested
}
