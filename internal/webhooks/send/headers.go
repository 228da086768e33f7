package send

import (
	"net/http"
	"strconv"
	"time"

	"github.com/paykit/paykit/internal/webhooks"
)

// Headers returns the headers of one delivery attempt: webhook-id (msgID),
// webhook-timestamp (unix seconds of ts), webhook-signature (see Sign),
// Content-Type application/json and User-Agent webhooks.UserAgent. The body must be
// the exact bytes that will be sent. ts should be the time of the attempt:
// receivers reject timestamps more than a few minutes old, so a retry is
// signed anew with the same msgID.
func Headers(secrets []string, msgID string, ts time.Time, body []byte) (http.Header, error) {
	sig, err := webhooks.Sign(secrets, msgID, ts, body)
	if err != nil {
		return nil, err
	}
	h := make(http.Header, 5)
	h.Set(webhooks.HeaderID, msgID) // canonicalised to Webhook-Id; names are case-insensitive
	h.Set(webhooks.HeaderTimestamp, strconv.FormatInt(ts.Unix(), 10))
	h.Set(webhooks.HeaderSignature, sig)
	h.Set("Content-Type", "application/json")
	h.Set("User-Agent", webhooks.UserAgent)
	return h, nil
}
