package sim

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/provider/sandbox"
)

// simProvider is an instance's Provider: the sandbox adapter calling the
// PSP in this process, between the faults the plan armed. A dead
// instance sends nothing.
type simProvider struct {
	inner *sandbox.Provider
	in    *instance
}

var (
	_ paykit.Provider            = (*simProvider)(nil)
	_ paykit.PayoutProvider      = (*simProvider)(nil)
	_ paykit.RefundProvider      = (*simProvider)(nil)
	_ paykit.PayerSimulator      = (*simProvider)(nil)
	_ paykit.ReturnSimulator     = (*simProvider)(nil)
	_ paykit.DisputeProvider     = (*simProvider)(nil)
	_ paykit.DisputeSimulator    = (*simProvider)(nil)
	_ paykit.SettlementReporter  = (*simProvider)(nil)
	_ paykit.SettlementSimulator = (*simProvider)(nil)
)

// pspOps are the PSP's fault operations of the calls that have one.
var pspOps = map[callKind]string{
	callCreatePayment: sandbox.OpCreatePayment, callInquirePayment: sandbox.OpInquirePayment, callCancelPayment: sandbox.OpCancelPayment,
	callCreatePayout: sandbox.OpCreatePayout, callInquirePayout: sandbox.OpInquirePayout, callCancelPayout: sandbox.OpCancelPayout,
	callCreateRefund: sandbox.OpCreateRefund, callInquireRefund: sandbox.OpInquireRefund,
}

// notSent is the answer to a call a dead instance makes.
var notSent = paykit.Result{Outcome: paykit.OutcomeUnacknowledged, Detail: "not sent: the instance crashed"}

// call makes one Provider call of kind about key through the armed fault,
// if it applies, and then applies what the instance meets after a call
// (a crash, a Store fault, a pause for a racing instance).
func (p *simProvider) call(kind callKind, key string, do func() paykit.Result) paykit.Result {
	in, w := p.in, p.in.w
	if in.dead {
		return notSent
	}
	var fault FaultKind
	if in.armed != nil && in.armed.kind.applies(kind) {
		fault = in.armed.kind
		switch {
		case fault == FaultStale && !w.obs.hasAnswer(kind, key):
			fault = "" // nothing to repeat yet: the fault waits for another call
		case fault == FaultRefused && w.psp.CreateCalls(key) > 0:
			// A PSP refuses only what it never recorded: under a key it
			// knows it answers with the attempt.
			fault = ""
		default:
			in.armed = nil
		}
	}
	var r paykit.Result
	switch fault {
	case FaultRefused:
		r = paykit.Result{Outcome: paykit.OutcomeRefused, Detail: "sim: refused before anything was created"}
	case Fault429:
		r = paykit.Result{Outcome: paykit.OutcomeUnknown, Detail: "http 429 ERR_RATE_LIMITED"}
	case FaultTimeoutBefore:
		r = paykit.Result{Outcome: paykit.OutcomeUnknown, Detail: "sent, no answer: lost on the way to the PSP"}
	case Fault500Before, Fault500After, FaultResetAfter:
		kindOf := map[FaultKind]sandbox.FaultKind{Fault500Before: sandbox.FaultStatus500, Fault500After: sandbox.FaultStatus500, FaultResetAfter: sandbox.FaultReset}
		w.psp.InjectFault(sandbox.Fault{Op: pspOps[kind], Kind: kindOf[fault], AfterRecord: fault != Fault500Before})
		r = do()
	case FaultTimeoutAfter:
		w.obs.recordAnswer(kind, key, do())
		r = paykit.Result{Outcome: paykit.OutcomeUnknown, Detail: "sent, no answer within the timeout"}
	case FaultDuplicate:
		w.obs.recordAnswer(kind, key, do())
		r = do()
	case FaultStale:
		r = w.obs.answer(kind, key)
	default:
		r = do()
	}
	storeFault := fault == FaultStoreErrorAfterCall || fault == FaultStoreBusyAfterCall
	if fault != "" && !storeFault { // a Store fault fires at the transaction it breaks
		w.faults.fired(fault)
		w.trace.logf("  %s meets %s on %s %s: %s", in.name, fault, callNames[kind], key, r.Outcome)
	}
	if fault != FaultStale && fault != FaultRefused && fault != Fault429 && fault != FaultTimeoutBefore {
		w.obs.recordAnswer(kind, key, r)
	}
	if p.after(storeFault, fault) {
		return notSent
	}
	return r
}

// callError is call for the calls that answer with an error instead of a
// Result: an armed error fault fails them without an answer.
func (p *simProvider) callError(kind callKind, do func() error) error {
	in, w := p.in, p.in.w
	if in.dead {
		return errCrashed
	}
	if in.armed != nil && in.armed.kind.applies(kind) {
		f := in.armed.kind
		in.armed = nil
		w.faults.fired(f)
		w.trace.logf("  %s meets %s on %s", in.name, f, callNames[kind])
		if kind == callSettlement {
			return errors.New("sim: settlement read failed")
		}
		_ = do() // the PSP did it; the answer is lost
		return errors.New("sim: no answer from the PSP")
	}
	err := do()
	if p.after(false, "") {
		return errCrashed
	}
	return err
}

