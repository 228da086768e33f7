// Package providertest is the conformance suite for paykit Provider
// adapters, as storetest is for Stores. Every adapter runs it against a
// fake of its Provider's API: Run puts a real HTTP server of its own in
// front of the fake and breaks the network on purpose (a request that is
// received and never answered, a refused connection, a dropped one, 5xx,
// a 404 or 200 that is not the Provider's), then checks what the adapter
// made of it:
//
//   - the same Key returns the same attempt (and transfer);
//   - a timeout after sending is OutcomeUnknown;
//   - refused or dropped connections and 5xx are OutcomeUnacknowledged;
//   - OutcomeNotFound only on the Provider's explicit word;
//   - amounts and currencies survive the round trip;
//   - callbacks whose signature does not verify are rejected (for
//     Providers that authenticate callbacks by a shared token, those
//     without the token or naming a forged key: Harness.TokenCallbacks);
//   - no Provider-local detail leaks into a Result's public fields
//     (Outcome, FailureCode, Action): local words belong in Detail;
//   - each declared capability works and has its methods; with
//     paykit.CapRefunds, refunds keep the same rules (same key, same
//     refund; timeouts Unknown; refused, dropped and 5xx Unacknowledged;
//     NotFound only on the Provider's word; amounts and currencies
//     survive; callbacks verified; contract failure codes);
//   - a succeeded payment carries the Provider's fee (never negative; the
//     fee Fake charged, where Harness.Fee tells it) and a plausible
//     available date, by inquiry and by callback;
//   - with paykit.CapDisputes, a dispute the Provider opens comes in
//     paykit's words (its statuses and reasons, a positive amount in the
//     payment's currency, the disputed payment named), an inquiry agrees
//     with its callback, evidence moves it to under_review (or decides
//     it), accepting it loses it, repeating a call is safe, and a call
//     without the Provider's answer is an error;
//   - with paykit.CapSettlement, once the Provider settled (Harness.Settle)
//     its batches come oldest first, each once, in one currency, their
//     lines in paykit's words and adding up to the totals it states; a
//     paid payment is settled by one payment line naming it by its
//     Result.Reference, for its amount and with its Result.Fee; paging
//     with limit 1 walks every batch once, the cursor of the last batch
//     gives nothing, a re-read (and one after the Provider settled again)
//     reports the same batches and lines, and a read without the
//     Provider's answer is an error.
//
// The adapter's call timeout must be short (Harness.New), so that the
// suite never waits long in real time.
package providertest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paykit/paykit"
)

