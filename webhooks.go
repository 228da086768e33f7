package paykit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/paykit/paykit/internal/fanout"
	"github.com/paykit/paykit/internal/telemetry"
	"github.com/paykit/paykit/internal/webhooks"
	"github.com/paykit/paykit/internal/webhooks/send"
	"github.com/paykit/paykit/internal/wire"
)

// Webhook endpoint statuses.
const (
	WebhookEnabled  = "enabled"
	WebhookDisabled = "disabled"
)

// Why an endpoint was disabled.
const (
	DisabledByOperator = "operator" // an operator disabled it
	DisabledGone       = "gone"     // it answered 410 Gone
	DisabledFailing    = "failing"  // a delivery failed on every attempt of the schedule
	DisabledByMerchant = "merchant" // the merchant disabled it
	DisabledDeleted    = "deleted"  // the merchant deleted it
	jobWebhookDeliver  = "webhook.deliver"
	webhookPurpose     = "webhook secret"
)

// WebhookEndpoint is where a merchant's events of one environment are
// delivered. Its signing secrets are stored sealed with the account
// keyring; the plain secret is shown once, when it is made.
type WebhookEndpoint struct {
	ID             string          `json:"id,omitzero"`
	MerchantID     string          `json:"merchant_id,omitzero"`
	Environment    Environment     `json:"environment,omitzero"`
	URL            string          `json:"url,omitzero"`
	Secrets        []WebhookSecret `json:"secrets,omitzero"` // newest first
	Status         string          `json:"status,omitzero"`  // WebhookEnabled or WebhookDisabled
	DisabledReason string          `json:"disabled_reason,omitzero"`
	CreatedAt      time.Time       `json:"created_at,omitzero"`
	UpdatedAt      time.Time       `json:"updated_at,omitzero"`
	Version        int64           `json:"version,omitzero"`
	// Failures counts the deliveries in a row that got no 2xx answer.
	Failures int `json:"failures,omitzero"`
	// PausedUntil: the endpoint failed or hung too often in a row, and
	// its deliveries wait until then (PauseReason says why); the first
	// one after decides whether it pauses again.
	PausedUntil *time.Time `json:"paused_until,omitzero"`
	PauseReason string     `json:"pause_reason,omitzero"`
	// EnabledEvents are the event types delivered to the endpoint;
	// ["*"] (or empty, as earlier versions stored) for every type.
	EnabledEvents []string `json:"enabled_events,omitzero"`
	Description   string   `json:"description,omitzero"`
	// DeletedAt: the merchant deleted the endpoint; it is disabled
	// (DisabledDeleted) and only operators still see it.
	DeletedAt *time.Time `json:"deleted_at,omitzero"`
}

// Enables reports whether events of type t are delivered to the endpoint
// (its status aside).
func (w *WebhookEndpoint) Enables(t string) bool {
	return len(w.EnabledEvents) == 0 || slices.Contains(w.EnabledEvents, AllEvents) || slices.Contains(w.EnabledEvents, t)
}

// Paused reports whether the endpoint's deliveries wait on a pause at now.
func (w *WebhookEndpoint) Paused(now time.Time) bool {
	return w.PausedUntil != nil && w.PausedUntil.After(now)
}

// WebhookSecret is one sealed signing secret of an endpoint. After a
// rotation the previous secret keeps signing until ExpiresAt.
type WebhookSecret struct {
	KeyID     string     `json:"key_id"`
	Sealed    []byte     `json:"sealed"`
	CreatedAt time.Time  `json:"created_at"`
	ExpiresAt *time.Time `json:"expires_at,omitempty"`
}

// Scope returns the tenant of the endpoint.
func (w *WebhookEndpoint) Scope() Scope { return Scope{w.MerchantID, w.Environment} }

// NewWebhookSecret is an endpoint with the secret just made for it: the
// answer to creating an endpoint or rotating its secret, the only time the
// secret is shown.
type NewWebhookSecret struct {
	Endpoint *WebhookEndpoint
	Secret   string // whsec_…
}

// WebhookAttempt records one delivery attempt of an event to an endpoint.
type WebhookAttempt struct {
	ID          string
	EndpointID  string
	EventID     string
	MerchantID  string
	Environment Environment
	Number      int           // 1 for the first attempt of this event to this endpoint
	StatusCode  int           // 0 when no answer came
	Latency     time.Duration // stored at millisecond precision
	Response    string        // the start of the response body
	Error       string        // why no answer came, or why it was refused
	Succeeded   bool
	CreatedAt   time.Time
}

