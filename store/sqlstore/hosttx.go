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
	return tx{db: connDB{db: s.db, conn: stx}, pg: s.pg}
}

// connDB is a bun.IDB whose statements run on conn: every builder is the
// Store's own, with conn as its connection, and a statement given with
// bun's ? arguments is formatted as bun formats it. conn is a host's
// database/sql transaction (WrapSQLTx), a batched transaction's connection
// (batchConn) or a grouped one's (groupConn).
type connDB struct {
	db   *bun.DB
	conn bun.IConn
}

var _ bun.IDB = connDB{}

// errNested: paykit never begins a transaction inside another.
var errNested = errors.New("sqlstore: a wrapped host transaction cannot begin another")

func (d connDB) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return d.conn.ExecContext(ctx, d.db.QueryGen().FormatQuery(query, args...))
}

func (d connDB) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return d.conn.QueryContext(ctx, d.db.QueryGen().FormatQuery(query, args...))
}

func (d connDB) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	return d.conn.QueryRowContext(ctx, d.db.QueryGen().FormatQuery(query, args...))
}

func (d connDB) Dialect() schema.Dialect { return d.db.Dialect() }

func (d connDB) NewValues(model any) *bun.ValuesQuery { return d.db.NewValues(model).Conn(d.conn) }
func (d connDB) NewSelect() *bun.SelectQuery          { return d.db.NewSelect().Conn(d.conn) }
func (d connDB) NewInsert() *bun.InsertQuery          { return d.db.NewInsert().Conn(d.conn) }
func (d connDB) NewUpdate() *bun.UpdateQuery          { return d.db.NewUpdate().Conn(d.conn) }
func (d connDB) NewDelete() *bun.DeleteQuery          { return d.db.NewDelete().Conn(d.conn) }
func (d connDB) NewMerge() *bun.MergeQuery            { return d.db.NewMerge().Conn(d.conn) }
func (d connDB) NewRaw(query string, args ...any) *bun.RawQuery {
	return d.db.NewRaw(query, args...).Conn(d.conn)
}
func (d connDB) NewCreateTable() *bun.CreateTableQuery { return d.db.NewCreateTable().Conn(d.conn) }
func (d connDB) NewDropTable() *bun.DropTableQuery     { return d.db.NewDropTable().Conn(d.conn) }
func (d connDB) NewCreateIndex() *bun.CreateIndexQuery { return d.db.NewCreateIndex().Conn(d.conn) }
func (d connDB) NewDropIndex() *bun.DropIndexQuery     { return d.db.NewDropIndex().Conn(d.conn) }
func (d connDB) NewTruncateTable() *bun.TruncateTableQuery {
	return d.db.NewTruncateTable().Conn(d.conn)
}
func (d connDB) NewAddColumn() *bun.AddColumnQuery   { return d.db.NewAddColumn().Conn(d.conn) }
func (d connDB) NewDropColumn() *bun.DropColumnQuery { return d.db.NewDropColumn().Conn(d.conn) }

func (d connDB) BeginTx(context.Context, *sql.TxOptions) (bun.Tx, error) {
	return bun.Tx{}, errNested
}

func (d connDB) RunInTx(context.Context, *sql.TxOptions, func(context.Context, bun.Tx) error) error {
	return errNested
}
