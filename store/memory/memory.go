package memory

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/internal/snapshot"
	"github.com/paykit/paykit/internal/wakeup"
)

// Store is an in-memory paykit.Store. The zero value is not usable; call New.
type Store struct {
	mu     sync.Mutex
	d      data
	tx     txn                     // the transaction under mu, reused
	leases map[string]paykit.Lease // by name; outside transactions
	keys   map[string]string       // key fingerprints by key id; outside transactions
	wakes  wakeup.Hub              // the workers woken by due jobs
}

type data struct {
	merchants   map[string]paykit.Merchant
	apiKeys     map[string]paykit.APIKey
	keyByPublic map[string]string
	audit       map[string]paykit.AuditEvent
	payments    intents[paykit.PaymentIntent]
	payouts     intents[paykit.PayoutIntent]
	checkouts   intents[paykit.Checkout]
	refunds     intents[paykit.Refund]
	balanceTxns intents[paykit.BalanceTransaction]
	disputes    intents[paykit.Dispute]
	ledger      map[string]paykit.LedgerEntry // by entry id
	balances    map[balanceKey]map[string]accountRow
	idempotency map[refKey]paykit.IdempotencyRecord
	jobs        map[string]paykit.Job // pending
	jobsDue     dueIndex              // of jobs
	doneJobs    map[string]paykit.Job // completed, until purged
	jobByDedup  map[string]string     // of pending jobs
	events      map[string]paykit.Event
	endpoints   map[string]paykit.WebhookEndpoint
	attempts    map[string]paykit.WebhookAttempt
	recon       reconciliation
}

// refKey is a value unique within a scope (merchant reference, idempotency key).
type refKey struct {
	scope paykit.Scope
	value string
}

// New returns an empty Store.
func New() *Store {
	s := &Store{d: data{
		merchants:   map[string]paykit.Merchant{},
		apiKeys:     map[string]paykit.APIKey{},
		keyByPublic: map[string]string{},
		audit:       map[string]paykit.AuditEvent{},
		payments:    newIntents("payment_intent", paymentKey, copyPayment),
		payouts:     newIntents("payout_intent", payoutKey, copyPayout),
		checkouts:   newIntents("checkout", checkoutKey, copyCheckout),
		refunds:     newIntents("refund", refundKey, copyRefund),
		balanceTxns: newIntents("balance_transaction", balanceTxnKey, copyBalanceTxn),
		disputes:    newIntents("dispute", disputeKey, copyDispute),
		ledger:      map[string]paykit.LedgerEntry{},
		balances:    map[balanceKey]map[string]accountRow{},
		idempotency: map[refKey]paykit.IdempotencyRecord{},
		jobs:        map[string]paykit.Job{},
		doneJobs:    map[string]paykit.Job{},
		jobByDedup:  map[string]string{},
		events:      map[string]paykit.Event{},
		endpoints:   map[string]paykit.WebhookEndpoint{},
		attempts:    map[string]paykit.WebhookAttempt{},
		recon:       newReconciliation(),
	}}
	s.d.payments.share = sharePayment
	return s
}

// InTx runs fn atomically; see the package doc.
func (s *Store) InTx(ctx context.Context, fn func(tx paykit.Tx) error) error {
	return s.run(ctx, func(t *txn) error { return fn(t) })
}

// run executes fn under the lock with an undo log.
func (s *Store) run(ctx context.Context, fn func(t *txn) error) (err error) {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	// One transaction runs at a time, on one txn whose logs are reused.
	t := &s.tx
	t.d = &s.d
	defer func() {
		r := recover()
		for _, l := range t.touched {
			if r != nil || err != nil {
				l.rollback()
			}
			l.reset()
		}
		clear(t.touched)
		t.touched = t.touched[:0]
		if r != nil {
			panic(r)
		}
	}()
	t.due = false
	if err := fn(t); err != nil {
		return err
	}
	if t.due {
		s.wakes.Signal()
	}
	return nil
}

// Heartbeat succeeds unless ctx has ended: memory always takes writes, and
// nothing reads heartbeats back.
func (s *Store) Heartbeat(ctx context.Context, _ string, _ time.Time) error {
	return ctx.Err()
}

