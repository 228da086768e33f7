package storetest

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/paykit/paykit"
)

// The merchant list and the operator's view of background work: ListJobs,
// JobStats and CountStaleProcessing.

func merchantIDs(rows []paykit.Merchant) []string {
	return ids(rows, func(m paykit.Merchant) string { return m.ID })
}

func jobIDs(rows []paykit.Job) []string {
	return ids(rows, func(j paykit.Job) string { return j.ID })
}

func testListMerchants(t *testing.T, s paykit.Store) {
	is := is.New(t)
	ctx := context.Background()
	none, err := s.ListMerchants(ctx, nil, 10)
	is.NoErr(err)
	is.Equal(len(none), 0)

	for _, m := range []paykit.Merchant{
		{ID: "mch_1", Name: "Kedai Satu", CreatedAt: at(time.Second)},
		{ID: "mch_2", Name: "Kedai Dua", CreatedAt: at(2 * time.Second)},
		{ID: "mch_3", Name: "Kedai Tiga", CreatedAt: at(2 * time.Second)}, // same instant: ties break by id
		{ID: "mch_4", Name: "ร้านสี่", CreatedAt: at(3 * time.Second)},
		{ID: "mch_5", Name: "Kedai Lima", CreatedAt: base},
	} {
		is.NoErr(s.CreateMerchant(ctx, &m))
	}
	want := []string{"mch_4", "mch_3", "mch_2", "mch_1", "mch_5"} // newest first
	for _, limit := range []int{1, 2, 4, 5, 10} {
		got := walkPages(t, limit, func(after *paykit.Position, limit int) ([]paykit.Merchant, error) {
			return s.ListMerchants(ctx, after, limit)
		}, func(m paykit.Merchant) paykit.Position { return paykit.Position{CreatedAt: m.CreatedAt, ID: m.ID} })
		is.Equal(got, want)
	}
	all, err := s.ListMerchants(ctx, nil, 0)
	is.NoErr(err)
	is.Equal(merchantIDs(all), want) // Limit 0: all
	is.Equal(all[0], paykit.Merchant{ID: "mch_4", Name: "ร้านสี่", CreatedAt: at(3 * time.Second)})
	is.Equal(all[0].CreatedAt.Location(), time.UTC)
}

// monitorNow is the moment the job tests ask about.
var monitorNow = at(time.Hour)

// seedMonitorJobs brings eight jobs into every state by the Store's own
// operations. At monitorNow:
//
//	job_run     k2 mch_b   running: leased until 2h
//	job_rdue    k1 mch_a   retrying, due since 40m ("provider timeout")
//	job_rlater  k1 mch_b   waiting, next run at 90m
//	job_wdue    k2 mch_a   waiting, due since 50m
//	job_rexp    k2 mch_a   retrying: its lease ended at 10m, due since 0
//	job_sched   k1 mch_a   scheduled at 70m
//	job_due     k1 mch_a   due since 55m (live environment)
//	job_sys     k3 (none)  due at monitorNow exactly
func seedMonitorJobs(t *testing.T, s paykit.Store) {
	t.Helper()
	is := is.New(t)
	ctx := context.Background()
	enqueue := func(id, kind string, scope paykit.Scope, created, runAt time.Time) {
		t.Helper()
		is.NoErr(s.EnqueueJob(ctx, &paykit.Job{ID: id, Kind: kind, Scope: scope, TargetID: "po_" + id, RunAt: runAt, CreatedAt: created}))
	}
	claim := func(now, until time.Time, want ...string) {
		t.Helper()
		got, err := s.Queue().ClaimJobs(ctx, paykit.ClaimParams{Owner: "w1", Now: now, LeaseUntil: until, Limit: 10})
		is.NoErr(err)
		slices.Sort(want)
		is.Equal(jobIDs(got), want) // ordered by run_at, then id: here all by id
	}
	enqueue("job_run", "k2", scopeB, at(time.Second), base)
	claim(base, at(2*time.Hour), "job_run")
	enqueue("job_rdue", "k1", scopeA, at(2*time.Second), base)
	enqueue("job_rlater", "k1", scopeB, at(2*time.Second), base)
	enqueue("job_rexp", "k2", scopeA, at(3*time.Second), base)
	enqueue("job_wdue", "k2", scopeA, at(7*time.Second), base)
	claim(base, at(10*time.Minute), "job_rdue", "job_rlater", "job_rexp", "job_wdue")
	is.NoErr(retryJob(ctx, s, "job_rdue", "w1", at(40*time.Minute), "provider timeout"))
	is.NoErr(waitJob(ctx, s, "job_rlater", "w1", at(90*time.Minute)))
	is.NoErr(waitJob(ctx, s, "job_wdue", "w1", at(50*time.Minute)))
	enqueue("job_sched", "k1", scopeA, at(4*time.Second), at(70*time.Minute))
	enqueue("job_due", "k1", scopeALive, at(5*time.Second), at(55*time.Minute))
	enqueue("job_sys", "k3", paykit.Scope{}, at(6*time.Second), monitorNow)
}

