package httpadapter

import (
	"context"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/internal/monitor"
)

// Background work, made visible: the operator's job list and the
// Prometheus metrics of jobs and stale intents. paykit exposes plain Go
// values (Service.ListJobs, JobStats, monitor.JobRuns); this file says them
// over HTTP and in Prometheus' terms.

// routeJobs adds GET /jobs and registers the background-work collector on
// reg (when not nil).
func (o *operatorAPI) routeJobs(reg prometheus.Registerer) {
	o.handle("GET /jobs", o.auth(o.listJobs))
	if reg != nil {
		registerOrReuse(reg, newJobCollector(o.svc))
	}
}

// listJobs serves GET /jobs: background jobs of every merchant, newest
// first, filtered by kind, state and merchant_id; pending ones unless the
// state asks for completed ones.
func (o *operatorAPI) listJobs(w http.ResponseWriter, r *http.Request, _ string) error {
	q := r.URL.Query()
	if err := allowQuery(q, "limit", "cursor", "kind", "state", "merchant_id"); err != nil {
		return err
	}
	var params paykit.JobListParams
	var err error
	if params.PageParams, err = pageParams(q); err != nil {
		return err
	}
	if params.Kind, err = singleValue(q, "kind"); err != nil {
		return err
	}
	state, err := singleValue(q, "state")
	if err != nil {
		return err
	}
	params.State = paykit.JobState(state)
	if params.MerchantID, err = singleValue(q, "merchant_id"); err != nil {
		return err
	}
	page, err := o.svc.ListJobs(r.Context(), params)
	if err != nil {
		return err
	}
	o.writeJSON(w, r, http.StatusOK, page)
	return nil
}

// jobStatsTimeout bounds the Store queries of one scrape.
const jobStatsTimeout = 5 * time.Second

// jobCollector reports background work at scrape time: gauges read from the
// Store through Service.JobStats (shared by every instance on one Store) and
// the counters of this process's worker (monitor.JobRuns).
type jobCollector struct {
	svc *paykit.Service

	due, running, waiting, retrying *prometheus.Desc
	oldestDue                       *prometheus.Desc
	needsAttention                  *prometheus.Desc
	attempts, errors, leasesLost    *prometheus.Desc
	stalePayments, stalePayouts     *prometheus.Desc
	pausedEndpoints                 *prometheus.Desc
	up                              *prometheus.Desc
	providerUsable                  *prometheus.Desc
	providerCalls                   *prometheus.Desc
}

func newJobCollector(svc *paykit.Service) *jobCollector {
	kind := []string{"kind"}
	stale := monitor.ProcessingStaleAfter.String()
	return &jobCollector{
		svc: svc,
		due: prometheus.NewDesc("paykit_jobs_due",
			"Pending jobs whose run time has come and that no worker holds, retrying ones included, by kind.", kind, nil),
		running: prometheus.NewDesc("paykit_jobs_running",
			"Jobs a worker holds under a live lease, by kind.", kind, nil),
		waiting: prometheus.NewDesc("paykit_jobs_waiting",
			"Jobs whose purpose is not met yet (a payer who has not paid, a Provider that has not decided) and that run again later; nothing failed, by kind.", kind, nil),
		retrying: prometheus.NewDesc("paykit_jobs_retrying",
			"Jobs that ran before and failed, and wait for their next attempt, by kind.", kind, nil),
		needsAttention: prometheus.NewDesc("paykit_jobs_needs_attention",
			"Jobs that failed their kind's attempt limit and are still tried at the longest interval (never given up), by kind.", kind, nil),
		oldestDue: prometheus.NewDesc("paykit_jobs_oldest_due_age_seconds",
			"How long the longest-waiting due job of a kind has waited; 0 when none is due.", kind, nil),
		attempts: prometheus.NewDesc("paykit_job_attempts_total",
			"Job attempts this process ran, by kind.", kind, nil),
		errors: prometheus.NewDesc("paykit_job_errors_total",
			"Job attempts of this process that failed, by kind and error kind (handler_error, panic, no_handler, rescheduled); a job that waits is not counted.",
			[]string{"kind", "error"}, nil),
		leasesLost: prometheus.NewDesc("paykit_job_leases_lost_total",
			"Job runs of this process that lost their lease before they ended (it lapsed unrenewed, or another run claimed the job); their ends were not written.", kind, nil),
		stalePayments: prometheus.NewDesc("paykit_payment_intents_stale",
			"Payment intents processing for longer than the recovery escalation point ("+stale+" since their last change).", nil, nil),
		stalePayouts: prometheus.NewDesc("paykit_payout_intents_stale",
			"Payout intents processing for longer than the recovery escalation point ("+stale+" since their last change).", nil, nil),
		pausedEndpoints: prometheus.NewDesc("paykit_webhook_endpoints_paused",
			"Webhook endpoints paused now after failing deliveries in a row: their deliveries wait until the pause ends or an operator resumes them.", nil, nil),
		providerUsable: prometheus.NewDesc("paykit_provider_usable",
			"1 when this instance sends new attempts to the Provider, 0 when it is disabled or its circuit is open (attempts it holds are still recovered there).",
			[]string{"provider"}, nil),
		providerCalls: prometheus.NewDesc("paykit_provider_calls_total",
			"Create calls this process made to a Provider, by call (create_payment, create_payout) and outcome; unacknowledged and unknown mean the Provider did not answer (connection refused, 5xx, timeout).",
			[]string{"provider", "call", "outcome"}, nil),
		up: prometheus.NewDesc("paykit_job_stats_up",
			"1 when the Store answered the background-work queries of this scrape, else 0 (and the Store-based gauges are absent).", nil, nil),
	}
}

