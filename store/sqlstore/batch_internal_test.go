package sqlstore

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/paykit/paykit"
)

// TestBatchedTransactions: on PostgreSQL a transaction's held writes fail
// as the unbatched run reports them; a transaction whose held write
// collides runs again unbatched and sees the collision at the call; a
// failed transaction leaves nothing behind and its connection usable.
func TestBatchedTransactions(t *testing.T) {
	t.Parallel()
	s := openPostgres(t)
	s.db.SetMaxOpenConns(1) // every transaction on the same session
	ctx := context.Background()
	scope := paykit.Scope{MerchantID: "mch_b", Environment: paykit.Test}
	now := time.Date(2026, 6, 1, 8, 0, 0, 0, time.UTC)
	record := func(key string) *paykit.IdempotencyRecord {
		return &paykit.IdempotencyRecord{Scope: scope, Key: key, Fingerprint: "fp", State: paykit.IdempotencyInProgress,
			RecoveryPoint: "started", CreatedAt: now, UpdatedAt: now, ExpiresAt: now.Add(time.Hour)}
	}

	t.Run("held writes commit in one round trip and are read back", func(t *testing.T) {
		is := is.New(t)
		runs := 0
		var readBack int64
		err := s.InTx(ctx, func(tx paykit.Tx) error {
			runs++
			if err := tx.CreateIdempotencyRecord(ctx, record("a")); err != nil {
				return err
			}
			got, err := tx.GetIdempotencyRecord(ctx, scope, "a") // sends the held insert first
			if err != nil {
				return err
			}
			readBack = got.Version
			got.State = paykit.IdempotencyComplete
			return tx.UpdateIdempotencyRecord(ctx, got)
		})
		is.NoErr(err)
		is.Equal(runs, 1)
		got, err := s.GetIdempotencyRecord(ctx, scope, "a")
		is.NoErr(err)
		is.Equal(got.State, paykit.IdempotencyComplete)
		is.Equal(got.Version, readBack+1)
	})

	t.Run("a held insert that collides is seen at the call in a second run", func(t *testing.T) {
		is := is.New(t)
		var seen []error
		err := s.InTx(ctx, func(tx paykit.Tx) error {
			err := tx.CreateIdempotencyRecord(ctx, record("a"))
			seen = append(seen, err)
			if errors.Is(err, paykit.ErrAlreadyExists) {
				return tx.CreateIdempotencyRecord(ctx, record("b"))
			}
			return err
		})
		is.NoErr(err)
		is.Equal(len(seen), 2)                               // held, then run again unbatched
		is.NoErr(seen[0])                                    // the batched run could not know
		is.True(errors.Is(seen[1], paykit.ErrAlreadyExists)) // the unbatched one does
		_, err = s.GetIdempotencyRecord(ctx, scope, "b")
		is.NoErr(err)
	})

	t.Run("a held versioned update of a stale version conflicts", func(t *testing.T) {
		is := is.New(t)
		stale, err := s.GetIdempotencyRecord(ctx, scope, "b")
		is.NoErr(err)
		cur := *stale
		is.NoErr(s.UpdateIdempotencyRecord(ctx, &cur))
		runs := 0
		err = s.InTx(ctx, func(tx paykit.Tx) error {
			runs++
			c := *stale
			return tx.UpdateIdempotencyRecord(ctx, &c)
		})
		is.True(errors.Is(err, paykit.ErrVersionConflict))
		is.Equal(runs, 2)
	})

	t.Run("fn's own error rolls back what it held", func(t *testing.T) {
		is := is.New(t)
		boom := errors.New("boom")
		err := s.InTx(ctx, func(tx paykit.Tx) error {
			if err := tx.CreateIdempotencyRecord(ctx, record("c")); err != nil {
				return err
			}
			return boom
		})
		is.Equal(err, boom)
		_, err = s.GetIdempotencyRecord(ctx, scope, "c")
		is.True(errors.Is(err, paykit.ErrNotFound))
	})

	t.Run("a failed batch leaves the session idle", func(t *testing.T) {
		is := is.New(t)
		err := s.InTx(ctx, func(tx paykit.Tx) error {
			if err := tx.CreateIdempotencyRecord(ctx, record("a")); err != nil { // collides: aborts the batch
				return err
			}
			_, err := tx.GetIdempotencyRecord(ctx, scope, "a")
			return err
		})
		is.True(errors.Is(err, paykit.ErrAlreadyExists)) // from the unbatched run
		var status string
		is.NoErr(s.db.NewRaw("SELECT 'idle'").Scan(ctx, &status)) // the one session is usable
		is.Equal(status, "idle")
	})
}
