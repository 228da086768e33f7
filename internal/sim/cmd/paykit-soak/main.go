// Command paykit-soak is the PostgreSQL side of paykit's simulation: it
// starts several example servers (examples/server) on one fresh database,
// drives mixed merchant load against them with retries under
// Idempotency-Keys, kills servers with SIGKILL and restarts them while
// the load runs, lets the work settle, and then checks the simulation's
// invariants (sim.CheckStore) on the database and the sandbox PSP's
// tables, that every replay repeated its first answer byte for byte, and
// that every event reached the merchants' webhook endpoints.
//
//	go run ./internal/sim/cmd/paykit-soak -duration 2m -servers 3
//
// bench/sim-soak.sh runs it; it needs PostgreSQL ($PAYKIT_TEST_POSTGRES_URL,
// default postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable).
package main

import (
	"bufio"
	"bytes"
	"context"
	crand "crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/internal/sim"
	"github.com/paykit/paykit/provider/sandbox"
	"github.com/paykit/paykit/provider/sandbox/sandboxsql"
	"github.com/paykit/paykit/store/sqlstore"
)

const operatorToken = "paykit-soak-operator-token"

func main() {
	var (
		admin     = flag.String("pg", envOr("PAYKIT_TEST_POSTGRES_URL", "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"), "PostgreSQL server URL (a database is made on it and dropped)")
		servers   = flag.Int("servers", 3, "example servers on the database")
		duration  = flag.Duration("duration", time.Minute, "how long the load runs")
		workers   = flag.Int("workers", 6, "concurrent merchant clients")
		killEvery = flag.Duration("kill-every", 3*time.Second, "a server is killed (SIGKILL) and restarted this often")
		settle    = flag.Duration("settle", 4*time.Minute, "at most this long for the work to settle once the load stopped")
		bin       = flag.String("server-bin", "", "the example server binary (default: built from ./examples/server)")
		keep      = flag.Bool("keep", false, "keep the database and the servers' logs")
		seed      = flag.Uint64("seed", 0, "seed of the load's choices (default random)")
	)
	flag.Parse()
	if *seed == 0 {
		*seed = rand.Uint64()
	}
	s := &soak{rng: rand.New(rand.NewPCG(*seed, 1)), answers: map[string]answer{}}
	fmt.Printf("paykit-soak: seed %d, %d servers, %s of load, a kill every %s\n", *seed, *servers, *duration, *killEvery)
	err := s.run(*admin, *servers, *duration, *workers, *killEvery, *settle, *bin, *keep)
	if err != nil {
		fmt.Fprintf(os.Stderr, "paykit-soak: %v\n", err)
		os.Exit(1)
	}
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// soak is one soak run.
type soak struct {
	dir     string
	dsn     string
	bin     string
	servers []*server
	client  *http.Client

	mu        sync.Mutex
	rng       *rand.Rand
	merchants []*merchant
	answers   map[string]answer // the first 2xx answer of each key
	failures  []string
	stats     struct{ requests, retries, replays, kills, restarts atomic.Int64 }

	hooks     *httptest.Server
	delivered sync.Map // event id → true
	hookFails atomic.Bool
}

// answer is a 2xx answer to a keyed request.
type answer struct {
	status int
	body   []byte
}

// merchant is a merchant the soak made, with its test key pair and what
// it created.
type merchant struct {
	id, public, secret string
	payments, payouts  []string
}

// server is one example server process.
type server struct {
	i    int
	addr string
	cmd  *exec.Cmd
	done chan struct{}
	up   atomic.Bool
}

func (s *soak) failf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.failures) < 50 {
		fmt.Println("FAIL " + msg)
	}
	s.failures = append(s.failures, msg)
}

