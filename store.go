package paykit

import (
	"context"
	"errors"
	"time"
)

// Sentinel errors every Store returns the same way. The conformance suite in
// store/storetest checks them.
var (
	// ErrNotFound: no row with that identity in that scope.
	ErrNotFound = errors.New("paykit: not found")
	// ErrAlreadyExists: an insert collided with a unique key. Stores return a
	// *ConflictError, which matches ErrAlreadyExists under errors.Is.
	ErrAlreadyExists = errors.New("paykit: already exists")
	// ErrVersionConflict: an update carried a stale Version, or the backend
	// aborted the transaction to keep it serializable. The caller retries the
	// whole transaction with fresh reads.
	ErrVersionConflict = errors.New("paykit: version conflict")
	// ErrUnavailable: the backend cannot take more work now (no free
	// connection within the Store's bound, the database busy past its wait,
	// too many clients, or unreachable). Nothing was written; the caller may
	// retry later. The Service answers it as service_unavailable.
	ErrUnavailable = errors.New("paykit: store unavailable")
)

// ConflictError reports which unique key an insert collided with.
type ConflictError struct {
	Entity string // table-like name: "payment_intent", "api_key", ...
	Key    string // "id", "merchant_reference", "public_key", "key", "dedup_key"
}

// Error implements error.
func (e *ConflictError) Error() string {
	return "paykit: " + e.Entity + " with this " + e.Key + " already exists"
}

// Is makes a *ConflictError match ErrAlreadyExists.
func (e *ConflictError) Is(target error) bool { return target == ErrAlreadyExists }

// Store is the persistence contract of paykit. A backend implements Tx twice:
// on the Store itself (each call its own transaction) and inside InTx.
//
// Rules every backend keeps (store/storetest checks them):
//   - Times are stored and returned in UTC at millisecond precision or finer;
//     the Service truncates to milliseconds before it stores anything.
//   - Mutable rows carry Version. Update methods write only when the stored
//     Version equals the given one, then increment it (also in the passed
//     struct); otherwise they return ErrVersionConflict.
//   - Reads of tenant data take a Scope and never return another merchant's
//     or environment's rows (ErrNotFound instead).
//   - Lists are keyset-paginated: newest first by (CreatedAt, ID) descending,
//     strictly after the given Position.
//   - A Limit of 0 means no limit.
//   - Inside InTx, an error other than ErrNotFound, ErrAlreadyExists or
//     ErrVersionConflict may have aborted the backend's transaction (it does
//     on PostgreSQL): fn must return it, not carry on.
//   - The Store never reads a clock and never makes ids.
type Store interface {
	Tx
	// InTx runs fn in one atomic transaction: all of fn's writes commit
	// together when fn returns nil, none when it returns an error (which InTx
	// returns unchanged). fn may be retried by the caller on
	// ErrVersionConflict, and InTx may itself run fn again in a new
	// transaction when the first failed before committing (sqlstore does
	// on PostgreSQL, see its doc): fn must act only through tx, and keep
	// no state from a run that failed. fn must not call InTx.
	InTx(ctx context.Context, fn func(tx Tx) error) error
	// Queue returns the worker's side of the jobs that Tx.EnqueueJob
	// writes.
	Queue() JobQueue
	// Heartbeat records that instance was alive at now: a tiny write that
	// proves the backend accepts writes (a read-only database fails it).
	Heartbeat(ctx context.Context, instance string, now time.Time) error
	// TakeLease gives l.Name to l.Owner until l.Until when no one holds it
	// at l.Now (never taken, or its holder's Until <= l.Now), and reports
	// whether it did. Of concurrent callers at most one wins; a holder
	// does not renew its own live lease.
	TakeLease(ctx context.Context, l Lease) (bool, error)
	// LeaseHeld reports whether someone holds the lease name at now.
	LeaseHeld(ctx context.Context, name string, now time.Time) (bool, error)
	// PurgeLeases deletes the leases that lapsed before before and
	// returns how many.
	PurgeLeases(ctx context.Context, before time.Time) (int, error)
	// RecordKeyChecks records each of checks (a key fingerprint by key id)
	// whose key id has none yet, and returns every fingerprint recorded,
	// those just written included. A recorded fingerprint never changes.
	// Fingerprints are not secret: New compares them with the configured
	// keys' (see keyring.Fingerprint).
	RecordKeyChecks(ctx context.Context, checks map[string]string, now time.Time) (map[string]string, error)
	// Persistent reports whether the Store keeps its data across a restart
	// of the process. A persistent Store needs keys that survive it too.
	Persistent() bool
	// Close releases the backend's resources.
	Close() error
}

