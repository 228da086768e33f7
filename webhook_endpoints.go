package paykit

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/paykit/paykit/internal/contract"
	"github.com/paykit/paykit/internal/webhooks"
)

// AllEvents, as an endpoint's only enabled event type, enables every type.
const AllEvents = "*"

// The merchant API's webhook endpoints: a merchant manages the endpoints
// of its key's scope; operators still see and manage them all.

// CreateMerchantWebhookEndpointRequest is the body of
// POST /webhook_endpoints.
type CreateMerchantWebhookEndpointRequest struct {
	URL string `json:"url" validate:"required,max=2048"`
	// EnabledEvents: event types, or ["*"] (the default) for all.
	EnabledEvents []string `json:"enabled_events,omitempty"`
	Description   string   `json:"description,omitempty" validate:"max=512"`
}

// UpdateMerchantWebhookEndpointRequest is the body of
// POST /webhook_endpoints/{id}: nil fields stay as they are.
type UpdateMerchantWebhookEndpointRequest struct {
	URL           *string  `json:"url,omitempty" validate:"omitempty,min=1,max=2048"`
	EnabledEvents []string `json:"enabled_events,omitempty"`
	Description   *string  `json:"description,omitempty" validate:"omitempty,max=512"`
	// Disabled: true disables the endpoint, false enables it again.
	Disabled *bool `json:"disabled,omitempty"`
}

