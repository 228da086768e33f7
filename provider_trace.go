package paykit

import (
	"context"
	"net/http"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
)

// Every call paykit makes to a Provider goes through the wrappers of this
// file, which newAdapters puts around its method sets: each call is a
// client span named "<provider> <operation>" with the Provider, the
// operation, the attempt key and the outcome as attributes, and its
// duration a paykit.provider.call.duration measurement. Requests,
// account numbers and answers stay out.

// callSite is one Provider's instrumentation.
type callSite struct {
	t        *tel
	provider string
}

// run calls f in the span of the Provider call op about the attempt key
// (and merchant, when known), and records its outcome: the Result's for
// calls that answer one (an error status when the Provider gave no
// trustworthy answer), else whether f failed.
func run[T any](ctx context.Context, c *callSite, op, key, merchant string, f func(context.Context) (T, error), outcome func(T, error) (string, bool)) (T, error) {
	ctx, span := c.t.child(ctx, c.provider+" "+op, clientSpan)
	timed := span.IsRecording() || c.t.callDur.Enabled(ctx)
	var start time.Time
	if timed {
		start = time.Now()
	}
	v, err := f(ctx)
	if timed {
		out, failed := outcome(v, err)
		if span.IsRecording() {
			attrs := []attribute.KeyValue{attrProvider.String(c.provider), attrOperation.String(op), attrOutcome.String(out)}
			if key != "" {
				attrs = append(attrs, attrAttemptKey.String(key))
			}
			if merchant != "" {
				attrs = append(attrs, attrMerchantID.String(merchant))
			}
			span.SetAttributes(attrs...)
			if err != nil {
				span.SetAttributes(semconv.ErrorTypeKey.String("_OTHER"))
			}
			if failed {
				span.SetStatus(codes.Error, out)
			}
		}
		if c.t.callDur.Enabled(ctx) {
			c.t.callDur.Record(ctx, time.Since(start).Seconds(), metric.WithAttributes(
				attrProvider.String(c.provider), attrOperation.String(op), attrOutcome.String(out)))
		}
	}
	span.End()
	return v, err
}

// result runs a call that answers a Result.
func result(ctx context.Context, c *callSite, op, key, merchant string, f func(context.Context) Result) Result {
	r, _ := run(ctx, c, op, key, merchant, func(ctx context.Context) (Result, error) { return f(ctx), nil },
		func(r Result, _ error) (string, bool) { return string(r.Outcome), unreachable(r.Outcome) })
	return r
}

// erring runs a call that answers a value or an error.
func erring[T any](ctx context.Context, c *callSite, op, key string, f func(context.Context) (T, error)) (T, error) {
	return run(ctx, c, op, key, "", f, func(_ T, err error) (string, bool) {
		if err != nil {
			return "error", true
		}
		return "ok", false
	})
}

// errOnly runs a call that answers only an error.
func errOnly(ctx context.Context, c *callSite, op, key string, f func(context.Context) error) error {
	_, err := erring(ctx, c, op, key, func(ctx context.Context) (struct{}, error) { return struct{}{}, f(ctx) })
	return err
}

// trace puts the traced wrappers around a's method sets.
func (a *adapter) trace(t *tel) {
	c := &callSite{t: t, provider: a.name}
	a.Provider = tracedProvider{a.Provider, c}
	if a.payouts != nil {
		a.payouts = tracedPayouts{a.payouts, c}
	}
	if a.refunds != nil {
		a.refunds = tracedRefunds{a.refunds, c}
	}
	if a.payer != nil {
		a.payer = tracedPayer{a.payer, c}
	}
	if a.returns != nil {
		a.returns = tracedReturns{a.returns, c}
	}
	if a.disputes != nil {
		a.disputes = tracedDisputes{a.disputes, c}
	}
	if a.disputeSim != nil {
		a.disputeSim = tracedDisputeSim{a.disputeSim, c}
	}
	if a.settlement != nil {
		a.settlement = tracedSettlement{a.settlement, c}
	}
	if a.settleSim != nil {
		a.settleSim = tracedSettleSim{a.settleSim, c}
	}
}

type tracedProvider struct {
	p Provider
	c *callSite
}

func (w tracedProvider) Capabilities() Capabilities { return w.p.Capabilities() }

func (w tracedProvider) CreatePayment(ctx context.Context, req PaymentRequest) Result {
	return result(ctx, w.c, "create_payment", req.Key, req.Merchant, func(ctx context.Context) Result { return w.p.CreatePayment(ctx, req) })
}

func (w tracedProvider) InquirePayment(ctx context.Context, ref AttemptRef) Result {
	return result(ctx, w.c, "inquire_payment", ref.Key, "", func(ctx context.Context) Result { return w.p.InquirePayment(ctx, ref) })
}