// WebhookAttemptQuery selects the attempts of one endpoint, newest first.
type WebhookAttemptQuery struct {
	EndpointID string
	EventID    string // optional
	After      *Position
	Limit      int
}

// CreateWebhookEndpointRequest is the body of
// POST /operator/merchants/{id}/webhook_endpoints.
type CreateWebhookEndpointRequest struct {
	Environment string `json:"environment" validate:"required,environment"`
	URL         string `json:"url" validate:"required,max=2048"`
}

// CreateWebhookEndpoint registers an endpoint for a merchant's events of
// one environment and returns it with its signing secret (shown only here).
// In live the URL must be https and resolve to public addresses; in test,
// loopback http URLs are allowed so local development works.
func (s *Service) CreateWebhookEndpoint(ctx context.Context, actor, merchantID string, req CreateWebhookEndpointRequest) (*NewWebhookSecret, error) {
	if err := validateRequest(&req); err != nil {
		return nil, err
	}
	env := Environment(req.Environment)
	if err := webhooks.ValidateURLContext(ctx, req.URL, env == Live, nil); err != nil {
		return nil, invalidRequest("url", "url %s.", err.Error())
	}
	now := s.Now()
	w := &WebhookEndpoint{ID: s.newID("we"), MerchantID: merchantID, Environment: env, URL: req.URL,
		Status: WebhookEnabled, EnabledEvents: []string{AllEvents}, CreatedAt: now, UpdatedAt: now}
	secret, err := s.addWebhookSecret(w, now)
	if err != nil {
		return nil, internalError(err)
	}
	err = s.inTx(ctx, func(tx Tx) error {
		if _, err := tx.GetMerchant(ctx, merchantID); err != nil {
			return err
		}
		if err := tx.CreateWebhookEndpoint(ctx, w); err != nil {
			return err
		}
		return s.audit(ctx, tx, &AuditEvent{Actor: actor, Action: "webhook_endpoint.create", TargetType: "webhook_endpoint",
			TargetID: w.ID, MerchantID: merchantID, Environment: env, Details: details("url", w.URL)})
	})
	if errors.Is(err, ErrNotFound) {
		return nil, notFound("merchant")
	}
	if err != nil {
		return nil, asServiceError(err)
	}
	return &NewWebhookSecret{Endpoint: w, Secret: secret}, nil
}

// addWebhookSecret makes a secret, seals it into w (newest first) and
// returns it.
func (s *Service) addWebhookSecret(w *WebhookEndpoint, now time.Time) (string, error) {
	secret, err := webhooks.NewSecret(s.random)
	if err != nil {
		return "", err
	}
	keyID, sealed, err := s.accountKeys.Seal(secret, webhookPurpose+"\n"+w.ID)
	if err != nil {
		return "", err
	}
	w.Secrets = append([]WebhookSecret{{KeyID: keyID, Sealed: sealed, CreatedAt: now}}, w.Secrets...)
	return secret, nil
}

// signingSecrets opens the secrets of w that still sign at now.
func (s *Service) signingSecrets(w *WebhookEndpoint, now time.Time) ([]string, error) {
	var out []string
	for _, sec := range w.Secrets {
		if sec.ExpiresAt != nil && !now.Before(*sec.ExpiresAt) {
			continue
		}
		plain, err := s.accountKeys.Open(sec.KeyID, sec.Sealed, webhookPurpose+"\n"+w.ID)
		if err != nil {
			return nil, err
		}
		out = append(out, plain)
	}
	return out, nil
}

// ListWebhookEndpoints returns a merchant's endpoints with their status.
func (s *Service) ListWebhookEndpoints(ctx context.Context, merchantID string) (*Page[WebhookEndpoint], error) {
	if _, err := s.store.GetMerchant(ctx, merchantID); errors.Is(err, ErrNotFound) {
		return nil, notFound("merchant")
	} else if err != nil {
		return nil, internalError(err)
	}
	rows, err := s.store.ListWebhookEndpoints(ctx, merchantID)
	if err != nil {
		return nil, internalError(err)
	}
	return &Page[WebhookEndpoint]{Data: rows}, nil
}

// RotateWebhookSecret gives an endpoint a new secret. The previous ones
// keep signing for overlap (24 hours when the operator names none; at most 7 days), so the merchant
// can switch without losing a delivery; both signatures are sent meanwhile.
func (s *Service) RotateWebhookSecret(ctx context.Context, actor, id string, overlap time.Duration) (*NewWebhookSecret, error) {
	if overlap < 0 || overlap > 7*24*time.Hour {
		return nil, invalidRequest("expire_previous_after", "expire_previous_after must be between 0 and 604800 seconds.")
	}
	return s.rotateWebhookSecret(ctx, actor, id, overlap, nil)
}

