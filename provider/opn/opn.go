package opn

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/paykit/paykit"
)

// Name is the Provider name routes use for this adapter by default.
const Name = "opn"

// Defaults of Config.
const (
	DefaultBaseURL   = "https://api.omise.co"
	DefaultVaultURL  = "https://vault.omise.co"
	DefaultTimeout   = 10 * time.Second
	DefaultTolerance = 5 * time.Minute
)

// Config configures the adapter.
type Config struct {
	// PublicKey is the account's public key (pkey_…). The adapter creates
	// sources together with their charge, server-side, so it is optional.
	PublicKey string
	// SecretKey (skey_…) authenticates every call (HTTP Basic). Required.
	SecretKey string
	// WebhookSecrets are the base64 webhook secrets as Opn issues them;
	// several during a rotation. Required to parse callbacks.
	WebhookSecrets []string
	// BaseURL of the API; default DefaultBaseURL.
	BaseURL string
	// VaultURL is unused (no card tokens); kept for configuration files.
	VaultURL string
	// HTTPClient sends the calls; default one that follows no redirects.
	// Its own Timeout, if any, must not be shorter than Timeout.
	HTTPClient *http.Client
	// Timeout bounds each adapter call, all its requests included;
	// default DefaultTimeout.
	Timeout time.Duration
	// Methods are the paykit methods this account serves; default
	// Methods(). New refuses one the adapter cannot serve.
	Methods []string
	// Tolerance is how far a webhook's timestamp may be from Now;
	// default DefaultTolerance.
	Tolerance time.Duration
	// Now is the clock for webhook timestamps and for which days of the
	// settlement report have closed; default time.Now.
	Now func() time.Time
	// SettlementHold is the longest this account's funds take to become
	// transferable: the settlement report reads transactions from that
	// long before the close of its cursor's batch; default
	// DefaultSettlementHold.
	SettlementHold time.Duration
	// SettlementPeriod is how much time of transactions becoming
	// transferable one settlement batch covers; its boundaries are
	// multiples of it since the zero time (for a day, midnight UTC).
	// Default DefaultSettlementPeriod.
	SettlementPeriod time.Duration
	// SettlementDelay is how long after its period closes a batch is
	// reported, so that a transaction Opn records late is in it; default
	// DefaultSettlementDelay, a negative value none.
	SettlementDelay time.Duration
	// SettlementReports makes the adapter declare paykit.CapSettlement:
	// paykit then makes a payment's funds available only when a
	// settlement report names it, and reconciles every line. Without it,
	// funds become available at the available date the Provider states.
	SettlementReports bool
}

// Provider is the Opn Payments adapter. It implements paykit.Provider,
// paykit.RefundProvider, paykit.PayoutProvider, paykit.DisputeProvider
// and paykit.SettlementReporter.
type Provider struct {
	base      *url.URL
	secret    string
	secrets   [][]byte
	client    *http.Client
	timeout   time.Duration
	methods   []string
	reports   bool // Config.SettlementReports
	tolerance time.Duration
	now       func() time.Time
	hold      time.Duration // Config.SettlementHold
	period    time.Duration // Config.SettlementPeriod
	delay     time.Duration // Config.SettlementDelay
}

var (
	_ paykit.Provider        = (*Provider)(nil)
	_ paykit.RefundProvider  = (*Provider)(nil)
	_ paykit.PayoutProvider  = (*Provider)(nil)
	_ paykit.DisputeProvider = (*Provider)(nil)

	_ paykit.SettlementReporter = (*Provider)(nil)
)

// New checks cfg and returns the adapter.
func New(cfg Config) (*Provider, error) {
	if strings.TrimSpace(cfg.SecretKey) == "" {
		return nil, errors.New("opn: Config.SecretKey is required")
	}
	raw := cfg.BaseURL
	if raw == "" {
		raw = DefaultBaseURL
	}
	base, err := url.Parse(strings.TrimRight(raw, "/"))
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
		return nil, fmt.Errorf("opn: Config.BaseURL %q is not an http(s) URL", raw)
	}
	p := &Provider{
		base: base, secret: cfg.SecretKey, client: cfg.HTTPClient, timeout: cfg.Timeout,
		tolerance: cfg.Tolerance, now: cfg.Now, methods: slices.Clone(cfg.Methods), hold: cfg.SettlementHold,
		period: cfg.SettlementPeriod, delay: cfg.SettlementDelay, reports: cfg.SettlementReports,
	}
	for i, s := range cfg.WebhookSecrets {
		key, err := decodeSecret(s)
		if err != nil {
			return nil, fmt.Errorf("opn: Config.WebhookSecrets[%d] is not base64: %v", i, err)
		}
		p.secrets = append(p.secrets, key)
	}
	if len(p.methods) == 0 {
		p.methods = Methods()
	}
	for _, m := range p.methods {
		if _, ok := sources[m]; !ok {
			return nil, fmt.Errorf("opn: Config.Methods: the Opn adapter cannot serve method %q (it serves %v)", m, Methods())
		}
	}
	if p.client == nil {
		p.client = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	if p.timeout <= 0 {
		p.timeout = DefaultTimeout
	}
	if p.tolerance <= 0 {
		p.tolerance = DefaultTolerance
	}
	if p.now == nil {
		p.now = time.Now
	}
	if p.hold <= 0 {
		p.hold = DefaultSettlementHold
	}
	if p.period <= 0 {
		p.period = DefaultSettlementPeriod
	}
	switch {
	case p.delay == 0:
		p.delay = DefaultSettlementDelay
	case p.delay < 0:
		p.delay = 0
	}
	return p, nil
}

