package paykit

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/paykit/paykit/internal/newid"
	"github.com/paykit/paykit/internal/telemetry"
	"github.com/paykit/paykit/internal/webhooks/send"
	"github.com/paykit/paykit/keyring"
)

// Config configures a Service. Only Store is required.
type Config struct {
	// Store persists everything. Required.
	Store Store
	// Now returns the current time; default time.Now. The Service truncates
	// it to milliseconds, the contract's precision.
	Now func() time.Time
	// NewID makes resource ids from a prefix ("pi", "mch", ...); default
	// prefix + "_" + 24 characters that sort in creation order. Lists order
	// rows created in one millisecond by id, so ids made later should sort
	// after earlier ones.
	NewID func(prefix string) string
	// Random is the source of key material; default crypto/rand.Reader.
	Random io.Reader
	// Logger receives structured logs; default slog.Default(). Secrets are
	// never logged.
	Logger *slog.Logger
	// SigningKey authenticates list cursors and payer links (at least 16
	// bytes; 32 random bytes are best). Required with a persistent Store, whose cursors and links must
	// survive a restart and work on every instance; the memory Store draws a
	// random one when it is empty.
	SigningKey []byte
	// WorkerID names this instance in job leases; default a random id.
	WorkerID string
	// WorkerInterval is how often Run polls for due work; default 1s.
	WorkerInterval time.Duration
	// WorkerConcurrency is how many claimed jobs run at once, so that a
	// slow webhook endpoint or Provider does not hold up the rest; default
	// 100. Jobs mostly wait on Providers and webhook endpoints holding no
	// database connection; the Store bounds their database work (sqlstore's
	// WorkerConns).
	WorkerConcurrency int
	// PartitionConcurrency is how many jobs that wait on one thing (the
	// deliveries to one webhook endpoint) Run runs at once; default 16.
	PartitionConcurrency int
	// JobLease is how long a claimed job stays leased before another worker
	// may take it over; default 1m.
	JobLease time.Duration
	// IdempotencyRetention is how long completed idempotency records are
	// kept; default (and minimum) 24h.
	IdempotencyRetention time.Duration
	// JobRetention is how long completed jobs are kept for operators to
	// see before they are purged; default 24h.
	JobRetention time.Duration
	// Routing is the operational configuration: which Provider serves which
	// payment method where. An environment without routes offers nothing.
	// New copies it; the route chosen at create is stored with the
	// resource, so a later configuration never reaches an attempt in flight.
	Routing Routing
	// Providers are the Provider adapters by the names routes use. New
	// refuses a route whose Provider is missing or does not declare the
	// capabilities it needs (CapPayments and CapCancel for payment routes,
	// CapPayouts for payout routes), and an adapter that declares a
	// capability without its methods.
	Providers map[string]Provider
	// DisabledProviders are Providers that take no new attempts: routes to
	// them are skipped (GET /payment_methods does not offer a method only
	// they serve), while attempts already there are still recovered,
	// cancelled and refunded through them.
	DisabledProviders []string
	// CircuitFailures and CircuitCooldown say when paykit stops offering a
	// Provider new attempts: after CircuitFailures calls in a row without a
	// trustworthy answer (timeouts, refused or dropped connections, 5xx;
	// default 5), its circuit opens for CircuitCooldown (default 30s).
	// While open, new payments go to the next route that serves them (a
	// Provider whose circuit is open has received nothing of theirs);
	// attempts already at the Provider keep being recovered there. After
	// the cool-down, the next answer decides: a trustworthy one closes the
	// circuit, another failure opens it again. Each instance keeps its own
	// circuits.
	CircuitFailures int
	CircuitCooldown time.Duration
	// PublicURL is the base of payer-facing URLs (continuation links, QR
	// images, checkout links), which live under {PublicURL}/pay/.
	PublicURL string
	// PaymentTTL is how long a payment intent waits for its payer; default 30m.
	PaymentTTL time.Duration
	// CheckoutTTL is how long a checkout stays open; default 24h.
	CheckoutTTL time.Duration
	// ApprovalThreshold: payouts of at least this many minor units wait for
	// an operator's approval; 0 never holds. ApprovalPolicy, when set,
	// decides instead.
	ApprovalThreshold int64
	// ApprovalPolicy reports whether a new payout must wait for approval.
	ApprovalPolicy func(*PayoutIntent) bool
	// ApprovalTTL is how long an approval hold lasts before the payout
	// expires; default 72h.
	ApprovalTTL time.Duration
	// AccountKeys encrypts recipient account numbers and webhook secrets at
	// rest. Required with a persistent Store: with a key that died with the
	// process, payouts stored before a restart could not be dispatched nor
	// webhooks signed. The memory Store draws a random one when it is nil.
	AccountKeys *keyring.Keyring
	// APIKeyCacheTTL is how long an instance keeps an API key it read to
	// authenticate requests; default 5s, negative for none. A key revoked
	// through a Service is refused by that Service at once, and by every
	// other instance on the Store within this time.
	APIKeyCacheTTL time.Duration
	// WebhookTimeout bounds one webhook delivery attempt; default 15s.
	WebhookTimeout time.Duration
	// ReconciliationSLA is how long after its success a payment or refund
	// may go without a settlement line before it is a missing_in_report
	// break; default 72h.
	ReconciliationSLA time.Duration
	// TracerProvider makes the spans of Store transactions, Provider
	// calls, job runs and webhook deliveries (and httpadapter's of
	// requests); default otel.GetTracerProvider(), a no-op until the host
	// sets one. A job's span links to the span that enqueued it. No
	// attribute holds a secret, key, token, account number or payer detail.
	TracerProvider trace.TracerProvider
	// MeterProvider makes the duration histograms beside those spans
	// (db.client.operation.duration, paykit.provider.call.duration,
	// messaging.process.duration, http.client.request.duration and
	// httpadapter's http.server.request.duration); default
	// otel.GetMeterProvider().
	MeterProvider metric.MeterProvider
	// WebhookTraceContext makes webhook requests carry the W3C
	// traceparent of their delivery's span. Off by default: a merchant's
	// endpoint learns nothing of paykit's traces unless the host opts in.
	WebhookTraceContext bool
}

