// Package sim is a seeded simulation of paykit's whole life, in the manner
// of deterministic simulation testing: from one seed it draws a workload
// (merchants, payments of every method, checkouts, cancels, refunds,
// payouts with approvals, cancels and returns, disputes, settlement,
// webhook endpoints) and a schedule of faults (Provider timeouts before
// and after it committed, lost, stale and duplicated answers, refusals,
// 5xx and 429; callbacks lost, repeated, reordered or delayed; endpoints
// that fail, hang, throttle or answer 410; a Store error between a
// Provider call and its write; crashes at any step; two instances on one
// Store; a Provider answer held while another instance recovers the same
// work; the clock jumping), runs the real Service against the sandbox PSP
// in this process on a simulated clock, and checks paykit's invariants
// after every step. Once the plan ran out it heals every fault, lets the
// work settle and checks that everything ended: every payment, payout and
// refund final, every event delivered to every healthy endpoint, paykit's
// books equal to the PSP's, and reconciliation's breaks exactly those the
// PSP's settlement implies.
//
// The same seed gives the same run. A failing run reports its seed, the
// command that replays it and a shrunk plan (Shrink).
//
// Running it:
//
//	go test ./internal/sim                  # 240 seeds on memory, 6 on SQLite (64 on memory with -race)
//	SIM_SEEDS=2000,50 go test ./internal/sim # other counts
//	go run ./internal/sim/cmd/paykit-sim -seeds 10000 -store memory,sqlite
//	go run ./internal/sim/cmd/paykit-sim -seed 4242 -store sqlite -v   # replay one seed with its trace
//	go run ./internal/sim/cmd/paykit-sim -seed 4242 -plan plan.json -v # replay a shrunk plan
//	bench/sim-soak.sh                       # PostgreSQL: example servers, SIGKILL, the same checks
package sim

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/paykittest"
)

// StoreKind is the Store a run uses.
type StoreKind string

// The Stores the simulation runs on, in this process.
const (
	Memory StoreKind = "memory"
	SQLite StoreKind = "sqlite"
)

// Options configure one run.
type Options struct {
	Seed  uint64
	Store StoreKind // Memory unless set
	// Steps is the length of the generated plan; default DefaultSteps.
	Steps int
	// Plan, when set, is run instead of the plan the seed generates (a
	// shrunk one).
	Plan *Plan
	// Trace, when set, receives the run's trace as it goes.
	Trace io.Writer

	// canary, when set, is one more check after every step (tests of the
	// harness itself): a non-empty answer fails the run.
	canary func(*world) string
}

// DefaultSteps is the plan length of a run when Options name none.
const DefaultSteps = 120

// Result is how a run went.
type Result struct {
	Seed    uint64
	Store   StoreKind
	Plan    *Plan
	Steps   int // steps run
	Failure *Failure
	// Faults counts, by kind, how often each fault fired.
	Faults map[FaultKind]int
	// Digest is a hash of the run's trace: two runs of one seed have the
	// same.
	Digest string
	// Tail is the end of the trace, for a failure's report.
	Tail []string
	// Counts are how many resources of each kind the run made.
	Counts map[string]int
	// Elapsed is the run's real time.
	Elapsed time.Duration
}

// Failure is the first invariant a run found broken.
type Failure struct {
	Step    int // the plan step after which it was found; -1 at quiescence
	Check   string
	Message string
}

func (f *Failure) Error() string {
	where := fmt.Sprintf("after step %d", f.Step)
	if f.Step < 0 {
		where = "at quiescence"
	}
	return fmt.Sprintf("%s %s: %s", f.Check, where, f.Message)
}

// ReplayCommand is the command that runs seed again on store, verbosely.
func ReplayCommand(seed uint64, store StoreKind, steps int) string {
	cmd := fmt.Sprintf("go run ./internal/sim/cmd/paykit-sim -seed %d -store %s", seed, store)
	if steps != 0 && steps != DefaultSteps {
		cmd += fmt.Sprintf(" -steps %d", steps)
	}
	return cmd + " -v"
}

// Report describes a failed run: its failure, seed, replay command and
// the trace's end.
func (r *Result) Report() string {
	var b strings.Builder
	fmt.Fprintf(&b, "seed %d (%s): %v\n", r.Seed, r.Store, r.Failure)
	fmt.Fprintf(&b, "replay: %s\n", ReplayCommand(r.Seed, r.Store, len(r.Plan.Ops)))
	if len(r.Tail) > 0 {
		b.WriteString("trace (end):\n")
		for _, l := range r.Tail {
			b.WriteString("  " + l + "\n")
		}
	}
	return b.String()
}

