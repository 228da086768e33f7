package paykit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"
)

// PayoutStatus is the public lifecycle state of a payout intent.
type PayoutStatus string

// Payout statuses: the contract's closed set. The last four are terminal.
const (
	PayoutProcessing       PayoutStatus = "processing"
	PayoutRequiresAction   PayoutStatus = "requires_action"
	PayoutRequiresApproval PayoutStatus = "requires_approval"
	PayoutSucceeded        PayoutStatus = "succeeded"
	PayoutFailed           PayoutStatus = "failed"
	PayoutCancelled        PayoutStatus = "cancelled"
	PayoutExpired          PayoutStatus = "expired"
)

// payoutStatuses lists every payout status.
var payoutStatuses = []PayoutStatus{
	PayoutProcessing, PayoutRequiresAction, PayoutRequiresApproval,
	PayoutSucceeded, PayoutFailed, PayoutCancelled, PayoutExpired,
}

// Terminal reports whether a cancel is refused (invalid_state).
func (s PayoutStatus) Terminal() bool {
	switch s {
	case PayoutSucceeded, PayoutFailed, PayoutCancelled, PayoutExpired:
		return true
	}
	return false
}

// Valid reports whether s is a payout status.
func (s PayoutStatus) Valid() bool {
	for _, v := range payoutStatuses {
		if v == s {
			return true
		}
	}
	return false
}

// Recipient is where a payout goes. The full account number exists only in
// requests and, encrypted, in the Store; projections show its last four.
type Recipient struct {
	Type          string `json:"type" validate:"required,oneof=bank_account"`
	AccountNumber string `json:"account_number" validate:"required,min=4,max=34,alphanum"`
	BankCode      string `json:"bank_code" validate:"required,max=32"`
	HolderName    string `json:"holder_name" validate:"required,min=1,max=140"`
	HolderNameTH  string `json:"holder_name_th,omitempty" validate:"omitempty,min=1,max=140"`
}

// PayoutIntent is a payout to a bank account. Its json names are those of
// its stored snapshot; the contract's JSON is its Projection.
type PayoutIntent struct {
	ID                string       `json:"id,omitzero"`
	MerchantID        string       `json:"merchant_id,omitzero"`
	Environment       Environment  `json:"environment,omitzero"`
	Status            PayoutStatus `json:"status,omitzero"`
	ApprovalPending   bool         `json:"approval_pending,omitzero"` // renders approval_status "pending"
	Amount            int64        `json:"amount,omitzero"`
	Currency          string       `json:"currency,omitzero"`
	Country           string       `json:"country,omitzero"`
	MerchantReference string       `json:"merchant_reference,omitzero"`

	RecipientType     string `json:"recipient_type,omitzero"`
	BankCode          string `json:"bank_code,omitzero"`          // canonical
	ProviderBankCode  string `json:"provider_bank_code,omitzero"` // the route's code for BankCode, frozen at create: later route edits do not change it
	HolderName        string `json:"holder_name,omitzero"`
	HolderNameTH      string `json:"holder_name_th,omitzero"`
	AccountLast4      string `json:"account_last4,omitzero"`
	AccountCiphertext []byte `json:"account_ciphertext,omitzero"` // AES-256-GCM of the full account number
	AccountKeyID      string `json:"account_key_id,omitzero"`     // which key encrypted it

	ReservedAmount  int64 `json:"reserved_amount,omitzero"`  // held on the merchant's balance now
	CompletedAmount int64 `json:"completed_amount,omitzero"` // paid out
	ReturnedAmount  int64 `json:"returned_amount,omitzero"`  // came back after paying out

	FailureCode    string `json:"failure_code,omitzero"`
	FailureMessage string `json:"failure_message,omitzero"`
	CancelReason   string `json:"cancel_reason,omitzero"`

	ProviderAttempt              // internal: its Provider attempt
	CancelRequestedAt *time.Time `json:"cancel_requested_at,omitzero"`
	ApprovalExpiresAt *time.Time `json:"approval_expires_at,omitzero"` // end of an approval hold
	CreatedAt         time.Time  `json:"created_at,omitzero"`
	UpdatedAt         time.Time  `json:"updated_at,omitzero"`
	Version           int64      `json:"version,omitzero"`
}

// Scope returns the tenant of the payout.
func (p *PayoutIntent) Scope() Scope { return Scope{p.MerchantID, p.Environment} }

// attemptKey is the Provider idempotency key of the payout's transfer: its
// id.
func (p *PayoutIntent) attemptKey() string { return p.ID }

// attemptRef names the payout's transfer at its Provider.
func (p *PayoutIntent) attemptRef() AttemptRef {
	return AttemptRef{Key: p.attemptKey(), Reference: p.ProviderRef}
}

// CreatePayoutIntentRequest is the body of POST /payout_intents.
type CreatePayoutIntentRequest struct {
	Amount            int64     `json:"amount" validate:"minor_units"` // minor units
	Currency          string    `json:"currency" validate:"required,currency"`
	Country           string    `json:"country" validate:"required,country"`
	MerchantReference string    `json:"merchant_reference" validate:"required,max=256"`
	Recipient         Recipient `json:"recipient" validate:"required"`
}

// CancelPayoutIntentRequest is the optional body of a payout cancel.
type CancelPayoutIntentRequest struct {
	Reason string `json:"reason,omitempty" validate:"omitempty,min=1,max=512"`
}

