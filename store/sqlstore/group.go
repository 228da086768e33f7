package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
	"time"

	"github.com/uptrace/bun"

	"github.com/paykit/paykit"
)

// On SQLite the process's write transactions queue for the one writer, and
// whoever's turn it is runs every transaction queued by then (up to
// maxGroup) as one group: one database transaction, each of them in a
// savepoint of its own, and one commit, so one write of the log and one
// sync for the group instead of one per transaction. A transaction that
// fails is rolled back to its savepoint, and the others commit without it;
// each learns its own outcome only once the group's commit is done. A
// failed commit fails the group. The turn then passes to the next
// transaction queued, whose caller runs the next group, so nobody leads
// for longer than its own group. A transaction alone in its group runs
// without a savepoint.

// maxGroup bounds the transactions of one group.
const maxGroup = 64

// groupSavepoint is the savepoint of each transaction in a group.
const groupSavepoint = "paykit_group"

// writeQueue is the queue of write transactions on SQLite.
type writeQueue struct {
	mu      sync.Mutex
	queue   []*writeReq
	leading bool // some caller runs groups now
	groups  int  // groups run, for tests
}

// writeReq is one queued transaction.
type writeReq struct {
	ctx  context.Context
	fn   func(t tx) error
	wake chan struct{} // signalled when done, or when its caller is to lead

	// Guarded by writeQueue.mu.
	taken bool // in a group; it will be done
	done  bool
	leads bool
	err   error
}

// runQueued runs fn as a write transaction on SQLite; see writeQueue.
func (s *Store) runQueued(ctx context.Context, fn func(t tx) error) error {
	q := &s.writes
	r := &writeReq{ctx: ctx, fn: fn, wake: make(chan struct{}, 1)}
	q.mu.Lock()
	q.queue = append(q.queue, r)
	if !q.leading {
		q.leading, r.leads = true, true
	}
	q.mu.Unlock()
	var timeout <-chan time.Time
	for {
		q.mu.Lock()
		done, leads := r.done, r.leads
		q.mu.Unlock()
		if done {
			return r.outcome()
		}
		if leads {
			s.lead()
			continue
		}
		if timeout == nil {
			t := time.NewTimer(s.pool.writerWait)
			defer t.Stop()
			timeout = t.C
		}
		select {
		case <-r.wake:
		case <-ctx.Done():
			if q.abandon(r) {
				if ctx.Err() == context.DeadlineExceeded {
					return fmt.Errorf("%w: the database's write lock was not free before the deadline", paykit.ErrUnavailable)
				}
				return ctx.Err()
			}
			ctx = context.WithoutCancel(ctx) // taken: wait for its outcome
		case <-timeout:
			if q.abandon(r) {
				return fmt.Errorf("%w: the database's write lock was not free within %s", paykit.ErrUnavailable, s.pool.writerWait)
			}
		}
	}
}

// abandon takes r out of the queue unless it is in a group or leads.
func (q *writeQueue) abandon(r *writeReq) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if r.taken || r.leads || r.done {
		return false
	}
	for i, x := range q.queue {
		if x == r {
			q.queue = append(q.queue[:i], q.queue[i+1:]...)
			break
		}
	}
	return true
}

// lead runs one group of the queued transactions, then passes the turn to
// the next queued one, if any.
func (s *Store) lead() {
	q := &s.writes
	q.mu.Lock()
	n := min(len(q.queue), maxGroup)
	group := make([]*writeReq, n)
	copy(group, q.queue[:n])
	q.queue = append(q.queue[:0], q.queue[n:]...)
	for _, r := range group {
		r.taken, r.leads = true, false
	}
	q.groups++
	q.mu.Unlock()

	errs := s.runGroup(group)

	q.mu.Lock()
	for i, r := range group {
		r.done, r.err = true, errs[i]
	}
	if len(q.queue) > 0 {
		q.queue[0].leads = true
		wake(q.queue[0])
	} else {
		q.leading = false
	}
	q.mu.Unlock()
	for _, r := range group {
		wake(r)
	}
}

