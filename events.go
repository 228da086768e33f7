package paykit

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/paykit/paykit/internal/newid"
)

// Event types: one for every public state change of a payment intent,
// checkout, payout intent or refund.
const (
	EventPaymentRequiresAction = "payment_intent.requires_action"
	EventPaymentProcessing     = "payment_intent.processing"
	EventPaymentSucceeded      = "payment_intent.succeeded"
	EventPaymentFailed         = "payment_intent.failed"
	EventPaymentCancelled      = "payment_intent.cancelled"
	EventPaymentExpired        = "payment_intent.expired"

	EventCheckoutCompleted = "checkout.completed"
	EventCheckoutExpired   = "checkout.expired"
	EventCheckoutCancelled = "checkout.cancelled"

	EventPayoutRequiresApproval = "payout_intent.requires_approval"
	EventPayoutProcessing       = "payout_intent.processing"
	EventPayoutSucceeded        = "payout_intent.succeeded"
	EventPayoutFailed           = "payout_intent.failed"
	EventPayoutCancelled        = "payout_intent.cancelled"
	EventPayoutExpired          = "payout_intent.expired"
	EventPayoutReturned         = "payout_intent.returned"

	EventRefundPending   = "refund.pending"
	EventRefundSucceeded = "refund.succeeded"
	EventRefundFailed    = "refund.failed"

	EventDisputeCreated = "dispute.created"
	EventDisputeUpdated = "dispute.updated"
	EventDisputeWon     = "dispute.won"
	EventDisputeLost    = "dispute.lost"
)

// eventTypes lists every event type.
var eventTypes = []string{
	EventPaymentRequiresAction, EventPaymentProcessing, EventPaymentSucceeded, EventPaymentFailed,
	EventPaymentCancelled, EventPaymentExpired,
	EventCheckoutCompleted, EventCheckoutExpired, EventCheckoutCancelled,
	EventPayoutRequiresApproval, EventPayoutProcessing, EventPayoutSucceeded, EventPayoutFailed,
	EventPayoutCancelled, EventPayoutExpired, EventPayoutReturned,
	EventRefundPending, EventRefundSucceeded, EventRefundFailed,
	EventDisputeCreated, EventDisputeUpdated, EventDisputeWon, EventDisputeLost,
}

// Event records a public state change. It holds the resource as GET showed
// it right after the change, so its status is the status the event names.
type Event struct {
	ID          string
	MerchantID  string
	Environment Environment
	Type        string
	ObjectID    string   // the id of the resource
	Resource    Resource // a *PaymentIntent, *Checkout, *PayoutIntent, *Refund or *Dispute
	CreatedAt   time.Time
}

// Scope returns the tenant of the event.
func (e *Event) Scope() Scope { return Scope{e.MerchantID, e.Environment} }

// EventListParams are the filters of GET /events.
type EventListParams struct {
	PageParams
	Types         []string
	CreatedAfter  *time.Time // inclusive
	CreatedBefore *time.Time // exclusive
}

// GetEvent returns an event of the caller's scope.
func (s *Service) GetEvent(ctx context.Context, p Principal, id string) (*Event, error) {
	e, err := s.store.GetEvent(ctx, p.Scope, id)
	if errors.Is(err, ErrNotFound) {
		return nil, notFound("event")
	}
	if err != nil {
		return nil, internalError(err)
	}
	return e, nil
}

// ListEvents returns the caller's events, newest first.
func (s *Service) ListEvents(ctx context.Context, p Principal, params EventListParams) (*Page[Event], error) {
	for _, t := range params.Types {
		if !slices.Contains(eventTypes, t) {
			return nil, invalidRequest("type", "type must be one or more of %s.", strings.Join(eventTypes, ", "))
		}
	}
	limit, after, err := s.pageQuery("event", params.PageParams)
	if err != nil {
		return nil, err
	}
	rows, err := s.store.ListEvents(ctx, ListQuery[EventListParams]{Scope: p.Scope, Filter: params, After: after, Limit: limit + 1})
	if err != nil {
		return nil, internalError(err)
	}
	return makePage(s, "event", rows, limit, func(e *Event) Position { return Position{e.CreatedAt, e.ID} }), nil
}

// emit writes an event of typ about a resource in tx and schedules its
// delivery to every enabled webhook endpoint of the scope. e carries the
// resource; emit fills in the rest.
func (s *Service) emit(ctx context.Context, tx Tx, scope Scope, typ, objectID string, e *Event) error {
	now := s.Now()
	e.ID, e.MerchantID, e.Environment, e.Type, e.ObjectID, e.CreatedAt = s.eventIDs.next(now), scope.MerchantID, scope.Environment, typ, objectID, now
	if err := tx.CreateEvent(ctx, e); err != nil {
		return err
	}
	return s.fanOut(ctx, tx, e)
}

// eventTx is the Tx the Service's transactions run on: it writes an event
// whenever a write changes the public state of a resource (Resource's
// eventType), in the same transaction. Whatever path makes the change
// (request, job, callback), the event follows from it, once.
type eventTx struct {
	Tx
	s    *Service
	seen seenStates
}

