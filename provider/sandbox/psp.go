package sandbox

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/paykit/paykit/internal/emvco"
)

// PSPConfig configures the simulated PSP.
type PSPConfig struct {
	// BaseURL is the external base URL where the PSP is mounted (for
	// example "http://127.0.0.1:8080/sandbox"); payer page URLs are built
	// from it.
	BaseURL string
	// APIKey is the bearer secret the adapter must send; empty means no
	// authentication check. It also signs callbacks.
	APIKey string
	// Delay is how long asynchronous outcomes take to settle; 0 means the
	// default of 2s, a negative value settles them at once.
	Delay time.Duration
	// Hold is how long a request of a "timeout" magic value (or a
	// FaultTimeout) is held before the PSP answers 504; default 30s. The
	// PSP records the attempt first, and stops holding as soon as the
	// client goes away. Hold runs on real time, not on Now.
	Hold time.Duration
	// CallbackURL is where the PSP POSTs signed callbacks about final
	// states (paykit's /providers/sandbox/webhooks); empty sends none.
	CallbackURL string
	// Now is the PSP's clock; default time.Now. Settlement is computed
	// lazily from Now whenever an attempt is looked at (no background
	// goroutines), so tests with a manual clock are deterministic.
	Now func() time.Time
	// State, when set, keeps the PSP's state (payments, transfers,
	// refunds, create counts, acknowledged callbacks): package sandboxsql
	// keeps it in a database, where it outlives the process and is shared
	// by every PSP on the database, so that one answers for what another
	// recorded. Nil keeps it in memory. Injected faults stay per PSP
	// either way.
	State State
	// SettlementInterval is how often the PSP settles each merchant's
	// funds in batches; default 24h. A batch closes at the first boundary
	// of the interval (a multiple of it since the zero time) after its
	// lines arose, lazily from Now like the other asynchronous outcomes.
	SettlementInterval time.Duration
	// TracerProvider makes the spans of the PSP's API calls, which join
	// the trace of the adapter's call (its traceparent header, or the
	// context of an in-process call); default otel.GetTracerProvider().
	TracerProvider trace.TracerProvider
}

// Fault operations: which API call a Fault hits.
const (
	OpCreatePayment  = "create_payment"
	OpInquirePayment = "inquire_payment"
	OpCancelPayment  = "cancel_payment"
	OpCreatePayout   = "create_payout"
	OpInquirePayout  = "inquire_payout"
	OpCancelPayout   = "cancel_payout"
	OpCreateRefund   = "create_refund"
	OpInquireRefund  = "inquire_refund"
)

// FaultKind is how an injected fault breaks a request.
type FaultKind int

// Fault kinds.
const (
	// FaultTimeout holds the request until the client goes away (or Hold
	// passes, then 504).
	FaultTimeout FaultKind = iota + 1
	// FaultReset hijacks the connection and closes it without an answer.
	FaultReset
	// FaultStatus500 answers 500 ERR_INTERNAL.
	FaultStatus500
)

// Fault is a test hook that breaks the next requests of one operation.
type Fault struct {
	Op   string // one of the Op constants
	Kind FaultKind
	// AfterRecord applies the fault after the PSP recorded the request's
	// effect (the attempt exists, the cancel is recorded); otherwise the
	// request breaks before the PSP did anything.
	AfterRecord bool
	// Times is how many requests it hits, then it is spent; 0 means 1.
	Times int
}

// Transfer is the PSP's record of one payout transfer, as tests see it.
// It carries the last four characters of the account number only.
type Transfer struct {
	Key             string // the idempotency key it was created under
	ID              string // the PSP's id
	State           string // the PSP's local state (PROCESSING, SUCCESS, ...)
	AmountMinor     int64
	Ccy             string
	Country         string
	Bank            string // the PSP's local bank code
	AccountLast4    string
	ErrorCode       string
	CancelRequested bool
}

// PSP is the simulated payment service provider: an http.Handler serving
// its server-to-server JSON API under /api/ and payer pages under /pay/,
// with its state in memory or (PSPConfig.State) in a database. It is safe for
// concurrent use, and so are several PSPs on one database.
type PSP struct {
	baseURL  string
	apiKey   string
	delay    time.Duration
	hold     time.Duration
	interval time.Duration // settlement
	now      func() time.Time
	mux      *http.ServeMux
	st       state

	mu     sync.Mutex
	faults []*Fault // injected, not yet spent
	// corrupt are the batches whose stated net this PSP's answers
	// corrupt, and corruptNext whether the next batch it closes joins
	// them (CorruptBatchTotal).
	corrupt     map[string]bool
	corruptNext bool

	tracer      trace.Tracer
	callbackURL string
	client      *http.Client
	kick        chan struct{}
}