// RecordKeyChecks keeps the fingerprints of key ids that have none and
// returns all of them.
func (s *Store) RecordKeyChecks(ctx context.Context, checks map[string]string, _ time.Time) (map[string]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.keys == nil {
		s.keys = map[string]string{}
	}
	for id, fp := range checks {
		if _, ok := s.keys[id]; !ok {
			s.keys[id] = fp
		}
	}
	out := make(map[string]string, len(s.keys))
	for id, fp := range s.keys {
		out[id] = fp
	}
	return out, nil
}

// Persistent is false: everything is lost with the process.
func (s *Store) Persistent() bool { return false }

// Close does nothing; it exists to satisfy paykit.Store.
func (s *Store) Close() error { return nil }

// txn is the Tx handed to InTx callbacks; it must only be used under s.mu.
type txn struct {
	d       *data
	due     bool                // wrote a job due at once: workers are woken at commit
	logs    map[uintptr]undoLog // each map's undo log, by the map's address; kept for reuse
	touched []undoLog           // the logs this transaction wrote to
}

// undoLog restores one map as it was before the transaction.
type undoLog interface {
	rollback()
	reset()
}

// mapLog is the undo log of one map: the entries a transaction replaced,
// oldest first. Its array is reused by the next transactions, so a write
// records its undo without allocating.
type mapLog[K comparable, V any] struct {
	m    map[K]V
	recs []undoRec[K, V]
}

type undoRec[K comparable, V any] struct {
	k   K
	old V
	had bool
}

func (l *mapLog[K, V]) rollback() {
	for i := len(l.recs) - 1; i >= 0; i-- {
		if r := l.recs[i]; r.had {
			l.m[r.k] = r.old
		} else {
			delete(l.m, r.k)
		}
	}
}

func (l *mapLog[K, V]) reset() {
	clear(l.recs) // let the replaced values go
	l.recs = l.recs[:0]
}

// record notes m[k] as it is, before a write.
func record[K comparable, V any](t *txn, m map[K]V, k K) {
	id := reflect.ValueOf(m).Pointer()
	l, _ := t.logs[id].(*mapLog[K, V])
	if l == nil {
		if t.logs == nil {
			t.logs = make(map[uintptr]undoLog)
		}
		l = &mapLog[K, V]{m: m}
		t.logs[id] = l
	}
	if len(l.recs) == 0 {
		t.touched = append(t.touched, l)
	}
	old, had := m[k]
	l.recs = append(l.recs, undoRec[K, V]{k, old, had})
}

// put sets m[k] = v and records how to undo it.
func put[K comparable, V any](t *txn, m map[K]V, k K, v V) {
	record(t, m, k)
	m[k] = v
}

// del removes m[k] and records how to undo it.
func del[K comparable, V any](t *txn, m map[K]V, k K) {
	if _, had := m[k]; !had {
		return
	}
	record(t, m, k)
	delete(m, k)
}

// putJob writes the pending job j and indexes when it comes due.
func (t *txn) putJob(j paykit.Job) {
	put(t, t.d.jobs, j.ID, j)
	t.d.jobsDue.add(t, &j)
}

func conflict(entity, key string) error { return &paykit.ConflictError{Entity: entity, Key: key} }

// newestFirst orders by (CreatedAt, ID) descending.
func newestFirst(aT time.Time, aID string, bT time.Time, bID string) int {
	if c := bT.Compare(aT); c != 0 {
		return c
	}
	return cmp.Compare(bID, aID)
}

// beforePosition reports whether (t, id) sorts strictly after p in
// newest-first order, i.e. belongs on the page after p.
func beforePosition(t time.Time, id string, p *paykit.Position) bool {
	if p == nil {
		return true
	}
	return t.Before(p.CreatedAt) || (t.Equal(p.CreatedAt) && id < p.ID)
}

// page sorts rows newest first and keeps those after pos, at most limit.
func page[T any](rows []T, key func(*T) (time.Time, string), pos *paykit.Position, limit int) []T {
	slices.SortFunc(rows, func(a, b T) int {
		at, aid := key(&a)
		bt, bid := key(&b)
		return newestFirst(at, aid, bt, bid)
	})
	out := rows[:0]
	for _, r := range rows {
		t, id := key(&r)
		if beforePosition(t, id, pos) {
			out = append(out, r)
		}
		if limit > 0 && len(out) == limit {
			break
		}
	}
	return out
}

// --- merchants ---

// CreateMerchant implements paykit.Tx.
func (t *txn) CreateMerchant(_ context.Context, m *paykit.Merchant) error {
	if _, ok := t.d.merchants[m.ID]; ok {
		return conflict("merchant", "id")
	}
	put(t, t.d.merchants, m.ID, *m)
	return nil
}

