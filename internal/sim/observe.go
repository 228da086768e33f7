package sim

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/internal/webhooks/send"
)

// observations is what the simulation saw from outside paykit: what it
// asked for, what paykit answered, what the merchants' endpoints
// received. The checks compare paykit's records with it.
type observations struct {
	mu sync.Mutex
	// answers are the first answer the PSP gave about each attempt, by
	// family and key: an inquiry meeting FaultStale gets it back.
	answers map[string]paykit.Result

	merchants []*simMerchant
	payments  []*simResource // payment intents, created directly or through checkouts
	checkouts []*simResource
	payouts   []*simResource
	refunds   []*simResource
	disputes  []*simResource
	endpoints []*simEndpoint

	// requests are the idempotent requests made, in plan order, for
	// retries.
	requests []*simRequest
	idem     map[string]*idemRecord // by scope and key
	// status is each resource's status as last checked.
	status map[string]string
	// unfinished are the payouts whose return (a test helper) failed,
	// which the merchant tries again once the faults stop.
	unfinished []*simResource
}

func newObservations() *observations {
	return &observations{answers: map[string]paykit.Result{}, idem: map[string]*idemRecord{}, status: map[string]string{}}
}

// family is the attempt family of a call: payment, payout or refund.
func family(k callKind) string {
	switch k {
	case callCreatePayment, callInquirePayment, callCancelPayment:
		return "payment"
	case callCreatePayout, callInquirePayout, callCancelPayout:
		return "payout"
	case callCreateRefund, callInquireRefund:
		return "refund"
	}
	return "other"
}

func (o *observations) recordAnswer(k callKind, key string, r paykit.Result) {
	o.mu.Lock()
	defer o.mu.Unlock()
	id := family(k) + " " + key
	if _, ok := o.answers[id]; !ok && !r.Outcome.Uncertain() {
		o.answers[id] = r
	}
}

func (o *observations) hasAnswer(k callKind, key string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	_, ok := o.answers[family(k)+" "+key]
	return ok
}

func (o *observations) answer(k callKind, key string) paykit.Result {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.answers[family(k)+" "+key]
}

// simMerchant is a merchant the simulation made, with its test-mode
// principal.
type simMerchant struct {
	ID        string
	Principal paykit.Principal
}

// simResource is a resource the simulation made (or, for disputes and
// checkout payments, learnt of).
type simResource struct {
	ID       string
	Merchant *simMerchant
	// Magic is the PSP outcome its amount or account chose, if any.
	Magic FaultKind
	// Token is a checkout's payer link token.
	Token string
	// Payment is a refund's or dispute's payment.
	Payment string
	// Evidence is a dispute's last evidence text, as submitted.
	Evidence string
}

// simEndpoint is a merchant's webhook endpoint and how it answers now.
type simEndpoint struct {
	ID        string
	URL       string
	Merchant  *simMerchant
	Mode      FaultKind // "" answers 200
	CreatedAt time.Time
	// Delivered are the events it acknowledged (2xx), by id.
	Delivered map[string]bool
	// Attempts counts the deliveries it received.
	Attempts int
	// Failed reports whether it ever answered anything but 2xx: an
	// endpoint paykit may have paused or disabled.
	Failed bool
}

// simRequest is an idempotent request the simulation made: enough to
// send it again with the same key.
type simRequest struct {
	Kind     string // "payment", "payout", "refund", "checkout", "cancel_payment", ...
	Merchant *simMerchant
	Key      string
	Body     any
	Target   string // the resource a cancel or evidence acts on
}

// idemRecord is what the simulation learnt of one idempotency key: the
// resource its first successful answer named and that answer's bytes,
// which every replay must repeat.
type idemRecord struct {
	FirstAt  time.Time
	Resource string
	Answer   []byte
	Replayed bool // the reference answer was itself a replay
	Altered  bool // the key was first used with an altered body
}

// answerBytes is the contract JSON of an answer's resource.
func answerBytes(v any) []byte {
	proj, ok := paykit.Projection(v)
	if !ok {
		proj = v
	}
	b, err := json.Marshal(proj)
	if err != nil {
		return []byte("unmarshalable: " + err.Error())
	}
	return b
}

// sender is the webhook Sender of every instance: the merchants'
// endpoints, in this process, each answering as its mode says.
type sender struct {
	w  *world
	mu sync.Mutex
}

func newSender(w *world) *sender { return &sender{w: w} }

// Send delivers one event to the endpoint at d.URL.
func (s *sender) Send(_ context.Context, d send.Delivery) send.Attempt {
	s.mu.Lock()
	defer s.mu.Unlock()
	var ep *simEndpoint
	for _, e := range s.w.obs.endpoints {
		if e.URL == d.URL {
			ep = e
		}
	}
	if ep == nil {
		return send.Attempt{Err: "connection refused"}
	}
	ep.Attempts++
	var body struct {
		ID   string `json:"id"`
		Type string `json:"type"`
	}
	if err := json.Unmarshal(d.Body, &body); err != nil || body.ID != d.ID || !strings.Contains(body.Type, ".") {
		s.w.fail("webhooks.body", "delivery of %s to %s: unreadable body or wrong id: %.200s", d.ID, ep.ID, d.Body)
	}
	if len(d.Secrets) == 0 {
		s.w.fail("webhooks.body", "delivery of %s to %s is not signed", d.ID, ep.ID)
	}
	switch ep.Mode {
	case FaultWebhookFail:
		s.w.faults.fired(ep.Mode)
		ep.Failed = true
		return send.Attempt{StatusCode: 500, Latency: 3 * time.Millisecond, Response: "internal error"}
	case FaultWebhookHang:
		s.w.faults.fired(ep.Mode)
		ep.Failed = true
		return send.Attempt{Latency: 10 * time.Second, Err: "timeout awaiting response headers"}
	case FaultWebhookGone:
		s.w.faults.fired(ep.Mode)
		ep.Failed = true
		return send.Attempt{StatusCode: 410, Latency: time.Millisecond, Response: "gone"}
	case FaultWebhookThrottle:
		s.w.faults.fired(ep.Mode)
		ep.Failed = true
		return send.Attempt{StatusCode: 429, Latency: time.Millisecond, RetryAfter: 10 * time.Minute}
	}
	ep.Delivered[d.ID] = true
	return send.Attempt{StatusCode: 200, Latency: time.Millisecond, Response: "ok"}
}

// describe names a resource for traces: its id and, when known, status.
func describe(v any) string {
	switch r := v.(type) {
	case *paykit.PaymentIntent:
		return fmt.Sprintf("%s %s", r.ID, r.Status)
	case *paykit.PayoutIntent:
		return fmt.Sprintf("%s %s", r.ID, r.Status)
	case *paykit.Refund:
		return fmt.Sprintf("%s %s", r.ID, r.Status)
	case *paykit.Checkout:
		return fmt.Sprintf("%s %s", r.ID, r.Status)
	case *paykit.Dispute:
		return fmt.Sprintf("%s %s", r.ID, r.Status)
	}
	return fmt.Sprintf("%T", v)
}
