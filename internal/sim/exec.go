package sim

import (
	"bytes"
	"fmt"
	"strings"
	"time"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/internal/wire"
)

// exec runs step i of the plan.
func (w *world) exec(i int, op Op) {
	w.step, w.stepFault = i, op.Fault
	w.trace.logf("step %d @%s: %s", i, w.clock.Now().Format("01-02 15:04:05"), op)
	if len(w.live()) > 1 {
		w.faults.fired(FaultTwoInstances)
	}
	in := w.pick(op.Inst)
	w.arm(in, op)
	switch op.Kind {
	case OpMerchant:
		w.merchant(in)
	case OpEndpoint:
		w.endpoint(in, op)
	case OpEndpointMode:
		if ep := pickOf(w.obs.endpoints, op.Ref); ep != nil {
			ep.Mode = op.Fault
			w.trace.logf("  endpoint %s now answers %q", ep.ID, ep.Mode)
		}
	case OpPayment:
		w.race(in, op, func(in *instance) { w.payment(in, op, i) })
	case OpPayer:
		w.payer(op)
	case OpCancelPayment:
		w.race(in, op, func(in *instance) { w.cancelPayment(in, op, i) })
	case OpCheckout:
		w.checkout(in, op, i)
	case OpPayCheckout:
		w.race(in, op, func(in *instance) { w.payCheckout(in, op, i) })
	case OpCancelCheckout:
		w.cancelCheckout(in, op, i)
	case OpRefund:
		w.race(in, op, func(in *instance) { w.refund(in, op, i) })
	case OpPayout:
		w.race(in, op, func(in *instance) { w.payout(in, op, i) })
	case OpApprove:
		w.race(in, op, func(in *instance) { w.approve(in, op) })
	case OpReject:
		w.reject(in, op)
	case OpCancelPayout:
		w.race(in, op, func(in *instance) { w.cancelPayout(in, op, i) })
	case OpReturn:
		w.returnPayout(in, op)
	case OpDispute:
		w.race(in, op, func(in *instance) { w.dispute(in, op) })
	case OpEvidence, OpAcceptDispute:
		if op.Kind == OpEvidence {
			w.evidence(in, op, i)
		} else {
			w.acceptDispute(in, op, i)
		}
		if op.Fault == FaultDisputeError {
			w.work(in) // the worker tells the Provider at once, and meets the fault
		}
	case OpSettle:
		w.race(in, op, func(in *instance) { w.settle(in, op) })
	case OpRetry:
		w.race(in, op, func(in *instance) { w.retry(in, op) })
	case OpWork:
		w.race(in, op, func(in *instance) { _ = w.work(in) })
	case OpCallbacks:
		w.sendCallbacks(in, op.Fault)
	case OpAdvance:
		if op.Fault == FaultClockJump {
			w.faults.fired(FaultClockJump)
		}
		w.clock.Advance(op.D)
	case OpCrash:
		w.faults.fired(FaultCrashIdle)
		w.kill(in, "between steps")
	case OpAddInstance:
		if len(w.live()) < 2 {
			if _, err := w.startInstance(); err != nil {
				w.fail("sim.setup", "start an instance: %v", err)
			}
		}
	}
	w.disarm()
	if err := w.replaceDead(); err != nil {
		w.fail("sim.setup", "restart an instance: %v", err)
	}
}

// arm sets up the faults op arms on the instance that runs it.
func (w *world) arm(in *instance, op Op) {
	switch op.Fault {
	case FaultCrashAfterCall:
		in.crashAfterCall = true
	case FaultCrashAtTx:
		in.crashAtTx = 1 + w.rng.IntN(3)
	case "", FaultRace, FaultClockJump, FaultCallbackDrop, FaultCallbackDuplicate, FaultCallbackReorder, FaultCallbackDelay,
		FaultWebhookFail, FaultWebhookHang, FaultWebhookGone, FaultWebhookThrottle:
	default:
		in.armed = &armedFault{kind: op.Fault}
	}
}

// disarm takes back what a step armed and no call met.
func (w *world) disarm() {
	for _, x := range w.instances {
		x.armed, x.crashAfterCall, x.crashAtTx, x.failTx = nil, false, 0, nil
	}
}

