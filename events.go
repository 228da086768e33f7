package paykit

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"
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
)

// EventTypes lists every event type.
var EventTypes = []string{
	EventPaymentRequiresAction, EventPaymentProcessing, EventPaymentSucceeded, EventPaymentFailed,
	EventPaymentCancelled, EventPaymentExpired,
	EventCheckoutCompleted, EventCheckoutExpired, EventCheckoutCancelled,
	EventPayoutRequiresApproval, EventPayoutProcessing, EventPayoutSucceeded, EventPayoutFailed,
	EventPayoutCancelled, EventPayoutExpired, EventPayoutReturned,
	EventRefundPending, EventRefundSucceeded, EventRefundFailed,
}

// Event records a public state change. It holds the resource as GET showed
// it right after the change (one of PaymentIntent, Checkout, PayoutIntent),
// so its status is the status the event names.
type Event struct {
	ID            string
	MerchantID    string
	Environment   Environment
	Type          string
	ObjectID      string // the id of the resource
	PaymentIntent *PaymentIntent
	Checkout      *Checkout
	PayoutIntent  *PayoutIntent
	Refund        *Refund
	// LegacyData is the JSON an earlier version of paykit stored instead of
	// the resource; it is rendered as it is.
	LegacyData []byte
	CreatedAt  time.Time
}

// Scope returns the tenant of the event.
func (e *Event) Scope() Scope { return Scope{e.MerchantID, e.Environment} }

// EventQuery selects events of one scope, newest first.
type EventQuery struct {
	Scope         Scope
	Types         []string // empty: every type
	CreatedAfter  *time.Time
	CreatedBefore *time.Time
	After         *Position
	Limit         int
}

// EventStore persists the append-only event log.
type EventStore interface {
	// CreateEvent appends e; ErrAlreadyExists when the id is taken. e and
	// its resource are the caller's again once it returns: a Store keeps
	// a copy, never them.
	CreateEvent(ctx context.Context, e *Event) error
	// GetEvent returns the event of that scope or ErrNotFound.
	GetEvent(ctx context.Context, scope Scope, id string) (*Event, error)
	// ListEvents returns at most q.Limit events, newest first.
	ListEvents(ctx context.Context, q EventQuery) ([]Event, error)
}

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
		return nil, Internal(err)
	}
	return e, nil
}