// Capabilities declares payments with cancel (expire), refunds, payouts
// (transfers), disputes and, with Config.SettlementReports, settlement
// reports (transactions).
func (p *Provider) Capabilities() paykit.Capabilities {
	c := paykit.CapPayments | paykit.CapCancel | paykit.CapRefunds | paykit.CapPayouts | paykit.CapDisputes
	if p.reports {
		c |= paykit.CapSettlement
	}
	return c
}

// apiError is Opn's error object.
type apiError struct {
	Object   string `json:"object"`
	Location string `json:"location"`
	Code     string `json:"code"`
	Message  string `json:"message"`
}

// reply is what one request came to: either a transport result (fault
// set: the call ends with it) or Opn's JSON answer (status and body).
type reply struct {
	fault  *paykit.Result
	status int
	body   []byte
	err    *apiError // Opn's error object, if the body is one
}

// call sends one request. form is sent form-encoded for POST; query for
// GET. idem, if set, is the Idempotency-Key. A request is never retried.
func (p *Provider) call(ctx context.Context, method, path string, form url.Values, idem string) reply {
	u := *p.base
	u.Path = strings.TrimRight(u.Path, "/") + path
	var body io.Reader
	if method == http.MethodGet || method == http.MethodDelete {
		u.RawQuery = form.Encode()
	} else {
		body = strings.NewReader(form.Encode())
	}
	return p.send(ctx, method, u.String(), body, idem)
}

func (p *Provider) send(ctx context.Context, method, target string, body io.Reader, idem string) reply {
	req, err := http.NewRequestWithContext(ctx, method, target, body)
	if err != nil {
		return faulted(paykit.OutcomeUnacknowledged, "opn: build request: "+err.Error())
	}
	// net/http replays a request carrying Idempotency-Key on a reused
	// connection that broke; without GetBody it never does: paykit, not
	// the transport, decides about retries.
	req.GetBody = nil
	req.SetBasicAuth(p.secret, "")
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if idem != "" {
		req.Header.Set("Idempotency-Key", idem)
	}
	resp, err := p.client.Do(req)
	if err != nil {
		return faulted(transportOutcome(ctx, err), "opn: "+method+" "+req.URL.Path+": "+err.Error())
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		// Sent and answered in part: the request may have been executed.
		return faulted(paykit.OutcomeUnknown, "opn: reading answer: "+err.Error())
	}
	r := reply{status: resp.StatusCode, body: data}
	switch {
	case resp.StatusCode == http.StatusTooManyRequests:
		d := "opn: 429 rate limited, not executed"
		if ra := resp.Header.Get("Retry-After"); ra != "" {
			d += "; Retry-After " + ra
		}
		return faulted(paykit.OutcomeUnacknowledged, d)
	case resp.StatusCode >= 500:
		d := fmt.Sprintf("opn: HTTP %d", resp.StatusCode)
		if ra := resp.Header.Get("Retry-After"); ra != "" {
			d += "; Retry-After " + ra
		}
		return faulted(paykit.OutcomeUnacknowledged, d)
	}
	var head struct {
		Object string `json:"object"`
	}
	if json.Unmarshal(data, &head) != nil || head.Object == "" {
		// Not Opn's JSON (a proxy's page, a foreign 404): it says nothing.
		return faulted(paykit.OutcomeUnknown, fmt.Sprintf("opn: HTTP %d answer is not Opn's JSON", resp.StatusCode))
	}
	if head.Object == "error" {
		var e apiError
		_ = json.Unmarshal(data, &e)
		r.err = &e
		return r
	}
	if resp.StatusCode >= 300 {
		return faulted(paykit.OutcomeUnknown, fmt.Sprintf("opn: HTTP %d with a %s object", resp.StatusCode, head.Object))
	}
	return r
}

func faulted(o paykit.Outcome, detail string) reply {
	return reply{fault: &paykit.Result{Outcome: o, Detail: detail}}
}

// transportOutcome classifies a failed round trip: a timeout after the
// request went out is Unknown; a refused or dropped connection is
// Unacknowledged (the attempt may exist: paykit retries with the key).
func transportOutcome(ctx context.Context, err error) paykit.Outcome {
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil || (errors.As(err, &ne) && ne.Timeout()) {
		return paykit.OutcomeUnknown
	}
	return paykit.OutcomeUnacknowledged
}

