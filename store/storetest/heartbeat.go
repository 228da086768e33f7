package storetest

import (
	"context"
	"testing"

	"github.com/matryer/is"

	"github.com/paykit/paykit"
)

// testHeartbeat: Heartbeat is a repeatable write per instance, and a
// cancelled context fails it.
func testHeartbeat(t *testing.T, s paykit.Store) {
	is := is.New(t)
	ctx := context.Background()
	is.NoErr(s.Heartbeat(ctx, "wrk_1", at(0)))
	is.NoErr(s.Heartbeat(ctx, "wrk_1", at(1))) // the same instance again
	is.NoErr(s.Heartbeat(ctx, "wrk_2", at(1)))
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	is.True(s.Heartbeat(cctx, "wrk_1", at(2)) != nil)
}
