package httpadapter

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"net/http"
	"net/url"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/internal/newid"
	"github.com/paykit/paykit/internal/telemetry"
	"github.com/paykit/paykit/internal/wire"
)

// api is what the merchant and operator APIs share: routing, the request
// envelope (Request-Id, recovery, access log, metrics) and error rendering.
type api struct {
	svc       *paykit.Service
	name      string // "merchant" or "operator": a log attribute and metric label
	challenge string // WWW-Authenticate value of every 401
	log       *slog.Logger
	metrics   *metrics // nil: no metrics
	tracing   tracing
	mux       *http.ServeMux
	patterns  []string // registered route patterns, in order
	methods   []string // the distinct methods of patterns

	// errorPage, when set, renders errors instead of the JSON error body
	// (the payer pages answer in HTML).
	errorPage func(w http.ResponseWriter, r *http.Request, status int, e *paykit.Error)
	// logPath, when set, is the path the access log shows instead of the
	// requested one (the payer pages mask the tokens in their paths).
	logPath func(path string) string
}

func newAPI(svc *paykit.Service, name, challenge string, log *slog.Logger, m *metrics) *api {
	a := &api{svc: svc, name: name, challenge: challenge, log: telemetry.Logger(log), metrics: m, tracing: newTracing(svc),
		mux: http.NewServeMux()}
	// Every request no route takes is an error: 405 with Allow for a known
	// path with another method, else 404. (The mux would answer 405 itself,
	// in plain text; this route takes its place.)
	a.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if allow := a.allowedMethods(r); len(allow) > 0 {
			list := strings.Join(allow, ", ")
			w.Header().Set("Allow", list)
			a.writeError(w, r, errorf(paykit.CodeMethodNotAllowed, "",
				"The method %s is not allowed for %s; allowed: %s.", r.Method, r.URL.Path, list))
			return
		}
		a.writeError(w, r, errUnknownRoute(r))
	})
	return a
}

// allowedMethods returns the methods some route takes for r's path, sorted
// as the Allow header lists them (HEAD with GET, which ServeMux serves for
// it); none for an unknown path. It asks the mux which pattern each method
// would match.
func (a *api) allowedMethods(r *http.Request) []string {
	var allow []string
	probe := r.WithContext(r.Context()) // a shallow copy
	for _, m := range a.methods {
		probe.Method = m
		if _, pattern := a.mux.Handler(probe); slices.Contains(a.patterns, pattern) {
			allow = append(allow, m)
			if m == http.MethodGet {
				allow = append(allow, http.MethodHead)
			}
		}
	}
	slices.Sort(allow)
	return slices.Compact(allow)
}

// errUnknownRoute is the 404 of a request no route takes.
func errUnknownRoute(r *http.Request) error {
	return errorf(paykit.CodeNotFound, "", "Unrecognized request URL (%s %s).", r.Method, r.URL.Path)
}

// handlerFunc is a route handler; a returned error is rendered as the
// contract's error body.
type handlerFunc func(w http.ResponseWriter, r *http.Request) error

// handle registers h for a ServeMux pattern ("GET /payment_intents/{id}").
// Before h runs, the path and query parameters must be text (checkText).
func (a *api) handle(pattern string, h handlerFunc) {
	a.patterns = append(a.patterns, pattern)
	if method, _, ok := strings.Cut(pattern, " "); ok && !slices.Contains(a.methods, method) {
		a.methods = append(a.methods, method)
	}
	wildcards := patternWildcards(pattern)
	a.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		requestInfoFrom(r.Context()).route = pattern
		err := checkText(r, wildcards)
		if err == nil {
			err = h(w, r)
		}
		if err != nil {
			a.writeError(w, r, err)
		}
	})
}

// patternWildcards returns the names of a pattern's wildcards ("id" of
// "GET /payment_intents/{id}").
func patternWildcards(pattern string) []string {
	var names []string
	for seg := range strings.SplitSeq(pattern, "/") {
		if name, ok := strings.CutPrefix(seg, "{"); ok {
			name, _ = strings.CutSuffix(name, "}")
			name, _ = strings.CutSuffix(name, "...")
			if name != "$" {
				names = append(names, name)
			}
		}
	}
	return names
}

// checkText refuses a request whose path parameters or query parameters
// are not text paykit accepts (wire.ValidText: UTF-8 without NUL), as
// 400 invalid_request naming the parameter, before any handler reads them.
// Body members are checked where bodies are decoded (decodeJSON, the payer
// form), credentials by authentication (401), the Idempotency-Key by its
// own printable-ASCII rule.
func checkText(r *http.Request, wildcards []string) error {
	for _, name := range wildcards {
		if !wire.ValidText(r.PathValue(name)) {
			return invalidRequest(name, "The path parameter %s must be UTF-8 text without NUL characters.", name)
		}
	}
	return checkValues(r.URL.Query(), "query parameter")
}

