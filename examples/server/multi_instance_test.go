package main

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"sync"
	"testing"

	"github.com/matryer/is"

	"github.com/paykit/paykit/internal/pgtest"
	"github.com/paykit/paykit/store/sqlstore"
)

// Two servers on one PostgreSQL database, neither given -keys, are one
// service: they share the keys kept in the database, so a payout held by
// one is approved and dispatched by the other (its sealed account number
// opens) and a cursor signed by one pages on the other.
func TestTwoServersOnOnePostgresShareKeys(t *testing.T) {
	is := is.New(t)
	dsn := pgtest.Database(t)
	args := []string{"-db", dsn, "-addr", "127.0.0.1:0", "-approval-threshold", "1000"}
	a := startEnv(t, pgKeys, args...)
	b := startEnv(t, pgKeys, args...)

	var po struct{ ID, Status string }
	po.ID, po.Status = a.createPayout(t, "po-held")
	is.Equal(po.Status, "requires_approval")

	status, _, body := call(t, "POST", b.url+"/operator/payout_intents/"+po.ID+"/approve", "", bearerAuth(b.token))
	is.Equal(status, http.StatusOK) // b opens what a sealed
	is.NoErr(json.Unmarshal(body, &po))
	is.Equal(po.Status, "processing")

	status, _, body = call(t, "GET", a.url+"/operator/audit_events?limit=1", "", bearerAuth(a.token))
	is.Equal(status, http.StatusOK)
	var page struct {
		NextCursor string `json:"next_cursor"`
	}
	is.NoErr(json.Unmarshal(body, &page))
	is.True(page.NextCursor != "")
	status, _, _ = call(t, "GET", b.url+"/operator/audit_events?limit=1&cursor="+page.NextCursor, "", bearerAuth(b.token))
	is.Equal(status, http.StatusOK) // signed by a, accepted by b
}

// Instances starting at once on a fresh database agree on one set of keys.
func TestConcurrentFirstStartsAgreeOnKeys(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	dsn := pgtest.Database(t)
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	w, err := keyWrapper(func(k string) string { return pgKeys[k] })
	is.NoErr(err)
	const n = 6
	signing := make([][]byte, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			s, err := sqlstore.Open(ctx, dsn)
			if err != nil {
				errs[i] = err
				return
			}
			defer s.Close()
			signing[i], _, errs[i] = loadDBKeys(ctx, s.DB(), w, logger)
		})
	}
	wg.Wait()
	for i := range n {
		is.NoErr(errs[i])
		is.Equal(signing[i], signing[0])
	}
	is.Equal(len(signing[0]), 32)
	is.Equal(bytes.Count(logs.Bytes(), []byte("generated signing and account keys")), 1) // made once, said once
}
