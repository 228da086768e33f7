package httpadapter

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"embed"
	"encoding/base64"
	"encoding/hex"
	"html/template"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/time/rate"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/internal/adapterhooks"
	"github.com/paykit/paykit/internal/newid"
	"github.com/paykit/paykit/internal/wire"
)

// The operator dashboard: server-rendered pages (html/template, no script)
// over the Service's Go API, for the people who approve payouts, look after
// merchants and webhooks, and watch background work.
//
// Sessions are stateless: the cookie carries the session id, the operator's
// name and the expiry, signed with HMAC-SHA256 under a key derived from
// DashboardOptions.SessionKey, so every instance sharing that key (as
// instances on one PostgreSQL database share the signing key) accepts it.
// Sign-out ends the session in the Store (adapterhooks.EndOperatorSession),
// so every instance, and this one after a restart, refuses the cookie from
// then on. Removing an operator's token ends its sessions everywhere.
//
// Every form carries a CSRF token (HMAC of the session id; at sign-in, of a
// short-lived pre-session cookie) compared in constant time. Wrong tokens
// at sign-in are rate limited per client address (RemoteAddr: behind a
// proxy, all clients share the proxy's bucket).

// DashboardOptions configures the operator dashboard.
type DashboardOptions struct {
	// Tokens maps an operator's name to the token it signs in with, as
	// OperatorOptions.Tokens. Without a non-empty token no one signs in.
	Tokens map[string]string
	// SessionKey signs session cookies; instances serving one dashboard
	// need the same key (examples/server passes the Service's signing key;
	// the dashboard derives its own key from it). Empty: a random key per
	// process, so sessions end with the process.
	SessionKey []byte
	// SecureCookie marks the cookies Secure: set it when the public URL is
	// https.
	SecureCookie bool
	// SessionTTL is how long a session lasts from sign-in; default 8 hours.
	SessionTTL time.Duration
	// Logger receives one access-log line per request; default
	// slog.Default().
	Logger *slog.Logger
	// Registerer receives the HTTP request metrics (api="dashboard"); nil
	// records none.
	Registerer prometheus.Registerer
}

// DefaultSessionTTL is how long a dashboard session lasts by default.
const DefaultSessionTTL = 8 * time.Hour

// Sign-in rate limit: a client address may give signInBurst wrong tokens
// at once, then one per signInEvery.
const (
	signInBurst = 5
	signInEvery = 12 * time.Second
)

const (
	sessionCookie    = "paykit_dashboard"
	preSessionCookie = "paykit_dashboard_signin"
	preSessionTTL    = 30 * time.Minute
	maxDashFormBytes = 64 << 10
)

// dashboard serves the operator dashboard.
type dashboard struct {
	*api
	tokens []operatorToken
	key    []byte
	secure bool
	ttl    time.Duration

	mu    sync.Mutex
	wrong map[string]*rate.Limiter
}

// NewDashboard returns the operator dashboard as an http.Handler with
// paths relative to its mount point (examples/server mounts it at
// /dashboard with http.StripPrefix; links are made from the mount point
// the request shows, so any mount point works).
//
// Every answer is HTML (or the stylesheet) with strict security headers:
// a Content-Security-Policy that allows only the dashboard's own
// stylesheet (no script, no inline style, no framing), no Referer, no
// caching. Pages other than sign-in need a session; without one a request
// is sent to sign-in (303) and nothing is done. Every action is done
// through the Service with the actor "dashboard:<operator>:<session id>",
// so the audit log names the session.
func NewDashboard(svc *paykit.Service, opts DashboardOptions) http.Handler {
	d := &dashboard{
		api:    newAPI(svc, "dashboard", "", opts.Logger, newMetrics(opts.Registerer)),
		secure: opts.SecureCookie,
		ttl:    opts.SessionTTL,
		wrong:  map[string]*rate.Limiter{},
	}
	if d.ttl <= 0 {
		d.ttl = DefaultSessionTTL
	}
	secret := opts.SessionKey
	if len(secret) == 0 {
		secret = make([]byte, 32)
		_, _ = rand.Read(secret)
	}
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte("paykit dashboard session key"))
	d.key = mac.Sum(nil)
	for _, name := range slices.Sorted(maps.Keys(opts.Tokens)) {
		if token := opts.Tokens[name]; token != "" && validOperatorName(name) {
			d.tokens = append(d.tokens, operatorToken{name, sha256.Sum256([]byte(token))})
		}
	}
	d.errorPage = d.renderError
	d.handle("GET /static/dash.css", d.stylesheet)
	d.handle("GET /signin", d.signInPage)
	d.handle("POST /signin", d.signIn)
	d.handle("POST /signout", d.authed(d.signOut))
	d.routePages()
	return d
}

