package paykit

import (
	"context"
	"net/http"
	"strings"
	"time"
)

// Outcome classifies what a Provider said about an attempt.
type Outcome string

// Provider outcomes. Unknown is never a failure: the attempt may exist, and
// only an inquiry (or a callback) can tell.
const (
	// OutcomeRequiresAction: the attempt exists and waits for the payer
	// (Action says what they must do).
	OutcomeRequiresAction Outcome = "requires_action"
	// OutcomePending: the attempt exists; its result comes later.
	OutcomePending Outcome = "pending"
	// OutcomeSucceeded: money moved.
	OutcomeSucceeded Outcome = "succeeded"
	// OutcomeFailed: the Provider declined or the attempt failed for good.
	OutcomeFailed Outcome = "failed"
	// OutcomeCancelled: the attempt was cancelled before money moved.
	OutcomeCancelled Outcome = "cancelled"
	// OutcomeReturned: a payout succeeded and the funds came back later.
	OutcomeReturned Outcome = "returned"
	// OutcomeNotFound: the Provider confirms it has no attempt under the key.
	OutcomeNotFound Outcome = "not_found"
	// OutcomeUnknown: the request was sent and no trustworthy answer came
	// back in time. The attempt may or may not exist.
	OutcomeUnknown Outcome = "unknown"
	// OutcomeUnacknowledged: the Provider did not acknowledge the request
	// (connection refused or dropped, 5xx). The attempt may still exist, so
	// a retry must reuse the same Key.
	OutcomeUnacknowledged Outcome = "unacknowledged"
	// OutcomeRefused: the Provider refused a create request in a way that
	// guarantees nothing was created under the Key (it failed validation
	// before any attempt existed, say). Only this outcome lets paykit try
	// the next route; without one the resource fails with provider_error.
	// An adapter that is not sure nothing exists answers OutcomeFailed (a
	// decline) or OutcomeUnknown instead.
	OutcomeRefused Outcome = "refused"
)

// AttemptRef names one attempt (a payment attempt, a transfer or a
// refund) at a Provider.
type AttemptRef struct {
	// Key is paykit's stable idempotency key of the attempt.
	Key string
	// Reference is the Provider's own id of the attempt, from an earlier
	// Result; empty while no answer naming it has come back (a create that
	// timed out). An adapter whose Provider finds attempts by id uses it;
	// without it, the adapter finds the attempt by Key, and answers
	// OutcomeUnknown, never OutcomeNotFound, when it cannot be sure.
	Reference string
}

// Uncertain reports whether the outcome leaves the attempt's existence open.
func (o Outcome) Uncertain() bool { return o == OutcomeUnknown || o == OutcomeUnacknowledged }

// ProviderAction is the Provider's side of a next action. Its URL is the
// Provider's own payer page: paykit keeps it internal and hands the payer a
// service continuation URL instead.
type ProviderAction struct {
	Type          string // a NextAction type
	URL           string // redirect_to_url: the Provider's payer page
	QRData        string // display_qr_code: EMVCo payload
	BankName      string // bank_transfer_instructions
	AccountNumber string
	AccountHolder string
	Reference     string
	ExpiresAt     time.Time
}

// Result is a Provider's answer about one attempt.
type Result struct {
	Outcome   Outcome
	Reference string          // the Provider's id of the attempt
	Action    *ProviderAction // with OutcomeRequiresAction
	// FailureCode is one of the contract's failure codes (provider_declined,
	// account_invalid, ...) chosen by the adapter; Provider-local codes stay
	// in Detail, which is logged and never shown to merchants.
	FailureCode string
	Detail      string
	// Fee is, with OutcomeSucceeded for a payment, the Provider's fee for
	// it in minor units, as the Provider states it (0 when it keeps none).
	Fee int64
	// AvailableOn is, with OutcomeSucceeded for a payment, when the
	// Provider expects to pay out its net; zero when it does not say.
	AvailableOn time.Time
}

// PaymentRequest asks a Provider to start a payment attempt.
type PaymentRequest struct {
	// Key is the Provider idempotency key. It is derived from the intent id,
	// so every retry of the same attempt carries the same key and the
	// Provider never creates a second attempt.
	Key       string
	Amount    int64
	Currency  string
	Country   string
	Method    string
	Customer  map[string]string
	Options   map[string]string // Provider-local (bank codes already mapped)
	ReturnURL string            // where the Provider sends the payer back: a service URL
	ExpiresAt time.Time
	// Merchant is the paykit merchant the payment is for, for Providers
	// that settle per sub-merchant (the sandbox PSP does).
	Merchant string
}

