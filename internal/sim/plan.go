package sim

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"
)

// OpKind is what one step of a plan does.
type OpKind string

// The steps of a plan. A merchant's requests go to one of the running
// instances; the payer, the operator and the PSP act on their own.
const (
	OpMerchant       OpKind = "merchant"        // a merchant, funded by an operator's adjustment
	OpEndpoint       OpKind = "endpoint"        // a webhook endpoint answering as Fault says
	OpEndpointMode   OpKind = "endpoint_mode"   // an endpoint starts answering as Fault says ("" heals it)
	OpPayment        OpKind = "payment"         // a payment intent
	OpPayer          OpKind = "payer"           // the payer approves (A=1) or declines at the PSP
	OpCancelPayment  OpKind = "cancel_payment"  // the merchant cancels a payment
	OpCheckout       OpKind = "checkout"        // a hosted checkout (A=1: its method frozen)
	OpPayCheckout    OpKind = "pay_checkout"    // the payer picks a method in a checkout
	OpCancelCheckout OpKind = "cancel_checkout" // the merchant cancels a checkout
	OpRefund         OpKind = "refund"          // a refund (Amount 0: all that is left)
	OpPayout         OpKind = "payout"          // a payout (A: the recipient account's kind)
	OpApprove        OpKind = "approve"         // an operator approves a held payout
	OpReject         OpKind = "reject"          // an operator rejects a held payout
	OpCancelPayout   OpKind = "cancel_payout"   // the merchant cancels a payout
	OpReturn         OpKind = "return"          // the recipient's bank returns a paid-out payout
	OpDispute        OpKind = "dispute"         // the payer's bank disputes a payment
	OpEvidence       OpKind = "evidence"        // the merchant answers a dispute (A: 0 winning, 1 losing, 2 neither; B=1 submit)
	OpAcceptDispute  OpKind = "accept_dispute"  // the merchant concedes a dispute
	OpSettle         OpKind = "settle"          // the settlement test helper
	OpRetry          OpKind = "retry"           // an earlier request again under its key (A=1: with another body)
	OpWork           OpKind = "work"            // an instance's worker drains its due jobs
	OpCallbacks      OpKind = "callbacks"       // the PSP sends its callbacks, which reach paykit as Fault says
	OpAdvance        OpKind = "advance"         // the clock moves by D
	OpCrash          OpKind = "crash"           // an instance dies between steps and is restarted
	OpAddInstance    OpKind = "add_instance"    // another instance starts on the Store
)

// Op is one step of a plan. Ref picks an earlier resource (modulo how
// many exist when the step runs), Inst an instance; Fault is armed for
// the step.
type Op struct {
	Kind   OpKind
	Ref    int           `json:",omitempty"`
	Inst   int           `json:",omitempty"`
	A      int           `json:",omitempty"`
	B      int           `json:",omitempty"`
	Amount int64         `json:",omitempty"`
	D      time.Duration `json:",omitempty"`
	Fault  FaultKind     `json:",omitempty"`
}

func (o Op) String() string {
	var b strings.Builder
	b.WriteString(string(o.Kind))
	if o.Ref != 0 {
		fmt.Fprintf(&b, " ref=%d", o.Ref)
	}
	if o.Inst != 0 {
		fmt.Fprintf(&b, " inst=%d", o.Inst)
	}
	if o.A != 0 {
		fmt.Fprintf(&b, " a=%d", o.A)
	}
	if o.B != 0 {
		fmt.Fprintf(&b, " b=%d", o.B)
	}
	if o.Amount != 0 {
		fmt.Fprintf(&b, " amount=%d", o.Amount)
	}
	if o.D != 0 {
		fmt.Fprintf(&b, " d=%s", o.D)
	}
	if o.Fault != "" {
		fmt.Fprintf(&b, " fault=%s", o.Fault)
	}
	return b.String()
}

// Plan is a run's workload and fault schedule: its steps in order.
type Plan struct {
	Ops []Op
}

// Generate makes the plan of seed with n steps (after the first
// merchants): the same seed always gives the same plan.
func Generate(seed uint64, n int) *Plan {
	r := rand.New(rand.NewPCG(seed, 0x91a7))
	g := &gen{r: r}
	p := &Plan{}
	merchants := 1 + r.IntN(3)
	for range merchants {
		p.Ops = append(p.Ops, Op{Kind: OpMerchant})
		for range r.IntN(3) {
			p.Ops = append(p.Ops, g.endpoint())
		}
	}
	for len(p.Ops) < n+merchants {
		p.Ops = append(p.Ops, g.op())
	}
	return p
}

// gen draws the steps of a plan.
type gen struct{ r *rand.Rand }

// weights are how often each kind of step is drawn.
var weights = []struct {
	kind OpKind
	w    int
}{
	{OpPayment, 14}, {OpPayer, 12}, {OpWork, 16}, {OpCallbacks, 9}, {OpAdvance, 12},
	{OpRefund, 7}, {OpPayout, 7}, {OpApprove, 2}, {OpReject, 1}, {OpCancelPayment, 2},
	{OpCancelPayout, 2}, {OpReturn, 1}, {OpDispute, 3}, {OpEvidence, 3}, {OpAcceptDispute, 1},
	{OpCheckout, 3}, {OpPayCheckout, 3}, {OpCancelCheckout, 1}, {OpSettle, 2}, {OpRetry, 6},
	{OpEndpointMode, 2}, {OpCrash, 1}, {OpAddInstance, 1}, {OpMerchant, 1}, {OpEndpoint, 1},
}