// validOperatorName keeps names the session cookie can carry.
func validOperatorName(name string) bool {
	return name != "" && wire.ValidText(name) && !strings.ContainsAny(name, "\n|")
}

// dashCSP is the Content-Security-Policy of every dashboard answer.
const dashCSP = "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// ServeHTTP sets the security headers of every answer, then serves the
// request in the shared envelope (Request-Id, recovery, access log,
// metrics).
func (d *dashboard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", dashCSP)
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Cache-Control", "no-store")
	d.api.ServeHTTP(w, r)
}

func (d *dashboard) stylesheet(w http.ResponseWriter, _ *http.Request) error {
	h := w.Header()
	h.Set("Content-Type", "text/css; charset=utf-8")
	h.Set("Cache-Control", "private, max-age=300")
	h.Set("Content-Length", strconv.Itoa(len(dashCSS)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(dashCSS)
	return nil
}

// base is the dashboard's mount point as the request shows it: the
// requested path less the path the handler sees ("/dashboard").
func base(r *http.Request) string {
	full := requestPath(r)
	if b, ok := strings.CutSuffix(full, r.URL.Path); ok {
		return b
	}
	return ""
}

// session is a signed-in operator's session.
type session struct {
	ID       string
	Operator string
	Expires  time.Time
}

// actor is the audit actor of everything done in the session.
func (s *session) actor() string { return "dashboard:" + s.Operator + ":" + s.ID }

func (d *dashboard) sign(purpose, value string) []byte {
	mac := hmac.New(sha256.New, d.key)
	mac.Write([]byte(purpose + "\n" + value))
	return mac.Sum(nil)
}

// encodeSession is the cookie value of s: payload.mac, both base64url.
func (d *dashboard) encodeSession(s *session) string {
	payload := s.ID + "|" + s.Operator + "|" + strconv.FormatInt(s.Expires.UnixMilli(), 10)
	return base64.RawURLEncoding.EncodeToString([]byte(payload)) + "." +
		base64.RawURLEncoding.EncodeToString(d.sign("session", payload))
}

// session returns the request's live session, or nil.
func (d *dashboard) session(r *http.Request) *session {
	c, err := r.Cookie(sessionCookie)
	if err != nil {
		return nil
	}
	p64, m64, ok := strings.Cut(c.Value, ".")
	if !ok {
		return nil
	}
	payload, err1 := base64.RawURLEncoding.DecodeString(p64)
	mac, err2 := base64.RawURLEncoding.DecodeString(m64)
	if err1 != nil || err2 != nil || !hmac.Equal(mac, d.sign("session", string(payload))) {
		return nil
	}
	parts := strings.Split(string(payload), "|")
	if len(parts) != 3 {
		return nil
	}
	ms, err := strconv.ParseInt(parts[2], 10, 64)
	if err != nil {
		return nil
	}
	s := &session{ID: parts[0], Operator: parts[1], Expires: time.UnixMilli(ms).UTC()}
	if !d.svc.Now().Before(s.Expires) || !slices.ContainsFunc(d.tokens, func(t operatorToken) bool { return t.actor == s.Operator }) {
		return nil
	}
	// Ended by a sign-out on any instance (or the Store cannot tell: no
	// session, to be safe).
	if ended, err := adapterhooks.OperatorSessionEnded(d.svc, r.Context(), s.ID); err != nil || ended {
		return nil
	}
	return s
}

// csrf is the CSRF token of a session.
func (d *dashboard) csrf(s *session) string { return hex.EncodeToString(d.sign("csrf", s.ID)) }

// checkCSRF compares a form's token with want in constant time.
func checkCSRF(r *http.Request, want string) bool {
	got := r.PostFormValue("csrf")
	return got != "" && subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}

// errCSRF is the answer to a form without the session's CSRF token.
var errCSRF = errorf("forbidden", "", "This form has expired or did not come from the dashboard. Go back, reload the page and try again.")

// parseForm reads a POST form of at most maxDashFormBytes whose names and
// values are text.
func parseForm(w http.ResponseWriter, r *http.Request) error {
	r.Body = http.MaxBytesReader(w, r.Body, maxDashFormBytes)
	if err := r.ParseForm(); err != nil {
		return invalidRequest("", "The form could not be read.")
	}
	return checkValues(r.PostForm, "form field")
}

// authed serves next only within a live session; without one it sends
// the browser to sign-in. A POST must carry the session's CSRF token, or
// is refused with 403.
func (d *dashboard) authed(next func(w http.ResponseWriter, r *http.Request, s *session) error) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		s := d.session(r)
		if s == nil {
			redirect(w, base(r)+"/signin")
			return nil
		}
		requestInfoFrom(r.Context()).actor = s.actor()
		if r.Method == http.MethodPost {
			if err := parseForm(w, r); err != nil {
				return err
			}
			if !checkCSRF(r, d.csrf(s)) {
				return errCSRF
			}
		}
		return next(w, r, s)
	}
}

