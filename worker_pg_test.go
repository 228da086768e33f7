package paykit_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/paykittest"
)

// Several Service instances on one PostgreSQL database share the work:
// every job runs exactly once, and all instances take part.
func TestWorkersShareJobsOnPostgres(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	store := paykittest.OpenStore(t, paykittest.Postgres)

	clock := paykit.NewManualClock(time.Date(2026, 7, 1, 0, 0, 0, 0, time.UTC))
	const instances, jobs = 4, 200
	var mu sync.Mutex
	runs := map[string]int{}
	perInstance := make([]atomic.Int32, instances)
	svcs := make([]*paykit.Service, instances)
	for i := range svcs {
		svcs[i] = newWorkerService(t, store, clock, fmt.Sprintf("instance-%d", i))
		paykit.HandleJob(svcs[i], "work", func(_ context.Context, j *paykit.Job) error {
			mu.Lock()
			runs[j.ID]++
			mu.Unlock()
			perInstance[i].Add(1)
			time.Sleep(10 * time.Millisecond) // hold the lease a moment so others must skip it
			return nil
		})
	}
	is.NoErr(store.InTx(ctx, func(tx paykit.Tx) error {
		for range jobs {
			if err := paykit.EnqueueJob(ctx, svcs[0], tx, &paykit.Job{Kind: "work"}); err != nil {
				return err
			}
		}
		return nil
	}))

	// Every instance keeps claiming until all jobs have run: a round that
	// finds nothing due (the rest leased by others) does not end its part.
	var wg sync.WaitGroup
	start := make(chan struct{})
	ran := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(runs)
	}
	deadline := time.Now().Add(time.Minute) // a bound for a broken queue, not a timing
	for _, svc := range svcs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for {
				n, err := svc.ProcessDue(ctx)
				if err != nil {
					t.Error(err)
					return
				}
				if n == 0 {
					if ran() >= jobs {
						return
					}
					if time.Now().After(deadline) {
						t.Errorf("%d of %d jobs ran", ran(), jobs)
						return
					}
					time.Sleep(time.Millisecond) // the others' leases, held for 10 ms
				}
			}
		}()
	}
	close(start)
	wg.Wait()
	is.Equal(len(runs), jobs)
	for id, n := range runs {
		if n != 1 {
			t.Errorf("job %s ran %d times", id, n)
		}
	}
	busy := 0
	for i := range perInstance {
		if perInstance[i].Load() > 0 {
			busy++
		}
	}
	is.True(busy >= 2) // the work was shared
	t.Logf("jobs per instance: %d %d %d %d", perInstance[0].Load(), perInstance[1].Load(), perInstance[2].Load(), perInstance[3].Load())
}

// Instances that start a round at the same moment on one PostgreSQL
// database purge once between them: the Store's lease picks one.
func TestConcurrentPurgeOnPostgres(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	store := paykittest.OpenSQL(t, paykittest.MigratedDSN(t, paykittest.Postgres))
	clock := paykit.NewManualClock(time.Date(2026, 7, 1, 0, 0, 0, 0, time.UTC))
	var idem, jobs atomic.Int32
	svcs := make([]*paykit.Service, 6)
	for i := range svcs {
		svcs[i] = newWorkerService(t, purgeTally{store, &idem, &jobs}, clock, fmt.Sprintf("instance-%d", i))
	}
	for round := range 3 {
		var wg sync.WaitGroup
		for _, svc := range svcs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := svc.ProcessDue(ctx); err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		is.Equal(idem.Load(), int32(round+1)) // one purge a minute, whoever does it
		is.Equal(jobs.Load(), int32(round+1))
		clock.Advance(time.Minute)
	}
}