// race runs fn on in. With FaultRace, in's first Provider call is held
// once the PSP answered it, while the clock passes its request lock and
// job lease and another instance works and takes callbacks; then in
// carries on with the answer.
func (w *world) race(in *instance, op Op, fn func(in *instance)) {
	if op.Fault != FaultRace {
		fn(in)
		return
	}
	var other *instance
	for _, x := range w.live() {
		if x != in {
			other = x
		}
	}
	if other == nil {
		var err error
		if other, err = w.startInstance(); err != nil {
			w.fail("sim.setup", "start an instance: %v", err)
			return
		}
	}
	in.pause, in.release = make(chan struct{}), make(chan struct{})
	pause, release := in.pause, in.release
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn(in)
	}()
	select {
	case <-done:
		in.pause, in.release = nil, nil
		return
	case <-pause:
	case <-time.After(time.Minute):
		w.fail("sim.deadlock", "instance %s neither finished nor reached the Provider", in.name)
		return
	}
	w.faults.fired(FaultRace)
	w.trace.logf("  %s holds its answer; %s works meanwhile", in.name, other.name)
	w.clock.Advance(31 * time.Second) // past the request's lock and the run's lease
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		w.sendCallbacks(other, "")
		w.work(other)
	}()
	select {
	case <-finished:
	case <-time.After(time.Minute):
		w.fail("sim.deadlock", "instance %s blocked while %s held a Provider answer", other.name, in.name)
		return
	}
	close(release)
	select {
	case <-done:
	case <-time.After(time.Minute):
		w.fail("sim.deadlock", "instance %s never finished after its Provider answer", in.name)
	}
}

// pickOf returns the element of list that ref picks, or nil.
func pickOf[T any](list []*T, ref int) *T {
	if len(list) == 0 {
		return nil
	}
	return list[ref%len(list)]
}

// pickWhere returns the first element from where ref points on that ok
// accepts, or nil.
func pickWhere[T any](list []*T, ref int, ok func(*T) bool) *T {
	for i := range list {
		if x := list[(ref+i)%len(list)]; ok(x) {
			return x
		}
	}
	return nil
}

func (w *world) merchant(in *instance) {
	m, err := in.svc.CreateMerchant(w.ctx, "sim", fmt.Sprintf("Kedai %d", len(w.obs.merchants)+1))
	if err != nil {
		w.trace.logf("  merchant: %v", err)
		return
	}
	sm := &simMerchant{ID: m.ID, Principal: paykit.Principal{Scope: paykit.Scope{MerchantID: m.ID, Environment: paykit.Test}, KeyID: "key_" + m.ID}}
	w.obs.merchants = append(w.obs.merchants, sm)
	w.trace.logf("  merchant %s", m.ID)
	for _, ccy := range []string{"MYR", "THB"} {
		_, err := in.svc.AdjustBalance(w.ctx, "ops:sim", m.ID, paykit.BalanceAdjustmentRequest{Environment: paykit.Test, Currency: ccy, Amount: 2_000_000, Reason: "float"})
		if err != nil {
			w.trace.logf("  float %s: %v", ccy, err)
		}
	}
}

func (w *world) endpoint(in *instance, op Op) {
	m := pickOf(w.obs.merchants, op.Ref)
	if m == nil {
		return
	}
	n := len(w.obs.endpoints) + 1
	url := fmt.Sprintf("http://127.0.0.1:9/hooks/%d", n)
	key := fmt.Sprintf("ep-%d-%d", w.step, n)
	ws, _, err := in.svc.CreateMerchantWebhookEndpoint(w.ctx, m.Principal, key, paykit.CreateMerchantWebhookEndpointRequest{URL: url})
	if err != nil {
		w.trace.logf("  endpoint: %v", err)
		return
	}
	ep := &simEndpoint{ID: ws.Endpoint.ID, URL: url, Merchant: m, Mode: op.Fault, CreatedAt: ws.Endpoint.CreatedAt, Delivered: map[string]bool{}}
	w.obs.endpoints = append(w.obs.endpoints, ep)
	w.trace.logf("  endpoint %s answers %q", ep.ID, ep.Mode)
}

// methods are the payment methods by country.
var methods = map[string][]string{
	"MY": {"FPX", "TNG", "BOOST", "GRABPAY", "DUITNOW_QR", "CARD", "BANK_TRANSFER", "ALIPAY", "WECHAT_PAY", "UNIONPAY", "UMOBILE", "EMONEI"},
	"TH": {"PROMPTPAY", "TRUEMONEY", "CARD", "BANK_TRANSFER"},
}

var currencyOf = map[string]string{"MY": "MYR", "TH": "THB"}

// fpxBanks are the FPX banks the payer picks from (BSN is offline).
var fpxBanks = []string{"MAYBANK", "CIMB", "PUBLIC", "RHB", "HLB", "AMBANK", "BIMB"}

var customer = map[string]string{"name": "Aisyah Rahman", "email": "aisyah@example.com"}

// magicOf is the PSP outcome a payment amount chose, if any.
func magicOf(amount int64) FaultKind {
	switch amount % 1000 {
	case 901:
		return FaultPaymentDeclined
	case 921:
		return FaultFeeMismatch
	case 922:
		return FaultNeverSettled
	}
	return ""
}