// Harness is what an adapter's test hands Run.
type Harness struct {
	// Fake serves the Provider's API as the adapter calls it, keeping what
	// it is sent. Run serves it behind its own server.
	Fake http.Handler
	// New returns the adapter under test calling the Provider at baseURL
	// (Run's server in front of Fake, or an address that refuses
	// connections). Its call timeout must be short, 50 to 500 ms: Run
	// holds a request until the adapter gives up.
	New func(baseURL string) paykit.Provider
	// Payment is a create request Fake accepts and leaves open (waiting for
	// the payer, or pending). Run sets its Key, and its Amount to each of
	// Amounts.
	Payment paykit.PaymentRequest
	// Payout is a transfer request Fake accepts, for adapters that declare
	// paykit.CapPayouts. Run sets its Key and Amount. With
	// paykit.CapReturns it must succeed within a couple of seconds.
	Payout paykit.PayoutRequest
	// Amounts are the amounts (minor units) Run creates with, each of
	// which Fake must treat as Payment's and Payout's own; default
	// Payment.Amount alone. Include one above 2^53 if the Provider takes
	// it: a float on the way loses it.
	Amounts []int64
	// Declined, if set, is a payment Fake declines; Run checks the failure
	// code is the contract's.
	Declined *paykit.PaymentRequest
	// FailedPayout, if set, is a transfer Fake refuses (a closed account,
	// say), within a couple of seconds.
	FailedPayout *paykit.PayoutRequest
	// Received reports the amount and currency Fake recorded for the
	// attempt or transfer created under key, and whether it has one.
	Received func(key string) (amount int64, currency string, ok bool)
	// UnknownReference, for adapters that find attempts by the Provider's
	// id (AttemptRef.Reference), returns an id in the Provider's own format
	// that Fake never issued, for kind "payment", "payout" or "refund".
	// With it, Run expects OutcomeNotFound for an AttemptRef carrying it,
	// and NotFound or Unknown for a Key alone. Without it, the adapter finds
	// attempts by Key and must answer NotFound for a Key never used.
	UnknownReference func(kind string) string
	// Callback returns an inbound callback about the payment attempt under
	// key, signed as the Provider signs them. Its body must name key
	// verbatim: Run forges another key in it.
	Callback func(key string) *http.Request
	// TokenCallbacks is for Providers that authenticate callbacks with a
	// shared token rather than a signature of the body (Xendit's
	// x-callback-token): no change to the bytes of a body can be detected,
	// so Run does not check that a body changed after sending is refused.
	// It still checks that a callback without the token, or whose body
	// names a key the Provider does not hold the object under, is refused:
	// such an adapter must take the state it reports from the Provider's
	// API, not from the body.
	TokenCallbacks bool

	// For adapters that declare paykit.CapRefunds (see RefundsSuite):

	// Pay makes the payment attempt req (created through p, the adapter
	// in front of Fake) succeed at Fake. Default, for adapters that
	// declare paykit.CapPayerSimulation: create it and Approve it.
	Pay func(ctx context.Context, p paykit.Provider, req paykit.PaymentRequest) error
	// RefundAmounts are the amounts Run pays and refunds in full, each of
	// which Fake must treat as an ordinary payment and refund; default
	// Amounts.
	RefundAmounts []int64
	// DeclinedRefund, if not 0, is a refund amount Fake declines (of a
	// payment of the same amount); Run checks the failure code is the
	// contract's.
	DeclinedRefund int64
	// RefundCallback returns an inbound callback about the refund under
	// key, signed as the Provider signs them; its body must name key
	// verbatim. Required with paykit.CapRefunds. Received must also report
	// what Fake recorded of refunds.
	RefundCallback func(key string) *http.Request

	// Fee, if set, reports the fee Fake charged for the succeeded payment
	// under key, in the payment's currency, and whether it has one: Run
	// checks a succeeded Result states that fee. Without it, Run checks
	// only that fees are not negative. Fees are checked for adapters that
	// can be paid (Pay, or paykit.CapPayerSimulation).
	Fee func(key string) (fee int64, ok bool)

	// For adapters that declare paykit.CapDisputes (see disputes.go):

	// OpenDispute makes Fake open a dispute of amount on the succeeded
	// payment under key, as the payer's bank does, and returns the
	// Provider's callback announcing it, signed as the Provider signs
	// them. Required with paykit.CapDisputes unless the adapter declares
	// paykit.CapDisputeSimulation, through which Run then opens disputes
	// (without a callback). UnknownReference, if set, may also answer a
	// dispute id Fake never issued for kind "dispute".
	OpenDispute func(key string, amount int64) *http.Request

	// For adapters that declare paykit.CapSettlement (see settlement.go):

	// Settle makes Fake settle, as the Provider does after its delay,
	// every payment that succeeded through p so far: afterwards the
	// adapter's SettlementBatches reports them in the batches it closed.
	// Required with paykit.CapSettlement unless the adapter declares
	// paykit.CapSettlementSimulation, whose SettleNow for Payment.Merchant
	// Run then calls.
	Settle func(ctx context.Context, p paykit.Provider) error
}