// Service is the paykit engine: every operation of the merchant and
// operator APIs as Go methods. It is safe for concurrent use. New starts no
// goroutine; the host runs background work with Run or ProcessDue.
type Service struct {
	store      Store
	now        func() time.Time
	newID      func(string) string
	random     io.Reader
	log        *slog.Logger
	signingKey []byte
	macs       sync.Pool // *macState: HMAC-SHA256 under signingKey
	workerID   string
	interval   time.Duration
	lease      time.Duration
	retention  time.Duration
	jobRetain  time.Duration
	jobsMu     sync.RWMutex
	jobs       map[string]jobKind // guarded by jobsMu
	jobCounts  jobCounters        // attempts and errors of this process's jobs
	routing    Routing
	providers  map[string]*adapter // by name, with their declared method sets
	disabled   map[string]bool     // Config.DisabledProviders
	breaker    circuitBreaker
	publicURL  string
	paymentTTL time.Duration

	checkoutTTL time.Duration

	webhookSender  atomic.Pointer[send.Sender]
	webhookTimeout time.Duration
	concurrency    int
	partitionLimit int
	eventIDs       eventIDGen
	purgedAt       atomic.Int64 // unix ms of this instance's last try at the purge lease
	sweptAt        atomic.Int64 // unix ms of this instance's last try at the settlement sweep's lease
	settleLocks    settlementLocks
	reconCounts    reconCounts
	runs           runSet        // this instance's job runs in flight
	freed          chan struct{} // Run: a run ended

	approvalThreshold int64
	approvalPolicy    func(*PayoutIntent) bool
	approvalTTL       time.Duration
	reconcileSLA      time.Duration
	accountKeys       *keyring.Keyring
	apiKeys           *apiKeyCache
	tel               *tel

	// rnd draws the jitter of retry schedules, in [0, 1); nil draws from
	// math/rand/v2. A simulation sets a seeded one (adapterhooks.SetJitter)
	// before it uses the Service, so that a run repeats.
	rnd func() float64
}

// JobHandler runs one durable job. A nil error completes the job; an error
// schedules a retry with exponential backoff and jitter (past the kind's
// attempt limit, at the longest interval, and the job needs attention).
type JobHandler func(ctx context.Context, job *Job) error