// Job kinds of payouts.
const (
	jobPayoutDispatch = "payout.dispatch" // send (or re-send, same key) the transfer
	jobPayoutInquire  = "payout.inquire"  // resolve an in-flight or uncertain transfer
	jobPayoutCancel   = "payout.cancel"   // cancel an in-flight transfer at the Provider
	jobPayoutExpire   = "payout.expire"   // end an approval hold that nobody resolved
)

func (s *Service) registerPayoutJobs() {
	s.handle(jobPayoutDispatch, s.dispatchPayoutJob, providerJobTimeout, JobPriorityMoney)
	s.handle(jobPayoutInquire, s.inquirePayoutJob, providerJobTimeout, JobPriorityMoney)
	s.handle(jobPayoutCancel, s.cancelPayoutJob, providerJobTimeout, JobPriorityMoney)
	s.handle(jobPayoutExpire, s.expirePayoutJob, providerJobTimeout, JobPriorityMoney)
}

// validatePayout checks a create request against the routing; nothing is
// persisted.
func (s *Service) validatePayout(env Environment, req *CreatePayoutIntentRequest) (int64, *PayoutRoute, PayoutBank, error) {
	if err := validateRequest(req); err != nil {
		return 0, nil, PayoutBank{}, err
	}
	amount := req.Amount
	code := req.Recipient.BankCode
	if !s.routing.RecognisedBankCode(req.Country, code) {
		return 0, nil, PayoutBank{}, invalidRequest("recipient.bank_code", "recipient.bank_code %q is not a bank code of %s.", code, req.Country)
	}
	route, bank, ok := s.payoutRoute(env, req.Country, req.Currency, code, amount)
	if !ok {
		return 0, nil, PayoutBank{}, errorf(CodePayoutRouteUnavailable, "recipient.bank_code", "Payouts to %s in %s %s are not available for this amount in %s.", code, req.Country, req.Currency, env)
	}
	if bank.RequiresHolderNameTH && req.Recipient.HolderNameTH == "" {
		return 0, nil, PayoutBank{}, errorf(CodeMissingRequiredField, "recipient.holder_name_th", "recipient.holder_name_th is required for payouts to %s.", code)
	}
	return amount, route, bank, nil
}

// payoutRoute picks the route of a new payout as paymentRoute does: the
// first by priority whose Provider takes new transfers, else the first
// whose Provider is not disabled.
func (s *Service) payoutRoute(env Environment, country, currency, bankCode string, amount int64) (*PayoutRoute, PayoutBank, bool) {
	routes := s.routing.PayoutRoutes(env, country, currency, bankCode, amount)
	pick := func(r *PayoutRoute) (*PayoutRoute, PayoutBank, bool) {
		b, _ := r.Bank(bankCode)
		return r, b, true
	}
	for _, r := range routes {
		if s.usable(r.Provider) {
			return pick(r)
		}
	}
	for _, r := range routes {
		if !s.disabled[r.Provider] {
			return pick(r)
		}
	}
	return nil, PayoutBank{}, false
}

// needsApproval applies the approval policy.
func (s *Service) needsApproval(p *PayoutIntent) bool {
	if s.approvalPolicy != nil {
		return s.approvalPolicy(p)
	}
	return s.approvalThreshold > 0 && p.Amount >= s.approvalThreshold
}

// CreatePayoutIntent creates a payout, reserves its amount on the merchant's
// balance and dispatches it (or holds it for operator approval). The answer
// is 201 once the Provider acknowledged the transfer, or when its outcome is
// uncertain (processing). When the dispatch is not acknowledged it is a 503
// dispatch_unavailable: the payout and its Provider idempotency key stay, and
// a retry with the same key and body (or the worker) resumes the same
// dispatch, so a second payout or transfer cannot exist.
func (s *Service) CreatePayoutIntent(ctx context.Context, p Principal, idempotencyKey string, req CreatePayoutIntentRequest) (*PayoutIntent, Answer, error) {
	return s.createPayoutIntent(ctx, nil, p, idempotencyKey, req)
}

// CreatePayoutIntentTx is CreatePayoutIntent inside the host's transaction
// tx (see sqlstore.Store.WrapTx): the payout, its reservation on the
// balance, its event and its dispatch job (or approval hold) commit or
// roll back with the host's rows. The transfer is sent by the worker after
// the host commits, and that completes the idempotency record. A payout
// held for approval answers AnswerCreated, one to be dispatched
// AnswerAccepted. It does not retry: see CreateCheckoutTx for its errors.
func (s *Service) CreatePayoutIntentTx(ctx context.Context, tx Tx, p Principal, idempotencyKey string, req CreatePayoutIntentRequest) (*PayoutIntent, Answer, error) {
	if tx == nil {
		return nil, Answer{}, internalError(errNilTx)
	}
	return s.createPayoutIntent(ctx, tx, p, idempotencyKey, req)
}

