package paykit

import (
	"strconv"
	"time"
)

// Environment separates test from live money. An API key's prefix fixes it.
type Environment string

// The two environments.
const (
	Test Environment = "test"
	Live Environment = "live"
)

// Valid reports whether e is test or live.
func (e Environment) Valid() bool { return e == Test || e == Live }

// Scope is the tenant of a request: every read and write of merchant data
// names one.
type Scope struct {
	MerchantID  string
	Environment Environment
}

// Principal is an authenticated API caller.
type Principal struct {
	Scope
	KeyID string
}

// Merchant is an account that owns API keys and resources.
type Merchant struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	CreatedAt time.Time `json:"created_at"`
}

// APIKey is a merchant's key pair. Only a hash of the secret is kept.
type APIKey struct {
	ID          string
	MerchantID  string
	Environment Environment
	PublicKey   string
	SecretHash  string // hex SHA-256 of the secret key
	SecretLast4 string // for display only
	CreatedAt   time.Time
	RevokedAt   *time.Time
	Version     int64
}

// AuditEvent records one operator action: who, what, on which target, when.
type AuditEvent struct {
	ID          string            `json:"id"`
	Actor       string            `json:"actor"`
	Action      string            `json:"action"`
	TargetType  string            `json:"target_type"`
	TargetID    string            `json:"target_id"`
	MerchantID  string            `json:"merchant_id"`
	Environment Environment       `json:"environment"`
	Details     map[string]string `json:"details"`
	CreatedAt   time.Time         `json:"created_at"`
}

// IdempotencyState is the lifecycle of an idempotency record.
type IdempotencyState string

// Idempotency record states.
const (
	IdempotencyInProgress IdempotencyState = "in_progress"
	IdempotencyComplete   IdempotencyState = "complete"
)

// IdempotencyRecord remembers one Idempotency-Key of one scope: the request's
// fingerprint, how far its execution got (RecoveryPoint, in the manner of
// Stripe's idempotency design) and, once complete, the answer to replay.
type IdempotencyRecord struct {
	Scope
	Key           string
	Fingerprint   string
	State         IdempotencyState
	RecoveryPoint string
	ResourceID    string
	LockedUntil   *time.Time
	Answer        *StoredAnswer // set once complete
	CreatedAt     time.Time
	UpdatedAt     time.Time
	ExpiresAt     time.Time
	Version       int64
}

// Job is a unit of durable background work.
type Job struct {
	ID         string
	Kind       string
	Scope      Scope
	TargetID   string
	Payload    []byte // JSON, kind-specific; may be empty
	DedupKey   string // optional; unique among jobs not completed
	RunAt      time.Time
	Attempts   int
	LeaseOwner string
	LeaseUntil *time.Time
	LastError  string
	CreatedAt  time.Time
	// Status is the stored state: JobAvailable, JobRunning, JobRetrying,
	// JobNeedsAttention or JobCompleted. Empty is JobAvailable. State
	// derives from it what an operator sees at a given moment.
	Status JobState
	// AttemptedAt is when the last attempt began (nil before the first).
	AttemptedAt *time.Time
	// CompletedAt is when the job completed (nil while it is pending).
	CompletedAt *time.Time
}

// TimeLayout is the wire format of timestamps: UTC, millisecond precision.
const TimeLayout = "2006-01-02T15:04:05.000Z"

// FormatTime renders t in the contract's timestamp format.
func FormatTime(t time.Time) string { return t.UTC().Format(TimeLayout) }

// FormatAmount renders minor units as the contract's amount string.
func FormatAmount(v int64) string { return strconv.FormatInt(v, 10) }