// newEventTx wraps tx for one transaction.
func newEventTx(tx Tx, s *Service) *eventTx {
	return &eventTx{Tx: tx, s: s}
}

// seenStates remembers, per resource read or written in one transaction,
// the version it had and the event its state called for, so that an
// update of that version knows the state before it without reading the
// row again. A versioned update succeeds only over the version it names,
// so a state remembered for that version is the state replaced. A
// transaction touches a few rows: they are kept in a small array.
type seenStates struct {
	rows []seenRow
	arr  [4]seenRow
}

type seenRow struct {
	object, id string
	version    int64
	eventType  string
}

// remember records the state of r at its version.
func (t *eventTx) remember(r Resource) {
	id, version := r.key()
	object, typ := r.Object(), r.eventType()
	for i := range t.seen.rows {
		if s := &t.seen.rows[i]; s.object == object && s.id == id {
			s.version, s.eventType = version, typ
			return
		}
	}
	if t.seen.rows == nil {
		t.seen.rows = t.seen.arr[:0]
	}
	t.seen.rows = append(t.seen.rows, seenRow{object, id, version, typ})
}

// before returns the remembered event type of r at its version, if any.
func (t *eventTx) before(r Resource) (string, bool) {
	id, version := r.key()
	object := r.Object()
	for _, s := range t.seen.rows {
		if s.object == object && s.id == id {
			return s.eventType, s.version == version
		}
	}
	return "", false
}

// read remembers the state of r, read in t, unless err.
func (t *eventTx) read(r Resource, err error) error {
	if err == nil {
		t.remember(r)
	}
	return err
}

// remember tells tx, when it writes events, the state of r at its version,
// known without reading it: a versioned update of r then emits what the
// change calls for without reading the row first.
func remember(tx Tx, r Resource) {
	if t, ok := tx.(*eventTx); ok {
		t.remember(r)
	}
}

// created writes r with create and emits the event its state calls for.
func created[R Resource](ctx context.Context, t *eventTx, r R, create func(context.Context, R) error) error {
	if err := create(ctx, r); err != nil {
		return err
	}
	t.remember(r)
	return t.changed(ctx, "", r)
}

// updated writes r with update and emits an event when the event its state
// calls for changes; get reads the state replaced when t does not know it.
func updated[R Resource](ctx context.Context, t *eventTx, r R, get func(context.Context, Scope, string) (R, error), update func(context.Context, R) error) error {
	before, ok := t.before(r)
	if !ok {
		id, _ := r.key()
		cur, err := get(ctx, r.Scope(), id)
		if err != nil {
			return err
		}
		before = cur.eventType()
	}
	if err := update(ctx, r); err != nil {
		return err
	}
	t.remember(r)
	return t.changed(ctx, before, r)
}

// changed emits the event r's state calls for unless it is the one before.
// The event holds r (the Store copies it), or, for a checkout, its
// projection with its linked intent's state.
func (t *eventTx) changed(ctx context.Context, before string, r Resource) error {
	typ := r.eventType()
	if typ == "" || typ == before {
		return nil
	}
	data := r
	if c, ok := r.(*Checkout); ok {
		pi, err := t.Tx.GetPaymentIntent(ctx, c.Scope(), c.PaymentIntentID)
		if err != nil {
			return err
		}
		view := *c
		data = t.s.project(&view, pi)
	}
	id, _ := r.key()
	return t.s.emit(ctx, t.Tx, r.Scope(), typ, id, &Event{Resource: data})
}

// paymentEventType is the event a payment intent's state calls for; "" for
// none. An intent whose Provider attempt is being created shows processing
// only for the length of the create request, so it is not an event.
func paymentEventType(pi *PaymentIntent) string {
	if pi == nil || pi.Status == PaymentRequiresPaymentMethod || pi.Attempt == AttemptCreating {
		return ""
	}
	switch pi.Status { // the constants, without building the string
	case PaymentRequiresAction:
		return EventPaymentRequiresAction
	case PaymentProcessing:
		return EventPaymentProcessing
	case PaymentSucceeded:
		return EventPaymentSucceeded
	case PaymentFailed:
		return EventPaymentFailed
	case PaymentCancelled:
		return EventPaymentCancelled
	case PaymentExpired:
		return EventPaymentExpired
	}
	return "payment_intent." + string(pi.Status)
}

// payoutEventType is the event a payout's state calls for.
func payoutEventType(po *PayoutIntent) string {
	if po == nil {
		return ""
	}
	if po.Status == PayoutFailed && po.FailureCode == FailureFundsReturned {
		return EventPayoutReturned
	}
	return "payout_intent." + string(po.Status)
}

// The Tx methods that write or read a resource with events: each is
// created, updated or read.

// CreatePaymentIntent implements Tx.
func (t *eventTx) CreatePaymentIntent(ctx context.Context, pi *PaymentIntent) error {
	return created(ctx, t, pi, t.Tx.CreatePaymentIntent)
}

