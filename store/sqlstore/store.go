package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"
	"github.com/uptrace/bun/dialect/pgdialect"
	"github.com/uptrace/bun/dialect/sqlitedialect"
	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/internal/fanout"
	"github.com/paykit/paykit/internal/wakeup"
)

// Store is a paykit.Store on SQLite or PostgreSQL. Its paykit.Tx methods each
// run as one statement (or, where noted, a few) outside any transaction; InTx
// runs the same methods inside one.
type Store struct {
	tx
	db         *bun.DB
	pool       *pool
	persistent bool
	writes     writeQueue // SQLite's write transactions
	prep       *prepared  // the create paths' prepared writes; nil with NoPreparedStatements or a host's bun.DB (NewWith)
	wakes      wakeup.Hub // the workers woken by due jobs
	pollOnly   bool       // no LISTEN/NOTIFY (SQLite, or Options.PollOnly)
	listen     sync.Once  // starts listen
	peers      chan struct{}
	closed     chan struct{}
	closeOnce  sync.Once
}

// tx implements paykit.Tx on a bun.IDB: the *bun.DB for the Store itself;
// inside InTx a bun.Tx, or a connDB of a batched or grouped transaction.
type tx struct {
	db    bun.IDB
	pg    bool      // PostgreSQL; otherwise SQLite
	store *Store    // outside a transaction; nil inside one
	b     *batch    // in a batched transaction: where writes are held
	prep  *prepared // PostgreSQL: in a batched one whose connection has them; SQLite: in a transaction
	sqlTx *sql.Tx   // SQLite: the transaction, which runs prepared statements
	// detach: statements run without the caller's cancellation (a
	// grouped transaction; see groupConn).
	detach bool
	// note: inside a transaction, what its commit must tell the workers.
	note *txNote
}

// txNote is what a transaction wrote that its commit must tell.
type txNote struct {
	due bool // a job due at once
}

// jobDue records that t wrote a job due at once: the workers are woken
// when it commits (outside a transaction, at once).
func (t tx) jobDue() {
	switch {
	case t.note != nil:
		t.note.due = true
	case t.store != nil:
		t.store.jobsDue()
	}
}

var (
	_ paykit.Store     = (*Store)(nil)
	_ paykit.Tx        = tx{}
	_ fanout.Scheduler = tx{}
)

// Options bound the Store's use of the database. The zero value gives the
// defaults.
type Options struct {
	// MaxConns is how many connections the Store opens at most for
	// everything but the Service's worker; as many stay open when idle, so
	// they are reused rather than reopened. Default DefaultMaxConns.
	MaxConns int
	// WorkerConns is how many connections the Store opens, beyond
	// MaxConns, for the Service's worker (its claims, job ends and the
	// work of its jobs), so that requests cannot starve the worker nor the
	// worker requests. Default DefaultWorkerConns. Keep the sum of both
	// over all instances (plus one listening connection each on
	// PostgreSQL) below the server's max_connections (PostgreSQL's default
	// is 100).
	WorkerConns int
	// ConnWait is how long an operation waits for a free connection before
	// it fails with paykit.ErrUnavailable (the Service answers 503
	// service_unavailable with Retry-After). Default DefaultConnWait.
	ConnWait time.Duration
	// BusyTimeout is how long a SQLite writer waits for the write lock
	// before it fails with paykit.ErrUnavailable: its turn among this
	// process's writers (they queue in the process, one at a time), then
	// the database's lock (busy_timeout), which another process may hold.
	// Default 5s.
	BusyTimeout time.Duration
	// SQLiteSynchronous is SQLite's synchronous setting: "FULL" (the
	// default) syncs every commit to disk before it returns, so a committed
	// payment survives power loss; "NORMAL" syncs at checkpoints only: a
	// commit survives a crash of the process but the last ones may be lost
	// on power loss, for several times the write rate. Ignored on
	// PostgreSQL.
	SQLiteSynchronous string
	// NoPreparedStatements keeps every statement as text. By default the
	// writes of the create paths are prepared: on PostgreSQL once per
	// connection (PREPARE) and sent as EXECUTE, which a pooler that does
	// not keep a server session per client connection (PgBouncer in
	// transaction mode) needs turned off.
	NoPreparedStatements bool
	// PollOnly keeps the Store from LISTENing on PostgreSQL for the jobs
	// other instances enqueue, for a pooler that does not keep a server
	// session per client connection (PgBouncer in transaction mode): their
	// workers then find that work when they poll. This process's own jobs
	// wake its workers either way.
	PollOnly bool
}