// ListEvents returns the caller's events, newest first.
func (s *Service) ListEvents(ctx context.Context, p Principal, params EventListParams) (*Page[Event], error) {
	for _, t := range params.Types {
		if !slices.Contains(EventTypes, t) {
			return nil, InvalidRequest("type", "type must be one or more of %s.", strings.Join(EventTypes, ", "))
		}
	}
	limit, after, err := s.pageQuery("event", params.PageParams)
	if err != nil {
		return nil, err
	}
	rows, err := s.store.ListEvents(ctx, EventQuery{
		Scope: p.Scope, Types: params.Types, CreatedAfter: params.CreatedAfter, CreatedBefore: params.CreatedBefore,
		After: after, Limit: limit + 1,
	})
	if err != nil {
		return nil, Internal(err)
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
// whenever a write changes the public status of a payment intent, checkout
// or payout intent, in the same transaction. Whatever path makes the change
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

// seenStates remembers, per row read or written in one transaction, the
// version it had and what its events depend on (its event type or status),
// so that an update of that version knows the state before it without
// reading the row again. A versioned update succeeds only over the version
// it names, so a state remembered for that version is the state replaced.
// A transaction touches a few rows: they are kept in a small array.
type seenStates struct {
	rows []seenRow
	arr  [4]seenRow
}

type seenRow struct {
	kind, id string
	seenState
}

type seenState struct {
	version int64
	state   string
}

func (t *eventTx) remember(kind, id string, version int64, state string) {
	for i := range t.seen.rows {
		if r := &t.seen.rows[i]; r.kind == kind && r.id == id {
			r.seenState = seenState{version, state}
			return
		}
	}
	if t.seen.rows == nil {
		t.seen.rows = t.seen.arr[:0]
	}
	t.seen.rows = append(t.seen.rows, seenRow{kind, id, seenState{version, state}})
}

// before returns the remembered state of kind id at version, if any.
func (t *eventTx) before(kind, id string, version int64) (string, bool) {
	for _, r := range t.seen.rows {
		if r.kind == kind && r.id == id {
			if r.version != version {
				return "", false
			}
			return r.state, true
		}
	}
	return "", false
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

// CreatePaymentIntent implements Tx and emits the new intent's event.
func (t *eventTx) CreatePaymentIntent(ctx context.Context, pi *PaymentIntent) error {
	if err := t.Tx.CreatePaymentIntent(ctx, pi); err != nil {
		return err
	}
	return t.paymentChanged(ctx, "", pi)
}

// UpdatePaymentIntent implements Tx and emits an event when the public
// state changes.
func (t *eventTx) UpdatePaymentIntent(ctx context.Context, pi *PaymentIntent) error {
	before, ok := t.before("pi", pi.ID, pi.Version)
	if !ok {
		cur, err := t.Tx.GetPaymentIntent(ctx, pi.Scope(), pi.ID)
		if err != nil {
			return err
		}
		before = paymentEventType(cur)
	}
	if err := t.Tx.UpdatePaymentIntent(ctx, pi); err != nil {
		return err
	}
	t.remember("pi", pi.ID, pi.Version, paymentEventType(pi))
	return t.paymentChanged(ctx, before, pi)
}

// rememberPayment tells tx, when it writes events, the state of pi at its
// version, known without reading it: a versioned update of pi then emits
// what the change calls for without reading the row first.
func rememberPayment(tx Tx, pi *PaymentIntent) {
	if t, ok := tx.(*eventTx); ok {
		t.remember("pi", pi.ID, pi.Version, paymentEventType(pi))
	}
}

// GetPaymentIntent implements Tx and remembers the intent's state.
func (t *eventTx) GetPaymentIntent(ctx context.Context, scope Scope, id string) (*PaymentIntent, error) {
	pi, err := t.Tx.GetPaymentIntent(ctx, scope, id)
	if err == nil {
		t.remember("pi", pi.ID, pi.Version, paymentEventType(pi))
	}
	return pi, err
}

// FindPaymentIntent implements Tx and remembers the intent's state.
func (t *eventTx) FindPaymentIntent(ctx context.Context, id string) (*PaymentIntent, error) {
	pi, err := t.Tx.FindPaymentIntent(ctx, id)
	if err == nil {
		t.remember("pi", pi.ID, pi.Version, paymentEventType(pi))
	}
	return pi, err
}

func (t *eventTx) paymentChanged(ctx context.Context, before string, pi *PaymentIntent) error {
	typ := paymentEventType(pi)
	if typ == "" || typ == before {
		return nil
	}
	return t.s.emit(ctx, t.Tx, pi.Scope(), typ, pi.ID, &Event{PaymentIntent: pi}) // the Store copies it
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

// CreatePayoutIntent implements Tx and emits the new payout's event.
func (t *eventTx) CreatePayoutIntent(ctx context.Context, po *PayoutIntent) error {
	if err := t.Tx.CreatePayoutIntent(ctx, po); err != nil {
		return err
	}
	t.remember("po", po.ID, po.Version, payoutEventType(po))
	return t.payoutChanged(ctx, "", po)
}

// UpdatePayoutIntent implements Tx and emits an event when the public
// state changes.
func (t *eventTx) UpdatePayoutIntent(ctx context.Context, po *PayoutIntent) error {
	before, ok := t.before("po", po.ID, po.Version)
	if !ok {
		cur, err := t.Tx.GetPayoutIntent(ctx, po.Scope(), po.ID)
		if err != nil {
			return err
		}
		before = payoutEventType(cur)
	}
	if err := t.Tx.UpdatePayoutIntent(ctx, po); err != nil {
		return err
	}
	t.remember("po", po.ID, po.Version, payoutEventType(po))
	return t.payoutChanged(ctx, before, po)
}

// rememberPayout tells tx, when it writes events, the state of po at its
// version, known without reading it: a versioned update of po then emits
// what the change calls for without reading the row first.
func rememberPayout(tx Tx, po *PayoutIntent) {
	if t, ok := tx.(*eventTx); ok {
		t.remember("po", po.ID, po.Version, payoutEventType(po))
	}
}

// GetPayoutIntent implements Tx and remembers the payout's state.
func (t *eventTx) GetPayoutIntent(ctx context.Context, scope Scope, id string) (*PayoutIntent, error) {
	po, err := t.Tx.GetPayoutIntent(ctx, scope, id)
	if err == nil {
		t.remember("po", po.ID, po.Version, payoutEventType(po))
	}
	return po, err
}

// FindPayoutIntent implements Tx and remembers the payout's state.
func (t *eventTx) FindPayoutIntent(ctx context.Context, id string) (*PayoutIntent, error) {
	po, err := t.Tx.FindPayoutIntent(ctx, id)
	if err == nil {
		t.remember("po", po.ID, po.Version, payoutEventType(po))
	}
	return po, err
}

func (t *eventTx) payoutChanged(ctx context.Context, before string, po *PayoutIntent) error {
	typ := payoutEventType(po)
	if typ == before {
		return nil
	}
	return t.s.emit(ctx, t.Tx, po.Scope(), typ, po.ID, &Event{PayoutIntent: po}) // the Store copies it
}

// UpdateCheckout implements Tx and emits checkout.completed, .expired or
// .cancelled when a checkout reaches that status, with the projection GET
// shows (its linked intent's state included).
func (t *eventTx) UpdateCheckout(ctx context.Context, c *Checkout) error {
	before, ok := t.before("co", c.ID, c.Version)
	if !ok {
		cur, err := t.Tx.GetCheckout(ctx, c.Scope(), c.ID)
		if err != nil {
			return err
		}
		before = string(cur.Status)
	}
	if err := t.Tx.UpdateCheckout(ctx, c); err != nil {
		return err
	}
	t.remember("co", c.ID, c.Version, string(c.Status))
	if string(c.Status) == before || c.Status == CheckoutOpen {
		return nil
	}
	pi, err := t.Tx.GetPaymentIntent(ctx, c.Scope(), c.PaymentIntentID)
	if err != nil {
		return err
	}
	view := *c
	return t.s.emit(ctx, t.Tx, c.Scope(), "checkout."+string(c.Status), c.ID, &Event{Checkout: t.s.project(&view, pi)})
}

// GetCheckout implements Tx and remembers the checkout's status.
func (t *eventTx) GetCheckout(ctx context.Context, scope Scope, id string) (*Checkout, error) {
	c, err := t.Tx.GetCheckout(ctx, scope, id)
	if err == nil {
		t.remember("co", c.ID, c.Version, string(c.Status))
	}
	return c, err
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
	b = appendBase32(b, base32hex, uint64(ms), 9)
	b = appendBase32(b, base32hex, seq, 8)
	return string(appendBase32(b, base32hex, rand.Uint64N(1<<40), 8))
}

// appendBase32 appends the low 5*n bits of v as n digits of alphabet
// (32 characters), most significant first.
func appendBase32(b []byte, alphabet string, v uint64, n int) []byte {
	for i := n - 1; i >= 0; i-- {
		b = append(b, alphabet[(v>>(5*uint(i)))&31])
	}
	return b
}
