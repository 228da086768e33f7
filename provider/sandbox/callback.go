package sandbox

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/paykit/paykit"
)

// Callbacks: the PSP will notify state changes by POSTing one JSON event
//
//	{"id":"evt_…","kind":"payment"|"payout"|"refund","key":"<idempotency key>","ref":"<the PSP's id>","state":"SUCCESS","error_code":""}
//
// (a SUCCESS payment's with its fee_minor and available_on; a dispute's,
// kind "dispute", with key and ref its id and the dispute in "dispute")
// with header Sandbox-Signature: the hex HMAC-SHA256 of the raw body under
// the API key. The PSP sends them when PSPConfig.CallbackURL is set (see
// SendCallbacks); the adapter verifies and parses them.

// SignatureHeader is the header carrying a callback's signature.
const SignatureHeader = "Sandbox-Signature"

// callbackView is the body of a PSP callback.
type callbackView struct {
	ID        string `json:"id"`
	Kind      string `json:"kind"`
	Key       string `json:"key"`
	Ref       string `json:"ref,omitempty"` // the PSP's id of the payment, transfer or refund
	State     string `json:"state"`
	ErrorCode string `json:"error_code,omitempty"`
	// FeeMinor and AvailableOn are a SUCCESS payment's.
	FeeMinor    int64     `json:"fee_minor,omitempty"`
	AvailableOn time.Time `json:"available_on,omitzero"`
	// Dispute is a dispute callback's dispute.
	Dispute *disputeView `json:"dispute,omitempty"`
}

// mac is the HMAC-SHA256 of a callback body under key; the header carries
// it in hex.
func mac(key string, body []byte) []byte {
	m := hmac.New(sha256.New, []byte(key))
	m.Write(body)
	return m.Sum(nil)
}

// ParseCallback verifies a callback's signature (without an API key
// nothing can be verified, so every callback is refused) and maps its
// state as an inquiry would. Verification or parse failures are errors.
func (p *Provider) ParseCallback(_ context.Context, r *http.Request) ([]paykit.CallbackEvent, error) {
	if p.apiKey == "" {
		return nil, errors.New("sandbox: callbacks need Config.APIKey to verify their signature")
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil {
		return nil, fmt.Errorf("sandbox: read callback: %w", err)
	}
	if len(body) > maxBody {
		return nil, errors.New("sandbox: callback body too large")
	}
	got, err := hex.DecodeString(strings.TrimSpace(r.Header.Get(SignatureHeader)))
	if err != nil || !hmac.Equal(got, mac(p.apiKey, body)) {
		return nil, errors.New("sandbox: callback signature does not verify")
	}
	var c callbackView
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("sandbox: callback body: %w", err)
	}
	if c.ID == "" || c.Key == "" || (c.Kind != "payment" && c.Kind != "payout" && c.Kind != "refund" && c.Kind != "dispute") {
		return nil, errors.New("sandbox: callback needs id, key and kind payment, payout, refund or dispute")
	}
	if c.Kind == "dispute" {
		if c.Dispute == nil {
			return nil, errors.New("sandbox: dispute callback without its dispute")
		}
		d, err := disputeOf(*c.Dispute)
		if err != nil {
			return nil, fmt.Errorf("sandbox: dispute callback: %w", err)
		}
		return []paykit.CallbackEvent{{ID: c.ID, Kind: c.Kind, Dispute: &d}}, nil
	}
	// A PAYER_ACTION callback carries no action: it changes nothing until
	// an inquiry fetches the action.
	res := stateResult(c.State, c.ErrorCode)
	switch c.Kind {
	case "refund":
		res = refundStateResult(c.State, c.ErrorCode)
	case "payment":
		if res.Outcome == paykit.OutcomeSucceeded {
			res.Fee, res.AvailableOn = c.FeeMinor, c.AvailableOn.UTC()
		}
	}
	res.Detail = stateDetail(c.State, c.ErrorCode, nil)
	if res.Reference == "" {
		res.Reference = c.Ref
	}
	return []paykit.CallbackEvent{{ID: c.ID, Kind: c.Kind, Key: c.Key, Result: res}}, nil
}