func wake(r *writeReq) {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// runGroup runs group's transactions as one and returns the outcome of
// each.
func (s *Store) runGroup(group []*writeReq) []error {
	errs := make([]error, len(group))
	fail := func(err error) []error {
		for i := range errs {
			errs[i] = err
		}
		return errs
	}
	// The group is everyone's: no caller's context ends it.
	ctx := context.Background()
	if err := s.pool.acquireWriter(ctx); err != nil {
		return fail(err)
	}
	defer s.pool.releaseWriter()
	slots, err := s.pool.acquire(ctx)
	if err != nil {
		return fail(err)
	}
	defer release(slots)
	if len(group) == 1 {
		r := group[0]
		errs[0] = protect(func() error { return s.runOne(r.ctx, r.fn) })
		return errs
	}
	btx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fail(mapError("begin", err))
	}
	t := tx{db: connDB{db: s.db, conn: groupConn{btx}}, prep: s.sqlitePrepared(), sqlTx: btx.Tx, detach: true}
	for i, r := range group {
		if err := r.ctx.Err(); err != nil {
			errs[i] = err // its caller has gone: it does not run
			continue
		}
		if _, err := btx.ExecContext(ctx, "SAVEPOINT "+groupSavepoint); err != nil {
			_ = btx.Rollback()
			return fail(mapError("savepoint", err))
		}
		errs[i] = protect(func() error { return r.fn(t) })
		if errs[i] != nil {
			if _, err := btx.ExecContext(ctx, "ROLLBACK TO "+groupSavepoint); err != nil {
				// SQLite rolled the whole transaction back (an I/O error,
				// a full disk): the group's work is lost.
				_ = btx.Rollback()
				return fail(mapError("rollback to savepoint", err))
			}
		}
		if _, err := btx.ExecContext(ctx, "RELEASE "+groupSavepoint); err != nil {
			_ = btx.Rollback()
			return fail(mapError("release savepoint", err))
		}
	}
	if err := btx.Commit(); err != nil {
		return fail(mapError("commit", err))
	}
	return errs
}

// runOne runs fn alone in a transaction, each statement sent as it comes.
// When fn fails or panics the transaction is rolled back, and the panic
// goes on.
func (s *Store) runOne(ctx context.Context, fn func(t tx) error) error {
	btx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return mapError("begin", err)
	}
	done := false
	defer func() {
		if !done { // fn failed or panicked
			_ = btx.Rollback()
		}
	}()
	if err := fn(tx{db: btx, pg: s.pg, prep: s.sqlitePrepared(), sqlTx: btx.Tx}); err != nil {
		return err
	}
	done = true
	if err := btx.Commit(); err != nil {
		return mapError("commit", err)
	}
	return nil
}

// sqlitePrepared is the Store's prepared statements on SQLite once built;
// nil on PostgreSQL, whose unbatched transactions send text.
func (s *Store) sqlitePrepared() *prepared {
	if s.pg || s.prep == nil {
		return nil
	}
	if !s.prep.built.Load() {
		return nil
	}
	return s.prep
}

// protect runs f, turning a panic into a *fnPanic error: a grouped
// transaction runs on another caller's goroutine, and its own caller
// panics with the value (writeReq.outcome).
func protect(f func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = &fnPanic{p}
		}
	}()
	return f()
}

// fnPanic carries the value a transaction's fn panicked with.
type fnPanic struct{ v any }

func (p *fnPanic) Error() string { return fmt.Sprintf("sqlstore: transaction panicked: %v", p.v) }

// outcome is r's result for its caller: a panic of its fn panics again.
func (r *writeReq) outcome() error {
	if p, ok := r.err.(*fnPanic); ok {
		panic(p.v)
	}
	return r.err
}

// groupConn runs a grouped transaction's statements on the group's
// transaction, never cancelled by the caller's context: SQLite answers an
// interrupted write inside a transaction by rolling the whole transaction
// back, which would lose the others' work. Statements are local and short.
type groupConn struct{ tx bun.Tx }

var _ bun.IConn = groupConn{}

func (c groupConn) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return c.tx.Tx.ExecContext(context.WithoutCancel(ctx), query, args...)
}

func (c groupConn) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return c.tx.Tx.QueryContext(context.WithoutCancel(ctx), query, args...)
}

func (c groupConn) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	return c.tx.Tx.QueryRowContext(context.WithoutCancel(ctx), query, args...)
}
