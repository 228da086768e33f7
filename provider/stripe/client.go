package stripe

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"

	"github.com/paykit/paykit"
)

// maxBody bounds what the adapter reads of an answer.
const maxBody = 4 << 20

// apiError is Stripe's error object ({"error": {...}}).
type apiError struct {
	Type          string          `json:"type"`
	Code          string          `json:"code"`
	DeclineCode   string          `json:"decline_code"`
	Message       string          `json:"message"`
	Param         string          `json:"param"`
	PaymentIntent *paymentIntent  `json:"payment_intent"`
	Raw           json.RawMessage `json:"-"`
}

// answer is a Stripe answer: the status and body of a response whose body
// is Stripe's JSON.
type answer struct {
	status int
	body   []byte
	err    *apiError // non-nil for a Stripe error answer
}

// failure is a call that got no Stripe answer: its Result says why.
type failure struct{ r paykit.Result }

// idempotencyKey is the Idempotency-Key header of an attempt key: the key
// itself, hashed when longer than Stripe's 255 characters.
func idempotencyKey(key string) string {
	if len(key) <= 255 {
		return key
	}
	sum := sha256.Sum256([]byte(key))
	return "paykit-" + hex.EncodeToString(sum[:])
}

// call sends one request and classifies what came back. A non-nil failure
// means no trustworthy Stripe answer: its Result is Unknown (a timeout, or
// an answer that is not Stripe's JSON) or Unacknowledged (refused or
// dropped connections, 5xx, 429). Stripe's own 4xx errors are answers.
func (p *Provider) call(ctx context.Context, method, path string, form url.Values, idemKey string) (*answer, *failure) {
	ctx, cancel := context.WithTimeout(ctx, p.cfg.Timeout)
	defer cancel()
	var body io.Reader
	u := p.base + path
	if method == http.MethodGet {
		if len(form) > 0 {
			u += "?" + form.Encode()
		}
	} else {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return nil, &failure{paykit.Result{Outcome: paykit.OutcomeUnacknowledged, Detail: "stripe: building request: " + err.Error()}}
	}
	req.Header.Set("Authorization", "Bearer "+p.cfg.SecretKey)
	req.Header.Set("User-Agent", "paykit-stripe")
	if method != http.MethodGet {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if idemKey != "" {
		req.Header.Set("Idempotency-Key", idempotencyKey(idemKey))
	}
	resp, err := p.client.Do(req)
	if err != nil {
		return nil, &failure{transportResult(method+" "+path, err)}
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return nil, &failure{transportResult(method+" "+path+": reading answer", err)}
	}
	what := fmt.Sprintf("stripe: %s %s: HTTP %d", method, path, resp.StatusCode)
	if rid := resp.Header.Get("Request-Id"); rid != "" {
		what += " request " + rid
	}
	var env struct {
		Error *apiError `json:"error"`
	}
	isJSON := json.Unmarshal(raw, &env) == nil
	switch {
	case resp.StatusCode == http.StatusTooManyRequests:
		d := what + ": rate limited, not executed"
		if ra := resp.Header.Get("Retry-After"); ra != "" {
			d += "; Retry-After " + ra
		}
		return nil, &failure{paykit.Result{Outcome: paykit.OutcomeUnacknowledged, Detail: d}}
	case resp.StatusCode >= 500:
		d := what
		if isJSON && env.Error != nil {
			d += ": " + env.Error.Type + " " + env.Error.Message
		}
		if ra := resp.Header.Get("Retry-After"); ra != "" {
			d += "; Retry-After " + ra
		}
		return nil, &failure{paykit.Result{Outcome: paykit.OutcomeUnacknowledged, Detail: d}}
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		if !isJSON || env.Error != nil {
			return nil, &failure{paykit.Result{Outcome: paykit.OutcomeUnknown, Detail: what + ": the body is not Stripe's JSON"}}
		}
		return &answer{status: resp.StatusCode, body: raw}, nil
	case resp.StatusCode >= 400:
		if !isJSON || env.Error == nil || env.Error.Type == "" {
			return nil, &failure{paykit.Result{Outcome: paykit.OutcomeUnknown, Detail: what + ": not a Stripe error body"}}
		}
		return &answer{status: resp.StatusCode, body: raw, err: env.Error}, nil
	}
	return nil, &failure{paykit.Result{Outcome: paykit.OutcomeUnknown, Detail: what + ": unexpected status"}}
}

// transportResult classifies a transport error: a timeout (the request
// may have been received) is Unknown; a refused or dropped connection is
// Unacknowledged.
func transportResult(what string, err error) paykit.Result {
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) {
		return paykit.Result{Outcome: paykit.OutcomeUnknown, Detail: "stripe: " + what + ": timeout: " + err.Error()}
	}
	return paykit.Result{Outcome: paykit.OutcomeUnacknowledged, Detail: "stripe: " + what + ": " + err.Error()}
}

// errDetail is the Detail of a Stripe error answer.
func errDetail(a *answer) string {
	e := a.err
	var b bytes.Buffer
	fmt.Fprintf(&b, "stripe: HTTP %d %s", a.status, e.Type)
	if e.Code != "" {
		fmt.Fprintf(&b, " code=%s", e.Code)
	}
	if e.DeclineCode != "" {
		fmt.Fprintf(&b, " decline_code=%s", e.DeclineCode)
	}
	if e.Param != "" {
		fmt.Fprintf(&b, " param=%s", e.Param)
	}
	if e.Message != "" {
		fmt.Fprintf(&b, ": %s", e.Message)
	}
	return b.String()
}

// resourceMissing reports whether a is Stripe's word that the object does
// not exist.
func resourceMissing(a *answer) bool {
	return a.status == http.StatusNotFound && a.err.Type == "invalid_request_error" && a.err.Code == "resource_missing"
}

// idempotencyConflict reports whether a is Stripe's idempotency error: the
// key was used before (with other parameters, or concurrently).
func idempotencyConflict(a *answer) bool {
	return a.err.Type == "idempotency_error" || a.status == http.StatusConflict
}