// GetMerchant implements paykit.Tx.
func (t *txn) GetMerchant(_ context.Context, id string) (*paykit.Merchant, error) {
	m, ok := t.d.merchants[id]
	if !ok {
		return nil, paykit.ErrNotFound
	}
	return &m, nil
}

// --- API keys ---

// CreateAPIKey implements paykit.Tx.
func (t *txn) CreateAPIKey(_ context.Context, k *paykit.APIKey) error {
	if _, ok := t.d.apiKeys[k.ID]; ok {
		return conflict("api_key", "id")
	}
	if _, ok := t.d.keyByPublic[k.PublicKey]; ok {
		return conflict("api_key", "public_key")
	}
	put(t, t.d.apiKeys, k.ID, copyAPIKey(*k))
	put(t, t.d.keyByPublic, k.PublicKey, k.ID)
	return nil
}

// GetAPIKey implements paykit.Tx.
func (t *txn) GetAPIKey(_ context.Context, id string) (*paykit.APIKey, error) {
	k, ok := t.d.apiKeys[id]
	if !ok {
		return nil, paykit.ErrNotFound
	}
	k = copyAPIKey(k)
	return &k, nil
}

// GetAPIKeyByPublicKey implements paykit.Tx.
func (t *txn) GetAPIKeyByPublicKey(ctx context.Context, publicKey string) (*paykit.APIKey, error) {
	id, ok := t.d.keyByPublic[publicKey]
	if !ok {
		return nil, paykit.ErrNotFound
	}
	return t.GetAPIKey(ctx, id)
}

// UpdateAPIKey implements paykit.Tx.
func (t *txn) UpdateAPIKey(_ context.Context, k *paykit.APIKey) error {
	old, ok := t.d.apiKeys[k.ID]
	if !ok {
		return paykit.ErrNotFound
	}
	if old.Version != k.Version {
		return paykit.ErrVersionConflict
	}
	k.Version++
	put(t, t.d.apiKeys, k.ID, copyAPIKey(*k))
	return nil
}

// ListAPIKeys implements paykit.Tx.
func (t *txn) ListAPIKeys(_ context.Context, merchantID string) ([]paykit.APIKey, error) {
	var out []paykit.APIKey
	for _, k := range t.d.apiKeys {
		if k.MerchantID == merchantID {
			out = append(out, copyAPIKey(k))
		}
	}
	return page(out, func(k *paykit.APIKey) (time.Time, string) { return k.CreatedAt, k.ID }, nil, 0), nil
}

func copyAPIKey(k paykit.APIKey) paykit.APIKey {
	k.RevokedAt = copyTime(k.RevokedAt)
	return k
}

// --- audit ---

// CreateAuditEvent implements paykit.Tx.
func (t *txn) CreateAuditEvent(_ context.Context, e *paykit.AuditEvent) error {
	if _, ok := t.d.audit[e.ID]; ok {
		return conflict("audit_event", "id")
	}
	c := *e
	c.Details = maps.Clone(e.Details)
	put(t, t.d.audit, e.ID, c)
	return nil
}

// ListAuditEvents implements paykit.Tx.
func (t *txn) ListAuditEvents(_ context.Context, q paykit.ListQuery[paykit.AuditListParams]) ([]paykit.AuditEvent, error) {
	var out []paykit.AuditEvent
	for _, e := range t.d.audit {
		if f := q.Filter; (f.MerchantID == "" || e.MerchantID == f.MerchantID) && (f.Action == "" || e.Action == f.Action) {
			e.Details = maps.Clone(e.Details)
			out = append(out, e)
		}
	}
	return page(out, func(e *paykit.AuditEvent) (time.Time, string) { return e.CreatedAt, e.ID }, q.After, q.Limit), nil
}

// --- payment intents ---

func paymentKey(p *paykit.PaymentIntent) intentKey {
	return intentKey{p.ID, p.Scope(), p.MerchantReference, p.CreatedAt, &p.Version, &p.ProviderAttempt}
}

// CreatePaymentIntent implements paykit.Tx.
func (t *txn) CreatePaymentIntent(_ context.Context, p *paykit.PaymentIntent) error {
	return t.d.payments.create(t, p)
}

