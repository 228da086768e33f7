package paykit_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/store/memory"
)

// A host registers a job kind of its own and enqueues its jobs in the
// same Store transaction as the change that needs them; the Service's
// worker runs them with paykit's own.
func ExampleService_RegisterJobKind() {
	ctx := context.Background()
	store := memory.New()
	svc, err := paykit.New(paykit.Config{Store: store})
	if err != nil {
		panic(err)
	}
	err = svc.RegisterJobKind("report.send", func(ctx context.Context, j *paykit.Job) error {
		fmt.Printf("sending report %s: %s\n", j.TargetID, j.Payload)
		return nil // an error would retry it with backoff
	}, paykit.JobKindOptions{MaxAttempts: 10})
	if err != nil {
		panic(err)
	}

	err = store.InTx(ctx, func(tx paykit.Tx) error {
		// ... the host's own writes in tx ...
		return svc.EnqueueJobTx(ctx, tx, &paykit.Job{Kind: "report.send", TargetID: "rep_1", Payload: []byte(`{"month":"2026-05"}`)})
	})
	if err != nil {
		panic(err)
	}
	n, err := svc.ProcessDue(ctx) // Run does this every WorkerInterval
	if err != nil {
		panic(err)
	}
	page, err := svc.ListJobs(ctx, paykit.JobListParams{State: paykit.JobCompleted})
	if err != nil {
		panic(err)
	}
	fmt.Println(n, "job run;", len(page.Data), "completed job listed:", page.Data[0].Kind)
	// Output:
	// sending report rep_1: {"month":"2026-05"}
	// 1 job run; 1 completed job listed: report.send
}

// reportService is a Service on the memory Store, on cfg, with the host's
// job kind report.send, whose runs h makes.
func reportService(cfg paykit.Config, h paykit.JobHandler) *paykit.Service {
	svc := bareService(cfg)
	if err := svc.RegisterJobKind("report.send", h, paykit.JobKindOptions{}); err != nil {
		panic(err)
	}
	return svc
}

// sendReport is a report.send handler that prints what it sends.
func sendReport(_ context.Context, j *paykit.Job) error {
	fmt.Println("sending report", j.TargetID)
	return nil
}

// report is a report.send job for report id.
func report(id string) *paykit.Job {
	return &paykit.Job{Kind: "report.send", TargetID: id, Payload: []byte(`{"month":"2026-05"}`)}
}

// Run is the worker a host starts once per instance: it runs the due jobs
// of every kind until its context ends, then returns nil.
func ExampleService_Run() {
	sent := make(chan string)
	svc := reportService(paykit.Config{WorkerInterval: 10 * time.Millisecond}, func(_ context.Context, j *paykit.Job) error {
		sent <- j.TargetID
		return nil
	})
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- svc.Run(ctx) }()

	if err := svc.EnqueueJob(context.Background(), report("rep_1")); err != nil {
		panic(err)
	}
	fmt.Println("sent", <-sent)
	stop()
	fmt.Println("Run returned", <-done)
	// Output:
	// sent rep_1
	// Run returned <nil>
}

// ProcessDue runs one round of what is due now; a job set to run later
// waits for its time.
func ExampleService_ProcessDue() {
	clock := paykit.NewManualClock(exampleStart)
	svc := reportService(paykit.Config{Now: clock.Now}, sendReport)
	ctx := context.Background()
	later := report("rep_2")
	later.RunAt = exampleStart.Add(time.Hour)
	for _, j := range []*paykit.Job{report("rep_1"), later} {
		if err := svc.EnqueueJob(ctx, j); err != nil {
			panic(err)
		}
	}

	for range 2 {
		n, err := svc.ProcessDue(ctx)
		if err != nil {
			panic(err)
		}
		fmt.Println(n, "run")
	}
	clock.Advance(time.Hour)
	n, _ := svc.ProcessDue(ctx)
	fmt.Println(n, "run")
	// Output:
	// sending report rep_1
	// 1 run
	// 0 run
	// sending report rep_2
	// 1 run
}

