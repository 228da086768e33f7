package paykit_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/internal/adapterhooks"
	"github.com/paykit/paykit/internal/webhooks/send"
	"github.com/paykit/paykit/paykittest"
)

// hangingSender answers every delivery at once but those to the hanging
// URL, which it holds until the test ends; it reports each event it
// delivered by endpoint URL.
type hangingSender struct {
	hang      string
	release   chan struct{}
	mu        sync.Mutex
	delivered map[string]int
	got       chan string
}

func (h *hangingSender) Send(ctx context.Context, d send.Delivery) send.Attempt {
	if d.URL == h.hang {
		select {
		case <-h.release:
		case <-ctx.Done():
		}
		return send.Attempt{Err: "timeout"}
	}
	h.mu.Lock()
	h.delivered[d.URL]++
	h.mu.Unlock()
	h.got <- d.URL
	return send.Attempt{StatusCode: 200}
}

// A webhook endpoint that hangs holds at most PartitionConcurrency of the
// worker's slots: another merchant's deliveries go out while it hangs.
func TestHangingEndpointDoesNotDelayOtherMerchants(t *testing.T) {
	t.Parallel()
	forEachJobStore(t, func(t *testing.T, store paykit.Store) {
		is := is.New(t)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		sender := &hangingSender{hang: "http://127.0.0.1:1/hang", release: make(chan struct{}), delivered: map[string]int{},
			got: make(chan string, 100)}
		defer close(sender.release)
		e := newFlowEnvOn(t, store, func(c *paykit.Config) {
			c.WorkerConcurrency, c.PartitionConcurrency = 4, 2
			c.WorkerInterval = time.Hour // wake-ups only
		})
		adapterhooks.SetWebhookSender(e.svc, sender)
		a, err := e.svc.CreateMerchant(ctx, "test", "Noisy")
		is.NoErr(err)
		b, err := e.svc.CreateMerchant(ctx, "test", "Quiet")
		is.NoErr(err)
		_, err = e.svc.CreateWebhookEndpoint(ctx, "test", a.ID, paykit.CreateWebhookEndpointRequest{Environment: "test", URL: sender.hang})
		is.NoErr(err)
		_, err = e.svc.CreateWebhookEndpoint(ctx, "test", b.ID, paykit.CreateWebhookEndpointRequest{Environment: "test", URL: "http://127.0.0.1:1/quiet"})
		is.NoErr(err)
		noisy := paykit.Principal{Scope: paykit.Scope{MerchantID: a.ID, Environment: paykit.Test}}
		quiet := paykit.Principal{Scope: paykit.Scope{MerchantID: b.ID, Environment: paykit.Test}}
		for i := range 10 { // ten events for the endpoint that hangs, first
			_, _, err := e.svc.CreatePaymentIntent(ctx, noisy, fmt.Sprintf("a%d", i), fpx(15000, fmt.Sprintf("a%d", i)))
			is.NoErr(err)
		}
		done := make(chan error, 1)
		go func() { done <- e.svc.Run(ctx) }()
		for i := range 3 {
			_, _, err := e.svc.CreatePaymentIntent(ctx, quiet, fmt.Sprintf("b%d", i), fpx(15000, fmt.Sprintf("b%d", i)))
			is.NoErr(err)
			select {
			case url := <-sender.got:
				is.Equal(url, "http://127.0.0.1:1/quiet")
			case <-time.After(10 * time.Second):
				t.Fatalf("the quiet merchant's event %d waited behind the endpoint that hangs", i)
			}
		}
		cancel()
		is.NoErr(<-done)
	})
}

// Instances on one PostgreSQL database wake each other: a job one enqueues
// runs on another at once, though the other polls only hourly.
func TestInstancesWakeEachOther(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dsn := paykittest.MigratedDSN(t, paykittest.Postgres)
	clock := paykit.NewManualClock(time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC))
	front := newWorkerService(t, paykittest.OpenSQL(t, dsn), clock, "front")
	back := newWorkerService(t, paykittest.OpenSQL(t, dsn), clock, "back")
	paykit.SetWorkerInterval(back, time.Hour)
	ran := make(chan string, 4)
	for _, svc := range []*paykit.Service{front, back} {
		is.NoErr(svc.RegisterJobKind("host.report", func(_ context.Context, j *paykit.Job) error {
			ran <- j.ID
			return nil
		}, paykit.JobKindOptions{}))
	}
	done := make(chan error, 1)
	go func() { done <- back.Run(ctx) }()
	for range 3 {
		job := &paykit.Job{Kind: "host.report"}
		is.NoErr(front.EnqueueJob(ctx, job))
		select {
		case id := <-ran:
			is.Equal(id, job.ID)
		case <-time.After(10 * time.Second):
			t.Fatal("the other instance was not woken")
		}
	}
	cancel()
	is.NoErr(<-done)
}
