package paykit

import (
	"context"
	"net/http"
	"time"

	"github.com/paykit/paykit/internal/webhooks/send"
)

// httpWebhookSender delivers webhooks over HTTP as the contract says: a
// POST of the event's JSON (EventBody) signed with every secret that signs
// now. Live endpoints are reached only at public addresses; test endpoints
// may be on loopback.
type httpWebhookSender struct {
	clients map[Environment]*http.Client
}

// NewHTTPWebhookSender returns the sender a Service uses when
// Options.WebhookSender is nil: its attempts end after timeout (15 s when
// zero).
func NewHTTPWebhookSender(timeout time.Duration) WebhookSender {
	return &httpWebhookSender{clients: map[Environment]*http.Client{
		Live: send.NewClientWith(send.ClientOptions{Live: true, Timeout: timeout}),
		Test: send.NewClientWith(send.ClientOptions{Live: false, Timeout: timeout}),
	}}
}

// SendWebhook implements WebhookSender.
func (s *httpWebhookSender) SendWebhook(ctx context.Context, d WebhookDelivery) WebhookResult {
	body, err := EventBody(d.Event)
	if err != nil {
		return WebhookResult{Error: "render event: " + err.Error()}
	}
	header, err := send.Headers(d.Secrets, d.Event.ID, d.SentAt, body)
	if err != nil {
		return WebhookResult{Error: "sign event: " + err.Error()}
	}
	a := send.Deliver(ctx, s.clients[d.Endpoint.Environment], d.Endpoint.URL, header, body)
	return WebhookResult{StatusCode: a.StatusCode, Latency: a.Latency, Response: a.Response, Error: a.Err, RetryAfter: a.RetryAfter}
}
