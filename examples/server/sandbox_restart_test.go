package main

import (
	"context"
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/paykit/paykit/store/sqlstore"
)

// A payout in flight when the server stops is finished by the next server
// on the same database: its sandbox PSP knows the transfer the first one's
// PSP accepted, settles it, and tells paykit, so the payout succeeds
// without a second dispatch.
func TestPayoutInFlightSurvivesRestart(t *testing.T) {
	is := is.New(t)
	path := filepath.Join(t.TempDir(), "paykit.db")
	args := []string{"-db", "sqlite:" + path, "-addr", "127.0.0.1:0", "-worker-interval", "50ms", "-sandbox-delay", "2s"}

	first := start(t, args...)
	var po struct{ ID, Status string }
	po.ID, po.Status = first.createPayout(t, "po-restart")
	is.Equal(po.Status, "processing") // in flight at the PSP for 2 s
	is.NoErr(first.stop())

	second := start(t, args...)
	deadline := time.Now().Add(15 * time.Second)
	for po.Status != "succeeded" {
		if time.Now().After(deadline) {
			t.Fatalf("payout is %s after the restart; log:\n%s", po.Status, second.stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
		status, _, body := call(t, "GET", second.url+"/v1/payout_intents/"+po.ID, "", basicAuth(second.public, second.secret))
		is.Equal(status, http.StatusOK)
		is.NoErr(json.Unmarshal(body, &po))
	}
	is.True(!strings.Contains(second.stderr.String(), "outcome=not_found")) // the PSP never forgot the transfer
	is.NoErr(second.stop())

	// One transfer, dispatched once, settled by the second server's PSP.
	ctx := context.Background()
	db, err := sqlstore.Open(ctx, sandboxDB("sqlite:"+path)) // the PSP's own file beside paykit's
	is.NoErr(err)
	defer db.Close()
	var transfers, creates int
	var state string
	is.NoErr(db.DB().QueryRowContext(ctx, "SELECT count(*), max(state) FROM sandbox_transfers").Scan(&transfers, &state))
	is.NoErr(db.DB().QueryRowContext(ctx, "SELECT sum(calls) FROM sandbox_create_calls").Scan(&creates))
	is.Equal(transfers, 1)
	is.Equal(state, "SUCCESS")
	is.Equal(creates, 1)
}