// GetPaymentIntent implements paykit.Tx.
func (t *txn) GetPaymentIntent(_ context.Context, scope paykit.Scope, id string) (*paykit.PaymentIntent, error) {
	return t.d.payments.get(&scope, id)
}

// FindPaymentIntent implements paykit.Tx.
func (t *txn) FindPaymentIntent(_ context.Context, id string) (*paykit.PaymentIntent, error) {
	return t.d.payments.get(nil, id)
}

// UpdatePaymentIntent implements paykit.Tx.
func (t *txn) UpdatePaymentIntent(_ context.Context, p *paykit.PaymentIntent) error {
	return t.d.payments.update(t, p)
}

// ListPaymentIntents implements paykit.Tx.
func (t *txn) ListPaymentIntents(_ context.Context, q paykit.ListQuery[paykit.ListParams[paykit.PaymentStatus]]) ([]paykit.PaymentIntent, error) {
	return t.d.payments.list(func(p *paykit.PaymentIntent) bool {
		return p.Scope() == q.Scope && matches(q.Filter, p.Status, p.Currency, p.Country, p.MerchantReference, p.CreatedAt)
	}, q.After, q.Limit), nil
}

func copyPayment(p paykit.PaymentIntent) paykit.PaymentIntent {
	return sharePayment(p, nil)
}

// sharePayment is copyPayment for an intent going into the Store, held
// being the intent as the Store holds it (or nil): a map equal to held's
// is not copied but shared with it. The Store never changes a map it
// holds and hands out copies only, so its rows, events and stored answers
// can share one.
func sharePayment(p paykit.PaymentIntent, held *paykit.PaymentIntent) paykit.PaymentIntent {
	if held != nil {
		p.Customer = shareMap(p.Customer, held.Customer)
		p.PaymentMethodOptions = shareMap(p.PaymentMethodOptions, held.PaymentMethodOptions)
		p.ProviderOptions = shareMap(p.ProviderOptions, held.ProviderOptions)
	} else {
		p.Customer = maps.Clone(p.Customer)
		p.PaymentMethodOptions = maps.Clone(p.PaymentMethodOptions)
		p.ProviderOptions = maps.Clone(p.ProviderOptions)
	}
	if p.NextAction != nil {
		na := *p.NextAction
		p.NextAction = &na
	}
	if p.Receipt != nil {
		r := *p.Receipt
		p.Receipt = &r
	}
	p.CompletedAt = copyTime(p.CompletedAt)
	p.CancelRequestedAt = copyTime(p.CancelRequestedAt)
	p.SettledAt = copyTime(p.SettledAt)
	return p
}

// shareMap is held when m has the same entries (both non-nil), else a
// copy of m.
func shareMap(m, held map[string]string) map[string]string {
	if m != nil && held != nil && maps.Equal(m, held) {
		return held
	}
	return maps.Clone(m)
}

// storePayment copies p, an event's or an answer's intent, into the
// Store: it is the row the Store holds under its id when equal to it (the
// intent as just written, the usual case), else a copy sharing that row's
// maps.
func (t *txn) storePayment(p *paykit.PaymentIntent) *paykit.PaymentIntent {
	if p == nil {
		return nil
	}
	held := t.d.payments.rows[p.ID]
	if held != nil && samePayment(held, p) {
		return held
	}
	c := sharePayment(*p, held)
	return &c
}

// samePayment reports whether a and b hold the same values
// (TestSamePaymentSeesEveryField keeps it to every field).
func samePayment(a, b *paykit.PaymentIntent) bool {
	return a.ID == b.ID && a.Version == b.Version && a.MerchantID == b.MerchantID &&
		a.Environment == b.Environment && a.Status == b.Status && a.Amount == b.Amount &&
		a.Currency == b.Currency && a.Country == b.Country && a.MerchantReference == b.MerchantReference &&
		a.PaymentMethod == b.PaymentMethod && sameMap(a.Customer, b.Customer) &&
		sameMap(a.PaymentMethodOptions, b.PaymentMethodOptions) && a.ReturnURL == b.ReturnURL &&
		a.CheckoutID == b.CheckoutID && samePtr(a.NextAction, b.NextAction) && a.FailureCode == b.FailureCode &&
		samePtr(a.Receipt, b.Receipt) && a.Provider == b.Provider && sameMap(a.ProviderOptions, b.ProviderOptions) &&
		a.ProviderRef == b.ProviderRef && a.Attempt == b.Attempt && a.ProviderURL == b.ProviderURL &&
		samePtr(a.CancelRequestedAt, b.CancelRequestedAt) && a.RefundedAmount == b.RefundedAmount &&
		a.RefundPendingAmount == b.RefundPendingAmount && a.Fee == b.Fee && samePtr(a.SettledAt, b.SettledAt) &&
		a.DisputedAmount == b.DisputedAmount && a.OpenDisputes == b.OpenDisputes && a.ExpiresAt == b.ExpiresAt &&
		samePtr(a.CompletedAt, b.CompletedAt) && a.CreatedAt == b.CreatedAt && a.UpdatedAt == b.UpdatedAt
}

