package httpadapter_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"path"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/paykit/paykit"
)

// tracedEnv is a sandbox env whose Service traces into an in-memory
// exporter and measures into a manual reader.
func tracedEnv(t *testing.T, open func(t *testing.T) paykit.Store) (*sandboxEnv, *tracetest.InMemoryExporter, *sdkmetric.ManualReader) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp), sdktrace.WithSampler(sdktrace.AlwaysSample()))
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()); _ = mp.Shutdown(context.Background()) })
	e := newSandboxEnvConfig(t, open, envConfig{tracerProvider: tp, meterProvider: mp, webhookTimeout: 5 * time.Second})
	return e, exp, reader
}

func attr(s tracetest.SpanStub, key string) (attribute.Value, bool) {
	for _, kv := range s.Attributes {
		if string(kv.Key) == key {
			return kv.Value, true
		}
	}
	return attribute.Value{}, false
}

func attrString(s tracetest.SpanStub, key string) string {
	v, _ := attr(s, key)
	return v.String()
}

// spansWhere returns the spans that match.
func spansWhere(spans tracetest.SpanStubs, match func(tracetest.SpanStub) bool) []tracetest.SpanStub {
	var out []tracetest.SpanStub
	for _, s := range spans {
		if match(s) {
			out = append(out, s)
		}
	}
	return out
}