// CallbackEvent is a verified, parsed inbound Provider callback about one
// attempt, applied through the same state machine as an inquiry result.
type CallbackEvent struct {
	ID     string // the Provider's event id, for deduplication
	Kind   string // "payment", "payout", "refund" or "dispute"
	Key    string // the idempotency key of the attempt it is about
	Result Result
	// Dispute is, with Kind "dispute", the dispute as the Provider now
	// states it; Key and Result are then unused.
	Dispute *ProviderDispute
}

// Capabilities is the set of things a Provider adapter declares it can do.
// paykit finds an adapter's optional method sets through its declaration,
// never by probing for methods: New refuses an adapter that declares a
// capability without its methods, and a route that needs a capability its
// Provider does not declare.
type Capabilities uint32

// Provider capabilities.
const (
	// CapPayments: CreatePayment, InquirePayment and ParseCallback serve
	// payment attempts. A payment route needs it.
	CapPayments Capabilities = 1 << iota
	// CapCancel: CancelPayment cancels a pending attempt. A payment route
	// needs it (merchant cancels and expiry cancel at the Provider).
	CapCancel
	// CapRefunds: the adapter is a RefundProvider: it refunds succeeded
	// payments (of routes without NoRefunds).
	CapRefunds
	// CapPayouts: the adapter is a PayoutProvider. A payout route needs it.
	CapPayouts
	// CapPayerSimulation: the adapter is a PayerSimulator (sandboxes).
	CapPayerSimulation
	// CapReturns: the adapter is a ReturnSimulator (sandboxes that pay out).
	CapReturns
	// CapDisputes: the adapter is a DisputeProvider, and its callbacks
	// report disputes (CallbackEvent Kind "dispute").
	CapDisputes
	// CapDisputeSimulation: the adapter is a DisputeSimulator (sandboxes).
	CapDisputeSimulation
	// CapSettlement: the adapter is a SettlementReporter.
	CapSettlement
	// CapSettlementSimulation: the adapter is a SettlementSimulator
	// (sandboxes).
	CapSettlementSimulation
)

// capabilityNames names each capability for errors and String.
var capabilityNames = []struct {
	c    Capabilities
	name string
}{
	{CapPayments, "payments"}, {CapCancel, "cancel"}, {CapRefunds, "refunds"},
	{CapPayouts, "payouts"}, {CapPayerSimulation, "payer simulation"}, {CapReturns, "returns"},
	{CapDisputes, "disputes"}, {CapDisputeSimulation, "dispute simulation"},
	{CapSettlement, "settlement"}, {CapSettlementSimulation, "settlement simulation"},
}

// Has reports whether c includes every capability of want.
func (c Capabilities) Has(want Capabilities) bool { return c&want == want }

// String lists the capabilities, e.g. "payments|cancel|payouts".
func (c Capabilities) String() string {
	var names []string
	for _, n := range capabilityNames {
		if c.Has(n.c) {
			names = append(names, n.name)
		}
	}
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, "|")
}

// Provider is a payment service provider adapter. Implementations talk to
// the Provider's API; they never touch the Store. Every call carries the
// attempt's stable Key. Transport failures are not errors: they are results
// with OutcomeUnknown, so callers cannot mistake "no answer" for "failed".
// The provider/providertest suite checks an adapter against these rules.
type Provider interface {
	// Capabilities declares what the adapter can do. It must not change
	// over the adapter's life: New reads it once.
	Capabilities() Capabilities
	// CreatePayment starts (or, for a Key seen before, returns) an attempt.
	CreatePayment(ctx context.Context, req PaymentRequest) Result
	// InquirePayment reports the current state of the attempt under key.
	InquirePayment(ctx context.Context, ref AttemptRef) Result
	// CancelPayment asks the Provider to cancel the pending attempt under
	// key. The answer is the attempt's state afterwards: it may still be
	// pending, or may have succeeded meanwhile.
	CancelPayment(ctx context.Context, ref AttemptRef) Result
	// ParseCallback verifies the signature of an inbound callback and
	// parses it. A verification failure is an error.
	ParseCallback(ctx context.Context, r *http.Request) ([]CallbackEvent, error)
}

// PayoutRequest asks a Provider to send money to a bank account.
type PayoutRequest struct {
	Key           string // stable Provider idempotency key of the payout
	Amount        int64
	Currency      string
	Country       string
	BankCode      string // Provider-local (mapped by the route)
	AccountNumber string
	HolderName    string
	HolderNameTH  string
}

// PayoutProvider is the method set of CapPayouts. Result outcomes:
// Pending while in flight, Succeeded, Failed, Cancelled, Returned after a
// success whose funds came back, NotFound when the Provider confirms it
// never received the transfer.
type PayoutProvider interface {
	CreatePayout(ctx context.Context, req PayoutRequest) Result
	InquirePayout(ctx context.Context, ref AttemptRef) Result
	CancelPayout(ctx context.Context, ref AttemptRef) Result
}

