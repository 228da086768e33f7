package httpadapter_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/matryer/is"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/internal/wire"
	"github.com/paykit/paykit/provider/sandbox"
)

// The operator's merchant list, job list and background-work metrics.
// Merchants and jobs are listed across tenants: each test has a Store of
// its own (forEachStore gives every test one).

// listAll follows next_cursor from path (which has a query) to the last
// page and returns every item.
func listAll(t *testing.T, e *env, path string) []any {
	t.Helper()
	var out []any
	next := path
	for range 50 {
		r := e.do("GET", next, nil, bearer(e.opToken))
		if r.status != http.StatusOK {
			t.Fatalf("GET %s: %d %s", next, r.status, r.body)
		}
		page := r.json(t)
		out = append(out, page["data"].([]any)...)
		if page["has_more"] != true {
			if page["next_cursor"] != nil {
				t.Fatalf("last page with next_cursor %v", page["next_cursor"])
			}
			return out
		}
		next = path + "&cursor=" + url.QueryEscape(page["next_cursor"].(string))
	}
	t.Fatal("more than 50 pages")
	return nil
}

func TestOperatorListMerchants(t *testing.T) {
	forEachStore(t, func(t *testing.T, open func(t *testing.T) paykit.Store) {
		is := is.New(t)
		clock := paykit.NewManualClock(time.Date(2026, 6, 1, 8, 0, 0, 0, time.UTC))
		e := newEnv(t, open, envConfig{now: clock.Now})
		op := bearer(e.opToken)

		r := e.do("GET", "/operator/merchants", nil, op)
		is.Equal(r.status, http.StatusOK)
		is.Equal(r.json(t), map[string]any{"object": "list", "data": []any{}, "has_more": false, "next_cursor": nil})

		var created []any
		for _, name := range []string{"Kedai Satu", "Kedai Dua", "ร้านสาม", "Kedai Empat", "Kedai Lima"} {
			r := e.do("POST", "/operator/merchants", map[string]any{"name": name}, op)
			is.Equal(r.status, http.StatusCreated)
			created = append([]any{r.json(t)}, created...) // newest first
			clock.Advance(time.Second)
		}

		r = e.do("GET", "/operator/merchants", nil, op)
		is.Equal(r.status, http.StatusOK)
		page := r.json(t)
		is.Equal(page["data"], created) // newest first, as POST answered each
		is.Equal(page["has_more"], false)
		is.Equal(page["next_cursor"], nil)
		for _, m := range created {
			id := m.(map[string]any)["id"].(string)
			is.Equal(e.do("GET", "/operator/merchants/"+id, nil, op).json(t), m) // and as GET answers it
		}

		for _, limit := range []string{"1", "2", "4", "100"} {
			is.Equal(listAll(t, e, "/operator/merchants?limit="+limit), created)
		}
		first := e.do("GET", "/operator/merchants?limit=2", nil, op).json(t)
		is.Equal(first["has_more"], true)
		is.Equal(len(first["data"].([]any)), 2)
	})
}

func TestOperatorListBadParameters(t *testing.T) {
	forEachStore(t, func(t *testing.T, open func(t *testing.T) paykit.Store) {
		e := newEnv(t, open, envConfig{})
		op := bearer(e.opToken)
		e.merchant(paykit.Test)
		e.merchant(paykit.Test)
		auditCursor := e.do("GET", "/operator/audit_events?limit=1", nil, op).json(t)["next_cursor"].(string)
		for _, c := range []struct{ name, path, param string }{
			{"merchants: limit 0", "/operator/merchants?limit=0", "limit"},
			{"merchants: limit 101", "/operator/merchants?limit=101", "limit"},
			{"merchants: limit not a number", "/operator/merchants?limit=ten", "limit"},
			{"merchants: forged cursor", "/operator/merchants?cursor=abc", "cursor"},
			{"merchants: another list's cursor", "/operator/merchants?cursor=" + url.QueryEscape(auditCursor), "cursor"},
			{"merchants: unknown parameter", "/operator/merchants?name=Kedai", "name"},
			{"jobs: limit 0", "/operator/jobs?limit=0", "limit"},
			{"jobs: limit 101", "/operator/jobs?limit=101", "limit"},
			{"jobs: forged cursor", "/operator/jobs?cursor=abc", "cursor"},
			{"jobs: another list's cursor", "/operator/jobs?cursor=" + url.QueryEscape(auditCursor), "cursor"},
			{"jobs: unknown state", "/operator/jobs?state=failed", "state"},
			{"jobs: empty kind", "/operator/jobs?kind=", "kind"},
			{"jobs: two merchants", "/operator/jobs?merchant_id=a&merchant_id=b", "merchant_id"},
			{"jobs: unknown parameter", "/operator/jobs?status=retrying", "status"},
		} {
			t.Run(c.name, func(t *testing.T) {
				assertError(t, e.do("GET", c.path, nil, op), http.StatusBadRequest, paykit.CodeInvalidRequest, c.param)
			})
		}
		for _, path := range []string{"/operator/merchants", "/operator/jobs"} {
			assertError(t, e.do("GET", path, nil), http.StatusUnauthorized, paykit.CodeUnauthorized, "")
			assertError(t, e.do("GET", path, nil, bearer("not-the-token")), http.StatusUnauthorized, paykit.CodeUnauthorized, "")
		}
	})
}