// Tx is the set of operations available inside and outside a transaction,
// grouped by resource.
type Tx interface {
	// Merchants.

	// CreateMerchant inserts m; ErrAlreadyExists when the id is taken.
	CreateMerchant(ctx context.Context, m *Merchant) error
	// GetMerchant returns the merchant or ErrNotFound.
	GetMerchant(ctx context.Context, id string) (*Merchant, error)
	// ListMerchants returns at most limit merchants, newest first,
	// strictly after the position after.
	ListMerchants(ctx context.Context, after *Position, limit int) ([]Merchant, error)

	// API keys: never their secrets, only hashes.

	// CreateAPIKey inserts k; ErrAlreadyExists when the id or public key is taken.
	CreateAPIKey(ctx context.Context, k *APIKey) error
	// GetAPIKey returns a key by id or ErrNotFound.
	GetAPIKey(ctx context.Context, id string) (*APIKey, error)
	// GetAPIKeyByPublicKey returns a key by its public key or ErrNotFound.
	GetAPIKeyByPublicKey(ctx context.Context, publicKey string) (*APIKey, error)
	// UpdateAPIKey writes k under the Version rule.
	UpdateAPIKey(ctx context.Context, k *APIKey) error
	// ListAPIKeys returns a merchant's keys, newest first.
	ListAPIKeys(ctx context.Context, merchantID string) ([]APIKey, error)

	// The append-only operator audit log.

	// CreateAuditEvent appends e; ErrAlreadyExists when the id is taken.
	CreateAuditEvent(ctx context.Context, e *AuditEvent) error
	// ListAuditEvents returns at most q.Limit events, newest first. The
	// log spans every tenant: q.Scope is ignored.
	ListAuditEvents(ctx context.Context, q ListQuery[AuditListParams]) ([]AuditEvent, error)

	// Payment intents.

	// CreatePaymentIntent inserts p; ErrAlreadyExists (Key "id" or
	// "merchant_reference") when the id, or the merchant reference within the
	// scope, is taken.
	CreatePaymentIntent(ctx context.Context, p *PaymentIntent) error
	// GetPaymentIntent returns the intent of that scope or ErrNotFound.
	GetPaymentIntent(ctx context.Context, scope Scope, id string) (*PaymentIntent, error)
	// FindPaymentIntent returns the intent of any scope or ErrNotFound: for
	// Provider callbacks, which name our id but not the tenant.
	FindPaymentIntent(ctx context.Context, id string) (*PaymentIntent, error)
	// UpdatePaymentIntent writes p under the Version rule.
	UpdatePaymentIntent(ctx context.Context, p *PaymentIntent) error
	// ListPaymentIntents returns at most q.Limit intents, newest first.
	ListPaymentIntents(ctx context.Context, q ListQuery[ListParams[PaymentStatus]]) ([]PaymentIntent, error)

	// Idempotency records.

	// CreateIdempotencyRecord inserts r; ErrAlreadyExists (Key "key") when the
	// scope already has a record for r.Key.
	CreateIdempotencyRecord(ctx context.Context, r *IdempotencyRecord) error
	// GetIdempotencyRecord returns the record or ErrNotFound.
	GetIdempotencyRecord(ctx context.Context, scope Scope, key string) (*IdempotencyRecord, error)
	// UpdateIdempotencyRecord writes r under the Version rule.
	UpdateIdempotencyRecord(ctx context.Context, r *IdempotencyRecord) error
	// DeleteIdempotencyRecord removes the record; ErrNotFound when absent.
	DeleteIdempotencyRecord(ctx context.Context, scope Scope, key string) error
	// PurgeIdempotencyRecords removes completed records that expired before
	// now and returns how many it removed.
	PurgeIdempotencyRecords(ctx context.Context, now time.Time) (int, error)

	// Jobs, the transactional side of durable background work: jobs are
	// written in the same transaction as the state change that needs them,
	// and run by the worker through the Store's JobQueue once it commits.

	// EnqueueJob inserts j; an empty j.Status is stored as JobAvailable.
	// When j.DedupKey is set and a job with that key exists that is not
	// completed, it returns ErrAlreadyExists (Key "dedup_key").
	EnqueueJob(ctx context.Context, j *Job) error
	// ExpediteJob moves the pending job with dedupKey to run no later than
	// runAt (a later RunAt is left alone); ErrNotFound when no such job
	// exists.
	ExpediteJob(ctx context.Context, dedupKey string, runAt time.Time) error
	// CompleteJobByDedupKey completes, at at, the pending job with
	// dedupKey, whose purpose the transaction met, unless a run holds it
	// under a live lease at at (that run finds the purpose met and
	// completes it). No such job is not an error.
	CompleteJobByDedupKey(ctx context.Context, dedupKey string, at time.Time) error
	// GetJob returns a job by id or ErrNotFound.
	GetJob(ctx context.Context, id string) (*Job, error)
	// DeferJobs moves the pending jobs of partition whose RunAt is before
	// until to until: what waits on a paused webhook endpoint.
	DeferJobs(ctx context.Context, partition string, until time.Time) error
	// ResumeJobs moves the pending jobs of partition whose RunAt is after
	// now and not after until to now: what waited on a webhook endpoint
	// paused until until, when the pause is lifted early.
	ResumeJobs(ctx context.Context, partition string, until, now time.Time) error

	// Payout intents. The account number reaches the Store only encrypted
	// (AccountCiphertext).

	// CreatePayoutIntent inserts p; ErrAlreadyExists (Key "id" or
	// "merchant_reference") when the id, or the merchant reference within
	// the scope, is taken.
	CreatePayoutIntent(ctx context.Context, p *PayoutIntent) error
	// GetPayoutIntent returns the payout of that scope or ErrNotFound.
	GetPayoutIntent(ctx context.Context, scope Scope, id string) (*PayoutIntent, error)
	// FindPayoutIntent returns a payout by id in any scope, for operators.
	FindPayoutIntent(ctx context.Context, id string) (*PayoutIntent, error)
	// UpdatePayoutIntent writes p under the Version rule.
	UpdatePayoutIntent(ctx context.Context, p *PayoutIntent) error
	// ListPayoutIntents returns at most q.Limit payouts, newest first.
	ListPayoutIntents(ctx context.Context, q PayoutQuery) ([]PayoutIntent, error)

	// The double-entry ledger and the balances it implies.

	// PostLedger appends t's postings as immutable entries and applies the
	// postings to non-external accounts to the balance of t.Scope and
	// t.Currency, atomically. An unbalanced t, or one posting to an account
	// LookupAccount does not know, is a plain error; a posting that would
	// take an account below zero when the account's rule does not let
	// t.Kind do so (Account.MayOverdraw) is ErrInsufficientFunds and
	// nothing is written. Entries get ids t.ID + "." + index; a t.ID that
	// was posted before is ErrAlreadyExists (Entity "ledger_txn", Key "id").
	// Concurrent posts never overdraw an account.
	PostLedger(ctx context.Context, t *LedgerTxn) error
	// GetBalance returns the balance of a scope and currency; a zero
	// Balance (not ErrNotFound) when nothing was ever posted.
	GetBalance(ctx context.Context, scope Scope, currency string) (*Balance, error)
	// ListBalances returns every balance of a scope, by currency.
	ListBalances(ctx context.Context, scope Scope) ([]Balance, error)
	// ListLedgerEntries returns entries oldest first (CreatedAt, ID).
	ListLedgerEntries(ctx context.Context, q LedgerQuery) ([]LedgerEntry, error)

	// Checkouts: only their stored fields, not those the Service projects
	// from the linked intent.

	// CreateCheckout inserts c; ErrAlreadyExists (Key "id" or
	// "merchant_reference") when the id, or the merchant reference within
	// the scope, is taken.
	CreateCheckout(ctx context.Context, c *Checkout) error
	// GetCheckout returns the checkout of that scope or ErrNotFound.
	GetCheckout(ctx context.Context, scope Scope, id string) (*Checkout, error)
	// UpdateCheckout writes c under the Version rule.
	UpdateCheckout(ctx context.Context, c *Checkout) error
	// ListCheckouts returns at most q.Limit checkouts, newest first.
	ListCheckouts(ctx context.Context, q ListQuery[ListParams[CheckoutStatus]]) ([]Checkout, error)

	// The append-only event log.

	// CreateEvent appends e; ErrAlreadyExists when the id is taken. e and
	// its resource are the caller's again once it returns: a Store keeps
	// a copy, never them.
	CreateEvent(ctx context.Context, e *Event) error
	// GetEvent returns the event of that scope or ErrNotFound.
	GetEvent(ctx context.Context, scope Scope, id string) (*Event, error)
	// ListEvents returns at most q.Limit events, newest first.
	ListEvents(ctx context.Context, q ListQuery[EventListParams]) ([]Event, error)

	// Webhook endpoints and delivery attempts.

	// CreateWebhookEndpoint inserts w; ErrAlreadyExists when the id is taken.
	CreateWebhookEndpoint(ctx context.Context, w *WebhookEndpoint) error
	// GetWebhookEndpoint returns an endpoint of any tenant or ErrNotFound.
	GetWebhookEndpoint(ctx context.Context, id string) (*WebhookEndpoint, error)
	// UpdateWebhookEndpoint writes w under the Version rule.
	UpdateWebhookEndpoint(ctx context.Context, w *WebhookEndpoint) error
	// ListWebhookEndpoints returns a merchant's endpoints of every
	// environment, newest first.
	ListWebhookEndpoints(ctx context.Context, merchantID string) ([]WebhookEndpoint, error)
	// CreateWebhookAttempt appends a; ErrAlreadyExists when the id is taken.
	CreateWebhookAttempt(ctx context.Context, a *WebhookAttempt) error
	// ListWebhookAttempts returns at most q.Limit attempts, newest first.
	ListWebhookAttempts(ctx context.Context, q WebhookAttemptQuery) ([]WebhookAttempt, error)

	// An operator's questions about the work in flight. These reads span
	// every tenant.

	// CountStaleProcessing counts the payment and payout intents that are
	// processing and last changed at or before updatedBefore.
	CountStaleProcessing(ctx context.Context, updatedBefore time.Time) (StaleCounts, error)
	// CountStatuses counts the resources of the type object names
	// ("payment_intent", "payout_intent", "checkout" or "refund") in scope
	// created at or after since, by status; statuses without any are
	// absent.
	CountStatuses(ctx context.Context, object string, scope Scope, since time.Time) (map[string]int, error)
	// CountPausedWebhookEndpoints counts the webhook endpoints whose
	// PausedUntil is after now.
	CountPausedWebhookEndpoints(ctx context.Context, now time.Time) (int, error)

	// Refunds.

	// CreateRefund inserts r; ErrAlreadyExists (Key "id" or
	// "merchant_reference") when the id, or the merchant reference within
	// the scope, is taken.
	CreateRefund(ctx context.Context, r *Refund) error
	// GetRefund returns the refund of that scope or ErrNotFound.
	GetRefund(ctx context.Context, scope Scope, id string) (*Refund, error)
	// FindRefund returns the refund of any scope or ErrNotFound: for
	// Provider callbacks, which name our id but not the tenant.
	FindRefund(ctx context.Context, id string) (*Refund, error)
	// UpdateRefund writes r under the Version rule.
	UpdateRefund(ctx context.Context, r *Refund) error
	// ListRefunds returns at most q.Limit refunds, newest first.
	// q.Filter.Country is ignored: a refund has no country.
	ListRefunds(ctx context.Context, q ListQuery[RefundListParams]) ([]Refund, error)

	// Balance transactions: the movements of a merchant's money.

	// CreateBalanceTransaction inserts b; ErrAlreadyExists when the id is
	// taken.
	CreateBalanceTransaction(ctx context.Context, b *BalanceTransaction) error
	// GetBalanceTransaction returns the balance transaction of that scope
	// or ErrNotFound.
	GetBalanceTransaction(ctx context.Context, scope Scope, id string) (*BalanceTransaction, error)
	// UpdateBalanceTransaction writes b under the Version rule.
	UpdateBalanceTransaction(ctx context.Context, b *BalanceTransaction) error
	// ListBalanceTransactions returns at most q.Limit balance
	// transactions, newest first. q.Filter.Country and MerchantReference
	// are ignored.
	ListBalanceTransactions(ctx context.Context, q ListQuery[BalanceTransactionListParams]) ([]BalanceTransaction, error)

	// Disputes.

	// CreateDispute inserts d; ErrAlreadyExists (Key "id", or
	// "provider_ref" when d.Provider already has a dispute with
	// d.ProviderRef).
	CreateDispute(ctx context.Context, d *Dispute) error
	// GetDispute returns the dispute of that scope or ErrNotFound.
	GetDispute(ctx context.Context, scope Scope, id string) (*Dispute, error)
	// FindDisputeByProviderRef returns, of any scope, the dispute provider
	// knows as ref, or ErrNotFound.
	FindDisputeByProviderRef(ctx context.Context, provider, ref string) (*Dispute, error)
	// UpdateDispute writes d under the Version rule.
	UpdateDispute(ctx context.Context, d *Dispute) error
	// ListDisputes returns at most q.Limit disputes, newest first.
	// q.Filter.Country and MerchantReference are ignored.
	ListDisputes(ctx context.Context, q ListQuery[DisputeListParams]) ([]Dispute, error)

	// Reconciliation: the settlement lines read, the runs and the breaks.

	// RecordSettledLines inserts the lines whose (Provider, Type,
	// Reference) is not recorded yet and returns, for each of lines in
	// order, the record that holds its key afterwards: the line itself
	// when it was inserted, else the earlier one.
	RecordSettledLines(ctx context.Context, lines []SettledLine) ([]SettledLine, error)
	// CreateReconciliationRun inserts r; ErrAlreadyExists when the id is
	// taken.
	CreateReconciliationRun(ctx context.Context, r *ReconciliationRun) error
	// LastReconciliationRun returns the newest run of provider (by
	// StartedAt, ID), or ErrNotFound.
	LastReconciliationRun(ctx context.Context, provider string) (*ReconciliationRun, error)
	// ListReconciliationRuns returns at most q.Limit runs of every
	// tenant, newest first (q.Scope is ignored).
	ListReconciliationRuns(ctx context.Context, q ListQuery[RunListParams]) ([]ReconciliationRun, error)
	// CreateReconciliationBreak inserts b; ErrAlreadyExists when the id
	// is taken.
	CreateReconciliationBreak(ctx context.Context, b *ReconciliationBreak) error
	// GetReconciliationBreak returns a break by id, or ErrNotFound.
	GetReconciliationBreak(ctx context.Context, id string) (*ReconciliationBreak, error)
	// UpdateReconciliationBreak writes b under the Version rule.
	UpdateReconciliationBreak(ctx context.Context, b *ReconciliationBreak) error
	// ListReconciliationBreaks returns at most q.Limit breaks of every
	// tenant, newest first (q.Scope is ignored).
	ListReconciliationBreaks(ctx context.Context, q ListQuery[BreakListParams]) ([]ReconciliationBreak, error)
	// FindOpenBreak returns the open break of provider, type and Provider
	// reference (the oldest by CreatedAt, ID, should there be several),
	// or ErrNotFound.
	FindOpenBreak(ctx context.Context, provider string, typ BreakType, reference string) (*ReconciliationBreak, error)
	// CountOpenBreaks counts the open breaks by type; types without any
	// are absent.
	CountOpenBreaks(ctx context.Context) (map[BreakType]int, error)
	// ListUnsettled returns what q selects.
	ListUnsettled(ctx context.Context, q UnsettledQuery) ([]Unsettled, error)

	// Resources by their Provider attempt.

	// FindByProviderRef returns, of any scope, the payment intent, payout
	// intent or refund whose attempt at provider has the Provider's id
	// ref, or ErrNotFound (also for an empty ref): for callbacks and
	// settlement lines, which name the Provider's id.
	FindByProviderRef(ctx context.Context, provider, ref string) (AttemptOwner, error)
}

