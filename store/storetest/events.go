package storetest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/internal/fanout"
)

// event makes an event whose resource is a payout as it was then.
func event(scope paykit.Scope, id, typ string, created time.Time) *paykit.Event {
	return &paykit.Event{ID: id, MerchantID: scope.MerchantID, Environment: scope.Environment, Type: typ,
		ObjectID: "po_" + id, Resource: &paykit.PayoutIntent{ID: "po_" + id, MerchantID: scope.MerchantID,
			Environment: scope.Environment, Status: paykit.PayoutSucceeded, Amount: 120_000, Currency: "THB",
			HolderName: "Somchai", HolderNameTH: "สมชาย ใจดี", CancelReason: "duplicate", CreatedAt: created, UpdatedAt: created},
		CreatedAt: created}
}

func eventIDs(rows []paykit.Event) []string {
	return ids(rows, func(e paykit.Event) string { return e.ID })
}

func testEvents(t *testing.T, s paykit.Store) {
	is := is.New(t)
	ctx := context.Background()
	for id, scope := range map[string]paykit.Scope{"evt_a": scopeA, "evt_a_live": scopeALive, "evt_b": scopeB} {
		is.NoErr(s.CreateEvent(ctx, event(scope, id, paykit.EventCheckoutExpired, at(-time.Hour))))
	}
	checkTenantIsolation(t, "evt",
		func(scope paykit.Scope, id string) error { _, err := s.GetEvent(ctx, scope, id); return err },
		func(scope paykit.Scope) ([]string, error) {
			rows, err := s.ListEvents(ctx, paykit.ListQuery[paykit.EventListParams]{Scope: scope})
			return eventIDs(rows), err
		})

	e1 := event(scopeA, "evt_1", paykit.EventPayoutProcessing, at(0))
	e2 := event(scopeA, "evt_2", paykit.EventPayoutSucceeded, at(time.Second))
	e3 := event(scopeA, "evt_3", paykit.EventPaymentSucceeded, at(2*time.Second))
	for _, e := range []*paykit.Event{e1, e2, e3, event(scopeB, "evt_b2", paykit.EventPayoutSucceeded, at(time.Second)),
		event(scopeALive, "evt_live", paykit.EventPayoutSucceeded, at(time.Second))} {
		is.NoErr(s.CreateEvent(ctx, e))
	}
	err := s.CreateEvent(ctx, event(scopeA, "evt_1", paykit.EventPayoutFailed, at(0)))
	is.True(errors.Is(err, paykit.ErrAlreadyExists))
	is.Equal(conflictKey(err), "id")

	// The caller's event and resource are its own again once CreateEvent
	// returns: a change to them changes nothing stored.
	po := e2.Resource.(*paykit.PayoutIntent)
	stored := *po
	po.Status, po.HolderName = paykit.PayoutFailed, "changed"
	got, err := s.GetEvent(ctx, scopeA, "evt_2")
	is.NoErr(err)
	gotPO, ok := got.Resource.(*paykit.PayoutIntent)
	is.True(ok)
	is.Equal(*gotPO, stored) // the resource as it was, exactly
	is.True(gotPO != po)     // a copy, not the caller's value
	got.Resource, e2.Resource = nil, nil
	is.Equal(*got, *e2)
	is.Equal(got.CreatedAt.Location(), time.UTC)

	all, err := s.ListEvents(ctx, paykit.ListQuery[paykit.EventListParams]{Scope: scopeA})
	is.NoErr(err)
	is.Equal(eventIDs(all), []string{"evt_3", "evt_2", "evt_1", "evt_a"})
	typed, err := s.ListEvents(ctx, paykit.ListQuery[paykit.EventListParams]{Scope: scopeA, Filter: paykit.EventListParams{Types: []string{paykit.EventPayoutSucceeded, paykit.EventPayoutProcessing}}})
	is.NoErr(err)
	is.Equal(eventIDs(typed), []string{"evt_2", "evt_1"})
	ranged, err := s.ListEvents(ctx, paykit.ListQuery[paykit.EventListParams]{Scope: scopeA, Filter: paykit.EventListParams{CreatedAfter: ptr(at(time.Second)), CreatedBefore: ptr(at(2 * time.Second))}})
	is.NoErr(err)
	is.Equal(eventIDs(ranged), []string{"evt_2"})

	// Keyset pages over events sharing a timestamp.
	for i := range 7 {
		is.NoErr(s.CreateEvent(ctx, event(scopeB, fmt.Sprintf("evt_p%d", i), paykit.EventPaymentFailed, at(time.Duration(i/3)*time.Millisecond))))
	}
	paged := walkPages(t, 3, func(after *paykit.Position, limit int) ([]paykit.Event, error) {
		return s.ListEvents(ctx, paykit.ListQuery[paykit.EventListParams]{Scope: scopeB, Filter: paykit.EventListParams{Types: []string{paykit.EventPaymentFailed}}, After: after, Limit: limit})
	}, func(e paykit.Event) paykit.Position { return paykit.Position{CreatedAt: e.CreatedAt, ID: e.ID} })
	is.Equal(paged, []string{"evt_p6", "evt_p5", "evt_p4", "evt_p3", "evt_p2", "evt_p1", "evt_p0"})
}