// TestTracePaymentWithRecoveryAndWebhook follows one payment created over
// HTTP whose Provider call timed out: the request's server span, the
// transactions and the Provider call (outcome unknown) under it, the
// recovery job's span linked to the request, the Provider call that
// settled it, and the webhook delivery with the endpoint's status code.
// No span carries a secret, key, account number or payer detail; the logs
// of the request carry its trace and span ids; the durations are measured.
func TestTracePaymentWithRecoveryAndWebhook(t *testing.T) {
	forEachStore(t, func(t *testing.T, open func(t *testing.T) paykit.Store) {
		is := is.New(t)
		e, exp, reader := tracedEnv(t, open)
		k := e.merchant(paykit.Test)
		rc := newReceiver(t, e, func(n int, w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusAccepted) })
		ep := e.do("POST", "/v1/webhook_endpoints", map[string]any{"url": rc.srv.URL, "enabled_events": []string{"payment_intent.succeeded"}},
			basic(k), idem("we-1"))
		is.Equal(ep.status, http.StatusCreated)
		whsec := ep.json(t)["secret"].(string)
		exp.Reset()

		// 902: the PSP holds the request past the adapter's timeout.
		pi := e.created(k, "trace-1", fpxBody("12902", "order-trace-1"))
		is.Equal(pi["status"], "processing")
		id := pi["id"].(string)

		spans := exp.GetSpans()
		reqs := spansWhere(spans, func(s tracetest.SpanStub) bool {
			return s.SpanKind == trace.SpanKindServer && s.Name == "POST /payment_intents"
		})
		is.Equal(len(reqs), 1)
		req := reqs[0]
		is.Equal(attrString(req, "http.route"), "/payment_intents")
		is.Equal(attrString(req, "http.request.method"), "POST")
		is.Equal(attrString(req, "http.response.status_code"), "201")
		is.Equal(attrString(req, "paykit.merchant_id"), k.merchantID)
		is.Equal(attrString(req, "url.path"), "/v1/payment_intents")
		is.True(!req.Parent.IsValid()) // the client sent no traceparent

		children := func(parent tracetest.SpanStub) []tracetest.SpanStub {
			return spansWhere(spans, func(s tracetest.SpanStub) bool {
				return s.Parent.SpanID() == parent.SpanContext.SpanID() && s.SpanContext.TraceID() == parent.SpanContext.TraceID()
			})
		}
		var txs, calls []tracetest.SpanStub
		for _, c := range children(req) {
			switch {
			case strings.HasPrefix(c.Name, "tx "):
				txs = append(txs, c)
			case c.Name == "sandbox create_payment":
				calls = append(calls, c)
			}
		}
		is.True(len(txs) >= 2) // the create, and the answer of its Provider call
		system := map[string]string{"sqlite": "sqlite", "postgres": "postgresql"}[path.Base(t.Name())]
		for _, tx := range txs {
			is.Equal(attrString(tx, "db.system.name"), system)
			is.Equal(attrString(tx, "paykit.operation"), "CreatePaymentIntent")
			is.Equal(attrString(tx, "db.operation.name"), "transaction")
			is.Equal(tx.SpanKind, trace.SpanKindClient)
		}
		is.Equal(len(calls), 1)
		call := calls[0]
		is.Equal(call.SpanKind, trace.SpanKindClient)
		is.Equal(attrString(call, "paykit.provider"), "sandbox")
		is.Equal(attrString(call, "paykit.operation"), "create_payment")
		is.Equal(attrString(call, "paykit.outcome"), "unknown")
		is.Equal(attrString(call, "paykit.merchant_id"), k.merchantID)
		is.Equal(call.Status.Code, codes.Error)
		// The sandbox PSP is paykit's own code: it received the traceparent
		// and joined the trace under the call.
		psp := spansWhere(children(call), func(s tracetest.SpanStub) bool { return s.Name == "sandbox.psp payments.create" })
		is.Equal(len(psp), 1)

		// The access log line of the request carries its ids.
		logged := false
		sc := bufio.NewScanner(strings.NewReader(e.logs.String()))
		for sc.Scan() {
			var rec map[string]any
			if json.Unmarshal(sc.Bytes(), &rec) == nil && rec["msg"] == "http request" && rec["route"] == "POST /payment_intents" {
				is.Equal(rec["trace_id"], req.SpanContext.TraceID().String())
				is.Equal(rec["span_id"], req.SpanContext.SpanID().String())
				logged = true
			}
		}
		is.True(logged)

		// The recovery job settles it after the PSP's delay.
		e.clock.Advance(sandboxDelay + time.Second)
		e.drain()
		is.Equal(e.get(k, id)["status"], "succeeded")
		spans = exp.GetSpans()
		jobs := spansWhere(spans, func(s tracetest.SpanStub) bool {
			return s.SpanKind == trace.SpanKindConsumer && s.Name == "process payment.inquire"
		})
		is.True(len(jobs) >= 1)
		job := jobs[len(jobs)-1]
		is.Equal(len(job.Links), 1)
		is.Equal(job.Links[0].SpanContext.SpanID(), req.SpanContext.SpanID()) // linked to the request
		is.Equal(job.SpanContext.TraceID(), req.SpanContext.TraceID())        // in its trace
		is.Equal(attrString(job, "messaging.system"), "paykit")
		is.Equal(attrString(job, "messaging.destination.name"), "payment.inquire")
		is.Equal(attrString(job, "paykit.merchant_id"), k.merchantID)
		inquiries := spansWhere(children(job), func(s tracetest.SpanStub) bool { return s.Name == "sandbox inquire_payment" })
		is.Equal(len(inquiries), 1)
		is.Equal(attrString(inquiries[0], "paykit.outcome"), "succeeded")
		is.Equal(inquiries[0].Status.Code, codes.Unset)

		// The delivery of payment_intent.succeeded: its span has the
		// endpoint's status code, and the endpoint got no traceparent.
		deliveries := spansWhere(spans, func(s tracetest.SpanStub) bool {
			return s.SpanKind == trace.SpanKindClient && s.Name == "POST" && attrString(s, "paykit.event_type") == "payment_intent.succeeded"
		})
		is.Equal(len(deliveries), 1)
		is.Equal(attrString(deliveries[0], "http.response.status_code"), "202")
		is.Equal(attrString(deliveries[0], "server.address"), "127.0.0.1")
		is.Equal(len(rc.deliveries()), 1)
		is.Equal(rc.deliveries()[0].header.Get("Traceparent"), "")
		deliverJobs := spansWhere(spans, func(s tracetest.SpanStub) bool {
			return s.SpanContext.SpanID() == deliveries[0].Parent.SpanID()
		})
		is.Equal(len(deliverJobs), 1)
		is.Equal(deliverJobs[0].Name, "process webhook.deliver")
		is.Equal(len(deliverJobs[0].Links), 1) // to the span that made the event

		// A payout: its account number stays out of every span.
		e.adjustBalance(k, "MYR", "500000")
		po := e.do("POST", "/v1/payout_intents", myPayout("10000", "po-trace"), basic(k), idem("po-trace"))
		is.True(po.status == http.StatusCreated || po.status == http.StatusAccepted)
		e.clock.Advance(sandboxDelay + time.Second)
		e.drain()

		spans = exp.GetSpans()
		secrets := []string{k.secret, k.public, whsec, sandboxAPIKey, plainAccount, "Aisyah", "aisyah@example.com",
			string(testSigningKey), operatorToken}
		for _, s := range spans {
			texts := []string{s.Name, s.Status.Description}
			for _, kv := range s.Attributes {
				texts = append(texts, kv.Value.String())
			}
			for _, ev := range s.Events {
				texts = append(texts, ev.Name)
				for _, kv := range ev.Attributes {
					texts = append(texts, kv.Value.String())
				}
			}
			for _, text := range texts {
				for _, secret := range secrets {
					if strings.Contains(text, secret) {
						t.Errorf("span %q carries a secret or payer detail in %q", s.Name, text)
					}
				}
			}
		}
		is.True(len(spansWhere(spans, func(s tracetest.SpanStub) bool { return s.Name == "sandbox create_payout" })) == 1)

		// The durations beside the spans.
		var rm metricdata.ResourceMetrics
		is.NoErr(reader.Collect(context.Background(), &rm))
		measured := map[string]bool{}
		for _, sm := range rm.ScopeMetrics {
			for _, m := range sm.Metrics {
				if h, ok := m.Data.(metricdata.Histogram[float64]); ok && len(h.DataPoints) > 0 {
					measured[m.Name] = true
				}
			}
		}
		for _, name := range []string{"http.server.request.duration", "db.client.operation.duration",
			"paykit.provider.call.duration", "messaging.process.duration", "http.client.request.duration"} {
			if !measured[name] {
				t.Errorf("no %s measured", name)
			}
		}
	})
}

