package sandboxsql_test

import (
	"context"
	"database/sql"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" database/sql driver
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
	"github.com/uptrace/bun/dialect/sqlitedialect"
	_ "modernc.org/sqlite"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/internal/pgtest"
	"github.com/paykit/paykit/provider/sandbox"
	"github.com/paykit/paykit/provider/sandbox/sandboxsql"
)

// The PSP's fees, settlement and disputes, through the adapter over HTTP,
// on each state the PSP can keep: memory, SQLite and PostgreSQL.

const (
	apiKey   = "psp-settlement-secret"
	delay    = 2 * time.Second
	interval = 6 * time.Hour
)

// start is where every test's clock starts: 08:00 UTC, two hours after
// the 6h boundary at 06:00, sixteen before the 24h boundary at midnight.
var start = time.Date(2026, 6, 1, 8, 0, 0, 0, time.UTC)

// stateDB is where a PSP keeps its state: nothing (memory), or a
// migrated database and the runner of its write transactions.
type stateDB struct {
	db   *bun.DB
	inTx sandboxsql.TxRunner
}

// backend opens a fresh stateDB.
type backend struct {
	name string
	open func(t *testing.T) stateDB
}

var backends = []backend{
	{"memory", func(*testing.T) stateDB { return stateDB{} }},
	{"sqlite", func(t *testing.T) stateDB { return stateDB{db: openSQLite(t)} }},
	{"sqlite with inTx", func(t *testing.T) stateDB {
		db := openSQLite(t)
		return stateDB{db: db, inTx: func(ctx context.Context, fn func(context.Context, bun.Tx) error) error {
			return db.RunInTx(ctx, nil, fn)
		}}
	}},
	{"postgres", func(t *testing.T) stateDB { return stateDB{db: openPostgres(t)} }},
}

// sqlBackends are the backends whose state outlives a PSP.
var sqlBackends = backends[1:]

// openSQLite opens a new SQLite file with sqlstore's settings (the write
// lock at BEGIN) and migrates it, twice: Migrate runs at every start.
func openSQLite(t *testing.T) *bun.DB {
	t.Helper()
	sqldb, err := sql.Open("sqlite", "file:"+filepath.Join(t.TempDir(), "sandbox.db")+
		"?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=foreign_keys(1)&_txlock=immediate")
	if err != nil {
		t.Fatal(err)
	}
	return migrated(t, bun.NewDB(sqldb, sqlitedialect.New()))
}

// openPostgres opens a new PostgreSQL database and migrates it.
func openPostgres(t *testing.T) *bun.DB {
	t.Helper()
	sqldb, err := sql.Open("pgx", pgtest.Database(t))
	if err != nil {
		t.Fatal(err)
	}
	return migrated(t, bun.NewDB(sqldb, pgdialect.New()))
}

func migrated(t *testing.T, db *bun.DB) *bun.DB {
	t.Helper()
	t.Cleanup(func() { _ = db.Close() })
	for range 2 {
		if err := sandboxsql.Migrate(context.Background(), db); err != nil {
			t.Fatal(err)
		}
	}
	return db
}

// env is a PSP on a manual clock behind a real HTTP server, its adapter,
// and a receiver of its callbacks that parses them with the adapter.
type env struct {
	psp   *sandbox.PSP
	prov  *sandbox.Provider
	clock *paykit.ManualClock
	url   string // the PSP's base URL
	sink  *sink
}

// newEnv starts a PSP on db's state (memory for the zero stateDB) with a
// settlement interval of interval (0: the default).
func newEnv(t *testing.T, db stateDB, clock *paykit.ManualClock, interval time.Duration) *env {
	t.Helper()
	var st sandbox.State
	if db.db != nil {
		s, err := sandboxsql.New(db.db, db.inTx)
		if err != nil {
			t.Fatal(err)
		}
		st = s
	}
	e := &env{clock: clock, sink: &sink{}}
	cb := httptest.NewServer(e.sink)
	t.Cleanup(cb.Close)
	e.psp = sandbox.NewPSP(sandbox.PSPConfig{
		BaseURL: "http://psp.invalid", APIKey: apiKey, Delay: delay, Hold: 5 * time.Second,
		CallbackURL: cb.URL, Now: clock.Now, State: st, SettlementInterval: interval,
	})
	srv := httptest.NewServer(e.psp)
	t.Cleanup(srv.Close)
	e.url = srv.URL
	e.prov = sandbox.New(sandbox.Config{BaseURL: srv.URL, APIKey: apiKey, Timeout: 10 * time.Second})
	e.sink.prov = e.prov
	return e
}