// Magic values that choose outcomes, as test cards do elsewhere.
const (
	amountDeclined    = 901 // payment amount ends in 901: declined at creation
	amountTimeoutOK   = 902 // held request, then SUCCESS after Delay
	amountTimeoutFail = 903 // held request, then FAILED after Delay

	amountRefundDeclined = 911 // refund amount ends in 911: FAILED at creation
	amountRefundTimeout  = 912 // held refund request, then SUCCESS after Delay

	acctInvalid = "000111111116" // FAILED, ERR_ACCOUNT
	acctTimeout = "000222222227" // held request, then SUCCESS
	acctDropped = "000333333335" // first create recorded, connection closed unanswered
	acctSlow    = "000444444440" // PROCESSING for a minute; cancel wins within it
)

// slowTransfer is how long an acctSlow transfer stays in flight.
const slowTransfer = time.Minute

// defaultPaymentTTL is how long a payment waits for its payer when the
// request names no expiry.
const defaultPaymentTTL = 30 * time.Minute

// maxBody bounds request bodies of the API and callbacks (a dispute's
// evidence text of 20 000 characters fits, escaped).
const maxBody = 256 << 10

// NewPSP returns a PSP on cfg.State, or on empty state in memory.
func NewPSP(cfg PSPConfig) *PSP {
	p := &PSP{
		baseURL:  strings.TrimRight(cfg.BaseURL, "/"),
		apiKey:   cfg.APIKey,
		delay:    cfg.Delay,
		hold:     cfg.Hold,
		interval: cfg.SettlementInterval,
		now:      cfg.Now,
		corrupt:  map[string]bool{},

		callbackURL: cfg.CallbackURL,
		client:      &http.Client{Timeout: 10 * time.Second},
		tracer:      pspTracer(cfg.TracerProvider),
		kick:        make(chan struct{}, 1),
	}
	if cfg.State != nil {
		p.st = newExtState(cfg.State)
	} else {
		p.st = newMemState()
	}
	switch {
	case p.delay == 0:
		p.delay = 2 * time.Second
	case p.delay < 0:
		p.delay = 0
	}
	if p.hold <= 0 {
		p.hold = 30 * time.Second
	}
	if p.interval <= 0 {
		p.interval = defaultSettlementInterval
	}
	if p.now == nil {
		p.now = time.Now
	}
	m := http.NewServeMux()
	for rt := range routeCount {
		m.HandleFunc(rt.pattern(), p.api(p.serveRoute(rt)))
	}
	m.HandleFunc("/api/", p.api(func(w http.ResponseWriter, r *http.Request) {
		writeAnswer(w, errAnswer(http.StatusNotFound, errNoRoute, "No such API path: "+r.Method+" "+r.URL.Path))
	}))
	m.HandleFunc("GET /pay/{id}", p.payerPage)
	m.HandleFunc("POST /pay/{id}/approve", p.payerChoice(true))
	m.HandleFunc("POST /pay/{id}/decline", p.payerChoice(false))
	m.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { p.renderNotFound(w) })
	p.mux = m
	return p
}

// ServeHTTP serves the API under /api/ and payer pages under /pay/. Mount
// it under a prefix with http.StripPrefix.
func (p *PSP) ServeHTTP(w http.ResponseWriter, r *http.Request) { p.mux.ServeHTTP(w, r) }

// CreateCalls returns how many create requests (payments, payouts and refunds) the
// PSP (with every PSP sharing its state) received under the idempotency
// key, whatever became of them. Like the other test hooks it panics when
// the state cannot be read.
func (p *PSP) CreateCalls(key string) int {
	n, err := p.st.createCalls(context.Background(), key)
	must(err)
	return n
}

// PaymentCount returns how many distinct payment attempts the PSP recorded.
func (p *PSP) PaymentCount() int {
	n := 0
	must(p.st.payments().list(context.Background(), func(*payment) { n++ }))
	return n
}