// New builds a Service from cfg. It checks the configured keys
// (SigningKey, AccountKeys) against the fingerprints the Store recorded for
// the keys its data was written with, recording those of new keys, and
// fails with keyring.ErrMismatch when they cannot read that data: a host that
// restarts with other keys learns it at once, not from payouts it cannot
// dispatch. A rotated keyring that keeps its old keys passes.
func New(cfg Config) (*Service, error) {
	if cfg.Store == nil {
		return nil, errors.New("paykit: Config.Store is required")
	}
	if err := checkKeys(cfg); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), keyCheckTimeout)
	defer cancel()
	now := time.Now
	if cfg.Now != nil {
		now = cfg.Now
	}
	if err := checkStoredKeys(ctx, cfg, now().UTC()); err != nil {
		return nil, err
	}
	s := &Service{
		store:      cfg.Store,
		now:        cfg.Now,
		newID:      cfg.NewID,
		random:     cfg.Random,
		log:        cfg.Logger,
		signingKey: cfg.SigningKey,
		workerID:   cfg.WorkerID,
		interval:   cfg.WorkerInterval,
		lease:      cfg.JobLease,
		retention:  cfg.IdempotencyRetention,
		jobRetain:  cfg.JobRetention,
		jobs:       map[string]jobKind{},
		freed:      make(chan struct{}, 1),
		routing:    cfg.Routing.clone(),
		publicURL:  strings.TrimRight(cfg.PublicURL, "/"),
		paymentTTL: cfg.PaymentTTL,

		checkoutTTL: cfg.CheckoutTTL,

		approvalThreshold: cfg.ApprovalThreshold,
		approvalPolicy:    cfg.ApprovalPolicy,
		approvalTTL:       cfg.ApprovalTTL,
		reconcileSLA:      cfg.ReconciliationSLA,
		accountKeys:       cfg.AccountKeys,
		apiKeys:           &apiKeyCache{ttl: cfg.APIKeyCacheTTL},
	}
	tel, err := newTel(cfg)
	if err != nil {
		return nil, err
	}
	s.tel = tel
	adapters, err := newAdapters(cfg.Providers, tel)
	if err != nil {
		return nil, err
	}
	if err := checkRoutes(s.routing, adapters); err != nil {
		return nil, err
	}
	s.providers = adapters
	s.disabled = map[string]bool{}
	for _, name := range cfg.DisabledProviders {
		if _, ok := adapters[name]; !ok {
			return nil, fmt.Errorf("paykit: Config.DisabledProviders names %q, which is not in Config.Providers", name)
		}
		s.disabled[name] = true
	}
	s.breaker = circuitBreaker{failures: cfg.CircuitFailures, cooldown: cfg.CircuitCooldown}
	if s.breaker.failures <= 0 {
		s.breaker.failures = 5
	}
	if s.breaker.cooldown <= 0 {
		s.breaker.cooldown = 30 * time.Second
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.newID == nil {
		s.newID = newid.Sortable
	}
	if s.random == nil {
		s.random = rand.Reader
	}
	s.log = telemetry.Logger(s.log)
	if len(s.signingKey) == 0 {
		s.signingKey = make([]byte, 32)
		if _, err := io.ReadFull(rand.Reader, s.signingKey); err != nil {
			return nil, err
		}
	}
	if s.workerID == "" {
		s.workerID = newid.Random("wrk")
	}
	if s.interval <= 0 {
		s.interval = time.Second
	}
	if s.lease <= 0 {
		s.lease = time.Minute
	}
	if s.retention < 24*time.Hour {
		s.retention = 24 * time.Hour
	}
	if s.jobRetain <= 0 {
		s.jobRetain = 24 * time.Hour
	}
	if s.apiKeys.ttl == 0 {
		s.apiKeys.ttl = 5 * time.Second
	}
	if s.paymentTTL <= 0 {
		s.paymentTTL = 30 * time.Minute
	}
	if s.checkoutTTL <= 0 {
		s.checkoutTTL = 24 * time.Hour
	}
	if s.reconcileSLA <= 0 {
		s.reconcileSLA = 72 * time.Hour
	}
	if s.approvalTTL <= 0 {
		s.approvalTTL = 72 * time.Hour
	}
	if s.accountKeys == nil {
		s.accountKeys = keyring.Random()
	}
	s.webhookTimeout = cfg.WebhookTimeout
	if s.webhookTimeout <= 0 {
		s.webhookTimeout = 15 * time.Second
	}
	sender := send.NewSender(s.webhookTimeout)
	s.webhookSender.Store(&sender)
	s.concurrency = cfg.WorkerConcurrency
	if s.concurrency <= 0 {
		s.concurrency = defaultWorkerConcurrency
	}
	s.partitionLimit = cfg.PartitionConcurrency
	if s.partitionLimit <= 0 {
		s.partitionLimit = defaultPartitionConcurrency
	}
	s.handle(jobWebhookDeliver, s.deliverWebhookJob, s.webhookTimeout+webhookJobSlack, JobPriorityDefault)
	s.registerPaymentJobs()
	s.registerPayoutJobs()
	s.registerCheckoutJobs()
	s.registerRefundJobs()
	s.registerDisputeJobs()
	return s, nil
}

// minSigningKey is the shortest SigningKey accepted, in bytes.
const minSigningKey = 16

