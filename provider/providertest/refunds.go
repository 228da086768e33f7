package providertest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/paykit/paykit"
)

// refundOpen are the outcomes of a refund the Provider accepted; a fake
// may settle it at once.
var refundOpen = []paykit.Outcome{paykit.OutcomePending, paykit.OutcomeSucceeded}

// refunds runs the refund checks, for adapters that declare
// paykit.CapRefunds.
func (s *suite) refunds(t *testing.T) {
	t.Run("SameKeySameRefund", s.refundSameKey)
	t.Run("AmountsAndCurrenciesSurvive", s.refundAmountsSurvive)
	t.Run("TimeoutAfterSendingIsUnknown", func(t *testing.T) {
		s.refundUncertain(t, holdAfter, s.prov, paykit.OutcomeUnknown, true)
	})
	t.Run("RefusedConnectionIsUnacknowledged", func(t *testing.T) {
		s.refundUncertain(t, answer, s.refused, paykit.OutcomeUnacknowledged, false)
	})
	t.Run("DroppedConnectionIsUnacknowledged", func(t *testing.T) {
		s.refundUncertain(t, dropAfter, s.prov, paykit.OutcomeUnacknowledged, true)
	})
	t.Run("5xxIsUnacknowledged", func(t *testing.T) {
		for _, ft := range []fault{status500, status502, status503} {
			t.Run(fmt.Sprint([]int{500, 502, 503}[ft-status500]), func(t *testing.T) {
				s.refundUncertain(t, ft, s.prov, paykit.OutcomeUnacknowledged, true)
			})
		}
	})
	t.Run("NotFoundOnlyOnTheProvidersWord", s.refundNotFound)
	t.Run("CallbacksVerifyTheirSignature", s.refundCallbacks)
	t.Run("FailuresUseContractCodes", s.refundFailures)
}

func (s *suite) refunder() paykit.RefundProvider { return s.prov.(paykit.RefundProvider) }

func (s *suite) refundAmounts() []int64 {
	if len(s.h.RefundAmounts) > 0 {
		return s.h.RefundAmounts
	}
	return s.amounts()
}

// paid makes a payment of amount succeed at the Provider and returns the
// template of a refund of it (no Key, no Amount).
func (s *suite) paid(t *testing.T, amount int64) paykit.RefundRequest {
	t.Helper()
	req, r := s.pay(t, "rpay", amount)
	return paykit.RefundRequest{PaymentKey: req.Key, PaymentRef: r.Reference, Currency: req.Currency}
}

// pay makes a payment of amount under a fresh key of kind succeed at the
// Provider (Harness.Pay, or create and Approve) and returns it with the
// succeeded inquiry result.
func (s *suite) pay(t *testing.T, kind string, amount int64) (paykit.PaymentRequest, paykit.Result) {
	t.Helper()
	ctx := context.Background()
	req := s.payment(s.key(kind), amount)
	pay := s.h.Pay
	if pay == nil {
		pay = func(ctx context.Context, p paykit.Provider, req paykit.PaymentRequest) error {
			if r := p.CreatePayment(ctx, req); !slices.Contains(open, r.Outcome) {
				return fmt.Errorf("create: %s (%s)", r.Outcome, r.Detail)
			}
			return p.(paykit.PayerSimulator).Approve(ctx, req.Key)
		}
	}
	if err := pay(ctx, s.prov, req); err != nil {
		t.Fatalf("Harness.Pay %d: %v", amount, err)
	}
	r := settle(func() paykit.Result { return s.prov.InquirePayment(ctx, paykit.AttemptRef{Key: req.Key}) }, s.prov.InquirePayment(ctx, paykit.AttemptRef{Key: req.Key}))
	if r.Outcome != paykit.OutcomeSucceeded {
		t.Fatalf("the paid payment is %s (%s), want succeeded", r.Outcome, r.Detail)
	}
	return req, r
}

