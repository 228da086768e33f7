package paykit

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/paykit/paykit/internal/adapterhooks"
	"github.com/paykit/paykit/internal/webhooks/send"
)

func init() {
	adapterhooks.IdempotencyKeyConflict = func(svc any, ctx context.Context, merchantID, environment, key string) error {
		return svc.(*Service).idempotencyKeyConflict(ctx, Scope{MerchantID: merchantID, Environment: Environment(environment)}, key)
	}
	adapterhooks.EndOperatorSession = func(svc any, ctx context.Context, actor, id string, until time.Time) error {
		return svc.(*Service).endOperatorSession(ctx, actor, id, until)
	}
	adapterhooks.OperatorSessionEnded = func(svc any, ctx context.Context, id string) (bool, error) {
		return svc.(*Service).operatorSessionEnded(ctx, id)
	}
	adapterhooks.SetWebhookSender = func(svc any, ws send.Sender) { svc.(*Service).webhookSender.Store(&ws) }
	adapterhooks.Telemetry = func(svc any) (trace.TracerProvider, metric.MeterProvider) {
		t := svc.(*Service).tel
		return t.tp, t.mp
	}
	adapterhooks.SetJitter = func(svc any, rnd func() float64) { svc.(*Service).rnd = rnd }
}