// Run runs one seed, with t for its temporary files and cleanups (nil:
// the run makes its own).
func Run(opts Options, t paykittest.T) *Result {
	began := time.Now()
	if opts.Store == "" {
		opts.Store = Memory
	}
	if opts.Steps == 0 {
		opts.Steps = DefaultSteps
	}
	if t == nil {
		own := newTB()
		defer own.cleanup()
		t = own
	}
	t = inMemoryDir{t}
	plan := opts.Plan
	if plan == nil {
		plan = Generate(opts.Seed, opts.Steps)
	}
	res := &Result{Seed: opts.Seed, Store: opts.Store, Plan: plan}
	w, err := newWorld(opts, t)
	if err != nil {
		res.Failure = &Failure{Step: 0, Check: "sim.setup", Message: err.Error()}
		return res
	}
	func() {
		defer func() {
			if r := recover(); r != nil {
				w.fail("sim.panic", "%v", r)
			}
		}()
		for i, op := range plan.Ops {
			w.exec(i, op)
			res.Steps = i + 1
			w.checkStep()
			if opts.canary != nil && w.failure == nil {
				if msg := opts.canary(w); msg != "" {
					w.fail("sim.canary", "%s", msg)
				}
			}
			if w.failure != nil {
				return
			}
		}
		w.step = -1
		w.quiesce()
	}()
	res.Failure = w.failure
	res.Faults = w.faults.snapshot()
	res.Digest = w.trace.digest()
	res.Tail = w.trace.tail()
	res.Counts = map[string]int{
		"merchants": len(w.obs.merchants), "payments": len(w.obs.payments), "payouts": len(w.obs.payouts),
		"refunds": len(w.obs.refunds), "disputes": len(w.obs.disputes), "checkouts": len(w.obs.checkouts),
		"endpoints": len(w.obs.endpoints), "instances": len(w.instances),
	}
	res.Elapsed = time.Since(began)
	return res
}

// fail records the first broken invariant of the run.
func (w *world) fail(check, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	w.trace.logf("FAIL %s: %s", check, msg)
	if w.failure == nil {
		w.failure = &Failure{Step: w.step, Check: check, Message: msg}
	}
	if w.collect {
		w.all = append(w.all, Failure{Step: w.step, Check: check, Message: msg})
	}
}

// tracer keeps a run's trace: a digest of all of it and its last lines.
type tracer struct {
	mu    sync.Mutex
	out   io.Writer
	sum   [32]byte
	lines []string
	ids   map[string]string // random ids by their number in the digest
}

const tailLines = 60

func newTracer(out io.Writer) *tracer { return &tracer{out: out} }

func (t *tracer) logf(format string, args ...any) {
	line := fmt.Sprintf(format, args...)
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.out != nil {
		fmt.Fprintln(t.out, line)
	}
	t.sum = sha256.Sum256(append(t.sum[:], t.canonical(line)...))
	t.lines = append(t.lines, line)
	if len(t.lines) > 4*tailLines {
		t.lines = append(t.lines[:0], t.lines[len(t.lines)-tailLines:]...)
	}
}

// randomIDs are the ids drawn at random, by the PSP and for events: the
// digest names each by the order it first appeared in.
var randomIDs = regexp.MustCompile(`\b(evt|stl|pay|rfd|dsp|trf)_[0-9a-z]+`)

// canonical is line with its random ids numbered in order of appearance.
func (t *tracer) canonical(line string) string {
	return randomIDs.ReplaceAllStringFunc(line, func(id string) string {
		if t.ids == nil {
			t.ids = map[string]string{}
		}
		n, ok := t.ids[id]
		if !ok {
			n = fmt.Sprintf("#%d", len(t.ids)+1)
			t.ids[id] = n
		}
		return n
	})
}

func (t *tracer) digest() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return hex.EncodeToString(t.sum[:8])
}

func (t *tracer) tail() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]string(nil), t.lines[max(0, len(t.lines)-tailLines):]...)
}

// inMemoryDir is t with its temporary directories in /dev/shm where
// there is one: a SQLite run's every commit then costs no disk flush.
type inMemoryDir struct{ paykittest.T }

func (t inMemoryDir) TempDir() string {
	dir, err := os.MkdirTemp("/dev/shm", "paykit-sim-")
	if err != nil {
		return t.T.TempDir()
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// tb is a paykittest.T for runs outside a test.
type tb struct {
	mu       sync.Mutex
	dir      string
	cleanups []func()
}

func newTB() *tb { return &tb{} }

func (t *tb) Helper() {}

func (t *tb) Errorf(format string, args ...any) {
	panic(fmt.Sprintf(format, args...))
}

func (t *tb) Fatalf(format string, args ...any) {
	panic(fmt.Sprintf(format, args...))
}

func (t *tb) Cleanup(f func()) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.cleanups = append(t.cleanups, f)
}

func (t *tb) TempDir() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.dir == "" {
		dir, err := os.MkdirTemp("", "paykit-sim-")
		if err != nil {
			panic(err)
		}
		t.dir = dir
	}
	dir, err := os.MkdirTemp(t.dir, "")
	if err != nil {
		panic(err)
	}
	return dir
}

func (t *tb) cleanup() {
	t.mu.Lock()
	fs := t.cleanups
	t.cleanups = nil
	dir := t.dir
	t.mu.Unlock()
	for i := len(fs) - 1; i >= 0; i-- {
		fs[i]()
	}
	if dir != "" {
		os.RemoveAll(dir)
	}
}

var _ paykit.Store = (*instStore)(nil)
