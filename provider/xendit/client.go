package xendit

import (
	"bytes"
	"context"
	"crypto/sha256"
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

// apiError is Xendit's error object.
type apiError struct {
	ErrorCode string `json:"error_code"`
	Message   string `json:"message"`
}

// reply is what one request came to: either a transport result (fault
// set: the call ends with it) or Xendit's JSON answer (status and body,
// and err when the body is Xendit's error object).
type reply struct {
	fault  *paykit.Result
	status int
	body   []byte
	err    *apiError
}

// maxBody bounds what the adapter reads of an answer.
const maxBody = 4 << 20

// request is one call to the API.
type request struct {
	method      string
	path        string
	query       url.Values
	body        any    // encoded as JSON, unless raw is set
	raw         []byte // a body already encoded (multipart)
	contentType string // of raw
	idem        string // Idempotency-key
	version     bool   // send api-version (Payments API v3)
}

// do sends r once: the adapter never retries, and clears GetBody so that
// net/http never replays a request carrying an Idempotency-key.
func (p *Provider) do(ctx context.Context, r request) reply {
	u := *p.base
	u.Path = strings.TrimRight(u.Path, "/") + r.path
	u.RawQuery = r.query.Encode()
	var body io.Reader
	contentType := r.contentType
	switch {
	case r.raw != nil:
		body = bytes.NewReader(r.raw)
	case r.body != nil:
		b, err := json.Marshal(r.body)
		if err != nil {
			return faulted(paykit.OutcomeUnacknowledged, "xendit: encoding the request: "+err.Error())
		}
		body, contentType = bytes.NewReader(b), "application/json"
	}
	req, err := http.NewRequestWithContext(ctx, r.method, u.String(), body)
	if err != nil {
		return faulted(paykit.OutcomeUnacknowledged, "xendit: build request: "+err.Error())
	}
	req.GetBody = nil
	req.SetBasicAuth(p.secret, "")
	req.Header.Set("Accept", "application/json")
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if r.idem != "" {
		req.Header.Set("Idempotency-key", r.idem)
	}
	if r.version {
		req.Header.Set("api-version", APIVersion)
	}
	what := "xendit: " + r.method + " " + r.path
	resp, err := p.client.Do(req)
	if err != nil {
		return faulted(transportOutcome(ctx, err), what+": "+err.Error())
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		// Sent and answered in part: the request may have been executed.
		return faulted(paykit.OutcomeUnknown, what+": reading the answer: "+err.Error())
	}
	retryAfter := ""
	if ra := resp.Header.Get("Retry-After"); ra != "" {
		retryAfter = "; Retry-After " + ra
	}
	switch {
	case resp.StatusCode == http.StatusTooManyRequests:
		return faulted(paykit.OutcomeUnacknowledged, fmt.Sprintf("%s: HTTP 429 rate limited, not executed%s", what, retryAfter))
	case resp.StatusCode >= 500:
		d := fmt.Sprintf("%s: HTTP %d", what, resp.StatusCode)
		var e apiError
		if json.Unmarshal(data, &e) == nil && e.ErrorCode != "" {
			d += " " + e.ErrorCode + ": " + e.Message
		}
		return faulted(paykit.OutcomeUnacknowledged, d+retryAfter)
	}
	var head map[string]json.RawMessage
	if json.Unmarshal(data, &head) != nil || head == nil {
		// Not Xendit's JSON (a proxy's page, a foreign 404): it says nothing.
		return faulted(paykit.OutcomeUnknown, fmt.Sprintf("%s: HTTP %d answer is not Xendit's JSON", what, resp.StatusCode))
	}
	rep := reply{status: resp.StatusCode, body: data}
	if _, ok := head["error_code"]; ok {
		var e apiError
		if json.Unmarshal(data, &e) != nil || e.ErrorCode == "" {
			return faulted(paykit.OutcomeUnknown, fmt.Sprintf("%s: HTTP %d with an unreadable error object", what, resp.StatusCode))
		}
		rep.err = &e
		return rep
	}
	if resp.StatusCode >= 300 {
		return faulted(paykit.OutcomeUnknown, fmt.Sprintf("%s: HTTP %d without Xendit's error object", what, resp.StatusCode))
	}
	return rep
}

func faulted(o paykit.Outcome, detail string) reply {
	return reply{fault: &paykit.Result{Outcome: o, Detail: detail}}
}

// transportOutcome classifies a failed round trip: a timeout after the
// request went out is Unknown; a refused or dropped connection is
// Unacknowledged (the attempt may exist: paykit retries with the key).
func transportOutcome(ctx context.Context, err error) paykit.Outcome {
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded) || ctx.Err() != nil || (errors.As(err, &ne) && ne.Timeout()) {
		return paykit.OutcomeUnknown
	}
	return paykit.OutcomeUnacknowledged
}

// errorDetail is the Detail of Xendit's error object.
func (r reply) errorDetail() string {
	return fmt.Sprintf("xendit: HTTP %d %s: %s", r.status, r.err.ErrorCode, r.err.Message)
}

