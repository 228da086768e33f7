package paykit_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/matryer/is"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/internal/monitor"
	"github.com/paykit/paykit/store/memory"
)

func TestJobState(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	later, earlier := now.Add(time.Minute), now.Add(-time.Minute)
	for _, c := range []struct {
		name string
		job  paykit.Job
		want paykit.JobState
	}{
		{"never ran, time ahead", paykit.Job{RunAt: later}, paykit.JobScheduled},
		{"never ran, time come", paykit.Job{RunAt: earlier}, paykit.JobDue},
		{"never ran, due this instant", paykit.Job{RunAt: now}, paykit.JobDue},
		{"leased", paykit.Job{RunAt: earlier, Attempts: 1, LeaseUntil: &later}, paykit.JobRunning},
		{"lease ended without an answer", paykit.Job{RunAt: earlier, Attempts: 1, LeaseUntil: &earlier}, paykit.JobRetrying},
		{"lease ends this instant", paykit.Job{RunAt: earlier, Attempts: 1, LeaseUntil: &now}, paykit.JobRetrying},
		{"failed, waits for its backoff", paykit.Job{RunAt: later, Attempts: 3}, paykit.JobRetrying},
		{"failed, due again", paykit.Job{RunAt: earlier, Attempts: 3}, paykit.JobRetrying},
		{"waited, runs again later", paykit.Job{RunAt: later, Attempts: 3, Status: paykit.JobWaiting}, paykit.JobWaiting},
		{"waited, due again", paykit.Job{RunAt: earlier, Attempts: 3, Status: paykit.JobWaiting}, paykit.JobWaiting},
		{"waited, running again", paykit.Job{RunAt: earlier, Attempts: 4, Status: paykit.JobWaiting, LeaseUntil: &later}, paykit.JobRunning},
		{"waited past the limit", paykit.Job{RunAt: later, Attempts: 25, Status: paykit.JobNeedsAttention}, paykit.JobNeedsAttention},
	} {
		t.Run(c.name, func(t *testing.T) {
			is.New(t).Equal(c.job.State(now), c.want)
		})
	}
}

func TestJobRunsCountAttemptsAndErrors(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	clock := paykit.NewManualClock(time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC))
	store := memory.New()
	svc := newWorkerService(t, store, clock, "w1")
	start := clock.Now()
	paykit.HandleJob(svc, "t.ok", func(context.Context, *paykit.Job) error { return nil })
	paykit.HandleJob(svc, "t.fails", func(context.Context, *paykit.Job) error { return errors.New("provider answered 502") })
	paykit.HandleJob(svc, "t.panics", func(context.Context, *paykit.Job) error { panic("account 123456789012 broke it") })
	paykit.HandleJob(svc, "t.waits", func(context.Context, *paykit.Job) error { return paykit.ErrNotYet })
	paykit.HandleJob(svc, "t.later", func(context.Context, *paykit.Job) error { return paykit.RetryAt(start.Add(10 * time.Minute)) })
	paykit.HandleJob(svc, "t.paused", func(context.Context, *paykit.Job) error { return paykit.WaitAt(clock.Now().Add(10 * time.Minute)) })
	is.Equal(len(monitor.JobRuns(svc)), 0)

	is.NoErr(store.InTx(ctx, func(tx paykit.Tx) error {
		for _, kind := range []string{"t.ok", "t.fails", "t.panics", "t.waits", "t.later", "t.paused", "t.orphan"} {
			if err := paykit.EnqueueJob(ctx, svc, tx, &paykit.Job{ID: "job_" + kind, Kind: kind}); err != nil {
				return err
			}
		}
		return nil
	}))
	n, err := svc.ProcessDue(ctx)
	is.NoErr(err)
	is.Equal(n, 7)
	clock.Advance(2 * time.Hour) // past every backoff: the four failures and two waits run again
	n, err = svc.ProcessDue(ctx)
	is.NoErr(err)
	is.Equal(n, 6)

	is.Equal(monitor.JobRuns(svc), []monitor.JobRunCounts{
		{Kind: "t.fails", Attempts: 2, Errors: map[monitor.JobErrorKind]uint64{monitor.JobErrorHandler: 2}},
		{Kind: "t.later", Attempts: 2, Errors: map[monitor.JobErrorKind]uint64{monitor.JobErrorRescheduled: 2}},
		{Kind: "t.ok", Attempts: 1, Errors: map[monitor.JobErrorKind]uint64{}},
		{Kind: "t.orphan", Attempts: 2, Errors: map[monitor.JobErrorKind]uint64{monitor.JobErrorNoHandler: 2}},
		{Kind: "t.panics", Attempts: 2, Errors: map[monitor.JobErrorKind]uint64{monitor.JobErrorPanic: 2}},
		{Kind: "t.paused", Attempts: 2, Errors: map[monitor.JobErrorKind]uint64{}}, // waits are not errors
		{Kind: "t.waits", Attempts: 2, Errors: map[monitor.JobErrorKind]uint64{}},
	})

	// What each failure left for the operator; a wait leaves nothing.
	for kind, want := range map[string]string{
		"t.fails":  "handler_error: provider answered 502",
		"t.panics": "panic: job handler panicked", // the panic's value stays in the log
		"t.waits":  "",
		"t.paused": "",
		"t.later":  "rescheduled: retry at 2026-05-01T00:10:00.000Z",
		"t.orphan": `no_handler: job kind "t.orphan": no handler for this job kind`,
	} {
		j, err := store.GetJob(ctx, "job_"+kind)
		is.NoErr(err)
		is.Equal(j.LastError, want)
		is.Equal(j.Attempts, 2)
		is.Equal(j.RunAt, j.RunAt.Truncate(time.Millisecond)) // stored at the contract's precision
		wantStatus := paykit.JobRetrying
		if want == "" {
			wantStatus = paykit.JobWaiting
		}
		is.Equal(j.Status, wantStatus)
	}
	paused, err := store.GetJob(ctx, "job_t.paused")
	is.NoErr(err)
	is.Equal(paused.RunAt, clock.Now().Add(10*time.Minute)) // the time it asked for
	ok, err := store.GetJob(ctx, "job_t.ok")
	is.NoErr(err)
	is.Equal(ok.Status, paykit.JobCompleted)

	// The returned counts are copies.
	runs := monitor.JobRuns(svc)
	runs[0].Errors[monitor.JobErrorHandler] = 99
	is.Equal(monitor.JobRuns(svc)[0].Errors[monitor.JobErrorHandler], uint64(2))
}