// AttemptOwner is the resource a Provider attempt belongs to.
type AttemptOwner struct {
	Object  string // "payment_intent", "payout_intent" or "refund"
	Scope   Scope
	ID      string
	Attempt AttemptState
}

// Position is a keyset pagination position: the (CreatedAt, ID) of the last
// row of the previous page.
type Position struct {
	CreatedAt time.Time
	ID        string
}

// ListQuery is a list as the Service asks a Store for it: the rows of Scope
// that Filter selects (its empty fields do not filter), newest first,
// strictly after After, at most Limit of them. Filter is the host's list
// params: a Store ignores their PageParams, which the Service turned into
// After and Limit.
type ListQuery[F any] struct {
	Scope  Scope
	Filter F
	After  *Position
	Limit  int
}

// ClaimParams asks for up to Limit due jobs: not completed, RunAt <= Now
// and no live lease (LeaseUntil empty or <= Now), by Priority then oldest
// RunAt first; none of a partition in Skip, and at most PartitionLimit
// (0: no limit) of any other partition.
type ClaimParams struct {
	Owner          string
	Now            time.Time
	LeaseUntil     time.Time
	Limit          int
	Skip           []string
	PartitionLimit int
}

// JobRun names one run of a job: the job and its Attempts when it was
// claimed. Every claim increments Attempts, so a run that lost its lease to
// a later claim no longer matches: JobRun is the lease's fencing token.
type JobRun struct {
	ID       string
	Attempts int
}