// sameMap reports whether a and b are both nil or hold the same entries.
func sameMap(a, b map[string]string) bool {
	return (a == nil) == (b == nil) && maps.Equal(a, b)
}

// samePtr reports whether a and b are both nil or point to equal values.
func samePtr[T comparable](a, b *T) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

func copyTime(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	c := *t
	return &c
}

// --- idempotency ---

// CreateIdempotencyRecord implements paykit.Tx.
func (t *txn) CreateIdempotencyRecord(_ context.Context, r *paykit.IdempotencyRecord) error {
	k := refKey{r.Scope, r.Key}
	if _, ok := t.d.idempotency[k]; ok {
		return conflict("idempotency_record", "key")
	}
	put(t, t.d.idempotency, k, copyIdempotencyWith(*r, t.storePayment))
	return nil
}

// GetIdempotencyRecord implements paykit.Tx.
func (t *txn) GetIdempotencyRecord(_ context.Context, scope paykit.Scope, key string) (*paykit.IdempotencyRecord, error) {
	r, ok := t.d.idempotency[refKey{scope, key}]
	if !ok {
		return nil, paykit.ErrNotFound
	}
	r = copyIdempotency(r)
	return &r, nil
}

// UpdateIdempotencyRecord implements paykit.Tx.
func (t *txn) UpdateIdempotencyRecord(_ context.Context, r *paykit.IdempotencyRecord) error {
	k := refKey{r.Scope, r.Key}
	old, ok := t.d.idempotency[k]
	if !ok {
		return paykit.ErrNotFound
	}
	if old.Version != r.Version {
		return paykit.ErrVersionConflict
	}
	r.Version++
	put(t, t.d.idempotency, k, copyIdempotencyWith(*r, t.storePayment))
	return nil
}

// DeleteIdempotencyRecord implements paykit.Tx.
func (t *txn) DeleteIdempotencyRecord(_ context.Context, scope paykit.Scope, key string) error {
	k := refKey{scope, key}
	if _, ok := t.d.idempotency[k]; !ok {
		return paykit.ErrNotFound
	}
	del(t, t.d.idempotency, k)
	return nil
}

// PurgeIdempotencyRecords implements paykit.Tx.
func (t *txn) PurgeIdempotencyRecords(_ context.Context, now time.Time) (int, error) {
	n := 0
	for k, r := range t.d.idempotency {
		if r.State == paykit.IdempotencyComplete && r.ExpiresAt.Before(now) {
			del(t, t.d.idempotency, k)
			n++
		}
	}
	return n, nil
}

func copyIdempotency(r paykit.IdempotencyRecord) paykit.IdempotencyRecord {
	return copyIdempotencyWith(r, copyPaymentPtr)
}

// copyIdempotencyWith is copyIdempotency with copyPI copying the answer's
// payment intent.
func copyIdempotencyWith(r paykit.IdempotencyRecord, copyPI func(*paykit.PaymentIntent) *paykit.PaymentIntent) paykit.IdempotencyRecord {
	r.LockedUntil = copyTime(r.LockedUntil)
	if r.Answer != nil {
		a := *r.Answer
		a.Resource = copyResource(a.Resource, copyPI)
		r.Answer = &a
	}
	return r
}

// copyResource copies r, an event's or an answer's resource, with copyPI
// copying a payment intent (the most copied, so not by snapshot) and the
// rest as their snapshot read back.
func copyResource(r paykit.Resource, copyPI func(*paykit.PaymentIntent) *paykit.PaymentIntent) paykit.Resource {
	switch v := r.(type) {
	case nil:
		return nil
	case *paykit.PaymentIntent:
		return copyPI(v)
	}
	c, err := snapshot.Clone(r)
	if err != nil {
		panic(fmt.Sprintf("memory: copy %T: %v", r, err))
	}
	return c
}

