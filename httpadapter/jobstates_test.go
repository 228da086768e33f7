package httpadapter_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/internal/wire"
	"github.com/paykit/paykit/provider/sandbox"
)

// defaultMaxAttempts is the attempt limit of paykit's own job kinds
// (JobKindOptions.MaxAttempts' default).
const defaultMaxAttempts = 25

// The job states an operator lists besides due, running, retrying and
// scheduled: available (due or scheduled), needs_attention and completed.
func TestOperatorListJobStates(t *testing.T) {
	forEachStore(t, func(t *testing.T, open func(t *testing.T) paykit.Store) {
		is := is.New(t)
		now := time.Date(2026, 6, 1, 8, 0, 0, 0, time.UTC)
		clock := paykit.NewManualClock(now)
		e := newEnv(t, open, envConfig{now: clock.Now})
		ctx := context.Background()
		a := e.merchant(paykit.Test)
		scope := paykit.Scope{MerchantID: a.merchantID, Environment: paykit.Test}
		enqueue := func(id string, created, runAt time.Time) {
			t.Helper()
			is.NoErr(e.store.EnqueueJob(ctx, &paykit.Job{ID: id, Kind: "payout.inquire", Scope: scope, TargetID: "po_" + id, RunAt: runAt, CreatedAt: created}))
		}
		enqueue("job_done", now.Add(-4*time.Minute), now.Add(-4*time.Minute))
		enqueue("job_flag", now.Add(-3*time.Minute), now.Add(-4*time.Minute))
		jobs, err := e.store.Queue().ClaimJobs(ctx, paykit.ClaimParams{Owner: "w-test", Now: now.Add(-4 * time.Minute), LeaseUntil: now.Add(-3 * time.Minute), Limit: 10})
		is.NoErr(err)
		is.Equal(len(jobs), 2)
		lost, err := e.store.Queue().FinishJobs(ctx, "w-test", []paykit.JobEnd{
			{JobRun: paykit.JobRun{ID: "job_done", Attempts: 1}, Status: paykit.JobCompleted, At: now.Add(-210 * time.Second)},
			{JobRun: paykit.JobRun{ID: "job_flag", Attempts: 1}, Status: paykit.JobNeedsAttention, RunAt: now.Add(time.Hour),
				LastError: "handler_error: provider answered 503"}})
		is.NoErr(err)
		is.Equal(len(lost), 0)
		enqueue("job_due", now.Add(-2*time.Minute), now.Add(-time.Minute))
		enqueue("job_sched", now.Add(-time.Minute), now.Add(time.Hour))

		ids := func(path string) []string {
			t.Helper()
			var out []string
			for _, item := range listAll(t, e, path) {
				out = append(out, item.(map[string]any)["id"].(string))
			}
			return out
		}
		for _, c := range []struct {
			query string
			want  []string
		}{
			{"limit=10", []string{"job_sched", "job_due", "job_flag"}}, // pending jobs only
			{"state=available", []string{"job_sched", "job_due"}},
			{"state=needs_attention", []string{"job_flag"}},
			{"state=retrying", nil},
			{"state=completed", []string{"job_done"}},
			{"state=completed&merchant_id=" + a.merchantID, []string{"job_done"}},
			{"state=completed&kind=payout.dispatch", nil},
			{"state=needs_attention&limit=1", []string{"job_flag"}},
		} {
			is.Equal(ids("/operator/jobs?"+c.query), c.want)
		}

		ts := wire.FormatTime
		r := e.do("GET", "/operator/jobs?state=completed", nil, bearer(e.opToken))
		is.Equal(r.status, http.StatusOK)
		is.Equal(r.json(t)["data"], []any{map[string]any{
			"object": "job", "id": "job_done", "kind": "payout.inquire", "state": "completed",
			"merchant_id": a.merchantID, "environment": "test", "target_id": "po_job_done", "attempts": 1.0,
			"run_at": ts(now.Add(-4 * time.Minute)), "lease_until": nil, "last_error": nil,
			"created_at": ts(now.Add(-4 * time.Minute)),
		}})
		flagged := listAll(t, e, "/operator/jobs?state=needs_attention&limit=10")[0].(map[string]any)
		is.Equal(flagged["state"], "needs_attention")
		is.Equal(flagged["last_error"], "handler_error: provider answered 503")
		is.Equal(flagged["run_at"], ts(now.Add(time.Hour)))
	})
}