// EnqueueJob writes a host job on its own; a DedupKey held by a pending
// job makes a second enqueue a no-op, and a kind the host did not register
// is refused.
func ExampleService_EnqueueJob() {
	svc := reportService(paykit.Config{}, sendReport)
	ctx := context.Background()
	for range 2 {
		j := report("rep_3")
		j.DedupKey = "report.send:rep_3"
		if err := svc.EnqueueJob(ctx, j); err != nil {
			panic(err)
		}
	}
	page, _ := svc.ListJobs(ctx, paykit.JobListParams{Kind: "report.send"})
	fmt.Println(len(page.Data), "job pending:", page.Data[0].TargetID, page.Data[0].State)

	err := svc.EnqueueJob(ctx, &paykit.Job{Kind: "invoice.print"})
	fmt.Println(err)
	// Output:
	// 1 job pending: rep_3 due
	// paykit: job kind "invoice.print" is not registered by the host (RegisterJobKind)
}

// EnqueueJobTx writes the job in the host's transaction of the Service's
// Store: rolled back, the job does not exist and never runs.
func ExampleService_EnqueueJobTx() {
	svc := reportService(paykit.Config{}, sendReport)
	ctx := context.Background()
	store := svc.Store()

	err := store.InTx(ctx, func(tx paykit.Tx) error {
		if err := svc.EnqueueJobTx(ctx, tx, report("rep_4")); err != nil {
			return err
		}
		return errors.New("the report is empty") // the host rolls back
	})
	fmt.Println("rolled back:", err)
	err = store.InTx(ctx, func(tx paykit.Tx) error { return svc.EnqueueJobTx(ctx, tx, report("rep_5")) })
	if err != nil {
		panic(err)
	}
	n, _ := svc.ProcessDue(ctx)
	fmt.Println(n, "run")
	// Output:
	// rolled back: the report is empty
	// sending report rep_5
	// 1 run
}

// The operator's view of the queue: each job with its state now, and why
// the last run failed.
func ExampleService_ListJobs() {
	clock := paykit.NewManualClock(exampleStart)
	svc := reportService(paykit.Config{Now: clock.Now}, func(_ context.Context, j *paykit.Job) error {
		if j.TargetID == "rep_6" {
			return errors.New("mail server refused the report")
		}
		return nil
	})
	ctx := context.Background()
	later := report("rep_8")
	later.RunAt = exampleStart.Add(time.Hour)
	for _, j := range []*paykit.Job{report("rep_6"), report("rep_7"), later} {
		if err := svc.EnqueueJob(ctx, j); err != nil {
			panic(err)
		}
	}
	if _, err := svc.ProcessDue(ctx); err != nil {
		panic(err)
	}

	page, err := svc.ListJobs(ctx, paykit.JobListParams{Kind: "report.send"}) // pending ones
	if err != nil {
		panic(err)
	}
	for _, j := range page.Data {
		fmt.Printf("%s %s %d %q\n", j.TargetID, j.State, j.Attempts, j.LastError)
	}
	page, _ = svc.ListJobs(ctx, paykit.JobListParams{State: paykit.JobCompleted})
	fmt.Println(page.Data[0].TargetID, page.Data[0].State)
	// Output:
	// rep_8 scheduled 0 ""
	// rep_6 retrying 1 "handler_error: mail server refused the report"
	// rep_7 completed
}

// JobStats is what a host's monitoring reads: by kind, how much work is
// due, running, retrying or waiting.
func ExampleService_JobStats() {
	clock := paykit.NewManualClock(exampleStart)
	svc := reportService(paykit.Config{Now: clock.Now}, func(context.Context, *paykit.Job) error {
		return errors.New("mail server down")
	})
	ctx := context.Background()
	for _, id := range []string{"rep_9", "rep_10"} {
		if err := svc.EnqueueJob(ctx, report(id)); err != nil {
			panic(err)
		}
	}
	clock.Advance(time.Minute)

	stats, err := svc.JobStats(ctx)
	if err != nil {
		panic(err)
	}
	for _, k := range stats.Kinds {
		if k.Kind == "report.send" {
			fmt.Println(k.Kind, "due:", k.Due, "retrying:", k.Retrying, "oldest waits:", k.OldestDueAge(stats.At))
		}
	}
	if _, err := svc.ProcessDue(ctx); err != nil {
		panic(err)
	}
	stats, _ = svc.JobStats(ctx)
	for _, k := range stats.Kinds {
		if k.Kind == "report.send" {
			fmt.Println(k.Kind, "due:", k.Due, "retrying:", k.Retrying)
		}
	}
	fmt.Println("paused endpoints:", stats.PausedWebhookEndpoints)
	// Output:
	// report.send due: 2 retrying: 0 oldest waits: 1m0s
	// report.send due: 0 retrying: 2
	// paused endpoints: 0
}