// checkValues refuses names or values (query parameters, form fields) that
// are not wire.ValidText, naming the parameter; what says what they are.
func checkValues(values url.Values, what string) error {
	for _, name := range slices.Sorted(maps.Keys(values)) {
		if !wire.ValidText(name) {
			return invalidRequest("", "A %s name must be UTF-8 text without NUL characters.", what)
		}
		for _, v := range values[name] {
			if !wire.ValidText(v) {
				return invalidRequest(name, "The %s %s must be UTF-8 text without NUL characters.", what, name)
			}
		}
	}
	return nil
}

// requestInfo is the mutable per-request record that the envelope creates
// and the inner layers fill in, so that the access log and metrics see the
// route, the caller and the error.
type requestInfo struct {
	id        string
	route     string // matched pattern; "" when no route matched
	principal *paykit.Principal
	actor     string // operator name
	err       *paykit.Error
}

type infoKey struct{}

// requestInfoFrom returns the request's info; a fresh one outside the
// envelope (never nil).
func requestInfoFrom(ctx context.Context) *requestInfo {
	if info, ok := ctx.Value(infoKey{}).(*requestInfo); ok {
		return info
	}
	return &requestInfo{}
}

// ServeHTTP is the envelope around every request: Request-Id, panic
// recovery, access log and metrics.
func (a *api) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	// One allocation for both: they live as long as the request.
	env := &struct {
		info requestInfo
		sw   statusWriter
	}{requestInfo{id: newid.Random("req")}, statusWriter{ResponseWriter: w}}
	info, sw := &env.info, &env.sw
	w.Header().Set("Request-Id", info.id)
	ctx, span := a.tracing.start(r)
	r = r.WithContext(context.WithValue(ctx, infoKey{}, info))
	defer func() {
		a.observe(r, sw.code(), info, time.Since(start))
		span.End()
	}()
	defer a.recoverPanic(sw, r)
	a.mux.ServeHTTP(sw, r)
}