func (s *soak) run(admin string, n int, duration time.Duration, workers int, killEvery, settle time.Duration, bin string, keep bool) error {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "paykit-soak-")
	if err != nil {
		return err
	}
	s.dir = dir
	if !keep {
		defer os.RemoveAll(dir)
	}
	dsn, drop, err := createDatabase(admin)
	if err != nil {
		return err
	}
	if !keep {
		defer drop()
	}
	s.dsn = dsn
	if s.bin = bin; s.bin == "" {
		s.bin = filepath.Join(dir, "server")
		build := exec.Command("go", "build", "-o", s.bin, "./examples/server")
		build.Stdout, build.Stderr = os.Stdout, os.Stderr
		if err := build.Run(); err != nil {
			return fmt.Errorf("build the example server (run from the module's root): %w", err)
		}
	}
	s.client = &http.Client{Timeout: 15 * time.Second}
	s.hooks = httptest.NewServer(http.HandlerFunc(s.receiveHook))
	defer s.hooks.Close()
	for i := range n {
		srv := &server{i: i, addr: freeAddr()}
		s.servers = append(s.servers, srv)
		if err := s.start(srv); err != nil {
			return err
		}
	}
	defer s.stopAll()
	if err := s.setup(); err != nil {
		return err
	}

	// The load, and the killer beside it.
	began := time.Now()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() { s.load(w, stop) })
	}
	wg.Go(func() { s.chaos(killEvery, stop) })
	time.Sleep(duration)
	close(stop)
	wg.Wait()
	fmt.Printf("load done after %s: %d requests, %d retries, %d replays compared, %d kills\n",
		time.Since(began).Round(time.Second), s.stats.requests.Load(), s.stats.retries.Load(), s.stats.replays.Load(), s.stats.kills.Load())

	// Every server up again, the endpoints healthy: the work settles.
	for _, srv := range s.servers {
		if !srv.up.Load() {
			if err := s.start(srv); err != nil {
				return err
			}
		}
	}
	s.hookFails.Store(false)
	if err := s.settle(ctx, settle); err != nil {
		s.failf("%v", err)
	}
	s.check(ctx)
	fmt.Printf("soak: %d merchants, %d payments, %d payouts; %d failures\n", len(s.merchants), s.count(func(m *merchant) int { return len(m.payments) }),
		s.count(func(m *merchant) int { return len(m.payouts) }), len(s.failures))
	if keep {
		fmt.Printf("kept: database %s, logs in %s\n", dsn, dir)
	}
	if len(s.failures) > 0 {
		return fmt.Errorf("%d invariants broken", len(s.failures))
	}
	return nil
}

func (s *soak) count(f func(*merchant) int) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, m := range s.merchants {
		n += f(m)
	}
	return n
}

// createDatabase makes a fresh database on the server at admin and
// returns its URL and the function that drops it.
func createDatabase(admin string) (string, func(), error) {
	db, err := sql.Open("pgx", admin)
	if err != nil {
		return "", nil, err
	}
	var b [6]byte
	_, _ = crand.Read(b[:])
	name := "paykit_soak_" + hex.EncodeToString(b[:])
	if _, err := db.Exec("CREATE DATABASE " + name); err != nil {
		db.Close()
		return "", nil, fmt.Errorf("create database (is PostgreSQL running? -pg): %w", err)
	}
	u, err := url.Parse(admin)
	if err != nil {
		db.Close()
		return "", nil, err
	}
	u.Path = "/" + name
	drop := func() {
		defer db.Close()
		_, _ = db.Exec("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)")
	}
	return u.String(), drop, nil
}

// freeAddr is a loopback address with a port free now.
func freeAddr() string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// start starts srv and waits until it listens.
func (s *soak) start(srv *server) error {
	logf, err := os.OpenFile(filepath.Join(s.dir, fmt.Sprintf("server-%d.log", srv.i)), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	cmd := exec.Command(s.bin, "-db", s.dsn, "-addr", srv.addr, "-keys-in-db", "-demo=false",
		"-operator-token", operatorToken, "-worker-interval", "100ms", "-sandbox-delay", "300ms",
		"-payment-ttl", "90s", "-approval-threshold", "0", "-rate-limit", "0")
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	cmd.Stderr = logf
	if err := cmd.Start(); err != nil {
		return err
	}
	srv.cmd, srv.done = cmd, make(chan struct{})
	listening := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(out)
		said := false
		for sc.Scan() {
			fmt.Fprintln(logf, sc.Text())
			if !said && strings.HasPrefix(sc.Text(), "paykit listening on ") {
				said = true
				close(listening)
			}
		}
	}()
	go func() {
		_ = cmd.Wait()
		srv.up.Store(false)
		logf.Close()
		close(srv.done)
	}()
	select {
	case <-listening:
		srv.up.Store(true)
		return nil
	case <-srv.done:
		return fmt.Errorf("server %d exited at start; see %s", srv.i, filepath.Join(s.dir, fmt.Sprintf("server-%d.log", srv.i)))
	case <-time.After(60 * time.Second):
		return fmt.Errorf("server %d did not start", srv.i)
	}
}

