package httpadapter

import (
	"context"
	"time"

	"github.com/paykit/paykit"
)

// WebhookSender delivers webhooks over HTTP as the contract says: a POST of
// the event's JSON (the body of GET /events/{id}) signed with every secret
// that signs now. It is paykit.NewHTTPWebhookSender's, which a Service uses
// by default; it remains for hosts that name it.
type WebhookSender struct {
	sender paykit.WebhookSender
}

// NewWebhookSender makes a sender whose attempts end after timeout
// (15 s when zero).
func NewWebhookSender(timeout time.Duration) *WebhookSender {
	return &WebhookSender{paykit.NewHTTPWebhookSender(timeout)}
}

// SendWebhook implements paykit.WebhookSender.
func (s *WebhookSender) SendWebhook(ctx context.Context, d paykit.WebhookDelivery) paykit.WebhookResult {
	return s.sender.SendWebhook(ctx, d)
}