// Run runs the suite against the adapter h describes.
func Run(t *testing.T, h Harness) {
	t.Helper()
	if h.Fake == nil || h.New == nil || h.Received == nil || h.Callback == nil {
		t.Fatal("providertest: Harness needs Fake, New, Received and Callback")
	}
	s := newSuite(t, h)
	caps := s.prov.Capabilities()
	t.Run("Capabilities", s.capabilities)
	if !caps.Has(paykit.CapPayments) {
		t.Fatal("providertest: the adapter does not declare paykit.CapPayments; the suite checks payments")
	}
	if caps.Has(paykit.CapPayouts) && h.Payout.Currency == "" {
		t.Fatal("providertest: the adapter declares paykit.CapPayouts; Harness.Payout is required")
	}
	t.Run("SameKeySameAttempt", s.sameKeySameAttempt)
	t.Run("AmountsAndCurrenciesSurvive", s.amountsSurvive)
	t.Run("TimeoutAfterSendingIsUnknown", s.timeoutIsUnknown)
	t.Run("RefusedConnectionIsUnacknowledged", s.refusedIsUnacknowledged)
	t.Run("DroppedConnectionIsUnacknowledged", s.droppedIsUnacknowledged)
	t.Run("5xxIsUnacknowledged", s.status5xxIsUnacknowledged)
	t.Run("NotFoundOnlyOnTheProvidersWord", s.notFoundOnlyOnItsWord)
	t.Run("CallbacksVerifyTheirSignature", s.callbacks)
	t.Run("FailuresUseContractCodes", s.failures)
	if caps.Has(paykit.CapCancel) {
		t.Run("Cancel", s.cancel)
	}
	if caps.Has(paykit.CapPayerSimulation) {
		t.Run("PayerSimulation", s.payerSimulation)
	}
	if caps.Has(paykit.CapReturns) {
		t.Run("Returns", s.returns)
	}
	if caps.Has(paykit.CapRefunds) {
		if h.RefundCallback == nil {
			t.Fatal("providertest: the adapter declares paykit.CapRefunds; Harness.RefundCallback is required")
		}
		if h.Pay == nil && !caps.Has(paykit.CapPayerSimulation) {
			t.Fatal("providertest: the adapter declares paykit.CapRefunds without paykit.CapPayerSimulation; Harness.Pay is required")
		}
		t.Run("Refunds", s.refunds)
	}
	if h.Pay != nil || caps.Has(paykit.CapPayerSimulation) {
		t.Run("Fees", s.fees)
	}
	if caps.Has(paykit.CapDisputes) {
		if h.OpenDispute == nil && !caps.Has(paykit.CapDisputeSimulation) {
			t.Fatal("providertest: the adapter declares paykit.CapDisputes without paykit.CapDisputeSimulation; Harness.OpenDispute is required")
		}
		if h.Pay == nil && !caps.Has(paykit.CapPayerSimulation) {
			t.Fatal("providertest: the adapter declares paykit.CapDisputes without paykit.CapPayerSimulation; Harness.Pay is required")
		}
		t.Run("Disputes", s.disputes)
	}
	if caps.Has(paykit.CapSettlement) {
		if h.Settle == nil && !caps.Has(paykit.CapSettlementSimulation) {
			t.Fatal("providertest: the adapter declares paykit.CapSettlement without paykit.CapSettlementSimulation; Harness.Settle is required")
		}
		if h.Pay == nil && !caps.Has(paykit.CapPayerSimulation) {
			t.Fatal("providertest: the adapter declares paykit.CapSettlement without paykit.CapPayerSimulation; Harness.Pay is required")
		}
		t.Run("Settlement", s.settlement)
	}
}

// fault is how Run's server breaks the requests it fronts.
type fault int

const (
	answer     fault = iota // pass to Fake and answer what it says
	holdAfter               // pass to Fake, then never answer
	dropAfter               // pass to Fake, then close the connection
	status500               // pass to Fake, then answer 500
	status502               // pass to Fake, then answer 502 from a proxy
	status503               // pass to Fake, then answer 503
	foreign404              // a 404 that is not the Provider's (a wrong path, a proxy)
	garbage200              // a 200 whose body is nothing the Provider says
)

// front is Run's server in front of Fake.
type front struct {
	fake  http.Handler
	fault atomic.Int32
	stop  chan struct{} // closed at cleanup: held requests end
}

func (f *front) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ft := fault(f.fault.Load())
	if ft == foreign404 {
		http.NotFound(w, r)
		return
	}
	if ft == garbage200 {
		w.Header().Set("Content-Type", "text/html")
		_, _ = io.WriteString(w, "<html><body>Welcome to nginx!</body></html>")
		return
	}
	if ft == answer {
		f.fake.ServeHTTP(w, r)
		return
	}
	// The Provider receives the request and acts on it; its answer is lost.
	f.fake.ServeHTTP(httptest.NewRecorder(), r)
	switch ft {
	case holdAfter:
		select {
		case <-r.Context().Done():
		case <-f.stop:
		}
	case dropAfter:
		conn, _, err := http.NewResponseController(w).Hijack()
		if err != nil {
			panic(http.ErrAbortHandler)
		}
		_ = conn.Close()
	case status500:
		http.Error(w, "internal error", http.StatusInternalServerError)
	case status502:
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusBadGateway)
		_, _ = io.WriteString(w, "<html><body>502 Bad Gateway</body></html>")
	case status503:
		w.Header().Set("Retry-After", "1")
		http.Error(w, "unavailable", http.StatusServiceUnavailable)
	}
}

type suite struct {
	h       Harness
	front   *front
	prov    paykit.Provider // through front
	refused paykit.Provider // at an address that refuses connections
	seq     atomic.Int64
	mu      sync.Mutex
}

