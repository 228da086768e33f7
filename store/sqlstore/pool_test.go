package sqlstore_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/sqlitedialect"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/internal/newid"
	"github.com/paykit/paykit/internal/pgtest"
	"github.com/paykit/paykit/internal/workctx"
	"github.com/paykit/paykit/store/sqlstore"
)

// openWith opens and migrates dsn with opts.
func openWith(t testing.TB, dsn string, opts sqlstore.Options) *sqlstore.Store {
	t.Helper()
	ctx := context.Background()
	s, err := sqlstore.OpenWith(ctx, dsn, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	return s
}

func sqlDSNs(t *testing.T) map[string]string {
	return map[string]string{
		"sqlite":   "sqlite:" + filepath.Join(t.TempDir(), "paykit.db"),
		"postgres": pgtest.Database(t),
	}
}

// TestPoolExhaustedIsUnavailable keeps every connection of a small pool
// busy in transactions (two on PostgreSQL; one on SQLite, which runs one
// transaction at a time) and checks that reads, writes and transactions
// wait ConnWait, then fail with ErrUnavailable having written nothing, and
// work again once the connections are back.
func TestPoolExhaustedIsUnavailable(t *testing.T) {
	for name, dsn := range sqlDSNs(t) {
		t.Run(name, func(t *testing.T) {
			is := is.New(t)
			ctx := context.Background()
			n := map[string]int{"sqlite": 1, "postgres": 2}[name]
			s := openWith(t, dsn, sqlstore.Options{MaxConns: n, ConnWait: 100 * time.Millisecond})
			release := holdTx(t, s, ctx, n)
			m := &paykit.Merchant{ID: "mch_busy", Name: "Busy", CreatedAt: time.UnixMilli(1e12).UTC()}
			waitForUnavailable := func(err error) {
				t.Helper()
				is.True(errors.Is(err, paykit.ErrUnavailable))
			}
			_, err := s.GetMerchant(ctx, "mch_any")
			waitForUnavailable(err) // a read
			waitForUnavailable(s.CreateMerchant(ctx, m))
			waitForUnavailable(s.InTx(ctx, func(tx paykit.Tx) error { return tx.CreateMerchant(ctx, m) }))

			// The caller's own end is not overload.
			cctx, cancel := context.WithCancel(ctx)
			cancel()
			_, err = s.GetMerchant(cctx, "mch_any")
			is.True(err != nil && !errors.Is(err, paykit.ErrUnavailable))

			release()
			_, err = s.GetMerchant(ctx, "mch_busy")
			is.True(errors.Is(err, paykit.ErrNotFound)) // nothing was written
			is.NoErr(s.CreateMerchant(ctx, m))
		})
	}
}

// holdTx keeps n transactions of ctx open on s until the returned func is
// called.
func holdTx(t *testing.T, s *sqlstore.Store, ctx context.Context, n int) func() {
	release, inside := make(chan struct{}), make(chan struct{}, n)
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			err := s.InTx(ctx, func(tx paykit.Tx) error {
				inside <- struct{}{}
				<-release
				return nil
			})
			if err != nil {
				t.Error(err)
			}
		})
	}
	for range n {
		<-inside
	}
	return func() { close(release); wg.Wait() }
}

