package sim

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
)

// FaultKind is one way the simulation breaks paykit's world.
type FaultKind string

// The fault kinds. Each has a "sometimes" counter: how often a run armed
// it and how often it actually fired, so that a run (or a batch of runs)
// that never exercised one says so.
const (
	// The Provider: how one call to it ends.
	FaultTimeoutBefore FaultKind = "provider.timeout_before_commit" // sent, lost on the way: the PSP never saw it, the caller hears nothing
	FaultTimeoutAfter  FaultKind = "provider.timeout_after_commit"  // the PSP did it; the answer never came
	FaultResetAfter    FaultKind = "provider.reset_after_commit"    // the PSP did it; the connection dropped before the answer
	Fault500Before     FaultKind = "provider.5xx_before_commit"     // the PSP broke before doing anything
	Fault500After      FaultKind = "provider.5xx_after_commit"      // the PSP did it, then answered 500
	Fault429           FaultKind = "provider.429"                   // the PSP throttled the call
	FaultRefused       FaultKind = "provider.refused"               // the PSP refused a create before it existed
	FaultDuplicate     FaultKind = "provider.duplicated_request"    // the call reached the PSP twice
	FaultStale         FaultKind = "provider.stale_answer"          // an inquiry answered with an earlier answer
	FaultDisputeError  FaultKind = "provider.dispute_call_error"    // a dispute call got no trustworthy answer
	FaultSettleError   FaultKind = "provider.settlement_read_error" // reading settlement batches failed

	// The PSP's callbacks.
	FaultCallbackDrop      FaultKind = "callback.never_sent"
	FaultCallbackDuplicate FaultKind = "callback.duplicated"
	FaultCallbackReorder   FaultKind = "callback.reordered"
	FaultCallbackDelay     FaultKind = "callback.delayed"

	// The merchants' webhook endpoints.
	FaultWebhookFail     FaultKind = "webhook.fails_500"
	FaultWebhookHang     FaultKind = "webhook.hangs"
	FaultWebhookGone     FaultKind = "webhook.answers_410"
	FaultWebhookThrottle FaultKind = "webhook.answers_429"

	// The Store and the processes.
	FaultStoreErrorAfterCall FaultKind = "store.error_after_provider_call"
	FaultStoreBusyAfterCall  FaultKind = "store.unavailable_after_provider_call"
	FaultCrashAfterCall      FaultKind = "crash.after_provider_call"
	FaultCrashAtTx           FaultKind = "crash.at_transaction"
	FaultCrashIdle           FaultKind = "crash.between_steps"
	FaultTwoInstances        FaultKind = "instances.two_on_one_store"
	FaultRace                FaultKind = "race.recovery_during_provider_call"
	FaultClockJump           FaultKind = "clock.jump"

	// The PSP's own outcomes, chosen by magic amounts and accounts.
	FaultPaymentDeclined FaultKind = "psp.payment_declined"
	FaultRefundDeclined  FaultKind = "psp.refund_declined"
	FaultFeeMismatch     FaultKind = "psp.settles_another_fee"
	FaultNeverSettled    FaultKind = "psp.never_settles"
	FaultAccountInvalid  FaultKind = "psp.account_invalid"
	FaultAccountDropped  FaultKind = "psp.first_payout_answer_dropped"
	FaultAccountSlow     FaultKind = "psp.slow_transfer"
)

// AllFaults lists every fault kind, in report order.
var AllFaults = []FaultKind{
	FaultTimeoutBefore, FaultTimeoutAfter, FaultResetAfter, Fault500Before, Fault500After, Fault429,
	FaultRefused, FaultDuplicate, FaultStale, FaultDisputeError, FaultSettleError,
	FaultCallbackDrop, FaultCallbackDuplicate, FaultCallbackReorder, FaultCallbackDelay,
	FaultWebhookFail, FaultWebhookHang, FaultWebhookGone, FaultWebhookThrottle,
	FaultStoreErrorAfterCall, FaultStoreBusyAfterCall, FaultCrashAfterCall, FaultCrashAtTx, FaultCrashIdle,
	FaultTwoInstances, FaultRace, FaultClockJump,
	FaultPaymentDeclined, FaultRefundDeclined, FaultFeeMismatch, FaultNeverSettled,
	FaultAccountInvalid, FaultAccountDropped, FaultAccountSlow,
}

// providerFaults are the faults one Provider call can meet.
var providerFaults = []FaultKind{
	FaultTimeoutBefore, FaultTimeoutAfter, FaultResetAfter, Fault500Before, Fault500After, Fault429,
	FaultRefused, FaultDuplicate, FaultStale, FaultStoreErrorAfterCall, FaultStoreBusyAfterCall,
}

// faultCounts counts, per kind, how often a fault fired.
type faultCounts struct {
	mu sync.Mutex
	n  map[FaultKind]int
}

func newFaultCounts() *faultCounts { return &faultCounts{n: map[FaultKind]int{}} }

func (c *faultCounts) fired(k FaultKind) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n[k]++
}

func (c *faultCounts) snapshot() map[FaultKind]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[FaultKind]int, len(c.n))
	for k, v := range c.n {
		out[k] = v
	}
	return out
}

// FaultReport formats the counts of many runs: each kind with how many
// times it fired and in how many runs, and those that never fired.
func FaultReport(fired map[FaultKind]int, runs map[FaultKind]int) string {
	var b strings.Builder
	var never []string
	for _, k := range AllFaults {
		if fired[k] == 0 {
			never = append(never, string(k))
			continue
		}
		fmt.Fprintf(&b, "  %-40s %7d fired in %5d runs\n", k, fired[k], runs[k])
	}
	var extra []string
	for k := range fired {
		if !slices.Contains(AllFaults, k) {
			extra = append(extra, string(k))
		}
	}
	sort.Strings(extra)
	for _, k := range extra {
		fmt.Fprintf(&b, "  %-40s %7d fired in %5d runs\n", k, fired[FaultKind(k)], runs[FaultKind(k)])
	}
	if len(never) > 0 {
		fmt.Fprintf(&b, "  never fired: %s\n", strings.Join(never, ", "))
	}
	return b.String()
}

// armedFault is a Provider fault waiting for the call it breaks.
type armedFault struct {
	kind FaultKind
}

// callKind is which Provider call a fault may break.
type callKind int

const (
	callCreatePayment callKind = iota
	callInquirePayment
	callCancelPayment
	callCreatePayout
	callInquirePayout
	callCancelPayout
	callCreateRefund
	callInquireRefund
	callDispute
	callSettlement
	callOther
)

// creates reports whether k creates an attempt.
func (k callKind) creates() bool {
	return k == callCreatePayment || k == callCreatePayout || k == callCreateRefund
}

// inquires reports whether k asks about an attempt.
func (k callKind) inquires() bool {
	return k == callInquirePayment || k == callInquirePayout || k == callInquireRefund
}

// applies reports whether a fault of kind f can break a call of kind k.
func (f FaultKind) applies(k callKind) bool {
	switch k {
	case callDispute:
		return f == FaultDisputeError
	case callSettlement:
		return f == FaultSettleError
	case callOther:
		return false
	}
	switch f {
	case FaultRefused:
		return k.creates()
	case FaultStale:
		return k.inquires()
	case FaultDisputeError, FaultSettleError:
		return false
	}
	return true
}