// UpdatePaymentIntent implements Tx.
func (t *eventTx) UpdatePaymentIntent(ctx context.Context, pi *PaymentIntent) error {
	return updated(ctx, t, pi, t.Tx.GetPaymentIntent, t.Tx.UpdatePaymentIntent)
}

// GetPaymentIntent implements Tx.
func (t *eventTx) GetPaymentIntent(ctx context.Context, scope Scope, id string) (*PaymentIntent, error) {
	pi, err := t.Tx.GetPaymentIntent(ctx, scope, id)
	return pi, t.read(pi, err)
}

// FindPaymentIntent implements Tx.
func (t *eventTx) FindPaymentIntent(ctx context.Context, id string) (*PaymentIntent, error) {
	pi, err := t.Tx.FindPaymentIntent(ctx, id)
	return pi, t.read(pi, err)
}

// CreatePayoutIntent implements Tx.
func (t *eventTx) CreatePayoutIntent(ctx context.Context, po *PayoutIntent) error {
	return created(ctx, t, po, t.Tx.CreatePayoutIntent)
}

// UpdatePayoutIntent implements Tx.
func (t *eventTx) UpdatePayoutIntent(ctx context.Context, po *PayoutIntent) error {
	return updated(ctx, t, po, t.Tx.GetPayoutIntent, t.Tx.UpdatePayoutIntent)
}

// GetPayoutIntent implements Tx.
func (t *eventTx) GetPayoutIntent(ctx context.Context, scope Scope, id string) (*PayoutIntent, error) {
	po, err := t.Tx.GetPayoutIntent(ctx, scope, id)
	return po, t.read(po, err)
}

// FindPayoutIntent implements Tx.
func (t *eventTx) FindPayoutIntent(ctx context.Context, id string) (*PayoutIntent, error) {
	po, err := t.Tx.FindPayoutIntent(ctx, id)
	return po, t.read(po, err)
}

// UpdateCheckout implements Tx.
func (t *eventTx) UpdateCheckout(ctx context.Context, c *Checkout) error {
	return updated(ctx, t, c, t.Tx.GetCheckout, t.Tx.UpdateCheckout)
}

// GetCheckout implements Tx.
func (t *eventTx) GetCheckout(ctx context.Context, scope Scope, id string) (*Checkout, error) {
	c, err := t.Tx.GetCheckout(ctx, scope, id)
	return c, t.read(c, err)
}

// CreateRefund implements Tx.
func (t *eventTx) CreateRefund(ctx context.Context, re *Refund) error {
	return created(ctx, t, re, t.Tx.CreateRefund)
}

// UpdateRefund implements Tx.
func (t *eventTx) UpdateRefund(ctx context.Context, re *Refund) error {
	return updated(ctx, t, re, t.Tx.GetRefund, t.Tx.UpdateRefund)
}

// CreateDispute implements Tx.
func (t *eventTx) CreateDispute(ctx context.Context, d *Dispute) error {
	return created(ctx, t, d, t.Tx.CreateDispute)
}

// UpdateDispute implements Tx.
func (t *eventTx) UpdateDispute(ctx context.Context, d *Dispute) error {
	return updated(ctx, t, d, t.Tx.GetDispute, t.Tx.UpdateDispute)
}

// GetDispute implements Tx.
func (t *eventTx) GetDispute(ctx context.Context, scope Scope, id string) (*Dispute, error) {
	d, err := t.Tx.GetDispute(ctx, scope, id)
	return d, t.read(d, err)
}

// FindDisputeByProviderRef implements Tx.
func (t *eventTx) FindDisputeByProviderRef(ctx context.Context, provider, ref string) (*Dispute, error) {
	d, err := t.Tx.FindDisputeByProviderRef(ctx, provider, ref)
	return d, t.read(d, err)
}

// GetRefund implements Tx.
func (t *eventTx) GetRefund(ctx context.Context, scope Scope, id string) (*Refund, error) {
	re, err := t.Tx.GetRefund(ctx, scope, id)
	return re, t.read(re, err)
}

// eventIDGen makes event ids that sort in the order this process made
// them: "evt_" + the creation millisecond + a counter that only grows
// within a millisecond + randomness, each in fixed-width base32hex (whose
// byte order is numeric order). Lists order events by (created_at, id), so
// the events of one millisecond keep their order too.
type eventIDGen struct {
	mu     sync.Mutex
	lastMS int64
	seq    uint64
}

const base32hex = "0123456789abcdefghijklmnopqrstuv"

func (g *eventIDGen) next(now time.Time) string {
	ms := now.UnixMilli()
	g.mu.Lock()
	if ms > g.lastMS {
		g.lastMS, g.seq = ms, rand.Uint64N(1<<39) // room to count up
	} else {
		ms = g.lastMS // the clock went back: keep the order
		g.seq++
	}
	seq := g.seq
	g.mu.Unlock()
	b := make([]byte, 0, 4+9+8+8)
	b = append(b, "evt_"...)
	b = newid.AppendBase32(b, base32hex, uint64(ms), 9)
	b = newid.AppendBase32(b, base32hex, seq, 8)
	return string(newid.AppendBase32(b, base32hex, rand.Uint64N(1<<40), 8))
}
