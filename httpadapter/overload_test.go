package httpadapter_test

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/paykittest"
	"github.com/paykit/paykit/store/sqlstore"
)

// TestOverloadAnswers503 sends 300 concurrent payment creates to a server
// whose PostgreSQL pool has 5 connections and a short wait: every answer is
// 201 or 503 service_unavailable with Retry-After, never 500; every 201 is
// readable; and retrying the 503s with their Idempotency-Key (after the
// in-progress locks lapse) ends with exactly one payment per request.
func TestOverloadAnswers503(t *testing.T) {
	is := is.New(t)
	open := func(t *testing.T) paykit.Store {
		ctx := context.Background()
		s, err := sqlstore.OpenWith(ctx, paykittest.PostgresDSN(t), sqlstore.Options{MaxConns: 5, ConnWait: 250 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		if err := s.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		return s
	}
	e := newSandboxEnv(t, open)
	k := e.merchant(paykit.Test)

	const n = 300
	type answer struct {
		key string
		r   response
	}
	answers := make([]answer, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			key := fmt.Sprintf("load-%d", i)
			r, err := e.send("POST", "/v1/payment_intents", fpxBody("15000", key), basic(k), idem(key))
			if err != nil {
				t.Error(err)
			}
			answers[i] = answer{key, r}
		})
	}
	began := time.Now()
	close(start)
	wg.Wait()
	elapsed := time.Since(began)

	created := map[string]string{} // key -> payment id
	var unavailable []string
	for _, a := range answers {
		switch a.r.status {
		case http.StatusCreated:
			created[a.key] = a.r.json(t)["id"].(string)
		case http.StatusServiceUnavailable:
			is.Equal(a.r.errorOf(t)["code"], "service_unavailable")
			is.True(a.r.header.Get("Retry-After") != "")
			unavailable = append(unavailable, a.key)
		default:
			t.Fatalf("%s answered %d: %s", a.key, a.r.status, a.r.body)
		}
	}
	t.Logf("%d concurrent creates on a pool of 5 in %s: %d created, %d service_unavailable", n, elapsed.Round(time.Millisecond), len(created), len(unavailable))
	is.True(len(created) > 0)
	for key, id := range created {
		r := e.do("GET", "/v1/payment_intents/"+id, nil, basic(k))
		is.Equal(r.status, http.StatusOK)
		is.Equal(r.json(t)["merchant_reference"], key)
	}

	// A 503 wrote nothing half: the same key finishes the one request. At
	// once, unless the store was too busy even to unlock the key (then 409
	// idempotency_in_progress until the lock lapses).
	var locked []string
	for _, key := range unavailable {
		r := e.do("POST", "/v1/payment_intents", fpxBody("15000", key), basic(k), idem(key))
		switch r.status {
		case http.StatusCreated:
			created[key] = r.json(t)["id"].(string)
		case http.StatusConflict:
			is.Equal(r.errorOf(t)["code"], "idempotency_in_progress")
			locked = append(locked, key)
		default:
			t.Fatalf("retry of %s answered %d: %s", key, r.status, r.body)
		}
	}
	t.Logf("retried at once: %d created, %d still locked", len(unavailable)-len(locked), len(locked))
	e.clock.Advance(time.Minute) // past the in-progress locks
	for _, key := range locked {
		r := e.do("POST", "/v1/payment_intents", fpxBody("15000", key), basic(k), idem(key))
		is.Equal(r.status, http.StatusCreated)
		created[key] = r.json(t)["id"].(string)
	}
	is.Equal(len(created), n)
	ids := map[string]bool{}
	for _, id := range created {
		ids[id] = true
	}
	is.Equal(len(ids), n) // one payment per request, none twice
	list := e.do("GET", "/v1/payment_intents?limit=100", nil, basic(k))
	is.Equal(list.status, http.StatusOK)
	is.Equal(list.json(t)["has_more"], true)
}