// rotateWebhookSecret is RotateWebhookSecret of an endpoint of scope (any
// when nil) that is not deleted.
func (s *Service) rotateWebhookSecret(ctx context.Context, actor, id string, overlap time.Duration, scope *Scope) (*NewWebhookSecret, error) {
	var out *NewWebhookSecret
	err := s.updateWebhookEndpoint(ctx, actor, id, "webhook_endpoint.rotate_secret", func(_ Tx, w *WebhookEndpoint, now time.Time) error {
		if scope != nil && w.Scope() != *scope || w.DeletedAt != nil {
			return ErrNotFound
		}
		until := now.Add(overlap)
		kept := w.Secrets[:0]
		for _, sec := range w.Secrets {
			if sec.ExpiresAt != nil && !now.Before(*sec.ExpiresAt) {
				continue // expired: no longer needed
			}
			if sec.ExpiresAt == nil || sec.ExpiresAt.After(until) {
				sec.ExpiresAt = &until
			}
			kept = append(kept, sec)
		}
		w.Secrets = kept
		secret, err := s.addWebhookSecret(w, now)
		out = &NewWebhookSecret{Endpoint: w, Secret: secret}
		return err
	})
	return out, err
}

// SetWebhookEndpointEnabled enables or disables an endpoint as an
// operator. Enabling clears the reason it was disabled; events made while
// it was disabled are not sent.
func (s *Service) SetWebhookEndpointEnabled(ctx context.Context, actor, id string, enabled bool) (*WebhookEndpoint, error) {
	action := "webhook_endpoint.disable"
	if enabled {
		action = "webhook_endpoint.enable"
	}
	var out *WebhookEndpoint
	err := s.updateWebhookEndpoint(ctx, actor, id, action, func(_ Tx, w *WebhookEndpoint, _ time.Time) error {
		w.Status, w.DisabledReason = WebhookEnabled, ""
		if !enabled {
			w.Status, w.DisabledReason = WebhookDisabled, DisabledByOperator
		}
		out = w
		return nil
	})
	return out, err
}

// ResumeWebhookEndpoint lifts an endpoint's pause now, as an operator: its
// count of failed deliveries in a row starts again from 0, and the
// deliveries that waited on the pause are due at once (a retry scheduled
// after the pause's end keeps its time). On an endpoint that is not paused
// it only resets the count. Audited as webhook_endpoint.resume.
func (s *Service) ResumeWebhookEndpoint(ctx context.Context, actor, id string) (*WebhookEndpoint, error) {
	var out *WebhookEndpoint
	err := s.updateWebhookEndpoint(ctx, actor, id, "webhook_endpoint.resume", func(tx Tx, w *WebhookEndpoint, now time.Time) error {
		if w.Paused(now) {
			if err := tx.ResumeJobs(ctx, w.ID, *w.PausedUntil, now); err != nil {
				return err
			}
		}
		w.Failures, w.PausedUntil, w.PauseReason = 0, nil, ""
		out = w
		return nil
	})
	return out, err
}

// updateWebhookEndpoint changes an endpoint in a transaction with an audit
// event.
func (s *Service) updateWebhookEndpoint(ctx context.Context, actor, id, action string, change func(tx Tx, w *WebhookEndpoint, now time.Time) error) error {
	err := s.inTx(ctx, func(tx Tx) error {
		w, err := tx.GetWebhookEndpoint(ctx, id)
		if err != nil {
			return err
		}
		now := s.Now()
		if err := change(tx, w, now); err != nil {
			return err
		}
		w.UpdatedAt = now
		if err := tx.UpdateWebhookEndpoint(ctx, w); err != nil {
			return err
		}
		return s.audit(ctx, tx, &AuditEvent{Actor: actor, Action: action, TargetType: "webhook_endpoint", TargetID: w.ID,
			MerchantID: w.MerchantID, Environment: w.Environment})
	})
	if errors.Is(err, ErrNotFound) {
		return notFound("webhook_endpoint")
	}
	if err != nil {
		return asServiceError(err)
	}
	return nil
}