// kill sends SIGKILL to srv and waits for it to end.
func (s *soak) kill(srv *server) {
	if !srv.up.Load() {
		return
	}
	srv.up.Store(false)
	_ = srv.cmd.Process.Kill()
	<-srv.done
	s.stats.kills.Add(1)
}

func (s *soak) stopAll() {
	for _, srv := range s.servers {
		s.kill(srv)
	}
}

// chaos kills a server every about killEvery, while another stays up,
// and restarts it a moment later.
func (s *soak) chaos(every time.Duration, stop <-chan struct{}) {
	for {
		wait := every/2 + time.Duration(s.intn(int(every)))
		select {
		case <-stop:
			return
		case <-time.After(wait):
		}
		up := 0
		for _, srv := range s.servers {
			if srv.up.Load() {
				up++
			}
		}
		srv := s.servers[s.intn(len(s.servers))]
		if up < 2 || !srv.up.Load() {
			continue
		}
		s.kill(srv)
		time.Sleep(time.Duration(200+s.intn(800)) * time.Millisecond)
		if err := s.start(srv); err != nil {
			s.failf("restart server %d: %v", srv.i, err)
			return
		}
		s.stats.restarts.Add(1)
	}
}

func (s *soak) intn(n int) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rng.IntN(n)
}

// do sends a request to some server that is up, retrying on another
// when no answer comes, on 5xx and while its key is in progress, as a
// merchant's client does; a keyed request keeps its key. It returns the
// last answer. Every 2xx answer to a key is checked against the key's
// first: a replay repeats it byte for byte.
func (s *soak) do(method, path, key, body string, auth func(*http.Request)) (int, []byte) {
	var status int
	var out []byte
	for try := 0; try < 80; try++ {
		if try > 0 {
			s.stats.retries.Add(1)
			time.Sleep(time.Duration(100+s.intn(300)) * time.Millisecond)
		}
		srv := s.servers[s.intn(len(s.servers))]
		if !srv.up.Load() {
			continue
		}
		req, err := http.NewRequest(method, "http://"+srv.addr+path, strings.NewReader(body))
		if err != nil {
			panic(err)
		}
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		if key != "" {
			req.Header.Set("Idempotency-Key", key)
		}
		auth(req)
		s.stats.requests.Add(1)
		resp, err := s.client.Do(req)
		if err != nil {
			continue
		}
		out, err = io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			continue
		}
		status = resp.StatusCode
		if status >= 500 || status == http.StatusConflict && bytes.Contains(out, []byte("idempotency_in_progress")) {
			continue
		}
		if key != "" && status/100 == 2 {
			s.sameAnswer(key, status, out, resp.Header.Get("Idempotent-Replayed") == "true")
		}
		return status, out
	}
	return status, out
}

// sameAnswer checks a 2xx answer to key against the key's first.
func (s *soak) sameAnswer(key string, status int, body []byte, replayed bool) {
	s.mu.Lock()
	first, ok := s.answers[key]
	if !ok {
		s.answers[key] = answer{status, body}
	}
	s.mu.Unlock()
	if !ok {
		return
	}
	s.stats.replays.Add(1)
	switch {
	case !replayed:
		s.failf("key %s answered a second time without replaying: %s", key, body)
	case first.status != status || !bytes.Equal(first.body, body):
		s.failf("key %s replayed another answer:\nfirst:  %d %s\nreplay: %d %s", key, first.status, first.body, status, body)
	}
}

func operator(r *http.Request) { r.Header.Set("Authorization", "Bearer "+operatorToken) }

func (m *merchant) auth(r *http.Request) { r.SetBasicAuth(m.public, m.secret) }