// Payment is the PSP's record of one payment attempt, as tests see it.
type Payment struct {
	Key         string // the idempotency key it was created under
	ID          string // the PSP's id
	State       string // the PSP's local state (PAYER_ACTION, SUCCESS, ...)
	AmountMinor int64
	Ccy         string
	Country     string
	Channel     string // the PSP's local channel code
	Bank        string // the PSP's local bank code, if any
	ErrorCode   string
	Merchant    string // the sub-merchant it is for
	FeeMinor    int64  // the PSP's fee, once SUCCESS
}

// Payments returns every distinct payment attempt the PSP recorded, in
// creation order, settled to the PSP's current time.
func (p *PSP) Payments() []Payment {
	now := p.now()
	out := []Payment{}
	must(p.st.payments().list(context.Background(), func(pm *payment) {
		l := pm.lifecycle // settled on a copy: list only reads
		l.settle(now)
		v := Payment{
			Key: l.Key, ID: l.ID, State: l.State, AmountMinor: pm.In.AmountMinor, Ccy: pm.In.Ccy,
			Country: pm.In.Country, Channel: pm.In.Channel, Bank: pm.In.Bank, ErrorCode: l.ErrCode,
			Merchant: pm.In.Merchant,
		}
		if l.State == stateSuccess {
			v.FeeMinor = pm.fee()
		}
		out = append(out, v)
	}))
	return out
}

// Transfers returns every distinct payout transfer the PSP recorded, in
// creation order, settled to the PSP's current time.
func (p *PSP) Transfers() []Transfer {
	now := p.now()
	out := []Transfer{}
	must(p.st.transfers().list(context.Background(), func(t *transfer) {
		l := t.lifecycle // settled on a copy: list only reads
		l.settle(now)
		out = append(out, Transfer{
			Key: l.Key, ID: l.ID, State: l.State, AmountMinor: t.AmountMinor, Ccy: t.Ccy,
			Country: t.Country, Bank: t.Bank, AccountLast4: t.AccountLast4,
			ErrorCode: l.ErrCode, CancelRequested: l.CancelRequestedAt != nil,
		})
	}))
	return out
}

// must panics on err: the test hooks have no error to return, and a state
// that cannot be read must not pass for an empty one.
func must(err error) {
	if err != nil {
		panic(fmt.Sprintf("sandbox: read the PSP's state: %v", err))
	}
}