func endpoint(scope paykit.Scope, id string, created time.Time) *paykit.WebhookEndpoint {
	return &paykit.WebhookEndpoint{ID: id, MerchantID: scope.MerchantID, Environment: scope.Environment,
		URL: "https://hooks.example.com/" + id, Status: paykit.WebhookEnabled, EnabledEvents: []string{paykit.AllEvents},
		Secrets:   []paykit.WebhookSecret{{KeyID: "k1", Sealed: []byte{0x00, 0xff, 'a'}, CreatedAt: created}},
		CreatedAt: created, UpdatedAt: created}
}

func testWebhookEndpoints(t *testing.T, s paykit.Store) {
	is := is.New(t)
	ctx := context.Background()
	w1 := endpoint(scopeA, "we_1", at(0))
	w2 := endpoint(scopeALive, "we_2", at(time.Second))
	is.NoErr(s.CreateWebhookEndpoint(ctx, w1))
	is.NoErr(s.CreateWebhookEndpoint(ctx, w2))
	is.NoErr(s.CreateWebhookEndpoint(ctx, endpoint(scopeB, "we_b", at(0))))
	err := s.CreateWebhookEndpoint(ctx, endpoint(scopeB, "we_1", at(0)))
	is.True(errors.Is(err, paykit.ErrAlreadyExists))

	got, err := s.GetWebhookEndpoint(ctx, "we_1")
	is.NoErr(err)
	is.Equal(*got, *w1)
	_, err = s.GetWebhookEndpoint(ctx, "we_missing")
	is.True(errors.Is(err, paykit.ErrNotFound))

	list, err := s.ListWebhookEndpoints(ctx, "mch_a")
	is.NoErr(err)
	is.Equal(ids(list, func(w paykit.WebhookEndpoint) string { return w.ID }), []string{"we_2", "we_1"})

	// Rotation: two secrets, the older with an expiry; versioned updates.
	stale := *got
	got.Secrets = append([]paykit.WebhookSecret{{KeyID: "k2", Sealed: []byte("new"), CreatedAt: at(time.Hour)}}, got.Secrets...)
	got.Secrets[1].ExpiresAt = ptr(at(25 * time.Hour))
	got.Status, got.DisabledReason, got.UpdatedAt = paykit.WebhookDisabled, paykit.DisabledFailing, at(time.Hour)
	is.NoErr(s.UpdateWebhookEndpoint(ctx, got))
	is.Equal(got.Version, int64(1))
	again, err := s.GetWebhookEndpoint(ctx, "we_1")
	is.NoErr(err)
	is.Equal(*again, *got)
	is.True(errors.Is(s.UpdateWebhookEndpoint(ctx, &stale), paykit.ErrVersionConflict))
	missing := endpoint(scopeA, "we_missing", at(0))
	is.True(errors.Is(s.UpdateWebhookEndpoint(ctx, missing), paykit.ErrNotFound))
}

// testWebhookEndpointMerchantFields: the fields a merchant manages, and a
// deletion, round-trip.
func testWebhookEndpointMerchantFields(t *testing.T, s paykit.Store) {
	is := is.New(t)
	ctx := context.Background()
	w := endpoint(scopeA, "we_m", at(0))
	w.EnabledEvents, w.Description = []string{paykit.EventPaymentSucceeded, paykit.EventRefundFailed}, "orders – ไทย"
	is.NoErr(s.CreateWebhookEndpoint(ctx, w))
	got, err := s.GetWebhookEndpoint(ctx, "we_m")
	is.NoErr(err)
	is.Equal(*got, *w)
	got.EnabledEvents, got.Description = []string{paykit.AllEvents}, ""
	got.Status, got.DisabledReason, got.DeletedAt = paykit.WebhookDisabled, paykit.DisabledDeleted, ptr(at(time.Hour))
	is.NoErr(s.UpdateWebhookEndpoint(ctx, got))
	again, err := s.GetWebhookEndpoint(ctx, "we_m")
	is.NoErr(err)
	is.Equal(*again, *got)
	is.Equal(again.DeletedAt.Location(), time.UTC)
}

