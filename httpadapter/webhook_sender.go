package httpadapter

import (
	"context"
	"net/http"
	"time"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/internal/webhooks/send"
)

// WebhookSender delivers webhooks over HTTP as the contract says: a POST of
// the event's JSON (the body of GET /events/{id}) signed with every secret
// that signs now. Live endpoints are reached only at public addresses; test
// endpoints may be on loopback.
type WebhookSender struct {
	clients map[paykit.Environment]*http.Client
}

// NewWebhookSender makes a sender whose attempts end after timeout
// (15 s when zero).
func NewWebhookSender(timeout time.Duration) *WebhookSender {
	return &WebhookSender{clients: map[paykit.Environment]*http.Client{
		paykit.Live: send.NewClientWith(send.ClientOptions{Live: true, Timeout: timeout}),
		paykit.Test: send.NewClientWith(send.ClientOptions{Live: false, Timeout: timeout}),
	}}
}

// SendWebhook implements paykit.WebhookSender.
func (s *WebhookSender) SendWebhook(ctx context.Context, d paykit.WebhookDelivery) paykit.WebhookResult {
	body, err := eventBody(d.Event)
	if err != nil {
		return paykit.WebhookResult{Error: "render event: " + err.Error()}
	}
	header, err := send.Headers(d.Secrets, d.Event.ID, d.SentAt, body)
	if err != nil {
		return paykit.WebhookResult{Error: "sign event: " + err.Error()}
	}
	a := send.Deliver(ctx, s.clients[d.Endpoint.Environment], d.Endpoint.URL, header, body)
	return paykit.WebhookResult{StatusCode: a.StatusCode, Latency: a.Latency, Response: a.Response, Error: a.Err, RetryAfter: a.RetryAfter}
}

// provideWebhookSender gives svc an HTTP webhook sender unless it has one.
func provideWebhookSender(svc *paykit.Service) {
	svc.ProvideWebhookSender(NewWebhookSender(svc.WebhookTimeout()))
}