// InjectFault makes the next f.Times requests of f.Op break as f.Kind says.
// Faults of the same operation apply in the order injected.
func (p *PSP) InjectFault(f Fault) {
	if f.Times <= 0 {
		f.Times = 1
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.faults = append(p.faults, &f)
}

// takeFault spends one hit of the first matching fault, if any.
func (p *PSP) takeFault(op string, afterRecord bool) (FaultKind, bool) {
	if op == "" { // an operation faults cannot name
		return 0, false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, f := range p.faults {
		if f.Op != op || f.AfterRecord != afterRecord {
			continue
		}
		if f.Times--; f.Times == 0 {
			p.faults = slices.Delete(p.faults, i, i+1)
		}
		return f.Kind, true
	}
	return 0, false
}

// api wraps an API handler with the bearer check and JSON answers.
func (p *PSP) api(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		if p.apiKey != "" {
			token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
			if !ok || !p.authorized(token) {
				w.Header().Set("WWW-Authenticate", `Bearer realm="sandbox-psp"`)
				writeAnswer(w, errUnauthorized)
				return
			}
		}
		h(w, r)
	}
}

// authorized reports whether token is the PSP's API key (any token is,
// when it has none).
func (p *PSP) authorized(token string) bool {
	return p.apiKey == "" || subtle.ConstantTimeCompare([]byte(token), []byte(p.apiKey)) == 1
}

// errUnauthorized answers a call without the API key.
var errUnauthorized = errAnswer(http.StatusUnauthorized, errAuth, "Missing or wrong API key.")

// answer is what an API operation replies.
type answer struct {
	status int
	body   any
	hold   bool // hold the request instead of answering (timeout magic)
	drop   bool // close the connection instead of answering (unacknowledged magic)
}

func errAnswer(status int, code, msg string) answer {
	return answer{status: status, body: errorView{Code: code, Message: msg}}
}

// stateError is the answer when the PSP's state cannot be read or written:
// 500, so the client knows nothing about the effect.
func stateError(err error) answer {
	return errAnswer(http.StatusInternalServerError, errInternal, "The PSP's records are unavailable: "+err.Error())
}

// serveOp runs one API operation between its injected faults: a fault
// before the effect leaves no trace (but for broken, when set, which runs
// first), one after it leaves the effect recorded and the answer lost.
func (p *PSP) serveOp(op string, broken func(), effect func() answer) answer {
	if kind, ok := p.takeFault(op, false); ok {
		if broken != nil {
			broken()
		}
		return faultAnswer(kind)
	}
	a := effect()
	if kind, ok := p.takeFault(op, true); ok {
		return faultAnswer(kind)
	}
	return a
}

// keyedOp serves an operation on the record (payment or transfer) under
// the call's key, settled to the PSP's time; what effect changes is kept.
// A key the PSP never recorded is 404 ERR_NOT_FOUND, its word that no such
// attempt exists.
func keyedOp[T record](p *PSP, ctx context.Context, c apiCall, op string, records table[T], effect func(rec T, now time.Time) answer) answer {
	key := c.key
	return p.serveOp(op, nil, func() answer {
		var a answer
		found, err := records.update(ctx, byKey(key), func(rec T) {
			now := p.now()
			rec.settle(now)
			a = effect(rec, now)
		})
		switch {
		case err != nil:
			return stateError(err)
		case !found:
			return errAnswer(http.StatusNotFound, errNotFound, "Nothing under this idempotency key.")
		}
		return a
	})
}

// replay answers a create under key with the record recorded before, if
// there is one: the same request gets the record, settled, and a changed
// one 409 ERR_IDEMPOTENCY.
func replay[T record](ctx context.Context, p *PSP, records table[T], key, fp string, view func(T) any) (answer, bool, error) {
	var a answer
	found, err := records.update(ctx, byKey(key), func(rec T) {
		if rec.base().Fingerprint != fp {
			a = errAnswer(http.StatusConflict, errIdempotency, "This Idempotency-Key was used with a different request.")
			return
		}
		rec.settle(p.now())
		a = okAnswer(view(rec))
	})
	return a, found, err
}

// recordNew answers a create under key: with the record recorded before,
// or by storing the one fresh makes (fresh reports false, with the
// answer, when it refuses the request). When two creates race, on this PSP or on another sharing
// its state, the state's unique key lets one store its record and the
// other answers with it. It tries the insert first, as most keys are new:
// the record recorded before is looked up only when the insert finds one.
func recordNew[T record](ctx context.Context, p *PSP, records table[T], key, fp string, view func(T) any, fresh func(now time.Time) (T, answer, bool)) answer {
	for range 3 {
		rec, a, ok := fresh(p.now())
		if ok {
			stored, err := records.insert(ctx, rec)
			if err != nil {
				return stateError(err)
			}
			if stored {
				return a
			}
		}
		// Refused, or the key is taken: a record under the key answers.
		ra, found, err := replay(ctx, p, records, key, fp, view)
		if err != nil {
			return stateError(err)
		}
		if found {
			return ra
		}
		if !ok {
			return a
		}
	}
	return stateError(errors.New("creates under this key kept colliding"))
}

// okAnswer is a 200 with body.
func okAnswer(body any) answer { return answer{status: http.StatusOK, body: body} }

// create serves a create operation: the idempotency key is required, the
// body read into body and recorded, and the request counted. It is counted once
// its record is kept (or a fault broke it first), so that a count never
// runs ahead of the record it led to: by the state's insert of the record,
// in the same statement, where the state can (pendingCount), else after.
func (p *PSP) create(ctx context.Context, c apiCall, op string, body any, record func(ctx context.Context, key string) answer) answer {
	key := c.key
	if key == "" || len(key) > 255 {
		return errAnswer(http.StatusBadRequest, errValidation, "The Idempotency-Key header is required (1 to 255 characters).")
	}
	count := func() error { return p.st.countCreate(ctx, key) }
	return p.serveOp(op, func() { _ = count() }, func() answer {
		var a answer
		pc := &pendingCount{key: key}
		if err := c.body(body); err != nil {
			a = errAnswer(http.StatusBadRequest, errValidation, "Body: "+err.Error())
		} else {
			a = record(context.WithValue(ctx, pendingCountKey{}, pc), key)
		}
		if pc.done {
			return a
		}
		if err := count(); err != nil {
			return stateError(err)
		}
		return a
	})
}

// pendingCount, in a create's context, is its count while not yet made:
// a state that inserts the create's record under key may count it in the
// same statement, and says so in done.
type pendingCount struct {
	key  string
	done bool
}

// pendingCountKey is the context key of a create's *pendingCount.
type pendingCountKey struct{}

// countWith returns the count, in ctx, of a create under key not made yet;
// nil when there is none.
func countWith(ctx context.Context, key string) *pendingCount {
	pc, _ := ctx.Value(pendingCountKey{}).(*pendingCount)
	if pc == nil || pc.done || pc.key != key {
		return nil
	}
	return pc
}

// faultAnswer breaks the request as an injected fault of kind does: it is
// held, dropped, or answered 500.
func faultAnswer(kind FaultKind) answer {
	switch kind {
	case FaultTimeout:
		return answer{hold: true}
	case FaultReset:
		return answer{drop: true}
	}
	return errAnswer(http.StatusInternalServerError, errInternal, "Injected fault.")
}

// holdRequest keeps the request unanswered until the client goes away or
// Hold passes (then 504 ERR_TIMEOUT).
func (p *PSP) holdRequest(w http.ResponseWriter, r *http.Request) {
	// The server notices a client going away only once the body is read.
	_, _ = io.Copy(io.Discard, r.Body)
	if a, ok := p.held(r.Context()); ok {
		writeAnswer(w, a)
	}
}

// held is a held request's wait: false when ctx ends first, else (once
// Hold passed) the PSP's 504 ERR_TIMEOUT.
func (p *PSP) held(ctx context.Context) (answer, bool) {
	t := time.NewTimer(p.hold)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return answer{}, false
	case <-t.C:
		return errAnswer(http.StatusGatewayTimeout, errTimeout, "The PSP gave up on the request; inquire for its outcome."), true
	}
}

