package sim

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"time"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/internal/adapterhooks"
	"github.com/paykit/paykit/keyring"
	"github.com/paykit/paykit/paykittest"
	"github.com/paykit/paykit/provider/sandbox"
)

// pspKey is the sandbox PSP's API key; it also signs its callbacks.
const pspKey = "paykit-sim-psp-key"

// publicURL is the Service's public base URL: payer links are built from
// it and parsed back by the payer's side of the simulation.
const publicURL = "https://pay.sim.example"

// start is where every run's clock starts: a Monday morning, so that
// settlement boundaries (midnight UTC) fall inside the first day.
var start = time.Date(2026, 6, 1, 8, 0, 0, 0, time.UTC)

// lease is the job lease of every instance: short enough that a crashed
// instance's jobs are taken over within a few steps of simulated time.
const lease = 20 * time.Second

// approvalThreshold is the amount (minor units) from which a payout waits
// for an operator.
const approvalThreshold = 400_000

// world is one run's universe: the shared Store, the sandbox PSP, the
// instances of paykit on them, the merchants' webhook receivers and
// what the simulation observed.
type world struct {
	opts Options
	seed uint64
	rng  *rand.Rand // runtime choices the plan leaves open
	// jitter is the instances' source of retry jitter, apart from rng so
	// that the plan's choices do not depend on how many retries ran.
	jitter *rand.Rand
	clock  *paykit.ManualClock
	ctx    context.Context
	t      paykittest.T

	// store is the Store every instance shares (memory), or the DSN they
	// each open (SQLite).
	store  paykit.Store
	dsn    string
	reader paykit.Store // the simulation's own handle on a SQLite Store

	psp       *sandbox.PSP
	pspDirect *sandbox.Provider // the PSP's adapter without faults, for the checks
	callbacks *httptest.Server  // where the PSP posts its callbacks
	inbox     []capturedCallback
	inboxMu   sync.Mutex
	held      []capturedCallback // captured and not yet handed to paykit

	instances []*instance
	nextInst  int
	ids       idSource
	keys      *keyring.Keyring
	random    *rand.ChaCha8

	sender    *sender
	faults    *faultCounts
	leases    leaseBook
	obs       *observations
	trace     *tracer
	failure   *Failure
	step      int
	stepFault FaultKind // the fault the running step armed
	quiescing bool
	// commits counts the transactions committed, and checked how many
	// the last ledger check saw: the ledger changes only in one.
	commits atomic.Int64
	checked int64
	// collect keeps every failure in all, not only the first.
	collect bool
	all     []Failure
}

// capturedCallback is one callback the PSP posted: its body and
// signature, as paykit's endpoint would receive them.
type capturedCallback struct {
	body []byte
	sig  string
}

// idSource makes the ids of every instance: sortable in creation order,
// the same in every run of a seed.
type idSource struct {
	mu sync.Mutex
	n  int64
}

func (s *idSource) next(prefix string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.n++
	return fmt.Sprintf("%s_%014d", prefix, s.n)
}

// instance is one paykit process: a Service with its own view of the
// Store and of the Provider, either of which its death cuts off.
type instance struct {
	w     *world
	name  string
	svc   *paykit.Service
	store *instStore
	prov  *simProvider
	dead  bool
	// failTx fails the next transaction the instance begins, with this
	// error (a Store fault between a Provider call and its write).
	failTx     error
	failTxKind FaultKind
	// crashAfterCall kills the instance as soon as its next Provider call
	// returned, before anything learns the answer.
	crashAfterCall bool
	// crashAtTx kills the instance when it begins its crashAtTx-th
	// transaction from now (1: the next).
	crashAtTx int
	// armed is the Provider fault the instance's next matching call meets.
	armed *armedFault
	// pause, when set, holds the instance's next Provider call, once the
	// PSP has answered it, until release is closed: the simulation runs
	// other instances meanwhile.
	pause    chan struct{}
	release  chan struct{}
	replaced bool // dead, and a new instance runs in its place
}