// Defaults of Options, sized for a small machine. With 32 requests at once
// on two cores, 16 connections to PostgreSQL served 6–9% more creates than
// 8, at less CPU per create (fewer requests park waiting for one), and the
// same on SQLite; fewer than 8 served less.
//
// The worker's share serves claims and ends of many jobs in one statement
// each, and the short transactions of its jobs, which mostly wait on
// Providers and webhook endpoints without a connection.
const (
	DefaultMaxConns    = 16
	DefaultWorkerConns = 4
	DefaultConnWait    = 2 * time.Second
)

func (o Options) withDefaults() Options {
	if o.MaxConns <= 0 {
		o.MaxConns = DefaultMaxConns
	}
	if o.WorkerConns <= 0 {
		o.WorkerConns = DefaultWorkerConns
	}
	if o.ConnWait <= 0 {
		o.ConnWait = DefaultConnWait
	}
	if o.BusyTimeout <= 0 {
		o.BusyTimeout = 5 * time.Second
	}
	if o.SQLiteSynchronous == "" {
		o.SQLiteSynchronous = "FULL"
	}
	return o
}

// pingIdle is how long a PostgreSQL connection may sit idle in the pool
// and still be reused without a ping.
const pingIdle = 30 * time.Second

// rollbackTimeout bounds the ROLLBACK that ends a failed batched
// transaction.
const rollbackTimeout = 5 * time.Second

// sqliteParams are the connection settings of every SQLite connection but
// the busy timeout and synchronous: WAL lets readers run beside the writer,
// temp_store(MEMORY) keeps savepoints' statement journals off the disk,
// and _txlock=immediate takes the write lock at BEGIN.
const sqliteParams = "_pragma=journal_mode(WAL)&_pragma=foreign_keys(1)&_pragma=temp_store(MEMORY)&_txlock=immediate"

// sqliteDSN is the parameter string of a SQLite connection: writers wait
// up to BusyTimeout for the lock instead of failing at once, and commits
// sync as SQLiteSynchronous says.
func sqliteDSN(o Options) string {
	return fmt.Sprintf("_pragma=busy_timeout(%d)&_pragma=synchronous(%s)&%s", o.BusyTimeout.Milliseconds(), o.SQLiteSynchronous, sqliteParams)
}

// Open connects to the database named by dsn with the default Options and
// returns a Store. It does not create tables: call Migrate.
//
// dsn is one of:
//   - "sqlite:PATH": a SQLite database file, created if missing;
//   - "sqlite::memory:": a private in-memory SQLite database on a single
//     connection (calls queue for it; lost on Close);
//   - a "postgres://" or "postgresql://" URL, as libpq and pgx read it
//     (for example postgres://user:pass@host:5432/db?sslmode=disable).
func Open(ctx context.Context, dsn string) (*Store, error) {
	return OpenWith(ctx, dsn, Options{})
}