// setup makes two merchants with test keys, a float in each currency and
// a webhook endpoint each.
func (s *soak) setup() error {
	for i := range 2 {
		status, body := s.do("POST", "/operator/merchants", "", fmt.Sprintf(`{"name":"Soak %d"}`, i), operator)
		var m struct{ ID string }
		if status != 201 || json.Unmarshal(body, &m) != nil {
			return fmt.Errorf("create merchant: %d %s", status, body)
		}
		status, body = s.do("POST", "/operator/merchants/"+m.ID+"/api_keys", "", `{"environment":"test"}`, operator)
		var k struct {
			Public string `json:"public_key"`
			Secret string `json:"secret_key"`
		}
		if status != 201 || json.Unmarshal(body, &k) != nil {
			return fmt.Errorf("create key: %d %s", status, body)
		}
		for _, ccy := range []string{"MYR", "THB"} {
			status, body = s.do("POST", "/operator/merchants/"+m.ID+"/balance_adjustments", "",
				fmt.Sprintf(`{"environment":"test","currency":%q,"amount":"50000000","reason":"soak float"}`, ccy), operator)
			if status != 201 {
				return fmt.Errorf("float: %d %s", status, body)
			}
		}
		status, body = s.do("POST", "/operator/merchants/"+m.ID+"/webhook_endpoints", "",
			fmt.Sprintf(`{"environment":"test","url":%q}`, s.hooks.URL+"/"+m.ID), operator)
		if status != 201 {
			return fmt.Errorf("webhook endpoint: %d %s", status, body)
		}
		s.merchants = append(s.merchants, &merchant{id: m.ID, public: k.Public, secret: k.Secret})
	}
	return nil
}

// receiveHook is the merchants' webhook endpoint: it keeps the ids of the
// events it acknowledged, and fails now and then while the load runs.
func (s *soak) receiveHook(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if s.hookFails.Load() && s.intn(5) == 0 {
		http.Error(w, "try later", http.StatusInternalServerError)
		return
	}
	var e struct{ ID string }
	if json.Unmarshal(body, &e) == nil && e.ID != "" {
		s.delivered.Store(e.ID, true)
	}
	w.WriteHeader(http.StatusNoContent)
}

// load is one merchant client's loop until stop.
func (s *soak) load(worker int, stop <-chan struct{}) {
	s.hookFails.Store(true)
	for n := 0; ; n++ {
		select {
		case <-stop:
			return
		default:
		}
		s.mu.Lock()
		m := s.merchants[s.rng.IntN(len(s.merchants))]
		pick := s.rng.IntN(100)
		s.mu.Unlock()
		key := fmt.Sprintf("w%d-%d", worker, n)
		switch {
		case pick < 35:
			s.payment(m, key)
		case pick < 50:
			s.refund(m, key)
		case pick < 65:
			s.payout(m, key)
		case pick < 70:
			s.cancel(m, key)
		case pick < 75:
			s.dispute(m, key)
		case pick < 78:
			s.do("POST", "/v1/test_helpers/settlements", "", "", m.auth)
		default:
			s.replay(m)
		}
	}
}

// amount draws an amount no magic suffix of the sandbox's ends in.
func (s *soak) amount() int64 {
	for {
		a := int64(1000 + s.intn(100_000))
		switch a % 1000 {
		case 901, 902, 903, 911, 912, 921, 922:
			continue
		}
		return a
	}
}

// keyed are the requests made under keys, to send them again.
var keyed sync.Map // key → [4]string{method, path, body, merchant id}

func (s *soak) keyedDo(m *merchant, method, path, key, body string) (int, []byte) {
	keyed.Store(key, [4]string{method, path, body, m.id})
	return s.do(method, path, key, body, m.auth)
}

func (s *soak) payment(m *merchant, key string) {
	body := fmt.Sprintf(`{"amount":"%d","currency":"MYR","country":"MY","merchant_reference":%q,"payment_method":"FPX","payment_method_options":{"bank":"MAYBANK"},"customer":{"name":"Aisyah","email":"aisyah@example.com"}}`, s.amount(), key)
	if s.intn(3) == 0 {
		body = fmt.Sprintf(`{"amount":"%d","currency":"THB","country":"TH","merchant_reference":%q,"payment_method":"PROMPTPAY","customer":{"name":"Somchai"}}`, s.amount(), key)
	}
	status, out := s.keyedDo(m, "POST", "/v1/payment_intents", key, body)
	var pi struct{ ID string }
	if status/100 != 2 || json.Unmarshal(out, &pi) != nil {
		return
	}
	s.mu.Lock()
	m.payments = append(m.payments, pi.ID)
	s.mu.Unlock()
	switch p := s.intn(10); {
	case p < 7:
		s.do("POST", "/v1/test_helpers/payment_intents/"+pi.ID+"/approve", "", "", m.auth)
	case p < 8:
		s.do("POST", "/v1/test_helpers/payment_intents/"+pi.ID+"/decline", "", "", m.auth)
	}
}

