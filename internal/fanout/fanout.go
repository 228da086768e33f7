// Package fanout is the optional fast path of a Store that schedules an
// event's webhook deliveries in one write, without the Service reading
// the endpoints first (sqlstore's transactions take it). Without it, the
// Service reads the endpoints and enqueues each delivery through the Tx.
package fanout

import (
	"context"
	"time"
)

// Event is what scheduling needs of a paykit.Event.
type Event struct {
	ID          string
	Type        string
	MerchantID  string
	Environment string
	CreatedAt   time.Time
	TraceParent string // of the span that made the event: the deliveries' TraceParent
}

// Scheduler is implemented by a Tx that can schedule an event's webhook
// deliveries in one write.
type Scheduler interface {
	// ScheduleDeliveries enqueues, in the transaction, for every enabled
	// webhook endpoint of e's scope that enables e.Type, the job of kind
	// that delivers e to it: Scope e's, TargetID e.ID, Payload
	// {"endpoint_id":"<id>"}, DedupKey kind:<endpoint id>:<event id>,
	// Partition the endpoint's id, TraceParent e's, RunAt e.CreatedAt (or the end of the
	// endpoint's pause), CreatedAt now, status available. Its ids are baseID, a fresh id, followed by
	// "." and 1, 2, ... in the order of the endpoints' ids. A job whose
	// dedup key is pending already is not enqueued again.
	ScheduleDeliveries(ctx context.Context, e Event, kind, baseID string, now time.Time) error
}