// TestPoolReusesConnections runs a burst of concurrent operations on a pool
// of three: the pool opens no more than its shares' connections and closes
// none for being idle, so sessions are reused rather than churned.
func TestPoolReusesConnections(t *testing.T) {
	for name, dsn := range sqlDSNs(t) {
		t.Run(name, func(t *testing.T) {
			is := is.New(t)
			ctx := context.Background()
			s := openWith(t, dsn, sqlstore.Options{MaxConns: 3, ConnWait: 30 * time.Second})
			var wg sync.WaitGroup
			errs := make(chan error, 64)
			for i := range 64 {
				wg.Go(func() {
					m := &paykit.Merchant{ID: fmt.Sprintf("mch_%d", i), Name: "M", CreatedAt: time.UnixMilli(1e12).UTC()}
					if err := s.InTx(ctx, func(tx paykit.Tx) error { return tx.CreateMerchant(ctx, m) }); err != nil {
						errs <- err
						return
					}
					if _, err := s.GetMerchant(ctx, m.ID); err != nil {
						errs <- err
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				is.NoErr(err)
			}
			st := s.DB().Stats()
			is.Equal(st.MaxOpenConnections, 3+sqlstore.DefaultWorkerConns) // the worker's share is open to it only
			// The requests' share; a query's slot goes back just before its
			// connection does (see QueryContext), so a burst may briefly
			// open some of the worker's share too, never more.
			open := 3 + sqlstore.DefaultWorkerConns
			is.True(st.OpenConnections <= open)
			is.Equal(st.MaxIdleClosed, int64(0)) // idle connections are kept, not closed and reopened
			is.Equal(st.MaxLifetimeClosed, int64(0))
			if name == "postgres" {
				var sessions int
				is.NoErr(s.DB().NewRaw("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()").Scan(ctx, &sessions))
				is.True(sessions <= open)
			}
		})
	}
}

// TestPostgresTooManyClients connects as a role limited to one session:
// the server's refusal of a second one (SQLSTATE 53300) is ErrUnavailable.
func TestPostgresTooManyClients(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	dsn := pgtest.Database(t)
	admin := openWith(t, dsn, sqlstore.Options{})
	role := "paykit_limited_" + strings.ToLower(newid.Random("r")[2:10])
	_, err := admin.DB().ExecContext(ctx, "CREATE ROLE "+role+" LOGIN CONNECTION LIMIT 1")
	is.NoErr(err)
	t.Cleanup(func() { _, _ = admin.DB().ExecContext(context.Background(), "DROP ROLE IF EXISTS "+role) })
	_, err = admin.DB().ExecContext(ctx, "GRANT ALL ON ALL TABLES IN SCHEMA public TO "+role)
	is.NoErr(err)

	u, err := url.Parse(dsn)
	is.NoErr(err)
	u.User = url.User(role)
	s, err := sqlstore.OpenWith(ctx, u.String(), sqlstore.Options{MaxConns: 4, ConnWait: 5 * time.Second})
	is.NoErr(err)
	defer s.Close()
	held, err := s.DB().DB.Conn(ctx) // the role's one session
	is.NoErr(err)
	defer held.Close()
	_, err = s.GetMerchant(ctx, "mch_any")
	is.True(errors.Is(err, paykit.ErrUnavailable))
	is.True(strings.Contains(err.Error(), "53300"))
}

// TestSQLiteBusyIsUnavailable holds SQLite's write lock in one Store: a
// writer of another Store on the same file waits BusyTimeout, then fails
// with ErrUnavailable having written nothing.
func TestSQLiteBusyIsUnavailable(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	dsn := "sqlite:" + filepath.Join(t.TempDir(), "paykit.db")
	a := openWith(t, dsn, sqlstore.Options{})
	b := openWith(t, dsn, sqlstore.Options{BusyTimeout: 50 * time.Millisecond})
	locked, release := make(chan struct{}), make(chan struct{})
	done := make(chan error)
	go func() {
		done <- a.InTx(ctx, func(tx paykit.Tx) error {
			close(locked)
			<-release
			return nil
		})
	}()
	<-locked
	m := &paykit.Merchant{ID: "mch_late", Name: "Late", CreatedAt: time.UnixMilli(1e12).UTC()}
	err := b.InTx(ctx, func(tx paykit.Tx) error { return tx.CreateMerchant(ctx, m) })
	is.True(errors.Is(err, paykit.ErrUnavailable))
	is.True(errors.Is(b.CreateMerchant(ctx, m), paykit.ErrUnavailable))
	close(release)
	is.NoErr(<-done)
	_, err = b.GetMerchant(ctx, "mch_late")
	is.True(errors.Is(err, paykit.ErrNotFound))
}

// TestHeartbeatNeedsWrites checks that a database that answers reads but
// refuses writes fails Heartbeat, which the Service's health check uses.
func TestHeartbeatNeedsWrites(t *testing.T) {
	ctx := context.Background()
	t.Run("sqlite", func(t *testing.T) {
		is := is.New(t)
		path := filepath.Join(t.TempDir(), "paykit.db")
		rw := openWith(t, "sqlite:"+path, sqlstore.Options{})
		is.NoErr(rw.Heartbeat(ctx, "wrk_1", time.UnixMilli(1e12).UTC()))
		is.NoErr(rw.Heartbeat(ctx, "wrk_1", time.UnixMilli(2e12).UTC())) // again: an upsert
		is.True(rw.Persistent())

		sqldb, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
		is.NoErr(err)
		ro := sqlstore.New(bun.NewDB(sqldb, sqlitedialect.New()))
		defer ro.Close()
		is.NoErr(ro.Ping(ctx))
		_, err = ro.GetMerchant(ctx, "mch_any")
		is.True(errors.Is(err, paykit.ErrNotFound)) // reads work
		is.True(errors.Is(ro.Heartbeat(ctx, "wrk_1", time.UnixMilli(3e12).UTC()), paykit.ErrUnavailable))
	})
	t.Run("postgres", func(t *testing.T) {
		is := is.New(t)
		dsn := pgtest.Database(t)
		rw := openWith(t, dsn, sqlstore.Options{})
		is.NoErr(rw.Heartbeat(ctx, "wrk_1", time.UnixMilli(1e12).UTC()))
		u, err := url.Parse(dsn)
		is.NoErr(err)
		_, err = rw.DB().ExecContext(ctx, "ALTER DATABASE "+strings.TrimPrefix(u.Path, "/")+" SET default_transaction_read_only = on")
		is.NoErr(err)
		ro, err := sqlstore.OpenWith(ctx, dsn, sqlstore.Options{}) // new sessions are read-only
		is.NoErr(err)
		defer ro.Close()
		is.NoErr(ro.Ping(ctx))
		_, err = ro.GetMerchant(ctx, "mch_any")
		is.True(errors.Is(err, paykit.ErrNotFound)) // reads work
		err = ro.Heartbeat(ctx, "wrk_1", time.UnixMilli(2e12).UTC())
		is.True(errors.Is(err, paykit.ErrUnavailable)) // a read-only server cannot take writes now
	})
	t.Run("sqlite-memory", func(t *testing.T) {
		is := is.New(t)
		s := openWith(t, "sqlite::memory:", sqlstore.Options{})
		is.NoErr(s.Heartbeat(ctx, "wrk_1", time.UnixMilli(1e12).UTC()))
		is.True(!s.Persistent())
	})
}

// TestSQLiteWritersQueueInProcess holds a write transaction open on a
// Store with a 100 ms busy timeout and checks that reads outside
// transactions go on beside it, that a second transaction and a write
// outside transactions wait their turn in the process (not failing on the
// database's lock however long the first keeps it, within the timeout),
// and that a turn not come within the timeout is ErrUnavailable.
func TestSQLiteWritersQueueInProcess(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	s := openWith(t, "sqlite:"+filepath.Join(t.TempDir(), "paykit.db"), sqlstore.Options{BusyTimeout: 400 * time.Millisecond})
	merchant := func(id string) *paykit.Merchant {
		return &paykit.Merchant{ID: id, Name: id, CreatedAt: time.UnixMilli(1e12).UTC()}
	}
	is.NoErr(s.CreateMerchant(ctx, merchant("mch_first")))

	// hold keeps a write transaction open until release is closed.
	hold := func(name string, release <-chan struct{}) (locked chan struct{}, done chan error) {
		locked, done = make(chan struct{}), make(chan error, 1)
		go func() {
			done <- s.InTx(ctx, func(tx paykit.Tx) error {
				close(locked)
				<-release
				return tx.CreateMerchant(ctx, merchant("mch_holder_"+name))
			})
		}()
		return locked, done
	}
	release := make(chan struct{})
	locked, done := hold("first", release)
	<-locked
	_, err := s.GetMerchant(ctx, "mch_first") // a read does not queue: it ends while the writer holds on
	is.NoErr(err)
	select {
	case err := <-done:
		t.Fatalf("the writer ended (%v) before the read did", err)
	default:
	}
	time.AfterFunc(150*time.Millisecond, func() { close(release) }) // within the busy timeout
	is.NoErr(s.InTx(ctx, func(tx paykit.Tx) error { return tx.CreateMerchant(ctx, merchant("mch_second")) }))
	is.NoErr(s.CreateMerchant(ctx, merchant("mch_third")))
	is.NoErr(<-done)

	late := make(chan struct{})
	time.AfterFunc(time.Second, func() { close(late) }) // beyond the busy timeout
	locked, done = hold("late", late)
	<-locked
	err = s.InTx(ctx, func(tx paykit.Tx) error { return tx.CreateMerchant(ctx, merchant("mch_late")) })
	is.True(errors.Is(err, paykit.ErrUnavailable))
	is.True(errors.Is(s.CreateMerchant(ctx, merchant("mch_late")), paykit.ErrUnavailable))
	is.NoErr(<-done)
	_, err = s.GetMerchant(ctx, "mch_late")
	is.True(errors.Is(err, paykit.ErrNotFound))
}

// TestWorkerShareOfConnections fills one share of the pool with open
// transactions: the other share's operations still find connections at
// once, so requests cannot starve the worker nor the worker requests.
func TestWorkerShareOfConnections(t *testing.T) {
	for name, dsn := range sqlDSNs(t) {
		t.Run(name, func(t *testing.T) {
			is := is.New(t)
			ctx := context.Background()
			wctx := workctx.With(ctx)
			n := map[string]int{"sqlite": 1, "postgres": 2}[name] // SQLite runs one transaction at a time
			s := openWith(t, dsn, sqlstore.Options{MaxConns: n, WorkerConns: 1, ConnWait: 100 * time.Millisecond})
			m := &paykit.Merchant{ID: "mch_share", Name: "Share", CreatedAt: time.UnixMilli(1e12).UTC()}
			is.NoErr(s.CreateMerchant(ctx, m))
			done := holdTx(t, s, ctx, n)
			_, err := s.GetMerchant(ctx, m.ID)
			is.True(errors.Is(err, paykit.ErrUnavailable)) // the requests' share is full
			got, err := s.GetMerchant(wctx, m.ID)
			is.NoErr(err) // the worker's is not
			is.Equal(got.Name, "Share")
			done()

			if name == "postgres" {
				done = holdTx(t, s, wctx, 1)
				_, err = s.GetMerchant(wctx, m.ID)
				is.True(errors.Is(err, paykit.ErrUnavailable)) // the worker's share is full
				_, err = s.GetMerchant(ctx, m.ID)
				is.NoErr(err) // the requests' is not
				done()
			}
		})
	}
}