func (w *world) payment(in *instance, op Op, i int) {
	m := pickOf(w.obs.merchants, op.Ref)
	if m == nil {
		return
	}
	country := "MY"
	if op.A%2 == 1 {
		country = "TH"
	}
	ms := methods[country]
	method := ms[(op.Ref/7)%len(ms)]
	req := paykit.CreatePaymentIntentRequest{
		Amount: op.Amount, Currency: currencyOf[country], Country: country,
		MerchantReference: fmt.Sprintf("order-%d", i), PaymentMethod: method, Customer: customer,
	}
	if method == "FPX" {
		req.PaymentMethodOptions = map[string]string{"bank": fpxBanks[(op.Ref/3)%len(fpxBanks)]}
	}
	r := &simRequest{Kind: "payment", Merchant: m, Key: fmt.Sprintf("pay-%d", i), Body: req}
	w.obs.requests = append(w.obs.requests, r)
	w.sendRequest(in, r, false)
}

// sendRequest sends r (with another body when altered) on in and records
// what paykit answered.
func (w *world) sendRequest(in *instance, r *simRequest, altered bool) {
	p := r.Merchant.Principal
	var (
		v   any
		ans paykit.Answer
		err error
	)
	switch body := r.Body.(type) {
	case paykit.CreatePaymentIntentRequest:
		if altered {
			body.Amount++
		}
		v, ans, err = unwrap(in.svc.CreatePaymentIntent(w.ctx, p, r.Key, body))
	case paykit.CreatePayoutIntentRequest:
		if altered {
			body.Amount++
		}
		v, ans, err = unwrap(in.svc.CreatePayoutIntent(w.ctx, p, r.Key, body))
	case paykit.CreateRefundRequest:
		if altered {
			body.Reason = "another reason"
		}
		v, ans, err = unwrap(in.svc.CreateRefund(w.ctx, p, r.Key, body))
	case paykit.CreateCheckoutRequest:
		if altered {
			body.Amount++
		}
		v, ans, err = unwrap(in.svc.CreateCheckout(w.ctx, p, r.Key, body))
	case paykit.CancelPaymentIntentRequest:
		if altered {
			body.Reason = "another reason"
		}
		v, ans, err = unwrap(in.svc.CancelPaymentIntent(w.ctx, p, r.Key, r.Target, body))
	case paykit.CancelPayoutIntentRequest:
		if altered {
			body.Reason = "another reason"
		}
		v, ans, err = unwrap(in.svc.CancelPayoutIntent(w.ctx, p, r.Key, r.Target, body))
	case cancelCheckout:
		if altered {
			return // its body is empty: nothing to alter
		}
		v, ans, err = unwrap(in.svc.CancelCheckout(w.ctx, p, r.Key, r.Target))
	case paykit.DisputeEvidenceRequest:
		if altered {
			body.Text += " (amended)"
		}
		v, ans, err = unwrap(in.svc.SubmitDisputeEvidence(w.ctx, p, r.Key, r.Target, body))
	case acceptDispute:
		if altered {
			return
		}
		v, ans, err = unwrap(in.svc.AcceptDispute(w.ctx, p, r.Key, r.Target))
	default:
		panic(fmt.Sprintf("sim: request body %T", r.Body))
	}
	w.answered(in, r, altered, v, ans, err)
}

// Bodies of the requests that have none.
type (
	cancelCheckout struct{}
	acceptDispute  struct{}
)

// unwrap turns a typed answer into an untyped one.
func unwrap[T any](v *T, ans paykit.Answer, err error) (any, paykit.Answer, error) {
	if err != nil || v == nil {
		return nil, ans, err
	}
	return v, ans, nil
}

// answered records and checks paykit's answer to request r: a key names
// one resource, a replay repeats the first answer byte for byte, a key
// used with another body is refused.
func (w *world) answered(in *instance, r *simRequest, altered bool, v any, ans paykit.Answer, err error) {
	id := fmt.Sprintf("%s %s", r.Merchant.ID, r.Key)
	rec := w.obs.idem[id]
	expired := rec != nil && w.clock.Now().Sub(rec.FirstAt) > 23*time.Hour
	if err != nil {
		code := paykit.ErrorCode(err)
		w.trace.logf("  %s %s on %s: %s (%v)", r.Kind, r.Key, in.name, code, shorten(err))
		if code == paykit.CodeIdempotencyConflict && !altered && rec != nil && !rec.Altered && !expired {
			w.fail("idempotency.replay", "request %s under key %s, sent again unchanged, was refused as a conflict", r.Kind, r.Key)
		}
		if code == paykit.CodeInternal && !in.dead && w.stepFault == "" {
			w.fail("api.internal_error", "request %s under key %s failed without a fault: %v", r.Kind, r.Key, err)
		}
		if r.Kind == "payment" || r.Kind == "payout" || r.Kind == "refund" || r.Kind == "checkout" {
			w.learnByReference(r)
		}
		return
	}
	rid, status := resourceKey(v)
	b := answerBytes(v)
	w.trace.logf("  %s %s on %s: %s %s (%s%s)", r.Kind, r.Key, in.name, rid, status, ans.Kind, map[bool]string{true: ", replayed"}[ans.Replayed])
	w.register(r, v)
	switch {
	case rec == nil || expired:
		w.obs.idem[id] = &idemRecord{FirstAt: w.clock.Now(), Resource: rid, Answer: b, Replayed: ans.Replayed, Altered: altered}
	case altered && !rec.Altered:
		w.fail("idempotency.conflict", "request %s under key %s with another body was answered (%s) instead of refused", r.Kind, r.Key, rid)
	case rec.Resource != rid:
		w.fail("idempotency.one_resource", "key %s named %s, now %s", r.Key, rec.Resource, rid)
	case !ans.Replayed && !rec.Altered:
		w.fail("idempotency.replay", "key %s answered a second time without replaying (%s)", r.Key, rid)
	case !bytes.Equal(rec.Answer, b) && !rec.Altered:
		w.fail("idempotency.replay_bytes", "key %s replayed another answer:\nfirst:  %s\nreplay: %s", r.Key, rec.Answer, b)
	}
}