func newSuite(t *testing.T, h Harness) *suite {
	f := &front{fake: h.Fake, stop: make(chan struct{})}
	srv := httptest.NewServer(f)
	t.Cleanup(func() {
		close(f.stop)
		srv.Close()
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String()
	_ = ln.Close()
	return &suite{h: h, front: f, prov: h.New(srv.URL), refused: h.New(closed)}
}

// breaking runs fn with every request to the front broken as ft says.
func (s *suite) breaking(ft fault, fn func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.front.fault.Store(int32(ft))
	defer s.front.fault.Store(int32(answer))
	fn()
}

// key returns a fresh idempotency key.
func (s *suite) key(kind string) string {
	return fmt.Sprintf("providertest_%s_%d_%d", kind, time.Now().UnixNano(), s.seq.Add(1))
}

func (s *suite) payment(key string, amount int64) paykit.PaymentRequest {
	r := s.h.Payment
	r.Key, r.Amount = key, amount
	return r
}

func (s *suite) payout(key string, amount int64) paykit.PayoutRequest {
	r := s.h.Payout
	r.Key, r.Amount = key, amount
	return r
}

func (s *suite) amounts() []int64 {
	if len(s.h.Amounts) > 0 {
		return s.h.Amounts
	}
	return []int64{s.h.Payment.Amount}
}

func (s *suite) payouts() paykit.PayoutProvider {
	if !s.prov.Capabilities().Has(paykit.CapPayouts) {
		return nil
	}
	pp, _ := s.prov.(paykit.PayoutProvider)
	return pp
}

// checked fails t when r shows anything but the contract's vocabulary in
// its public fields, and returns r.
func checked(t *testing.T, what string, r paykit.Result) paykit.Result {
	t.Helper()
	outcomes := []paykit.Outcome{paykit.OutcomeRequiresAction, paykit.OutcomePending, paykit.OutcomeSucceeded,
		paykit.OutcomeFailed, paykit.OutcomeCancelled, paykit.OutcomeReturned, paykit.OutcomeNotFound,
		paykit.OutcomeUnknown, paykit.OutcomeUnacknowledged, paykit.OutcomeRefused}
	if !slices.Contains(outcomes, r.Outcome) {
		t.Errorf("%s: Outcome %q is not one of paykit's", what, r.Outcome)
	}
	switch {
	case r.Outcome == paykit.OutcomeFailed && r.FailureCode != "" &&
		!slices.Contains([]string{paykit.FailureProviderDeclined, paykit.FailureProviderError, paykit.FailureAccountInvalid}, r.FailureCode):
		t.Errorf("%s: FailureCode %q is not a contract failure code (local codes belong in Detail)", what, r.FailureCode)
	case r.Outcome != paykit.OutcomeFailed && r.FailureCode != "":
		t.Errorf("%s: FailureCode %q on a %s result", what, r.FailureCode, r.Outcome)
	}
	if r.Action != nil {
		types := []string{paykit.NextActionRedirectToURL, paykit.NextActionDisplayQRCode, paykit.NextActionBankTransferInstructions}
		switch {
		case r.Outcome != paykit.OutcomeRequiresAction:
			t.Errorf("%s: an Action on a %s result", what, r.Outcome)
		case !slices.Contains(types, r.Action.Type):
			t.Errorf("%s: Action.Type %q is not a contract next_action type", what, r.Action.Type)
		case r.Action.Type == paykit.NextActionRedirectToURL && r.Action.URL == "":
			t.Errorf("%s: a redirect without a URL", what)
		case r.Action.Type == paykit.NextActionDisplayQRCode && r.Action.QRData == "":
			t.Errorf("%s: a QR code without data", what)
		}
	}
	return r
}

// want fails t unless r's outcome is one of outcomes.
func want(t *testing.T, what string, r paykit.Result, outcomes ...paykit.Outcome) {
	t.Helper()
	checked(t, what, r)
	if !slices.Contains(outcomes, r.Outcome) {
		t.Errorf("%s: outcome %s (detail %q), want %v", what, r.Outcome, r.Detail, outcomes)
	}
}

// open are the outcomes of an attempt the Provider has and has not
// finished; settled adds final ones a fake may reach at once.
var (
	open    = []paykit.Outcome{paykit.OutcomeRequiresAction, paykit.OutcomePending}
	settled = []paykit.Outcome{paykit.OutcomeRequiresAction, paykit.OutcomePending, paykit.OutcomeSucceeded}
)

func (s *suite) capabilities(t *testing.T) {
	caps := s.prov.Capabilities()
	if caps != s.prov.Capabilities() {
		t.Error("Capabilities changed between two calls")
	}
	has := func(c paykit.Capabilities, ok bool, iface string) {
		if caps.Has(c) && !ok {
			t.Errorf("declares %s without the methods of %s", c, iface)
		}
	}
	_, pp := s.prov.(paykit.PayoutProvider)
	_, ps := s.prov.(paykit.PayerSimulator)
	_, rs := s.prov.(paykit.ReturnSimulator)
	_, rf := s.prov.(paykit.RefundProvider)
	_, dp := s.prov.(paykit.DisputeProvider)
	_, dsim := s.prov.(paykit.DisputeSimulator)
	_, sr := s.prov.(paykit.SettlementReporter)
	_, ssim := s.prov.(paykit.SettlementSimulator)
	has(paykit.CapRefunds, rf, "paykit.RefundProvider")
	has(paykit.CapDisputes, dp, "paykit.DisputeProvider")
	has(paykit.CapDisputeSimulation, dsim, "paykit.DisputeSimulator")
	has(paykit.CapSettlement, sr, "paykit.SettlementReporter")
	has(paykit.CapSettlementSimulation, ssim, "paykit.SettlementSimulator")
	has(paykit.CapPayouts, pp, "paykit.PayoutProvider")
	has(paykit.CapPayerSimulation, ps, "paykit.PayerSimulator")
	has(paykit.CapReturns, rs, "paykit.ReturnSimulator")
}

func (s *suite) sameKeySameAttempt(t *testing.T) {
	ctx := context.Background()
	amount := s.amounts()[0]
	key := s.key("pay")
	first := s.prov.CreatePayment(ctx, s.payment(key, amount))
	want(t, "create", first, open...)
	again := s.prov.CreatePayment(ctx, s.payment(key, amount))
	want(t, "create again, same key", again, open...)
	if first.Reference == "" || again.Reference != first.Reference {
		t.Errorf("same key, references %q and %q: want the same attempt", first.Reference, again.Reference)
	}
	other := s.prov.CreatePayment(ctx, s.payment(s.key("pay"), amount))
	want(t, "create, another key", other, open...)
	if other.Reference == first.Reference {
		t.Errorf("another key got the same attempt %q", first.Reference)
	}
	if inq := checked(t, "inquire", s.prov.InquirePayment(ctx, paykit.AttemptRef{Key: key})); inq.Reference != "" && inq.Reference != first.Reference {
		t.Errorf("inquiry names attempt %q, create %q", inq.Reference, first.Reference)
	}
	pp := s.payouts()
	if pp == nil {
		return
	}
	key = s.key("po")
	tr := pp.CreatePayout(ctx, s.payout(key, amount))
	want(t, "create payout", tr, settled...)
	tr2 := pp.CreatePayout(ctx, s.payout(key, amount))
	want(t, "create payout again, same key", tr2, settled...)
	if tr.Reference == "" || tr2.Reference != tr.Reference {
		t.Errorf("same payout key, references %q and %q: want the same transfer", tr.Reference, tr2.Reference)
	}
}

func (s *suite) amountsSurvive(t *testing.T) {
	ctx := context.Background()
	pp := s.payouts()
	for _, amount := range s.amounts() {
		key := s.key("amt")
		want(t, fmt.Sprintf("create %d", amount), s.prov.CreatePayment(ctx, s.payment(key, amount)), open...)
		s.received(t, key, amount, s.h.Payment.Currency)
		if pp != nil {
			key := s.key("amtpo")
			want(t, fmt.Sprintf("create payout %d", amount), pp.CreatePayout(ctx, s.payout(key, amount)), settled...)
			s.received(t, key, amount, s.h.Payout.Currency)
		}
	}
}

func (s *suite) received(t *testing.T, key string, amount int64, currency string) {
	t.Helper()
	got, ccy, ok := s.h.Received(key)
	switch {
	case !ok:
		t.Errorf("the Provider has nothing under %s", key)
	case got != amount || ccy != currency:
		t.Errorf("sent %d %s, the Provider received %d %s", amount, currency, got, ccy)
	}
}

// uncertain checks the calls of every operation under ft give outcome, and
// that an attempt the Provider received is found again under its key.
func (s *suite) uncertain(t *testing.T, ft fault, prov paykit.Provider, outcome paykit.Outcome, reached bool) {
	ctx := context.Background()
	amount := s.amounts()[0]
	key, existing := s.key("flt"), s.key("flt")
	want(t, "create existing", s.prov.CreatePayment(ctx, s.payment(existing, amount)), open...)
	s.breaking(ft, func() {
		want(t, "create", prov.CreatePayment(ctx, s.payment(key, amount)), outcome)
		want(t, "inquire", prov.InquirePayment(ctx, paykit.AttemptRef{Key: existing}), outcome)
		if s.prov.Capabilities().Has(paykit.CapCancel) {
			// A cancel the Provider received may be done: it is not re-run below.
			want(t, "cancel", prov.CancelPayment(ctx, paykit.AttemptRef{Key: s.key("flt")}), outcome)
		}
	})
	s.foundAgain(t, key, amount, reached)
	pp := s.payouts()
	if pp == nil {
		return
	}
	ppv, _ := prov.(paykit.PayoutProvider)
	key, existing = s.key("fltpo"), s.key("fltpo")
	want(t, "create payout existing", pp.CreatePayout(ctx, s.payout(existing, amount)), settled...)
	s.breaking(ft, func() {
		want(t, "create payout", ppv.CreatePayout(ctx, s.payout(key, amount)), outcome)
		want(t, "inquire payout", ppv.InquirePayout(ctx, paykit.AttemptRef{Key: existing}), outcome)
		want(t, "cancel payout", ppv.CancelPayout(ctx, paykit.AttemptRef{Key: s.key("fltpo")}), outcome)
	})
	inq := checked(t, "inquire payout after", pp.InquirePayout(ctx, paykit.AttemptRef{Key: key}))
	if reached && (inq.Outcome == paykit.OutcomeNotFound || inq.Outcome.Uncertain()) {
		t.Errorf("the Provider received the transfer, yet an inquiry says %s", inq.Outcome)
	}
	if !reached && !s.notFoundByKey(inq) {
		t.Errorf("nothing reached the Provider, yet an inquiry says %s, want not found", inq.Outcome)
	}
	retry := pp.CreatePayout(ctx, s.payout(key, amount))
	want(t, "create payout again", retry, settled...)
	if reached && retry.Reference != inq.Reference {
		t.Errorf("the retry made transfer %q, the Provider had %q: want the same", retry.Reference, inq.Reference)
	}
}

// notFoundByKey reports whether r is a right answer, by Key alone, about
// an attempt the Provider never received: NotFound, or Unknown from an
// adapter that finds attempts by the Provider's id (Harness.UnknownReference),
// which paykit then recovers by sending the create again under the key.
func (s *suite) notFoundByKey(r paykit.Result) bool {
	return r.Outcome == paykit.OutcomeNotFound || (s.h.UnknownReference != nil && r.Outcome == paykit.OutcomeUnknown)
}

// foundAgain checks what became of a payment created under key through a
// fault: an attempt the Provider received is found, and a retry under the
// key gets it; one it never received is not found, and a retry makes it.
func (s *suite) foundAgain(t *testing.T, key string, amount int64, reached bool) {
	t.Helper()
	ctx := context.Background()
	inq := checked(t, "inquire after", s.prov.InquirePayment(ctx, paykit.AttemptRef{Key: key}))
	if reached && (inq.Outcome == paykit.OutcomeNotFound || inq.Outcome.Uncertain()) {
		t.Errorf("the Provider received the attempt, yet an inquiry says %s", inq.Outcome)
	}
	if !reached && !s.notFoundByKey(inq) {
		t.Errorf("nothing reached the Provider, yet an inquiry says %s, want not found", inq.Outcome)
	}
	retry := s.prov.CreatePayment(ctx, s.payment(key, amount))
	want(t, "create again", retry, open...)
	if reached && retry.Reference != inq.Reference {
		t.Errorf("the retry made attempt %q, the Provider had %q: want the same", retry.Reference, inq.Reference)
	}
}

func (s *suite) timeoutIsUnknown(t *testing.T) {
	start := time.Now()
	s.uncertain(t, holdAfter, s.prov, paykit.OutcomeUnknown, true)
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("the held calls took %s: Harness.New must give the adapter a short call timeout", d)
	}
}

func (s *suite) refusedIsUnacknowledged(t *testing.T) {
	s.uncertain(t, answer, s.refused, paykit.OutcomeUnacknowledged, false)
}

func (s *suite) droppedIsUnacknowledged(t *testing.T) {
	s.uncertain(t, dropAfter, s.prov, paykit.OutcomeUnacknowledged, true)
}

func (s *suite) status5xxIsUnacknowledged(t *testing.T) {
	for _, ft := range []fault{status500, status502, status503} {
		t.Run(fmt.Sprint([]int{500, 502, 503}[ft-status500]), func(t *testing.T) {
			s.uncertain(t, ft, s.prov, paykit.OutcomeUnacknowledged, true)
		})
	}
}

func (s *suite) notFoundOnlyOnItsWord(t *testing.T) {
	ctx := context.Background()
	amount := s.amounts()[0]
	cancel := s.prov.Capabilities().Has(paykit.CapCancel)
	pp := s.payouts()
	// The Provider's word: it has nothing under the key (or id).
	s.unknown(t, "payment", func(ref paykit.AttemptRef) paykit.Result { return s.prov.InquirePayment(ctx, ref) })
	if cancel {
		s.unknown(t, "payment", func(ref paykit.AttemptRef) paykit.Result { return s.prov.CancelPayment(ctx, ref) })
	}
	if pp != nil {
		s.unknown(t, "payout", func(ref paykit.AttemptRef) paykit.Result { return pp.InquirePayout(ctx, ref) })
		s.unknown(t, "payout", func(ref paykit.AttemptRef) paykit.Result { return pp.CancelPayout(ctx, ref) })
	}
	// Answers that are not the Provider's say nothing about the attempt.
	for _, ft := range []fault{foreign404, garbage200} {
		name := map[fault]string{foreign404: "a 404 not from the Provider", garbage200: "a 200 not from the Provider"}[ft]
		t.Run(strings.ReplaceAll(name, " ", "_"), func(t *testing.T) {
			s.breaking(ft, func() {
				want(t, "create", s.prov.CreatePayment(ctx, s.payment(s.key("nf"), amount)), paykit.OutcomeUnknown, paykit.OutcomeUnacknowledged)
				want(t, "inquire", s.prov.InquirePayment(ctx, paykit.AttemptRef{Key: s.key("nf")}), paykit.OutcomeUnknown, paykit.OutcomeUnacknowledged)
				if cancel {
					want(t, "cancel", s.prov.CancelPayment(ctx, paykit.AttemptRef{Key: s.key("nf")}), paykit.OutcomeUnknown, paykit.OutcomeUnacknowledged)
				}
				if pp != nil {
					want(t, "create payout", pp.CreatePayout(ctx, s.payout(s.key("nf"), amount)), paykit.OutcomeUnknown, paykit.OutcomeUnacknowledged)
					want(t, "inquire payout", pp.InquirePayout(ctx, paykit.AttemptRef{Key: s.key("nf")}), paykit.OutcomeUnknown, paykit.OutcomeUnacknowledged)
					want(t, "cancel payout", pp.CancelPayout(ctx, paykit.AttemptRef{Key: s.key("nf")}), paykit.OutcomeUnknown, paykit.OutcomeUnacknowledged)
				}
			})
		})
	}
}

// unknown checks call's answers about an attempt that was never made:
// NotFound by the Provider's id where the adapter uses ids (a Key alone
// may then be Unknown), NotFound by Key where it finds attempts by Key.
func (s *suite) unknown(t *testing.T, kind string, call func(paykit.AttemptRef) paykit.Result) {
	t.Helper()
	if s.h.UnknownReference == nil {
		want(t, "unknown "+kind+" key", call(paykit.AttemptRef{Key: s.key("nf")}), paykit.OutcomeNotFound)
		return
	}
	want(t, "unknown "+kind+" id", call(paykit.AttemptRef{Key: s.key("nf"), Reference: s.h.UnknownReference(kind)}), paykit.OutcomeNotFound)
	want(t, "unknown "+kind+" key alone", call(paykit.AttemptRef{Key: s.key("nf")}), paykit.OutcomeNotFound, paykit.OutcomeUnknown)
}

func (s *suite) callbacks(t *testing.T) {
	ctx := context.Background()
	key := s.key("cb")
	want(t, "create", s.prov.CreatePayment(ctx, s.payment(key, s.amounts()[0])), open...)

	events, err := s.prov.ParseCallback(ctx, s.h.Callback(key))
	if err != nil {
		t.Fatalf("a callback signed by the Provider is refused: %v", err)
	}
	if len(events) == 0 {
		t.Fatal("a signed callback gave no event")
	}
	for _, e := range events {
		checked(t, "callback", e.Result)
		if e.Key != key || e.ID == "" || (e.Kind != "payment" && e.Kind != "payout") {
			t.Errorf("callback event %+v: want kind payment, key %s and an id", e, key)
		}
	}

	signed := s.h.Callback(key)
	body, err := io.ReadAll(signed.Body)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(body, []byte(key)) {
		t.Fatalf("Harness.Callback's body does not name the key %s", key)
	}
	tampered := map[string]*http.Request{
		"key forged":   withBody(signed, bytes.ReplaceAll(body, []byte(key), []byte(s.key("cb")))),
		"no signature": bare(signed, body),
	}
	if !s.h.TokenCallbacks {
		tampered["body changed after signing"] = withBody(signed, append(bytes.Clone(body), ' '))
	}
	for name, r := range tampered {
		if events, err := s.prov.ParseCallback(ctx, r); err == nil {
			t.Errorf("%s: accepted, with events %+v", name, events)
		}
	}
}

// withBody is r with body and r's headers.
func withBody(r *http.Request, body []byte) *http.Request {
	c := r.Clone(context.Background())
	c.Body, c.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
	return c
}

// bare is r with body and no header but Content-Type.
func bare(r *http.Request, body []byte) *http.Request {
	c := withBody(r, body)
	c.Header = http.Header{}
	if ct := r.Header.Get("Content-Type"); ct != "" {
		c.Header.Set("Content-Type", ct)
	}
	return c
}

// settle inquires until the outcome leaves open or the deadline passes.
func settle(inquire func() paykit.Result, r paykit.Result) paykit.Result {
	deadline := time.Now().Add(3 * time.Second)
	for (slices.Contains(open, r.Outcome) || r.Outcome.Uncertain()) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
		r = inquire()
	}
	return r
}