func TestOperatorListJobs(t *testing.T) {
	forEachStore(t, func(t *testing.T, open func(t *testing.T) paykit.Store) {
		is := is.New(t)
		now := time.Date(2026, 6, 1, 8, 0, 0, 0, time.UTC)
		clock := paykit.NewManualClock(now)
		e := newEnv(t, open, envConfig{now: clock.Now})
		ctx := context.Background()
		a, b := e.merchant(paykit.Test), e.merchant(paykit.Live)
		enqueue := func(id, kind string, scope paykit.Scope, target string, created, runAt time.Time) {
			t.Helper()
			is.NoErr(e.store.EnqueueJob(ctx, &paykit.Job{ID: id, Kind: kind, Scope: scope, TargetID: target, RunAt: runAt, CreatedAt: created}))
		}
		claim := func(at, until time.Time) {
			t.Helper()
			jobs, err := e.store.Queue().ClaimJobs(ctx, paykit.ClaimParams{Owner: "w-test", Now: at, LeaseUntil: until, Limit: 10})
			is.NoErr(err)
			is.Equal(len(jobs), 1)
		}
		// A job that failed once, with an error text a careless handler
		// could have written; one a worker runs now; one due, one scheduled
		// and one of no merchant.
		enqueue("job_retry", "payout.dispatch", paykit.Scope{MerchantID: a.merchantID, Environment: paykit.Test}, "po_x", now.Add(-10*time.Minute), now.Add(-10*time.Minute))
		claim(now.Add(-10*time.Minute), now.Add(-9*time.Minute))
		lost, err := e.store.Queue().FinishJobs(ctx, "w-test", []paykit.JobEnd{{JobRun: paykit.JobRun{ID: "job_retry", Attempts: 1},
			Status: paykit.JobRetrying, RunAt: now.Add(5 * time.Minute),
			LastError: "handler_error: dial postgres://app:hunter2@db: refused; account 123456789012, key sk_live_abcDEF123, payout po_000042"}})
		is.NoErr(err)
		is.Equal(len(lost), 0)
		enqueue("job_run", "webhook.deliver", paykit.Scope{MerchantID: b.merchantID, Environment: paykit.Live}, "evt_1", now.Add(-5*time.Minute), now.Add(-5*time.Minute))
		claim(now.Add(-5*time.Minute), now.Add(time.Minute))
		enqueue("job_due", "payment.inquire", paykit.Scope{MerchantID: a.merchantID, Environment: paykit.Test}, "pi_1", now.Add(-2*time.Minute), now.Add(-time.Minute))
		enqueue("job_sched", "checkout.expire", paykit.Scope{MerchantID: a.merchantID, Environment: paykit.Live}, "co_1", now.Add(-time.Minute), now.Add(time.Hour))
		enqueue("job_sys", "maintenance", paykit.Scope{}, "", now, now)

		r := e.do("GET", "/operator/jobs", nil, bearer(e.opToken))
		is.Equal(r.status, http.StatusOK)
		for _, secret := range []string{"hunter2", "123456789012", "sk_live_abcDEF123"} {
			is.True(!strings.Contains(string(r.body), secret)) // masked in last_error
		}
		page := r.json(t)
		is.Equal(page["has_more"], false)
		byID := map[string]any{}
		var order []string
		for _, item := range page["data"].([]any) {
			j := item.(map[string]any)
			byID[j["id"].(string)] = j
			order = append(order, j["id"].(string))
		}
		is.Equal(order, []string{"job_sys", "job_sched", "job_due", "job_run", "job_retry"}) // newest first
		ts := wire.FormatTime
		is.Equal(byID["job_retry"], map[string]any{
			"object": "job", "id": "job_retry", "kind": "payout.dispatch", "state": "retrying",
			"merchant_id": a.merchantID, "environment": "test", "target_id": "po_x", "attempts": 1.0,
			"run_at": ts(now.Add(5 * time.Minute)), "lease_until": nil,
			"last_error": "handler_error: dial postgres://[redacted]@db: refused; account [redacted], key [redacted], payout po_000042",
			"created_at": ts(now.Add(-10 * time.Minute)),
		})
		is.Equal(byID["job_run"], map[string]any{
			"object": "job", "id": "job_run", "kind": "webhook.deliver", "state": "running",
			"merchant_id": b.merchantID, "environment": "live", "target_id": "evt_1", "attempts": 1.0,
			"run_at": ts(now.Add(-5 * time.Minute)), "lease_until": ts(now.Add(time.Minute)), "last_error": nil,
			"created_at": ts(now.Add(-5 * time.Minute)),
		})
		is.Equal(byID["job_sys"], map[string]any{
			"object": "job", "id": "job_sys", "kind": "maintenance", "state": "due",
			"merchant_id": nil, "environment": nil, "target_id": nil, "attempts": 0.0,
			"run_at": ts(now), "lease_until": nil, "last_error": nil, "created_at": ts(now),
		})
		is.Equal(byID["job_sched"].(map[string]any)["state"], "scheduled")

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
			{"state=retrying", []string{"job_retry"}},
			{"state=running", []string{"job_run"}},
			{"state=due", []string{"job_sys", "job_due"}},
			{"state=scheduled", []string{"job_sched"}},
			{"kind=payment.inquire", []string{"job_due"}},
			{"kind=payout.refund", nil},
			{"merchant_id=" + a.merchantID, []string{"job_sched", "job_due", "job_retry"}},
			{"merchant_id=" + a.merchantID + "&state=due", []string{"job_due"}},
			{"limit=1", []string{"job_sys", "job_sched", "job_due", "job_run", "job_retry"}},
			{"limit=2&merchant_id=" + a.merchantID, []string{"job_sched", "job_due", "job_retry"}},
		} {
			is.Equal(ids("/operator/jobs?"+c.query), c.want) // paged through next_cursor
		}

		// Two minutes later the worker's lease has ended without an answer:
		// that job counts as retrying, and the scheduled one is not due yet.
		clock.Advance(2 * time.Minute)
		is.Equal(ids("/operator/jobs?state=running"), []string(nil))
		is.Equal(ids("/operator/jobs?state=retrying"), []string{"job_run", "job_retry"})
		is.Equal(ids("/operator/jobs?state=scheduled"), []string{"job_sched"})
	})
}

