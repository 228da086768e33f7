package paykit

import (
	"context"
	"errors"
	"maps"
	"slices"
	"time"

	"github.com/paykit/paykit/internal/wire"
)

// BreakType says how a settlement line and paykit's records disagree.
type BreakType string

// Break types: the contract's closed set.
const (
	BreakFeeMismatch      BreakType = "fee_mismatch"      // the Provider settled another fee than it stated
	BreakAmountMismatch   BreakType = "amount_mismatch"   // another amount than paykit recorded
	BreakCurrencyMismatch BreakType = "currency_mismatch" // another currency
	BreakDuplicateLine    BreakType = "duplicate_line"    // a line settled twice
	BreakUnknownToPaykit  BreakType = "unknown_to_paykit" // a line no paykit record matches: it has no merchant
	BreakMissingInReport  BreakType = "missing_in_report" // succeeded longer ago than the SLA and in no settled batch
)

// breakTypes are the break types, in the contract's order.
var breakTypes = []BreakType{BreakFeeMismatch, BreakAmountMismatch, BreakCurrencyMismatch, BreakDuplicateLine,
	BreakUnknownToPaykit, BreakMissingInReport}

// Valid reports whether t is one of the break types.
func (t BreakType) Valid() bool { return slices.Contains(breakTypes, t) }

// BreakStatus is open until an operator, or a late matching line,
// resolves the break.
type BreakStatus string

// Break statuses.
const (
	BreakOpen     BreakStatus = "open"
	BreakResolved BreakStatus = "resolved"
)

// Valid reports whether s is a break status.
func (s BreakStatus) Valid() bool { return s == BreakOpen || s == BreakResolved }

// BreakResolution says how a break was resolved.
type BreakResolution string

// Break resolutions.
const (
	// ResolveAcceptPaykit settles the funds as paykit recorded them.
	ResolveAcceptPaykit BreakResolution = "accept_paykit"
	// ResolveAcceptProvider settles them as the Provider reported, and
	// books the difference as an adjustment of the merchant's balance.
	ResolveAcceptProvider BreakResolution = "accept_provider"
	// ResolveMatched: a missing_in_report break whose line came later and
	// matched; paykit resolves it itself.
	ResolveMatched BreakResolution = "matched"
)

// SettlementAmounts are a settlement line's money as one side states it.
type SettlementAmounts struct {
	Amount   int64  `json:"amount"` // signed
	Fee      int64  `json:"fee"`
	Currency string `json:"currency"`
}

// ReconciliationBreak is a disagreement between a Provider's settlement
// report and paykit's records, open until resolved. Its funds stay
// pending until then.
type ReconciliationBreak struct {
	ID       string
	Type     BreakType
	Status   BreakStatus
	Provider string
	// MerchantID and Environment are the tenant of Source; empty for a
	// line unknown to paykit.
	MerchantID  string
	Environment Environment
	// Source is the paykit id the line concerns (a payment intent,
	// refund or dispute); "" when none.
	Source string
	// LineType and Reference are the line's type and Provider reference;
	// Batch the Provider's batch it came in ("" for missing_in_report).
	LineType   string
	Reference  string
	Batch      string
	Expected   *SettlementAmounts // paykit's record; nil for unknown_to_paykit
	Reported   *SettlementAmounts // the Provider's line; nil for missing_in_report
	Resolution BreakResolution    // "" while open
	Note       string
	CreatedAt  time.Time
	ResolvedAt *time.Time
	Version    int64
}

// Scope returns the tenant of the break (empty for a line unknown to
// paykit).
func (b *ReconciliationBreak) Scope() Scope { return Scope{b.MerchantID, b.Environment} }

// ReconciliationRun is one read of one settlement batch of a Provider.
type ReconciliationRun struct {
	ID         string
	Provider   string
	Batch      string
	Lines      int
	Matched    int
	Breaks     int
	StartedAt  time.Time
	FinishedAt time.Time
}

// SettledLine is paykit's record of one settlement line it read: a line
// is known by its Provider, type and reference, so a batch read again
// changes nothing and a line settled twice is seen.
type SettledLine struct {
	Provider  string
	Type      string
	Reference string
	Batch     string
	Source    string // the matched paykit id; "" when none matched
	CreatedAt time.Time
}

// BreakListParams are the filters of the operator's list of breaks.
type BreakListParams struct {
	PageParams
	Status     BreakStatus // "" for any
	Type       BreakType   // "" for any
	MerchantID string
	Provider   string
}

// RunListParams are the filters of the operator's list of runs.
type RunListParams struct {
	PageParams
	Provider string
}

// Unsettled is a succeeded payment intent or refund of a Provider that no
// settlement line named yet.
type Unsettled struct {
	Object      string // "payment_intent" or "refund"
	Scope       Scope
	ID          string
	Reference   string // the Provider's id of its attempt
	Amount      int64  // signed as its line would be: a refund is negative
	Fee         int64
	Currency    string
	CompletedAt time.Time
}

