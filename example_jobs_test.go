package paykit_test

import (
	"context"
	"fmt"

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