// OpenWith is Open with Options.
func OpenWith(ctx context.Context, dsn string, opts Options) (*Store, error) {
	opts = opts.withDefaults()
	if opts.SQLiteSynchronous != "FULL" && opts.SQLiteSynchronous != "NORMAL" {
		return nil, fmt.Errorf("sqlstore: open: SQLiteSynchronous must be FULL or NORMAL, not %q", opts.SQLiteSynchronous)
	}
	var db *bun.DB
	persistent := true
	switch {
	case dsn == "sqlite::memory:":
		sqldb, err := sql.Open("sqlite", ":memory:?"+sqliteDSN(opts))
		if err != nil {
			return nil, fmt.Errorf("sqlstore: open: %w", err)
		}
		// Every connection to ":memory:" is a separate empty database, so
		// keep exactly one and never let it expire.
		opts.MaxConns, opts.WorkerConns = 1, 0
		persistent = false
		db = bun.NewDB(sqldb, sqlitedialect.New())
	case strings.HasPrefix(dsn, "sqlite:"):
		path := strings.TrimPrefix(dsn, "sqlite:")
		if path == "" {
			return nil, errors.New("sqlstore: open: empty SQLite path")
		}
		// The path becomes a file: URI, where these three characters are special.
		path = strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(path)
		sqldb, err := sql.Open("sqlite", "file:"+path+"?"+sqliteDSN(opts))
		if err != nil {
			return nil, fmt.Errorf("sqlstore: open: %w", err)
		}
		db = bun.NewDB(sqldb, sqlitedialect.New())
	case strings.HasPrefix(dsn, "postgres://"), strings.HasPrefix(dsn, "postgresql://"):
		cfg, err := pgx.ParseConfig(dsn)
		if err != nil {
			return nil, fmt.Errorf("sqlstore: open: %w", err)
		}
		// bun inlines every argument into the SQL text, so preparing
		// statements would only fill pgx's cache with one-off statements
		// (the create paths' writes are prepared in SQL: prepared.go).
		cfg.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
		// When ctx ends, ask the server to cancel the statement (releasing
		// its locks at once); cut the connection if that takes over 1 s.
		cfg.BuildContextWatcherHandler = func(c *pgconn.PgConn) ctxwatch.Handler {
			return &pgconn.CancelRequestContextWatcherHandler{Conn: c, DeadlineDelay: time.Second}
		}
		// stdlib pings a pooled connection idle over 1 s before reuse: a
		// round trip per checkout at moderate load. Ping only those idle
		// long enough that the server or a proxy may have dropped them.
		ping := stdlib.OptionShouldPing(func(_ context.Context, p stdlib.ShouldPingParams) bool {
			return p.IdleDuration > pingIdle
		})
		db = bun.NewDB(stdlib.OpenDB(*cfg, ping), pgdialect.New())
	default:
		return nil, errors.New(`sqlstore: open: dsn must start with "sqlite:", "postgres://" or "postgresql://"`)
	}
	// A bounded pool whose idle limit equals its open limit: connections
	// are reused, never churned, and never more than both shares.
	db.SetMaxOpenConns(opts.MaxConns + opts.WorkerConns)
	db.SetMaxIdleConns(opts.MaxConns + opts.WorkerConns)
	db.SetConnMaxLifetime(0)
	db.SetConnMaxIdleTime(0)
	if err := db.PingContext(ctx); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("sqlstore: open: %w", mapError("ping", err))
	}
	s := newStore(db, opts, opts.MaxConns, opts.WorkerConns)
	s.persistent = persistent
	if !opts.NoPreparedStatements {
		s.prep = &prepared{pg: s.pg}
	}
	return s, nil
}

// New returns a Store on a host's bun.DB, which must use sqlitedialect (on
// modernc.org/sqlite, with the settings described in the package doc) or
// pgdialect. It panics on another dialect. The host's pool settings stay;
// New installs a connection resolver on db that admits at most as many of
// the Store's operations as db's MaxOpenConns (DefaultMaxConns, plus
// DefaultWorkerConns for the worker, when unbounded), each waiting at most
// DefaultConnWait. Close closes db.
func New(db *bun.DB) *Store { return NewWith(db, Options{}) }

// NewWith is New with Options: MaxConns and WorkerConns apply when db's
// pool is unbounded; of a bounded pool, the worker's share is WorkerConns
// when that leaves more to the rest. ConnWait applies always.
func NewWith(db *bun.DB, opts Options) *Store {
	opts = opts.withDefaults()
	size, work := opts.MaxConns, opts.WorkerConns
	if n := db.Stats().MaxOpenConnections; n > 0 {
		// The pool's own bound: the worker's share comes out of it, when
		// it leaves the others more than that.
		if size = n; n > 2*work {
			size = n - work
		} else {
			work = 0
		}
	}
	return newStore(db, opts, size, work)
}

// newStore returns a Store on db admitting size operations at once and
// work more of the worker's.
func newStore(db *bun.DB, opts Options, size, work int) *Store {
	var pg bool
	switch name := db.Dialect().Name(); name {
	case dialect.PG:
		pg = true
	case dialect.SQLite:
	default:
		panic(fmt.Sprintf("sqlstore: unsupported dialect %s", name))
	}
	p := newPool(db, size, work, opts.ConnWait)
	if !pg {
		p.writer, p.writerWait = make(chan struct{}, 1), opts.BusyTimeout
	}
	bun.WithConnResolver(p)(db) // statements outside InTx take their connection through p
	s := &Store{db: db, pool: p, persistent: true, pollOnly: opts.PollOnly || !pg, closed: make(chan struct{})}
	s.tx = tx{db: db, pg: pg, store: s}
	return s
}

// DB returns the underlying bun.DB, for hosts that keep their own tables
// beside paykit's.
func (s *Store) DB() *bun.DB { return s.db }

// InTx runs fn in one database transaction and commits when fn returns nil.
// When fn returns an error or panics, the transaction is rolled back and the
// error (unchanged) or the panic is passed on. It waits at most ConnWait for
// a connection, then fails with paykit.ErrUnavailable.
func (s *Store) InTx(ctx context.Context, fn func(tx paykit.Tx) error) error {
	return s.runTx(ctx, s.pg, func(t tx) error { return fn(t) })
}

