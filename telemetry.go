package paykit

import (
	"context"
	"net/url"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/paykit/paykit/internal/telemetry"
	"github.com/paykit/paykit/internal/webhooks/send"
)

// paykit's own attributes, where the semantic conventions have none.
const (
	attrProvider   = attribute.Key("paykit.provider")
	attrOperation  = attribute.Key("paykit.operation")
	attrOutcome    = attribute.Key("paykit.outcome")
	attrMerchantID = attribute.Key("paykit.merchant_id")
	attrAttemptKey = attribute.Key("paykit.attempt_key")
	attrTxAttempts = attribute.Key("paykit.tx.attempts")
	attrEventID    = attribute.Key("paykit.event_id")
	attrEventType  = attribute.Key("paykit.event_type")
	attrEndpointID = attribute.Key("paykit.webhook_endpoint_id")
	attrJobAttempt = attribute.Key("paykit.job.attempt")
)

// tel is a Service's tracer and instruments, from Config's providers.
type tel struct {
	tp       trace.TracerProvider
	mp       metric.MeterProvider
	tracer   trace.Tracer
	txDur    metric.Float64Histogram // db.client.operation.duration
	callDur  metric.Float64Histogram // paykit.provider.call.duration
	jobDur   metric.Float64Histogram // messaging.process.duration
	hookDur  metric.Float64Histogram // http.client.request.duration
	dbSystem attribute.KeyValue      // empty Key when the Store does not say
	// hookTrace: webhook requests carry the delivery span's traceparent.
	hookTrace bool
}

// DBSystemNamer is implemented by a Store that names its database as the
// semantic conventions' db.system.name ("sqlite", "postgresql"); the
// spans and durations of its transactions carry it.
type DBSystemNamer interface {
	DBSystemName() string
}

// newTel makes cfg's tracer and instruments (the global providers' when
// cfg sets none).
func newTel(cfg Config) (*tel, error) {
	tp, mp := cfg.TracerProvider, cfg.MeterProvider
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	meter := mp.Meter(telemetry.Scope)
	t := &tel{tp: tp, mp: mp, tracer: tp.Tracer(telemetry.Scope), hookTrace: cfg.WebhookTraceContext}
	// The semantic conventions' bucket boundaries for durations in seconds.
	buckets := metric.WithExplicitBucketBoundaries(0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10)
	var err error
	if t.txDur, err = meter.Float64Histogram("db.client.operation.duration", metric.WithUnit("s"),
		metric.WithDescription("Duration of paykit's Store transactions, retries included."), buckets); err != nil {
		return nil, err
	}
	if t.callDur, err = meter.Float64Histogram("paykit.provider.call.duration", metric.WithUnit("s"),
		metric.WithDescription("Duration of calls to Providers, by outcome."), buckets); err != nil {
		return nil, err
	}
	if t.jobDur, err = meter.Float64Histogram("messaging.process.duration", metric.WithUnit("s"),
		metric.WithDescription("Duration of job runs."), buckets); err != nil {
		return nil, err
	}
	if t.hookDur, err = meter.Float64Histogram("http.client.request.duration", metric.WithUnit("s"),
		metric.WithDescription("Duration of webhook delivery requests."), buckets); err != nil {
		return nil, err
	}
	if n, ok := cfg.Store.(DBSystemNamer); ok {
		t.dbSystem = semconv.DBSystemNameKey.String(n.DBSystemName())
	}
	return t, nil
}

// The options of the spans' kinds, made once.
var (
	clientSpan   = []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindClient)}
	consumerSpan = trace.WithSpanKind(trace.SpanKindConsumer)
)

// noSpan is what trace.SpanFromContext finds in a context without a span.
var noSpan = trace.SpanFromContext(context.Background())

// child starts a span under ctx's; none (ctx's own span, whose methods do
// nothing, at no cost) when ctx's span is not recorded: its trace was not
// sampled, or the TracerProvider is a no-op. Under a remote parent (a
// traceparent received) the sampler decides; without a span in ctx it
// starts a root.
func (t *tel) child(ctx context.Context, name string, opts []trace.SpanStartOption) (context.Context, trace.Span) {
	if parent := trace.SpanFromContext(ctx); parent != noSpan && !parent.IsRecording() && !parent.SpanContext().IsRemote() {
		return ctx, parent
	}
	return t.tracer.Start(ctx, name, opts...)
}

