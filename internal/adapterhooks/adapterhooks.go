// Package adapterhooks is what httpadapter, and the tests, do with a
// Service beyond its exported methods. Package paykit sets the hooks in
// its init; svc is always a *paykit.Service.
package adapterhooks

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/paykit/paykit/internal/webhooks/send"
)

// Hooks, set by package paykit.
var (
	// IdempotencyKeyConflict returns the idempotency_conflict error when
	// key was already used in the scope (merchantID, environment), nil
	// when it is free. It answers a request that cannot equal any stored
	// one (an adapter could not even parse it): under a used key such a
	// request conflicts, as any other that differs.
	IdempotencyKeyConflict func(svc any, ctx context.Context, merchantID, environment, key string) error
	// EndOperatorSession records that the operator console session id,
	// valid until until, is over (a sign-out), and audits it as actor's.
	EndOperatorSession func(svc any, ctx context.Context, actor, id string, until time.Time) error
	// OperatorSessionEnded reports whether the session id was ended by
	// EndOperatorSession, on any instance on the Store.
	OperatorSessionEnded func(svc any, ctx context.Context, id string) (bool, error)
	// SetWebhookSender makes svc deliver webhooks through ws from now on
	// (tests).
	SetWebhookSender func(svc any, ws send.Sender)
	// Telemetry returns the tracer and meter providers svc was configured
	// with (the global ones when none).
	Telemetry func(svc any) (trace.TracerProvider, metric.MeterProvider)
	// SetJitter makes svc draw the jitter of its retry schedules (job
	// backoff, webhook redeliveries, circuit cool-downs) from rnd, which
	// returns values in [0, 1); set before svc is used (simulations that
	// must repeat).
	SetJitter func(svc any, rnd func() float64)
)