// createPayoutIntent is CreatePayoutIntent in host's transaction, or in
// its own when host is nil.
func (s *Service) createPayoutIntent(ctx context.Context, host Tx, p Principal, idempotencyKey string, req CreatePayoutIntentRequest) (*PayoutIntent, Answer, error) {
	op, err := newOperation(p.Scope, idempotencyKey, "payout_intent.create", "", req)
	if err != nil {
		return nil, Answer{}, err
	}
	op.deferred = host != nil
	// As for payments: a known key skips validation, so a request that
	// fails it is answered so only when its key is new.
	amount, route, bank, invalid := s.validatePayout(p.Environment, &req)
	if invalid != nil {
		if _, err := s.reader(host).GetIdempotencyRecord(ctx, p.Scope, idempotencyKey); errors.Is(err, ErrNotFound) {
			return nil, Answer{}, invalid
		} else if err != nil {
			return nil, Answer{}, internalError(err)
		}
	}
	now := s.Now()
	op.resourceID = s.newID("po")
	var c *claim
	var po *PayoutIntent
	var held *StoredAnswer // the answer of a payout held for approval, as stored
	err = s.within(ctx, host, func(tx Tx) error {
		held = nil
		var err error
		if c, err = s.begin(ctx, tx, op, now); err != nil || c.replay != nil {
			return err
		}
		if c.resumed {
			po, err = tx.GetPayoutIntent(ctx, p.Scope, c.record.ResourceID)
			return err
		}
		if invalid != nil { // the record we saw was purged meanwhile
			return invalid
		}
		po = &PayoutIntent{
			ID: op.resourceID, MerchantID: p.MerchantID, Environment: p.Environment,
			Status: PayoutProcessing, Amount: amount, Currency: req.Currency, Country: req.Country,
			MerchantReference: req.MerchantReference, RecipientType: req.Recipient.Type,
			BankCode: req.Recipient.BankCode, ProviderBankCode: bank.ProviderCode, HolderName: req.Recipient.HolderName,
			HolderNameTH: req.Recipient.HolderNameTH, AccountLast4: last4(req.Recipient.AccountNumber),
			ProviderAttempt: ProviderAttempt{Provider: route.Provider}, CreatedAt: now, UpdatedAt: now,
		}
		if po.AccountKeyID, po.AccountCiphertext, err = s.accountKeys.Seal(req.Recipient.AccountNumber, po.ID); err != nil {
			return err
		}
		if s.needsApproval(po) {
			exp := now.Add(s.approvalTTL)
			po.Status, po.ApprovalPending, po.ApprovalExpiresAt = PayoutRequiresApproval, true, &exp
		} else {
			po.Attempt = AttemptCreating
		}
		if err := tx.CreatePayoutIntent(ctx, po); err != nil {
			return err
		}
		if err := s.reserve(ctx, tx, po, now); err != nil {
			return err
		}
		if po.ApprovalPending {
			if err := s.enqueue(ctx, tx, &Job{Kind: jobPayoutExpire, Scope: p.Scope, TargetID: po.ID, RunAt: *po.ApprovalExpiresAt, DedupKey: jobPayoutExpire + ":" + po.ID}); err != nil {
				return err
			}
			held, err = finish(ctx, tx, c.record, AnswerCreated, po, now)
			return err
		}
		if c.record.RecoveryPoint != recoveryAttempt || c.record.ResourceID != po.ID { // begin may have started it there
			if err := checkpoint(ctx, tx, c.record, recoveryAttempt, po.ID, now); err != nil {
				return err
			}
		}
		at := now.Add(idempotencyLock)
		if op.deferred { // the worker sends it as soon as the host commits
			at = now
		}
		// A new payout has no dispatch job to expedite.
		return s.enqueue(ctx, tx, payoutDispatchJob(po, at, idempotencyKey))
	})
	switch {
	case errors.Is(err, ErrInsufficientFunds):
		return nil, Answer{}, errorf(CodeInsufficientBalance, "amount", "The available %s balance does not cover this payout.", req.Currency)
	case errors.Is(err, ErrAlreadyExists):
		return nil, Answer{}, errorf(CodeDuplicateMerchantReference, "merchant_reference", "merchant_reference %q is already used by another payout intent.", req.MerchantReference)
	case err != nil:
		return nil, Answer{}, serviceError(host, err)
	}
	if c.replay != nil {
		return answered[PayoutIntent](c.replay, true)
	}
	if host != nil {
		if po.ApprovalPending {
			return po, Answer{Kind: AnswerCreated}, nil
		}
		return po, Answer{Kind: AnswerAccepted}, nil
	}
	var (
		out *PayoutIntent
		ans Answer
	)
	switch {
	case held != nil:
		// Completed with the payout, in the same transaction: this
		// request's own answer, not a replay.
		return answered[PayoutIntent](held, false)
	case po.ApprovalPending:
		out, ans, err = finishCreate(ctx, s, po.Scope(), po.ID, idempotencyKey, Tx.GetPayoutIntent)
	default:
		// The payout and record as this request committed them: neither
		// is read again before the Provider call or the answer's update.
		out, ans, err = s.dispatch(ctx, po.Scope(), po.ID, idempotencyKey, po, c.record)
	}
	if err != nil {
		s.unlockIfUnavailable(ctx, p.Scope, idempotencyKey, err)
	}
	return out, ans, err
}

func last4(account string) string {
	if len(account) <= 4 {
		return account
	}
	return account[len(account)-4:]
}

// reserve moves the payout's amount from available to reserved.
func (s *Service) reserve(ctx context.Context, tx Tx, po *PayoutIntent, now time.Time) error {
	po.ReservedAmount = po.Amount
	if err := s.post(ctx, tx, po.Scope(), po.Currency, "payout.reserved", po.ID, now,
		Posting{AccountAvailable, -po.Amount}, Posting{AccountReserved, po.Amount}); err != nil {
		return err
	}
	return tx.UpdatePayoutIntent(ctx, po)
}

// post writes one balanced ledger transaction.
func (s *Service) post(ctx context.Context, tx Tx, scope Scope, currency, kind, ref string, at time.Time, postings ...Posting) error {
	return tx.PostLedger(ctx, &LedgerTxn{ID: s.newID("ltx"), Scope: scope, Currency: currency, Kind: kind, RefID: ref, Postings: postings, At: at})
}

