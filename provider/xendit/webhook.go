package xendit

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/paykit/paykit"
)

// CallbackTokenHeader is the header Xendit authenticates its webhooks
// with: the account's verification token, the same on every webhook.
const CallbackTokenHeader = "x-callback-token"

// webhook is the envelope of Xendit's webhooks: event and data
// (payments, refunds, payouts), or event beside the dispute's own fields.
type webhook struct {
	Event string          `json:"event"`
	ID    string          `json:"id"`
	Data  json.RawMessage `json:"data"`
}

// ParseCallback verifies a Xendit webhook by its x-callback-token (a
// constant-time comparison with each of Config.CallbackTokens) and maps
// it to CallbackEvents. A token authenticates the sender but not the
// body, so the adapter takes no state from the body: it reads the object
// the webhook names from the API (the payment request, refund, payout or
// dispute) and answers what Xendit says of it, and refuses a webhook
// whose body names another key than the object's reference_id.
// payment.capture, payment.authorization and payment.failure are
// "payment"; refund.succeeded and refund.failed "refund";
// payout.succeeded, payout.failed and payout.reversed "payout";
// dispute.* "dispute". Other events give none. An object the adapter
// cannot read now is an error, so that Xendit sends the webhook again.
func (p *Provider) ParseCallback(ctx context.Context, r *http.Request) ([]paykit.CallbackEvent, error) {
	if len(p.tokens) == 0 {
		return nil, errors.New("xendit: no Config.CallbackTokens to verify the webhook")
	}
	if !p.verified(r.Header.Get(CallbackTokenHeader)) {
		return nil, errors.New("xendit: the webhook's x-callback-token is not one of the account's")
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		return nil, fmt.Errorf("xendit: webhook body: %w", err)
	}
	var wh webhook
	if err := json.Unmarshal(body, &wh); err != nil || wh.Event == "" {
		return nil, errors.New("xendit: the webhook body is not an event")
	}
	ctx, cancel := p.withTimeout(ctx)
	defer cancel()
	family, _, _ := strings.Cut(wh.Event, ".")
	switch family {
	case "payment":
		return p.paymentEvent(ctx, wh)
	case "refund":
		return p.objectEvent(ctx, wh, "refund", "/refunds/", refundResult)
	case "payout":
		return p.objectEvent(ctx, wh, "payout", payoutsPath+"/", payoutResult)
	case "dispute":
		return p.disputeEvent(ctx, wh)
	}
	return nil, nil
}

// verified reports whether token is one of the account's, comparing
// digests in constant time with every token.
func (p *Provider) verified(token string) bool {
	if token == "" {
		return false
	}
	got := tokenDigest(token)
	ok := 0
	for _, want := range p.tokens {
		ok |= subtle.ConstantTimeCompare(got[:], want[:])
	}
	return ok == 1
}

// named is what a webhook body says of its object.
type named struct {
	ID               string `json:"id"`
	PaymentID        string `json:"payment_id"`
	PaymentRequestID string `json:"payment_request_id"`
	ReferenceID      string `json:"reference_id"`
}

// paymentEvent answers a payment webhook with the payment request it
// names, read from the API.
func (p *Provider) paymentEvent(ctx context.Context, wh webhook) ([]paykit.CallbackEvent, error) {
	var n named
	if err := json.Unmarshal(wh.Data, &n); err != nil || n.PaymentRequestID == "" || n.ReferenceID == "" {
		return nil, fmt.Errorf("xendit: %s names no payment request and reference_id", wh.Event)
	}
	body, end := p.get(ctx, paymentRequestsPath+"/"+url.PathEscape(n.PaymentRequestID), nil, true)
	if end != nil {
		return nil, fmt.Errorf("xendit: %s: reading payment request %s: %s", wh.Event, n.PaymentRequestID, end.Detail)
	}
	var pr paymentRequest
	if err := json.Unmarshal(body, &pr); err != nil || pr.ID == "" {
		return nil, fmt.Errorf("xendit: %s: payment request %s is unreadable", wh.Event, n.PaymentRequestID)
	}
	if pr.ReferenceID != n.ReferenceID {
		return nil, fmt.Errorf("xendit: %s names reference_id %q, payment request %s has %q", wh.Event, n.ReferenceID, pr.ID, pr.ReferenceID)
	}
	res := p.paymentResult(ctx, pr.ReferenceID, body)
	res.Detail = "xendit webhook " + wh.Event + ": " + res.Detail
	id := n.PaymentID
	if id == "" {
		id = pr.ID
	}
	return []paykit.CallbackEvent{{ID: wh.Event + ":" + id, Kind: "payment", Key: pr.ReferenceID, Result: res}}, nil
}

// objectEvent answers a refund or payout webhook with the object it names
// (data.id), read at path+id and mapped by result.
func (p *Provider) objectEvent(ctx context.Context, wh webhook, kind, path string, result func(string, []byte) paykit.Result) ([]paykit.CallbackEvent, error) {
	var n named
	if err := json.Unmarshal(wh.Data, &n); err != nil || n.ID == "" || n.ReferenceID == "" {
		return nil, fmt.Errorf("xendit: %s names no %s and reference_id", wh.Event, kind)
	}
	body, end := p.get(ctx, path+url.PathEscape(n.ID), nil, false)
	if end != nil {
		return nil, fmt.Errorf("xendit: %s: reading %s %s: %s", wh.Event, kind, n.ID, end.Detail)
	}
	var obj named
	if err := json.Unmarshal(body, &obj); err != nil || obj.ID != n.ID {
		return nil, fmt.Errorf("xendit: %s: %s %s is unreadable", wh.Event, kind, n.ID)
	}
	if obj.ReferenceID != n.ReferenceID {
		return nil, fmt.Errorf("xendit: %s names reference_id %q, %s %s has %q", wh.Event, n.ReferenceID, kind, n.ID, obj.ReferenceID)
	}
	res := result(obj.ReferenceID, body)
	res.Detail = "xendit webhook " + wh.Event + ": " + res.Detail
	return []paykit.CallbackEvent{{ID: wh.Event + ":" + n.ID, Kind: kind, Key: obj.ReferenceID, Result: res}}, nil
}

// disputeEvent answers a dispute webhook with the dispute it names (its
// id), read from the API.
func (p *Provider) disputeEvent(ctx context.Context, wh webhook) ([]paykit.CallbackEvent, error) {
	if wh.ID == "" {
		return nil, fmt.Errorf("xendit: %s names no dispute", wh.Event)
	}
	d, err := p.readDispute(ctx, wh.ID)
	if err != nil {
		return nil, fmt.Errorf("xendit: %s: %w", wh.Event, err)
	}
	pd, err := p.mapDispute(ctx, d, "")
	if err != nil {
		return nil, fmt.Errorf("xendit: %s: %w", wh.Event, err)
	}
	pd.Detail = "xendit webhook " + wh.Event + ": " + pd.Detail
	return []paykit.CallbackEvent{{ID: wh.Event + ":" + d.ID + ":" + d.Status + ":" + d.Updated, Kind: "dispute", Dispute: &pd}}, nil
}
