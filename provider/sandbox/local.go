package sandbox

import (
	"context"
	"fmt"
	"syscall"
	"time"
)

// localConn calls a PSP in this process (Config.PSP): the PSP's answer
// as a Go value, with each way a call can end read as over HTTP.
type localConn struct {
	psp     *PSP
	apiKey  string
	timeout time.Duration
}

func (c *localConn) call(ctx context.Context, deadline time.Time, rt route, key string, body any) (rp reply) {
	if err := ctx.Err(); err != nil {
		return transportFailure(ctx, err, false, c.timeout) // not sent
	}
	if !time.Now().Before(deadline) {
		return transportFailure(ctx, context.DeadlineExceeded, false, c.timeout)
	}
	if !c.psp.authorized(c.apiKey) {
		return reply{status: errUnauthorized.status, value: errUnauthorized.body}
	}
	// A PSP whose state is in memory never waits while it works: ctx
	// needs the deadline only for a held answer, and a timer context is
	// made only then. One on SQLite waits for its database within it.
	_, instant := c.psp.st.(*memState)
	if !instant {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, deadline)
		defer cancel()
	}
	defer func() {
		if recover() != nil {
			// A server closes the connection of a handler that panics.
			rp = transportFailure(ctx, syscall.ECONNRESET, true, c.timeout)
		}
	}()
	a := c.psp.call(ctx, rt, apiCall{key: key, body: func(v any) error { return assign(v, body) }})
	if a.hold {
		if instant {
			var cancel context.CancelFunc
			ctx, cancel = context.WithDeadline(ctx, deadline)
			defer cancel()
		}
		a, _ = c.psp.held(ctx) // unanswered: ctx ended, as checked below
	}
	if a.drop {
		return transportFailure(ctx, syscall.ECONNRESET, true, c.timeout)
	}
	if err := ctx.Err(); err != nil {
		// The caller gave up while the PSP worked: over HTTP no answer
		// would have reached it either.
		return transportFailure(ctx, err, true, c.timeout)
	}
	if !time.Now().Before(deadline) {
		// The deadline passed while the PSP worked, unseen by ctx.
		return timedOut(c.timeout)
	}
	return reply{status: a.status, value: a.body}
}

// assign copies src, the adapter's request body, into dst, the PSP's
// request of the same type.
func assign(dst, src any) error {
	if assignAs[paymentCreate](dst, src) || assignAs[payoutCreate](dst, src) || assignAs[refundCreate](dst, src) ||
		assignAs[disputeCreate](dst, src) || assignAs[evidenceSubmit](dst, src) || assignAs[settlementQuery](dst, src) {
		return nil
	}
	return fmt.Errorf("a %T body for a %T request", src, dst)
}

func assignAs[T any](dst, src any) bool {
	d, ok := dst.(*T)
	s, ok2 := src.(T)
	if ok && ok2 {
		*d = s
	}
	return ok && ok2
}