// dropConnection closes the connection without an answer: the client sees
// the connection end (or reset) before any response byte.
func dropConnection(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		// Not hijackable (HTTP/2): abort the stream instead.
		panic(http.ErrAbortHandler)
	}
	if tc, ok := conn.(interface{ SetLinger(int) error }); ok {
		_ = tc.SetLinger(0) // a reset rather than an orderly close
	}
	_ = conn.Close()
}

// decode reads a JSON body strictly: bounded, no unknown fields, one value.
func decode(r *http.Request, v any) error {
	dec := json.NewDecoder(io.LimitReader(r.Body, maxBody+1))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("trailing data after the JSON value")
	}
	return nil
}

// fpWriter builds a request's fingerprint for the idempotency check: a
// hash of its fields, each length-prefixed so that no two requests write
// the same bytes. Being a hash, a transfer's fingerprint does not keep the
// account number.
type fpWriter struct{ b []byte }

func newFP(buf []byte) fpWriter { return fpWriter{buf[:0]} }

// sum is the fingerprint: the hash's hex digits.
func (w *fpWriter) sum() string {
	sum := sha256.Sum256(w.b)
	var out [2 * sha256.Size]byte
	hex.Encode(out[:], sum[:])
	return string(out[:])
}

func (w *fpWriter) int(n int64) { w.b = binary.AppendVarint(w.b, n) }

func (w *fpWriter) str(s string) {
	w.int(int64(len(s)))
	w.b = append(w.b, s...)
}

// strs writes m's entries in key order.
func (w *fpWriter) strs(m map[string]string) {
	w.int(int64(len(m)))
	var buf [8]string
	keys := buf[:0]
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		w.str(k)
		w.str(m[k])
	}
}

// time writes t, or for nil a mark no time writes.
func (w *fpWriter) time(t *time.Time) {
	if t == nil {
		w.int(-1)
		return
	}
	w.int(t.Unix())
	w.int(int64(t.Nanosecond()))
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// writeAnswer writes a's status and body.
func writeAnswer(w http.ResponseWriter, a answer) { writeJSON(w, a.status, a.body) }

// newID returns prefix + "_" + 16 random hex digits.
func newID(prefix string) string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	var id [32]byte // one allocation: the string
	return string(hex.AppendEncode(append(append(id[:0], prefix...), '_'), b[:]))
}

// last4 is the last four characters of an account number.
func last4(acct string) string {
	if len(acct) <= 4 {
		return acct
	}
	return acct[len(acct)-4:]
}

// settleTime is when an asynchronous outcome started at now settles.
func (p *PSP) settleTime(now time.Time) time.Time { return now.Add(p.delay) }

// formatAmount renders minor units of a two-decimal currency for people.
func formatAmount(ccy string, minor int64) string {
	return fmt.Sprintf("%s %s", ccy, emvco.Amount(minor))
}