// some returns one of ids, or "".
func (s *soak) some(ids func() []string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	list := ids()
	if len(list) == 0 {
		return ""
	}
	return list[s.rng.IntN(len(list))]
}

func (s *soak) refund(m *merchant, key string) {
	pi := s.some(func() []string { return m.payments })
	if pi == "" {
		return
	}
	amount := 100 + s.intn(800) // never ending in the sandbox's 911 or 912
	s.keyedDo(m, "POST", "/v1/refunds", key, fmt.Sprintf(`{"payment_intent":%q,"merchant_reference":%q,"amount":"%d"}`, pi, key, amount))
}

func (s *soak) payout(m *merchant, key string) {
	body := fmt.Sprintf(`{"amount":"%d","currency":"MYR","country":"MY","merchant_reference":%q,"recipient":{"type":"bank_account","account_number":"12%010d","bank_code":"MAYBANK","holder_name":"Aisyah"}}`,
		s.amount(), key, s.intn(1_000_000_000))
	status, out := s.keyedDo(m, "POST", "/v1/payout_intents", key, body)
	var po struct{ ID string }
	if status/100 == 2 && json.Unmarshal(out, &po) == nil {
		s.mu.Lock()
		m.payouts = append(m.payouts, po.ID)
		s.mu.Unlock()
	}
}

func (s *soak) cancel(m *merchant, key string) {
	if s.intn(2) == 0 {
		if po := s.some(func() []string { return m.payouts }); po != "" {
			s.keyedDo(m, "POST", "/v1/payout_intents/"+po+"/cancel", key, `{"reason":"soak"}`)
		}
		return
	}
	if pi := s.some(func() []string { return m.payments }); pi != "" {
		s.keyedDo(m, "POST", "/v1/payment_intents/"+pi+"/cancel", key, `{"reason":"soak"}`)
	}
}

// dispute opens a dispute on a payment and ends it at once: accepted, or
// with evidence the bank decides on after the sandbox's delay.
func (s *soak) dispute(m *merchant, key string) {
	pi := s.some(func() []string { return m.payments })
	if pi == "" {
		return
	}
	status, out := s.do("POST", "/v1/test_helpers/payment_intents/"+pi+"/dispute", "", `{"amount":"100"}`, m.auth)
	var d struct{ ID string }
	if status != 200 || json.Unmarshal(out, &d) != nil {
		return
	}
	if s.intn(2) == 0 {
		s.keyedDo(m, "POST", "/v1/disputes/"+d.ID+"/accept", key, "")
		return
	}
	s.keyedDo(m, "POST", "/v1/disputes/"+d.ID+"/evidence", key, `{"text":"Signed receipt: winning_evidence","submit":true}`)
}

// replay sends an earlier keyed request again, unchanged.
func (s *soak) replay(m *merchant) {
	var picked [4]string
	var key string
	n := s.intn(64)
	keyed.Range(func(k, v any) bool {
		key, picked = k.(string), v.([4]string)
		n--
		return n > 0
	})
	if key == "" {
		return
	}
	for _, mm := range s.merchants {
		if mm.id == picked[3] {
			m = mm
		}
	}
	s.do(picked[0], picked[1], key, picked[2], m.auth)
}

// settle waits until every payment, payout and refund is final and no job
// is due, then settles the merchants' funds, within limit.
func (s *soak) settle(ctx context.Context, limit time.Duration) error {
	store, err := sqlstore.Open(ctx, s.dsn)
	if err != nil {
		return err
	}
	defer store.Close()
	deadline := time.Now().Add(limit)
	for {
		open, err := s.unfinished(ctx, store)
		if err != nil {
			return err
		}
		if len(open) == 0 {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the work never settled: %s", strings.Join(open[:min(len(open), 10)], ", "))
		}
		time.Sleep(2 * time.Second)
	}
	for _, m := range s.merchants {
		s.do("POST", "/v1/test_helpers/settlements", "", "", m.auth)
	}
	// A break a batch read beside a success opened heals at the next
	// settlement sweep (a minute).
	for {
		early, err := earlyBreaks(ctx, store)
		if err != nil {
			return err
		}
		if early == 0 || time.Now().After(deadline.Add(2*time.Minute)) {
			break
		}
		time.Sleep(2 * time.Second)
	}
	// The events reach the endpoints.
	for {
		missing := s.undelivered(ctx, store)
		if len(missing) == 0 {
			return nil
		}
		if time.Now().After(deadline.Add(time.Minute)) {
			return fmt.Errorf("%d events never reached their endpoint: %s", len(missing), strings.Join(missing[:min(len(missing), 5)], ", "))
		}
		time.Sleep(2 * time.Second)
	}
}