// txSpan is the span and the start of one inTx call.
type txSpan struct {
	span  trace.Span
	start time.Time
	op    string
}

// startTx starts the span of a Store transaction, named after the Service
// method that runs it.
func (t *tel) startTx(ctx context.Context) (context.Context, txSpan) {
	ctx, span := t.child(ctx, "tx", clientSpan)
	ts := txSpan{span: span}
	if span.IsRecording() || t.txDur.Enabled(ctx) {
		ts.op, ts.start = callerOperation(), time.Now()
		if span.IsRecording() {
			span.SetName("tx " + ts.op)
			span.SetAttributes(attrOperation.String(ts.op), semconv.DBOperationName("transaction"))
			if t.dbSystem.Key != "" {
				span.SetAttributes(t.dbSystem)
			}
		}
	}
	return ctx, ts
}

// endTx ends a transaction's span after attempts tries, err its result.
func (t *tel) endTx(ctx context.Context, ts txSpan, attempts int, err error) {
	if !ts.start.IsZero() && t.txDur.Enabled(ctx) {
		attrs := []attribute.KeyValue{attrOperation.String(ts.op), semconv.DBOperationName("transaction")}
		if t.dbSystem.Key != "" {
			attrs = append(attrs, t.dbSystem)
		}
		if err != nil {
			attrs = append(attrs, semconv.ErrorTypeKey.String(errorType(err)))
		}
		t.txDur.Record(ctx, time.Since(ts.start).Seconds(), metric.WithAttributes(attrs...))
	}
	if ts.span.IsRecording() {
		if attempts > 1 {
			ts.span.SetAttributes(attrTxAttempts.Int(attempts))
		}
		if err != nil {
			ts.span.SetAttributes(semconv.ErrorTypeKey.String(errorType(err)))
			ts.span.SetStatus(codes.Error, errorType(err))
		}
	}
	ts.span.End()
}

// errorType is the error.type of err: its paykit error code, else
// "_OTHER". Never the message, which may quote input.
func errorType(err error) string {
	if c := ErrorCode(err); c != "" {
		return c
	}
	return "_OTHER"
}

// operations caches callerOperation's answers by call stack.
var operations sync.Map // [12]uintptr → string

// callerOperation names the Service method a transaction runs for: the
// first exported method of Service on the stack (but the worker's), else
// the nearest function of package paykit.
func callerOperation() string {
	var pcs [12]uintptr
	n := runtime.Callers(4, pcs[:]) // from inTx's caller
	if op, ok := operations.Load(pcs); ok {
		return op.(string)
	}
	op := operationOf(pcs[:n])
	operations.Store(pcs, op)
	return op
}

// operationOf is callerOperation's answer for the stack pcs.
func operationOf(pcs []uintptr) string {
	frames := runtime.CallersFrames(pcs)
	first := ""
	for {
		f, more := frames.Next()
		if name, ok := strings.CutPrefix(f.Function, "github.com/paykit/paykit."); ok {
			method, isMethod := strings.CutPrefix(name, "(*Service).")
			if isMethod {
				name = method
			}
			if i := strings.IndexAny(name, ".["); i > 0 {
				name = name[:i] // a closure's or an instance's suffix
			}
			if isMethod && name[0] >= 'A' && name[0] <= 'Z' && name != "Run" && name != "ProcessDue" {
				return name // the worker's methods name no operation
			}
			if first == "" {
				first = name
			}
		}
		if !more {
			break
		}
	}
	if first == "" {
		return "unknown"
	}
	return first
}

// startJob starts the span of one run of j: a consumer span in the trace
// of the span that enqueued j, linked to it, or a new trace.
func (t *tel) startJob(ctx context.Context, j *Job) (context.Context, txSpan) {
	opts := make([]trace.SpanStartOption, 0, 3)
	opts = append(opts, consumerSpan)
	if sc := telemetry.ParseTraceParent(j.TraceParent); sc.IsValid() {
		ctx = trace.ContextWithRemoteSpanContext(ctx, sc)
		opts = append(opts, trace.WithLinks(trace.Link{SpanContext: sc}))
	} else {
		opts = append(opts, trace.WithNewRoot())
	}
	ctx, span := t.tracer.Start(ctx, "process "+j.Kind, opts...)
	js := txSpan{span: span, op: j.Kind}
	if span.IsRecording() {
		span.SetAttributes(
			semconv.MessagingSystemKey.String("paykit"),
			semconv.MessagingOperationTypeProcess,
			semconv.MessagingOperationName("process"),
			semconv.MessagingDestinationName(j.Kind),
			semconv.MessagingMessageID(j.ID),
			attrJobAttempt.Int(j.Attempts),
		)
		if j.Scope.MerchantID != "" {
			span.SetAttributes(attrMerchantID.String(j.Scope.MerchantID))
		}
	}
	if span.IsRecording() || t.jobDur.Enabled(ctx) {
		js.start = time.Now()
	}
	return ctx, js
}

