// Command paykit-sim runs paykit's seeded simulation (package
// internal/sim): many seeds, reporting every failure with its seed, the
// command that replays it and a shrunk plan, and how often each fault
// fired; or one seed (or a saved plan) with its trace.
//
//	go run ./internal/sim/cmd/paykit-sim -seeds 10000 -store memory,sqlite
//	go run ./internal/sim/cmd/paykit-sim -seed 4242 -store sqlite -v
//	go run ./internal/sim/cmd/paykit-sim -seed 4242 -plan shrunk.json -v
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/paykit/paykit/internal/sim"
)

func main() {
	var (
		seeds    = flag.Int("seeds", 0, "run this many seeds, from -from")
		from     = flag.Uint64("from", 1, "the first seed of -seeds")
		seed     = flag.Uint64("seed", 0, "run (replay) this one seed")
		stores   = flag.String("store", "memory", "the Stores to run on: memory, sqlite, or both comma-separated")
		steps    = flag.Int("steps", sim.DefaultSteps, "steps of each generated plan")
		planFile = flag.String("plan", "", "with -seed: run this plan (JSON, as a failure prints it) instead of the seed's")
		verbose  = flag.Bool("v", false, "with -seed: print the trace")
		shrink   = flag.Int("shrink", 300, "runs to spend shrinking each failure (0: none)")
		parallel = flag.Int("parallel", runtime.GOMAXPROCS(0), "seeds run at once")
	)
	flag.Parse()
	var kinds []sim.StoreKind
	for _, k := range strings.Split(*stores, ",") {
		kinds = append(kinds, sim.StoreKind(strings.TrimSpace(k)))
	}
	switch {
	case *seed != 0:
		os.Exit(one(*seed, kinds, *steps, *planFile, *verbose, *shrink))
	case *seeds > 0:
		os.Exit(many(*from, *seeds, kinds, *steps, *parallel, *shrink))
	}
	flag.Usage()
	os.Exit(2)
}

// one runs one seed on each Store and reports it.
func one(seed uint64, kinds []sim.StoreKind, steps int, planFile string, verbose bool, shrink int) int {
	status := 0
	for _, kind := range kinds {
		opts := sim.Options{Seed: seed, Store: kind, Steps: steps}
		if planFile != "" {
			b, err := os.ReadFile(planFile)
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 2
			}
			var p sim.Plan
			if err := json.Unmarshal(b, &p); err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 2
			}
			opts.Plan = &p
		}
		if verbose {
			opts.Trace = os.Stdout
		}
		res := sim.Run(opts, nil)
		fmt.Printf("seed %d (%s): %d steps in %s, digest %s\n", seed, kind, res.Steps, res.Elapsed.Round(time.Millisecond), res.Digest)
		if res.Failure != nil {
			status = 1
			report(opts, res, shrink)
		}
	}
	return status
}

// many runs count seeds from first on every Store, parallel at a time.
func many(first uint64, count int, kinds []sim.StoreKind, steps, parallel, shrink int) int {
	type job struct {
		seed uint64
		kind sim.StoreKind
	}
	jobs := make(chan job)
	var (
		mu       sync.Mutex
		runs     = map[sim.StoreKind]int{}
		failures []*sim.Result
		byCheck  = map[string]int{}
		fired    = map[sim.FaultKind]int{}
		inRuns   = map[sim.FaultKind]int{}
		counts   = map[string]int{}
		wg       sync.WaitGroup
	)
	began := time.Now()
	for range max(parallel, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				res := sim.Run(sim.Options{Seed: j.seed, Store: j.kind, Steps: steps}, nil)
				mu.Lock()
				runs[j.kind]++
				for k, v := range res.Faults {
					fired[k] += v
					inRuns[k]++
				}
				for k, v := range res.Counts {
					counts[k] += v
				}
				done := 0
				for _, n := range runs {
					done += n
				}
				if res.Failure != nil {
					failures = append(failures, res)
					byCheck[res.Failure.Check]++
					fmt.Printf("FAIL seed %d (%s): %v\n", res.Seed, res.Store, res.Failure)
				}
				if done%500 == 0 {
					fmt.Printf("%d runs, %d failed, %s\n", done, len(failures), time.Since(began).Round(time.Second))
				}
				mu.Unlock()
			}
		}()
	}
	for s := first; s < first+uint64(count); s++ {
		for _, kind := range kinds {
			jobs <- job{s, kind}
		}
	}
	close(jobs)
	wg.Wait()
	fmt.Printf("\n%d runs (%v) in %s: %d failed %v\n", count*len(kinds), runs, time.Since(began).Round(time.Second), len(failures), byCheck)
	fmt.Printf("made: %v\nfaults fired:\n%s", counts, sim.FaultReport(fired, inRuns))
	sort.Slice(failures, func(i, j int) bool { return failures[i].Seed < failures[j].Seed })
	for i, res := range failures {
		if i == 5 {
			fmt.Printf("\n(%d more failures not shrunk)\n", len(failures)-5)
			break
		}
		report(sim.Options{Seed: res.Seed, Store: res.Store, Steps: steps}, res, shrink)
	}
	if len(failures) > 0 {
		return 1
	}
	return 0
}

// report prints a failure, shrunk within budget runs.
func report(opts sim.Options, res *sim.Result, budget int) {
	fmt.Printf("\n%s", res.Report())
	if budget <= 0 {
		return
	}
	small := sim.Shrink(opts, res, budget)
	fmt.Printf("shrunk to %d steps (from %d): %v\n%s", len(small.Plan.Ops), len(res.Plan.Ops), small.Failure, sim.PlanText(small.Plan))
	fmt.Printf("its plan, for -plan: %s\n", sim.PlanJSON(small.Plan))
}