// copyPaymentPtr is copyPayment of a pointer: the most copied value, so
// copied field by field rather than by deepCopy's JSON round trip.
func copyPaymentPtr(p *paykit.PaymentIntent) *paykit.PaymentIntent {
	if p == nil {
		return nil
	}
	c := copyPayment(*p)
	return &c
}

// --- jobs ---

// EnqueueJob implements paykit.Tx.
func (t *txn) EnqueueJob(_ context.Context, j *paykit.Job) error {
	if _, ok := t.job(j.ID); ok {
		return conflict("job", "id")
	}
	if j.DedupKey != "" {
		if _, ok := t.d.jobByDedup[j.DedupKey]; ok {
			return conflict("job", "dedup_key")
		}
	}
	row := copyJob(*j)
	if row.Status == "" {
		row.Status = paykit.JobAvailable
	}
	if row.Status == paykit.JobCompleted {
		put(t, t.d.doneJobs, row.ID, row)
		return nil
	}
	if row.DedupKey != "" {
		put(t, t.d.jobByDedup, row.DedupKey, row.ID)
	}
	t.putJob(row)
	t.due = t.due || !row.RunAt.After(row.CreatedAt)
	return nil
}

// job returns a pending or completed job.
func (t *txn) job(id string) (paykit.Job, bool) {
	if j, ok := t.d.jobs[id]; ok {
		return j, true
	}
	j, ok := t.d.doneJobs[id]
	return j, ok
}

// claimJobs implements paykit.JobQueue: the due jobs come from the due
// index, not from a scan of every pending job under the Store's lock.
func (t *txn) claimJobs(p paykit.ClaimParams) []paykit.Job {
	es := t.d.jobsDue.due(t, t.d.jobs, p.Now)
	slices.SortFunc(es, func(a, b dueEntry) int {
		if c := cmp.Compare(t.d.jobs[a.id].Priority, t.d.jobs[b.id].Priority); c != 0 {
			return c
		}
		if c := a.runAt.Compare(b.runAt); c != 0 {
			return c
		}
		return strings.Compare(a.id, b.id)
	})
	take, left := es[:0:0], es[:0]
	per := map[string]int{}
	for _, e := range es {
		part := t.d.jobs[e.id].Partition
		if (p.Limit > 0 && len(take) == p.Limit) ||
			(part != "" && (slices.Contains(p.Skip, part) || (p.PartitionLimit > 0 && per[part] == p.PartitionLimit))) {
			left = append(left, e)
			continue
		}
		per[part]++
		take = append(take, e)
	}
	t.d.jobsDue.putBack(left)
	es = take
	due := make([]paykit.Job, len(es))
	for i, e := range es {
		j := copyJob(t.d.jobs[e.id])
		until, now := p.LeaseUntil, p.Now
		j.LeaseOwner, j.LeaseUntil, j.AttemptedAt = p.Owner, &until, &now
		j.Attempts++
		if j.Status != paykit.JobNeedsAttention {
			j.Status = paykit.JobRunning
		}
		t.putJob(copyJob(j))
		due[i] = j
	}
	return due
}

// leased returns a copy of the pending job that run of owner leases, or
// false when the lease is no longer the run's.
func (t *txn) leased(run paykit.JobRun, owner string) (paykit.Job, bool) {
	j, ok := t.d.jobs[run.ID]
	if !ok || j.LeaseOwner != owner || j.Attempts != run.Attempts {
		return paykit.Job{}, false
	}
	return copyJob(j), true
}

// renewJobLeases implements paykit.JobQueue.
func (t *txn) renewJobLeases(owner string, runs []paykit.JobRun, until time.Time) []paykit.JobRun {
	var lost []paykit.JobRun
	for _, run := range runs {
		j, ok := t.leased(run, owner)
		if !ok {
			lost = append(lost, run)
			continue
		}
		j.LeaseUntil = &until
		t.putJob(j)
	}
	return lost
}

// finishJobs implements paykit.JobQueue.
func (t *txn) finishJobs(owner string, ends []paykit.JobEnd) []paykit.JobRun {
	var lost []paykit.JobRun
	for _, e := range ends {
		j, ok := t.leased(e.JobRun, owner)
		if !ok {
			lost = append(lost, e.JobRun)
			continue
		}
		j.LeaseOwner, j.LeaseUntil = "", nil
		if e.Status != paykit.JobCompleted {
			j.RunAt, j.LastError, j.Status = e.RunAt, e.LastError, e.Status
			t.putJob(j)
			continue
		}
		t.completeJob(j, e.At)
	}
	return lost
}