// TestWebhookTraceContextOptIn: with Config.WebhookTraceContext the
// delivery carries the traceparent of its span.
func TestWebhookTraceContextOptIn(t *testing.T) {
	forEachStore(t, func(t *testing.T, open func(t *testing.T) paykit.Store) {
		is := is.New(t)
		exp := tracetest.NewInMemoryExporter()
		tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
		e := newSandboxEnvConfig(t, open, envConfig{tracerProvider: tp, webhookTimeout: 5 * time.Second, webhookTraceContext: true})
		k := e.merchant(paykit.Test)
		rc := newReceiver(t, e, func(n int, w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
		ep := e.do("POST", "/v1/webhook_endpoints", map[string]any{"url": rc.srv.URL, "enabled_events": []string{"payment_intent.succeeded"}},
			basic(k), idem("we-1"))
		is.Equal(ep.status, http.StatusCreated)
		e.created(k, "trace-2", fpxBody("12902", "order-trace-2"))
		e.clock.Advance(sandboxDelay + time.Second)
		e.drain()
		got := rc.deliveries()
		is.Equal(len(got), 1)
		delivery := spansWhere(exp.GetSpans(), func(s tracetest.SpanStub) bool { return s.Name == "POST" && s.SpanKind == trace.SpanKindClient })
		is.Equal(len(delivery), 1)
		sc := delivery[0].SpanContext
		is.Equal(got[0].header.Get("Traceparent"), "00-"+sc.TraceID().String()+"-"+sc.SpanID().String()+"-01")
	})
}
