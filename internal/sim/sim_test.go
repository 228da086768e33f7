package sim

import (
	"os"
	"strconv"
	"testing"
)

// TestSeedOne runs one seed verbosely: SIM_SEED picks it.
func TestSeedOne(t *testing.T) {
	seed, _ := strconv.ParseUint(os.Getenv("SIM_SEED"), 10, 64)
	if os.Getenv("SIM_SEED") == "" {
		t.Skip("SIM_SEED not set")
	}
	store := StoreKind(os.Getenv("SIM_STORE"))
	res := Run(Options{Seed: seed, Store: store, Trace: os.Stdout}, t)
	if res.Failure != nil {
		t.Fatal(res.Report())
	}
	t.Logf("seed %d: %d steps in %s, faults %v, counts %v", seed, res.Steps, res.Elapsed, res.Faults, res.Counts)
}

// TestSweep runs SIM_SWEEP seeds from SIM_FROM and reports each failure.
func TestSweep(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("SIM_SWEEP"))
	if n == 0 {
		t.Skip("SIM_SWEEP not set")
	}
	from, _ := strconv.ParseUint(os.Getenv("SIM_FROM"), 10, 64)
	store := StoreKind(os.Getenv("SIM_STORE"))
	fired := map[FaultKind]int{}
	runs := map[FaultKind]int{}
	failed := map[string]int{}
	for seed := from; seed < from+uint64(n); seed++ {
		res := Run(Options{Seed: seed, Store: store}, t)
		for k, v := range res.Faults {
			fired[k] += v
			runs[k]++
		}
		if res.Failure != nil {
			failed[res.Failure.Check]++
			if failed[res.Failure.Check] <= 2 {
				t.Errorf("%s", res.Report())
			} else {
				t.Logf("seed %d: %v", seed, res.Failure)
			}
		}
	}
	t.Logf("failures by check: %v\nfaults:\n%s", failed, FaultReport(fired, runs))
}

// TestDeterminismProbe runs SIM_DET seeds twice each and compares digests.
func TestDeterminismProbe(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("SIM_DET"))
	if n == 0 {
		t.Skip("SIM_DET not set")
	}
	store := StoreKind(os.Getenv("SIM_STORE"))
	for seed := uint64(1); seed <= uint64(n); seed++ {
		a := Run(Options{Seed: seed, Store: store}, t)
		b := Run(Options{Seed: seed, Store: store}, t)
		if a.Digest != b.Digest {
			t.Errorf("seed %d: digests %s and %s", seed, a.Digest, b.Digest)
		}
	}
}
