package sqlstore

import (
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/internal/fanout"
	"github.com/paykit/paykit/internal/snapshot"
)

// eventRow is a row of events.
type eventRow struct {
	bun.BaseModel `bun:"table:events"`

	ID          string    `bun:"id,pk"`
	MerchantID  string    `bun:"merchant_id"`
	Environment string    `bun:"environment"`
	Type        string    `bun:"type"`
	ObjectID    string    `bun:"object_id"`
	Data        string    `bun:"data"`
	CreatedAt   time.Time `bun:"created_at"`
}

// event decodes the row. data holds a snapshot of the resource.
func (r *eventRow) event() (paykit.Event, error) {
	e := paykit.Event{ID: r.ID, MerchantID: r.MerchantID, Environment: paykit.Environment(r.Environment),
		Type: r.Type, ObjectID: r.ObjectID, CreatedAt: r.CreatedAt.UTC()}
	res, err := snapshot.Unmarshal([]byte(r.Data))
	if err != nil {
		return e, fmt.Errorf("event %s data: %w", r.ID, err)
	}
	e.Resource = res
	return e, nil
}

// CreateEvent implements paykit.Tx.
func (t tx) CreateEvent(ctx context.Context, e *paykit.Event) error {
	data, err := snapshot.Marshal(e.Resource)
	if err != nil {
		return err
	}
	row := &eventRow{ID: e.ID, MerchantID: e.MerchantID, Environment: string(e.Environment), Type: e.Type,
		ObjectID: e.ObjectID, Data: string(data), CreatedAt: e.CreatedAt.UTC()}
	return t.insert(ctx, "events", row, uniqueKey{"id", "id = ?", []any{e.ID}})
}

