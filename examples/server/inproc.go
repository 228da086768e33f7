package main

import (
	"bytes"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strings"
	"sync"
	"syscall"
)

// inProcess is an http.RoundTripper that serves each request with a
// handler in this process (one that leaves the request's header as it
// is): the sandbox adapter reaches the PSP mounted on this server without
// a socket and without encoding HTTP, while its
// transport failures read as they would over TCP. The request counts as
// sent once the handler has it (the adapter's httptrace hooks are told
// so); a handler that returns after the caller gave up answers with the
// caller's context error (a timeout after sending); a
// handler that drops the connection (http.ErrAbortHandler, as the PSP does
// when it cannot hijack one) gives a connection reset; after close, calls
// are refused as a stopped server's would be.
type inProcess struct {
	h http.Handler
	// prefix, when set, is stripped from the path as http.StripPrefix
	// would before h (without its copy of the request).
	prefix string

	mu     sync.RWMutex
	closed bool
}

// client is an HTTP client on t that follows no redirects, as the
// adapter's default client.
func (t *inProcess) client() *http.Client {
	return &http.Client{
		Transport: t,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}

// close refuses later calls; calls in progress finish.
func (t *inProcess) close() {
	t.mu.Lock()
	t.closed = true
	t.mu.Unlock()
}

// RoundTrip implements http.RoundTripper.
func (t *inProcess) RoundTrip(req *http.Request) (*http.Response, error) {
	t.mu.RLock()
	closed := t.closed
	t.mu.RUnlock()
	if closed {
		return nil, syscall.ECONNREFUSED
	}
	if err := req.Context().Err(); err != nil {
		return nil, err
	}
	trace := httptrace.ContextClientTrace(req.Context())
	if trace != nil && trace.GotConn != nil {
		trace.GotConn(httptrace.GotConnInfo{})
	}
	// The handler gets a server-side copy of the request, as over TCP,
	// sharing its header: the handler must not change that.
	srvReq := new(http.Request)
	*srvReq = *req
	u := *req.URL
	srvReq.URL = &u
	srvReq.RequestURI = req.URL.RequestURI()
	srvReq.RemoteAddr = "in-process"
	if req.Body == nil {
		srvReq.Body = http.NoBody
	}
	if trace != nil && trace.WroteRequest != nil {
		trace.WroteRequest(httptrace.WroteRequestInfo{})
	}
	w := &recorder{header: http.Header{}, body: bodyBuffers.Get().(*bytes.Buffer)}
	h := t.h
	if t.prefix != "" && !stripPrefix(t.prefix, srvReq.URL) {
		h = http.NotFoundHandler()
	}
	if aborted := serve(h, w, srvReq); aborted {
		putBodyBuffer(w.body)
		return nil, syscall.ECONNRESET
	}
	if err := req.Context().Err(); err != nil {
		// The caller gave up while the handler ran: over TCP it would
		// have had no answer by then either.
		putBodyBuffer(w.body)
		return nil, err
	}
	if !w.wrote {
		w.WriteHeader(http.StatusOK)
	}
	body := &answerBody{buf: w.body}
	body.r.Reset(w.body.Bytes())
	return &http.Response{
		Status: http.StatusText(w.status), StatusCode: w.status,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: w.header, Body: body,
		ContentLength: int64(w.body.Len()), Request: req,
	}, nil
}

// bodyBuffers holds the buffers of answers: an answer's goes back when
// its body is closed.
var bodyBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

func putBodyBuffer(b *bytes.Buffer) {
	if b.Cap() > 64<<10 {
		return
	}
	b.Reset()
	bodyBuffers.Put(b)
}

// answerBody reads an answer's bytes; Close returns its buffer to
// bodyBuffers, and reads after it find nothing more, as on a closed
// connection.
type answerBody struct {
	mu  sync.Mutex
	r   bytes.Reader
	buf *bytes.Buffer
}

func (b *answerBody) Read(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.r.Read(p)
}

func (b *answerBody) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.buf != nil {
		b.r.Reset(nil)
		putBodyBuffer(b.buf)
		b.buf = nil
	}
	return nil
}

// stripPrefix strips prefix from u's path as http.StripPrefix does, and
// reports whether u had it.
func stripPrefix(prefix string, u *url.URL) bool {
	p := strings.TrimPrefix(u.Path, prefix)
	rp := strings.TrimPrefix(u.RawPath, prefix)
	if len(p) < len(u.Path) && (u.RawPath == "" || len(rp) < len(u.RawPath)) {
		u.Path, u.RawPath = p, rp
		return true
	}
	return false
}

// serve runs h and reports whether it aborted the connection: it panicked,
// with http.ErrAbortHandler or anything else (net/http closes the
// connection of a handler that panics).
func serve(h http.Handler, w http.ResponseWriter, r *http.Request) (aborted bool) {
	defer func() {
		if recover() != nil {
			aborted = true
		}
	}()
	h.ServeHTTP(w, r)
	return false
}

// recorder is the ResponseWriter of an in-process call.
type recorder struct {
	header http.Header
	status int
	wrote  bool
	body   *bytes.Buffer
}

func (w *recorder) Header() http.Header { return w.header }

func (w *recorder) WriteHeader(status int) {
	if w.wrote {
		return
	}
	w.status, w.wrote = status, true
}

func (w *recorder) Write(b []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return w.body.Write(b)
}