func testListJobs(t *testing.T, s paykit.Store) {
	is := is.New(t)
	ctx := context.Background()
	none, err := s.Queue().ListJobs(ctx, paykit.ListQuery[paykit.JobListParams]{Limit: 10}, monitorNow)
	is.NoErr(err)
	is.Equal(len(none), 0)
	seedMonitorJobs(t, s)

	all := []string{"job_wdue", "job_sys", "job_due", "job_sched", "job_rexp", "job_rlater", "job_rdue", "job_run"}
	type jobCase struct {
		name string
		f    paykit.JobListParams
		want []string
	}
	run := func(c jobCase, now time.Time) {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			got, err := s.Queue().ListJobs(ctx, paykit.ListQuery[paykit.JobListParams]{Filter: c.f}, now)
			is.NoErr(err)
			is.Equal(jobIDs(got), c.want)
			for _, j := range got {
				if c.f.State != "" {
					is.Equal(j.State(now), c.f.State) // the Store's filter agrees with Job.State
				}
			}
		})
	}
	for _, c := range []jobCase{
		{"all", paykit.JobListParams{}, all},
		{"running", paykit.JobListParams{State: paykit.JobRunning}, []string{"job_run"}},
		{"retrying", paykit.JobListParams{State: paykit.JobRetrying}, []string{"job_rexp", "job_rdue"}},
		{"waiting", paykit.JobListParams{State: paykit.JobWaiting}, []string{"job_wdue", "job_rlater"}},
		{"due", paykit.JobListParams{State: paykit.JobDue}, []string{"job_sys", "job_due"}},
		{"scheduled", paykit.JobListParams{State: paykit.JobScheduled}, []string{"job_sched"}},
		{"kind", paykit.JobListParams{Kind: "k1"}, []string{"job_due", "job_sched", "job_rlater", "job_rdue"}},
		{"unknown kind", paykit.JobListParams{Kind: "k9"}, nil},
		{"merchant, both environments", paykit.JobListParams{MerchantID: "mch_a"}, []string{"job_wdue", "job_due", "job_sched", "job_rexp", "job_rdue"}},
		{"merchant b", paykit.JobListParams{MerchantID: "mch_b"}, []string{"job_rlater", "job_run"}},
		{"kind and state", paykit.JobListParams{Kind: "k2", State: paykit.JobRetrying}, []string{"job_rexp"}},
		{"kind and waiting", paykit.JobListParams{Kind: "k2", State: paykit.JobWaiting}, []string{"job_wdue"}},
		{"merchant and state", paykit.JobListParams{MerchantID: "mch_a", State: paykit.JobDue}, []string{"job_due"}},
	} {
		run(c, monitorNow)
	}
	// Two hours later every lease has ended and everything has come due.
	for _, c := range []jobCase{
		{"later: nothing runs", paykit.JobListParams{State: paykit.JobRunning}, nil},
		{"later: due", paykit.JobListParams{State: paykit.JobDue}, []string{"job_sys", "job_due", "job_sched"}},
		{"later: retrying", paykit.JobListParams{State: paykit.JobRetrying}, []string{"job_rexp", "job_rdue", "job_run"}},
		{"later: waiting", paykit.JobListParams{State: paykit.JobWaiting}, []string{"job_wdue", "job_rlater"}},
	} {
		run(c, at(2*time.Hour))
	}

	for _, limit := range []int{1, 2, 3, 7, 10} {
		got := walkPages(t, limit, func(after *paykit.Position, limit int) ([]paykit.Job, error) {
			return s.Queue().ListJobs(ctx, paykit.ListQuery[paykit.JobListParams]{After: after, Limit: limit}, monitorNow)
		}, func(j paykit.Job) paykit.Position { return paykit.Position{CreatedAt: j.CreatedAt, ID: j.ID} })
		is.Equal(got, all)
	}
	retrying := walkPages(t, 2, func(after *paykit.Position, limit int) ([]paykit.Job, error) {
		return s.Queue().ListJobs(ctx, paykit.ListQuery[paykit.JobListParams]{Filter: paykit.JobListParams{State: paykit.JobRetrying}, After: after, Limit: limit}, monitorNow)
	}, func(j paykit.Job) paykit.Position { return paykit.Position{CreatedAt: j.CreatedAt, ID: j.ID} })
	is.Equal(retrying, []string{"job_rexp", "job_rdue"})

	// Listed jobs are the stored jobs, field for field.
	listed, err := s.Queue().ListJobs(ctx, paykit.ListQuery[paykit.JobListParams]{}, monitorNow)
	is.NoErr(err)
	for _, j := range listed {
		stored, err := s.GetJob(ctx, j.ID)
		is.NoErr(err)
		is.Equal(j, *stored)
	}
	byID := map[string]paykit.Job{}
	for _, j := range listed {
		byID[j.ID] = j
	}
	is.Equal(byID["job_rdue"].LastError, "provider timeout")
	is.Equal(byID["job_rdue"].Attempts, 1)
	is.Equal(byID["job_rdue"].RunAt, at(40*time.Minute))
	is.Equal(byID["job_rlater"].LastError, "") // a wait is no error
	is.Equal(byID["job_rlater"].Status, paykit.JobWaiting)
	is.True(byID["job_rdue"].LeaseUntil == nil)
	is.Equal(*byID["job_run"].LeaseUntil, at(2*time.Hour))
	is.Equal(byID["job_run"].LeaseUntil.Location(), time.UTC)
	is.Equal(byID["job_sys"].Scope, paykit.Scope{})
	is.Equal(byID["job_due"].Scope, scopeALive)
}

