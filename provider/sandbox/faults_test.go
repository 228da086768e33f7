package sandbox_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/provider/sandbox"
)

// faultCases break a create before or after the PSP recorded it.
var faultCases = []struct {
	name   string
	kind   sandbox.FaultKind
	after  bool
	want   paykit.Outcome
	detail string // prefix of Result.Detail
}{
	{"timeout before record", sandbox.FaultTimeout, false, paykit.OutcomeUnknown, "sent, no answer within"},
	{"timeout after record", sandbox.FaultTimeout, true, paykit.OutcomeUnknown, "sent, no answer within"},
	{"reset before record", sandbox.FaultReset, false, paykit.OutcomeUnacknowledged, "sent, connection ended"},
	{"reset after record", sandbox.FaultReset, true, paykit.OutcomeUnacknowledged, "sent, connection ended"},
	{"500 before record", sandbox.FaultStatus500, false, paykit.OutcomeUnacknowledged, "http 500 ERR_INTERNAL"},
	{"500 after record", sandbox.FaultStatus500, true, paykit.OutcomeUnacknowledged, "http 500 ERR_INTERNAL"},
}

func TestCreatePaymentFaults(t *testing.T) {
	ctx := context.Background()
	for _, tc := range faultCases {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			e := newEnv(t)
			// A first call warms a keep-alive connection, so the faults hit
			// a reused one (where the HTTP client would otherwise replay).
			e.prov.InquirePayment(ctx, paykit.AttemptRef{Key: "warm-up"})
			e.psp.InjectFault(sandbox.Fault{Op: sandbox.OpCreatePayment, Kind: tc.kind, AfterRecord: tc.after})
			req := e.payment("pi_f", "TNG", "MY", 1000)
			r := e.prov.CreatePayment(ctx, req)
			is.Equal(r.Outcome, tc.want)
			is.True(strings.HasPrefix(r.Detail, tc.detail))
			is.Equal(e.psp.CreateCalls("pi_f"), 1)

			inq := e.prov.InquirePayment(ctx, paykit.AttemptRef{Key: "pi_f"})
			if tc.after {
				is.Equal(inq.Outcome, paykit.OutcomeRequiresAction) // the attempt exists
				is.Equal(e.psp.PaymentCount(), 1)
			} else {
				is.Equal(inq.Outcome, paykit.OutcomeNotFound) // the PSP never recorded it
				is.Equal(e.psp.PaymentCount(), 0)
			}
			// The fault is spent: a retry under the key gets the one attempt.
			retry := e.prov.CreatePayment(ctx, req)
			is.Equal(retry.Outcome, paykit.OutcomeRequiresAction)
			if tc.after {
				is.Equal(retry.Reference, inq.Reference)
			}
			is.Equal(e.psp.CreateCalls("pi_f"), 2)
			is.Equal(e.psp.PaymentCount(), 1)
		})
	}
}

func TestCreatePayoutFaults(t *testing.T) {
	ctx := context.Background()
	for _, tc := range faultCases {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			e := newEnv(t)
			e.prov.InquirePayout(ctx, paykit.AttemptRef{Key: "warm-up"})
			e.psp.InjectFault(sandbox.Fault{Op: sandbox.OpCreatePayout, Kind: tc.kind, AfterRecord: tc.after})
			req := payout("po_f", "123456789012")
			r := e.prov.CreatePayout(ctx, req)
			is.Equal(r.Outcome, tc.want)
			is.True(strings.HasPrefix(r.Detail, tc.detail))

			inq := e.prov.InquirePayout(ctx, paykit.AttemptRef{Key: "po_f"})
			if tc.after {
				is.Equal(inq.Outcome, paykit.OutcomePending)
				is.Equal(len(e.psp.Transfers()), 1)
			} else {
				is.Equal(inq.Outcome, paykit.OutcomeNotFound) // safe to send again
				is.Equal(len(e.psp.Transfers()), 0)
			}
			is.Equal(e.prov.CreatePayout(ctx, req).Outcome, paykit.OutcomePending)
			is.Equal(len(e.psp.Transfers()), 1)
			is.Equal(e.psp.CreateCalls("po_f"), 2)
		})
	}
}

func TestFaultsOfOtherOperations(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	e := newEnv(t)
	e.prov.CreatePayment(ctx, e.payment("pi_o", "TNG", "MY", 1000))
	e.prov.CreatePayout(ctx, payout("po_o", "123456789012"))

	// Times: the fault hits that many requests, then it is spent.
	e.psp.InjectFault(sandbox.Fault{Op: sandbox.OpInquirePayment, Kind: sandbox.FaultStatus500, Times: 2})
	is.Equal(e.prov.InquirePayment(ctx, paykit.AttemptRef{Key: "pi_o"}).Outcome, paykit.OutcomeUnacknowledged)
	is.Equal(e.prov.InquirePayment(ctx, paykit.AttemptRef{Key: "pi_o"}).Outcome, paykit.OutcomeUnacknowledged)
	is.Equal(e.prov.InquirePayment(ctx, paykit.AttemptRef{Key: "pi_o"}).Outcome, paykit.OutcomeRequiresAction)

	// A cancel whose answer is lost is still done.
	e.psp.InjectFault(sandbox.Fault{Op: sandbox.OpCancelPayment, Kind: sandbox.FaultTimeout, AfterRecord: true})
	is.Equal(e.prov.CancelPayment(ctx, paykit.AttemptRef{Key: "pi_o"}).Outcome, paykit.OutcomeUnknown)
	is.Equal(e.prov.InquirePayment(ctx, paykit.AttemptRef{Key: "pi_o"}).Outcome, paykit.OutcomeCancelled)

	// One dropped before it arrived is not.
	e.psp.InjectFault(sandbox.Fault{Op: sandbox.OpCancelPayout, Kind: sandbox.FaultReset})
	is.Equal(e.prov.CancelPayout(ctx, paykit.AttemptRef{Key: "po_o"}).Outcome, paykit.OutcomeUnacknowledged)
	r := e.prov.InquirePayout(ctx, paykit.AttemptRef{Key: "po_o"})
	is.Equal(r.Detail, "state=PROCESSING") // no cancel_requested
	is.True(!e.psp.Transfers()[0].CancelRequested)

	e.psp.InjectFault(sandbox.Fault{Op: sandbox.OpInquirePayout, Kind: sandbox.FaultTimeout})
	is.Equal(e.prov.InquirePayout(ctx, paykit.AttemptRef{Key: "po_o"}).Outcome, paykit.OutcomeUnknown)
	is.Equal(e.prov.InquirePayout(ctx, paykit.AttemptRef{Key: "po_o"}).Outcome, paykit.OutcomePending)
}

// A timeout of the host's own HTTP client after the request left is as
// uncertain as the adapter's.
func TestHostClientTimeoutIsUnknown(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	e := newEnv(t)
	prov := sandbox.New(sandbox.Config{BaseURL: e.base, APIKey: testAPIKey, Client: &http.Client{Timeout: 200 * time.Millisecond}})
	r := prov.CreatePayout(ctx, payout("po_host", "000222222227"))
	is.Equal(r.Outcome, paykit.OutcomeUnknown)
	is.True(strings.HasPrefix(r.Detail, "sent, "))
	is.Equal(prov.InquirePayout(ctx, paykit.AttemptRef{Key: "po_host"}).Outcome, paykit.OutcomePending)
}