// scheduleDispatch makes the worker (re)send po's transfer at the latest at
// at; idemKey names the merchant's idempotency record it completes, if any.
func (s *Service) scheduleDispatch(ctx context.Context, tx Tx, po *PayoutIntent, at time.Time, idemKey string) error {
	return s.enqueueSoon(ctx, tx, payoutDispatchJob(po, at, idemKey))
}

// payoutDispatchJob is the job that (re)sends po's transfer at the latest
// at at; idemKey names the merchant's idempotency record it completes, if
// any.
func payoutDispatchJob(po *PayoutIntent, at time.Time, idemKey string) *Job {
	var payload []byte
	if idemKey != "" {
		payload, _ = json.Marshal(resumePayload{IdempotencyKey: idemKey})
	}
	return &Job{Kind: jobPayoutDispatch, Scope: po.Scope(), TargetID: po.ID, RunAt: at, Payload: payload, DedupKey: jobPayoutDispatch + ":" + po.ID}
}

// dispatch sends the transfer of a payout whose attempt is creating (the
// Provider key is the payout id, so a repeat never makes a second
// transfer), then in one transaction applies the answer and completes the
// idempotency record under idemKey, if any (finishOwned). An
// unacknowledged dispatch answers dispatch_unavailable and leaves the
// record open for the retry. Without idemKey it returns no payout.
// po and rec, when known, are the payout and the record as last
// committed: neither is read, nor is po when the answer writes it.
func (s *Service) dispatch(ctx context.Context, scope Scope, id, idemKey string, po *PayoutIntent, rec *IdempotencyRecord) (*PayoutIntent, Answer, error) {
	if po == nil {
		var err error
		if po, err = s.store.GetPayoutIntent(ctx, scope, id); err != nil {
			return nil, Answer{}, asServiceError(err)
		}
	}
	var result *Result
	sentTo := po.Provider
	if po.Attempt == AttemptCreating {
		moved, r, err := sendCreate(ctx, s, payoutAttempts, po)
		if err != nil {
			return nil, Answer{}, err
		}
		po, sentTo = moved, moved.Provider
		if r.Outcome == OutcomeUnacknowledged {
			// Let the merchant's retry take over at once; the worker retries too.
			err := s.inTx(ctx, func(tx Tx) error {
				if idemKey != "" {
					if err := unlock(ctx, tx, scope, idemKey, s.Now()); err != nil {
						return err
					}
				}
				cur, err := tx.GetPayoutIntent(ctx, scope, id)
				if err != nil {
					return err
				}
				return s.scheduleDispatch(ctx, tx, cur, s.Now().Add(2*time.Second), idemKey)
			})
			if err != nil {
				return nil, Answer{}, asServiceError(err)
			}
			return nil, Answer{}, errorf(CodeDispatchUnavailable, "", "The payout was stored but its dispatch was not acknowledged. Retry with the same Idempotency-Key and body; no second payout will be created.")
		}
		result = &r
	}
	if result == nil && idemKey == "" {
		return nil, Answer{}, nil
	}
	known := po // as this request last knew it, when the answer writes it
	if result == nil {
		known = nil
	}
	_, stored, replayed, err := settleCreate(ctx, s, payoutAttempts, scope, id, known, sentTo, result, idemKey, rec)
	if err != nil || idemKey == "" {
		return nil, Answer{}, err
	}
	return answered[PayoutIntent](stored, replayed)
}

// payoutAttempts is the Provider-attempt core's view of payouts.
var payoutAttempts = &attemptKind[PayoutIntent, *PayoutIntent]{
	resource: "payout_intent", inquireJob: jobPayoutInquire,
	get:    Tx.GetPayoutIntent,
	update: Tx.UpdatePayoutIntent,
	create: (*Service).callCreatePayout,
	inquire: func(s *Service, ctx context.Context, po *PayoutIntent) (Result, error) {
		pp, err := s.payoutProvider(ctx, po)
		if err != nil {
			return Result{}, err
		}
		return pp.InquirePayout(ctx, po.attemptRef()), nil
	},
	fallback:    (*Service).movePayoutToFallback,
	applyCreate: (*Service).applyPayoutCreate,
	applyFinal:  (*Service).applyPayoutFinal,
	done: func(po *PayoutIntent, r Result) bool {
		return po.Attempt == AttemptClosed && r.Outcome != OutcomeReturned
	},
	resend: func(s *Service, ctx context.Context, tx Tx, po *PayoutIntent, now time.Time) error {
		return s.scheduleDispatch(ctx, tx, po, now, "")
	},
}

func (s *Service) payoutProvider(ctx context.Context, po *PayoutIntent) (PayoutProvider, error) {
	a, err := s.provider(ctx, po.Provider, CapPayouts)
	if err != nil {
		return nil, internalError(fmt.Errorf("payout %s: %w", po.ID, err))
	}
	return a.payouts, nil
}