func refundOf(tmpl paykit.RefundRequest, key string, amount int64) paykit.RefundRequest {
	tmpl.Key, tmpl.Amount = key, amount
	return tmpl
}

func (s *suite) refundSameKey(t *testing.T) {
	ctx := context.Background()
	rp := s.refunder()
	amount := s.refundAmounts()[0]
	tmpl := s.paid(t, 2*amount)
	key := s.key("rf")
	first := rp.CreateRefund(ctx, refundOf(tmpl, key, amount))
	want(t, "refund", first, refundOpen...)
	again := rp.CreateRefund(ctx, refundOf(tmpl, key, amount))
	want(t, "refund again, same key", again, refundOpen...)
	if first.Reference == "" || again.Reference != first.Reference {
		t.Errorf("same key, references %q and %q: want the same refund", first.Reference, again.Reference)
	}
	inq := rp.InquireRefund(ctx, paykit.AttemptRef{Key: key})
	want(t, "inquire refund", inq, refundOpen...)
	if inq.Reference != first.Reference {
		t.Errorf("inquiry names refund %q, create %q", inq.Reference, first.Reference)
	}
	other := rp.CreateRefund(ctx, refundOf(tmpl, s.key("rf"), amount))
	want(t, "refund, another key", other, refundOpen...)
	if other.Reference == first.Reference {
		t.Errorf("another key got the same refund %q", first.Reference)
	}
}

func (s *suite) refundAmountsSurvive(t *testing.T) {
	ctx := context.Background()
	for _, amount := range s.refundAmounts() {
		tmpl := s.paid(t, amount)
		key := s.key("rfamt")
		want(t, fmt.Sprintf("refund %d", amount), s.refunder().CreateRefund(ctx, refundOf(tmpl, key, amount)), refundOpen...)
		s.received(t, key, amount, tmpl.Currency)
	}
}

// refundUncertain checks that refund calls under ft give outcome, and that
// a refund the Provider received is found again under its key, a retry
// getting the same refund.
func (s *suite) refundUncertain(t *testing.T, ft fault, prov paykit.Provider, outcome paykit.Outcome, reached bool) {
	ctx := context.Background()
	rp, rpv := s.refunder(), prov.(paykit.RefundProvider)
	amount := s.refundAmounts()[0]
	tmpl := s.paid(t, 2*amount)
	key, existing := s.key("rfflt"), s.key("rfflt")
	want(t, "refund existing", rp.CreateRefund(ctx, refundOf(tmpl, existing, amount)), refundOpen...)
	s.breaking(ft, func() {
		want(t, "refund", rpv.CreateRefund(ctx, refundOf(tmpl, key, amount)), outcome)
		want(t, "inquire refund", rpv.InquireRefund(ctx, paykit.AttemptRef{Key: existing}), outcome)
	})
	inq := checked(t, "inquire refund after", rp.InquireRefund(ctx, paykit.AttemptRef{Key: key}))
	if reached && (inq.Outcome == paykit.OutcomeNotFound || inq.Outcome.Uncertain()) {
		t.Errorf("the Provider received the refund, yet an inquiry says %s", inq.Outcome)
	}
	if !reached && !s.notFoundByKey(inq) {
		t.Errorf("nothing reached the Provider, yet an inquiry says %s, want not found", inq.Outcome)
	}
	retry := rp.CreateRefund(ctx, refundOf(tmpl, key, amount))
	want(t, "refund again", retry, refundOpen...)
	if reached && retry.Reference != inq.Reference {
		t.Errorf("the retry made refund %q, the Provider had %q: want the same", retry.Reference, inq.Reference)
	}
}

