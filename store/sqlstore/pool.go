package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/internal/workctx"
)

// pool bounds how long the Store waits for a connection. database/sql
// queues a caller for a free connection until its context ends, which for
// a request may be never; pool admits at most as many operations as the
// pool has connections, waiting at most wait for a slot, and reports
// paykit.ErrUnavailable when none came free. An admitted operation then
// finds a connection at once. It is the bun ConnResolver of every statement
// outside InTx, and InTx takes a slot for its transaction. The worker's
// operations (contexts marked by workctx) take their slots from a share of
// their own, work, when the Store has one.
type pool struct {
	db    *bun.DB
	slots chan struct{}
	work  chan struct{} // nil: the worker shares slots
	wait  time.Duration
	// writer, on SQLite, admits one writing transaction or statement of
	// this process at a time, so that writers queue here in turn instead
	// of polling the database's lock under busy_timeout; nil on PostgreSQL.
	// Other processes on the file still meet busy_timeout.
	writer     chan struct{}
	writerWait time.Duration
}

var _ bun.ConnResolver = (*pool)(nil)

// newPool admits size operations at once, and work more of the worker's
// (0: the worker's take the same size slots).
func newPool(db *bun.DB, size, work int, wait time.Duration) *pool {
	p := &pool{db: db, slots: make(chan struct{}, size), wait: wait}
	if work > 0 {
		p.work = make(chan struct{}, work)
	}
	return p
}

// share is the slots ctx's operations take.
func (p *pool) share(ctx context.Context) chan struct{} {
	if p.work != nil && workctx.Is(ctx) {
		return p.work
	}
	return p.slots
}

// acquire takes a slot of ctx's share, waiting at most p.wait; release
// gives it back.
func (p *pool) acquire(ctx context.Context) (slots chan struct{}, err error) {
	slots = p.share(ctx)
	select {
	case slots <- struct{}{}: // the usual case: no timer needed
		return slots, nil
	default:
	}
	t := time.NewTimer(p.wait)
	defer t.Stop()
	select {
	case slots <- struct{}{}:
		return slots, nil
	case <-ctx.Done():
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			// The caller's own time ran out waiting: still overload.
			return nil, fmt.Errorf("%w: no free database connection before the deadline", paykit.ErrUnavailable)
		}
		return nil, ctx.Err() // the caller went away
	case <-t.C:
		return nil, fmt.Errorf("%w: no free database connection within %s", paykit.ErrUnavailable, p.wait)
	}
}

// release gives back a slot that acquire took from slots.
func release(slots chan struct{}) { <-slots }

// acquireWriter takes the writer turn on SQLite, waiting at most
// p.writerWait; a no-op on PostgreSQL.
func (p *pool) acquireWriter(ctx context.Context) error {
	if p.writer == nil {
		return nil
	}
	select {
	case p.writer <- struct{}{}:
		return nil
	default:
	}
	t := time.NewTimer(p.writerWait)
	defer t.Stop()
	select {
	case p.writer <- struct{}{}:
		return nil
	case <-ctx.Done():
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return fmt.Errorf("%w: the database's write lock was not free before the deadline", paykit.ErrUnavailable)
		}
		return ctx.Err()
	case <-t.C:
		return fmt.Errorf("%w: the database's write lock was not free within %s", paykit.ErrUnavailable, p.writerWait)
	}
}

func (p *pool) releaseWriter() {
	if p.writer != nil {
		<-p.writer
	}
}

// admit takes what a statement outside a transaction needs: the writer
// turn first when it may write (on SQLite), then a connection slot. done
// gives both back.
func (p *pool) admit(ctx context.Context, query string) (done func(), err error) {
	write := p.writer != nil && !isRead(query)
	if write {
		if err := p.acquireWriter(ctx); err != nil {
			return nil, err
		}
	}
	slots, err := p.acquire(ctx)
	if err != nil {
		if write {
			p.releaseWriter()
		}
		return nil, err
	}
	return func() {
		release(slots)
		if write {
			p.releaseWriter()
		}
	}, nil
}

// isRead reports whether query only reads: a SELECT (bun writes its
// keywords in capitals). Anything else is taken as a write.
func isRead(query string) bool {
	return strings.HasPrefix(strings.TrimLeft(query, " \t\r\n("), "SELECT ")
}

// ResolveConn implements bun.ConnResolver: every statement outside a
// transaction runs through p.
func (p *pool) ResolveConn(context.Context, bun.Query) bun.IConn { return p }

// Close implements bun.ConnResolver; the pool belongs to the bun.DB.
func (p *pool) Close() error { return nil }

// ExecContext runs query once admitted.
func (p *pool) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	done, err := p.admit(ctx, query)
	if err != nil {
		return nil, err
	}
	defer done()
	return p.db.DB.ExecContext(ctx, query, args...)
}

// QueryContext runs query once admitted. The slot is given back when the
// query returns, a little before its connection (bun reads and closes the
// rows at once), so the pool may briefly see one more caller than slots.
func (p *pool) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	done, err := p.admit(ctx, query)
	if err != nil {
		return nil, err
	}
	defer done()
	return p.db.DB.QueryContext(ctx, query, args...)
}

// QueryRowContext runs query with database/sql's own wait: a *sql.Row
// cannot carry the pool's error. bun uses it for Exists and Count only,
// which the Store's statements outside a transaction avoid (see exists).
func (p *pool) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	return p.db.DB.QueryRowContext(ctx, query, args...)
}
