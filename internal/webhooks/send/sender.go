package send

import (
	"context"
	"net/http"
	"time"
)

// Delivery is one delivery attempt to make: Body, the event's JSON, signed
// with Secrets at SentAt under message id ID and POSTed to URL.
type Delivery struct {
	URL     string
	Live    bool // the endpoint is a live one: only public addresses
	ID      string
	Body    []byte
	Secrets []string  // the plain secrets that sign now, newest first
	SentAt  time.Time // the signature's timestamp
	// TraceParent, when set, is sent as the W3C traceparent header.
	TraceParent string
}

// Sender makes delivery attempts. A Service uses NewSender's; tests
// install their own.
type Sender interface {
	Send(ctx context.Context, d Delivery) Attempt
}

// httpSender delivers over HTTP with one client per kind of endpoint.
type httpSender struct {
	live, test *http.Client
}

// NewSender returns the Sender that delivers as the contract says: a POST
// of the body signed with every secret given, to public addresses only
// for live endpoints (NewClientWith). Its attempts end after timeout
// (DefaultTimeout when zero).
func NewSender(timeout time.Duration) Sender {
	return &httpSender{
		live: NewClientWith(ClientOptions{Live: true, Timeout: timeout}),
		test: NewClientWith(ClientOptions{Live: false, Timeout: timeout}),
	}
}

// Send implements Sender.
func (s *httpSender) Send(ctx context.Context, d Delivery) Attempt {
	header, err := Headers(d.Secrets, d.ID, d.SentAt, d.Body)
	if err != nil {
		return Attempt{Err: "sign event: " + err.Error()}
	}
	if d.TraceParent != "" {
		header.Set("Traceparent", d.TraceParent)
	}
	client := s.test
	if d.Live {
		client = s.live
	}
	return Deliver(ctx, client, d.URL, header, d.Body)
}
