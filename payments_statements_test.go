package paykit_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/paykittest"
	"github.com/paykit/paykit/store/sqlstore"
)

// TestPaymentCreateStatements counts what a payment create answered
// requires_action sends to PostgreSQL: two transactions, at most 11
// statements, each transaction in one round trip, and one job, the
// inquiry that finishes the create if the request stops and then watches
// the attempt (and the deliveries of its event, to no endpoint here).
func TestPaymentCreateStatements(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	log := &statementLog{}
	store := sqlstore.New(paykittest.OpenSQL(t, paykittest.MigratedDSN(t, paykittest.Postgres)).DB().WithQueryHook(log))
	e := newFlowEnvOn(t, store)
	var (
		pi  *paykit.PaymentIntent
		err error
	)
	stmts := log.record(func() { pi, _, err = e.svc.CreatePaymentIntent(ctx, e.test, "k-1", fpx(5000, "order-1")) })
	is.NoErr(err)
	is.Equal(pi.Status, paykit.PaymentRequiresAction)
	checkTwoTransactions(t, "payment create", stmts, 11, "")
	is.Equal(log.trips, 2) // each transaction in one round trip
	inserts := 0
	for _, q := range stmts {
		if verb, table := statementTable(q); verb == "INSERT" && table == "jobs" && !strings.Contains(q, "FROM webhook_endpoints") {
			inserts++
		}
	}
	is.Equal(inserts, 1) // one job per create, besides the deliveries of its event

	jobs := pendingJobs(t, e.svc, pi.ID)
	is.Equal(len(jobs), 1)
	is.Equal(jobs[0].Kind, "payment.inquire")
	is.Equal(jobs[0].RunAt, pi.CreatedAt.Add(30*time.Second)) // the first poll
}

// pendingJobs lists the jobs about targetID not completed.
func pendingJobs(t *testing.T, svc *paykit.Service, targetID string) []paykit.JobView {
	t.Helper()
	page, err := svc.ListJobs(context.Background(), paykit.JobListParams{PageParams: paykit.PageParams{Limit: 100}})
	if err != nil {
		t.Fatal(err)
	}
	var out []paykit.JobView
	for _, j := range page.Data {
		if j.TargetID == targetID {
			out = append(out, j)
		}
	}
	return out
}

// The one job of a payment watches it from its create to its end: a
// request that stops after persisting is finished by it, it polls the
// waiting attempt, and it expires the attempt at expires_at even when that
// comes before the first poll.
func TestPaymentJobWatchesTheAttempt(t *testing.T) {
	t.Parallel()
	for _, kind := range paykittest.Stores {
		t.Run(string(kind), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			t.Run("a stopped create is finished, then polled", func(t *testing.T) {
				is := is.New(t)
				e := newFlowEnvOn(t, paykittest.OpenStore(t, kind))
				die := e.hang(t, func(hung context.Context) {
					_, _, _ = e.svc.CreatePaymentIntent(hung, e.test, "k-1", fpx(5000, "order-1"))
				}, func() bool {
					page, _ := e.svc.ListPaymentIntents(ctx, e.test, paykit.ListParams[paykit.PaymentStatus]{})
					return len(page.Data) == 1
				})
				die() // the request stops in the Provider call, before the answer is stored
				page, err := e.svc.ListPaymentIntents(ctx, e.test, paykit.ListParams[paykit.PaymentStatus]{})
				is.NoErr(err)
				id := page.Data[0].ID
				pi := &page.Data[0]
				is.Equal(pi.Status, paykit.PaymentProcessing)

				e.clock.Advance(29 * time.Second) // the request's lock still holds
				e.drain(t)
				pi, err = e.svc.GetPaymentIntent(ctx, e.test, id)
				is.NoErr(err)
				is.Equal(pi.Status, paykit.PaymentProcessing)
				e.clock.Advance(time.Second)
				e.drain(t)
				pi, err = e.svc.GetPaymentIntent(ctx, e.test, id)
				is.NoErr(err)
				is.Equal(pi.Status, paykit.PaymentRequiresAction)
				is.Equal(e.provider.createCalls(id), 2) // the same key twice: one attempt at the Provider

				jobs := pendingJobs(t, e.svc, id)
				is.Equal(len(jobs), 1)                                     // the same job goes on watching
				is.Equal(jobs[0].RunAt, e.clock.Now().Add(30*time.Second)) // on the payer poll schedule
				// The worker completed the record: a retry is answered by it.
				replay, ans, err := e.svc.CreatePaymentIntent(ctx, e.test, "k-1", fpx(5000, "order-1"))
				is.NoErr(err)
				is.True(ans.Replayed)
				is.Equal(replay.Status, paykit.PaymentRequiresAction)

				e.provider.approve(id)
				e.clock.Advance(30 * time.Second)
				e.drain(t)
				pi, err = e.svc.GetPaymentIntent(ctx, e.test, id)
				is.NoErr(err)
				is.Equal(pi.Status, paykit.PaymentSucceeded)
				is.Equal(len(pendingJobs(t, e.svc, id)), 0)
			})
			t.Run("expires before its first poll", func(t *testing.T) {
				is := is.New(t)
				e := newFlowEnvOn(t, paykittest.OpenStore(t, kind), func(c *paykit.Config) { c.PaymentTTL = 10 * time.Second })
				pi, _, err := e.svc.CreatePaymentIntent(ctx, e.test, "k-2", fpx(5000, "order-2"))
				is.NoErr(err)
				is.Equal(pi.Status, paykit.PaymentRequiresAction)
				jobs := pendingJobs(t, e.svc, pi.ID)
				is.Equal(len(jobs), 1)
				is.Equal(jobs[0].RunAt, pi.ExpiresAt)
				e.clock.Advance(9 * time.Second)
				e.drain(t)
				got, err := e.svc.GetPaymentIntent(ctx, e.test, pi.ID)
				is.NoErr(err)
				is.Equal(got.Status, paykit.PaymentRequiresAction)
				e.clock.Advance(time.Second)
				e.drain(t)
				got, err = e.svc.GetPaymentIntent(ctx, e.test, pi.ID)
				is.NoErr(err)
				is.Equal(got.Status, paykit.PaymentExpired)
				is.Equal(len(pendingJobs(t, e.svc, pi.ID)), 0)
			})
		})
	}
}