// ListWebhookAttempts returns the delivery attempts of an endpoint, newest
// first.
func (s *Service) ListWebhookAttempts(ctx context.Context, endpointID string, params PageParams) (*Page[WebhookAttempt], error) {
	if _, err := s.store.GetWebhookEndpoint(ctx, endpointID); errors.Is(err, ErrNotFound) {
		return nil, notFound("webhook_endpoint")
	} else if err != nil {
		return nil, internalError(err)
	}
	limit, after, err := s.pageQuery("webhook_attempt", params)
	if err != nil {
		return nil, err
	}
	rows, err := s.store.ListWebhookAttempts(ctx, WebhookAttemptQuery{EndpointID: endpointID, After: after, Limit: limit + 1})
	if err != nil {
		return nil, internalError(err)
	}
	return makePage(s, "webhook_attempt", rows, limit, func(a *WebhookAttempt) Position { return Position{a.CreatedAt, a.ID} }), nil
}

// webhookJob is the payload of a delivery job; the job's TargetID is the
// event.
type webhookJob struct {
	EndpointID string `json:"endpoint_id"`
}

// fanOut schedules the delivery of e to every enabled endpoint of its
// scope, in tx: in one write when tx is a fanout.Scheduler.
func (s *Service) fanOut(ctx context.Context, tx Tx, e *Event) error {
	inner := tx
	if et, ok := tx.(*eventTx); ok {
		inner = et.Tx
	}
	if d, ok := inner.(fanout.Scheduler); ok {
		fe := fanout.Event{ID: e.ID, Type: e.Type, MerchantID: e.MerchantID, Environment: string(e.Environment), CreatedAt: e.CreatedAt,
			TraceParent: telemetry.TraceParent(ctx)}
		return d.ScheduleDeliveries(ctx, fe, jobWebhookDeliver, s.newID("job"), s.Now())
	}
	eps, err := tx.ListWebhookEndpoints(ctx, e.MerchantID)
	if err != nil {
		return err
	}
	for _, w := range eps {
		if w.Environment != e.Environment || w.Status != WebhookEnabled || !w.Enables(e.Type) {
			continue
		}
		payload, _ := json.Marshal(webhookJob{w.ID})
		runAt := e.CreatedAt
		if w.PausedUntil != nil && w.PausedUntil.After(runAt) {
			runAt = *w.PausedUntil
		}
		if err := s.enqueue(ctx, tx, &Job{Kind: jobWebhookDeliver, Scope: e.Scope(), TargetID: e.ID, Payload: payload,
			RunAt: runAt, DedupKey: jobWebhookDeliver + ":" + w.ID + ":" + e.ID, Partition: w.ID}); err != nil {
			return err
		}
	}
	return nil
}