var totalWeight = func() int {
	n := 0
	for _, w := range weights {
		n += w.w
	}
	return n
}()

func (g *gen) op() Op {
	n := g.r.IntN(totalWeight)
	var kind OpKind
	for _, w := range weights {
		if n -= w.w; n < 0 {
			kind = w.kind
			break
		}
	}
	o := Op{Kind: kind, Ref: g.r.IntN(1 << 20), Inst: g.r.IntN(8)}
	switch kind {
	case OpEndpoint:
		return g.endpoint()
	case OpEndpointMode:
		o.Fault = g.pick("", FaultWebhookFail, FaultWebhookHang, FaultWebhookThrottle, FaultWebhookGone, "")
	case OpPayment, OpCheckout:
		o.A = g.r.IntN(4)
		o.Amount = g.amount()
	case OpPayer:
		o.A = 1
		if g.r.IntN(6) == 0 {
			o.A = 0
		}
	case OpPayCheckout:
		o.A = g.r.IntN(1 << 10)
	case OpRefund:
		switch g.r.IntN(5) {
		case 0:
			o.Amount = 0
		case 1:
			o.Amount = -911 // the PSP declines it: the largest amount ending in 911 that fits
		default:
			o.Amount = -int64(1 + g.r.IntN(90)) // percent of what is left
		}
	case OpPayout:
		o.A = g.r.IntN(12)
		o.Amount = int64(10_000 + g.r.IntN(600_000))
		o.Amount -= o.Amount % 100
	case OpEvidence:
		o.A = g.r.IntN(5) % 3
		o.B = 1
		if g.r.IntN(5) == 0 {
			o.B = 0
		}
	case OpDispute:
		if g.r.IntN(2) == 0 {
			o.Amount = -int64(10 + g.r.IntN(90))
		}
	case OpRetry:
		if g.r.IntN(8) == 0 {
			o.A = 1
		}
	case OpCallbacks:
		switch g.r.IntN(10) {
		case 0, 1, 2:
			o.Fault = g.pick(FaultCallbackDrop, FaultCallbackDuplicate, FaultCallbackReorder, FaultCallbackDelay)
		case 3:
			o.Fault = FaultCrashAtTx
		}
	case OpAdvance:
		switch k := g.r.IntN(20); {
		case k == 0:
			o.D = time.Duration(1+g.r.IntN(12)) * time.Hour
			o.Fault = FaultClockJump
		case k < 4:
			o.D = time.Duration(1+g.r.IntN(30)) * time.Minute
		default:
			o.D = time.Duration(1+g.r.IntN(60)) * time.Second
		}
	}
	if callsProvider(kind) && g.r.IntN(5) == 0 {
		o.Fault = g.fault(kind)
	}
	return o
}

// endpoint draws a new webhook endpoint, mostly healthy.
func (g *gen) endpoint() Op {
	o := Op{Kind: OpEndpoint, Ref: g.r.IntN(1 << 20)}
	if g.r.IntN(4) == 0 {
		o.Fault = g.pick(FaultWebhookFail, FaultWebhookHang, FaultWebhookThrottle, FaultWebhookGone)
	}
	return o
}

// amount draws a payment amount: mostly ordinary, sometimes one whose
// last digits make the PSP decline it, settle another fee or never
// settle it.
func (g *gen) amount() int64 {
	base := int64(2+g.r.IntN(400)) * 1000
	switch k := g.r.IntN(25); {
	case k == 0:
		return base + 901
	case k == 1:
		return base + 921
	case k == 2:
		return base + 922
	}
	for {
		a := base + int64(g.r.IntN(1000))
		switch a % 1000 {
		case 901, 902, 903, 911, 912, 921, 922:
			continue
		}
		return a
	}
}

func (g *gen) pick(kinds ...FaultKind) FaultKind { return kinds[g.r.IntN(len(kinds))] }

// fault draws the fault armed for a step of kind that calls the Provider.
func (g *gen) fault(kind OpKind) FaultKind {
	switch k := g.r.IntN(20); {
	case k < 2:
		return FaultCrashAfterCall
	case k < 3:
		return FaultCrashAtTx
	case k < 5:
		return FaultRace
	case kind == OpWork && k < 7:
		// The worker is where inquiries, dispute calls and settlement
		// reads happen.
		return g.pick(FaultStale, FaultStale, FaultDisputeError, FaultSettleError)
	case kind == OpSettle && k < 7:
		return FaultSettleError
	case (kind == OpEvidence || kind == OpAcceptDispute) && k < 9:
		return FaultDisputeError
	}
	return providerFaults[g.r.IntN(len(providerFaults))]
}

// callsProvider reports whether a step of kind may call the Provider.
func callsProvider(kind OpKind) bool {
	switch kind {
	case OpPayment, OpCancelPayment, OpPayCheckout, OpRefund, OpPayout, OpApprove, OpCancelPayout,
		OpDispute, OpEvidence, OpAcceptDispute, OpSettle, OpRetry, OpWork, OpReturn:
		return true
	}
	return false
}
