package xendit

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/paykit/paykit"
)

// Name is the Provider name routes use for this adapter by default.
const Name = "xendit"

// Defaults of Config.
const (
	DefaultBaseURL          = "https://api.xendit.co"
	DefaultTimeout          = 10 * time.Second
	DefaultSettlementHold   = 30 * 24 * time.Hour
	DefaultSettlementPeriod = 24 * time.Hour
	DefaultSettlementDelay  = time.Hour
)

// APIVersion is the api-version header the adapter sends to the Payments
// API v3 (payment requests, payments).
const APIVersion = "2024-11-11"

// Config configures the adapter.
type Config struct {
	// SecretKey (xnd_…) authenticates every call (HTTP Basic). Required.
	SecretKey string
	// CallbackTokens are the webhook verification tokens the Dashboard
	// shows; several while one replaces another. Required to parse
	// callbacks.
	CallbackTokens []string
	// BaseURL of the API; default DefaultBaseURL.
	BaseURL string
	// HTTPClient sends the calls; default one that follows no redirects.
	// Its own Timeout, if any, must not be shorter than Timeout.
	HTTPClient *http.Client
	// Timeout bounds each adapter call, all its requests included;
	// default DefaultTimeout.
	Timeout time.Duration
	// Methods are the paykit methods this account serves; default
	// Methods(). New refuses one the adapter cannot serve.
	Methods []string
	// DisplayName is shown to the payer of a bank transfer as the
	// virtual account's holder (channel_properties.display_name);
	// optional.
	DisplayName string
	// Now is the clock that decides which settlement periods have closed;
	// default time.Now.
	Now func() time.Time
	// SettlementHold is the longest this account's payments take to
	// settle: a settlement report reads transactions made from that long
	// before the close of its cursor's batch; default
	// DefaultSettlementHold.
	SettlementHold time.Duration
	// SettlementPeriod is how much time of settlements one batch covers;
	// its boundaries are multiples of it since the zero time (for a day,
	// midnight UTC). Default DefaultSettlementPeriod.
	SettlementPeriod time.Duration
	// SettlementDelay is how long after its period closes a batch is
	// reported; default DefaultSettlementDelay, a negative value none.
	SettlementDelay time.Duration
	// SettlementReports makes the adapter declare paykit.CapSettlement:
	// paykit then makes a payment's funds available only when a
	// settlement report names it, and reconciles every line. Without it,
	// funds become available at the settlement time Xendit estimates.
	SettlementReports bool
}

// Provider is the Xendit adapter. It implements paykit.Provider,
// paykit.RefundProvider, paykit.PayoutProvider, paykit.DisputeProvider
// and paykit.SettlementReporter.
type Provider struct {
	base        *url.URL
	secret      string
	tokens      [][32]byte // sha256 of each callback token
	client      *http.Client
	timeout     time.Duration
	methods     []string
	displayName string
	reports     bool
	now         func() time.Time
	hold        time.Duration
	period      time.Duration
	delay       time.Duration
}

var (
	_ paykit.Provider           = (*Provider)(nil)
	_ paykit.RefundProvider     = (*Provider)(nil)
	_ paykit.PayoutProvider     = (*Provider)(nil)
	_ paykit.DisputeProvider    = (*Provider)(nil)
	_ paykit.SettlementReporter = (*Provider)(nil)
)

// New checks cfg and returns the adapter.
func New(cfg Config) (*Provider, error) {
	if strings.TrimSpace(cfg.SecretKey) == "" {
		return nil, errors.New("xendit: Config.SecretKey is required")
	}
	raw := cfg.BaseURL
	if raw == "" {
		raw = DefaultBaseURL
	}
	base, err := url.Parse(strings.TrimRight(raw, "/"))
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
		return nil, fmt.Errorf("xendit: Config.BaseURL %q is not an http(s) URL", raw)
	}
	if cfg.Timeout < 0 {
		return nil, errors.New("xendit: Config.Timeout must not be negative")
	}
	p := &Provider{
		base: base, secret: cfg.SecretKey, client: cfg.HTTPClient, timeout: cfg.Timeout, methods: slices.Clone(cfg.Methods),
		displayName: cfg.DisplayName, reports: cfg.SettlementReports, now: cfg.Now,
		hold: cfg.SettlementHold, period: cfg.SettlementPeriod, delay: cfg.SettlementDelay,
	}
	for i, tok := range cfg.CallbackTokens {
		tok = strings.TrimSpace(tok)
		if tok == "" {
			return nil, fmt.Errorf("xendit: Config.CallbackTokens[%d] is empty", i)
		}
		p.tokens = append(p.tokens, tokenDigest(tok))
	}
	if len(p.methods) == 0 {
		p.methods = Methods()
	}
	for _, m := range p.methods {
		if !served(m) {
			return nil, fmt.Errorf("xendit: Config.Methods: the Xendit adapter cannot serve method %q (it serves %v)", m, Methods())
		}
	}
	if p.client == nil {
		p.client = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	if p.timeout == 0 {
		p.timeout = DefaultTimeout
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

// Capabilities declares payments with cancel, refunds, payouts, disputes
// and, with Config.SettlementReports, settlement reports.
func (p *Provider) Capabilities() paykit.Capabilities {
	c := paykit.CapPayments | paykit.CapCancel | paykit.CapRefunds | paykit.CapPayouts | paykit.CapDisputes
	if p.reports {
		c |= paykit.CapSettlement
	}
	return c
}