// errCrashed is what a dead instance's Store and Provider calls return.
var errCrashed = errors.New("sim: the instance crashed")

func newWorld(opts Options, t paykittest.T) (*world, error) {
	w := &world{
		opts:   opts,
		seed:   opts.Seed,
		rng:    rand.New(rand.NewPCG(opts.Seed, 0x5eed)),
		jitter: rand.New(rand.NewPCG(opts.Seed, 0x717e)),
		clock:  paykit.NewManualClock(start),
		ctx:    context.Background(),
		t:      t,
		faults: newFaultCounts(),
		obs:    newObservations(),
		trace:  newTracer(opts.Trace),
	}
	var seedBytes [32]byte
	for i := range seedBytes {
		seedBytes[i] = byte(opts.Seed >> (8 * (i % 8)))
	}
	w.random = rand.NewChaCha8(seedBytes)
	keys, err := keyring.New("sim", map[string][]byte{"sim": []byte("paykit-simulation-account-key-32")})
	if err != nil {
		return nil, err
	}
	w.keys = keys
	switch opts.Store {
	case Memory:
		w.store = paykittest.OpenStore(t, paykittest.Memory)
	case SQLite:
		w.dsn = paykittest.MigratedDSN(t, paykittest.SQLite)
		w.reader = paykittest.OpenSQL(t, w.dsn)
	default:
		return nil, fmt.Errorf("sim: unknown store %q", opts.Store)
	}
	w.callbacks = httptest.NewServer(http.HandlerFunc(w.captureCallback))
	t.Cleanup(w.callbacks.Close)
	w.psp = sandbox.NewPSP(sandbox.PSPConfig{
		BaseURL: "http://psp.sim.example/sandbox", APIKey: pspKey, Now: w.clock.Now,
		CallbackURL: w.callbacks.URL, Delay: 2 * time.Second,
	})
	w.pspDirect = sandbox.New(sandbox.Config{PSP: w.psp, APIKey: pspKey, Timeout: time.Minute})
	w.sender = newSender(w)
	if _, err := w.startInstance(); err != nil {
		return nil, err
	}
	return w, nil
}

// captureCallback receives the PSP's callbacks: it keeps each for the
// simulation to hand to paykit (or lose, repeat, reorder or delay) and
// acknowledges it.
func (w *world) captureCallback(rw http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(rw, err.Error(), http.StatusBadRequest)
		return
	}
	w.inboxMu.Lock()
	w.inbox = append(w.inbox, capturedCallback{body: body, sig: r.Header.Get(sandbox.SignatureHeader)})
	w.inboxMu.Unlock()
}

// takeInbox returns the callbacks captured since the last call.
func (w *world) takeInbox() []capturedCallback {
	w.inboxMu.Lock()
	defer w.inboxMu.Unlock()
	out := w.inbox
	w.inbox = nil
	return out
}

// startInstance starts another paykit instance on the shared Store.
func (w *world) startInstance() (*instance, error) {
	w.nextInst++
	in := &instance{w: w, name: fmt.Sprintf("w%d", w.nextInst)}
	var base paykit.Store
	if w.store != nil {
		base = w.store
	} else {
		s := paykittest.OpenSQL(w.t, w.dsn)
		base = s
	}
	in.store = &instStore{Store: base, in: in}
	in.prov = &simProvider{inner: sandbox.New(sandbox.Config{PSP: w.psp, APIKey: pspKey, Timeout: time.Minute}), in: in}
	svc, err := paykit.New(paykit.Config{
		Store: in.store, Now: w.clock.Now, NewID: w.ids.next, Random: w.random,
		Logger:   slog.New(slog.NewTextHandler(io.Discard, nil)),
		WorkerID: in.name, WorkerConcurrency: 1, JobLease: lease,
		Routing:   sandbox.DefaultRouting(),
		Providers: map[string]paykit.Provider{sandbox.Name: in.prov},
		PublicURL: publicURL, SigningKey: []byte("paykit-simulation-signing-key-32"), AccountKeys: w.keys,
		ApprovalThreshold: approvalThreshold, WebhookTimeout: 10 * time.Second,
	})
	if err != nil {
		return nil, err
	}
	adapterhooks.SetWebhookSender(svc, w.sender)
	adapterhooks.SetJitter(svc, w.jitter.Float64)
	in.svc = svc
	w.instances = append(w.instances, in)
	w.trace.logf("instance %s started", in.name)
	return in, nil
}