func (s *suite) failures(t *testing.T) {
	ctx := context.Background()
	if d := s.h.Declined; d != nil {
		req := *d
		req.Key = s.key("dec")
		r := settle(func() paykit.Result { return s.prov.InquirePayment(ctx, paykit.AttemptRef{Key: req.Key}) }, s.prov.CreatePayment(ctx, req))
		want(t, "declined payment", r, paykit.OutcomeFailed)
		if r.FailureCode == "" {
			t.Error("a declined payment without a FailureCode")
		}
	}
	pp := s.payouts()
	if f := s.h.FailedPayout; f != nil && pp != nil {
		req := *f
		req.Key = s.key("fail")
		r := settle(func() paykit.Result { return pp.InquirePayout(ctx, paykit.AttemptRef{Key: req.Key}) }, pp.CreatePayout(ctx, req))
		want(t, "failed payout", r, paykit.OutcomeFailed)
		if r.FailureCode == "" {
			t.Error("a failed payout without a FailureCode")
		}
	}
}

func (s *suite) cancel(t *testing.T) {
	ctx := context.Background()
	key := s.key("cnl")
	want(t, "create", s.prov.CreatePayment(ctx, s.payment(key, s.amounts()[0])), open...)
	r := s.prov.CancelPayment(ctx, paykit.AttemptRef{Key: key})
	want(t, "cancel", r, paykit.OutcomeCancelled, paykit.OutcomePending, paykit.OutcomeRequiresAction)
	r = settle(func() paykit.Result { return s.prov.InquirePayment(ctx, paykit.AttemptRef{Key: key}) }, r)
	want(t, "inquire after cancel", r, paykit.OutcomeCancelled)
	if pp := s.payouts(); pp != nil {
		key := s.key("cnlpo")
		want(t, "create payout", pp.CreatePayout(ctx, s.payout(key, s.amounts()[0])), settled...)
		// In flight it may cancel; settled already, it stays what it is.
		want(t, "cancel payout", pp.CancelPayout(ctx, paykit.AttemptRef{Key: key}), paykit.OutcomeCancelled, paykit.OutcomePending, paykit.OutcomeSucceeded)
	}
}