// completeJob moves the pending job j to the completed ones, at at.
func (t *txn) completeJob(j paykit.Job, at time.Time) {
	j.Status, j.CompletedAt = paykit.JobCompleted, &at
	del(t, t.d.jobs, j.ID)
	put(t, t.d.doneJobs, j.ID, j)
	if j.DedupKey != "" && t.d.jobByDedup[j.DedupKey] == j.ID {
		del(t, t.d.jobByDedup, j.DedupKey)
	}
}

// CompleteJobByDedupKey implements paykit.Tx.
func (t *txn) CompleteJobByDedupKey(_ context.Context, dedupKey string, at time.Time) error {
	id, ok := t.d.jobByDedup[dedupKey]
	if !ok {
		return nil
	}
	j := copyJob(t.d.jobs[id])
	if j.LeaseUntil != nil && j.LeaseUntil.After(at) {
		return nil // its run completes it
	}
	j.LeaseOwner, j.LeaseUntil = "", nil
	t.completeJob(j, at)
	return nil
}

// DeferJobs implements paykit.Tx.
func (t *txn) DeferJobs(_ context.Context, partition string, until time.Time) error {
	for _, j := range t.d.jobs {
		if j.Partition == partition && j.RunAt.Before(until) {
			j = copyJob(j)
			j.RunAt = until
			t.putJob(j)
		}
	}
	return nil
}

// ResumeJobs implements paykit.Tx.
func (t *txn) ResumeJobs(_ context.Context, partition string, until, now time.Time) error {
	for _, j := range t.d.jobs {
		if j.Partition == partition && j.RunAt.After(now) && !j.RunAt.After(until) {
			j = copyJob(j)
			j.RunAt = now
			t.putJob(j)
			t.due = true
		}
	}
	return nil
}

// ExpediteJob implements paykit.Tx.
func (t *txn) ExpediteJob(_ context.Context, dedupKey string, runAt time.Time) error {
	id, ok := t.d.jobByDedup[dedupKey]
	if !ok {
		return paykit.ErrNotFound
	}
	j := copyJob(t.d.jobs[id])
	if j.RunAt.After(runAt) {
		j.RunAt = runAt
		t.putJob(j)
		t.due = true
	}
	return nil
}

// GetJob implements paykit.Tx.
func (t *txn) GetJob(_ context.Context, id string) (*paykit.Job, error) {
	j, ok := t.job(id)
	if !ok {
		return nil, paykit.ErrNotFound
	}
	j = copyJob(j)
	return &j, nil
}

// purgeCompletedJobs implements paykit.JobQueue.
func (t *txn) purgeCompletedJobs(before time.Time) int {
	n := 0
	for id, j := range t.d.doneJobs {
		if j.CompletedAt == nil || j.CompletedAt.Before(before) {
			del(t, t.d.doneJobs, id)
			n++
		}
	}
	return n
}

// TakeLease implements paykit.Store.
func (s *Store) TakeLease(ctx context.Context, l paykit.Lease) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.leases == nil {
		s.leases = map[string]paykit.Lease{}
	}
	if held, ok := s.leases[l.Name]; ok && held.Until.After(l.Now) {
		return false, nil
	}
	s.leases[l.Name] = l
	return true, nil
}

// LeaseHeld implements paykit.Store.
func (s *Store) LeaseHeld(ctx context.Context, name string, now time.Time) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	l, ok := s.leases[name]
	return ok && l.Until.After(now), nil
}

// PurgeLeases implements paykit.Store.
func (s *Store) PurgeLeases(ctx context.Context, before time.Time) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for name, l := range s.leases {
		if l.Until.Before(before) {
			delete(s.leases, name)
			n++
		}
	}
	return n, nil
}

func copyJob(j paykit.Job) paykit.Job {
	j.Payload = slices.Clone(j.Payload)
	j.LeaseUntil = copyTime(j.LeaseUntil)
	j.AttemptedAt = copyTime(j.AttemptedAt)
	j.CompletedAt = copyTime(j.CompletedAt)
	return j
}

var (
	_ paykit.Store = (*Store)(nil)
	_ paykit.Tx    = (*txn)(nil)
)