// signInPage shows the sign-in form with a fresh pre-session cookie that
// its CSRF token is bound to. A signed-in operator goes to the overview.
func (d *dashboard) signInPage(w http.ResponseWriter, r *http.Request) error {
	if d.session(r) != nil {
		redirect(w, base(r)+"/")
		return nil
	}
	d.renderSignIn(w, r, http.StatusOK, nil)
	return nil
}

func (d *dashboard) renderSignIn(w http.ResponseWriter, r *http.Request, status int, n *notice) {
	pre := newid.Random("pre")
	d.setCookie(w, r, preSessionCookie, pre, d.svc.Now().Add(preSessionTTL))
	d.render(w, r, status, signInTmpl, view{Notice: n, CSRF: hex.EncodeToString(d.sign("signin", pre))})
}

func (d *dashboard) setCookie(w http.ResponseWriter, r *http.Request, name, value string, expires time.Time) {
	maxAge := int(expires.Sub(d.svc.Now()).Seconds())
	if maxAge <= 0 {
		maxAge = -1
	}
	http.SetCookie(w, &http.Cookie{Name: name, Value: value, Path: base(r) + "/", Expires: expires, MaxAge: maxAge,
		HttpOnly: true, Secure: d.secure, SameSite: http.SameSiteStrictMode})
}

// signIn checks the pre-session CSRF token and the operator token. Wrong
// tokens count against the client address; past the limit it answers 429
// without checking the token.
func (d *dashboard) signIn(w http.ResponseWriter, r *http.Request) error {
	if err := parseForm(w, r); err != nil {
		return err
	}
	pre, err := r.Cookie(preSessionCookie)
	if err != nil || !checkCSRF(r, hex.EncodeToString(d.sign("signin", pre.Value))) {
		return errCSRF
	}
	now := d.svc.Now()
	lim := d.limiter(clientAddr(r), now)
	if lim.TokensAt(now) < 1 {
		d.renderSignIn(w, r, http.StatusTooManyRequests, &notice{Tone: "bad", Text: "Too many wrong tokens from this address. Wait a minute and try again."})
		return nil
	}
	given := sha256.Sum256([]byte(r.PostFormValue("token")))
	name := ""
	for _, t := range d.tokens {
		if subtle.ConstantTimeCompare(given[:], t.hash[:]) == 1 && name == "" {
			name = t.actor
		}
	}
	if name == "" {
		lim.AllowN(now, 1)
		d.log.WarnContext(r.Context(), "dashboard sign-in refused", "client", clientAddr(r), "request_id", requestInfoFrom(r.Context()).id)
		d.renderSignIn(w, r, http.StatusUnauthorized, &notice{Tone: "bad", Text: "That token is not valid."})
		return nil
	}
	s := &session{ID: newid.Random("dss"), Operator: name, Expires: now.Add(d.ttl).Truncate(time.Millisecond)}
	d.setCookie(w, r, sessionCookie, d.encodeSession(s), s.Expires)
	d.setCookie(w, r, preSessionCookie, "", now) // spent
	requestInfoFrom(r.Context()).actor = s.actor()
	d.log.InfoContext(r.Context(), "dashboard sign-in", "actor", s.actor(), "request_id", requestInfoFrom(r.Context()).id)
	redirect(w, base(r)+"/")
	return nil
}