// movePayoutToFallback moves a payout whose Provider refused its transfer
// to the next route by priority that reaches its bank and whose Provider
// takes new transfers, still creating, and returns it; nil when there is
// none or another worker moved it first.
func (s *Service) movePayoutToFallback(ctx context.Context, po *PayoutIntent) (*PayoutIntent, error) {
	routes := s.routing.PayoutRoutes(po.Environment, po.Country, po.Currency, po.BankCode, po.Amount)
	i := slices.IndexFunc(routes, func(r *PayoutRoute) bool { return r.Provider == po.Provider })
	if i < 0 {
		return nil, nil
	}
	var next *PayoutRoute
	for _, r := range routes[i+1:] {
		if r.Provider != po.Provider && s.usable(r.Provider) {
			next = r
			break
		}
	}
	if next == nil {
		return nil, nil
	}
	bank, _ := next.Bank(po.BankCode)
	var moved *PayoutIntent
	err := s.inTx(ctx, func(tx Tx) error {
		cur, err := tx.GetPayoutIntent(ctx, po.Scope(), po.ID)
		if err != nil || cur.Attempt != AttemptCreating || cur.Provider != po.Provider {
			return err
		}
		cur.Provider, cur.ProviderBankCode, cur.UpdatedAt = next.Provider, bank.ProviderCode, s.Now()
		if err := tx.UpdatePayoutIntent(ctx, cur); err != nil {
			return err
		}
		moved = cur
		return nil
	})
	if err != nil || moved == nil {
		return nil, err
	}
	s.log.InfoContext(ctx, "provider refused the transfer; next route", "payout_intent", po.ID, "refused_by", po.Provider, "provider", moved.Provider)
	return moved, nil
}

// callCreatePayout decrypts the account number and sends the transfer.
func (s *Service) callCreatePayout(ctx context.Context, po *PayoutIntent) (Result, error) {
	pp, err := s.payoutProvider(ctx, po)
	if err != nil {
		return Result{}, err
	}
	account, err := s.accountKeys.Open(po.AccountKeyID, po.AccountCiphertext, po.ID)
	if err != nil {
		return Result{}, internalError(fmt.Errorf("payout %s: %w", po.ID, err))
	}
	code := po.ProviderBankCode
	if code == "" { // stored before codes were frozen at create
		routes := s.routing.PayoutRoutes(po.Environment, po.Country, po.Currency, po.BankCode, po.Amount)
		i := slices.IndexFunc(routes, func(r *PayoutRoute) bool { return r.Provider == po.Provider })
		if i < 0 {
			return Result{}, internalError(fmt.Errorf("payout %s: no route to %s any more, and no Provider bank code was recorded at create", po.ID, po.BankCode))
		}
		bank, _ := routes[i].Bank(po.BankCode)
		code = bank.ProviderCode
	}
	r := pp.CreatePayout(ctx, PayoutRequest{
		Key: po.ID, Amount: po.Amount, Currency: po.Currency, Country: po.Country,
		BankCode: code, AccountNumber: account, HolderName: po.HolderName, HolderNameTH: po.HolderNameTH,
	})
	s.providerCreated(ctx, po.Provider, "create_payout", r, slog.String("payout_intent", po.ID))
	return r, nil
}

// applyPayoutCreate applies the answer to a dispatch, in tx.
func (s *Service) applyPayoutCreate(ctx context.Context, tx Tx, po *PayoutIntent, r Result) error {
	now := s.Now()
	po.learnRef(r)
	switch {
	case r.Outcome == OutcomeUnknown:
		po.Attempt = AttemptUnknown
	case r.Outcome == OutcomePending || r.Outcome == OutcomeRequiresAction:
		po.Attempt = AttemptOpen
	default:
		return s.applyPayoutFinal(ctx, tx, po, r, now)
	}
	po.UpdatedAt = now
	if err := s.enqueue(ctx, tx, &Job{Kind: jobPayoutInquire, Scope: po.Scope(), TargetID: po.ID, RunAt: now.Add(time.Second), DedupKey: jobPayoutInquire + ":" + po.ID}); err != nil {
		return err
	}
	return tx.UpdatePayoutIntent(ctx, po)
}

// applyPayoutFinal applies a final Provider result to po in tx with its
// ledger movement. Non-final results change nothing.
func (s *Service) applyPayoutFinal(ctx context.Context, tx Tx, po *PayoutIntent, r Result, now time.Time) error {
	var m ledgerMove
	switch r.Outcome {
	case OutcomeSucceeded:
		if po.Status == PayoutSucceeded {
			return nil
		}
		po.CompletedAmount = po.ReservedAmount
		m = endReservation(po, "payout.succeeded", AccountPayouts)
		po.Status = PayoutSucceeded
	case OutcomeFailed, OutcomeRefused:
		code := r.FailureCode
		if r.Outcome == OutcomeRefused {
			code = FailureProviderError // refused before any transfer existed
		}
		if code == "" {
			code = FailureProviderDeclined
		}
		m = endReservation(po, "payout.released", AccountAvailable)
		po.Status, po.FailureCode, po.FailureMessage = PayoutFailed, code, failureMessages[code]
	case OutcomeCancelled:
		m = endReservation(po, "payout.released", AccountAvailable)
		po.Status = PayoutCancelled
	case OutcomeReturned:
		if po.ReturnedAmount > 0 {
			return nil // already returned: a repeated report changes nothing
		}
		if po.Status != PayoutSucceeded {
			if err := s.applyPayoutFinal(ctx, tx, po, Result{Outcome: OutcomeSucceeded}, now); err != nil {
				return err
			}
		}
		m = ledgerMove{"payout.returned", AccountPayouts, AccountAvailable, po.CompletedAmount}
		po.Status, po.ReturnedAmount = PayoutFailed, po.CompletedAmount
		po.FailureCode, po.FailureMessage = FailureFundsReturned, failureMessages[FailureFundsReturned]
	default:
		return nil
	}
	po.Attempt, po.UpdatedAt = AttemptClosed, now
	return s.updatePayout(ctx, tx, po, now, m)
}