func testJobStats(t *testing.T, s paykit.Store) {
	is := is.New(t)
	ctx := context.Background()
	none, err := s.Queue().JobStats(ctx, monitorNow)
	is.NoErr(err)
	is.Equal(len(none), 0)
	seedMonitorJobs(t, s)

	got, err := s.Queue().JobStats(ctx, monitorNow)
	is.NoErr(err)
	is.Equal(got, []paykit.JobKindStats{
		{Kind: "k1", Due: 2, Running: 0, Retrying: 1, Waiting: 1, OldestDue: ptr(at(40 * time.Minute))},
		{Kind: "k2", Due: 2, Running: 1, Retrying: 1, Waiting: 1, OldestDue: ptr(base)},
		{Kind: "k3", Due: 1, Running: 0, Retrying: 0, OldestDue: ptr(monitorNow)},
	})
	is.Equal(got[0].OldestDue.Location(), time.UTC)
	is.Equal(got[0].OldestDueAge(monitorNow), 20*time.Minute)

	// Before the retries were due: nothing of k1 is due, k3 is not due yet.
	early, err := s.Queue().JobStats(ctx, at(30*time.Minute))
	is.NoErr(err)
	is.Equal(early, []paykit.JobKindStats{
		{Kind: "k1", Retrying: 1, Waiting: 1},
		{Kind: "k2", Due: 1, Running: 1, Retrying: 1, Waiting: 1, OldestDue: ptr(base)},
		{Kind: "k3"},
	})

	// Completed jobs are gone from the counts.
	is.NoErr(completeJob(ctx, s, "job_run", "w1", monitorNow))
	after, err := s.Queue().JobStats(ctx, monitorNow)
	is.NoErr(err)
	is.Equal(after[1], paykit.JobKindStats{Kind: "k2", Due: 2, Retrying: 1, Waiting: 1, OldestDue: ptr(base)})
}