func (w tracedProvider) CancelPayment(ctx context.Context, ref AttemptRef) Result {
	return result(ctx, w.c, "cancel_payment", ref.Key, "", func(ctx context.Context) Result { return w.p.CancelPayment(ctx, ref) })
}

// ParseCallback reads a request paykit received: the request's span
// covers it.
func (w tracedProvider) ParseCallback(ctx context.Context, r *http.Request) ([]CallbackEvent, error) {
	return w.p.ParseCallback(ctx, r)
}

type tracedPayouts struct {
	p PayoutProvider
	c *callSite
}

func (w tracedPayouts) CreatePayout(ctx context.Context, req PayoutRequest) Result {
	return result(ctx, w.c, "create_payout", req.Key, "", func(ctx context.Context) Result { return w.p.CreatePayout(ctx, req) })
}

func (w tracedPayouts) InquirePayout(ctx context.Context, ref AttemptRef) Result {
	return result(ctx, w.c, "inquire_payout", ref.Key, "", func(ctx context.Context) Result { return w.p.InquirePayout(ctx, ref) })
}

func (w tracedPayouts) CancelPayout(ctx context.Context, ref AttemptRef) Result {
	return result(ctx, w.c, "cancel_payout", ref.Key, "", func(ctx context.Context) Result { return w.p.CancelPayout(ctx, ref) })
}

type tracedRefunds struct {
	p RefundProvider
	c *callSite
}

func (w tracedRefunds) CreateRefund(ctx context.Context, req RefundRequest) Result {
	return result(ctx, w.c, "create_refund", req.Key, "", func(ctx context.Context) Result { return w.p.CreateRefund(ctx, req) })
}

func (w tracedRefunds) InquireRefund(ctx context.Context, ref AttemptRef) Result {
	return result(ctx, w.c, "inquire_refund", ref.Key, "", func(ctx context.Context) Result { return w.p.InquireRefund(ctx, ref) })
}

type tracedPayer struct {
	p PayerSimulator
	c *callSite
}

func (w tracedPayer) Approve(ctx context.Context, key string) error {
	return errOnly(ctx, w.c, "approve_payment", key, func(ctx context.Context) error { return w.p.Approve(ctx, key) })
}

func (w tracedPayer) Decline(ctx context.Context, key string) error {
	return errOnly(ctx, w.c, "decline_payment", key, func(ctx context.Context) error { return w.p.Decline(ctx, key) })
}

type tracedReturns struct {
	p ReturnSimulator
	c *callSite
}

func (w tracedReturns) ReturnPayout(ctx context.Context, key string) error {
	return errOnly(ctx, w.c, "return_payout", key, func(ctx context.Context) error { return w.p.ReturnPayout(ctx, key) })
}

type tracedDisputes struct {
	p DisputeProvider
	c *callSite
}

func (w tracedDisputes) InquireDispute(ctx context.Context, ref string) (ProviderDispute, error) {
	return erring(ctx, w.c, "inquire_dispute", "", func(ctx context.Context) (ProviderDispute, error) { return w.p.InquireDispute(ctx, ref) })
}

func (w tracedDisputes) SubmitDisputeEvidence(ctx context.Context, ref, text string) (ProviderDispute, error) {
	return erring(ctx, w.c, "submit_dispute_evidence", "", func(ctx context.Context) (ProviderDispute, error) {
		return w.p.SubmitDisputeEvidence(ctx, ref, text)
	})
}

func (w tracedDisputes) AcceptDispute(ctx context.Context, ref string) (ProviderDispute, error) {
	return erring(ctx, w.c, "accept_dispute", "", func(ctx context.Context) (ProviderDispute, error) { return w.p.AcceptDispute(ctx, ref) })
}

type tracedDisputeSim struct {
	p DisputeSimulator
	c *callSite
}

func (w tracedDisputeSim) OpenDispute(ctx context.Context, req DisputeOpening) (ProviderDispute, error) {
	return erring(ctx, w.c, "open_dispute", req.PaymentKey, func(ctx context.Context) (ProviderDispute, error) { return w.p.OpenDispute(ctx, req) })
}

type tracedSettlement struct {
	p SettlementReporter
	c *callSite
}

func (w tracedSettlement) SettlementBatches(ctx context.Context, after string, limit int) ([]SettlementBatch, error) {
	return erring(ctx, w.c, "read_settlements", "", func(ctx context.Context) ([]SettlementBatch, error) {
		return w.p.SettlementBatches(ctx, after, limit)
	})
}

type tracedSettleSim struct {
	p SettlementSimulator
	c *callSite
}

func (w tracedSettleSim) SettleNow(ctx context.Context, merchant string) ([]SettlementBatch, error) {
	return erring(ctx, w.c, "settle_now", "", func(ctx context.Context) ([]SettlementBatch, error) { return w.p.SettleNow(ctx, merchant) })
}