// UnsettledQuery selects the succeeded payment intents and refunds of
// Provider completed before Before whose attempt reference no SettledLine
// of the Provider names and that have no open missing_in_report break,
// oldest first (by completion, then id), at most Limit. A payment whose
// funds were settled otherwise (SettledAt set) is not selected.
type UnsettledQuery struct {
	Provider string
	Before   time.Time
	Limit    int
}

// ListReconciliationBreaks returns the breaks of every tenant that params
// select, newest first: the operator's queue.
func (s *Service) ListReconciliationBreaks(ctx context.Context, params BreakListParams) (*Page[ReconciliationBreak], error) {
	limit, after, err := s.pageQuery("reconciliation_break", params.PageParams)
	if err != nil {
		return nil, err
	}
	if params.Status != "" && !params.Status.Valid() {
		return nil, invalidRequest("status", "status must be open or resolved.")
	}
	if params.Type != "" && !params.Type.Valid() {
		return nil, invalidRequest("type", "type %q is not a break type.", params.Type)
	}
	for name, v := range map[string]string{"merchant_id": params.MerchantID, "provider": params.Provider} {
		if !wire.ValidText(v) {
			return nil, invalidRequest(name, "%s must be UTF-8 text without NUL characters.", name)
		}
	}
	rows, err := s.store.ListReconciliationBreaks(ctx, ListQuery[BreakListParams]{Filter: params, After: after, Limit: limit + 1})
	if err != nil {
		return nil, internalError(err)
	}
	return makePage(s, "reconciliation_break", rows, limit, func(b *ReconciliationBreak) Position { return Position{b.CreatedAt, b.ID} }), nil
}

// GetReconciliationBreak returns a break by id.
func (s *Service) GetReconciliationBreak(ctx context.Context, id string) (*ReconciliationBreak, error) {
	b, err := s.store.GetReconciliationBreak(ctx, id)
	if errors.Is(err, ErrNotFound) {
		return nil, notFound("reconciliation_break")
	}
	if err != nil {
		return nil, internalError(err)
	}
	return b, nil
}

// ListReconciliationRuns returns the reads of settlement batches, newest
// first.
func (s *Service) ListReconciliationRuns(ctx context.Context, params RunListParams) (*Page[ReconciliationRun], error) {
	limit, after, err := s.pageQuery("reconciliation_run", params.PageParams)
	if err != nil {
		return nil, err
	}
	if !wire.ValidText(params.Provider) {
		return nil, invalidRequest("provider", "provider must be UTF-8 text without NUL characters.")
	}
	rows, err := s.store.ListReconciliationRuns(ctx, ListQuery[RunListParams]{Filter: params, After: after, Limit: limit + 1})
	if err != nil {
		return nil, internalError(err)
	}
	return makePage(s, "reconciliation_run", rows, limit, func(r *ReconciliationRun) Position { return Position{r.StartedAt, r.ID} }), nil
}

// ResolveBreakRequest is an operator's resolution of a break.
type ResolveBreakRequest struct {
	Resolution BreakResolution `json:"resolution" validate:"required,oneof=accept_paykit accept_provider"`
	Note       string          `json:"note" validate:"required,min=1,max=512"`
}

// ResolveBreak resolves an open break as an operator (actor), with an
// audit event. accept_paykit settles the funds as paykit recorded them;
// accept_provider settles them as the Provider reported and books the
// difference as an adjustment balance transaction of the merchant (for
// missing_in_report: the whole net leaves pending). A break of a line
// unknown to paykit moves no money. A resolved break is invalid_state.
func (s *Service) ResolveBreak(ctx context.Context, actor, id string, req ResolveBreakRequest) (*ReconciliationBreak, error) {
	if err := validateRequest(&req); err != nil {
		return nil, err
	}
	if !wire.ValidText(req.Note) {
		return nil, invalidRequest("note", "note must be UTF-8 text without NUL characters.")
	}
	var out *ReconciliationBreak
	err := s.inTx(ctx, func(tx Tx) error {
		b, err := tx.GetReconciliationBreak(ctx, id)
		if errors.Is(err, ErrNotFound) {
			return notFound("reconciliation_break")
		}
		if err != nil {
			return err
		}
		if b.Status != BreakOpen {
			return errorf(CodeInvalidState, "", "This break is already resolved (%s).", b.Resolution)
		}
		now := s.Now()
		if b.MerchantID != "" {
			if err := s.applyResolution(ctx, tx, b, req.Resolution, now); err != nil {
				return err
			}
		}
		b.Status, b.Resolution, b.Note, b.ResolvedAt = BreakResolved, req.Resolution, req.Note, &now
		if err := tx.UpdateReconciliationBreak(ctx, b); err != nil {
			return err
		}
		out = b
		return s.audit(ctx, tx, &AuditEvent{Actor: actor, Action: "reconciliation_break.resolve", TargetType: "reconciliation_break",
			TargetID: b.ID, MerchantID: b.MerchantID, Environment: b.Environment,
			Details: details("type", string(b.Type), "resolution", string(req.Resolution), "source", b.Source, "note", req.Note)})
	})
	if err != nil {
		return nil, asServiceError(err)
	}
	return out, nil
}

