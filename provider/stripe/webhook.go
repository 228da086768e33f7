package stripe

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
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

// SignatureHeader is the header Stripe signs webhooks in.
const SignatureHeader = "Stripe-Signature"

// maxWebhook bounds a webhook body.
const maxWebhook = 1 << 20

// ErrSignature is wrapped by every webhook verification failure.
var ErrSignature = errors.New("stripe: webhook signature does not verify")

// Sign returns a Stripe-Signature header value for payload signed with
// secret at t, as Stripe signs webhooks: v1 is the hex HMAC-SHA256 of
// "t.payload". Fakes and tests use it.
func Sign(payload []byte, secret string, t time.Time) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	return "t=" + ts + ",v1=" + hex.EncodeToString(mac(secret, ts, payload))
}

// mac is the HMAC-SHA256 of "ts.payload" under secret.
func mac(secret, ts string, payload []byte) []byte {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(ts))
	m.Write([]byte("."))
	m.Write(payload)
	return m.Sum(nil)
}

// verify checks header against payload: the timestamp must be within the
// tolerance of now, and one v1 signature must match one of the secrets.
func (p *Provider) verify(payload []byte, header string) error {
	if header == "" {
		return fmt.Errorf("%w: no %s header", ErrSignature, SignatureHeader)
	}
	var ts string
	var sigs [][]byte
	for _, item := range strings.Split(header, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(item), "=")
		if !ok {
			continue
		}
		switch k {
		case "t":
			ts = v
		case "v1":
			if b, err := hex.DecodeString(v); err == nil {
				sigs = append(sigs, b)
			}
		}
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return fmt.Errorf("%w: no timestamp", ErrSignature)
	}
	if len(sigs) == 0 {
		return fmt.Errorf("%w: no v1 signature", ErrSignature)
	}
	if d := p.cfg.Now().Sub(time.Unix(sec, 0)); d > p.cfg.Tolerance || d < -p.cfg.Tolerance {
		return fmt.Errorf("%w: timestamp %s outside the tolerance", ErrSignature, ts)
	}
	for _, secret := range p.cfg.WebhookSecrets {
		want := mac(secret, ts, payload)
		for _, s := range sigs {
			if hmac.Equal(s, want) {
				return nil
			}
		}
	}
	return fmt.Errorf("%w: no signature matches", ErrSignature)
}

// paymentEvents are the PaymentIntent events that tell an outcome
// (payment_intent.created, say, tells nothing new).
var paymentEvents = map[string]bool{
	"payment_intent.succeeded": true, "payment_intent.payment_failed": true, "payment_intent.canceled": true,
	"payment_intent.processing": true, "payment_intent.requires_action": true,
}

// event is a Stripe Event.
type event struct {
	ID     string `json:"id"`
	Object string `json:"object"`
	Type   string `json:"type"`
	Data   struct {
		Object json.RawMessage `json:"object"`
	} `json:"data"`
}

// disputeEvents are the events about a dispute: each carries the Dispute.
var disputeEvents = map[string]bool{
	"charge.dispute.created": true, "charge.dispute.updated": true, "charge.dispute.closed": true,
	"charge.dispute.funds_withdrawn": true, "charge.dispute.funds_reinstated": true,
}

// ParseCallback verifies a Stripe webhook (Stripe-Signature) and maps
// PaymentIntent outcome events, checkout.session.* and refund events to
// paykit events, and charge.dispute.* events to "dispute" events.
// Events it does not map, or about objects without a paykit key, give no
// event. A succeeded payment's event carries no balance transaction, so
// the adapter reads its fee from Stripe (see withFee); a dispute's event
// names its PaymentIntent by id, which the adapter reads for paykit's key.
// A dispute whose payment cannot be read now is an error: Stripe sends
// the webhook again.
func (p *Provider) ParseCallback(ctx context.Context, r *http.Request) ([]paykit.CallbackEvent, error) {
	if r.Body == nil {
		return nil, fmt.Errorf("%w: no body", ErrSignature)
	}
	payload, err := io.ReadAll(io.LimitReader(r.Body, maxWebhook+1))
	if err != nil {
		return nil, fmt.Errorf("stripe: reading webhook: %w", err)
	}
	if len(payload) > maxWebhook {
		return nil, errors.New("stripe: webhook body too large")
	}
	if err := p.verify(payload, r.Header.Get(SignatureHeader)); err != nil {
		return nil, err
	}
	var ev event
	if err := json.Unmarshal(payload, &ev); err != nil || ev.Object != "event" || ev.ID == "" {
		return nil, errors.New("stripe: the webhook is not a Stripe event")
	}
	one := func(kind, key string, res func() paykit.Result) ([]paykit.CallbackEvent, error) {
		if key == "" {
			return nil, nil
		}
		r := res()
		r.Detail += " (event " + ev.Type + ")"
		return []paykit.CallbackEvent{{ID: ev.ID, Kind: kind, Key: key, Result: r}}, nil
	}
	switch {
	case paymentEvents[ev.Type]:
		var pi paymentIntent
		if json.Unmarshal(ev.Data.Object, &pi) != nil || pi.Object != "payment_intent" {
			return nil, errors.New("stripe: " + ev.Type + " without a PaymentIntent")
		}
		if pi.Metadata[checkoutMetadata] != "" {
			return nil, nil // a Checkout payment: its session's events tell
		}
		return one("payment", pi.Metadata[MetadataKey], func() paykit.Result { return p.piOutcome(ctx, &pi) })
	case strings.HasPrefix(ev.Type, "checkout.session."):
		var s checkoutSession
		if json.Unmarshal(ev.Data.Object, &s) != nil || s.Object != "checkout.session" {
			return nil, errors.New("stripe: " + ev.Type + " without a Checkout Session")
		}
		return one("payment", s.Metadata[MetadataKey], func() paykit.Result {
			if ev.Type == "checkout.session.async_payment_failed" {
				res := sessionResult(&s)
				res.Outcome, res.FailureCode, res.Action = paykit.OutcomeFailed, paykit.FailureProviderDeclined, nil
				return res
			}
			return p.sessionOutcome(ctx, &s)
		})
	case ev.Type == "refund.created" || ev.Type == "refund.updated" || ev.Type == "refund.failed" || ev.Type == "charge.refund.updated":
		var rf refund
		if json.Unmarshal(ev.Data.Object, &rf) != nil || rf.Object != "refund" {
			return nil, errors.New("stripe: " + ev.Type + " without a Refund")
		}
		return one("refund", rf.Metadata[MetadataKey], func() paykit.Result { return refundResult(&rf) })
	case disputeEvents[ev.Type]:
		var d dispute
		if json.Unmarshal(ev.Data.Object, &d) != nil || d.Object != "dispute" || d.ID == "" {
			return nil, errors.New("stripe: " + ev.Type + " without a Dispute")
		}
		pd, err := p.providerDispute(ctx, &d)
		if err != nil {
			return nil, fmt.Errorf("stripe: %s %s: %w", ev.Type, d.ID, err)
		}
		pd.Detail += " (event " + ev.Type + ")"
		return []paykit.CallbackEvent{{ID: ev.ID, Kind: "dispute", Dispute: &pd}}, nil
	}
	return nil, nil
}