// JobEnd is how a run ended: Status JobCompleted (at At), or JobWaiting,
// JobRetrying or JobNeedsAttention to run again at RunAt, with LastError
// (empty for JobWaiting).
type JobEnd struct {
	JobRun
	Status    JobState
	At        time.Time
	RunAt     time.Time
	LastError string
}

// JobQueue is the worker's side of the jobs: claiming due jobs under a
// lease, renewing and ending the leases, and what operators read of the
// queue. Each call runs on its own, outside any transaction.
type JobQueue interface {
	// ClaimJobs leases due jobs to p.Owner until p.LeaseUntil, increments
	// their Attempts, sets AttemptedAt to p.Now and Status to JobRunning (a
	// job that needs attention keeps that Status), and returns them oldest
	// RunAt first. Concurrent claimers never receive the same job while a
	// lease is live.
	ClaimJobs(ctx context.Context, p ClaimParams) ([]Job, error)
	// RenewJobLeases extends to until the leases owner holds on runs, in
	// one write, and returns the runs it could not extend: completed, or
	// claimed since by another run (their lease was lost).
	RenewJobLeases(ctx context.Context, owner string, runs []JobRun, until time.Time) (lost []JobRun, err error)
	// FinishJobs ends the runs owner holds, in one write: a completed job
	// is kept until PurgeCompletedJobs, with its DedupKey free for a new
	// job at once; another is released and rescheduled. A run whose lease
	// was lost is left alone and returned in lost.
	FinishJobs(ctx context.Context, owner string, ends []JobEnd) (lost []JobRun, err error)
	// PurgeCompletedJobs removes jobs completed before before and returns
	// how many it removed.
	PurgeCompletedJobs(ctx context.Context, before time.Time) (int, error)
	// ListJobs returns at most q.Limit jobs that match q, newest first by
	// (CreatedAt, ID), strictly after q.After, with their state judged
	// at now. The jobs of every tenant are listed: q.Scope is ignored.
	ListJobs(ctx context.Context, q ListQuery[JobListParams], now time.Time) ([]Job, error)
	// JobStats counts the pending (not completed) jobs of each kind at
	// now, ordered by kind; kinds without pending jobs are absent.
	JobStats(ctx context.Context, now time.Time) ([]JobKindStats, error)
	// Subscribe returns a channel that receives soon after a transaction
	// that wrote a job due at once (RunAt not after CreatedAt), or
	// expedited or resumed one, commits, and the function that ends the subscription.
	// Signals merge while one is pending, and may come without new work.
	// A Store that shares its jobs between processes signals for every
	// process's commits where it can; a nil channel means it cannot tell,
	// and the worker polls.
	Subscribe() (<-chan struct{}, func())
}

// Lease names a piece of work that one instance at a time does: Owner
// holds it from Now until Until.
type Lease struct {
	Name  string
	Owner string
	Now   time.Time
	Until time.Time
}

// PayoutQuery selects payout intents: those of a ListQuery, with two more
// filters of the operator API.
type PayoutQuery struct {
	ListQuery[ListParams[PayoutStatus]]
	// AllTenants lists across every merchant and environment instead of
	// Scope.
	AllTenants      bool
	ApprovalPending bool // only payouts waiting for operator approval
}
