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
	stripego "github.com/stripe/stripe-go/v85"
)

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

// maxBody bounds what the adapter reads of an answer: a longer body is cut
// there, is no longer JSON, and reads as no Stripe answer (Unknown).
const maxBody = 4 << 20

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

// call sends one request through stripe-go's backend and classifies what
// came back. A non-nil failure means no trustworthy Stripe answer: its
// Result is Unknown (a timeout, or an answer that is not Stripe's JSON) or
// Unacknowledged (refused or dropped connections, 5xx, 429). Stripe's own
// 4xx errors are answers.
func (p *Provider) call(ctx context.Context, method, path string, form url.Values, idemKey string) (*answer, *failure) {
	ctx, cancel := context.WithTimeout(ctx, p.cfg.Timeout)
	defer cancel()
	// The SDK keeps the status and headers of an answer whose body is not
	// Stripe's JSON to itself: the transport records them.
	seen := &response{}
	params := &stripego.RawParams{Params: stripego.Params{Context: context.WithValue(ctx, responseKey{}, seen)}}
	if idemKey != "" {
		params.IdempotencyKey = stripego.String(idempotencyKey(idemKey))
	}
	content := ""
	if method == http.MethodGet {
		if len(form) > 0 {
			path += "?" + form.Encode()
		}
	} else {
		content = form.Encode()
	}
	resp, err := p.backend.RawRequest(method, path, p.cfg.SecretKey, content, params)
	what := fmt.Sprintf("stripe: %s %s", method, strings.SplitN(path, "?", 2)[0])
	if seen.status == 0 { // no answer came
		if err == nil {
			err = errors.New("no answer")
		}
		return nil, &failure{transportResult(strings.TrimPrefix(what, "stripe: "), err)}
	}
	what += fmt.Sprintf(": HTTP %d", seen.status)
	if rid := seen.header.Get("Request-Id"); rid != "" {
		what += " request " + rid
	}
	retryAfter := ""
	if ra := seen.header.Get("Retry-After"); ra != "" {
		retryAfter = "; Retry-After " + ra
	}
	var raw []byte
	var serr *stripego.Error
	switch {
	case err == nil:
		raw = resp.RawJSON
	case errors.As(err, &serr) && serr.LastResponse != nil:
		raw = serr.LastResponse.RawJSON
	case seen.status < 400: // the answer's body could not be read
		return nil, &failure{transportResult(strings.TrimPrefix(what, "stripe: ")+": reading answer", err)}
	}
	var env struct {
		Error *apiError `json:"error"`
	}
	isJSON := raw != nil && json.Unmarshal(raw, &env) == nil
	switch status := seen.status; {
	case status == http.StatusTooManyRequests:
		return nil, &failure{paykit.Result{Outcome: paykit.OutcomeUnacknowledged, Detail: what + ": rate limited, not executed" + retryAfter}}
	case status >= 500:
		d := what
		if isJSON && env.Error != nil {
			d += ": " + env.Error.Type + " " + env.Error.Message
		}
		return nil, &failure{paykit.Result{Outcome: paykit.OutcomeUnacknowledged, Detail: d + retryAfter}}
	case status >= 200 && status < 300:
		if !isJSON || env.Error != nil {
			return nil, &failure{paykit.Result{Outcome: paykit.OutcomeUnknown, Detail: what + ": the body is not Stripe's JSON"}}
		}
		return &answer{status: status, body: raw}, nil
	case status >= 400:
		if !isJSON || env.Error == nil || env.Error.Type == "" {
			return nil, &failure{paykit.Result{Outcome: paykit.OutcomeUnknown, Detail: what + ": not a Stripe error body"}}
		}
		return &answer{status: status, body: raw, err: env.Error}, nil
	}
	return nil, &failure{paykit.Result{Outcome: paykit.OutcomeUnknown, Detail: what + ": unexpected status"}}
}

// response is what the transport saw of one answer.
type response struct {
	status int
	header http.Header
}

// responseKey is the context key of a call's *response.
type responseKey struct{}

// recording is the HTTP transport under stripe-go: it records the status
// and headers of each answer in the request's *response.
type recording struct{ next http.RoundTripper }

func (t recording) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	if seen, ok := r.Context().Value(responseKey{}).(*response); ok {
		seen.status, seen.header = resp.StatusCode, resp.Header
	}
	resp.Body = limited{Reader: io.LimitReader(resp.Body, maxBody), Closer: resp.Body}
	return resp, nil
}

// limited is a response body cut at maxBody.
type limited struct {
	io.Reader
	io.Closer
}

// newBackend is stripe-go's API backend for the adapter: its base URL, an
// HTTP client whose transport records answers (redirects not followed: a
// redirect is no Stripe answer), no retries of its own (paykit retries
// with the same key), no telemetry, no logging (answers may name what
// paykit keeps out of logs).
func newBackend(base string, client *http.Client) stripego.RawRequestBackend {
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	next := http.DefaultTransport
	if client != nil {
		*c = *client
		if client.Transport != nil {
			next = client.Transport
		}
	}
	c.Transport = recording{next: next}
	return stripego.GetBackendWithConfig(stripego.APIBackend, &stripego.BackendConfig{
		URL: stripego.String(base), HTTPClient: c, MaxNetworkRetries: stripego.Int64(0),
		EnableTelemetry: stripego.Bool(false), LeveledLogger: &stripego.LeveledLogger{Level: stripego.LevelNull},
	}).(stripego.RawRequestBackend) // *stripego.BackendImplementation
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
