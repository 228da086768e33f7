package send

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/matryer/is"
	"github.com/paykit/paykit/internal/webhooks"
)

// counting starts a loopback server running h and counts its requests.
func counting(t *testing.T, h http.HandlerFunc) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		h(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

func testClient() *http.Client {
	return NewClientWith(ClientOptions{Live: false, Timeout: 2 * time.Second})
}

func signedHeaders(t *testing.T, body []byte) http.Header {
	t.Helper()
	h, err := Headers([]string{newTestSecret(t)}, "evt_deliver", time.Now(), body)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestDeliverSuccess(t *testing.T) {
	is := is.New(t)
	body := []byte(`{"id":"evt_deliver","object":"event"}`)
	header := signedHeaders(t, body)
	var got struct {
		method, ct, ua, id, sig string
		body                    []byte
	}
	srv, n := counting(t, func(w http.ResponseWriter, r *http.Request) {
		got.method, got.ct, got.ua = r.Method, r.Header.Get("Content-Type"), r.Header.Get("User-Agent")
		got.id, got.sig = r.Header.Get("webhook-id"), r.Header.Get("webhook-signature")
		got.body, _ = io.ReadAll(r.Body)
		w.WriteHeader(http.StatusAccepted)
		io.WriteString(w, "thanks")
	})

	a := Deliver(context.Background(), testClient(), srv.URL+"/hook", header, body)
	is.Equal(a.Err, "")
	is.Equal(a.StatusCode, http.StatusAccepted)
	is.True(a.Succeeded())
	is.True(!a.Gone())
	is.Equal(a.Response, "thanks")
	is.True(a.Latency > 0)
	is.Equal(a.RetryAfter, time.Duration(0))
	is.Equal(n.Load(), int64(1))
	is.Equal(got.method, http.MethodPost)
	is.Equal(got.ct, "application/json")
	is.Equal(got.ua, webhooks.UserAgent)
	is.Equal(got.id, "evt_deliver")
	is.Equal(got.sig, header.Get("webhook-signature"))
	is.Equal(string(got.body), string(body))
}

func TestDeliverRedirectNotFollowed(t *testing.T) {
	is := is.New(t)
	target, targetHits := counting(t, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
	})
	srv, hits := counting(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.URL+"/elsewhere", http.StatusFound)
	})
	body := []byte(`{}`)
	a := Deliver(context.Background(), testClient(), srv.URL, signedHeaders(t, body), body)
	is.Equal(a.Err, "")
	is.Equal(a.StatusCode, http.StatusFound)
	is.True(!a.Succeeded()) // a redirect is a failed attempt
	is.Equal(hits.Load(), int64(1))
	is.Equal(targetHits.Load(), int64(0)) // the redirect target saw nothing
}

func TestDeliverGone(t *testing.T) {
	is := is.New(t)
	srv, _ := counting(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "60") // ignored: not 429/502/503/504
		http.Error(w, "endpoint removed", http.StatusGone)
	})
	a := Deliver(context.Background(), testClient(), srv.URL, nil, []byte(`{}`))
	is.Equal(a.StatusCode, http.StatusGone)
	is.True(a.Gone())
	is.True(!a.Succeeded())
	is.Equal(a.Response, "endpoint removed\n")
	is.Equal(a.RetryAfter, time.Duration(0))
}