// errorDetail is the Detail of Opn's error object.
func (r reply) errorDetail() string {
	return fmt.Sprintf("opn: HTTP %d %s: %s", r.status, r.err.Code, r.err.Message)
}

// errorResult classifies Opn's error object answering a call about an
// existing object (inquiry, cancel): not_found is NotFound; anything
// else says nothing of the object's state.
func (r reply) errorResult() paykit.Result {
	if r.status == http.StatusNotFound && r.err.Code == "not_found" {
		return paykit.Result{Outcome: paykit.OutcomeNotFound, Detail: r.errorDetail()}
	}
	return paykit.Result{Outcome: paykit.OutcomeUnknown, Detail: r.errorDetail()}
}

// createErrorResult classifies Opn's error object answering a create: a
// validation or authentication error means nothing was created.
func (r reply) createErrorResult() paykit.Result {
	switch {
	case r.status == http.StatusUnauthorized || r.status == http.StatusForbidden,
		r.status == http.StatusBadRequest || r.status == http.StatusUnprocessableEntity,
		r.status == http.StatusNotFound && r.err.Code == "not_found":
		return paykit.Result{Outcome: paykit.OutcomeRefused, Detail: r.errorDetail()}
	}
	return paykit.Result{Outcome: paykit.OutcomeUnknown, Detail: r.errorDetail()}
}

// withTimeout bounds one adapter call.
func (p *Provider) withTimeout(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, p.timeout)
}

// searchResult is Opn's search (and list) object.
type searchResult struct {
	Object string            `json:"object"`
	Data   []json.RawMessage `json:"data"`
}

// search looks for objects of scope whose metadata.paykit_key is key.
// It returns the matching raw objects, or a fault.
func (p *Provider) search(ctx context.Context, scope, key string) ([]json.RawMessage, *paykit.Result) {
	q := url.Values{"scope": {scope}, "query": {key}, "order": {"reverse_chronological"}}
	r := p.call(ctx, http.MethodGet, "/search", q, "")
	if r.fault != nil {
		return nil, r.fault
	}
	if r.err != nil {
		res := paykit.Result{Outcome: paykit.OutcomeUnknown, Detail: "opn: search: " + r.errorDetail()}
		return nil, &res
	}
	var s searchResult
	if err := decodeJSON(r.body, &s); err != nil || s.Object != "search" {
		res := paykit.Result{Outcome: paykit.OutcomeUnknown, Detail: "opn: search answer is not a search object"}
		return nil, &res
	}
	var out []json.RawMessage
	for _, raw := range s.Data {
		var m struct {
			Metadata map[string]any `json:"metadata"`
		}
		if json.Unmarshal(raw, &m) == nil && m.Metadata["paykit_key"] == key {
			out = append(out, raw)
		}
	}
	return out, nil
}

// first returns the newest object of scope under key, or the Result the
// call ends with: a fault, or missingByKey when the search finds none.
func (p *Provider) first(ctx context.Context, scope, key string) (json.RawMessage, *paykit.Result) {
	found, fault := p.search(ctx, scope, key)
	switch {
	case fault != nil:
		return nil, fault
	case len(found) == 0:
		res := missingByKey(scope, key)
		return nil, &res
	}
	return found[0], nil
}

// get reads the object at path (GET), or returns the Result the call
// ends with: a fault, or Opn's error object as errorResult classifies it.
func (p *Provider) get(ctx context.Context, path string) ([]byte, *paykit.Result) {
	r := p.call(ctx, http.MethodGet, path, nil, "")
	switch {
	case r.fault != nil:
		return nil, r.fault
	case r.err != nil:
		res := r.errorResult()
		return nil, &res
	}
	return r.body, nil
}

// missingByKey is the answer when a search finds nothing under key: Opn's
// search may not show an object just made, so this is not its word that
// nothing exists (OutcomeNotFound comes only from a 404 on an id). paykit
// recovers such an attempt by sending its create again under the key,
// which searches first and sends Opn the same Idempotency-Key.
func missingByKey(scope, key string) paykit.Result {
	return paykit.Result{Outcome: paykit.OutcomeUnknown, Detail: fmt.Sprintf("opn: search finds no %s with metadata paykit_key %s", scope, key)}
}

func decodeJSON(raw []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	return d.Decode(v)
}

// existing looks, before a create, for an object of scope already made
// under key, so that a retry never creates twice even if Opn ignored the
// Idempotency-Key. The search gets half the call's time; when it is
// inconclusive, the create goes ahead under its Idempotency-Key.
func (p *Provider) existing(ctx context.Context, scope, key string) json.RawMessage {
	sctx, cancel := context.WithTimeout(ctx, p.timeout/2)
	defer cancel()
	found, fault := p.search(sctx, scope, key)
	if fault != nil || len(found) == 0 {
		return nil
	}
	return found[0]
}