func (s *suite) payerSimulation(t *testing.T) {
	ctx := context.Background()
	ps := s.prov.(paykit.PayerSimulator)
	approved, declined := s.key("approve"), s.key("decline")
	for _, k := range []string{approved, declined} {
		want(t, "create", s.prov.CreatePayment(ctx, s.payment(k, s.amounts()[0])), open...)
	}
	if err := ps.Approve(ctx, approved); err != nil {
		t.Fatalf("approve: %v", err)
	}
	if err := ps.Decline(ctx, declined); err != nil {
		t.Fatalf("decline: %v", err)
	}
	r := settle(func() paykit.Result { return s.prov.InquirePayment(ctx, paykit.AttemptRef{Key: approved}) }, s.prov.InquirePayment(ctx, paykit.AttemptRef{Key: approved}))
	want(t, "approved", r, paykit.OutcomeSucceeded)
	r = settle(func() paykit.Result { return s.prov.InquirePayment(ctx, paykit.AttemptRef{Key: declined}) }, s.prov.InquirePayment(ctx, paykit.AttemptRef{Key: declined}))
	want(t, "declined", r, paykit.OutcomeFailed)
	if err := ps.Approve(ctx, s.key("none")); err == nil {
		t.Error("approving an attempt the Provider does not have succeeded")
	}
}

func (s *suite) returns(t *testing.T) {
	ctx := context.Background()
	pp, rs := s.payouts(), s.prov.(paykit.ReturnSimulator)
	if pp == nil {
		t.Fatal("declares returns without payouts")
	}
	key := s.key("ret")
	r := settle(func() paykit.Result { return pp.InquirePayout(ctx, paykit.AttemptRef{Key: key}) }, pp.CreatePayout(ctx, s.payout(key, s.amounts()[0])))
	want(t, "payout before its return", r, paykit.OutcomeSucceeded)
	if err := rs.ReturnPayout(ctx, key); err != nil {
		t.Fatalf("return: %v", err)
	}
	want(t, "inquire returned payout", pp.InquirePayout(ctx, paykit.AttemptRef{Key: key}), paykit.OutcomeReturned)
}
