package providertest

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"

	"github.com/paykit/paykit"
)

// disputes runs the dispute checks, for adapters that declare
// paykit.CapDisputes.
func (s *suite) disputes(t *testing.T) {
	t.Run("OpenedInPaykitsWords", s.disputeOpened)
	t.Run("EvidenceMovesItToReview", s.disputeEvidence)
	t.Run("AcceptLosesIt", s.disputeAccept)
	t.Run("NoAnswerIsAnError", s.disputeNoAnswer)
}

func (s *suite) disputer() paykit.DisputeProvider { return s.prov.(paykit.DisputeProvider) }

// disputed is a payment the Provider's dispute is about.
type disputed struct {
	req    paykit.PaymentRequest
	paid   paykit.Result
	amount int64 // the disputed amount
}

// opened pays a payment of amount and has the Provider open a dispute of
// part (half, at least 1) of it: through Harness.OpenDispute, whose
// callback must verify, tampered with must not, and must carry the
// dispute; or through the adapter's paykit.DisputeSimulator. It checks the
// dispute as opened and returns it.
func (s *suite) opened(t *testing.T, amount int64) (disputed, paykit.ProviderDispute) {
	t.Helper()
	ctx := context.Background()
	req, paid := s.pay(t, "dsp", amount)
	p := disputed{req: req, paid: paid, amount: max(amount/2, 1)}
	var d paykit.ProviderDispute
	if s.h.OpenDispute == nil {
		var err error
		d, err = s.prov.(paykit.DisputeSimulator).OpenDispute(ctx, paykit.DisputeOpening{
			PaymentKey: req.Key, PaymentRef: paid.Reference, Amount: p.amount, Reason: paykit.DisputeGeneral})
		if err != nil {
			t.Fatalf("opening a dispute: %v", err)
		}
		s.checkDispute(t, "opened dispute", p, d)
	} else {
		d = s.disputeCallback(t, p)
	}
	if d.Status != paykit.DisputeNeedsResponse {
		t.Fatalf("a dispute the Provider just opened is %s, want %s", d.Status, paykit.DisputeNeedsResponse)
	}
	return p, d
}

// disputeCallback checks the Provider's callback about a dispute it
// opens on p, and returns the dispute it tells.
func (s *suite) disputeCallback(t *testing.T, p disputed) paykit.ProviderDispute {
	t.Helper()
	ctx := context.Background()
	signed := s.h.OpenDispute(p.req.Key, p.amount)
	body, err := io.ReadAll(signed.Body)
	if err != nil {
		t.Fatal(err)
	}
	if !s.h.TokenCallbacks {
		if events, err := s.prov.ParseCallback(ctx, withBody(signed, append(bytes.Clone(body), ' '))); err == nil {
			t.Errorf("dispute callback, body changed after signing: accepted, with events %+v", events)
		}
	}
	if events, err := s.prov.ParseCallback(ctx, bare(signed, body)); err == nil {
		t.Errorf("dispute callback without a signature: accepted, with events %+v", events)
	}
	events, err := s.prov.ParseCallback(ctx, withBody(signed, body))
	if err != nil {
		t.Fatalf("a dispute callback signed by the Provider is refused: %v", err)
	}
	var d *paykit.ProviderDispute
	for _, e := range events {
		if e.Kind != "dispute" {
			continue
		}
		if e.ID == "" || e.Dispute == nil {
			t.Fatalf("dispute callback event %+v: want an id and the dispute", e)
		}
		s.checkDispute(t, "dispute callback", p, *e.Dispute)
		d = e.Dispute
	}
	if d == nil {
		t.Fatalf("the dispute callback gave no dispute event (events %+v)", events)
	}
	return *d
}

// checkDispute fails t unless d is a dispute about p in paykit's words.
func (s *suite) checkDispute(t *testing.T, what string, p disputed, d paykit.ProviderDispute) {
	t.Helper()
	if d.Reference == "" {
		t.Errorf("%s: no Reference", what)
	}
	if !d.Status.Valid() {
		t.Errorf("%s: Status %q is not one of paykit's (local words belong in Detail)", what, d.Status)
	}
	if !d.Reason.Valid() {
		t.Errorf("%s: Reason %q is not one of paykit's (local words belong in Detail)", what, d.Reason)
	}
	if d.Amount != p.amount || d.Currency != p.req.Currency {
		t.Errorf("%s: %d %s disputed, the Provider was asked %d %s", what, d.Amount, d.Currency, p.amount, p.req.Currency)
	}
	if d.Fee < 0 {
		t.Errorf("%s: Fee %d: a fee is never negative", what, d.Fee)
	}
	if d.PaymentRef != p.paid.Reference {
		t.Errorf("%s: PaymentRef %q, the payment is %q", what, d.PaymentRef, p.paid.Reference)
	}
	if d.PaymentKey != "" && d.PaymentKey != p.req.Key {
		t.Errorf("%s: PaymentKey %q, the payment's is %q", what, d.PaymentKey, p.req.Key)
	}
	if !d.EvidenceDueBy.IsZero() && (d.EvidenceDueBy.Before(earliest) || d.EvidenceDueBy.After(latest)) {
		t.Errorf("%s: EvidenceDueBy %s is no date the Provider means", what, d.EvidenceDueBy)
	}
}

