package sqlstore

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/internal/fanout"
)

// TestScheduleDeliveries: one statement enqueues the delivery job of an
// event for each enabled endpoint of its scope, as the Service's fallback
// would, numbered in the endpoints' order, and never twice; in a batched
// transaction too.
func TestScheduleDeliveries(t *testing.T) {
	t.Parallel()
	for name, open := range map[string]func(t *testing.T) *Store{
		"postgres": func(t *testing.T) *Store { return openPostgres(t) },
		"sqlite":   func(t *testing.T) *Store { return openSQLite(t) },
	} {
		t.Run(name, func(t *testing.T) {
			is := is.New(t)
			ctx := context.Background()
			s := open(t)
			now := time.Date(2026, 6, 1, 8, 0, 0, 0, time.UTC)
			for _, w := range []paykit.WebhookEndpoint{
				{ID: "we_b", MerchantID: "mch_1", Environment: paykit.Test, Status: paykit.WebhookEnabled},
				{ID: "we_a", MerchantID: "mch_1", Environment: paykit.Test, Status: paykit.WebhookEnabled},
				{ID: "we_c", MerchantID: "mch_1", Environment: paykit.Test, Status: paykit.WebhookDisabled},
				{ID: "we_d", MerchantID: "mch_1", Environment: paykit.Live, Status: paykit.WebhookEnabled},
				{ID: "we_e", MerchantID: "mch_2", Environment: paykit.Test, Status: paykit.WebhookEnabled},
			} {
				w.URL, w.CreatedAt, w.UpdatedAt = "https://shop.example/hook", now, now
				is.NoErr(s.CreateWebhookEndpoint(ctx, &w))
			}
			e := fanout.Event{ID: "evt_1", MerchantID: "mch_1", Environment: string(paykit.Test), CreatedAt: now}
			schedule := func(baseID string) {
				is.NoErr(s.InTx(ctx, func(tx paykit.Tx) error {
					return tx.(fanout.Scheduler).ScheduleDeliveries(ctx, e, "webhook.deliver", baseID, now.Add(time.Millisecond))
				}))
			}
			schedule("job_x")
			if !s.pg { // SQLite's statement went prepared
				_, _, ok := s.prep.rawArgs(fanOutSQLite, "a")
				is.True(ok)
			}
			schedule("job_y") // pending already: nothing new
			jobs, err := s.Queue().ListJobs(ctx, paykit.ListQuery[paykit.JobListParams]{Filter: paykit.JobListParams{Kind: "webhook.deliver"}}, now)
			is.NoErr(err)
			is.Equal(len(jobs), 2)
			byID := map[string]paykit.Job{}
			for _, j := range jobs {
				byID[j.ID] = j
			}
			for id, endpoint := range map[string]string{"job_x.1": "we_a", "job_x.2": "we_b"} {
				j, ok := byID[id]
				is.True(ok)
				var p struct {
					EndpointID string `json:"endpoint_id"`
				}
				is.NoErr(json.Unmarshal(j.Payload, &p))
				is.Equal(p.EndpointID, endpoint)
				is.Equal(j.Kind, "webhook.deliver")
				is.Equal(j.Scope, paykit.Scope{MerchantID: "mch_1", Environment: paykit.Test})
				is.Equal(j.TargetID, "evt_1")
				is.Equal(j.DedupKey, "webhook.deliver:"+endpoint+":evt_1")
				is.True(j.RunAt.Equal(now))
				is.True(j.CreatedAt.Equal(now.Add(time.Millisecond)))
				is.Equal(j.Status, paykit.JobAvailable)
				is.Equal(j.Attempts, 0)
			}
		})
	}
}