// testDeliveryFanOut: a Store that schedules deliveries itself
// (fanout.Scheduler) schedules one only to the enabled endpoints
// of the event's scope that enable its type.
func testDeliveryFanOut(t *testing.T, s paykit.Store) {
	is := is.New(t)
	ctx := context.Background()
	all := endpoint(scopeA, "we_all", at(0))
	paid := endpoint(scopeA, "we_paid", at(0))
	paid.EnabledEvents = []string{paykit.EventPaymentSucceeded, paykit.EventPaymentFailed}
	refunds := endpoint(scopeA, "we_refunds", at(0))
	refunds.EnabledEvents = []string{paykit.EventRefundSucceeded}
	off := endpoint(scopeA, "we_off", at(0))
	off.Status, off.DisabledReason, off.DeletedAt = paykit.WebhookDisabled, paykit.DisabledDeleted, ptr(at(0))
	other := endpoint(scopeB, "we_other", at(0))
	for _, w := range []*paykit.WebhookEndpoint{all, paid, refunds, off, other} {
		is.NoErr(s.CreateWebhookEndpoint(ctx, w))
	}
	e := &paykit.Event{ID: "evt_fan", MerchantID: scopeA.MerchantID, Environment: scopeA.Environment,
		Type: paykit.EventPaymentSucceeded, ObjectID: "pi_1", CreatedAt: at(time.Minute),
		Resource: &paykit.PaymentIntent{ID: "pi_1", MerchantID: scopeA.MerchantID, Environment: scopeA.Environment}}
	scheduled := false
	is.NoErr(s.InTx(ctx, func(tx paykit.Tx) error {
		if err := tx.CreateEvent(ctx, e); err != nil {
			return err
		}
		d, ok := tx.(fanout.Scheduler)
		if !ok {
			return nil
		}
		scheduled = true
		fe := fanout.Event{ID: e.ID, Type: e.Type, MerchantID: e.MerchantID, Environment: string(e.Environment), CreatedAt: e.CreatedAt,
			TraceParent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}
		return d.ScheduleDeliveries(ctx, fe, "webhook.deliver", "job_fan", at(time.Minute))
	}))
	if !scheduled {
		t.Skip("the Store has no fanout.Scheduler: the Service filters")
	}
	var got []string
	for _, id := range []string{"job_fan.1", "job_fan.2", "job_fan.3"} {
		j, err := s.GetJob(ctx, id)
		if errors.Is(err, paykit.ErrNotFound) {
			continue
		}
		is.NoErr(err)
		got = append(got, j.Partition)
		is.Equal(j.TraceParent, "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	}
	is.Equal(got, []string{"we_all", "we_paid"}) // in endpoint id order
}

// testWebhookEndpointPause: an endpoint's pause is stored and counted,
// and the deliveries that wait on it are deferred to its end and resumed
// early.
func testWebhookEndpointPause(t *testing.T, s paykit.Store) {
	is := is.New(t)
	ctx := context.Background()
	now := at(time.Hour)
	until := now.Add(4 * time.Minute)
	paused := endpoint(scopeA, "we_paused", at(0))
	lapsed := endpoint(scopeA, "we_lapsed", at(0))
	active := endpoint(scopeB, "we_active", at(0))
	for _, w := range []*paykit.WebhookEndpoint{paused, lapsed, active} {
		is.NoErr(s.CreateWebhookEndpoint(ctx, w))
	}
	n, err := s.CountPausedWebhookEndpoints(ctx, now)
	is.NoErr(err)
	is.Equal(n, 0)
	paused.Failures, paused.PausedUntil, paused.PauseReason = 4, ptr(until), "4 deliveries in a row failed; the last: answered 500"
	lapsed.Failures, lapsed.PausedUntil, lapsed.PauseReason = 3, ptr(now), "3 deliveries in a row failed; the last: timeout"
	is.NoErr(s.UpdateWebhookEndpoint(ctx, paused))
	is.NoErr(s.UpdateWebhookEndpoint(ctx, lapsed))
	got, err := s.GetWebhookEndpoint(ctx, "we_paused")
	is.NoErr(err)
	is.Equal(*got, *paused)
	is.Equal(got.PausedUntil.Location(), time.UTC)
	for _, c := range []struct {
		at   time.Time
		want int
	}{{now.Add(-time.Second), 2}, {now, 1}, {until.Add(-time.Millisecond), 1}, {until, 0}} {
		n, err := s.CountPausedWebhookEndpoints(ctx, c.at)
		is.NoErr(err)
		is.Equal(n, c.want)
	}

	delivery := func(id, partition string, runAt time.Time) *paykit.Job {
		return &paykit.Job{ID: id, Kind: "webhook.deliver", Scope: scopeA, TargetID: "evt_" + id, RunAt: runAt, CreatedAt: at(0),
			Partition: partition}
	}
	// A completed delivery is left alone.
	is.NoErr(s.EnqueueJob(ctx, delivery("job_done", "we_paused", now.Add(-2*time.Minute))))
	done, err := s.Queue().ClaimJobs(ctx, paykit.ClaimParams{Owner: "w0", Now: now, LeaseUntil: now.Add(time.Minute), Limit: 10})
	is.NoErr(err)
	is.Equal(jobIDs(done), []string{"job_done"})
	is.NoErr(completeJob(ctx, s, "job_done", "w0", now))
	for _, j := range []*paykit.Job{
		delivery("job_due", "we_paused", now.Add(-time.Minute)),
		delivery("job_soon", "we_paused", now.Add(time.Minute)),
		delivery("job_retry", "we_paused", until.Add(25*time.Minute)), // its own schedule, after the pause
		delivery("job_other", "we_active", now.Add(-time.Minute)),
	} {
		is.NoErr(s.EnqueueJob(ctx, j))
	}
	runAts := func() map[string]time.Time {
		out := map[string]time.Time{}
		for _, id := range []string{"job_due", "job_soon", "job_retry", "job_other", "job_done"} {
			j, err := s.GetJob(ctx, id)
			is.NoErr(err)
			out[id] = j.RunAt
		}
		return out
	}
	is.NoErr(s.DeferJobs(ctx, "we_paused", until))
	is.Equal(runAts(), map[string]time.Time{"job_due": until, "job_soon": until, "job_retry": until.Add(25 * time.Minute),
		"job_other": now.Add(-time.Minute), "job_done": now.Add(-2 * time.Minute)})
	resumed := now.Add(time.Second)
	is.NoErr(s.ResumeJobs(ctx, "we_paused", until, resumed))
	is.Equal(runAts(), map[string]time.Time{"job_due": resumed, "job_soon": resumed, "job_retry": until.Add(25 * time.Minute),
		"job_other": now.Add(-time.Minute), "job_done": now.Add(-2 * time.Minute)})
	claimed, err := s.Queue().ClaimJobs(ctx, paykit.ClaimParams{Owner: "w1", Now: resumed, LeaseUntil: resumed.Add(time.Minute), Limit: 10})
	is.NoErr(err)
	is.Equal(jobIDs(claimed), []string{"job_other", "job_due", "job_soon"}) // oldest RunAt first
}

func testWebhookAttempts(t *testing.T, s paykit.Store) {
	is := is.New(t)
	ctx := context.Background()
	mk := func(id, endpoint, event string, n int, created time.Time) *paykit.WebhookAttempt {
		return &paykit.WebhookAttempt{ID: id, EndpointID: endpoint, EventID: event, MerchantID: "mch_a", Environment: paykit.Test,
			Number: n, StatusCode: 503, Latency: 1234 * time.Millisecond, Response: "busy – try later", Error: "",
			CreatedAt: created}
	}
	a1 := mk("wha_1", "we_1", "evt_1", 1, at(0))
	a2 := mk("wha_2", "we_1", "evt_1", 2, at(5*time.Second))
	a2.StatusCode, a2.Succeeded, a2.Response = 200, true, ""
	a3 := mk("wha_3", "we_1", "evt_2", 1, at(6*time.Second))
	a3.StatusCode, a3.Error = 0, "timeout"
	for _, a := range []*paykit.WebhookAttempt{a1, a2, a3, mk("wha_x", "we_2", "evt_1", 1, at(0))} {
		is.NoErr(s.CreateWebhookAttempt(ctx, a))
	}
	all, err := s.ListWebhookAttempts(ctx, paykit.WebhookAttemptQuery{EndpointID: "we_1"})
	is.NoErr(err)
	is.Equal(len(all), 3)
	is.Equal(all[0], *a3)
	is.Equal(all[1], *a2)
	is.Equal(all[2], *a1)
	one, err := s.ListWebhookAttempts(ctx, paykit.WebhookAttemptQuery{EndpointID: "we_1", EventID: "evt_1", Limit: 1})
	is.NoErr(err)
	is.Equal(ids(one, func(a paykit.WebhookAttempt) string { return a.ID }), []string{"wha_2"})
	next, err := s.ListWebhookAttempts(ctx, paykit.WebhookAttemptQuery{EndpointID: "we_1", EventID: "evt_1",
		After: &paykit.Position{CreatedAt: one[0].CreatedAt, ID: one[0].ID}})
	is.NoErr(err)
	is.Equal(ids(next, func(a paykit.WebhookAttempt) string { return a.ID }), []string{"wha_1"})
}
