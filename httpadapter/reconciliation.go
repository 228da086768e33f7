package httpadapter

import (
	"context"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/paykit/paykit"
)

// routeReconciliation adds the operator's reconciliation routes (the
// breaks, their resolution, and the runs) and registers the
// reconciliation metrics on reg (when not nil).
func (o *operatorAPI) routeReconciliation(reg prometheus.Registerer) {
	if reg != nil {
		registerOrReuse(reg, newReconCollector(o.svc))
	}
	o.handle("GET /reconciliation/breaks", o.auth(o.listBreaks))
	o.handle("GET /reconciliation/breaks/{id}", o.auth(serveByID(o, o.svc.GetReconciliationBreak)))
	o.handle("POST /reconciliation/breaks/{id}/resolve", o.auth(o.resolveBreak))
	o.handle("GET /reconciliation/runs", o.auth(o.listRuns))
}

// listBreaks serves GET /reconciliation/breaks: limit, cursor, status,
// type, merchant_id and provider.
func (o *operatorAPI) listBreaks(w http.ResponseWriter, r *http.Request, _ string) error {
	q := r.URL.Query()
	if err := allowQuery(q, "limit", "cursor", "status", "type", "merchant_id", "provider"); err != nil {
		return err
	}
	page, err := pageParams(q)
	if err != nil {
		return err
	}
	params := paykit.BreakListParams{PageParams: page}
	values := map[string]*string{}
	var status, typ string
	values["status"], values["type"], values["merchant_id"], values["provider"] = &status, &typ, &params.MerchantID, &params.Provider
	for name, dst := range values {
		if *dst, err = singleValue(q, name); err != nil {
			return err
		}
	}
	params.Status, params.Type = paykit.BreakStatus(status), paykit.BreakType(typ)
	list, err := o.svc.ListReconciliationBreaks(r.Context(), params)
	if err != nil {
		return err
	}
	o.writeJSON(w, r, http.StatusOK, list)
	return nil
}

// listRuns serves GET /reconciliation/runs: limit, cursor and provider.
func (o *operatorAPI) listRuns(w http.ResponseWriter, r *http.Request, _ string) error {
	q := r.URL.Query()
	if err := allowQuery(q, "limit", "cursor", "provider"); err != nil {
		return err
	}
	page, err := pageParams(q)
	if err != nil {
		return err
	}
	params := paykit.RunListParams{PageParams: page}
	if params.Provider, err = singleValue(q, "provider"); err != nil {
		return err
	}
	list, err := o.svc.ListReconciliationRuns(r.Context(), params)
	if err != nil {
		return err
	}
	o.writeJSON(w, r, http.StatusOK, list)
	return nil
}

// resolveBreakRequest is the body of POST
// /reconciliation/breaks/{id}/resolve.
type resolveBreakRequest struct {
	Resolution string `json:"resolution" validate:"required,oneof=accept_paykit accept_provider"`
	Note       string `json:"note" validate:"required,min=1,max=512"`
}

func (o *operatorAPI) resolveBreak(w http.ResponseWriter, r *http.Request, actor string) error {
	if err := allowQuery(r.URL.Query()); err != nil {
		return err
	}
	var req resolveBreakRequest
	if _, err := decodeBody(w, r, &req); err != nil {
		return err
	}
	b, err := o.svc.ResolveBreak(r.Context(), actor, r.PathValue("id"),
		paykit.ResolveBreakRequest{Resolution: paykit.BreakResolution(req.Resolution), Note: req.Note})
	if err != nil {
		return err
	}
	o.writeJSON(w, r, http.StatusOK, b)
	return nil
}

type settlementAmountsJSON struct {
	Amount   string `json:"amount"`
	Fee      string `json:"fee"`
	Currency string `json:"currency"`
}

func settlementAmountsView(a *paykit.SettlementAmounts) *settlementAmountsJSON {
	if a == nil {
		return nil
	}
	return &settlementAmountsJSON{amount(a.Amount), amount(a.Fee), a.Currency}
}

type breakJSON struct {
	Object      string                 `json:"object"`
	ID          string                 `json:"id"`
	Type        paykit.BreakType       `json:"type"`
	Status      paykit.BreakStatus     `json:"status"`
	Provider    string                 `json:"provider"`
	MerchantID  *string                `json:"merchant_id"`
	Environment *string                `json:"environment"`
	Source      *string                `json:"source"`
	Expected    *settlementAmountsJSON `json:"expected"`
	Reported    *settlementAmountsJSON `json:"reported"`
	Resolution  *string                `json:"resolution"`
	Note        *string                `json:"note"`
	CreatedAt   string                 `json:"created_at"`
	ResolvedAt  *string                `json:"resolved_at"`
}

// breakView is the contract's reconciliation_break projection.
func breakView(b *paykit.ReconciliationBreak) breakJSON {
	return breakJSON{"reconciliation_break", b.ID, b.Type, b.Status, b.Provider, nullString(b.MerchantID),
		nullString(string(b.Environment)), nullString(b.Source), settlementAmountsView(b.Expected), settlementAmountsView(b.Reported),
		nullString(string(b.Resolution)), nullString(b.Note), formatTime(b.CreatedAt), formatTimePtr(b.ResolvedAt)}
}

type runJSON struct {
	Object     string `json:"object"`
	ID         string `json:"id"`
	Provider   string `json:"provider"`
	Batch      string `json:"batch"`
	Lines      int    `json:"lines"`
	Matched    int    `json:"matched"`
	Breaks     int    `json:"breaks"`
	StartedAt  string `json:"started_at"`
	FinishedAt string `json:"finished_at"`
}

// runView is the contract's reconciliation_run projection.
func runView(r *paykit.ReconciliationRun) runJSON {
	return runJSON{"reconciliation_run", r.ID, r.Provider, r.Batch, r.Lines, r.Matched, r.Breaks, formatTime(r.StartedAt), formatTime(r.FinishedAt)}
}

// reconCollector reports reconciliation at scrape time: the open breaks by
// type (read from the Store) and the lines reconciled by result.
type reconCollector struct {
	svc        *paykit.Service
	breaksOpen *prometheus.Desc
	linesTotal *prometheus.Desc
}

func newReconCollector(svc *paykit.Service) *reconCollector {
	return &reconCollector{svc: svc,
		breaksOpen: prometheus.NewDesc("paykit_reconciliation_breaks_open",
			"Reconciliation breaks waiting for an operator, by type.", []string{"type"}, nil),
		linesTotal: prometheus.NewDesc("paykit_reconciliation_lines_total",
			"Settlement lines this process reconciled, by result (matched or the break type; batch_refused counts batches whose totals disagreed).", []string{"result"}, nil),
	}
}

// Describe implements prometheus.Collector.
func (c *reconCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.breaksOpen
	ch <- c.linesTotal
}

// Collect implements prometheus.Collector.
func (c *reconCollector) Collect(ch chan<- prometheus.Metric) {
	for result, n := range c.svc.ReconciliationCounts() {
		ch <- prometheus.MustNewConstMetric(c.linesTotal, prometheus.CounterValue, float64(n), result)
	}
	ctx, cancel := context.WithTimeout(context.Background(), jobStatsTimeout)
	defer cancel()
	open, err := c.svc.OpenBreakCounts(ctx)
	if err != nil {
		return
	}
	for t, n := range open {
		ch <- prometheus.MustNewConstMetric(c.breaksOpen, prometheus.GaugeValue, float64(n), string(t))
	}
}