// endJob ends a run's span; failed says whether the run failed (a job
// that waits did not), err what its handler returned.
func (t *tel) endJob(ctx context.Context, js txSpan, failed bool, err error) {
	if !js.start.IsZero() && t.jobDur.Enabled(ctx) {
		attrs := []attribute.KeyValue{semconv.MessagingSystemKey.String("paykit"), semconv.MessagingOperationName("process"),
			semconv.MessagingDestinationName(js.op)}
		if failed {
			attrs = append(attrs, semconv.ErrorTypeKey.String(jobErrorType(err)))
		}
		t.jobDur.Record(ctx, time.Since(js.start).Seconds(), metric.WithAttributes(attrs...))
	}
	if failed && js.span.IsRecording() {
		js.span.SetAttributes(semconv.ErrorTypeKey.String(jobErrorType(err)))
		js.span.SetStatus(codes.Error, jobErrorType(err))
	}
	js.span.End()
}

// jobErrorType is the error.type of a failed run: its kind as operators
// see it in the job's last error.
func jobErrorType(err error) string {
	if k := classifyJobError(err); k != "" {
		return string(k)
	}
	return "_OTHER"
}

// startDelivery starts the client span of one webhook delivery attempt of
// e to w. It names the endpoint by id and host only: a URL's path and
// query may hold the merchant's own secrets.
func (t *tel) startDelivery(ctx context.Context, w *WebhookEndpoint, e *Event) (context.Context, txSpan) {
	ctx, span := t.child(ctx, "POST", clientSpan)
	ds := txSpan{span: span}
	if !span.IsRecording() && !t.hookDur.Enabled(ctx) {
		return ctx, ds
	}
	ds.start = time.Now()
	if u, err := url.Parse(w.URL); err == nil {
		ds.op = u.Hostname()
		if span.IsRecording() {
			span.SetAttributes(semconv.URLScheme(u.Scheme), semconv.ServerAddress(u.Hostname()))
			if p, err := strconv.Atoi(u.Port()); err == nil {
				span.SetAttributes(semconv.ServerPort(p))
			}
		}
	}
	if span.IsRecording() {
		span.SetAttributes(semconv.HTTPRequestMethodPost, attrEndpointID.String(w.ID), attrEventID.String(e.ID),
			attrMerchantID.String(w.MerchantID), attrEventType.String(e.Type))
	}
	return ctx, ds
}

// endDelivery ends a delivery's span with its answer: the status code,
// and an error for no answer or one that is not 2xx.
func (t *tel) endDelivery(ctx context.Context, ds txSpan, res send.Attempt) {
	errType := ""
	switch {
	case res.StatusCode == 0:
		errType = "_OTHER"
	case !res.Succeeded():
		errType = strconv.Itoa(res.StatusCode)
	}
	if !ds.start.IsZero() && t.hookDur.Enabled(ctx) {
		attrs := []attribute.KeyValue{semconv.HTTPRequestMethodPost, semconv.ServerAddress(ds.op)}
		if res.StatusCode != 0 {
			attrs = append(attrs, semconv.HTTPResponseStatusCode(res.StatusCode))
		}
		if errType != "" {
			attrs = append(attrs, semconv.ErrorTypeKey.String(errType))
		}
		t.hookDur.Record(ctx, time.Since(ds.start).Seconds(), metric.WithAttributes(attrs...))
	}
	if ds.span.IsRecording() {
		if res.StatusCode != 0 {
			ds.span.SetAttributes(semconv.HTTPResponseStatusCode(res.StatusCode))
		}
		if errType != "" {
			ds.span.SetAttributes(semconv.ErrorTypeKey.String(errType))
			ds.span.SetStatus(codes.Error, errType)
		}
	}
	ds.span.End()
}
