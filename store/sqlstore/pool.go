package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"github.com/paykit/paykit"
)

// pool bounds how long the Store waits for a connection. database/sql
// queues a caller for a free connection until its context ends, which for
// a request may be never; pool acquires with a deadline of wait instead and
// reports paykit.ErrUnavailable when none came free. It is the bun
// ConnResolver of every statement outside InTx and the source of InTx's
// connections.
type pool struct {
	db   *bun.DB
	wait time.Duration
}

var _ bun.ConnResolver = (*pool)(nil)

// conn takes a connection of the pool, waiting at most p.wait. The caller
// closes it (which returns it to the pool).
func (p *pool) conn(ctx context.Context) (bun.Conn, error) {
	wctx, cancel := context.WithTimeout(ctx, p.wait)
	defer cancel()
	c, err := p.db.Conn(wctx)
	if err != nil {
		return bun.Conn{}, p.acquireError(ctx, wctx, err)
	}
	return c, nil
}

// acquireError tells the pool's timeout (overload) from the caller's own
// context ending and from a failure to connect.
func (p *pool) acquireError(ctx, wctx context.Context, err error) error {
	if ctx.Err() == nil && wctx.Err() != nil {
		return fmt.Errorf("%w: no free database connection within %s", paykit.ErrUnavailable, p.wait)
	}
	return mapError("connect", err)
}

// ResolveConn implements bun.ConnResolver: every statement outside a
// transaction runs through p.
func (p *pool) ResolveConn(context.Context, bun.Query) bun.IConn { return p }

// Close implements bun.ConnResolver; the pool belongs to the bun.DB.
func (p *pool) Close() error { return nil }

// ExecContext runs query on a connection taken with a bounded wait.
func (p *pool) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	c, err := p.conn(ctx)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return c.Conn.ExecContext(ctx, query, args...)
}

// QueryContext runs query on a connection taken with a bounded wait. The
// connection goes back to the pool when the rows are closed.
func (p *pool) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	c, err := p.conn(ctx)
	if err != nil {
		return nil, err
	}
	rows, err := c.Conn.QueryContext(ctx, query, args...)
	if err != nil {
		c.Close()
		return nil, err
	}
	// sql.Conn.Close waits for the open rows to close; bun reads and closes
	// them before the query method returns.
	go c.Close()
	return rows, nil
}

// QueryRowContext runs query with database/sql's own wait: a *sql.Row
// cannot carry the pool's error. bun uses it for Exists and Count only,
// which the Store's statements outside a transaction avoid (see exists).
func (p *pool) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	return p.db.DB.QueryRowContext(ctx, query, args...)
}