// live returns the instances that are running.
func (w *world) live() []*instance {
	var out []*instance
	for _, in := range w.instances {
		if !in.dead {
			out = append(out, in)
		}
	}
	return out
}

// pick returns the live instance a plan's selector names.
func (w *world) pick(sel int) *instance {
	live := w.live()
	return live[sel%len(live)]
}

// kill ends an instance: from now on its Store and Provider calls fail,
// as a process's would after SIGKILL, and the instance is replaced by a
// new one on the same Store.
func (w *world) kill(in *instance, why string) {
	if in.dead {
		return
	}
	in.dead = true
	w.trace.logf("instance %s crashed (%s)", in.name, why)
}

// replaceDead starts a new instance for every dead one not replaced yet,
// so that the number of instances stays as the plan made it: a crashed
// process is restarted.
func (w *world) replaceDead() error {
	for _, in := range w.instances {
		if in.dead && !in.replaced {
			in.replaced = true
			if _, err := w.startInstance(); err != nil {
				return err
			}
		}
	}
	return nil
}

// gate is what the instance's next Store transaction meets: an error
// when the instance is dead or a fault is armed.
func (in *instance) gate() error {
	if in.dead {
		return errCrashed
	}
	if in.crashAtTx > 0 {
		if in.crashAtTx--; in.crashAtTx == 0 {
			in.w.faults.fired(FaultCrashAtTx)
			in.w.kill(in, "at a transaction")
			return errCrashed
		}
	}
	if err := in.failTx; err != nil {
		in.failTx = nil
		in.w.faults.fired(in.failTxKind)
		in.w.trace.logf("  %s meets %s", in.name, in.failTxKind)
		return err
	}
	return nil
}

// instStore is an instance's view of the shared Store: its transactions,
// job claims and writes outside transactions stop when it dies, and the
// claims of every instance are checked against each other.
type instStore struct {
	paykit.Store
	in *instance
}

func (s *instStore) InTx(ctx context.Context, fn func(tx paykit.Tx) error) error {
	if err := s.in.gate(); err != nil {
		return err
	}
	err := s.Store.InTx(ctx, fn)
	if err == nil {
		s.in.w.commits.Add(1)
	}
	return err
}

func (s *instStore) Queue() paykit.JobQueue { return &instQueue{JobQueue: s.Store.Queue(), in: s.in} }

func (s *instStore) TakeLease(ctx context.Context, l paykit.Lease) (bool, error) {
	if s.in.dead {
		return false, errCrashed
	}
	return s.Store.TakeLease(ctx, l)
}

func (s *instStore) CreateWebhookAttempt(ctx context.Context, a *paykit.WebhookAttempt) error {
	if s.in.dead {
		return errCrashed
	}
	return s.Store.CreateWebhookAttempt(ctx, a)
}

func (s *instStore) RecordSettledLines(ctx context.Context, lines []paykit.SettledLine) ([]paykit.SettledLine, error) {
	if s.in.dead {
		return nil, errCrashed
	}
	return s.Store.RecordSettledLines(ctx, lines)
}

func (s *instStore) CreateReconciliationRun(ctx context.Context, r *paykit.ReconciliationRun) error {
	if s.in.dead {
		return errCrashed
	}
	return s.Store.CreateReconciliationRun(ctx, r)
}

// instQueue is an instance's view of the job queue. It records every
// lease granted, so that a job leased to two runs at once is seen.
type instQueue struct {
	paykit.JobQueue
	in *instance
}