func TestDeliverRetryAfter(t *testing.T) {
	cases := []struct {
		status int
		value  string
		want   time.Duration
	}{
		{http.StatusServiceUnavailable, "120", 120 * time.Second},
		{http.StatusTooManyRequests, "5", 5 * time.Second},
		{http.StatusBadGateway, "0", 0},
		{http.StatusGatewayTimeout, "999999999999999999999", webhooks.MaxRetryAfter},
		{http.StatusServiceUnavailable, "soon", 0},
		{http.StatusInternalServerError, "120", 0}, // not a status that carries it
	}
	for _, c := range cases {
		t.Run(http.StatusText(c.status)+" "+c.value, func(t *testing.T) {
			is := is.New(t)
			srv, _ := counting(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Retry-After", c.value)
				w.WriteHeader(c.status)
			})
			a := Deliver(context.Background(), testClient(), srv.URL, nil, []byte(`{}`))
			is.Equal(a.Err, "")
			is.Equal(a.StatusCode, c.status)
			is.True(!a.Succeeded())
			is.Equal(a.RetryAfter, c.want)
		})
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 24, 4, 0, 0, 0, time.UTC)
	cases := []struct {
		v    string
		want time.Duration
	}{
		{"", 0},
		{"120", 120 * time.Second},
		{" 7 ", 7 * time.Second},
		{"-1", 0},
		{"1.5", 0},
		{"12abc", 0},
		{"86400", 24 * time.Hour},
		{"86401", webhooks.MaxRetryAfter},
		{"Tue, 24 Nov 2026 04:02:00 GMT", 2 * time.Minute},
		{"Tuesday, 24-Nov-26 04:00:30 GMT", 30 * time.Second},
		{"Tue, 24 Nov 2026 03:00:00 GMT", 0}, // in the past
		{"Fri, 27 Nov 2026 04:00:00 GMT", webhooks.MaxRetryAfter},
		{"garbage", 0},
	}
	for _, c := range cases {
		if got := parseRetryAfter(c.v, now); got != c.want {
			t.Errorf("parseRetryAfter(%q) = %v, want %v", c.v, got, c.want)
		}
	}
}

func TestDeliverTimeout(t *testing.T) {
	is := is.New(t)
	release := make(chan struct{})
	srv, hits := counting(t, func(w http.ResponseWriter, r *http.Request) {
		select { // never answers
		case <-release:
		case <-r.Context().Done():
		}
	})
	t.Cleanup(func() { close(release) }) // runs before srv.Close
	client := NewClientWith(ClientOptions{Timeout: 200 * time.Millisecond})
	start := time.Now()
	a := Deliver(context.Background(), client, srv.URL, nil, []byte(`{}`))
	elapsed := time.Since(start)
	t.Logf("attempt: %+v", a)
	is.Equal(a.StatusCode, 0)
	is.True(!a.Succeeded())
	is.True(a.Err != "")
	is.True(strings.Contains(a.Err, "Client.Timeout exceeded") || strings.Contains(a.Err, "timeout"))
	is.True(!strings.Contains(a.Err, srv.URL)) // the URL prefix is dropped
	is.True(a.Latency >= 200*time.Millisecond)
	is.True(elapsed < 2*time.Second)
	is.Equal(hits.Load(), int64(1))
}

func TestDeliverContextCancelled(t *testing.T) {
	is := is.New(t)
	srv, hits := counting(t, func(w http.ResponseWriter, r *http.Request) {})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	a := Deliver(ctx, testClient(), srv.URL, nil, nil)
	is.Equal(a.StatusCode, 0)
	is.True(strings.Contains(a.Err, "canceled"))
	is.Equal(hits.Load(), int64(0))
}

func TestDefaultTimeout(t *testing.T) {
	is := is.New(t)
	is.Equal(NewClient(true).Timeout, 15*time.Second)
	is.Equal(NewClient(false).Timeout, DefaultTimeout)
	tr := NewClient(true).Transport.(*http.Transport)
	is.True(tr.Proxy == nil) // no proxy from the environment
}

func TestLiveClientRefusesLoopback(t *testing.T) {
	is := is.New(t)
	srv, hits := counting(t, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
	})
	client := NewClientWith(ClientOptions{Live: true, Timeout: 2 * time.Second})

	// Straight through the client: the error wraps ErrNotPublic.
	req, err := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader("{}"))
	is.NoErr(err)
	resp, err := client.Do(req)
	if resp != nil {
		resp.Body.Close()
	}
	is.True(errors.Is(err, ErrNotPublic))

	// Through Deliver: the attempt says why.
	a := Deliver(context.Background(), client, srv.URL, nil, []byte(`{}`))
	is.Equal(a.StatusCode, 0)
	is.True(!a.Succeeded())
	t.Logf("attempt: %+v", a)
	is.True(strings.Contains(a.Err, "not public"))
	is.True(strings.Contains(a.Err, "127.0.0.1"))

	// A host name resolving to loopback is checked after resolution too.
	a = Deliver(context.Background(), client, strings.Replace(srv.URL, "127.0.0.1", "localhost", 1), nil, []byte(`{}`))
	is.True(strings.Contains(a.Err, "not public"))

	is.Equal(hits.Load(), int64(0)) // the server saw nothing
}