// metricsText scrapes the env's registry through its HTTP handler, as
// Prometheus would.
func metricsText(t *testing.T, e *env) string {
	t.Helper()
	rec := httptest.NewRecorder()
	promhttp.HandlerFor(e.registry, promhttp.HandlerOpts{}).ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("metrics: %d %s", rec.Code, rec.Body)
	}
	return rec.Body.String()
}

// sample returns the value of the sample named series (name and labels as
// the text format writes them) in text, and whether it is there.
func sample(t *testing.T, text, series string) (float64, bool) {
	t.Helper()
	for _, line := range strings.Split(text, "\n") {
		if v, ok := strings.CutPrefix(line, series+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("sample %s: %v", line, err)
			}
			return f, true
		}
	}
	return 0, false
}

func mustSample(t *testing.T, text, series string) float64 {
	t.Helper()
	v, ok := sample(t, text, series)
	if !ok {
		t.Fatalf("no sample %s in:\n%s", series, text)
	}
	return v
}

// TestStuckPayoutIsVisible: a payout whose Provider answers every call with
// a 5xx stays processing (it is never failed by giving up), and its
// dispatch job shows as retrying in /operator/jobs and in the metrics, with
// every attempt counted.
func TestStuckPayoutIsVisible(t *testing.T) {
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

		r = e.do("POST", "/v1/payout_intents", thPayout("250000", "stuck-1", plainAccount), basic(k), idem("stuck-1"))
		assertError(t, r, http.StatusServiceUnavailable, paykit.CodeDispatchUnavailable, "")
		list := e.do("GET", "/v1/payout_intents", nil, basic(k)).json(t)["data"].([]any)
		is.Equal(len(list), 1)
		payoutID := list[0].(map[string]any)["id"].(string)

		text := metricsText(t, e)
		is.Equal(mustSample(t, text, "paykit_job_stats_up"), 1.0)
		is.Equal(mustSample(t, text, `paykit_jobs_retrying{kind="payout.dispatch"}`), 0.0)
		is.Equal(mustSample(t, text, `paykit_jobs_due{kind="payout.dispatch"}`), 0.0) // due in 2 s
		is.Equal(mustSample(t, text, "paykit_payout_intents_stale"), 0.0)
		is.Equal(mustSample(t, text, "paykit_payment_intents_stale"), 0.0)
		_, counted := sample(t, text, `paykit_job_attempts_total{kind="payout.dispatch"}`)
		is.True(!counted) // the worker has run nothing yet

		// The worker tries four times, each time after the backoff (at most
		// an hour); the Provider answers 503 every time.
		const attempts = 4
		for range attempts {
			clock.Advance(2 * time.Hour)
			n, err := e.svc.ProcessDue(e.ctx)
			is.NoErr(err)
			is.Equal(n, 1)
		}
		is.Equal(int(calls.Load()), 1+attempts) // the create request's call and the worker's
		po := e.do("GET", "/v1/payout_intents/"+payoutID, nil, basic(k)).json(t)
		is.Equal(po["status"], "processing") // not failed by giving up

		r = e.do("GET", "/operator/jobs?state=retrying&merchant_id="+k.merchantID, nil, op)
		is.Equal(r.status, http.StatusOK)
		is.True(!strings.Contains(string(r.body), plainAccount))
		jobs := r.json(t)["data"].([]any)
		is.Equal(len(jobs), 1)
		job := jobs[0].(map[string]any)
		is.Equal(job["kind"], "payout.dispatch")
		is.Equal(job["state"], "retrying")
		is.Equal(job["target_id"], payoutID)
		is.Equal(job["merchant_id"], k.merchantID)
		is.Equal(job["environment"], "test")
		is.Equal(job["attempts"], float64(attempts))
		is.Equal(job["lease_until"], nil)
		is.True(strings.HasPrefix(job["last_error"].(string), "handler_error: dispatch_unavailable: "))
		is.Equal(e.do("GET", "/operator/jobs?kind=payout.dispatch", nil, op).json(t)["data"], jobs)

		text = metricsText(t, e)
		is.Equal(mustSample(t, text, `paykit_jobs_retrying{kind="payout.dispatch"}`), 1.0)
		is.Equal(mustSample(t, text, `paykit_jobs_running{kind="payout.dispatch"}`), 0.0)
		is.Equal(mustSample(t, text, `paykit_jobs_due{kind="payout.dispatch"}`), 0.0) // waits for its backoff
		is.Equal(mustSample(t, text, `paykit_jobs_oldest_due_age_seconds{kind="payout.dispatch"}`), 0.0)
		is.Equal(mustSample(t, text, `paykit_job_attempts_total{kind="payout.dispatch"}`), float64(attempts))
		is.Equal(mustSample(t, text, `paykit_job_errors_total{error="handler_error",kind="payout.dispatch"}`), float64(attempts))
		is.Equal(mustSample(t, text, "paykit_payout_intents_stale"), 1.0) // processing for 8 hours
		is.Equal(mustSample(t, text, "paykit_payment_intents_stale"), 0.0)
		is.Equal(mustSample(t, text, `paykit_jobs_retrying{kind="payment.inquire"}`), 0.0) // every handled kind is reported
		is.True(!strings.Contains(text, plainAccount))

		// Left alone past its next run time, the job is due, and the gauge
		// says for how long.
		runAt, err := time.Parse(time.RFC3339, job["run_at"].(string))
		is.NoErr(err)
		clock.Advance(2 * time.Hour)
		text = metricsText(t, e)
		is.Equal(mustSample(t, text, `paykit_jobs_due{kind="payout.dispatch"}`), 1.0)
		is.Equal(mustSample(t, text, `paykit_jobs_retrying{kind="payout.dispatch"}`), 1.0)
		is.Equal(mustSample(t, text, `paykit_jobs_oldest_due_age_seconds{kind="payout.dispatch"}`), clock.Now().Sub(runAt).Seconds())

		// Every attempt past the stale time is escalated in the log, without
		// the account number.
		is.True(strings.Contains(e.logs.String(), "payout still processing past its stale time"))
		is.True(!strings.Contains(e.logs.String(), plainAccount))
	})
}