// shorten is err's text, at most 200 bytes.
func shorten(err error) string {
	s := err.Error()
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

// resourceKey is the id and status of an answer's resource.
func resourceKey(v any) (string, string) {
	switch r := v.(type) {
	case *paykit.PaymentIntent:
		return r.ID, string(r.Status)
	case *paykit.PayoutIntent:
		return r.ID, string(r.Status)
	case *paykit.Refund:
		return r.ID, string(r.Status)
	case *paykit.Checkout:
		return r.ID, string(r.Status)
	case *paykit.Dispute:
		return r.ID, string(r.Status)
	}
	return fmt.Sprintf("%T", v), ""
}

// register keeps the resource a create answered, once.
func (w *world) register(r *simRequest, v any) {
	switch x := v.(type) {
	case *paykit.PaymentIntent:
		if r.Kind == "payment" {
			w.addResource(&w.obs.payments, x.ID, r.Merchant, magicOf(x.Amount), "")
		}
	case *paykit.PayoutIntent:
		if r.Kind == "payout" {
			w.addResource(&w.obs.payouts, x.ID, r.Merchant, payoutMagic(r.Body), "")
		}
	case *paykit.Refund:
		if r.Kind == "refund" {
			var magic FaultKind
			if x.Amount%1000 == 911 {
				magic = FaultRefundDeclined
			}
			w.addResource(&w.obs.refunds, x.ID, r.Merchant, magic, x.PaymentIntentID)
		}
	case *paykit.Checkout:
		if r.Kind == "checkout" {
			res := w.addResource(&w.obs.checkouts, x.ID, r.Merchant, magicOf(x.Amount), "")
			if res != nil {
				res.Token = strings.TrimPrefix(x.URL, publicURL+"/pay/checkouts/")
			}
		}
	}
}

// addResource adds a resource to list unless it is there, and returns
// it when added.
func (w *world) addResource(list *[]*simResource, id string, m *simMerchant, magic FaultKind, payment string) *simResource {
	for _, r := range *list {
		if r.ID == id {
			return nil
		}
	}
	r := &simResource{ID: id, Merchant: m, Magic: magic, Payment: payment}
	*list = append(*list, r)
	if magic != "" {
		w.faults.fired(magic)
	}
	return r
}

// learnByReference finds, after a create request that failed, the
// resource it may have made all the same, as a merchant would by its
// reference.
func (w *world) learnByReference(r *simRequest) {
	scope := r.Merchant.Principal.Scope
	var ref string
	switch b := r.Body.(type) {
	case paykit.CreatePaymentIntentRequest:
		ref = b.MerchantReference
	case paykit.CreatePayoutIntentRequest:
		ref = b.MerchantReference
	case paykit.CreateRefundRequest:
		ref = b.MerchantReference
	case paykit.CreateCheckoutRequest:
		ref = b.MerchantReference
	}
	st := w.store0()
	switch r.Kind {
	case "payment":
		rows, err := st.ListPaymentIntents(w.ctx, paykit.ListQuery[paykit.ListParams[paykit.PaymentStatus]]{Scope: scope, Filter: paykit.ListParams[paykit.PaymentStatus]{MerchantReference: ref}})
		for i := range rows {
			if err == nil && rows[i].CheckoutID == "" {
				w.addResource(&w.obs.payments, rows[i].ID, r.Merchant, magicOf(rows[i].Amount), "")
			}
		}
	case "payout":
		rows, err := st.ListPayoutIntents(w.ctx, paykit.PayoutQuery{ListQuery: paykit.ListQuery[paykit.ListParams[paykit.PayoutStatus]]{Scope: scope, Filter: paykit.ListParams[paykit.PayoutStatus]{MerchantReference: ref}}})
		for i := range rows {
			if err == nil {
				w.addResource(&w.obs.payouts, rows[i].ID, r.Merchant, payoutMagic(r.Body), "")
			}
		}
	case "refund":
		rows, err := st.ListRefunds(w.ctx, paykit.ListQuery[paykit.RefundListParams]{Scope: scope, Filter: paykit.RefundListParams{ListParams: paykit.ListParams[paykit.RefundStatus]{MerchantReference: ref}}})
		for i := range rows {
			if err == nil {
				w.addResource(&w.obs.refunds, rows[i].ID, r.Merchant, "", rows[i].PaymentIntentID)
			}
		}
	case "checkout":
		rows, err := st.ListCheckouts(w.ctx, paykit.ListQuery[paykit.ListParams[paykit.CheckoutStatus]]{Scope: scope, Filter: paykit.ListParams[paykit.CheckoutStatus]{MerchantReference: ref}})
		for i := range rows {
			if err == nil {
				w.addResource(&w.obs.checkouts, rows[i].ID, r.Merchant, magicOf(rows[i].Amount), "")
			}
		}
	}
}

// store0 is the shared Store as the simulation reads it.
func (w *world) store0() paykit.Store {
	if w.store != nil {
		return w.store
	}
	return w.reader
}

func (w *world) payer(op Op) {
	pm := pickWhere(w.obs.payments, op.Ref, func(r *simResource) bool {
		pi, err := w.store0().GetPaymentIntent(w.ctx, r.Merchant.Principal.Scope, r.ID)
		return err == nil && pi.Status == paykit.PaymentRequiresAction
	})
	if pm == nil {
		return
	}
	var err error
	if op.A == 1 {
		err = w.pspDirect.Approve(w.ctx, pm.ID)
	} else {
		err = w.pspDirect.Decline(w.ctx, pm.ID)
	}
	w.trace.logf("  payer %s %s: %v", map[bool]string{true: "approves", false: "declines"}[op.A == 1], pm.ID, err)
}

func (w *world) cancelPayment(in *instance, op Op, i int) {
	pm := pickWhere(w.obs.payments, op.Ref, func(r *simResource) bool {
		pi, err := w.store0().GetPaymentIntent(w.ctx, r.Merchant.Principal.Scope, r.ID)
		return err == nil && !pi.Status.Terminal()
	})
	if pm == nil {
		return
	}
	r := &simRequest{Kind: "cancel_payment", Merchant: pm.Merchant, Key: fmt.Sprintf("cancel-%d", i), Target: pm.ID,
		Body: paykit.CancelPaymentIntentRequest{Reason: "customer changed their mind"}}
	w.obs.requests = append(w.obs.requests, r)
	w.sendRequest(in, r, false)
}

func (w *world) checkout(in *instance, op Op, i int) {
	m := pickOf(w.obs.merchants, op.Ref)
	if m == nil {
		return
	}
	country := "MY"
	if op.A%2 == 1 {
		country = "TH"
	}
	req := paykit.CreateCheckoutRequest{Amount: op.Amount, Currency: currencyOf[country], Country: country,
		MerchantReference: fmt.Sprintf("cart-%d", i), Customer: map[string]string{"name": "Somchai"}}
	if op.A >= 2 {
		ms := methods[country]
		req.PaymentMethod = ms[(op.Ref/5)%len(ms)]
		if req.PaymentMethod == "FPX" {
			req.PaymentMethodOptions = map[string]string{"bank": fpxBanks[(op.Ref/3)%len(fpxBanks)]}
		}
	}
	r := &simRequest{Kind: "checkout", Merchant: m, Key: fmt.Sprintf("co-%d", i), Body: req}
	w.obs.requests = append(w.obs.requests, r)
	w.sendRequest(in, r, false)
}

func (w *world) payCheckout(in *instance, op Op, i int) {
	co := pickWhere(w.obs.checkouts, op.Ref, func(r *simResource) bool {
		c, err := w.store0().GetCheckout(w.ctx, r.Merchant.Principal.Scope, r.ID)
		return err == nil && c.Status == paykit.CheckoutOpen && r.Token != ""
	})
	if co == nil {
		return
	}
	pc, err := in.svc.OpenCheckout(w.ctx, co.Token)
	if err != nil || len(pc.Methods) == 0 {
		w.trace.logf("  open checkout %s: %v", co.ID, err)
		return
	}
	method := pc.Methods[op.A%len(pc.Methods)].Method
	req := paykit.PayCheckoutRequest{PaymentMethod: method, Customer: customer, SubmissionID: fmt.Sprintf("sub-%d", i)}
	if method == "FPX" && pc.Checkout.PaymentMethod == "" {
		req.Options = map[string]string{"bank": fpxBanks[op.A%len(fpxBanks)]}
	}
	pi, err := in.svc.PayCheckout(w.ctx, co.Token, req)
	if err != nil {
		w.trace.logf("  pay checkout %s with %s: %s (%v)", co.ID, method, paykit.ErrorCode(err), shorten(err))
		if paykit.ErrorCode(err) == paykit.CodeInternal && !in.dead && w.stepFault == "" {
			w.fail("api.internal_error", "paying checkout %s failed without a fault: %v", co.ID, err)
		}
		if c, err := w.store0().GetCheckout(w.ctx, co.Merchant.Principal.Scope, co.ID); err == nil && c.PaymentIntentID != "" {
			w.addResource(&w.obs.payments, c.PaymentIntentID, co.Merchant, co.Magic, "")
		}
		return
	}
	w.trace.logf("  pay checkout %s with %s: %s", co.ID, method, describe(pi))
	w.addResource(&w.obs.payments, pi.ID, co.Merchant, magicOf(pi.Amount), "")
}

func (w *world) cancelCheckout(in *instance, op Op, i int) {
	co := pickOf(w.obs.checkouts, op.Ref)
	if co == nil {
		return
	}
	r := &simRequest{Kind: "cancel_checkout", Merchant: co.Merchant, Key: fmt.Sprintf("cancel-%d", i), Target: co.ID, Body: cancelCheckout{}}
	w.obs.requests = append(w.obs.requests, r)
	w.sendRequest(in, r, false)
}

func (w *world) refund(in *instance, op Op, i int) {
	var pi *paykit.PaymentIntent
	pm := pickWhere(w.obs.payments, op.Ref, func(r *simResource) bool {
		var err error
		pi, err = w.store0().GetPaymentIntent(w.ctx, r.Merchant.Principal.Scope, r.ID)
		return err == nil && pi.Status == paykit.PaymentSucceeded
	})
	if pm == nil {
		return
	}
	left := pi.Amount - pi.RefundedAmount - pi.RefundPendingAmount - pi.DisputedAmount
	amount := op.Amount
	switch {
	case amount == -911:
		amount = left - left%1000 - 1000 + 911
		if amount <= 0 {
			amount = left
		}
	case amount < 0:
		amount = max(1, left*(-amount)/100)
	}
	if amount > 0 && amount != left && (amount%1000 == 912 || amount%1000 == 911 && op.Amount != -911) {
		amount -= 2
	}
	req := paykit.CreateRefundRequest{PaymentIntent: pm.ID, MerchantReference: fmt.Sprintf("refund-%d", i), Amount: amount}
	r := &simRequest{Kind: "refund", Merchant: pm.Merchant, Key: fmt.Sprintf("rf-%d", i), Body: req}
	w.obs.requests = append(w.obs.requests, r)
	w.sendRequest(in, r, false)
}

// Recipient accounts the PSP treats specially.
const (
	acctInvalid = "000111111116" // failed: the account does not exist
	acctDropped = "000333333335" // the first create's answer is dropped
	acctSlow    = "000444444440" // in flight for a minute
)

// payoutMagic is the PSP outcome a payout's account chose, if any.
func payoutMagic(body any) FaultKind {
	req, ok := body.(paykit.CreatePayoutIntentRequest)
	if !ok {
		return ""
	}
	switch req.Recipient.AccountNumber {
	case acctInvalid:
		return FaultAccountInvalid
	case acctDropped:
		return FaultAccountDropped
	case acctSlow:
		return FaultAccountSlow
	}
	return ""
}

func (w *world) payout(in *instance, op Op, i int) {
	m := pickOf(w.obs.merchants, op.Ref)
	if m == nil {
		return
	}
	country := "TH"
	if op.Ref%3 == 0 {
		country = "MY"
	}
	acct := fmt.Sprintf("12%010d", op.Ref)
	switch op.A {
	case 0:
		acct = acctInvalid
	case 1:
		acct = acctDropped
	case 2:
		acct = acctSlow
	}
	rcp := paykit.Recipient{Type: "bank_account", AccountNumber: acct, HolderName: "Somchai Jaidee"}
	if country == "TH" {
		banks := append(append([]string(nil), wire.ThaiBankCodes...), wire.PromptPayBankCode)
		rcp.BankCode = banks[(op.Ref/11)%len(banks)]
		if rcp.BankCode != wire.PromptPayBankCode {
			rcp.HolderNameTH = "สมชาย ใจดี"
		}
	} else {
		rcp.BankCode = fpxBanks[(op.Ref/11)%len(fpxBanks)]
	}
	req := paykit.CreatePayoutIntentRequest{Amount: op.Amount, Currency: currencyOf[country], Country: country,
		MerchantReference: fmt.Sprintf("payout-%d", i), Recipient: rcp}
	r := &simRequest{Kind: "payout", Merchant: m, Key: fmt.Sprintf("po-%d", i), Body: req}
	w.obs.requests = append(w.obs.requests, r)
	w.sendRequest(in, r, false)
}

// heldPayout picks a payout waiting for an operator.
func (w *world) heldPayout(op Op) *simResource {
	return pickWhere(w.obs.payouts, op.Ref, func(r *simResource) bool {
		po, err := w.store0().GetPayoutIntent(w.ctx, r.Merchant.Principal.Scope, r.ID)
		return err == nil && po.ApprovalPending
	})
}

func (w *world) approve(in *instance, op Op) {
	po := w.heldPayout(op)
	if po == nil {
		return
	}
	got, err := in.svc.ApprovePayout(w.ctx, "ops:sim", po.ID, "looks right")
	w.operatorAnswer(in, "approve", po.ID, got, err)
}

func (w *world) reject(in *instance, op Op) {
	po := w.heldPayout(op)
	if po == nil {
		return
	}
	got, err := in.svc.RejectPayout(w.ctx, "ops:sim", po.ID, "not ours")
	w.operatorAnswer(in, "reject", po.ID, got, err)
}

// operatorAnswer traces an operator's (or a test helper's) call.
func (w *world) operatorAnswer(in *instance, what, id string, v any, err error) {
	if err != nil {
		w.trace.logf("  %s %s on %s: %s (%v)", what, id, in.name, paykit.ErrorCode(err), shorten(err))
		// A test helper whose sandbox refuses (a dispute the PSP opened
		// while paykit's request died, not known to paykit until the bank
		// decides it) answers internal_error by design.
		helper := what == "dispute" || what == "return"
		if paykit.ErrorCode(err) == paykit.CodeInternal && !in.dead && w.stepFault == "" && !helper {
			w.fail("api.internal_error", "%s %s failed without a fault: %v", what, id, err)
		}
		return
	}
	w.trace.logf("  %s %s on %s: %s", what, id, in.name, describe(v))
}

func (w *world) cancelPayout(in *instance, op Op, i int) {
	po := pickWhere(w.obs.payouts, op.Ref, func(r *simResource) bool {
		po, err := w.store0().GetPayoutIntent(w.ctx, r.Merchant.Principal.Scope, r.ID)
		return err == nil && !po.Status.Terminal()
	})
	if po == nil {
		return
	}
	r := &simRequest{Kind: "cancel_payout", Merchant: po.Merchant, Key: fmt.Sprintf("cancel-%d", i), Target: po.ID,
		Body: paykit.CancelPayoutIntentRequest{Reason: "wrong recipient"}}
	w.obs.requests = append(w.obs.requests, r)
	w.sendRequest(in, r, false)
}

func (w *world) returnPayout(in *instance, op Op) {
	po := pickWhere(w.obs.payouts, op.Ref, func(r *simResource) bool {
		po, err := w.store0().GetPayoutIntent(w.ctx, r.Merchant.Principal.Scope, r.ID)
		return err == nil && po.Status == paykit.PayoutSucceeded
	})
	if po == nil {
		return
	}
	got, err := in.svc.SimulateReturn(w.ctx, po.Merchant.Principal, po.ID)
	w.operatorAnswer(in, "return", po.ID, got, err)
	if err != nil && paykit.ErrorCode(err) != paykit.CodeInvalidState {
		// The PSP may have returned it: the merchant tries again, as
		// after any failed request.
		w.obs.unfinished = append(w.obs.unfinished, po)
	}
}

func (w *world) dispute(in *instance, op Op) {
	var pi *paykit.PaymentIntent
	pm := pickWhere(w.obs.payments, op.Ref, func(r *simResource) bool {
		var err error
		pi, err = w.store0().GetPaymentIntent(w.ctx, r.Merchant.Principal.Scope, r.ID)
		return err == nil && pi.Status == paykit.PaymentSucceeded && pi.Amount > pi.RefundedAmount+pi.RefundPendingAmount+pi.DisputedAmount
	})
	if pm == nil {
		return
	}
	var amount int64
	if op.Amount < 0 {
		left := pi.Amount - pi.RefundedAmount - pi.RefundPendingAmount - pi.DisputedAmount
		amount = max(1, left*(-op.Amount)/100)
	}
	d, err := in.svc.SimulateDispute(w.ctx, pm.Merchant.Principal, pm.ID, paykit.SimulateDisputeRequest{Amount: amount, Reason: paykit.DisputeFraudulent})
	w.operatorAnswer(in, "dispute", pm.ID, d, err)
	if err == nil {
		w.addResource(&w.obs.disputes, d.ID, pm.Merchant, "", pm.ID)
	}
}

// evidenceTexts are the texts the merchant answers disputes with: the
// bank decides by them.
var evidenceTexts = []string{
	"Signed delivery note attached: winning_evidence",
	"We cannot show the goods arrived: losing_evidence",
	"Our records are being gathered.",
}

func (w *world) openDispute(op Op) *simResource {
	return pickWhere(w.obs.disputes, op.Ref, func(r *simResource) bool {
		d, err := w.store0().GetDispute(w.ctx, r.Merchant.Principal.Scope, r.ID)
		return err == nil && d.Status == paykit.DisputeNeedsResponse
	})
}

func (w *world) evidence(in *instance, op Op, i int) {
	d := w.openDispute(op)
	if d == nil {
		return
	}
	req := paykit.DisputeEvidenceRequest{Text: evidenceTexts[op.A%len(evidenceTexts)], Submit: op.B == 1}
	r := &simRequest{Kind: "evidence", Merchant: d.Merchant, Key: fmt.Sprintf("ev-%d", i), Target: d.ID, Body: req}
	w.obs.requests = append(w.obs.requests, r)
	if req.Submit {
		d.Evidence = req.Text
	}
	w.sendRequest(in, r, false)
}

func (w *world) acceptDispute(in *instance, op Op, i int) {
	d := w.openDispute(op)
	if d == nil {
		return
	}
	r := &simRequest{Kind: "accept_dispute", Merchant: d.Merchant, Key: fmt.Sprintf("acc-%d", i), Target: d.ID, Body: acceptDispute{}}
	w.obs.requests = append(w.obs.requests, r)
	w.sendRequest(in, r, false)
}

func (w *world) settle(in *instance, op Op) {
	m := pickOf(w.obs.merchants, op.Ref)
	if m == nil {
		return
	}
	batches, err := in.svc.SettleTestFunds(w.ctx, m.Principal)
	if err != nil {
		w.trace.logf("  settle %s on %s: %s (%v)", m.ID, in.name, paykit.ErrorCode(err), shorten(err))
		return
	}
	w.trace.logf("  settle %s on %s: %d batches", m.ID, in.name, len(batches))
}

func (w *world) retry(in *instance, op Op) {
	r := pickOf(w.obs.requests, op.Ref)
	if r == nil {
		return
	}
	w.sendRequest(in, r, op.A == 1)
}

// work drains an instance's due jobs (at most 20 rounds) and returns how
// many ran.
func (w *world) work(in *instance) int {
	total := 0
	for range 20 {
		if in.dead {
			break
		}
		n, err := in.svc.ProcessDue(w.ctx)
		total += n
		if err != nil {
			w.trace.logf("  worker %s: %v", in.name, shorten(err))
		}
		if n == 0 {
			break
		}
	}
	if total > 0 {
		w.trace.logf("  worker %s ran %d jobs", in.name, total)
	}
	return total
}

// sendCallbacks has the PSP send what it owes and hands the callbacks,
// with those held from earlier, to paykit on in, as fault says: one is
// lost, one arrives twice (and once more later), their order is
// shuffled, or some wait for a later round. It returns how many it
// handed to paykit.
func (w *world) sendCallbacks(in *instance, fault FaultKind) int {
	if _, err := w.psp.SendCallbacks(w.ctx); err != nil {
		w.trace.logf("  psp callbacks: %v", shorten(err))
	}
	fresh := w.takeInbox()
	batch := append(w.held, fresh...)
	w.held = nil
	if len(batch) > 0 {
		switch fault {
		case FaultCallbackDrop:
			k := w.rng.IntN(len(batch))
			w.trace.logf("  callback %d of %d lost", k, len(batch))
			batch = append(batch[:k], batch[k+1:]...)
			w.faults.fired(fault)
		case FaultCallbackDuplicate:
			k := w.rng.IntN(len(batch))
			batch = append(batch, batch[k])
			w.held = append(w.held, batch[k])
			w.faults.fired(fault)
		case FaultCallbackReorder:
			if len(batch) > 1 {
				w.rng.Shuffle(len(batch), func(i, j int) { batch[i], batch[j] = batch[j], batch[i] })
				w.faults.fired(fault)
			}
		case FaultCallbackDelay:
			k := w.rng.IntN(len(batch))
			w.held = append(w.held, batch[k:]...)
			batch = batch[:k]
			w.faults.fired(fault)
		}
	}
	for _, c := range batch {
		if in.dead {
			w.held = append(w.held, c)
			continue
		}
		if err := w.deliverCallback(in, c); err != nil {
			// Not acknowledged: the PSP sends it again later.
			w.trace.logf("  callback refused by %s: %s (%v)", in.name, paykit.ErrorCode(err), shorten(err))
			w.held = append(w.held, c)
		}
	}
	if len(batch) > 0 {
		w.trace.logf("  %d callbacks handed to %s, %d held", len(batch), in.name, len(w.held))
	}
	return len(batch)
}