func TestJobLastErrorIsScrubbed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, c := range []struct {
		name, err, want string
	}{
		{"plain", "provider answered 502", "handler_error: provider answered 502"},
		{"URL credentials", "dial postgres://app:hunter2@db:5432/paykit: refused", "handler_error: dial postgres://[redacted]@db:5432/paykit: refused"},
		{"account number", "recipient 123456789012 rejected", "handler_error: recipient [redacted] rejected"},
		{"alphanumeric account", "iban GB33BUKB20201555555555", "handler_error: iban [redacted]"},
		{"national id", "promptpay 1101700230708", "handler_error: promptpay [redacted]"},
		{"API keys", "keys sk_live_Zx9QW and pk_test_12ab", "handler_error: keys [redacted] and [redacted]"},
		{"webhook secret", "secret whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "handler_error: secret [redacted]"},
		{"bearer token", "Authorization: Bearer op-token-0123", "handler_error: [redacted]"},
		{"key=value", "connect password=hunter2 host=db", "handler_error: connect [redacted] host=db"},
		{"ids stay", "payout po_000042 of mch_123456 at 2026-05-01T00:10:00.000Z, http 503", "handler_error: payout po_000042 of mch_123456 at 2026-05-01T00:10:00.000Z, http 503"},
	} {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			clock := paykit.NewManualClock(time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC))
			store := memory.New()
			svc := newWorkerService(t, store, clock, "w1")
			paykit.HandleJob(svc, "t.fails", func(context.Context, *paykit.Job) error { return errors.New(c.err) })
			is.NoErr(store.InTx(ctx, func(tx paykit.Tx) error {
				return paykit.EnqueueJob(ctx, svc, tx, &paykit.Job{ID: "job_1", Kind: "t.fails"})
			}))
			_, err := svc.ProcessDue(ctx)
			is.NoErr(err)
			j, err := store.GetJob(ctx, "job_1")
			is.NoErr(err)
			is.Equal(j.LastError, c.want)
		})
	}

	t.Run("listing an old row", func(t *testing.T) {
		// A last error stored before scrubbing existed is masked on the way out.
		is := is.New(t)
		clock := paykit.NewManualClock(time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC))
		store := memory.New()
		svc := newWorkerService(t, store, clock, "w1")
		is.NoErr(store.EnqueueJob(ctx, &paykit.Job{ID: "job_1", Kind: "k", Attempts: 1, LastError: "account 123456789012", RunAt: clock.Now(), CreatedAt: clock.Now()}))
		page, err := svc.ListJobs(ctx, paykit.JobListParams{})
		is.NoErr(err)
		is.Equal(len(page.Data), 1)
		is.Equal(page.Data[0].LastError, "account [redacted]")
	})

	t.Run("long errors are cut on a character boundary", func(t *testing.T) {
		is := is.New(t)
		clock := paykit.NewManualClock(time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC))
		store := memory.New()
		svc := newWorkerService(t, store, clock, "w1")
		paykit.HandleJob(svc, "t.fails", func(context.Context, *paykit.Job) error { return errors.New(strings.Repeat("é", 1000)) })
		is.NoErr(store.InTx(ctx, func(tx paykit.Tx) error {
			return paykit.EnqueueJob(ctx, svc, tx, &paykit.Job{ID: "job_1", Kind: "t.fails"})
		}))
		_, err := svc.ProcessDue(ctx)
		is.NoErr(err)
		j, err := store.GetJob(ctx, "job_1")
		is.NoErr(err)
		is.True(len(j.LastError) <= 1000 && len(j.LastError) > 990)
		is.True(utf8.ValidString(j.LastError))
	})
}

