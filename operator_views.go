package paykit

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/paykit/paykit/internal/contract"
)

// This file holds what the operator dashboard (httpadapter) reads and does
// beyond the operator API: a webhook endpoint by id, the resend of an
// event, and the timeline of one resource.

// GetWebhookEndpoint returns a webhook endpoint of any merchant (operator
// read).
func (s *Service) GetWebhookEndpoint(ctx context.Context, id string) (*WebhookEndpoint, error) {
	w, err := s.store.GetWebhookEndpoint(ctx, id)
	if errors.Is(err, ErrNotFound) {
		return nil, notFound("webhook_endpoint")
	}
	if err != nil {
		return nil, internalError(err)
	}
	return w, nil
}

// ResendEvent schedules one more delivery of an event to a webhook
// endpoint of the event's merchant and environment, through the webhook
// delivery job (with its retry schedule); the attempts it makes are
// numbered from 1 again. A resend already waiting is not doubled. The
// endpoint must be enabled: a disabled one is sent nothing. Audited as
// webhook_endpoint.resend_event.
func (s *Service) ResendEvent(ctx context.Context, actor, endpointID, eventID string) error {
	err := s.inTx(ctx, func(tx Tx) error {
		w, err := tx.GetWebhookEndpoint(ctx, endpointID)
		if errors.Is(err, ErrNotFound) {
			return notFound("webhook_endpoint")
		}
		if err != nil {
			return err
		}
		if w.Status != WebhookEnabled {
			return errorf(CodeInvalidState, "", "This webhook endpoint is disabled; enable it before resending.")
		}
		e, err := tx.GetEvent(ctx, w.Scope(), eventID)
		if errors.Is(err, ErrNotFound) {
			return notFound("event")
		}
		if err != nil {
			return err
		}
		payload, _ := json.Marshal(webhookJob{w.ID})
		if err := s.enqueue(ctx, tx, &Job{Kind: jobWebhookDeliver, Scope: e.Scope(), TargetID: e.ID, Payload: payload,
			RunAt: s.Now(), DedupKey: jobWebhookDeliver + ":" + w.ID + ":" + e.ID + ":resend"}); err != nil {
			return err
		}
		return s.audit(ctx, tx, &AuditEvent{Actor: actor, Action: "webhook_endpoint.resend_event", TargetType: "webhook_endpoint",
			TargetID: w.ID, MerchantID: w.MerchantID, Environment: w.Environment, Details: details("event", e.ID)})
	})
	if err != nil {
		return asServiceError(err)
	}
	return nil
}

// TimelineEntry is one step in the life of a resource: an event (a public
// state change) or an audit event (an operator action on it).
type TimelineEntry struct {
	At    time.Time
	Event *Event      // set for a state change
	Audit *AuditEvent // set for an operator action
}

// Timeline is the history of one resource, oldest first. Incomplete says
// that the scan stopped at its bound (timelineScan rows of each log) before
// reaching the resource's creation.
type Timeline struct {
	Entries    []TimelineEntry
	Events     []Event // the state changes alone, oldest first
	Incomplete bool
}

// timelineScan bounds how many rows of the event log and of the audit log
// one timeline reads.
const timelineScan = 1000

// timelineSlack widens the event search past UpdatedAt: an event is
// stamped a moment after the change it records.
const timelineSlack = time.Minute

// ResourceTimeline returns the events of r (a *PaymentIntent, *Checkout,
// *PayoutIntent or *Refund) and the audit events that target it, merged
// oldest first. The Stores have no index by object, so it reads the
// scope's events of r's type within r's life (CreatedAt to UpdatedAt), and
// the merchant's audit log newest first, each up to timelineScan rows.
func (s *Service) ResourceTimeline(ctx context.Context, r Resource) (*Timeline, error) {
	id, _ := r.key()
	scope := r.Scope()
	created, updated := r.lifetime()
	var types []string
	for _, t := range eventTypes {
		if strings.HasPrefix(t, r.Object()+".") {
			types = append(types, t)
		}
	}
	if len(types) == 0 {
		return nil, invalidRequest("kind", "kind must be payment_intent, checkout, payout_intent or refund.")
	}
	tl := &Timeline{}
	from, to := created, updated.Add(timelineSlack)
	incomplete, err := scanLog(func(after *Position) ([]Event, error) {
		return s.store.ListEvents(ctx, ListQuery[EventListParams]{Scope: scope,
			Filter: EventListParams{Types: types, CreatedAfter: &from, CreatedBefore: &to}, After: after, Limit: contract.MaxPageLimit})
	}, func(e *Event) Position { return Position{e.CreatedAt, e.ID} }, func(rows []Event) bool {
		for i := range rows {
			if rows[i].ObjectID == id {
				tl.Events = append(tl.Events, rows[i])
			}
		}
		return false
	})
	if err != nil {
		return nil, internalError(err)
	}
	tl.Incomplete = incomplete
	slices.Reverse(tl.Events)
	for i := range tl.Events {
		tl.Entries = append(tl.Entries, TimelineEntry{At: tl.Events[i].CreatedAt, Event: &tl.Events[i]})
	}
	incomplete, err = scanLog(func(after *Position) ([]AuditEvent, error) {
		return s.store.ListAuditEvents(ctx, ListQuery[AuditListParams]{Filter: AuditListParams{MerchantID: scope.MerchantID}, After: after, Limit: contract.MaxPageLimit})
	}, func(a *AuditEvent) Position { return Position{a.CreatedAt, a.ID} }, func(rows []AuditEvent) bool {
		for i := range rows {
			if rows[i].CreatedAt.Before(created) {
				return true
			}
			if rows[i].TargetID == id {
				tl.Entries = append(tl.Entries, TimelineEntry{At: rows[i].CreatedAt, Audit: &rows[i]})
			}
		}
		return false
	})
	if err != nil {
		return nil, internalError(err)
	}
	tl.Incomplete = tl.Incomplete || incomplete
	slices.SortStableFunc(tl.Entries, func(a, b TimelineEntry) int { return a.At.Compare(b.At) })
	return tl, nil
}

// scanLog reads a log newest first, 100 rows a page (list reads the page
// after a position), and hands each page to visit, until visit
// reports it is done, a page comes short, or timelineScan rows are read:
// then incomplete is true.
func scanLog[T any](list func(after *Position) ([]T, error), pos func(*T) Position, visit func([]T) (done bool)) (incomplete bool, err error) {
	var after *Position
	for read := 0; ; {
		rows, err := list(after)
		if err != nil {
			return false, err
		}
		read += len(rows)
		if visit(rows) || len(rows) < contract.MaxPageLimit {
			return false, nil
		}
		if read >= timelineScan {
			return true, nil
		}
		p := pos(&rows[len(rows)-1])
		after = &p
	}
}