// deliverWebhookJob makes one delivery attempt of an event to an endpoint
// and records it. A failure is retried on the schedule of the contract
// (5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h, 24 h, with jitter; a
// longer Retry-After on 429, 502, 503 and 504 wins); after the last one the
// endpoint is disabled. 410 Gone disables it at once.
func (s *Service) deliverWebhookJob(ctx context.Context, j *Job) error {
	var p webhookJob
	if err := json.Unmarshal(j.Payload, &p); err != nil {
		return nil // not a delivery this version can make sense of
	}
	w, err := s.store.GetWebhookEndpoint(ctx, p.EndpointID)
	if errors.Is(err, ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if w.Status != WebhookEnabled {
		return nil // disabled or deleted: pending deliveries stop
	}
	if w.Paused(s.Now()) {
		return retryAt{at: *w.PausedUntil, wait: true} // the endpoint is paused: wait, untried
	}
	e, err := s.store.GetEvent(ctx, j.Scope, j.TargetID)
	if errors.Is(err, ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if !w.Enables(e.Type) {
		return nil // its events changed since the delivery was scheduled
	}
	now := s.Now()
	secrets, err := s.signingSecrets(w, now)
	if err != nil {
		return err
	}
	sender := s.webhookSender.Load()
	if sender == nil {
		return errors.New("no webhook sender: the Service was not made by New")
	}
	if err := CheckJobLease(ctx); err != nil {
		return err
	}
	var res send.Attempt
	if body, err := EventBody(e); err != nil {
		res.Err = "render event: " + err.Error()
	} else {
		hctx, span := s.tel.startDelivery(ctx, w, e)
		d := send.Delivery{URL: w.URL, Live: w.Environment == Live, ID: e.ID, Body: body, Secrets: secrets, SentAt: now}
		if s.tel.hookTrace {
			d.TraceParent = telemetry.TraceParent(hctx)
		}
		res = (*sender).Send(hctx, d)
		s.tel.endDelivery(hctx, span, res)
	}
	if ctx.Err() != nil {
		return ctx.Err() // the worker is stopping: the attempt does not count
	}
	a := &WebhookAttempt{ID: s.newID("wha"), EndpointID: w.ID, EventID: e.ID, MerchantID: w.MerchantID,
		Environment: w.Environment, Number: j.Attempts, StatusCode: res.StatusCode,
		Latency: res.Latency.Truncate(time.Millisecond), Response: res.Response, Error: res.Err,
		Succeeded: res.Succeeded(), CreatedAt: s.Now()}
	if err := s.store.CreateWebhookAttempt(ctx, a); err != nil {
		return err
	}
	logArgs := []any{"event", e.ID, "webhook_endpoint", w.ID, "attempt", j.Attempts, "status_code", res.StatusCode, "latency_ms", res.Latency.Milliseconds()}
	switch {
	case res.Succeeded():
		s.log.InfoContext(ctx, "webhook delivered", logArgs...)
		if w.Failures > 0 || w.PausedUntil != nil {
			return s.endpointAnswered(ctx, w.ID)
		}
		return nil
	case res.Gone():
		s.log.WarnContext(ctx, "webhook endpoint gone; disabled", logArgs...)
		return s.disableWebhookEndpoint(ctx, w.ID, DisabledGone)
	}
	delay, ok := webhooks.NextDelay(j.Attempts, res.RetryAfter, s.rnd)
	if !ok {
		s.log.WarnContext(ctx, "webhook delivery failed on every attempt; endpoint disabled", append(logArgs, "error", res.Err)...)
		return s.disableWebhookEndpoint(ctx, w.ID, DisabledFailing)
	}
	s.log.InfoContext(ctx, "webhook delivery failed; will retry", append(logArgs, "error", res.Err, "retry_in", delay.String())...)
	if err := s.endpointFailed(ctx, w.ID, res); err != nil {
		return err
	}
	return retryAt{at: s.Now().Add(delay)}
}

// An endpoint that fails pauseAfter deliveries in a row pauses: its
// deliveries wait pauseFor, doubling with each pause that follows at once,
// up to maxPause, so that an endpoint that hangs holds no worker's slots.
const (
	pauseAfter = 3
	pauseFor   = time.Minute
	maxPause   = time.Hour
)

// endpointFailed counts a failed delivery to the endpoint id, and pauses
// the endpoint once it failed pauseAfter times in a row.
func (s *Service) endpointFailed(ctx context.Context, id string, res send.Attempt) error {
	return s.inTx(ctx, func(tx Tx) error {
		w, err := tx.GetWebhookEndpoint(ctx, id)
		if err != nil {
			return err
		}
		now := s.Now()
		w.Failures++
		w.UpdatedAt = now
		if w.Failures < pauseAfter {
			return tx.UpdateWebhookEndpoint(ctx, w)
		}
		d := pauseFor
		for i := pauseAfter; i < w.Failures && d < maxPause; i++ {
			d *= 2
		}
		until := now.Add(min(d, maxPause)).Truncate(time.Millisecond)
		w.PausedUntil = &until
		w.PauseReason = fmt.Sprintf("%d deliveries in a row failed; the last: %s", w.Failures, failureText(res))
		if err := tx.UpdateWebhookEndpoint(ctx, w); err != nil {
			return err
		}
		s.log.WarnContext(ctx, "webhook endpoint paused", "webhook_endpoint", w.ID, "failures", w.Failures, "until", wire.FormatTime(until))
		return tx.DeferJobs(ctx, w.ID, until)
	})
}

// failureText says how a delivery failed, for an operator.
func failureText(res send.Attempt) string {
	if res.StatusCode != 0 {
		return fmt.Sprintf("answered %d", res.StatusCode)
	}
	return truncateUTF8(res.Err, 200)
}

// endpointAnswered ends the endpoint's run of failures, and its pause.
func (s *Service) endpointAnswered(ctx context.Context, id string) error {
	return s.inTx(ctx, func(tx Tx) error {
		w, err := tx.GetWebhookEndpoint(ctx, id)
		if err != nil {
			return err
		}
		if w.Failures == 0 && w.PausedUntil == nil {
			return nil
		}
		w.Failures, w.PausedUntil, w.PauseReason, w.UpdatedAt = 0, nil, "", s.Now()
		return tx.UpdateWebhookEndpoint(ctx, w)
	})
}

// disableWebhookEndpoint disables an endpoint because of its answers.
func (s *Service) disableWebhookEndpoint(ctx context.Context, id, reason string) error {
	return s.inTx(ctx, func(tx Tx) error {
		w, err := tx.GetWebhookEndpoint(ctx, id)
		if err != nil {
			return err
		}
		if w.Status == WebhookDisabled {
			return nil
		}
		w.Status, w.DisabledReason, w.UpdatedAt = WebhookDisabled, reason, s.Now()
		return tx.UpdateWebhookEndpoint(ctx, w)
	})
}