func TestJobStatsReportsHandledKindsAndStaleIntents(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	clock := paykit.NewManualClock(time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC))
	store := memory.New()
	svc := newWorkerService(t, store, clock, "w1")
	now := clock.Now()
	scope := paykit.Scope{MerchantID: "mch_1", Environment: paykit.Test}

	// Processing since exactly the stale time, and one millisecond less.
	for id, updated := range map[string]time.Time{
		"pi_stale": now.Add(-monitor.ProcessingStaleAfter),
		"pi_fresh": now.Add(-monitor.ProcessingStaleAfter + time.Millisecond),
	} {
		is.NoErr(store.CreatePaymentIntent(ctx, &paykit.PaymentIntent{ID: id, MerchantID: scope.MerchantID, Environment: scope.Environment,
			Status: paykit.PaymentProcessing, Amount: 1000, Currency: "MYR", Country: "MY", MerchantReference: id, PaymentMethod: "FPX",
			ExpiresAt: now.Add(time.Hour), CreatedAt: updated, UpdatedAt: updated}))
	}
	for id, status := range map[string]paykit.PayoutStatus{"po_stale": paykit.PayoutProcessing, "po_held": paykit.PayoutRequiresApproval} {
		created := now.Add(-time.Hour)
		is.NoErr(store.CreatePayoutIntent(ctx, &paykit.PayoutIntent{ID: id, MerchantID: scope.MerchantID, Environment: scope.Environment,
			Status: status, Amount: 1000, Currency: "THB", Country: "TH", MerchantReference: id, RecipientType: "bank_account",
			BankCode: "KBANK", ProviderAttempt: paykit.ProviderAttempt{Provider: "sandbox"}, CreatedAt: created, UpdatedAt: created}))
	}
	is.NoErr(store.InTx(ctx, func(tx paykit.Tx) error {
		return paykit.EnqueueJob(ctx, svc, tx, &paykit.Job{ID: "job_1", Kind: "t.custom", RunAt: now.Add(-90 * time.Second)})
	}))

	stats, err := svc.JobStats(ctx)
	is.NoErr(err)
	is.Equal(stats.At, now)
	is.Equal(stats.Stale, paykit.StaleCounts{PaymentIntents: 1, PayoutIntents: 1})
	kinds := map[string]paykit.JobKindStats{}
	for _, k := range stats.Kinds {
		kinds[k.Kind] = k
	}
	is.Equal(kinds["payout.dispatch"], paykit.JobKindStats{Kind: "payout.dispatch"}) // handled, nothing pending: zeros
	is.Equal(kinds["webhook.deliver"], paykit.JobKindStats{Kind: "webhook.deliver"})
	custom := kinds["t.custom"] // no handler, but pending: reported
	is.Equal(custom.Due, 1)
	is.Equal(custom.OldestDueAge(now), 90*time.Second)
	for i := 1; i < len(stats.Kinds); i++ {
		is.True(stats.Kinds[i-1].Kind < stats.Kinds[i].Kind) // by kind
	}
}