func (s *suite) refundNotFound(t *testing.T) {
	ctx := context.Background()
	rp := s.refunder()
	s.unknown(t, "refund", func(ref paykit.AttemptRef) paykit.Result { return rp.InquireRefund(ctx, ref) })
	tmpl := s.paid(t, s.refundAmounts()[0])
	for _, ft := range []fault{foreign404, garbage200} {
		name := map[fault]string{foreign404: "a 404 not from the Provider", garbage200: "a 200 not from the Provider"}[ft]
		t.Run(strings.ReplaceAll(name, " ", "_"), func(t *testing.T) {
			s.breaking(ft, func() {
				want(t, "refund", rp.CreateRefund(ctx, refundOf(tmpl, s.key("rfnf"), 1)), paykit.OutcomeUnknown, paykit.OutcomeUnacknowledged)
				want(t, "inquire refund", rp.InquireRefund(ctx, paykit.AttemptRef{Key: s.key("rfnf")}), paykit.OutcomeUnknown, paykit.OutcomeUnacknowledged)
			})
		})
	}
}

func (s *suite) refundCallbacks(t *testing.T) {
	ctx := context.Background()
	amount := s.refundAmounts()[0]
	tmpl := s.paid(t, amount)
	key := s.key("rfcb")
	want(t, "refund", s.refunder().CreateRefund(ctx, refundOf(tmpl, key, amount)), refundOpen...)

	events, err := s.prov.ParseCallback(ctx, s.h.RefundCallback(key))
	if err != nil {
		t.Fatalf("a refund callback signed by the Provider is refused: %v", err)
	}
	if len(events) == 0 {
		t.Fatal("a signed refund callback gave no event")
	}
	for _, e := range events {
		checked(t, "refund callback", e.Result)
		if e.Key != key || e.ID == "" || e.Kind != "refund" {
			t.Errorf("refund callback event %+v: want kind refund, key %s and an id", e, key)
		}
	}

	signed := s.h.RefundCallback(key)
	body, err := io.ReadAll(signed.Body)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(body, []byte(key)) {
		t.Fatalf("Harness.RefundCallback's body does not name the key %s", key)
	}
	tampered := map[string][]byte{
		"key forged": bytes.ReplaceAll(body, []byte(key), []byte(s.key("rfcb"))),
	}
	if !s.h.TokenCallbacks {
		tampered["body changed after signing"] = append(bytes.Clone(body), ' ')
	}
	for name, b := range tampered {
		if events, err := s.prov.ParseCallback(ctx, withBody(signed, b)); err == nil {
			t.Errorf("%s: accepted, with events %+v", name, events)
		}
	}
	if events, err := s.prov.ParseCallback(ctx, bare(signed, body)); err == nil {
		t.Errorf("no signature: accepted, with events %+v", events)
	}
}

func (s *suite) refundFailures(t *testing.T) {
	ctx := context.Background()
	rp := s.refunder()
	codes := []string{paykit.RefundProviderDeclined, paykit.RefundProviderError}
	if amount := s.h.DeclinedRefund; amount != 0 {
		tmpl := s.paid(t, amount)
		key := s.key("rfdec")
		r := settle(func() paykit.Result { return rp.InquireRefund(ctx, paykit.AttemptRef{Key: key}) }, rp.CreateRefund(ctx, refundOf(tmpl, key, amount)))
		want(t, "declined refund", r, paykit.OutcomeFailed)
		if !slices.Contains(codes, r.FailureCode) {
			t.Errorf("a declined refund with FailureCode %q, want one of %v", r.FailureCode, codes)
		}
	}
	// More than the payment: the Provider refuses it, which is failed
	// with a contract code, or (if the adapter cannot tell) Unknown.
	amount := s.refundAmounts()[0]
	tmpl := s.paid(t, amount)
	r := rp.CreateRefund(ctx, refundOf(tmpl, s.key("rfover"), amount+1))
	want(t, "refund of more than the payment", r, paykit.OutcomeFailed, paykit.OutcomeUnknown)
	if r.Outcome == paykit.OutcomeFailed && !slices.Contains(codes, r.FailureCode) {
		t.Errorf("a refused refund with FailureCode %q, want one of %v", r.FailureCode, codes)
	}
}