// signOut revokes the session and clears its cookie.
func (d *dashboard) signOut(w http.ResponseWriter, r *http.Request, s *session) error {
	now := d.svc.Now()
	if err := adapterhooks.EndOperatorSession(d.svc, r.Context(), s.actor(), s.ID, s.Expires); err != nil {
		return err
	}
	d.setCookie(w, r, sessionCookie, "", now)
	d.log.InfoContext(r.Context(), "dashboard sign-out", "actor", s.actor(), "request_id", requestInfoFrom(r.Context()).id)
	redirect(w, base(r)+"/signin")
	return nil
}

// clientAddr is the client's IP address as the connection shows it.
func clientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// limiter returns the wrong-token bucket of a client address.
func (d *dashboard) limiter(addr string, now time.Time) *rate.Limiter {
	d.mu.Lock()
	defer d.mu.Unlock()
	lim, ok := d.wrong[addr]
	if !ok {
		if len(d.wrong) >= maxIdleBuckets {
			for k, other := range d.wrong {
				if other.TokensAt(now) >= signInBurst {
					delete(d.wrong, k)
				}
			}
		}
		lim = rate.NewLimiter(rate.Every(signInEvery), signInBurst)
		d.wrong[addr] = lim
	}
	return lim
}

// Templates: each page is the layout (dashui/layout.html) with a page file.

//go:embed dashui
var dashUI embed.FS

var (
	dashLayout    = template.Must(template.New("").Funcs(dashFuncs).ParseFS(dashUI, "dashui/layout.html"))
	signInTmpl    = dashPage("signin.html")
	dashErrorTmpl = dashPage("error.html")
	dashPageTmpl  = dashPage("page.html")
	dashCSS       = must(dashUI.ReadFile("dashui/dash.css"))
)

var dashFuncs = template.FuncMap{
	// formData pairs a form with the page's CSRF token.
	"formData": func(f *form, csrf string) formData { return formData{Form: f, CSRF: csrf} },
	// heading is column i's heading, "" past the last: a phone shows it
	// beside each cell.
	"heading": func(head []string, i int) string {
		if i < len(head) {
			return head[i]
		}
		return ""
	},
}

func dashPage(name string) *template.Template {
	return template.Must(template.Must(dashLayout.Clone()).ParseFS(dashUI, "dashui/"+name))
}

// view is what the layout sees; Data is the page's own view.
type view struct {
	Base     string
	Operator string
	CSRF     string
	Nav      []navLink
	Notice   *notice
	Data     any
}

type navLink struct {
	Label, Href string
	Current     bool
}

// notice is the line a page shows after an action: Tone "" or "bad".
type notice struct {
	Tone, Text string
}

// render writes a page with status.
func (d *dashboard) render(w http.ResponseWriter, r *http.Request, status int, page *template.Template, v view) {
	v.Base = base(r)
	var buf bytes.Buffer
	if err := page.ExecuteTemplate(&buf, "layout", v); err != nil {
		d.log.ErrorContext(r.Context(), "render dashboard page", "request_id", requestInfoFrom(r.Context()).id, "err", err)
		http.Error(w, "Something went wrong.", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Length", strconv.Itoa(buf.Len()))
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// renderError is the envelope's error page. A 500 says nothing of its
// cause; others say what the Service said.
func (d *dashboard) renderError(w http.ResponseWriter, r *http.Request, status int, e *paykit.Error) {
	v := errorView{Heading: "Something went wrong", Text: e.Message}
	switch {
	case e == errCSRF:
		status = http.StatusForbidden
		v.Heading = "Form refused"
	case status == http.StatusNotFound:
		v.Heading = "Not found"
	case status == http.StatusMethodNotAllowed:
		v = errorView{Heading: "Page not available", Text: "This address cannot be used this way."}
	case status >= 500:
		v.Text = "The page could not be shown. Try again in a moment."
	}
	d.render(w, r, status, dashErrorTmpl, view{Data: v})
}