// applyResolution moves the merchant's money a resolution of b calls for,
// in tx.
func (s *Service) applyResolution(ctx context.Context, tx Tx, b *ReconciliationBreak, r BreakResolution, now time.Time) error {
	var pi *PaymentIntent
	if b.LineType == "payment" && b.Source != "" {
		p, err := tx.GetPaymentIntent(ctx, b.Scope(), b.Source)
		if err != nil {
			return err
		}
		if p.Status == PaymentSucceeded {
			pi = p
		}
	}
	net := func(a *SettlementAmounts) int64 {
		if a == nil {
			return 0
		}
		return a.Amount - a.Fee
	}
	adjust := func(amount int64, currency, from string) error {
		if amount == 0 {
			return nil
		}
		return s.book(ctx, tx, &BalanceTransaction{MerchantID: b.MerchantID, Environment: b.Environment, Type: BalanceTxnAdjustment,
			Source: b.ID, Amount: amount, Currency: currency}, "reconciliation.adjusted", now,
			Posting{AccountAdjustments, -amount}, Posting{from, amount})
	}
	if b.Type == BreakMissingInReport {
		switch {
		case r == ResolveAcceptPaykit && pi != nil:
			return s.settlePayment(ctx, tx, pi, now)
		case r == ResolveAcceptProvider && pi != nil && pi.SettledAt == nil:
			return adjust(-net(b.Expected), b.Expected.Currency, AccountPending) // the Provider never paid it
		case r == ResolveAcceptProvider && b.LineType == "refund" && b.Expected != nil:
			return adjust(-b.Expected.Amount, b.Expected.Currency, AccountAvailable) // the refund never left
		}
		return nil
	}
	if pi != nil {
		if err := s.settlePayment(ctx, tx, pi, now); err != nil {
			return err
		}
	}
	if r != ResolveAcceptProvider || b.Reported == nil {
		return nil
	}
	if b.Type == BreakDuplicateLine {
		return adjust(net(b.Reported), b.Reported.Currency, AccountAvailable) // settled a second time
	}
	if b.Expected == nil {
		return nil
	}
	if b.Expected.Currency == b.Reported.Currency {
		return adjust(net(b.Reported)-net(b.Expected), b.Reported.Currency, AccountAvailable)
	}
	if err := adjust(-net(b.Expected), b.Expected.Currency, AccountAvailable); err != nil {
		return err
	}
	return adjust(net(b.Reported), b.Reported.Currency, AccountAvailable)
}

// checkMissingSettlements opens a missing_in_report break for each
// succeeded payment and refund of a Provider that reports settlement when
// no line named it within the SLA.
func (s *Service) checkMissingSettlements(ctx context.Context, now time.Time) error {
	for _, name := range slices.Sorted(maps.Keys(s.providers)) {
		if !s.providers[name].caps.Has(CapSettlement) {
			continue
		}
		for {
			rows, err := s.store.ListUnsettled(ctx, UnsettledQuery{Provider: name, Before: now.Add(-s.reconcileSLA), Limit: 500})
			if err != nil {
				return err
			}
			for _, u := range rows {
				typ := "payment"
				if u.Object == "refund" {
					typ = "refund"
				}
				rb := &ReconciliationBreak{ID: s.newID("rb"), Type: BreakMissingInReport, Status: BreakOpen, Provider: name,
					MerchantID: u.Scope.MerchantID, Environment: u.Scope.Environment, Source: u.ID, LineType: typ, Reference: u.Reference,
					Expected: &SettlementAmounts{Amount: u.Amount, Fee: u.Fee, Currency: u.Currency}, CreatedAt: now}
				if err := s.store.CreateReconciliationBreak(ctx, rb); err != nil {
					return err
				}
			}
			if len(rows) < 500 {
				break
			}
		}
	}
	return nil
}

// OpenBreakCounts counts the open breaks by type, every type present.
func (s *Service) OpenBreakCounts(ctx context.Context) (map[BreakType]int, error) {
	n, err := s.store.CountOpenBreaks(ctx)
	if err != nil {
		return nil, internalError(err)
	}
	out := make(map[BreakType]int, len(breakTypes))
	for _, t := range breakTypes {
		out[t] = n[t]
	}
	return out, nil
}