func (q *instQueue) ClaimJobs(ctx context.Context, p paykit.ClaimParams) ([]paykit.Job, error) {
	if q.in.dead {
		return nil, errCrashed
	}
	jobs, err := q.JobQueue.ClaimJobs(ctx, p)
	if err == nil {
		for _, j := range jobs {
			q.in.w.leases.claim(q.in.w, j, p)
			q.in.w.trace.logf("    %s runs %s %s (attempt %d)", q.in.name, j.Kind, j.TargetID, j.Attempts)
		}
	}
	return jobs, err
}

func (q *instQueue) RenewJobLeases(ctx context.Context, owner string, runs []paykit.JobRun, until time.Time) ([]paykit.JobRun, error) {
	if q.in.dead {
		return nil, errCrashed
	}
	lost, err := q.JobQueue.RenewJobLeases(ctx, owner, runs, until)
	if err == nil {
		q.in.w.leases.renew(runs, lost, until)
	}
	return lost, err
}

func (q *instQueue) FinishJobs(ctx context.Context, owner string, ends []paykit.JobEnd) ([]paykit.JobRun, error) {
	if q.in.dead {
		return nil, errCrashed
	}
	lost, err := q.JobQueue.FinishJobs(ctx, owner, ends)
	if err == nil {
		q.in.w.leases.finish(ends, lost)
		for _, e := range ends {
			if e.Status != paykit.JobCompleted {
				q.in.w.trace.logf("    %s: job %s %s until %s %s", q.in.name, e.ID, e.Status, e.RunAt.Format("01-02 15:04:05"), e.LastError)
			}
		}
		for _, l := range lost {
			q.in.w.trace.logf("    %s: lost the lease of %s", q.in.name, l.ID)
		}
	}
	return lost, err
}

// leaseBook is every job lease granted and not yet given back, to check
// that the Store never grants a job's lease while another run holds it.
type leaseBook struct {
	mu   sync.Mutex
	runs map[string]leaseRun // by job id
}

type leaseRun struct {
	owner    string
	attempts int
	until    time.Time
}

func (b *leaseBook) claim(w *world, j paykit.Job, p paykit.ClaimParams) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.runs == nil {
		b.runs = map[string]leaseRun{}
	}
	if prev, ok := b.runs[j.ID]; ok && prev.until.After(p.Now) {
		w.fail("jobs.single_runner", "job %s (%s) was leased to %s until %s and claimed by %s at %s",
			j.ID, j.Kind, prev.owner, prev.until.Format(time.RFC3339Nano), p.Owner, p.Now.Format(time.RFC3339Nano))
	}
	b.runs[j.ID] = leaseRun{owner: p.Owner, attempts: j.Attempts, until: p.LeaseUntil}
}

func (b *leaseBook) renew(runs, lost []paykit.JobRun, until time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	gone := map[paykit.JobRun]bool{}
	for _, l := range lost {
		gone[l] = true
	}
	for _, r := range runs {
		if cur, ok := b.runs[r.ID]; ok && !gone[r] && cur.attempts == r.Attempts {
			cur.until = until
			b.runs[r.ID] = cur
		}
	}
}

func (b *leaseBook) finish(ends []paykit.JobEnd, lost []paykit.JobRun) {
	b.mu.Lock()
	defer b.mu.Unlock()
	gone := map[paykit.JobRun]bool{}
	for _, l := range lost {
		gone[l] = true
	}
	for _, e := range ends {
		if cur, ok := b.runs[e.ID]; ok && !gone[e.JobRun] && cur.attempts == e.Attempts {
			delete(b.runs, e.ID)
		}
	}
}

// deliverCallback hands one captured callback to paykit on instance in,
// as its Provider callback endpoint would, and reports whether paykit
// acknowledged it.
func (w *world) deliverCallback(in *instance, c capturedCallback) error {
	r := httptest.NewRequest(http.MethodPost, "/providers/sandbox/webhooks", bytes.NewReader(c.body))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set(sandbox.SignatureHeader, c.sig)
	return in.svc.HandleProviderCallback(w.ctx, sandbox.Name, r)
}