// sink receives callbacks.
type sink struct {
	mu   sync.Mutex
	prov *sandbox.Provider
	got  []paykit.CallbackEvent
}

func (s *sink) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	evs, err := s.prov.ParseCallback(r.Context(), r)
	if err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	s.got = append(s.got, evs...)
}

// events returns the callbacks received since the last call.
func (s *sink) events() []paykit.CallbackEvent {
	s.mu.Lock()
	defer s.mu.Unlock()
	got := s.got
	s.got = nil
	return got
}

var currencies = map[string]string{"MY": "MYR", "TH": "THB"}

// pay makes a payment of merchant by method in country succeed under key
// and returns the adapter's inquiry about it.
func (e *env) pay(t *testing.T, key, merchant, method, country string, amount int64) paykit.Result {
	t.Helper()
	ctx := context.Background()
	r := e.prov.CreatePayment(ctx, paykit.PaymentRequest{
		Key: key, Amount: amount, Currency: currencies[country], Country: country, Method: method,
		Customer: map[string]string{"name": "Aisyah Rahman", "email": "aisyah@example.com"},
		Merchant: merchant,
	})
	if r.Outcome != paykit.OutcomeRequiresAction {
		t.Fatalf("create payment %s: %s (%s)", key, r.Outcome, r.Detail)
	}
	if r.Fee != 0 || !r.AvailableOn.IsZero() {
		t.Fatalf("payment %s states a fee before it succeeded: %d, %s", key, r.Fee, r.AvailableOn)
	}
	if err := e.prov.Approve(ctx, key); err != nil {
		t.Fatalf("approve %s: %v", key, err)
	}
	got := e.prov.InquirePayment(ctx, paykit.AttemptRef{Key: key})
	if got.Outcome != paykit.OutcomeSucceeded {
		t.Fatalf("payment %s: %s (%s)", key, got.Outcome, got.Detail)
	}
	return got
}

// raw calls the PSP's API directly and returns the answer's status and
// body.
func (e *env) raw(t *testing.T, method, path, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, e.url+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+apiKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// batches lists every batch through the adapter after cursor, page by
// page of limit.
func (e *env) batches(t *testing.T, after string, limit int) []paykit.SettlementBatch {
	t.Helper()
	var out []paykit.SettlementBatch
	for {
		page, err := e.prov.SettlementBatches(context.Background(), after, limit)
		if err != nil {
			t.Fatalf("settlement batches after %q: %v", after, err)
		}
		out = append(out, page...)
		if len(page) < limit {
			return out
		}
		after = page[len(page)-1].Reference
	}
}

// summary is "merchant currency settled-at: type key-or-ref amount fee; …"
// of a batch, for comparisons.
func summary(b paykit.SettlementBatch, names map[string]string) string {
	var s strings.Builder
	s.WriteString(b.Merchant + " " + b.Currency + " " + b.SettledAt.Format("01-02T15:04:05") + ":")
	for _, l := range b.Lines {
		name := l.Key
		if name == "" {
			name = names[l.Reference]
		}
		s.WriteString(" " + l.Type + " " + name + " " + itoa(l.Amount) + " " + itoa(l.Fee))
		if l.Currency != b.Currency {
			s.WriteString(" in " + l.Currency)
		}
		s.WriteString(";")
	}
	return s.String()
}

func summaries(bs []paykit.SettlementBatch, names map[string]string) []string {
	out := []string{}
	for _, b := range bs {
		out = append(out, summary(b, names))
	}
	return out
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