// runTx runs fn in a new transaction on a connection of the pool; see InTx.
// batched (PostgreSQL only) runs it batched first (see batch).
func (s *Store) runTx(ctx context.Context, batched bool, fn func(t tx) error) error {
	var note txNote
	err := s.runNoted(ctx, batched, func(t tx) error {
		t.note = &note
		return fn(t)
	})
	if err == nil && note.due {
		s.jobsDue()
	}
	return err
}

// runNoted is runTx without the wake-up at commit.
func (s *Store) runNoted(ctx context.Context, batched bool, fn func(t tx) error) error {
	// On SQLite every transaction begins IMMEDIATE, taking the write
	// lock: it waits its turn in the process, in a group (see writeQueue).
	if s.pool.writer != nil {
		if s.prep != nil {
			s.prep.ready(ctx, s.db, s.db.DB) // before the queue: it holds no connection
		}
		return s.runQueued(ctx, fn)
	}
	slots, err := s.pool.acquire(ctx)
	if err != nil {
		return err
	}
	defer release(slots)
	if batched {
		if rerun, err := s.runBatched(ctx, fn); !rerun {
			return err
		}
	}
	return s.runOne(ctx, fn)
}

// RunInTx runs fn as a write transaction of the Store's database, for
// tables of the host's own beside paykit's, and for the Service's *Tx
// calls through WrapTx(tx): on SQLite it waits its turn among the
// process's writers and may commit in a group with other transactions
// (fn then runs in a savepoint of its own, on another caller's goroutine,
// with a ctx that is not cancelled, as a cancelled statement would roll
// back the whole group); on PostgreSQL it runs on a connection of the
// pool. fn must not commit or roll back tx. An error or panic of fn
// rolls back what it wrote, and RunInTx returns the error or panics
// again.
func (s *Store) RunInTx(ctx context.Context, fn func(ctx context.Context, tx bun.Tx) error) error {
	return s.runTx(ctx, false, func(t tx) error {
		// What fn writes through WrapTx is not seen here: its commit
		// wakes the workers in case it enqueued a job.
		t.note.due = true
		switch d := t.db.(type) {
		case bun.Tx:
			return fn(ctx, d)
		case connDB:
			if g, ok := d.conn.(groupConn); ok {
				return fn(context.WithoutCancel(ctx), g.tx)
			}
		}
		return fmt.Errorf("sqlstore: RunInTx: a transaction on %T", t.db)
	})
}

// atomic runs fn as one transaction: in t's own inside InTx, else in a
// new one, for the methods that need more than one statement.
func (t tx) atomic(ctx context.Context, fn func(t tx) error) error {
	if t.store != nil {
		return t.store.runTx(ctx, false, fn)
	}
	return fn(t)
}

// Ping reports whether the database answers.
func (s *Store) Ping(ctx context.Context) error { return s.db.PingContext(ctx) }

// Heartbeat records that instance was alive at now, in
// paykit_heartbeats: a write, so a read-only database fails it. Rows of
// instances silent for heartbeatKept go.
func (s *Store) Heartbeat(ctx context.Context, instance string, now time.Time) error {
	_, err := s.db.NewInsert().Model(&heartbeatRow{Instance: instance, BeatAt: now.UTC()}).
		On("CONFLICT (instance) DO UPDATE").Set("beat_at = EXCLUDED.beat_at").Exec(ctx)
	if err != nil {
		return mapError("heartbeat", err)
	}
	_, err = s.db.NewDelete().Model((*heartbeatRow)(nil)).Where("beat_at < ?", now.UTC().Add(-heartbeatKept)).Exec(ctx)
	return mapError("heartbeat", err)
}

// heartbeatKept is how long the heartbeat of a silent instance is kept.
const heartbeatKept = 7 * 24 * time.Hour

type heartbeatRow struct {
	bun.BaseModel `bun:"table:paykit_heartbeats"`
	Instance      string    `bun:"instance,pk"`
	BeatAt        time.Time `bun:"beat_at"`
}

// Persistent reports whether the data outlives the process: true but for
// "sqlite::memory:".
func (s *Store) Persistent() bool { return s.persistent }

// Close closes the database.
func (s *Store) Close() error {
	s.closeOnce.Do(func() { close(s.closed) })
	s.prep.close()
	return s.db.Close()
}

// DBSystemName implements paykit.DBSystemNamer: "postgresql" or "sqlite",
// the db.system.name of the spans of the Service's transactions.
func (s *Store) DBSystemName() string {
	if s.pg {
		return "postgresql"
	}
	return "sqlite"
}