// earlyBreaks counts the open breaks of lines read before paykit's
// records of them were final, which the settlement sweep judges again.
func earlyBreaks(ctx context.Context, store *sqlstore.Store) (int, error) {
	open, err := store.ListReconciliationBreaks(ctx, paykit.ListQuery[paykit.BreakListParams]{Filter: paykit.BreakListParams{Status: paykit.BreakOpen}, Limit: 1000})
	if err != nil {
		return 0, err
	}
	n := 0
	for _, b := range open {
		if b.Type == paykit.BreakUnknownToPaykit || b.Type == paykit.BreakAmountMismatch && b.Expected != nil && b.Expected.Amount == 0 {
			n++
		}
	}
	return n, nil
}

// unfinished lists what is not final yet.
func (s *soak) unfinished(ctx context.Context, store *sqlstore.Store) ([]string, error) {
	var open []string
	for _, m := range s.merchants {
		scope := paykit.Scope{MerchantID: m.id, Environment: paykit.Test}
		pis, err := store.ListPaymentIntents(ctx, paykit.ListQuery[paykit.ListParams[paykit.PaymentStatus]]{Scope: scope})
		if err != nil {
			return nil, err
		}
		for _, pi := range pis {
			if !pi.Status.Terminal() {
				open = append(open, pi.ID+" "+string(pi.Status))
			}
		}
		pos, err := store.ListPayoutIntents(ctx, paykit.PayoutQuery{ListQuery: paykit.ListQuery[paykit.ListParams[paykit.PayoutStatus]]{Scope: scope}})
		if err != nil {
			return nil, err
		}
		for _, po := range pos {
			if !po.Status.Terminal() {
				open = append(open, po.ID+" "+string(po.Status))
			}
		}
		res, err := store.ListRefunds(ctx, paykit.ListQuery[paykit.RefundListParams]{Scope: scope})
		if err != nil {
			return nil, err
		}
		for _, re := range res {
			if !re.Status.Terminal() {
				open = append(open, re.ID+" "+string(re.Status))
			}
		}
		ds, err := store.ListDisputes(ctx, paykit.ListQuery[paykit.DisputeListParams]{Scope: scope})
		if err != nil {
			return nil, err
		}
		for _, d := range ds {
			if !d.Status.Terminal() {
				open = append(open, d.ID+" "+string(d.Status))
			}
		}
	}
	return open, nil
}

// undelivered lists the events no endpoint acknowledged.
func (s *soak) undelivered(ctx context.Context, store *sqlstore.Store) []string {
	var missing []string
	for _, m := range s.merchants {
		events, err := store.ListEvents(ctx, paykit.ListQuery[paykit.EventListParams]{Scope: paykit.Scope{MerchantID: m.id, Environment: paykit.Test}})
		if err != nil {
			return []string{err.Error()}
		}
		for _, e := range events {
			if _, ok := s.delivered.Load(e.ID); !ok {
				missing = append(missing, e.ID+" "+e.Type)
			}
		}
	}
	return missing
}

// check runs the simulation's final checks on the database and the
// PSP's tables.
func (s *soak) check(ctx context.Context) {
	store, err := sqlstore.Open(ctx, s.dsn)
	if err != nil {
		s.failf("open the store: %v", err)
		return
	}
	defer store.Close()
	pspDB, err := sqlstore.Open(ctx, s.dsn)
	if err != nil {
		s.failf("open the PSP's tables: %v", err)
		return
	}
	defer pspDB.Close()
	st, err := sandboxsql.New(pspDB.DB(), pspDB.RunInTx)
	if err != nil {
		s.failf("the PSP's tables: %v", err)
		return
	}
	psp := sandbox.NewPSP(sandbox.PSPConfig{State: st})
	var scopes []paykit.Scope
	for _, m := range s.merchants {
		scopes = append(scopes, paykit.Scope{MerchantID: m.id, Environment: paykit.Test})
	}
	var errs []error
	for _, f := range sim.CheckStore(ctx, store, psp, scopes) {
		errs = append(errs, errors.New(f.Check+": "+f.Message))
	}
	for _, err := range errs {
		s.failf("%v", err)
	}
}