// A payout whose Provider keeps answering 5xx needs attention after the
// attempt limit: listed and counted as such, still processing, and still
// asked at the longest interval.
func TestStuckPayoutNeedsAttention(t *testing.T) {
	forEachStore(t, func(t *testing.T, open func(t *testing.T) paykit.Store) {
		is := is.New(t)
		var calls atomic.Int32
		broken := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			calls.Add(1)
			_, _ = io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = io.WriteString(w, `{"code":"ERR_UNAVAILABLE","message":"down for maintenance"}`)
		}))
		t.Cleanup(broken.Close)
		clock := paykit.NewManualClock(time.Date(2026, 6, 1, 8, 0, 0, 0, time.UTC))
		prov := sandbox.New(sandbox.Config{BaseURL: broken.URL, APIKey: sandboxAPIKey, Timeout: sandboxTimeout})
		e := newEnv(t, open, envConfig{now: clock.Now, routing: sandbox.DefaultRouting(), providers: map[string]paykit.Provider{sandbox.Name: prov}})
		op := bearer(e.opToken)
		k := e.merchant(paykit.Test)
		r := e.do("POST", "/operator/merchants/"+k.merchantID+"/balance_adjustments",
			map[string]any{"environment": "test", "currency": "THB", "amount": "1000000", "reason": "float"}, op)
		is.Equal(r.status, http.StatusCreated)
		r = e.do("POST", "/v1/payout_intents", thPayout("250000", "stuck-2", plainAccount), basic(k), idem("stuck-2"))
		assertError(t, r, http.StatusServiceUnavailable, paykit.CodeDispatchUnavailable, "")

		for range defaultMaxAttempts - 1 {
			clock.Advance(2 * time.Hour)
			n, err := e.svc.ProcessDue(e.ctx)
			is.NoErr(err)
			is.Equal(n, 1)
		}
		is.Equal(len(listAll(t, e, "/operator/jobs?state=needs_attention")), 0) // one attempt left
		text := metricsText(t, e)
		is.Equal(mustSample(t, text, `paykit_jobs_needs_attention{kind="payout.dispatch"}`), 0.0)
		// Every call failed: no new attempts go to the Provider for now.
		is.Equal(mustSample(t, text, `paykit_provider_usable{provider="sandbox"}`), 0.0)
		// Each unanswered create is counted.
		is.True(mustSample(t, text, `paykit_provider_calls_total{call="create_payout",outcome="unacknowledged",provider="sandbox"}`) >= 1)

		clock.Advance(2 * time.Hour)
		n, err := e.svc.ProcessDue(e.ctx)
		is.NoErr(err)
		is.Equal(n, 1)
		jobs := listAll(t, e, "/operator/jobs?state=needs_attention&merchant_id="+k.merchantID)
		is.Equal(len(jobs), 1)
		job := jobs[0].(map[string]any)
		is.Equal(job["kind"], "payout.dispatch")
		is.Equal(job["state"], "needs_attention")
		is.Equal(job["attempts"], float64(defaultMaxAttempts))
		is.True(strings.HasPrefix(job["last_error"].(string), "handler_error: dispatch_unavailable: "))
		is.Equal(len(listAll(t, e, "/operator/jobs?state=retrying")), 0)
		runAt, err := time.Parse(time.RFC3339, job["run_at"].(string))
		is.NoErr(err)
		wait := runAt.Sub(clock.Now())
		is.True(wait >= 30*time.Minute && wait <= time.Hour) // the longest interval

		list := e.do("GET", "/v1/payout_intents", nil, basic(k)).json(t)["data"].([]any)
		is.Equal(len(list), 1)
		is.Equal(list[0].(map[string]any)["status"], "processing") // never failed by the limit

		text = metricsText(t, e)
		is.Equal(mustSample(t, text, `paykit_jobs_needs_attention{kind="payout.dispatch"}`), 1.0)
		is.Equal(mustSample(t, text, `paykit_jobs_needs_attention{kind="payout.inquire"}`), 0.0) // every handled kind is reported
		is.Equal(mustSample(t, text, `paykit_jobs_retrying{kind="payout.dispatch"}`), 1.0)
		is.True(strings.Contains(e.logs.String(), "needs operator attention"))

		// Asked again an hour later, and still visible.
		before := calls.Load()
		clock.Advance(time.Hour)
		n, err = e.svc.ProcessDue(e.ctx)
		is.NoErr(err)
		is.Equal(n, 1)
		is.Equal(calls.Load(), before+1)
		jobs = listAll(t, e, "/operator/jobs?state=needs_attention")
		is.Equal(len(jobs), 1)
		is.Equal(jobs[0].(map[string]any)["attempts"], float64(defaultMaxAttempts+1))
	})
}