// ledgerMove is the ledger transaction a change of a payout calls for:
// amount from one account to another. A zero amount moves nothing.
type ledgerMove struct {
	kind     string
	from, to string
	amount   int64
}

// endReservation zeroes po's reservation and returns its move to account
// to.
func endReservation(po *PayoutIntent, kind, to string) ledgerMove {
	m := ledgerMove{kind, AccountReserved, to, po.ReservedAmount}
	po.ReservedAmount = 0
	return m
}

// updatePayout writes po by its versioned update, then posts m. The update
// comes first: a transaction that read po before another changed it fails
// there with ErrVersionConflict, and is retried with fresh reads, rather
// than finding the reservation it would move already moved
// (ErrInsufficientFunds).
func (s *Service) updatePayout(ctx context.Context, tx Tx, po *PayoutIntent, now time.Time, m ledgerMove) error {
	if err := tx.UpdatePayoutIntent(ctx, po); err != nil {
		return err
	}
	if m.amount == 0 {
		return nil
	}
	bt := &BalanceTransaction{MerchantID: po.MerchantID, Environment: po.Environment, Source: po.ID, Currency: po.Currency}
	switch m.kind {
	case "payout.succeeded":
		bt.Type, bt.Amount = BalanceTxnPayout, -m.amount
	case "payout.returned":
		bt.Type, bt.Amount = BalanceTxnPayoutReturn, m.amount
	default: // between the merchant's own accounts
		return s.post(ctx, tx, po.Scope(), po.Currency, m.kind, po.ID, now, Posting{m.from, -m.amount}, Posting{m.to, m.amount})
	}
	return s.book(ctx, tx, bt, m.kind, now, Posting{m.from, -m.amount}, Posting{m.to, m.amount})
}

var failureMessages = map[string]string{
	FailureProviderDeclined: "The provider declined the transfer.",
	FailureProviderError:    "The provider could not process the transfer.",
	FailureAccountInvalid:   "The recipient account is invalid or closed.",
	FailureFundsReturned:    "The transfer was paid out and the funds came back.",
	FailureApprovalRejected: "An operator rejected the payout.",
	FailureExpired:          "The payout was not approved in time.",
}

// dispatchPayoutJob (re)sends a transfer that is still creating: after a
// crash, an unacknowledged dispatch, or an approval.
func (s *Service) dispatchPayoutJob(ctx context.Context, j *Job) error {
	po, err := s.store.GetPayoutIntent(ctx, j.Scope, j.TargetID)
	if err != nil {
		return err
	}
	if po.Attempt != AttemptCreating {
		return nil
	}
	s.logStalePayout(ctx, po)
	key, err := resumeKey(j)
	if err != nil {
		return err
	}
	// The record is completed with the answer, in its transaction, unless
	// there is nothing left to complete.
	rec, err := s.openRecord(ctx, j.Scope, key)
	if err != nil {
		return err
	}
	if rec == nil {
		key = ""
	}
	if _, _, err := s.dispatch(ctx, j.Scope, po.ID, key, po, rec); err != nil {
		return err
	}
	if cur, err := s.store.GetPayoutIntent(ctx, j.Scope, j.TargetID); err == nil && cur.Attempt == AttemptCreating {
		return errNotYet
	}
	return nil
}

// inquirePayoutJob asks the Provider about an in-flight or uncertain
// transfer. A transfer the Provider confirms it never received is sent
// again with the same key; nothing is failed without the Provider's word.
func (s *Service) inquirePayoutJob(ctx context.Context, j *Job) error {
	po, err := s.store.GetPayoutIntent(ctx, j.Scope, j.TargetID)
	if err != nil {
		return err
	}
	if po.Attempt == AttemptClosed || po.Attempt == AttemptNone {
		return nil
	}
	s.logStalePayout(ctx, po)
	r, err := inquireAttempt(ctx, s, payoutAttempts, po)
	if err != nil {
		return err
	}
	return s.applyPayoutInquiry(ctx, j.Scope, po.ID, r)
}

// applyPayoutInquiry applies what an inquiry, a cancel or a callback said
// about a payout's transfer (applyAnswer).
func (s *Service) applyPayoutInquiry(ctx context.Context, scope Scope, id string, r Result) error {
	return applyAnswer(ctx, s, payoutAttempts, scope, id, r)
}

