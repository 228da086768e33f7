package sim

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/paykit/paykit"
)

// seedCounts are how many seeds TestSimulation runs on each Store: a few
// hundred in a plain run, fewer under the race detector (and -short).
// SIM_SEEDS=memory,sqlite overrides them; the command paykit-sim runs
// thousands.
func seedCounts(t *testing.T) (memory, sqlite int) {
	memory, sqlite = 240, 6
	if raceEnabled {
		// SQLite's pure-Go engine under the detector costs some twenty
		// seconds a run: its runs are left to the plain run.
		memory, sqlite = 40, 0 // the whole suite under -race stays under 5 minutes
	}
	if testing.Short() {
		memory, sqlite = 12, 0
	}
	if v := os.Getenv("SIM_SEEDS"); v != "" {
		m, s, _ := strings.Cut(v, ",")
		var err error
		if memory, err = strconv.Atoi(m); err != nil {
			t.Fatalf("SIM_SEEDS=%q: %v", v, err)
		}
		if sqlite, err = strconv.Atoi(s); err != nil && s != "" {
			t.Fatalf("SIM_SEEDS=%q: %v", v, err)
		}
	}
	return memory, sqlite
}

// TestSimulation runs seeds 1, 2, ... of the simulation on the memory
// and SQLite Stores. A failure is shrunk and reported with its seed, the
// command that replays it and the shrunk plan.
func TestSimulation(t *testing.T) {
	memory, sqlite := seedCounts(t)
	type run struct {
		seed uint64
		kind StoreKind
	}
	var runs []run
	for i := range max(memory, sqlite) {
		if i < sqlite {
			runs = append(runs, run{uint64(i + 1), SQLite})
		}
		if i < memory {
			runs = append(runs, run{uint64(i + 1), Memory})
		}
	}
	var (
		mu     sync.Mutex
		fired  = map[FaultKind]int{}
		inRuns = map[FaultKind]int{}
		failed = 0
	)
	shards := max(1, runtime.GOMAXPROCS(0))
	t.Run("seeds", func(t *testing.T) {
		for shard := range shards {
			t.Run(fmt.Sprint(shard), func(t *testing.T) {
				t.Parallel()
				for i := shard; i < len(runs); i += shards {
					r := runs[i]
					res := Run(Options{Seed: r.seed, Store: r.kind}, t)
					mu.Lock()
					for k, v := range res.Faults {
						fired[k] += v
						inRuns[k]++
					}
					mu.Unlock()
					if res.Failure == nil {
						continue
					}
					mu.Lock()
					failed++
					first := failed <= 2
					mu.Unlock()
					msg := res.Report()
					if first { // shrinking costs runs: the first failures only
						small := Shrink(Options{Seed: r.seed, Store: r.kind}, res, 60)
						msg += fmt.Sprintf("shrunk to %d steps: %v\n%sits plan, for -plan: %s\n",
							len(small.Plan.Ops), small.Failure, PlanText(small.Plan), PlanJSON(small.Plan))
					}
					t.Error(msg)
				}
			})
		}
	})
	t.Logf("%d seeds on memory, %d on SQLite; faults fired:\n%s", memory, sqlite, FaultReport(fired, inRuns))
}

// TestSameSeedSameRun runs seeds twice: the runs are the same.
func TestSameSeedSameRun(t *testing.T) {
	t.Parallel()
	for seed := uint64(1); seed <= 3; seed++ {
		a := Run(Options{Seed: seed, Steps: 60}, t)
		b := Run(Options{Seed: seed, Steps: 60}, t)
		if a.Digest != b.Digest || a.Steps != b.Steps {
			t.Errorf("seed %d ran two ways: digests %s and %s", seed, a.Digest, b.Digest)
		}
	}
}

// TestShrinkKeepsTheFailure shrinks a run that fails a check made to
// fail (a refund succeeded) to the few steps that make it fail.
func TestShrinkKeepsTheFailure(t *testing.T) {
	t.Parallel()
	refunded := func(w *world) string {
		b, err := w.readBooks()
		if err != nil {
			return err.Error()
		}
		for _, re := range sortedValues(b.refunds) {
			if re.Status == paykit.RefundSucceeded {
				return "refund " + re.ID + " succeeded"
			}
		}
		return ""
	}
	for seed := uint64(1); seed < 40; seed++ {
		opts := Options{Seed: seed, canary: refunded}
		res := Run(opts, t)
		if res.Failure == nil || res.Failure.Check != "sim.canary" {
			continue
		}
		small := Shrink(opts, res, 150)
		if small.Failure == nil || small.Failure.Check != "sim.canary" {
			t.Fatalf("seed %d shrunk to a plan that does not fail the same: %v", seed, small.Failure)
		}
		// A merchant, a payment, its payer, the news of its success, a
		// refund and the news of the refund's: a dozen steps at most.
		if n := len(small.Plan.Ops); n > 12 || n >= res.Steps {
			t.Errorf("seed %d failed after %d steps and shrunk to %d:\n%s", seed, res.Steps, n, PlanText(small.Plan))
		}
		t.Logf("seed %d: %d steps shrunk to %d:\n%s", seed, res.Steps, len(small.Plan.Ops), PlanText(small.Plan))
		again := Run(Options{Seed: seed, Plan: small.Plan, canary: refunded}, t)
		if again.Failure == nil || again.Digest != small.Digest {
			t.Errorf("the shrunk plan of seed %d does not fail again the same way", seed)
		}
		return
	}
	t.Fatal("no seed below 40 makes a refund succeed")
}

// TestOneSeed runs the seed SIM_SEED (on SIM_STORE) with its trace.
func TestOneSeed(t *testing.T) {
	if os.Getenv("SIM_SEED") == "" {
		t.Skip("SIM_SEED not set")
	}
	seed, err := strconv.ParseUint(os.Getenv("SIM_SEED"), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	res := Run(Options{Seed: seed, Store: StoreKind(os.Getenv("SIM_STORE")), Trace: os.Stdout}, t)
	if res.Failure != nil {
		t.Fatal(res.Report())
	}
}

// defectSeeds are the seeds whose runs found defects in paykit, each
// fixed with a regression test of the root package named after it
// (TestSimSeed…); they run here too, on the Store that found them.
var defectSeeds = []struct {
	seed uint64
	kind StoreKind
}{{12, Memory}, {32, Memory}, {34, Memory}, {55, Memory}, {56, Memory}, {1214, Memory}}

func TestDefectSeeds(t *testing.T) {
	t.Parallel()
	for _, d := range defectSeeds {
		if res := Run(Options{Seed: d.seed, Store: d.kind}, t); res.Failure != nil {
			t.Error(res.Report())
		}
	}
}