// same fails t unless the inquiry got tells the dispute want told.
func same(t *testing.T, what string, got, want paykit.ProviderDispute) {
	t.Helper()
	got.Detail, want.Detail = "", ""
	if got != want {
		t.Errorf("%s: %+v, the callback told %+v", what, got, want)
	}
}

func (s *suite) disputeOpened(t *testing.T) {
	ctx := context.Background()
	p, d := s.opened(t, s.amounts()[0])
	inq, err := s.disputer().InquireDispute(ctx, d.Reference)
	if err != nil {
		t.Fatalf("inquire dispute: %v", err)
	}
	s.checkDispute(t, "inquiry", p, inq)
	same(t, "inquiry", inq, d)
	if s.h.UnknownReference != nil {
		if ref := s.h.UnknownReference("dispute"); ref != "" {
			if d, err := s.disputer().InquireDispute(ctx, ref); err == nil {
				t.Errorf("a dispute the Provider never opened: %+v, want an error", d)
			}
		}
	}
}

func (s *suite) disputeEvidence(t *testing.T) {
	ctx := context.Background()
	dp := s.disputer()
	p, d := s.opened(t, s.amounts()[0])
	sub, err := dp.SubmitDisputeEvidence(ctx, d.Reference, "providertest: the payer received the goods; delivery note attached")
	if err != nil {
		t.Fatalf("submit evidence: %v", err)
	}
	s.checkDispute(t, "after evidence", p, sub)
	if sub.Status == paykit.DisputeNeedsResponse {
		t.Fatalf("after evidence the dispute is still %s, want %s (or decided)", sub.Status, paykit.DisputeUnderReview)
	}
	inq, err := dp.InquireDispute(ctx, d.Reference)
	if err != nil {
		t.Fatalf("inquire dispute: %v", err)
	}
	if inq.Status == paykit.DisputeNeedsResponse || (sub.Status.Terminal() && inq.Status != sub.Status) {
		t.Errorf("after evidence (%s) an inquiry says %s", sub.Status, inq.Status)
	}
	again, err := dp.SubmitDisputeEvidence(ctx, d.Reference, "providertest: the same evidence, again")
	if err != nil {
		t.Fatalf("submitting evidence again: %v (repeating a call must be safe)", err)
	}
	if again.Status == paykit.DisputeNeedsResponse {
		t.Errorf("evidence submitted twice: the dispute is %s again", again.Status)
	}
}

func (s *suite) disputeAccept(t *testing.T) {
	ctx := context.Background()
	dp := s.disputer()
	p, d := s.opened(t, s.amounts()[0])
	for _, what := range []string{"accept", "accept again"} {
		acc, err := dp.AcceptDispute(ctx, d.Reference)
		if err != nil {
			t.Fatalf("%s: %v (repeating a call must be safe)", what, err)
		}
		s.checkDispute(t, what, p, acc)
		if acc.Status != paykit.DisputeLost {
			t.Errorf("%s: the dispute is %s, want %s", what, acc.Status, paykit.DisputeLost)
		}
	}
	inq, err := dp.InquireDispute(ctx, d.Reference)
	if err != nil {
		t.Fatalf("inquire dispute: %v", err)
	}
	if inq.Status != paykit.DisputeLost {
		t.Errorf("an accepted dispute is %s, want %s", inq.Status, paykit.DisputeLost)
	}
}

// disputeNoAnswer checks that dispute calls without the Provider's
// answer are errors, never a dispute: a timeout, a refused connection,
// 5xx, answers that are not the Provider's. A call the Provider received
// is then repeated, and its answer is the Provider's.
func (s *suite) disputeNoAnswer(t *testing.T) {
	ctx := context.Background()
	dp := s.disputer()
	_, d := s.opened(t, s.amounts()[0])
	if got, err := s.refused.(paykit.DisputeProvider).InquireDispute(ctx, d.Reference); err == nil {
		t.Errorf("inquire dispute, connection refused: %+v, want an error", got)
	}
	for _, ft := range []fault{holdAfter, dropAfter, status500, status503, foreign404, garbage200} {
		name := map[fault]string{holdAfter: "timeout", dropAfter: "dropped connection", status500: "500", status503: "503",
			foreign404: "a 404 not from the Provider", garbage200: "a 200 not from the Provider"}[ft]
		t.Run(strings.ReplaceAll(name, " ", "_"), func(t *testing.T) {
			s.breaking(ft, func() {
				if got, err := dp.InquireDispute(ctx, d.Reference); err == nil {
					t.Errorf("inquire dispute: %+v, want an error", got)
				}
			})
		})
	}
	// The Provider receives the accept; its answer is lost.
	s.breaking(status500, func() {
		if got, err := dp.AcceptDispute(ctx, d.Reference); err == nil {
			t.Errorf("accept dispute, 500: %+v, want an error", got)
		}
	})
	acc, err := dp.AcceptDispute(ctx, d.Reference)
	if err != nil {
		t.Fatalf("accept repeated after a lost answer: %v", err)
	}
	if acc.Status != paykit.DisputeLost {
		t.Errorf("accept repeated after a lost answer: %s, want %s", acc.Status, paykit.DisputeLost)
	}
}