// CancelPayoutIntent cancels a payout (accepted, with the payout). Before
// execution (an approval hold) it is cancelled at once; in flight it stays
// processing until the Provider confirms the cancellation or another final
// outcome. A terminal payout is invalid_state. The reason is stored.
func (s *Service) CancelPayoutIntent(ctx context.Context, p Principal, idempotencyKey, id string, req CancelPayoutIntentRequest) (*PayoutIntent, Answer, error) {
	op, err := newOperation(p.Scope, idempotencyKey, "payout_intent.cancel", id, req)
	if err != nil {
		return nil, Answer{}, err
	}
	if err := validateRequest(&req); err != nil {
		return nil, Answer{}, err
	}
	return idempotent(ctx, s, op, func(tx Tx, now time.Time) (AnswerKind, *PayoutIntent, error) {
		po, err := tx.GetPayoutIntent(ctx, p.Scope, id)
		if errors.Is(err, ErrNotFound) {
			return "", nil, notFound("payout_intent")
		}
		if err != nil {
			return "", nil, err
		}
		if po.Status.Terminal() {
			return "", nil, errorf(CodeInvalidState, "", "This payout intent is already %s.", po.Status)
		}
		if po.CancelRequestedAt != nil {
			return AnswerAccepted, po, nil // a cancel is already under way
		}
		po.CancelRequestedAt, po.CancelReason, po.UpdatedAt = &now, req.Reason, now
		var m ledgerMove
		if po.Attempt == AttemptNone {
			m = endReservation(po, "payout.released", AccountAvailable)
			po.Status, po.ApprovalPending, po.Attempt = PayoutCancelled, false, AttemptClosed
			if err := s.completeJob(ctx, tx, jobPayoutExpire, po.ID); err != nil { // the hold ended
				return "", nil, err
			}
		} else if err := s.enqueue(ctx, tx, &Job{Kind: jobPayoutCancel, Scope: p.Scope, TargetID: po.ID, RunAt: now, DedupKey: jobPayoutCancel + ":" + po.ID}); err != nil {
			return "", nil, err
		}
		if err := s.updatePayout(ctx, tx, po, now, m); err != nil {
			return "", nil, err
		}
		// The merchant's cancel and its reason, in the operators' log.
		return AnswerAccepted, po, s.audit(ctx, tx, &AuditEvent{Actor: "merchant:" + p.KeyID, Action: "payout_intent.cancel",
			TargetType: "payout_intent", TargetID: po.ID, MerchantID: p.MerchantID, Environment: p.Environment,
			Details: details("reason", req.Reason, "status", string(po.Status))})
	})
}

// cancelPayoutJob asks the Provider to cancel an in-flight transfer and
// applies its answer; a transfer still in flight is asked again later.
func (s *Service) cancelPayoutJob(ctx context.Context, j *Job) error {
	po, err := s.store.GetPayoutIntent(ctx, j.Scope, j.TargetID)
	if err != nil {
		return err
	}
	if po.Attempt == AttemptClosed {
		return nil
	}
	if po.Attempt == AttemptCreating {
		return errNotYet // the dispatch settles first, then the cancel
	}
	pp, err := s.payoutProvider(ctx, po)
	if err != nil {
		return err
	}
	r := pp.CancelPayout(ctx, po.attemptRef())
	s.log.InfoContext(ctx, "provider cancel payout", "payout_intent", po.ID, "outcome", r.Outcome, "detail", r.Detail)
	if r.Outcome == OutcomeNotFound && po.Attempt == AttemptUnknown {
		r.Outcome = OutcomeCancelled // the Provider confirms it never had it
	}
	return s.applyPayoutInquiry(ctx, j.Scope, po.ID, r)
}

// expirePayoutJob ends an approval hold older than the approval TTL. A
// hold that ended already (a decision of an earlier version left this job
// pending) ends the job without a transaction.
func (s *Service) expirePayoutJob(ctx context.Context, j *Job) error {
	if po, err := s.store.GetPayoutIntent(ctx, j.Scope, j.TargetID); err != nil || !po.ApprovalPending {
		return err
	}
	return s.inTx(ctx, func(tx Tx) error {
		po, err := tx.GetPayoutIntent(ctx, j.Scope, j.TargetID)
		if err != nil || !po.ApprovalPending {
			return err
		}
		now := s.Now()
		if po.ApprovalExpiresAt != nil && po.ApprovalExpiresAt.After(now) {
			return errNotYet
		}
		m := endReservation(po, "payout.released", AccountAvailable)
		po.Status, po.ApprovalPending, po.Attempt = PayoutExpired, false, AttemptClosed
		po.FailureCode, po.FailureMessage, po.UpdatedAt = FailureExpired, failureMessages[FailureExpired], now
		return s.updatePayout(ctx, tx, po, now, m)
	})
}

// ApprovePayout releases an approval hold (operator action): the payout
// goes to processing and is dispatched. Anything but a pending hold is
// invalid_state.
func (s *Service) ApprovePayout(ctx context.Context, actor, id, note string) (*PayoutIntent, error) {
	var scope Scope
	err := s.inTx(ctx, func(tx Tx) error {
		po, err := s.pendingApproval(ctx, tx, id)
		if err != nil {
			return err
		}
		now := s.Now()
		scope = po.Scope()
		po.Status, po.ApprovalPending, po.Attempt, po.UpdatedAt = PayoutProcessing, false, AttemptCreating, now
		if err := tx.UpdatePayoutIntent(ctx, po); err != nil {
			return err
		}
		if err := s.completeJob(ctx, tx, jobPayoutExpire, po.ID); err != nil { // the hold ended
			return err
		}
		if err := s.scheduleDispatch(ctx, tx, po, now.Add(idempotencyLock), ""); err != nil {
			return err
		}
		return s.audit(ctx, tx, &AuditEvent{Actor: actor, Action: "payout_intent.approve", TargetType: "payout_intent", TargetID: po.ID,
			MerchantID: po.MerchantID, Environment: po.Environment, Details: details("note", note)})
	})
	if err != nil {
		return nil, asServiceError(err)
	}
	if _, _, err := s.dispatch(ctx, scope, id, "", nil, nil); err != nil {
		if code := ErrorCode(err); code != CodeDispatchUnavailable && code != CodeServiceUnavailable {
			return nil, err
		}
		// Not acknowledged, or the store too busy to finish: the approval
		// is committed and the worker (re)sends it with the same key.
	}
	return s.getPayout(ctx, scope, id)
}