// notFound reports whether r is Xendit's word that the object does not
// exist.
func (r reply) notFound() bool {
	return r.err != nil && r.status == http.StatusNotFound && (r.err.ErrorCode == "DATA_NOT_FOUND" || strings.HasSuffix(r.err.ErrorCode, "NOT_FOUND"))
}

// errorResult classifies Xendit's error object answering a call about an
// existing object: its not-found is NotFound; anything else says nothing
// of the object's state.
func (r reply) errorResult() paykit.Result {
	if r.notFound() {
		return paykit.Result{Outcome: paykit.OutcomeNotFound, Detail: r.errorDetail()}
	}
	return paykit.Result{Outcome: paykit.OutcomeUnknown, Detail: r.errorDetail()}
}

// refusedCreate reports whether Xendit's error object answering a create
// means that nothing was created: the request failed validation or
// authentication (400 API_VALIDATION_ERROR or INVALID_VALUE_ERROR, 401,
// 403).
func (r reply) refusedCreate() bool {
	switch {
	case r.status == http.StatusUnauthorized || r.status == http.StatusForbidden:
		return true
	case r.status == http.StatusBadRequest:
		switch r.err.ErrorCode {
		case "API_VALIDATION_ERROR", "INVALID_VALUE_ERROR", "INVALID_JSON_FORMAT", "CHANNEL_CODE_NOT_SUPPORTED_ERROR",
			"RECIPIENT_AMOUNT_ERROR", "MAXIMUM_TRANSFER_LIMIT_ERROR", "CHANNEL_NOT_ACTIVATED", "CURRENCY_NOT_SUPPORTED":
			return true
		}
	}
	return false
}

// get reads the object at path, or returns the Result the call ends with.
func (p *Provider) get(ctx context.Context, path string, query url.Values, version bool) ([]byte, *paykit.Result) {
	r := p.do(ctx, request{method: http.MethodGet, path: path, query: query, version: version})
	switch {
	case r.fault != nil:
		return nil, r.fault
	case r.err != nil:
		res := r.errorResult()
		return nil, &res
	}
	return r.body, nil
}

// withTimeout bounds one adapter call.
func (p *Provider) withTimeout(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, p.timeout)
}

// list is Xendit's list envelope.
type list struct {
	Data    []json.RawMessage `json:"data"`
	HasMore bool              `json:"has_more"`
}

// byReference lists the objects at path whose reference_id is key, and
// returns them, or the Result the call ends with.
func (p *Provider) byReference(ctx context.Context, path, key string, version bool) ([]json.RawMessage, *paykit.Result) {
	body, end := p.get(ctx, path, url.Values{"reference_id": {key}}, version)
	if end != nil {
		if end.Outcome == paykit.OutcomeNotFound {
			// A list answers a list; a not-found here is no word about key.
			end.Outcome = paykit.OutcomeUnknown
		}
		return nil, end
	}
	var l list
	if err := json.Unmarshal(body, &l); err != nil || l.Data == nil {
		return nil, &paykit.Result{Outcome: paykit.OutcomeUnknown, Detail: "xendit: GET " + path + ": the answer is not a list"}
	}
	var out []json.RawMessage
	for _, raw := range l.Data {
		var m struct {
			ReferenceID string `json:"reference_id"`
		}
		if json.Unmarshal(raw, &m) == nil && m.ReferenceID == key {
			out = append(out, raw)
		}
	}
	return out, nil
}

// missingByKey is the answer when a list by reference_id finds nothing
// under key: a list may not show an object just made, so it is not
// Xendit's word that nothing exists (OutcomeNotFound comes only from a
// 404 on an id). paykit recovers such an attempt by sending its create
// again under the key, which looks for it first.
func missingByKey(what, key string) paykit.Result {
	return paykit.Result{Outcome: paykit.OutcomeUnknown, Detail: fmt.Sprintf("xendit: no %s with reference_id %s is listed", what, key)}
}

// tokenDigest is the digest callback tokens are compared by, so that the
// comparison takes the same time whatever the tokens' lengths.
func tokenDigest(tok string) [32]byte { return sha256.Sum256([]byte(tok)) }

// find reads the object of ref at path: by its id (path/{Reference})
// when ref has one, else the first made of those listed under reference_id
// Key (what names it in the answer when none is listed).
func (p *Provider) find(ctx context.Context, path string, ref paykit.AttemptRef, what string, version bool) (json.RawMessage, *paykit.Result) {
	if ref.Reference != "" {
		body, end := p.get(ctx, path+"/"+url.PathEscape(ref.Reference), nil, version)
		return body, end
	}
	found, end := p.byReference(ctx, path, ref.Key, version)
	switch {
	case end != nil:
		return nil, end
	case len(found) == 0:
		res := missingByKey(what, ref.Key)
		return nil, &res
	}
	return oldest(found), nil
}
