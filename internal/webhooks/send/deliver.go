package send

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/paykit/paykit/internal/webhooks"
)

// Limits on what Deliver reads and keeps of a response.
const (
	// MaxResponseRead is how much of a response body Deliver reads.
	MaxResponseRead = 64 << 10
	// MaxResponseKept is the most bytes of the response body (and of an
	// error message) kept in an Attempt.
	MaxResponseKept = 1024
)

// Attempt is the outcome of one delivery attempt, ready to be stored.
type Attempt struct {
	// StatusCode is the HTTP status received, 0 when no response was
	// received (see Err).
	StatusCode int
	// Latency is the time from sending the request to having read the
	// response body (or failing).
	Latency time.Duration
	// Response is the start of the response body: at most MaxResponseKept
	// bytes of valid UTF-8 without NUL characters (invalid bytes and NULs are
	// replaced by U+FFFD), so it can be stored in a text column as is.
	Response string
	// Err says why no response was received (connection refused, timeout,
	// address not public, …), at most MaxResponseKept bytes of valid UTF-8;
	// empty when a response was received, whatever its status.
	Err string
	// RetryAfter is the delay the receiver asked for in a Retry-After header
	// (seconds or an HTTP date), only on 429, 502, 503 and 504, capped at
	// webhooks.MaxRetryAfter; zero otherwise.
	RetryAfter time.Duration
}

// Succeeded reports whether the receiver answered with a 2xx status.
func (a Attempt) Succeeded() bool { return a.StatusCode >= 200 && a.StatusCode <= 299 }

// Gone reports whether the receiver answered 410 Gone, after which the
// endpoint is to be disabled.
func (a Attempt) Gone() bool { return a.StatusCode == http.StatusGone }

// Deliver POSTs body with header (normally from Headers) to url with client
// (normally from NewClient) and reports the outcome; it never follows
// redirects by itself, and reads at most MaxResponseRead bytes of the
// response. Any response counts as received, whatever its status; an error
// while reading the body after the status arrived is ignored (the status is
// the receiver's answer). The client's timeout and ctx both bound the attempt.
func Deliver(ctx context.Context, client *http.Client, url string, header http.Header, body []byte) Attempt {
	start := time.Now()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return Attempt{Err: clean(err.Error())}
	}
	for k, v := range header {
		req.Header[k] = append([]string(nil), v...)
	}
	resp, err := client.Do(req)
	if err != nil {
		return Attempt{Latency: time.Since(start), Err: clean(describe(err))}
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, MaxResponseRead))
	resp.Body.Close()
	a := Attempt{
		StatusCode: resp.StatusCode,
		Latency:    time.Since(start),
		Response:   clean(string(b)),
	}
	switch resp.StatusCode {
	case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		a.RetryAfter = parseRetryAfter(resp.Header.Get("Retry-After"), time.Now())
	}
	return a
}

// describe drops the `Post "url": ` prefix of client errors (the URL is known)
// and marks timeouts.
func describe(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		msg := ue.Err.Error()
		if ue.Timeout() && !strings.Contains(msg, "timeout") && !strings.Contains(msg, "deadline") {
			msg = "timeout: " + msg
		}
		return msg
	}
	return err.Error()
}

// clean returns the longest prefix of s of at most MaxResponseKept bytes, with
// invalid UTF-8 and NUL replaced by U+FFFD, cut at a character boundary.
func clean(s string) string {
	var sb strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == 0 {
			r = utf8.RuneError
		}
		if sb.Len()+utf8.RuneLen(r) > MaxResponseKept {
			break
		}
		sb.WriteRune(r)
		i += size
	}
	return sb.String()
}

// parseRetryAfter reads a Retry-After value, delay-seconds or an HTTP date
// relative to now, as a non-negative duration capped at webhooks.MaxRetryAfter; zero
// when absent or malformed.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if n, err := strconv.ParseUint(v, 10, 64); err == nil {
		if n >= uint64(webhooks.MaxRetryAfter/time.Second) {
			return webhooks.MaxRetryAfter
		}
		return time.Duration(n) * time.Second
	} else if v[0] >= '0' && v[0] <= '9' {
		// Digits that overflow uint64 (or trailing garbage after digits).
		if strings.Trim(v, "0123456789") == "" {
			return webhooks.MaxRetryAfter
		}
		return 0
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0
	}
	d := t.Sub(now)
	if d <= 0 {
		return 0
	}
	return min(d, webhooks.MaxRetryAfter)
}