// ScheduleDeliveries implements fanout.Scheduler: one INSERT ... SELECT
// from the scope's enabled endpoints (on PostgreSQL, a call of the
// function that runs it), held back like any write in a batched
// transaction.
func (t tx) ScheduleDeliveries(ctx context.Context, e fanout.Event, kind, baseID string, now time.Time) error {
	t.jobDue() // when the scope has endpoints: a claim finds out
	var q *bun.RawQuery
	if t.pg {
		// The same statement as SQLite's, in a function of migration 0018,
		// whose plan PostgreSQL keeps.
		q = t.db.NewRaw(`SELECT paykit_schedule_deliveries(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			baseID, kind, e.ID, e.CreatedAt.UTC(), now.UTC(), string(paykit.JobAvailable),
			e.MerchantID, e.Environment, paykit.WebhookEnabled, e.Type, nullable(e.TraceParent))
	} else {
		args := []any{baseID, kind, e.ID, kind, e.ID, e.CreatedAt.UTC(), e.CreatedAt.UTC(), now.UTC(), string(paykit.JobAvailable),
			nullable(e.TraceParent), e.MerchantID, e.Environment, paykit.WebhookEnabled, e.Type}
		if t.sqlTx != nil {
			if st, a, ok := t.prep.rawArgs(fanOutSQLite, args...); ok {
				_, err := t.execPrepared(ctx, st, a)
				return mapError("schedule deliveries", err)
			}
		}
		q = t.db.NewRaw(fanOutSQLite, args...)
	}
	if t.b != nil {
		t.b.hold(q.String())
		return nil
	}
	if _, err := q.Exec(ctx); err != nil {
		return mapError("schedule deliveries", err)
	}
	return nil
}

// fanOutSQLite is ScheduleDeliveries' statement on SQLite.
const fanOutSQLite = `INSERT INTO jobs (id, kind, merchant_id, environment, target_id, payload, dedup_key, run_at,
		attempts, lease_owner, last_error, created_at, version, state, priority, partition_key, trace_parent)
		SELECT ? || '.' || row_number() OVER (ORDER BY id), ?, merchant_id, environment, ?,
		CAST('{"endpoint_id":"' || id || '"}' AS BLOB),
		? || ':' || id || ':' || ?, MAX(?, COALESCE(paused_until, ?)), 0, '', '', ?, 0, ?, 1, id, ?
		FROM webhook_endpoints WHERE merchant_id = ? AND environment = ? AND status = ?
		AND (instr(enabled_events, '"*"') > 0 OR instr(enabled_events, '"' || ? || '"') > 0)
		ON CONFLICT DO NOTHING`

// GetEvent implements paykit.Tx.
func (t tx) GetEvent(ctx context.Context, scope paykit.Scope, id string) (*paykit.Event, error) {
	var row eventRow
	if err := ofScope(t.db.NewSelect().Model(&row).Where("id = ?", id), scope).Scan(ctx); err != nil {
		return nil, mapError("get event", err)
	}
	e, err := row.event()
	if err != nil {
		return nil, err
	}
	return &e, nil
}

// listEventsQuery selects one keyset page of q into rows.
func (t tx) listEventsQuery(rows *[]eventRow, q paykit.ListQuery[paykit.EventListParams]) *bun.SelectQuery {
	f := q.Filter
	return pagePerValue(t, rows, f.Types, q.Limit, func(sel *bun.SelectQuery, types []string) *bun.SelectQuery {
		sel = inScope(sel, q.Scope)
		if len(types) > 0 {
			sel = sel.Where("type IN (?)", bun.List(types))
		}
		if f.CreatedAfter != nil {
			sel = sel.Where("created_at >= ?", f.CreatedAfter.UTC())
		}
		if f.CreatedBefore != nil {
			sel = sel.Where("created_at < ?", f.CreatedBefore.UTC())
		}
		return newestFirst(sel, q.After, q.Limit)
	})
}

// ListEvents implements paykit.Tx.
func (t tx) ListEvents(ctx context.Context, q paykit.ListQuery[paykit.EventListParams]) ([]paykit.Event, error) {
	var rows []eventRow
	if err := t.listEventsQuery(&rows, q).Scan(ctx); err != nil {
		return nil, mapError("list events", err)
	}
	out := make([]paykit.Event, len(rows))
	for i := range rows {
		var err error
		if out[i], err = rows[i].event(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// webhookEndpointRow is a row of webhook_endpoints.
type webhookEndpointRow struct {
	bun.BaseModel `bun:"table:webhook_endpoints"`

	ID             string     `bun:"id,pk"`
	MerchantID     string     `bun:"merchant_id"`
	Environment    string     `bun:"environment"`
	URL            string     `bun:"url"`
	Secrets        string     `bun:"secrets"`
	Status         string     `bun:"status"`
	DisabledReason string     `bun:"disabled_reason"`
	CreatedAt      time.Time  `bun:"created_at"`
	UpdatedAt      time.Time  `bun:"updated_at"`
	Version        int64      `bun:"version"`
	Failures       int        `bun:"failures"`
	PausedUntil    *time.Time `bun:"paused_until"`
	PauseReason    string     `bun:"pause_reason"`
	EnabledEvents  string     `bun:"enabled_events"` // a JSON array
	Description    string     `bun:"description"`
	DeletedAt      *time.Time `bun:"deleted_at"`
}

func toWebhookEndpointRow(w *paykit.WebhookEndpoint) (*webhookEndpointRow, error) {
	secrets := w.Secrets
	if secrets == nil {
		secrets = []paykit.WebhookSecret{}
	}
	enc, err := toJSON(&secrets)
	if err != nil {
		return nil, err
	}
	events := w.EnabledEvents
	if len(events) == 0 {
		events = []string{paykit.AllEvents}
	}
	encEvents, err := toJSON(&events)
	if err != nil {
		return nil, err
	}
	return &webhookEndpointRow{EnabledEvents: encEvents, Description: w.Description, DeletedAt: utcPtr(w.DeletedAt),
		ID: w.ID, MerchantID: w.MerchantID, Environment: string(w.Environment), URL: w.URL,
		Secrets: enc, Status: w.Status, DisabledReason: w.DisabledReason, CreatedAt: w.CreatedAt.UTC(),
		UpdatedAt: w.UpdatedAt.UTC(), Version: w.Version, Failures: w.Failures, PausedUntil: utcPtr(w.PausedUntil),
		PauseReason: w.PauseReason}, nil
}

func (r *webhookEndpointRow) endpoint() (paykit.WebhookEndpoint, error) {
	secrets, err := fromJSON[[]paykit.WebhookSecret](r.Secrets)
	if err != nil {
		return paykit.WebhookEndpoint{}, err
	}
	events, err := fromJSON[[]string](r.EnabledEvents)
	if err != nil {
		return paykit.WebhookEndpoint{}, err
	}
	w := paykit.WebhookEndpoint{ID: r.ID, MerchantID: r.MerchantID, Environment: paykit.Environment(r.Environment),
		URL: r.URL, Status: r.Status, DisabledReason: r.DisabledReason, CreatedAt: r.CreatedAt.UTC(),
		UpdatedAt: r.UpdatedAt.UTC(), Version: r.Version, Failures: r.Failures, PausedUntil: utcPtr(r.PausedUntil),
		PauseReason: r.PauseReason, Description: r.Description, DeletedAt: utcPtr(r.DeletedAt)}
	if events != nil {
		w.EnabledEvents = *events
	}
	if secrets != nil {
		w.Secrets = *secrets
		for i := range w.Secrets {
			w.Secrets[i].CreatedAt = w.Secrets[i].CreatedAt.UTC()
			w.Secrets[i].ExpiresAt = utcPtr(w.Secrets[i].ExpiresAt)
		}
	}
	return w, nil
}

// CreateWebhookEndpoint implements paykit.Tx.
func (t tx) CreateWebhookEndpoint(ctx context.Context, w *paykit.WebhookEndpoint) error {
	row, err := toWebhookEndpointRow(w)
	if err != nil {
		return err
	}
	return t.insert(ctx, "webhook_endpoints", row, uniqueKey{"id", "id = ?", []any{w.ID}})
}

// GetWebhookEndpoint implements paykit.Tx.
func (t tx) GetWebhookEndpoint(ctx context.Context, id string) (*paykit.WebhookEndpoint, error) {
	var row webhookEndpointRow
	if err := t.db.NewSelect().Model(&row).Where("id = ?", id).Scan(ctx); err != nil {
		return nil, mapError("get webhook endpoint", err)
	}
	w, err := row.endpoint()
	if err != nil {
		return nil, err
	}
	return &w, nil
}

// UpdateWebhookEndpoint implements paykit.Tx.
func (t tx) UpdateWebhookEndpoint(ctx context.Context, w *paykit.WebhookEndpoint) error {
	row, err := toWebhookEndpointRow(w)
	if err != nil {
		return err
	}
	row.Version++
	err = t.updateIntent(ctx, "update webhook endpoint", "webhook_endpoints", row, w.ID, w.Scope(), w.Version)
	if err == nil {
		w.Version = row.Version
	}
	return err
}

// ListWebhookEndpoints implements paykit.Tx.
func (t tx) ListWebhookEndpoints(ctx context.Context, merchantID string) ([]paykit.WebhookEndpoint, error) {
	var rows []webhookEndpointRow
	if err := newestFirst(t.db.NewSelect().Model(&rows).Where("merchant_id = ?", merchantID), nil, 0).Scan(ctx); err != nil {
		return nil, mapError("list webhook endpoints", err)
	}
	out := make([]paykit.WebhookEndpoint, len(rows))
	for i := range rows {
		w, err := rows[i].endpoint()
		if err != nil {
			return nil, err
		}
		out[i] = w
	}
	return out, nil
}

// webhookAttemptRow is a row of webhook_attempts.
type webhookAttemptRow struct {
	bun.BaseModel `bun:"table:webhook_attempts"`

	ID          string    `bun:"id,pk"`
	EndpointID  string    `bun:"endpoint_id"`
	EventID     string    `bun:"event_id"`
	MerchantID  string    `bun:"merchant_id"`
	Environment string    `bun:"environment"`
	Number      int       `bun:"number"`
	StatusCode  int       `bun:"status_code"`
	LatencyMS   int64     `bun:"latency_ms"`
	Response    string    `bun:"response"`
	Error       string    `bun:"error"`
	Succeeded   bool      `bun:"succeeded"`
	CreatedAt   time.Time `bun:"created_at"`
}

// CreateWebhookAttempt implements paykit.Tx.
func (t tx) CreateWebhookAttempt(ctx context.Context, a *paykit.WebhookAttempt) error {
	row := &webhookAttemptRow{ID: a.ID, EndpointID: a.EndpointID, EventID: a.EventID, MerchantID: a.MerchantID,
		Environment: string(a.Environment), Number: a.Number, StatusCode: a.StatusCode,
		LatencyMS: a.Latency.Milliseconds(), Response: a.Response, Error: a.Error, Succeeded: a.Succeeded,
		CreatedAt: a.CreatedAt.UTC()}
	return t.insert(ctx, "webhook_attempts", row, uniqueKey{"id", "id = ?", []any{a.ID}})
}

// ListWebhookAttempts implements paykit.Tx.
func (t tx) ListWebhookAttempts(ctx context.Context, q paykit.WebhookAttemptQuery) ([]paykit.WebhookAttempt, error) {
	var rows []webhookAttemptRow
	sel := t.db.NewSelect().Model(&rows).Where("endpoint_id = ?", q.EndpointID)
	if q.EventID != "" {
		sel = sel.Where("event_id = ?", q.EventID)
	}
	if err := newestFirst(sel, q.After, q.Limit).Scan(ctx); err != nil {
		return nil, mapError("list webhook attempts", err)
	}
	out := make([]paykit.WebhookAttempt, len(rows))
	for i, r := range rows {
		out[i] = paykit.WebhookAttempt{ID: r.ID, EndpointID: r.EndpointID, EventID: r.EventID, MerchantID: r.MerchantID,
			Environment: paykit.Environment(r.Environment), Number: r.Number, StatusCode: r.StatusCode,
			Latency: time.Duration(r.LatencyMS) * time.Millisecond, Response: r.Response, Error: r.Error,
			Succeeded: r.Succeeded, CreatedAt: r.CreatedAt.UTC()}
	}
	return out, nil
}

// nullable is v, or NULL when v is empty.
func nullable(v string) any {
	if v == "" {
		return nil
	}
	return v
}
