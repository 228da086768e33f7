package opn

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/paykit/paykit"
)

// Webhook signature headers as Opn documents them.
const (
	SignatureHeader          = "Omise-Signature"
	SignatureTimestampHeader = "Omise-Signature-Timestamp"
)

// decodeSecret decodes a webhook secret as Opn issues it (base64).
func decodeSecret(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil && len(b) > 0 {
			return b, nil
		}
	}
	return nil, errors.New("not base64")
}

// Sign returns the Omise-Signature value of body at timestamp ts (unix
// seconds) under the base64 secret: hex HMAC-SHA256 of "ts.body".
func Sign(secret string, ts int64, body []byte) (string, error) {
	key, err := decodeSecret(secret)
	if err != nil {
		return "", err
	}
	return sign(key, strconv.FormatInt(ts, 10), body), nil
}

func sign(key []byte, ts string, body []byte) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(ts))
	m.Write([]byte("."))
	m.Write(body)
	return hex.EncodeToString(m.Sum(nil))
}

// event is Opn's event object.
type event struct {
	Object string          `json:"object"`
	ID     string          `json:"id"`
	Key    string          `json:"key"`
	Data   json.RawMessage `json:"data"`
}

// ParseCallback verifies an Opn webhook (Omise-Signature: one or, during
// a secret rotation, several comma-separated hex HMAC-SHA256 signatures of
// "timestamp.body"; Omise-Signature-Timestamp within Tolerance of Now)
// and maps a charge, refund or transfer event to a CallbackEvent by the
// object's metadata paykit_key, and an event about a dispute
// (dispute.create, .update, .close) to a "dispute" event. Other events
// give none. A dispute the adapter cannot map now (a status it does not
// know, a charge it cannot read) is an error, so that Opn sends it again.
func (p *Provider) ParseCallback(ctx context.Context, r *http.Request) ([]paykit.CallbackEvent, error) {
	if len(p.secrets) == 0 {
		return nil, errors.New("opn: no Config.WebhookSecrets to verify the webhook")
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		return nil, fmt.Errorf("opn: webhook body: %w", err)
	}
	ts := r.Header.Get(SignatureTimestampHeader)
	sigs := r.Header.Get(SignatureHeader)
	if ts == "" || sigs == "" {
		return nil, errors.New("opn: webhook without signature headers")
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return nil, errors.New("opn: webhook timestamp is not unix seconds")
	}
	if d := p.now().Sub(time.Unix(sec, 0)); d > p.tolerance || d < -p.tolerance {
		return nil, fmt.Errorf("opn: webhook timestamp %s is outside the %s tolerance", ts, p.tolerance)
	}
	if !p.verified(ts, body, sigs) {
		return nil, errors.New("opn: webhook signature does not verify")
	}
	var ev event
	if err := decodeJSON(body, &ev); err != nil || ev.Object != "event" || ev.ID == "" {
		return nil, errors.New("opn: webhook body is not an event object")
	}
	var head struct {
		Object   string            `json:"object"`
		Metadata map[string]string `json:"metadata"`
	}
	if err := json.Unmarshal(ev.Data, &head); err != nil {
		return nil, nil
	}
	if head.Object == "dispute" {
		ctx, cancel := p.withTimeout(ctx)
		defer cancel()
		d, err := p.mapDispute(ctx, ev.Data)
		if err != nil {
			return nil, fmt.Errorf("opn: event %s: %w", ev.Key, err)
		}
		d.Detail = "opn event " + ev.Key + ": " + d.Detail
		return []paykit.CallbackEvent{{ID: ev.ID, Kind: "dispute", Dispute: &d}}, nil
	}
	key := head.Metadata["paykit_key"]
	if key == "" {
		return nil, nil // not ours
	}
	out := paykit.CallbackEvent{ID: ev.ID, Key: key}
	switch head.Object {
	case "charge":
		out.Kind, out.Result = "payment", p.callbackCharge(ctx, ev.Data)
	case "refund":
		out.Kind, out.Result = "refund", refundResult(ev.Data)
	case "transfer":
		out.Kind, out.Result = "payout", transferResult(ev.Data)
	default:
		return nil, nil
	}
	out.Result.Detail = "opn event " + ev.Key + ": " + out.Result.Detail
	return []paykit.CallbackEvent{out}, nil
}

// verified reports whether one of the comma-separated signatures is that
// of one of the secrets.
func (p *Provider) verified(ts string, body []byte, header string) bool {
	sigs := strings.Split(header, ",")
	for _, key := range p.secrets {
		want := []byte(sign(key, ts, body))
		for _, s := range sigs {
			if hmac.Equal([]byte(strings.TrimSpace(s)), want) {
				return true
			}
		}
	}
	return false
}

// callbackCharge maps a charge in an event: a pending charge is Pending
// (its action came with the create), without calling Opn; a successful
// one may read its transaction (see withFee).
func (p *Provider) callbackCharge(ctx context.Context, raw []byte) paykit.Result {
	var c charge
	if err := decodeJSON(raw, &c); err != nil || c.ID == "" {
		return paykit.Result{Outcome: paykit.OutcomeUnknown, Detail: "unreadable charge"}
	}
	if c.Status == "pending" {
		return paykit.Result{Outcome: paykit.OutcomePending, Reference: c.ID, Detail: "opn: charge pending"}
	}
	ctx, cancel := p.withTimeout(ctx)
	defer cancel()
	return p.chargeResult(ctx, raw)
}
