package paykit

import "time"

// Resource is a resource an event or a stored idempotency answer holds: a
// *PaymentIntent, *Checkout, *PayoutIntent, *Refund, *Dispute or
// *WebhookEndpoint.
// Only this package implements it. A Store keeps it as a snapshot (JSON
// with an "object" member and the resource type's json names).
type Resource interface {
	// Object names the resource type as the API does ("payment_intent").
	Object() string
	// Scope returns the resource's tenant.
	Scope() Scope
	// key returns the resource's id and version.
	key() (id string, version int64)
	// lifetime returns when the resource was created and last updated.
	lifetime() (created, updated time.Time)
	// eventType is the event the resource's state calls for; "" for none.
	eventType() string
	// eventData is the contract's projection of the resource as an
	// event's data.
	eventData() any
	// clone returns a shallow copy.
	clone() Resource
}

// Object names the type: "payment_intent".
func (p *PaymentIntent) Object() string { return "payment_intent" }

func (p *PaymentIntent) key() (string, int64) { return p.ID, p.Version }
func (p *PaymentIntent) eventType() string    { return paymentEventType(p) }
func (p *PaymentIntent) eventData() any       { return paymentIntentView(p) }
func (p *PaymentIntent) clone() Resource      { c := *p; return &c }

// Object names the type: "checkout".
func (c *Checkout) Object() string { return "checkout" }

func (c *Checkout) key() (string, int64) { return c.ID, c.Version }
func (c *Checkout) eventData() any       { return checkoutView(c) }
func (c *Checkout) clone() Resource      { v := *c; return &v }

// eventType is checkout.completed, .expired or .cancelled once the
// checkout has that status; an open checkout has no event.
func (c *Checkout) eventType() string {
	if c.Status == CheckoutOpen {
		return ""
	}
	return "checkout." + string(c.Status)
}

// Object names the type: "payout_intent".
func (p *PayoutIntent) Object() string { return "payout_intent" }

func (p *PayoutIntent) key() (string, int64) { return p.ID, p.Version }
func (p *PayoutIntent) eventType() string    { return payoutEventType(p) }
func (p *PayoutIntent) clone() Resource      { c := *p; return &c }

// eventData adds the merchant's cancellation reason to a terminal payout's
// projection.
func (p *PayoutIntent) eventData() any {
	if p.Status.Terminal() && p.CancelReason != "" {
		return payoutWithReasonJSON{payoutView(p), p.CancelReason}
	}
	return payoutView(p)
}

// Object names the type: "refund".
func (r *Refund) Object() string { return "refund" }

func (r *Refund) key() (string, int64) { return r.ID, r.Version }
func (r *Refund) eventType() string    { return "refund." + string(r.Status) }
func (r *Refund) eventData() any       { return refundView(r) }
func (r *Refund) clone() Resource      { c := *r; return &c }

// Object names the type: "dispute".
func (d *Dispute) Object() string { return "dispute" }

func (d *Dispute) key() (string, int64) { return d.ID, d.Version }
func (d *Dispute) eventData() any       { return disputeView(d) }
func (d *Dispute) clone() Resource      { c := *d; return &c }

// eventType is dispute.created while the dispute needs a response,
// dispute.updated under review, then dispute.won or dispute.lost.
func (d *Dispute) eventType() string {
	switch d.Status {
	case DisputeNeedsResponse:
		return EventDisputeCreated
	case DisputeUnderReview:
		return EventDisputeUpdated
	}
	return "dispute." + string(d.Status)
}

// Object names the type: "webhook_endpoint".
func (w *WebhookEndpoint) Object() string { return "webhook_endpoint" }

func (w *WebhookEndpoint) key() (string, int64) { return w.ID, w.Version }
func (w *WebhookEndpoint) clone() Resource      { c := *w; return &c }

// An endpoint is a stored answer only: no event carries one.
func (w *WebhookEndpoint) eventType() string { return "" }
func (w *WebhookEndpoint) eventData() any    { return nil }

func (p *PaymentIntent) lifetime() (time.Time, time.Time)   { return p.CreatedAt, p.UpdatedAt }
func (c *Checkout) lifetime() (time.Time, time.Time)        { return c.CreatedAt, c.UpdatedAt }
func (p *PayoutIntent) lifetime() (time.Time, time.Time)    { return p.CreatedAt, p.UpdatedAt }
func (r *Refund) lifetime() (time.Time, time.Time)          { return r.CreatedAt, r.UpdatedAt }
func (w *WebhookEndpoint) lifetime() (time.Time, time.Time) { return w.CreatedAt, w.UpdatedAt }
func (d *Dispute) lifetime() (time.Time, time.Time)         { return d.CreatedAt, d.UpdatedAt }
