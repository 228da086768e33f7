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
	"github.com/uptrace/bun"

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

// TestRunInTx: a host's write transaction on the Store's database commits,
// or rolls back when it fails or panics; on SQLite it queues with paykit's
// own and commits in their group.
func TestRunInTx(t *testing.T) {
	for name, open := range map[string]func(testing.TB) *Store{"sqlite": openSQLite, "postgres": openPostgres} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			ctx := context.Background()
			s := open(t)
			_, err := s.db.ExecContext(ctx, "CREATE TABLE host_probe (k TEXT PRIMARY KEY)")
			is.NoErr(err)
			insert := func(k string) func(context.Context, bun.Tx) error {
				return func(ctx context.Context, tx bun.Tx) error {
					_, err := tx.ExecContext(ctx, "INSERT INTO host_probe (k) VALUES (?)", k)
					return err
				}
			}
			has := func(k string) bool {
				var n int
				is.NoErr(s.db.NewRaw("SELECT count(*) FROM host_probe WHERE k = ?", k).Scan(ctx, &n))
				return n == 1
			}
			boom := errors.New("boom")
			is.NoErr(s.RunInTx(ctx, insert("a")))
			err = s.RunInTx(ctx, func(ctx context.Context, tx bun.Tx) error {
				is.NoErr(insert("b")(ctx, tx))
				return boom
			})
			is.Equal(err, boom)
			func() {
				defer func() { is.Equal(recover(), "kaboom") }()
				_ = s.RunInTx(ctx, func(ctx context.Context, tx bun.Tx) error {
					is.NoErr(insert("c")(ctx, tx))
					panic("kaboom")
				})
			}()
			is.True(has("a"))
			is.True(!has("b"))
			is.True(!has("c"))

			// The Service's *Tx calls join it through WrapTx.
			scope := paykit.Scope{MerchantID: "mch_host", Environment: paykit.Test}
			now := time.Date(2026, 11, 25, 8, 0, 0, 0, time.UTC)
			is.NoErr(s.RunInTx(ctx, func(ctx context.Context, tx bun.Tx) error {
				if err := s.WrapTx(tx).CreateIdempotencyRecord(ctx, &paykit.IdempotencyRecord{Scope: scope, Key: "host-k",
					Fingerprint: "fp", State: paykit.IdempotencyInProgress, CreatedAt: now, UpdatedAt: now, ExpiresAt: now.Add(time.Hour)}); err != nil {
					return err
				}
				return insert("f")(ctx, tx)
			}))
			_, err = s.GetIdempotencyRecord(ctx, scope, "host-k")
			is.NoErr(err)
			is.True(has("f"))
			if s.pg {
				return
			}

			// Behind a paykit transaction that holds the writer, two
			// queue; they run as one group, the failing one alone undone.
			release, first := make(chan struct{}), make(chan error, 1)
			go func() { first <- s.InTx(ctx, func(paykit.Tx) error { <-release; return nil }) }()
			queued := func(n int) bool {
				s.writes.mu.Lock()
				defer s.writes.mu.Unlock()
				return len(s.writes.queue) == n && s.writes.leading
			}
			for !queued(0) {
				time.Sleep(time.Millisecond)
			}
			s.writes.mu.Lock()
			before := s.writes.groups
			s.writes.mu.Unlock()
			errs := make(chan error, 2)
			go func() { errs <- s.RunInTx(ctx, insert("d")) }()
			go func() {
				errs <- s.RunInTx(ctx, func(ctx context.Context, tx bun.Tx) error {
					is.NoErr(insert("e")(ctx, tx))
					return boom
				})
			}()
			for !queued(2) {
				time.Sleep(time.Millisecond)
			}
			close(release)
			is.NoErr(<-first)
			got := []error{<-errs, <-errs}
			is.True((got[0] == nil && got[1] == boom) || (got[0] == boom && got[1] == nil))
			s.writes.mu.Lock()
			is.Equal(s.writes.groups-before, 1) // d and e in one group
			s.writes.mu.Unlock()
			is.True(has("d"))
			is.True(!has("e"))
		})
	}
}