// RejectPayout ends an approval hold as failed (approval_rejected) and
// releases the reservation (operator action).
func (s *Service) RejectPayout(ctx context.Context, actor, id, reason string) (*PayoutIntent, error) {
	if reason == "" || len(reason) > 512 {
		return nil, invalidRequest("reason", "reason must be 1 to 512 characters.")
	}
	var out *PayoutIntent
	err := s.inTx(ctx, func(tx Tx) error {
		po, err := s.pendingApproval(ctx, tx, id)
		if err != nil {
			return err
		}
		now := s.Now()
		m := endReservation(po, "payout.released", AccountAvailable)
		po.Status, po.ApprovalPending, po.Attempt, po.UpdatedAt = PayoutFailed, false, AttemptClosed, now
		po.FailureCode, po.FailureMessage, po.CancelReason = FailureApprovalRejected, failureMessages[FailureApprovalRejected], reason
		if err := s.updatePayout(ctx, tx, po, now, m); err != nil {
			return err
		}
		if err := s.completeJob(ctx, tx, jobPayoutExpire, po.ID); err != nil { // the hold ended
			return err
		}
		out = po
		return s.audit(ctx, tx, &AuditEvent{Actor: actor, Action: "payout_intent.reject", TargetType: "payout_intent", TargetID: po.ID,
			MerchantID: po.MerchantID, Environment: po.Environment, Details: details("reason", reason)})
	})
	if err != nil {
		return nil, asServiceError(err)
	}
	return out, nil
}

func (s *Service) pendingApproval(ctx context.Context, tx Tx, id string) (*PayoutIntent, error) {
	po, err := tx.FindPayoutIntent(ctx, id)
	if errors.Is(err, ErrNotFound) {
		return nil, notFound("payout_intent")
	}
	if err != nil {
		return nil, err
	}
	if !po.ApprovalPending {
		return nil, errorf(CodeInvalidState, "", "This payout intent is %s and has no pending approval.", po.Status)
	}
	return po, nil
}

func details(kv ...string) map[string]string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] != "" {
			m[kv[i]] = kv[i+1]
		}
	}
	return m
}

func (s *Service) getPayout(ctx context.Context, scope Scope, id string) (*PayoutIntent, error) {
	po, err := s.store.GetPayoutIntent(ctx, scope, id)
	if errors.Is(err, ErrNotFound) {
		return nil, notFound("payout_intent")
	}
	if err != nil {
		return nil, internalError(err)
	}
	return po, nil
}

// GetPayoutIntent returns the committed projection of a payout of the
// caller's scope. It never starts Provider work.
func (s *Service) GetPayoutIntent(ctx context.Context, p Principal, id string) (*PayoutIntent, error) {
	return s.getPayout(ctx, p.Scope, id)
}

// ListPayoutIntents lists the caller's payouts, newest first.
func (s *Service) ListPayoutIntents(ctx context.Context, p Principal, params ListParams[PayoutStatus]) (*Page[PayoutIntent], error) {
	limit, after, err := s.pageQuery("payout_intent", params.PageParams)
	if err != nil {
		return nil, err
	}
	if err := params.check("payout intent", PayoutStatus.Valid); err != nil {
		return nil, err
	}
	rows, err := s.store.ListPayoutIntents(ctx, PayoutQuery{ListQuery: ListQuery[ListParams[PayoutStatus]]{
		Scope: p.Scope, Filter: params, After: after, Limit: limit + 1,
	}})
	if err != nil {
		return nil, internalError(err)
	}
	return makePage(s, "payout_intent", rows, limit, func(po *PayoutIntent) Position { return Position{po.CreatedAt, po.ID} }), nil
}

// ListPendingApprovals lists payouts of every merchant waiting for an
// operator, newest first.
func (s *Service) ListPendingApprovals(ctx context.Context, params PageParams) (*Page[PayoutIntent], error) {
	limit, after, err := s.pageQuery("payout_approval", params)
	if err != nil {
		return nil, err
	}
	rows, err := s.store.ListPayoutIntents(ctx, PayoutQuery{
		ListQuery:  ListQuery[ListParams[PayoutStatus]]{After: after, Limit: limit + 1},
		AllTenants: true, ApprovalPending: true,
	})
	if err != nil {
		return nil, internalError(err)
	}
	return makePage(s, "payout_approval", rows, limit, func(po *PayoutIntent) Position { return Position{po.CreatedAt, po.ID} }), nil
}

// SimulateReturn makes a succeeded test-environment payout come back (the
// bank returned the funds): the payout becomes failed with funds_returned
// and the amount is credited back. Live keys get not_found.
func (s *Service) SimulateReturn(ctx context.Context, p Principal, id string) (*PayoutIntent, error) {
	if p.Environment != Test {
		return nil, notFound("test helper")
	}
	po, err := s.getPayout(ctx, p.Scope, id)
	if err != nil {
		return nil, err
	}
	if po.Status != PayoutSucceeded {
		return nil, errorf(CodeInvalidState, "", "Only a succeeded payout can be returned; this one is %s.", po.Status)
	}
	if a, err := s.provider(ctx, po.Provider, CapReturns); err == nil {
		if err := a.returns.ReturnPayout(ctx, po.ID); err != nil {
			return nil, internalError(err)
		}
	}
	err = s.inTx(ctx, func(tx Tx) error {
		cur, err := tx.GetPayoutIntent(ctx, p.Scope, id)
		if err != nil {
			return err
		}
		return s.applyPayoutFinal(ctx, tx, cur, Result{Outcome: OutcomeReturned}, s.Now())
	})
	if err != nil {
		return nil, asServiceError(err)
	}
	return s.getPayout(ctx, p.Scope, id)
}
