package sqlstore

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"sync"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/uptrace/bun"
)

// On PostgreSQL a transaction of InTx is first run batched: its inserts
// and versioned updates, whose only answer is success or failure, are held
// back and sent together with the next statement that needs an answer, or
// with COMMIT, as one multi-statement query; BEGIN goes with the first of
// them. A create's first transaction is then one round trip instead of
// five. A held statement fails on the server, not in Go: an insert that
// collides raises a unique violation, and a versioned update that changes
// no row divides by zero (heldUpdate). When fn fails, what it holds is
// sent before the rollback, since fn may have failed for want of a held
// write's answer. When anything sent in a batch fails on the server, the
// transaction is rolled back and fn runs again, in a
// transaction whose statements are sent one by one, which reports the
// failure as the Store's methods always do (ErrAlreadyExists with its key,
// ErrVersionConflict, ErrNotFound). A batch that fails on the way (the
// connection, the context) is not run again: whether its COMMIT took
// effect is unknown, as for any commit.

// batch is the state of one batched transaction.
type batch struct {
	conn  bun.Conn // the transaction's connection; its ExecContext is hooked
	buf   []byte   // the statements not sent yet, joined by ";\n", BEGIN first until sent
	held  int      // how many
	begun bool     // BEGIN was sent (with the first flush)
	rerun bool     // a batch failed on the server: run fn again, unbatched
}

// hold queues query, to be sent with the next statement or COMMIT.
func (b *batch) hold(query string) {
	b.holdPrepared(func(buf []byte) ([]byte, bool) { return append(buf, query...), true })
}

// holdPrepared queues the statement add appends to the held ones, unless
// add is false.
func (b *batch) holdPrepared(add func([]byte) ([]byte, bool)) bool {
	n := len(b.buf)
	if b.held > 0 {
		b.buf = append(b.buf, ";\n"...)
	}
	buf, ok := add(b.buf)
	if !ok {
		b.buf = b.buf[:n]
		return false
	}
	b.buf = buf
	b.held++
	return true
}

// drop forgets the held statements.
func (b *batch) drop() { b.buf, b.held = b.buf[:0], 0 }

// flush sends the held statements, if any, as one query.
func (b *batch) flush(ctx context.Context) error {
	if b.held == 0 {
		return nil
	}
	query := string(b.buf) // a copy: the query hooks may keep it
	b.begun = true         // BEGIN is the first statement held
	b.drop()
	if _, err := b.conn.ExecContext(ctx, query); err != nil {
		if serverError(err) {
			b.rerun = true
		}
		// Not wrapped: no caller may read a held statement's failure as
		// its own statement's (the unbatched run reports it).
		return fmt.Errorf("sqlstore: batched statements failed: %v", err)
	}
	return nil
}

// serverError reports whether err is the server's answer to a statement
// (pgx's, or pgdriver's for a host's bun.DB on it): the server ended the
// transaction's batch, and no COMMIT of it took effect.
func serverError(err error) bool {
	var pgxErr *pgconn.PgError
	var drvErr pgError
	return errors.As(err, &pgxErr) || errors.As(err, &drvErr)
}

// heldUpdate is the statement that holds back q, a versioned UPDATE: it
// fails, with division_by_zero, when q changes no row.
func heldUpdate(q *bun.UpdateQuery) string {
	return "WITH u AS (" + q.Returning("1").String() + ") SELECT 1 / count(*) FROM u"
}

// batchBuffers hold the buffers batches build their queries in; one that
// grew past maxBatchBuffer is not kept.
var batchBuffers = sync.Pool{New: func() any { return new([]byte) }}

const maxBatchBuffer = 64 << 10

// runBatched runs fn in a batched transaction on a connection of its own.
// rerun reports that it failed on the server: fn is to run again
// unbatched; err is then only what the batch met.
func (s *Store) runBatched(ctx context.Context, fn func(t tx) error) (rerun bool, err error) {
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return false, mapError("begin", err)
	}
	buf := batchBuffers.Get().(*[]byte)
	b := &batch{conn: conn, buf: (*buf)[:0]}
	b.hold("BEGIN")
	defer func() {
		s.endBatch(conn, b)
		if cap(b.buf) <= maxBatchBuffer {
			*buf = b.buf[:0]
			batchBuffers.Put(buf)
		}
	}()
	var prep *prepared
	if s.prep != nil && s.prep.ready(ctx, s.db, conn) && s.prep.onConn(ctx, conn) {
		prep = s.prep
	}
	if err := fn(tx{db: connDB{db: s.db, conn: batchConn{b: b}}, pg: true, b: b, prep: prep}); err != nil {
		// fn may have failed for want of an answer a held write would
		// have given it: send them, then roll back. If one fails, the
		// unbatched run tells; if none does, fn met what it would have.
		if !b.rerun && b.held > 0 && (b.held > 1 || b.begun) { // more than BEGIN
			_ = b.flush(ctx)
		}
		return b.rerun, err
	}
	if b.held == 1 && !b.begun { // fn sent nothing
		b.drop()
		return false, nil
	}
	b.hold("COMMIT")
	if err := b.flush(ctx); err != nil {
		return b.rerun, err
	}
	b.begun = false // committed
	return false, nil
}

// endBatch rolls back what a batched transaction left open and returns its
// connection to the pool, or closes it when it cannot be made idle.
func (s *Store) endBatch(conn bun.Conn, b *batch) {
	if b.begun {
		// Its own context: the caller's may be what ended the transaction.
		ctx, cancel := context.WithTimeout(context.Background(), rollbackTimeout)
		defer cancel()
		if _, err := conn.Conn.ExecContext(ctx, "ROLLBACK"); err != nil {
			_ = conn.Raw(func(any) error { return driver.ErrBadConn }) // discard it
		}
	}
	_ = conn.Close()
}

// batchConn is the connection of a batched transaction as bun's builders
// see it: every statement that needs an answer first sends what is held.
type batchConn struct{ b *batch }

var _ bun.IConn = batchConn{}

func (c batchConn) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if err := c.b.flush(ctx); err != nil {
		return nil, err
	}
	return c.b.conn.Conn.ExecContext(ctx, query, args...)
}

func (c batchConn) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if err := c.b.flush(ctx); err != nil {
		return nil, err
	}
	return c.b.conn.Conn.QueryContext(ctx, query, args...)
}

func (c batchConn) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	if err := c.b.flush(ctx); err != nil {
		// A *sql.Row cannot be made with an error: the aborted
		// transaction fails this statement too.
		return c.b.conn.Conn.QueryRowContext(ctx, "SELECT 1 / 0")
	}
	return c.b.conn.Conn.QueryRowContext(ctx, query, args...)
}