// checkKeys refuses a persistent Store without configured keys: random
// ones would die with the process, leaving stored payouts, webhook secrets,
// cursors and payer links unusable after a restart or on another instance.
func checkKeys(cfg Config) error {
	if n := len(cfg.SigningKey); n > 0 && n < minSigningKey {
		return fmt.Errorf("paykit: Config.SigningKey has %d bytes; it needs at least %d (32 random bytes are best)", n, minSigningKey)
	}
	if !cfg.Store.Persistent() {
		return nil
	}
	var missing []string
	if len(cfg.SigningKey) == 0 {
		missing = append(missing, "Config.SigningKey (32 random bytes)")
	}
	if cfg.AccountKeys == nil {
		missing = append(missing, "Config.AccountKeys (keyring.New with a 32-byte AES key)")
	}
	if len(missing) > 0 {
		return fmt.Errorf("paykit: a persistent Store needs %s, the same on every instance and kept across restarts: "+
			"keys drawn at random would leave stored payouts, webhook secrets, cursors and payer links unusable after a restart",
			strings.Join(missing, " and "))
	}
	return nil
}

// Store returns the Store the Service was built with.
func (s *Service) Store() Store { return s.store }

// Now returns the Service's current time in UTC at millisecond precision.
func (s *Service) Now() time.Time { return s.now().UTC().Truncate(time.Millisecond) }

// Ping reports whether the Store answers and accepts writes: it records a
// heartbeat of this instance, so a read-only database fails it.
func (s *Service) Ping(ctx context.Context) error {
	return s.store.Heartbeat(ctx, s.workerID, s.Now())
}

// errNilTx is the error of a …Tx call given no transaction.
var errNilTx = errors.New("paykit: nil Tx: pass the host's transaction (sqlstore.Store.WrapTx, or the tx of Store.InTx)")

// within runs fn in the host's transaction host when there is one (once:
// only the host can retry its transaction), else in the Service's own
// (see inTx). Either way fn writes through eventTx, so events follow.
func (s *Service) within(ctx context.Context, host Tx, fn func(tx Tx) error) error {
	if host == nil {
		return s.inTx(ctx, fn)
	}
	if _, ok := host.(*eventTx); ok {
		return fn(host)
	}
	return fn(newEventTx(host, s))
}

// reader is where a call reads outside its writes: the host's transaction
// when there is one (another connection could wait on its locks), else the
// Store.
func (s *Service) reader(host Tx) Tx {
	if host == nil {
		return s.store
	}
	return host
}

// serviceError is asServiceError for a call that ran in host, when not nil:
// ErrVersionConflict and ErrUnavailable reach the host unchanged, since
// only the host can retry its transaction.
func serviceError(host Tx, err error) error {
	if host != nil && (errors.Is(err, ErrVersionConflict) || errors.Is(err, ErrUnavailable)) {
		return err
	}
	return asServiceError(err)
}

// inTx runs fn in a Store transaction, retrying on ErrVersionConflict so
// that optimistic-concurrency losers re-read and try again.
func (s *Service) inTx(ctx context.Context, fn func(tx Tx) error) error {
	const attempts = 20
	ctx, span := s.tel.startTx(ctx)
	var err error
	for i := 0; i < attempts; i++ {
		err = s.store.InTx(ctx, func(tx Tx) error { return fn(newEventTx(tx, s)) })
		if !errors.Is(err, ErrVersionConflict) {
			s.tel.endTx(ctx, span, i+1, err)
			return err
		}
		select {
		case <-ctx.Done():
			s.tel.endTx(ctx, span, i+1, ctx.Err())
			return ctx.Err()
		case <-time.After(jitter(time.Duration(i+1) * time.Millisecond)):
		}
	}
	// Contention this lasting is overload, not a fault of the request.
	err = fmt.Errorf("%w: %d attempts lost to concurrent writers: %w", ErrUnavailable, attempts, err)
	s.tel.endTx(ctx, span, attempts, err)
	return err
}

// defaultWorkerConcurrency is Config.WorkerConcurrency's default: with 100
// slots the worker ran no-op jobs at 0.65–0.8 of River's rate on the same
// PostgreSQL (bench/backoffice.sh noop), against 0.1 with 8, the claims
// and ends of many jobs sharing a statement.
const defaultWorkerConcurrency = 100

// defaultPartitionConcurrency is Config.PartitionConcurrency's default: a
// healthy endpoint takes deliveries as fast as the worker makes them (with
// 2 at once, one endpoint received 50 a second of 250 made under load);
// one that hangs holds at most this many slots until it pauses, after
// three failures in a row.
const defaultPartitionConcurrency = 16