// PayerSimulator is the method set of CapPayerSimulation, which sandbox
// Providers declare: it acts as the payer on the Provider's page. The test
// helpers of the merchant API use it.
type PayerSimulator interface {
	Approve(ctx context.Context, key string) error
	Decline(ctx context.Context, key string) error
}

// ReturnSimulator is the method set of CapReturns, which sandbox Providers
// that pay out declare: it makes the recipient's bank send a paid-out
// transfer back. The payout return test helper uses it; with a Provider
// without it, the helper records the return in paykit only.
type ReturnSimulator interface {
	ReturnPayout(ctx context.Context, key string) error
}

// RefundProvider is the method set of CapRefunds: refund a succeeded
// payment and ask about a refund by its key. Callbacks about refunds come
// through ParseCallback with Kind "refund".
type RefundProvider interface {
	CreateRefund(ctx context.Context, req RefundRequest) Result
	InquireRefund(ctx context.Context, ref AttemptRef) Result
}

// ProviderDispute is a Provider's account of a dispute (a chargeback) on
// one of its payment attempts. The adapter maps the Provider's reasons and
// statuses to paykit's; its own words stay in Detail.
type ProviderDispute struct {
	Reference string // the Provider's id of the dispute
	// PaymentKey and PaymentRef name the disputed payment attempt: its
	// idempotency key where the Provider reports it, and the Provider's id.
	PaymentKey    string
	PaymentRef    string
	Amount        int64
	Currency      string
	Fee           int64 // the Provider's dispute fee, kept even when the dispute is won
	Reason        DisputeReason
	Status        DisputeStatus
	EvidenceDueBy time.Time // zero when the Provider does not say
	Detail        string
}

// DisputeProvider is the method set of CapDisputes. An error means no
// trustworthy answer came back; the call may be repeated.
type DisputeProvider interface {
	// InquireDispute reports the dispute with the Provider's id ref.
	InquireDispute(ctx context.Context, ref string) (ProviderDispute, error)
	// SubmitDisputeEvidence sends the merchant's evidence text for the
	// dispute and submits it for review.
	SubmitDisputeEvidence(ctx context.Context, ref, text string) (ProviderDispute, error)
	// AcceptDispute concedes the dispute: it is lost.
	AcceptDispute(ctx context.Context, ref string) (ProviderDispute, error)
}

// DisputeOpening asks a sandbox Provider to open a dispute on a payment.
type DisputeOpening struct {
	PaymentKey string
	PaymentRef string
	Amount     int64
	Reason     DisputeReason
}

// DisputeSimulator is the method set of CapDisputeSimulation, which
// sandbox Providers declare: the payer's bank opens a dispute. The
// dispute test helper uses it.
type DisputeSimulator interface {
	OpenDispute(ctx context.Context, req DisputeOpening) (ProviderDispute, error)
}

// SettlementBatch is one batch of funds a Provider settled: what it paid
// out, line by line, net of its fees.
type SettlementBatch struct {
	Reference string // the Provider's id of the batch
	Merchant  string // the PaymentRequest.Merchant its lines are for; "" when the Provider does not split
	Currency  string
	SettledAt time.Time
	// Gross, Fee and Net are the batch's totals as the Provider states
	// them: a batch whose lines do not add up to them is refused.
	Gross, Fee, Net int64
	Lines           []SettlementLine
}

// Totals returns the sums of the lines' amounts, fees and nets.
func (b *SettlementBatch) Totals() (gross, fee, net int64) {
	for _, l := range b.Lines {
		gross, fee, net = gross+l.Amount, fee+l.Fee, net+l.Amount-l.Fee
	}
	return gross, fee, net
}

// SettlementLine is one movement of a settlement batch.
type SettlementLine struct {
	// Type is "payment", "refund", "dispute" or "dispute_reversal" (a
	// won dispute's amount coming back).
	Type string
	// Reference is the Provider's id of the attempt (or dispute) and Key
	// its idempotency key where the Provider reports it.
	Reference string
	Key       string
	Amount    int64 // signed: a refund or dispute is negative
	Fee       int64
	Currency  string
}

// SettlementReporter is the method set of CapSettlement: the batches the
// Provider closed after the batch with Reference after ("" for the
// first), oldest first, at most limit of them.
type SettlementReporter interface {
	SettlementBatches(ctx context.Context, after string, limit int) ([]SettlementBatch, error)
}

// SettlementSimulator is the method set of CapSettlementSimulation: the
// sandbox closes the batches of merchant's pending funds at once and
// returns them. The settlement test helper uses it.
type SettlementSimulator interface {
	SettleNow(ctx context.Context, merchant string) ([]SettlementBatch, error)
}