// checkEnabledEvents returns the enabled event types of a request: ["*"]
// when none are named; an unknown type is invalid_request.
func checkEnabledEvents(types []string) ([]string, error) {
	if types == nil {
		return []string{AllEvents}, nil
	}
	if len(types) == 0 {
		return nil, invalidRequest("enabled_events", "enabled_events must name at least one event type, or \"*\".")
	}
	out := make([]string, 0, len(types))
	for _, t := range types {
		if t != AllEvents && !slices.Contains(eventTypes, t) {
			return nil, invalidRequest("enabled_events", "enabled_events: %q is not an event type.", t)
		}
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	if slices.Contains(out, AllEvents) {
		return []string{AllEvents}, nil
	}
	return out, nil
}

// checkEndpointURL applies the URL rules of the endpoint's environment:
// live endpoints only at public https addresses, test ones also on
// loopback.
func checkEndpointURL(ctx context.Context, url string, env Environment) error {
	if err := webhooks.ValidateURLContext(ctx, url, env == Live, nil); err != nil {
		return invalidRequest("url", "url %s.", err.Error())
	}
	return nil
}

// CreateMerchantWebhookEndpoint registers an endpoint in p's scope under
// an Idempotency-Key and returns it with its signing secret, shown only
// here and on rotation. A replay answers the same endpoint and secret.
func (s *Service) CreateMerchantWebhookEndpoint(ctx context.Context, p Principal, idempotencyKey string, req CreateMerchantWebhookEndpointRequest) (*NewWebhookSecret, Answer, error) {
	op, err := newOperation(p.Scope, idempotencyKey, "webhook_endpoint.create", "", req)
	if err != nil {
		return nil, Answer{}, err
	}
	// As for payments: a known key skips validation, so a changed body
	// under a used key is a conflict, not a validation error.
	events, invalid := s.validateWebhookEndpoint(ctx, p, &req)
	if invalid != nil {
		if _, err := s.store.GetIdempotencyRecord(ctx, p.Scope, idempotencyKey); errors.Is(err, ErrNotFound) {
			return nil, Answer{}, invalid
		} else if err != nil {
			return nil, Answer{}, internalError(err)
		}
	}
	w, ans, err := idempotent(ctx, s, op, func(tx Tx, now time.Time) (AnswerKind, *WebhookEndpoint, error) {
		if invalid != nil { // the record we saw was purged meanwhile
			return "", nil, invalid
		}
		w := &WebhookEndpoint{ID: s.newID("we"), MerchantID: p.MerchantID, Environment: p.Environment, URL: req.URL,
			Status: WebhookEnabled, EnabledEvents: events, Description: req.Description, CreatedAt: now, UpdatedAt: now}
		if _, err := s.addWebhookSecret(w, now); err != nil {
			return "", nil, err
		}
		if err := tx.CreateWebhookEndpoint(ctx, w); err != nil {
			return "", nil, err
		}
		return AnswerCreated, w, s.audit(ctx, tx, &AuditEvent{Actor: merchantActor(p), Action: "webhook_endpoint.create",
			TargetType: "webhook_endpoint", TargetID: w.ID, MerchantID: w.MerchantID, Environment: w.Environment, Details: details("url", w.URL)})
	})
	if err != nil {
		return nil, Answer{}, err
	}
	// The secret is stored sealed only: the answer (and its replay) opens
	// the newest one of the endpoint as it was created.
	secret, err := s.accountKeys.Open(w.Secrets[0].KeyID, w.Secrets[0].Sealed, webhookPurpose+"\n"+w.ID)
	if err != nil {
		return nil, Answer{}, internalError(err)
	}
	return &NewWebhookSecret{Endpoint: w, Secret: secret}, ans, nil
}

// validateWebhookEndpoint checks a create request: its fields, its
// enabled events and its URL for p's environment.
func (s *Service) validateWebhookEndpoint(ctx context.Context, p Principal, req *CreateMerchantWebhookEndpointRequest) ([]string, error) {
	if err := validateRequest(req); err != nil {
		return nil, err
	}
	events, err := checkEnabledEvents(req.EnabledEvents)
	if err != nil {
		return nil, err
	}
	if err := checkEndpointURL(ctx, req.URL, p.Environment); err != nil {
		return nil, err
	}
	return events, nil
}

// merchantActor names an API key as the actor of an audit event.
func merchantActor(p Principal) string { return "api_key:" + p.KeyID }

// GetMerchantWebhookEndpoint returns an endpoint of p's scope;
// another scope's or a deleted one is not_found.
func (s *Service) GetMerchantWebhookEndpoint(ctx context.Context, p Principal, id string) (*WebhookEndpoint, error) {
	w, err := s.store.GetWebhookEndpoint(ctx, id)
	if errors.Is(err, ErrNotFound) || err == nil && (w.Scope() != p.Scope || w.DeletedAt != nil) {
		return nil, notFound("webhook_endpoint")
	}
	if err != nil {
		return nil, internalError(err)
	}
	return w, nil
}

// ListMerchantWebhookEndpoints returns the endpoints of p's scope, newest
// first, a page at a time.
func (s *Service) ListMerchantWebhookEndpoints(ctx context.Context, p Principal, params PageParams) (*Page[WebhookEndpoint], error) {
	limit, after, err := s.pageQuery("webhook_endpoint", params)
	if err != nil {
		return nil, err
	}
	all, err := s.store.ListWebhookEndpoints(ctx, p.MerchantID)
	if err != nil {
		return nil, internalError(err)
	}
	var rows []WebhookEndpoint
	for _, w := range all { // newest first
		if w.Environment != p.Environment || w.DeletedAt != nil || after != nil && !positionBefore(w.CreatedAt, w.ID, *after) {
			continue
		}
		if rows = append(rows, w); len(rows) > limit {
			break
		}
	}
	return makePage(s, "webhook_endpoint", rows, limit, func(w *WebhookEndpoint) Position { return Position{w.CreatedAt, w.ID} }), nil
}

// positionBefore reports whether (at, id) comes after pos in a newest-first
// list.
func positionBefore(at time.Time, id string, pos Position) bool {
	at = at.Truncate(time.Millisecond)
	return at.Before(pos.CreatedAt) || at.Equal(pos.CreatedAt) && id < pos.ID
}

// UpdateMerchantWebhookEndpoint changes an endpoint of p's scope: its URL
// (under the same rules as on create), enabled events, description, or
// whether it is disabled. Enabling it again clears why it was disabled.
func (s *Service) UpdateMerchantWebhookEndpoint(ctx context.Context, p Principal, id string, req UpdateMerchantWebhookEndpointRequest) (*WebhookEndpoint, error) {
	if err := validateRequest(&req); err != nil {
		return nil, err
	}
	var events []string
	if req.EnabledEvents != nil {
		var err error
		if events, err = checkEnabledEvents(req.EnabledEvents); err != nil {
			return nil, err
		}
	}
	if req.URL != nil {
		if err := checkEndpointURL(ctx, *req.URL, p.Environment); err != nil {
			return nil, err
		}
	}
	var out *WebhookEndpoint
	err := s.updateMerchantEndpoint(ctx, p, id, "webhook_endpoint.update", func(w *WebhookEndpoint, _ time.Time) error {
		if req.URL != nil {
			w.URL = *req.URL
		}
		if events != nil {
			w.EnabledEvents = events
		}
		if req.Description != nil {
			w.Description = *req.Description
		}
		switch {
		case req.Disabled == nil:
		case *req.Disabled:
			w.Status, w.DisabledReason = WebhookDisabled, DisabledByMerchant
		default:
			w.Status, w.DisabledReason = WebhookEnabled, ""
		}
		out = w
		return nil
	})
	return out, err
}

// DeleteMerchantWebhookEndpoint deletes an endpoint of p's scope: it gets
// no further deliveries, pending ones included, and the merchant API no
// longer shows it. Operators still see it, disabled as DisabledDeleted.
func (s *Service) DeleteMerchantWebhookEndpoint(ctx context.Context, p Principal, id string) (*WebhookEndpoint, error) {
	var out *WebhookEndpoint
	err := s.updateMerchantEndpoint(ctx, p, id, "webhook_endpoint.delete", func(w *WebhookEndpoint, now time.Time) error {
		w.Status, w.DisabledReason, w.DeletedAt = WebhookDisabled, DisabledDeleted, &now
		out = w
		return nil
	})
	return out, err
}

// RotateMerchantWebhookSecret gives an endpoint of p's scope a new secret;
// for 24 hours the previous one keeps signing, so every
// delivery meanwhile carries both signatures.
func (s *Service) RotateMerchantWebhookSecret(ctx context.Context, p Principal, id string) (*NewWebhookSecret, error) {
	return s.rotateWebhookSecret(ctx, merchantActor(p), id, contract.DefaultSecretOverlap, &p.Scope)
}

// updateMerchantEndpoint is updateWebhookEndpoint for an endpoint of p's
// scope that is not deleted.
func (s *Service) updateMerchantEndpoint(ctx context.Context, p Principal, id, action string, change func(w *WebhookEndpoint, now time.Time) error) error {
	return s.updateWebhookEndpoint(ctx, merchantActor(p), id, action, func(_ Tx, w *WebhookEndpoint, now time.Time) error {
		if w.Scope() != p.Scope || w.DeletedAt != nil {
			return ErrNotFound
		}
		return change(w, now)
	})
}