// recoverPanic turns a handler panic into a 500 (when nothing was written
// yet) so that no panic leaves the handler.
func (a *api) recoverPanic(w *statusWriter, r *http.Request) {
	v := recover()
	if v == nil {
		return
	}
	a.log.ErrorContext(r.Context(), "panic serving request", "api", a.name,
		"request_id", requestInfoFrom(r.Context()).id, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
	if !w.wrote {
		a.writeError(w, r, internalError(fmt.Errorf("panic: %v", v)))
	}
}

// statusClientGone is the status the access log and the metrics record, as
// nginx does (499), for a request whose client went away before the answer:
// nobody received a status, and the failure the cancellation caused (a
// cancelled Store or Provider call) is not the service's.
const statusClientGone = 499

// observe writes the access log line and the metrics of one request. It
// logs no header, query string or body: credentials and cursors stay out.
func (a *api) observe(r *http.Request, status int, info *requestInfo, d time.Duration) {
	route := info.route
	if route == "" {
		route = "unmatched"
	}
	// The server cancels the request's context when the client's connection
	// closes: the 5xx that follows is the client's doing.
	gone := status >= 500 && errors.Is(r.Context().Err(), context.Canceled)
	if gone {
		status = statusClientGone
	}
	path := requestPath(r)
	if a.logPath != nil {
		path = a.logPath(path)
	}
	if a.metrics != nil {
		a.metrics.observe(a.name, route, status, d)
	}
	a.tracing.end(r.Context(), r, info.route, path, status, info, d)
	attrs := append(make([]slog.Attr, 0, 13), // room for all: on the stack
		slog.String("api", a.name),
		slog.String("method", r.Method),
		slog.String("path", path),
		slog.String("route", route),
		slog.Int("status", status),
		slog.Duration("duration", d),
		slog.String("request_id", info.id),
	)
	if p := info.principal; p != nil {
		attrs = append(attrs, slog.String("merchant_id", p.MerchantID), slog.String("key_id", p.KeyID),
			slog.String("environment", string(p.Environment)))
	}
	if info.actor != "" {
		attrs = append(attrs, slog.String("actor", info.actor))
	}
	level := slog.LevelInfo
	switch e := info.err; {
	case gone:
		level = slog.LevelWarn
		attrs = append(attrs, slog.String("error", "client disconnected"))
	case e != nil:
		attrs = append(attrs, slog.String("error_code", e.Code))
		if status >= 500 {
			level = slog.LevelError
			if e.Err != nil {
				attrs = append(attrs, slog.String("error", e.Err.Error()))
			}
		}
	}
	a.log.LogAttrs(r.Context(), level, "http request", attrs...)
}

// requestPath is the path the client asked for (before any StripPrefix),
// without the query string.
func requestPath(r *http.Request) string {
	if p, _, _ := strings.Cut(r.RequestURI, "?"); strings.HasPrefix(p, "/") {
		return p
	}
	return r.URL.Path
}

// writeJSON writes v's projection as a JSON response with status.
func (a *api) writeJSON(w http.ResponseWriter, r *http.Request, status int, v any) {
	buf := bodyBuffers.Get().(*bytes.Buffer)
	defer putBodyBuffer(buf)
	// json.Marshal of the projection, and the newline writeBody ends with.
	if err := json.NewEncoder(buf).Encode(project(v, a.svc.Now)); err != nil {
		a.writeError(w, r, internalError(fmt.Errorf("encode response: %w", err)))
		return
	}
	writeBody(w, status, buf.Bytes())
}

// bodyBuffers holds the buffers responses are encoded into.
var bodyBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

func putBodyBuffer(buf *bytes.Buffer) {
	if buf.Cap() > 64<<10 {
		return // a large list's: let it go
	}
	buf.Reset()
	bodyBuffers.Put(buf)
}

// answerStatus is the HTTP status of each kind of answer.
var answerStatus = map[paykit.AnswerKind]int{
	paykit.AnswerCreated:  http.StatusCreated,
	paykit.AnswerAccepted: http.StatusAccepted,
	paykit.AnswerDone:     http.StatusOK,
}

// writeAnswer writes the answer of an idempotent operation: the status of
// its kind and the projection of v. A replay renders the resource as it was
// answered, so it is byte for byte the first answer, and carries
// Idempotent-Replayed: true.
func (a *api) writeAnswer(w http.ResponseWriter, r *http.Request, v any, ans paykit.Answer) {
	if ans.Replayed {
		w.Header().Set("Idempotent-Replayed", "true")
	}
	status, ok := answerStatus[ans.Kind]
	if !ok {
		a.writeError(w, r, internalError(fmt.Errorf("answer of unknown kind %q", ans.Kind)))
		return
	}
	a.writeJSON(w, r, status, v)
}

// writeBody writes a JSON body followed by a newline.
func writeBody(w http.ResponseWriter, status int, body []byte) {
	body = bytes.TrimRight(body, "\n")
	// As Header.Set would, with the three values in one allocation.
	v := []string{"application/json", "no-store", strconv.Itoa(len(body) + 1)}
	h := w.Header()
	h["Content-Type"], h["Cache-Control"], h["Content-Length"] = v[0:1:1], v[1:2:2], v[2:3:3]
	w.WriteHeader(status)
	if cap(body) > len(body) && body[:len(body)+1][len(body)] == '\n' {
		_, _ = w.Write(body[:len(body)+1]) // the newline trimmed off: one write
		return
	}
	_, _ = w.Write(body)
	_, _ = w.Write(newline)
}

var newline = []byte{'\n'}

// errorBody is the contract's error shape.
type errorBody struct {
	Error errorDetail `json:"error"`
}

type errorDetail struct {
	Code      string `json:"code"`
	Message   string `json:"message"`
	Param     string `json:"param,omitempty"`
	RequestID string `json:"request_id"`
}

// writeError renders err: a *paykit.Error with its status and code,
// anything else as internal_error. A 500 never carries detail.
func (a *api) writeError(w http.ResponseWriter, r *http.Request, err error) {
	e := paykit.AsError(err)
	info := requestInfoFrom(r.Context())
	info.err = e
	status := StatusForCode(e.Code)
	if e.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(e.RetryAfter.Seconds()))))
	}
	if a.errorPage != nil {
		a.errorPage(w, r, status, e)
		return
	}
	detail := errorDetail{Code: e.Code, Message: e.Message, Param: e.Param, RequestID: info.id}
	if status == http.StatusInternalServerError {
		generic := internalError(nil)
		detail = errorDetail{Code: generic.Code, Message: generic.Message, RequestID: info.id}
	}
	h := w.Header()
	if status == http.StatusUnauthorized {
		h.Set("WWW-Authenticate", a.challenge)
	}
	body, _ := json.Marshal(errorBody{detail}) // strings only: cannot fail
	writeBody(w, status, body)
}

// statusWriter remembers the status written through it.
type statusWriter struct {
	http.ResponseWriter
	status int
	wrote  bool
}

func (w *statusWriter) WriteHeader(code int) {
	if !w.wrote {
		w.status, w.wrote = code, true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if !w.wrote {
		w.status, w.wrote = http.StatusOK, true
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *statusWriter) code() int {
	if !w.wrote {
		return http.StatusOK
	}
	return w.status
}