func TestTestClientConnectsToLoopback(t *testing.T) {
	is := is.New(t)
	srv, hits := counting(t, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNoContent)
	})
	a := Deliver(context.Background(), NewClient(false), srv.URL, nil, []byte(`{}`))
	is.Equal(a.Err, "")
	is.Equal(a.StatusCode, http.StatusNoContent)
	is.True(a.Succeeded())
	is.Equal(hits.Load(), int64(1))
}

// The test client refuses private addresses other than loopback before
// sending anything (10.255.255.1 is never contacted).
func TestTestClientRefusesPrivate(t *testing.T) {
	is := is.New(t)
	a := Deliver(context.Background(), testClient(), "http://10.255.255.1:9/hook", nil, []byte(`{}`))
	is.Equal(a.StatusCode, 0)
	is.True(strings.Contains(a.Err, "not public"))
}

func TestCheckDial(t *testing.T) {
	cases := []struct {
		live    bool
		network string
		addr    string
		ok      bool
	}{
		{true, "tcp4", "93.184.215.14:443", true},
		{true, "tcp6", "[2606:4700:4700::1111]:443", true},
		{true, "tcp4", "127.0.0.1:443", false},
		{true, "tcp6", "[::1]:443", false},
		{true, "tcp4", "10.0.0.1:443", false},
		{true, "tcp4", "169.254.169.254:80", false},
		{true, "tcp6", "[::ffff:127.0.0.1]:80", false},
		{true, "tcp6", "[fe80::1%eth0]:80", false},
		{true, "udp4", "93.184.215.14:443", false},
		{false, "tcp4", "127.0.0.1:8080", true},
		{false, "tcp6", "[::1]:8080", true},
		{false, "tcp4", "93.184.215.14:443", true},
		{false, "tcp4", "10.0.0.1:80", false},
		{false, "tcp4", "192.168.1.10:80", false},
		{false, "tcp4", "169.254.169.254:80", false},
		{false, "tcp4", "100.64.0.1:80", false},
		{false, "tcp6", "[fd00::1]:80", false},
		{false, "tcp4", "0.0.0.0:80", false},
		{false, "tcp4", "not-an-address", false},
	}
	for _, c := range cases {
		err := checkDial(c.live, c.network, c.addr)
		if (err == nil) != c.ok {
			t.Errorf("checkDial(live=%v, %s, %s) = %v, want ok=%v", c.live, c.network, c.addr, err, c.ok)
		}
	}
}

func TestDeliverLimitsResponse(t *testing.T) {
	is := is.New(t)
	big := strings.Repeat("é", 100<<10) // 200 KiB, 2-byte characters
	srv, _ := counting(t, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, "x"+big) // odd offset: 1024 falls inside a character
	})
	a := Deliver(context.Background(), testClient(), srv.URL, nil, nil)
	is.Equal(a.StatusCode, http.StatusBadRequest)
	is.True(utf8.ValidString(a.Response))
	is.True(len(a.Response) <= MaxResponseKept)
	is.True(len(a.Response) >= MaxResponseKept-3)
	is.True(strings.HasPrefix(a.Response, "xéé"))
}

func TestClean(t *testing.T) {
	cases := []struct{ in, want string }{
		{"", ""},
		{"ok", "ok"},
		{"a\xffb", "a\uFFFDb"},
		{"nul\x00", "nul\uFFFD"},
		{"日本", "日本"},
	}
	for _, c := range cases {
		if got := clean(c.in); got != c.want {
			t.Errorf("clean(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	// Replacement characters are longer than the bytes they replace; the
	// result still fits.
	got := clean(strings.Repeat("\xff", 2000))
	if !utf8.ValidString(got) || len(got) > MaxResponseKept || len(got) < MaxResponseKept-3 {
		t.Errorf("clean of invalid bytes: %d bytes, valid=%v", len(got), utf8.ValidString(got))
	}
}
