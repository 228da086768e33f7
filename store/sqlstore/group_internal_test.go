package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/paykit/paykit"
)

// TestWriteGroups: on SQLite the write transactions queued while one runs
// commit together as the next group; one that fails or panics is rolled
// back alone, and its caller alone learns it.
func TestWriteGroups(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	s, err := Open(ctx, "sqlite:"+filepath.Join(t.TempDir(), "groups.db"))
	is.NoErr(err)
	t.Cleanup(func() { s.Close() })
	is.NoErr(s.Migrate(ctx))
	scope := paykit.Scope{MerchantID: "mch_g", Environment: paykit.Test}
	now := time.Date(2026, 6, 1, 8, 0, 0, 0, time.UTC)
	create := func(tx paykit.Tx, key string) error {
		return tx.CreateIdempotencyRecord(ctx, &paykit.IdempotencyRecord{Scope: scope, Key: key, Fingerprint: "fp",
			State: paykit.IdempotencyInProgress, RecoveryPoint: "started", CreatedAt: now, UpdatedAt: now, ExpiresAt: now.Add(time.Hour)})
	}

	// The first transaction holds the writer until the others queue.
	release := make(chan struct{})
	first := make(chan error, 1)
	go func() {
		first <- s.InTx(ctx, func(tx paykit.Tx) error {
			<-release
			return create(tx, "k-first")
		})
	}()
	waitFor := func(cond func() bool) {
		deadline := time.Now().Add(5 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatal("condition not met in 5 s")
			}
			time.Sleep(time.Millisecond)
		}
	}
	queued := func() int {
		s.writes.mu.Lock()
		defer s.writes.mu.Unlock()
		return len(s.writes.queue)
	}
	waitFor(func() bool { s.writes.mu.Lock(); defer s.writes.mu.Unlock(); return s.writes.groups == 1 })

	const n = 9
	errs := make([]error, n)
	panics := make([]any, n)
	var wg sync.WaitGroup
	boom := errors.New("boom")
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { panics[i] = recover() }()
			errs[i] = s.InTx(ctx, func(tx paykit.Tx) error {
				if err := create(tx, fmt.Sprintf("k-%d", i)); err != nil {
					return err
				}
				switch i % 3 {
				case 1:
					return boom // after its write: rolled back alone
				case 2:
					if i == 8 {
						panic("kaboom")
					}
				}
				return nil
			})
		}()
	}
	waitFor(func() bool { return queued() == n })
	close(release)
	wg.Wait()
	is.NoErr(<-first)

	s.writes.mu.Lock()
	groups := s.writes.groups
	s.writes.mu.Unlock()
	is.Equal(groups, 2) // the first alone, then the nine queued behind it as one
	for i := range n {
		_, err := s.GetIdempotencyRecord(ctx, scope, fmt.Sprintf("k-%d", i))
		switch {
		case i == 8:
			is.Equal(panics[i], "kaboom") // the panic reaches its own caller
			is.True(errors.Is(err, paykit.ErrNotFound))
		case i%3 == 1:
			is.Equal(errs[i], boom)
			is.True(errors.Is(err, paykit.ErrNotFound))
		default:
			is.NoErr(errs[i])
			is.Equal(panics[i], nil)
			is.NoErr(err) // committed with the group
		}
	}
	_, err = s.GetIdempotencyRecord(ctx, scope, "k-first")
	is.NoErr(err)
}

// TestSQLiteSettings: every SQLite connection of a Store runs in WAL with
// the Options' synchronous, foreign keys on, and temporary storage (the
// statement journal of a group's savepoints) in memory.
func TestSQLiteSettings(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	for sync, want := range map[string]int{"FULL": 2, "NORMAL": 1} {
		s, err := OpenWith(ctx, "sqlite:"+filepath.Join(t.TempDir(), "settings.db"), Options{SQLiteSynchronous: sync, MaxConns: 2})
		is.NoErr(err)
		t.Cleanup(func() { s.Close() })
		// Two connections at once: the settings are each connection's.
		c1, err := s.db.Conn(ctx)
		is.NoErr(err)
		c2, err := s.db.Conn(ctx)
		is.NoErr(err)
		for _, c := range []interface {
			QueryRowContext(context.Context, string, ...any) *sql.Row
		}{c1, c2} {
			var mode string
			var synchronous, fk, temp int
			is.NoErr(c.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode))
			is.NoErr(c.QueryRowContext(ctx, "PRAGMA synchronous").Scan(&synchronous))
			is.NoErr(c.QueryRowContext(ctx, "PRAGMA foreign_keys").Scan(&fk))
			is.NoErr(c.QueryRowContext(ctx, "PRAGMA temp_store").Scan(&temp))
			is.Equal(mode, "wal")
			is.Equal(synchronous, want)
			is.Equal(fk, 1)
			is.Equal(temp, 2) // MEMORY
		}
		is.NoErr(c1.Close())
		is.NoErr(c2.Close())
	}
}