// Describe implements prometheus.Collector.
func (c *jobCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.due, c.running, c.waiting, c.retrying, c.needsAttention, c.oldestDue, c.attempts, c.errors, c.leasesLost, c.stalePayments, c.stalePayouts, c.pausedEndpoints, c.up, c.providerUsable, c.providerCalls} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *jobCollector) Collect(ch chan<- prometheus.Metric) {
	for _, p := range monitor.ProviderStates(c.svc) {
		usable := 1.0
		if p.Disabled || p.CircuitOpen {
			usable = 0
		}
		ch <- prometheus.MustNewConstMetric(c.providerUsable, prometheus.GaugeValue, usable, p.Name)
	}
	for _, p := range monitor.ProviderCalls(c.svc) {
		ch <- prometheus.MustNewConstMetric(c.providerCalls, prometheus.CounterValue, float64(p.Count), p.Provider, p.Call, p.Outcome)
	}
	for _, r := range monitor.JobRuns(c.svc) {
		ch <- prometheus.MustNewConstMetric(c.attempts, prometheus.CounterValue, float64(r.Attempts), r.Kind)
		ch <- prometheus.MustNewConstMetric(c.leasesLost, prometheus.CounterValue, float64(r.LostLeases), r.Kind)
		for kind, n := range r.Errors {
			ch <- prometheus.MustNewConstMetric(c.errors, prometheus.CounterValue, float64(n), r.Kind, string(kind))
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), jobStatsTimeout)
	defer cancel()
	stats, err := c.svc.JobStats(ctx)
	if err != nil {
		ch <- prometheus.MustNewConstMetric(c.up, prometheus.GaugeValue, 0)
		return
	}
	ch <- prometheus.MustNewConstMetric(c.up, prometheus.GaugeValue, 1)
	for _, k := range stats.Kinds {
		ch <- prometheus.MustNewConstMetric(c.due, prometheus.GaugeValue, float64(k.Due), k.Kind)
		ch <- prometheus.MustNewConstMetric(c.running, prometheus.GaugeValue, float64(k.Running), k.Kind)
		ch <- prometheus.MustNewConstMetric(c.waiting, prometheus.GaugeValue, float64(k.Waiting), k.Kind)
		ch <- prometheus.MustNewConstMetric(c.retrying, prometheus.GaugeValue, float64(k.Retrying), k.Kind)
		ch <- prometheus.MustNewConstMetric(c.needsAttention, prometheus.GaugeValue, float64(k.NeedsAttention), k.Kind)
		ch <- prometheus.MustNewConstMetric(c.oldestDue, prometheus.GaugeValue, k.OldestDueAge(stats.At).Seconds(), k.Kind)
	}
	ch <- prometheus.MustNewConstMetric(c.stalePayments, prometheus.GaugeValue, float64(stats.Stale.PaymentIntents))
	ch <- prometheus.MustNewConstMetric(c.stalePayouts, prometheus.GaugeValue, float64(stats.Stale.PayoutIntents))
	ch <- prometheus.MustNewConstMetric(c.pausedEndpoints, prometheus.GaugeValue, float64(stats.PausedWebhookEndpoints))
}