// after applies what the instance meets once a call returned: a crash
// (then it reports true: nobody learns the answer), a Store fault armed
// for its next transaction, a pause while another instance works.
func (p *simProvider) after(storeFault bool, fault FaultKind) bool {
	in, w := p.in, p.in.w
	if storeFault {
		in.failTx, in.failTxKind = errors.New("sim: store connection reset"), fault
		if fault == FaultStoreBusyAfterCall {
			in.failTx = fmt.Errorf("sim: %w", paykit.ErrUnavailable)
		}
	}
	if in.crashAfterCall {
		in.crashAfterCall = false
		w.faults.fired(FaultCrashAfterCall)
		w.kill(in, "after a Provider call")
		return true
	}
	if in.pause != nil {
		pause, release := in.pause, in.release
		in.pause, in.release = nil, nil
		close(pause)
		<-release
	}
	return false
}

var callNames = map[callKind]string{
	callCreatePayment: "create_payment", callInquirePayment: "inquire_payment", callCancelPayment: "cancel_payment",
	callCreatePayout: "create_payout", callInquirePayout: "inquire_payout", callCancelPayout: "cancel_payout",
	callCreateRefund: "create_refund", callInquireRefund: "inquire_refund", callDispute: "dispute",
	callSettlement: "settlement", callOther: "other",
}

func (p *simProvider) Capabilities() paykit.Capabilities { return p.inner.Capabilities() }

func (p *simProvider) CreatePayment(ctx context.Context, req paykit.PaymentRequest) paykit.Result {
	return p.call(callCreatePayment, req.Key, func() paykit.Result { return p.inner.CreatePayment(ctx, req) })
}

func (p *simProvider) InquirePayment(ctx context.Context, ref paykit.AttemptRef) paykit.Result {
	return p.call(callInquirePayment, ref.Key, func() paykit.Result { return p.inner.InquirePayment(ctx, ref) })
}

func (p *simProvider) CancelPayment(ctx context.Context, ref paykit.AttemptRef) paykit.Result {
	return p.call(callCancelPayment, ref.Key, func() paykit.Result { return p.inner.CancelPayment(ctx, ref) })
}

func (p *simProvider) ParseCallback(ctx context.Context, r *http.Request) ([]paykit.CallbackEvent, error) {
	return p.inner.ParseCallback(ctx, r)
}

func (p *simProvider) CreatePayout(ctx context.Context, req paykit.PayoutRequest) paykit.Result {
	return p.call(callCreatePayout, req.Key, func() paykit.Result { return p.inner.CreatePayout(ctx, req) })
}

func (p *simProvider) InquirePayout(ctx context.Context, ref paykit.AttemptRef) paykit.Result {
	return p.call(callInquirePayout, ref.Key, func() paykit.Result { return p.inner.InquirePayout(ctx, ref) })
}

func (p *simProvider) CancelPayout(ctx context.Context, ref paykit.AttemptRef) paykit.Result {
	return p.call(callCancelPayout, ref.Key, func() paykit.Result { return p.inner.CancelPayout(ctx, ref) })
}

func (p *simProvider) CreateRefund(ctx context.Context, req paykit.RefundRequest) paykit.Result {
	return p.call(callCreateRefund, req.Key, func() paykit.Result { return p.inner.CreateRefund(ctx, req) })
}

func (p *simProvider) InquireRefund(ctx context.Context, ref paykit.AttemptRef) paykit.Result {
	return p.call(callInquireRefund, ref.Key, func() paykit.Result { return p.inner.InquireRefund(ctx, ref) })
}

func (p *simProvider) Approve(ctx context.Context, key string) error {
	return p.callError(callOther, func() error { return p.inner.Approve(ctx, key) })
}

func (p *simProvider) Decline(ctx context.Context, key string) error {
	return p.callError(callOther, func() error { return p.inner.Decline(ctx, key) })
}

func (p *simProvider) ReturnPayout(ctx context.Context, key string) error {
	return p.callError(callOther, func() error { return p.inner.ReturnPayout(ctx, key) })
}

func (p *simProvider) OpenDispute(ctx context.Context, req paykit.DisputeOpening) (paykit.ProviderDispute, error) {
	var out paykit.ProviderDispute
	err := p.callError(callOther, func() error {
		var err error
		out, err = p.inner.OpenDispute(ctx, req)
		return err
	})
	return out, err
}

func (p *simProvider) disputeCall(do func() (paykit.ProviderDispute, error)) (paykit.ProviderDispute, error) {
	var out paykit.ProviderDispute
	err := p.callError(callDispute, func() error {
		var err error
		out, err = do()
		return err
	})
	return out, err
}

func (p *simProvider) InquireDispute(ctx context.Context, ref string) (paykit.ProviderDispute, error) {
	return p.disputeCall(func() (paykit.ProviderDispute, error) { return p.inner.InquireDispute(ctx, ref) })
}

func (p *simProvider) SubmitDisputeEvidence(ctx context.Context, ref, text string) (paykit.ProviderDispute, error) {
	return p.disputeCall(func() (paykit.ProviderDispute, error) { return p.inner.SubmitDisputeEvidence(ctx, ref, text) })
}

func (p *simProvider) AcceptDispute(ctx context.Context, ref string) (paykit.ProviderDispute, error) {
	return p.disputeCall(func() (paykit.ProviderDispute, error) { return p.inner.AcceptDispute(ctx, ref) })
}

func (p *simProvider) SettlementBatches(ctx context.Context, after string, limit int) ([]paykit.SettlementBatch, error) {
	var out []paykit.SettlementBatch
	err := p.callError(callSettlement, func() error {
		var err error
		out, err = p.inner.SettlementBatches(ctx, after, limit)
		return err
	})
	return out, err
}

func (p *simProvider) SettleNow(ctx context.Context, merchant string) ([]paykit.SettlementBatch, error) {
	var out []paykit.SettlementBatch
	err := p.callError(callOther, func() error {
		var err error
		out, err = p.inner.SettleNow(ctx, merchant)
		return err
	})
	return out, err
}