// TestWaitingPaymentIsNotRetrying: a payment waiting for its payer has a
// job that waits: listed as waiting (not retrying, no last_error) by the
// operator API and the dashboard, counted by paykit_jobs_waiting, and no
// error of paykit_job_errors_total nor a warning in the log.
func TestWaitingPaymentIsNotRetrying(t *testing.T) {
	forEachStore(t, func(t *testing.T, open func(t *testing.T) paykit.Store) {
		is := is.New(t)
		e := newDashEnv(t, open)
		k := e.merchant(paykit.Test)
		pi := e.create(k, "wait-1", fpxBody("15000", "wait-1")).json(t)
		is.Equal(pi["status"], "requires_action")
		e.clock.Advance(30 * time.Second) // the first poll: the payer has not paid
		e.drain()

		jobs := listAll(t, e.env, "/operator/jobs?state=waiting&kind=payment.inquire")
		is.Equal(len(jobs), 1)
		job := jobs[0].(map[string]any)
		is.Equal(job["target_id"], pi["id"])
		is.Equal(job["state"], "waiting")
		is.Equal(job["attempts"], 1.0)
		is.Equal(job["last_error"], nil)
		is.Equal(len(listAll(t, e.env, "/operator/jobs?state=retrying")), 0)
		all := listAll(t, e.env, "/operator/jobs?kind=payment.inquire")
		is.Equal(all[0].(map[string]any)["state"], "waiting")

		text := metricsText(t, e.env)
		is.Equal(mustSample(t, text, `paykit_jobs_waiting{kind="payment.inquire"}`), 1.0)
		is.Equal(mustSample(t, text, `paykit_jobs_retrying{kind="payment.inquire"}`), 0.0)
		is.Equal(mustSample(t, text, `paykit_jobs_waiting{kind="payout.inquire"}`), 0.0) // every handled kind is reported
		is.Equal(mustSample(t, text, `paykit_job_attempts_total{kind="payment.inquire"}`), 1.0)
		is.True(!strings.Contains(text, `paykit_job_errors_total{error="not_yet"`))
		is.True(!strings.Contains(e.logs.String(), `"level":"WARN"`))

		e.csrf()
		r := e.get("/jobs?state=waiting")
		is.Equal(r.status, http.StatusOK)
		is.True(strings.Contains(string(r.body), `<option value="waiting" selected>`))
		is.True(strings.Contains(string(r.body), pi["id"].(string)))
		r = e.get("/jobs?state=retrying")
		is.Equal(r.status, http.StatusOK)
		is.True(!strings.Contains(string(r.body), pi["id"].(string)))
	})
}