func testCountStaleProcessing(t *testing.T, s paykit.Store) {
	is := is.New(t)
	ctx := context.Background()
	none, err := s.CountStaleProcessing(ctx, monitorNow)
	is.NoErr(err)
	is.Equal(none, paykit.StaleCounts{})

	paymentAt := func(scope paykit.Scope, id string, status paykit.PaymentStatus, updated time.Time) {
		p := payment(scope, id, "ref-"+id, base)
		p.Status, p.NextAction, p.UpdatedAt = status, nil, updated
		mustCreatePayment(t, s, p)
	}
	paymentAt(scopeA, "pi_old", paykit.PaymentProcessing, base)
	paymentAt(scopeB, "pi_old_b", paykit.PaymentProcessing, at(time.Minute))
	paymentAt(scopeA, "pi_fresh", paykit.PaymentProcessing, at(20*time.Minute))
	paymentAt(scopeA, "pi_done", paykit.PaymentSucceeded, base)
	payoutAt := func(scope paykit.Scope, id string, status paykit.PayoutStatus, updated time.Time) {
		p := payout(scope, id, "ref-"+id, base)
		p.Status, p.UpdatedAt = status, updated
		mustCreatePayout(t, s, p)
	}
	payoutAt(scopeALive, "po_old", paykit.PayoutProcessing, base)
	payoutAt(scopeA, "po_edge", paykit.PayoutProcessing, at(10*time.Minute))
	payoutAt(scopeA, "po_held", paykit.PayoutRequiresApproval, base)
	payoutAt(scopeB, "po_fresh", paykit.PayoutProcessing, at(11*time.Minute))

	for _, c := range []struct {
		before time.Time
		want   paykit.StaleCounts
	}{
		{base.Add(-time.Millisecond), paykit.StaleCounts{}},
		{base, paykit.StaleCounts{PaymentIntents: 1, PayoutIntents: 1}},
		{at(10 * time.Minute), paykit.StaleCounts{PaymentIntents: 2, PayoutIntents: 2}}, // the bound is inclusive
		{at(time.Hour), paykit.StaleCounts{PaymentIntents: 3, PayoutIntents: 3}},
	} {
		got, err := s.CountStaleProcessing(ctx, c.before)
		is.NoErr(err)
		is.Equal(got, c.want)
	}

	// An intent that leaves processing is no longer counted.
	p, err := s.GetPaymentIntent(ctx, scopeA, "pi_old")
	is.NoErr(err)
	p.Status = paykit.PaymentSucceeded
	is.NoErr(s.UpdatePaymentIntent(ctx, p))
	got, err := s.CountStaleProcessing(ctx, at(time.Hour))
	is.NoErr(err)
	is.Equal(got, paykit.StaleCounts{PaymentIntents: 2, PayoutIntents: 3})
}

func testCountStatuses(t *testing.T, s paykit.Store) {
	is := is.New(t)
	ctx := context.Background()
	none, err := s.CountStatuses(ctx, "payment_intent", scopeA, base)
	is.NoErr(err)
	is.Equal(len(none), 0)

	paymentAt := func(scope paykit.Scope, id string, status paykit.PaymentStatus, created time.Time) {
		p := payment(scope, id, "ref-"+id, created)
		p.Status, p.NextAction = status, nil
		mustCreatePayment(t, s, p)
	}
	paymentAt(scopeA, "pi_early", paykit.PaymentSucceeded, base.Add(-time.Millisecond)) // before since
	paymentAt(scopeA, "pi_1", paykit.PaymentSucceeded, base)                            // since is inclusive
	paymentAt(scopeA, "pi_2", paykit.PaymentSucceeded, at(time.Minute))
	paymentAt(scopeA, "pi_3", paykit.PaymentProcessing, at(time.Hour))
	paymentAt(scopeB, "pi_b", paykit.PaymentSucceeded, at(time.Minute))        // another merchant
	paymentAt(scopeALive, "pi_live", paykit.PaymentSucceeded, at(time.Minute)) // another environment
	got, err := s.CountStatuses(ctx, "payment_intent", scopeA, base)
	is.NoErr(err)
	is.Equal(got, map[string]int{"succeeded": 2, "processing": 1})
	got, err = s.CountStatuses(ctx, "payment_intent", scopeA, at(time.Minute+time.Millisecond))
	is.NoErr(err)
	is.Equal(got, map[string]int{"processing": 1})

	po := payout(scopeA, "po_1", "ref-po_1", at(time.Minute))
	po.Status = paykit.PayoutRequiresApproval
	mustCreatePayout(t, s, po)
	got, err = s.CountStatuses(ctx, "payout_intent", scopeA, base)
	is.NoErr(err)
	is.Equal(got, map[string]int{"requires_approval": 1})

	is.NoErr(s.CreateCheckout(ctx, checkout(scopeA, "co_1", "ref-co_1", at(time.Minute))))
	got, err = s.CountStatuses(ctx, "checkout", scopeA, base)
	is.NoErr(err)
	is.Equal(got, map[string]int{"open": 1})

	mustCreateRefund(t, s, refund(scopeA, "re_1", "ref-re_1", "pi_1", at(time.Minute)))
	got, err = s.CountStatuses(ctx, "refund", scopeA, base)
	is.NoErr(err)
	is.Equal(got, map[string]int{"pending": 1})
	got, err = s.CountStatuses(ctx, "refund", scopeB, base)
	is.NoErr(err)
	is.Equal(len(got), 0)
}
