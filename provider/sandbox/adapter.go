package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/propagation"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/internal/readall"
)

// Name is the Provider name the sandbox's routes use.
const Name = "sandbox"

// Config configures the adapter.
type Config struct {
	// BaseURL is the PSP's base URL for server-to-server calls, e.g. an
	// httptest server's URL or "http://127.0.0.1:8080/sandbox".
	BaseURL string
	// APIKey is sent as a bearer token, and verifies callbacks.
	APIKey string
	// Client sends the calls; default a client that follows no redirects.
	// Its own Timeout, if any, must not be shorter than Timeout.
	Client *http.Client
	// Timeout bounds each call, answer included; default 10s.
	Timeout time.Duration
	// PSP, when set, is a PSP in this process, which the adapter then
	// calls directly: no HTTP request, no JSON, and BaseURL and Client are
	// not used. Each way a call can end reads as it would over HTTP: a
	// wrong APIKey is a 401, a held request runs into Timeout (unknown), a
	// dropped one is a connection reset (unacknowledged).
	PSP *PSP
}

// Provider is the adapter: it implements paykit.Provider,
// paykit.PayoutProvider, paykit.RefundProvider, paykit.PayerSimulator,
// paykit.ReturnSimulator, paykit.DisputeProvider,
// paykit.DisputeSimulator, paykit.SettlementReporter and
// paykit.SettlementSimulator by calling the PSP over HTTP (or, with
// Config.PSP, in this process), and declares them in Capabilities. It is the template for real adapters: every way a call can end is
// classified into an Outcome, and only the PSP's explicit word ever makes
// an attempt failed.
type Provider struct {
	apiKey  string // verifies callbacks
	conn    conn
	timeout time.Duration
}

// conn carries the adapter's calls to the PSP.
type conn interface {
	// call makes one call of rt about the record under key (a create's
	// idempotency key) with the request body, if any, within deadline.
	call(ctx context.Context, deadline time.Time, rt route, key string, body any) reply
}

var (
	_ paykit.Provider        = (*Provider)(nil)
	_ paykit.PayoutProvider  = (*Provider)(nil)
	_ paykit.RefundProvider  = (*Provider)(nil)
	_ paykit.PayerSimulator  = (*Provider)(nil)
	_ paykit.ReturnSimulator = (*Provider)(nil)

	_ paykit.DisputeProvider     = (*Provider)(nil)
	_ paykit.DisputeSimulator    = (*Provider)(nil)
	_ paykit.SettlementReporter  = (*Provider)(nil)
	_ paykit.SettlementSimulator = (*Provider)(nil)
)

// New returns an adapter for the PSP at cfg.BaseURL, or for cfg.PSP.
func New(cfg Config) *Provider {
	p := &Provider{apiKey: cfg.APIKey, timeout: cfg.Timeout}
	if p.timeout <= 0 {
		p.timeout = 10 * time.Second
	}
	if cfg.PSP != nil {
		p.conn = &localConn{psp: cfg.PSP, apiKey: cfg.APIKey, timeout: p.timeout}
		return p
	}
	c := &httpConn{baseURL: strings.TrimRight(cfg.BaseURL, "/"), client: cfg.Client, timeout: p.timeout}
	if cfg.APIKey != "" {
		c.auth = "Bearer " + cfg.APIKey
	}
	if c.client == nil {
		c.client = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	p.conn = c
	return p
}

// send makes one call of rt within the Timeout.
func (p *Provider) send(ctx context.Context, rt route, key string, body any) reply {
	return p.conn.call(ctx, time.Now().Add(p.timeout), rt, key, body)
}

// Capabilities declares everything the sandbox does: payments with
// cancels, refunds, payouts, payer simulation, payout returns, disputes
// and their simulation, and settlement reports and their simulation.
func (p *Provider) Capabilities() paykit.Capabilities {
	return paykit.CapPayments | paykit.CapCancel | paykit.CapRefunds | paykit.CapPayouts |
		paykit.CapPayerSimulation | paykit.CapReturns |
		paykit.CapDisputes | paykit.CapDisputeSimulation | paykit.CapSettlement | paykit.CapSettlementSimulation
}

// CreatePayment starts the attempt under req.Key at the PSP, or gets the
// one the PSP already has under it. A method or country the PSP does not
// offer is failed (provider_error) without a call.
func (p *Provider) CreatePayment(ctx context.Context, req paykit.PaymentRequest) paykit.Result {
	ch, ok := channels[req.Country][req.Method]
	if !ok || currencies[req.Country] != req.Currency {
		return notOffered(fmt.Sprintf("%s in %s/%s", req.Method, req.Country, req.Currency))
	}
	body := paymentCreate{
		AmountMinor: req.Amount, Ccy: req.Currency, Country: req.Country, Channel: ch.code,
		Bank: req.Options["bank"], ReturnURL: req.ReturnURL, Merchant: req.Merchant,
	}
	// Only the payer fields the PSP uses leave the service.
	for _, f := range []string{"name", "email"} {
		if v := req.Customer[f]; v != "" {
			if body.Payer == nil {
				body.Payer = map[string]string{}
			}
			body.Payer[f] = v
		}
	}
	if !req.ExpiresAt.IsZero() {
		t := req.ExpiresAt.UTC()
		body.ExpiresAt = &t
	}
	return classify(p.send(ctx, routeCreatePayment, req.Key, body), paymentResult)
}

// InquirePayment asks the PSP about the attempt under key.
func (p *Provider) InquirePayment(ctx context.Context, ref paykit.AttemptRef) paykit.Result {
	return classify(p.send(ctx, routeInquirePayment, ref.Key, nil), paymentResult)
}

// CancelPayment asks the PSP to cancel the attempt under key and reports
// its state afterwards (cancelled, or still pending, or already final).
func (p *Provider) CancelPayment(ctx context.Context, ref paykit.AttemptRef) paykit.Result {
	return classify(p.send(ctx, routeCancelPayment, ref.Key, nil), paymentResult)
}

// Approve acts as the payer approving the attempt under key on the PSP's
// page.
func (p *Provider) Approve(ctx context.Context, key string) error {
	return p.command(ctx, routeApprovePayment, key)
}

// Decline acts as the payer declining the attempt under key.
func (p *Provider) Decline(ctx context.Context, key string) error {
	return p.command(ctx, routeDeclinePayment, key)
}

// CreatePayout sends the transfer under req.Key, or gets the one the PSP
// already has under it. A country the PSP does not pay out to is failed
// (provider_error) without a call.
func (p *Provider) CreatePayout(ctx context.Context, req paykit.PayoutRequest) paykit.Result {
	if c, ok := currencies[req.Country]; !ok || c != req.Currency {
		return notOffered(fmt.Sprintf("payouts in %s/%s", req.Country, req.Currency))
	}
	body := payoutCreate{
		AmountMinor: req.Amount, Ccy: req.Currency, Country: req.Country, Bank: req.BankCode,
		BeneficiaryAcct: req.AccountNumber, BeneficiaryName: req.HolderName, BeneficiaryNameTH: req.HolderNameTH,
	}
	return classify(p.send(ctx, routeCreatePayout, req.Key, body), transferResult)
}

// InquirePayout asks the PSP about the transfer under key.
func (p *Provider) InquirePayout(ctx context.Context, ref paykit.AttemptRef) paykit.Result {
	return classify(p.send(ctx, routeInquirePayout, ref.Key, nil), transferResult)
}

// CancelPayout asks the PSP to stop the transfer under key. The PSP may
// accept and still answer PROCESSING (pending) until the cancel is done.
func (p *Provider) CancelPayout(ctx context.Context, ref paykit.AttemptRef) paykit.Result {
	return classify(p.send(ctx, routeCancelPayout, ref.Key, nil), transferResult)
}

// ReturnPayout makes the succeeded transfer under key come back (sandbox
// only: the beneficiary bank returned the funds); an inquiry then answers
// OutcomeReturned. paykit's payout return test helper calls it.
func (p *Provider) ReturnPayout(ctx context.Context, key string) error {
	return p.command(ctx, routeReturnPayout, key)
}

// CreateRefund refunds req.Amount of the payment attempt created under
// req.PaymentKey (or, without it, the PSP's attempt req.PaymentRef), under
// the refund's own req.Key: the same key gets the refund the PSP already
// has. The PSP's refusal (no such successful payment, more than is left
// to refund, a channel that cannot refund) is failed, provider_error:
// the PSP recorded nothing.
func (p *Provider) CreateRefund(ctx context.Context, req paykit.RefundRequest) paykit.Result {
	body := refundCreate{PaymentKey: req.PaymentKey, AmountMinor: req.Amount, Ccy: req.Currency}
	if req.PaymentKey == "" {
		body.PaymentID = req.PaymentRef
	}
	rp := p.send(ctx, routeCreateRefund, req.Key, body)
	if rp.failed == nil && rp.status == http.StatusUnprocessableEntity {
		switch errorOf(rp).Code {
		case errRefundPayment, errRefundAmount, errRefundUnsupported:
			return paykit.Result{Outcome: paykit.OutcomeFailed, FailureCode: paykit.RefundProviderError, Detail: errorDetail(rp)}
		}
	}
	return classify(rp, refundResult)
}

// InquireRefund asks the PSP about the refund under key.
func (p *Provider) InquireRefund(ctx context.Context, ref paykit.AttemptRef) paykit.Result {
	return classify(p.send(ctx, routeInquireRefund, ref.Key, nil), refundResult)
}

// notOffered is the result of a request the adapter does not send.
func notOffered(what string) paykit.Result {
	return paykit.Result{Outcome: paykit.OutcomeFailed, FailureCode: paykit.FailureProviderError,
		Detail: "not sent: the sandbox PSP does not offer " + what}
}

// command sends a payer or test action; anything but a 2xx is an error.
func (p *Provider) command(ctx context.Context, rt route, key string) error {
	return answerError(p.send(ctx, rt, key, nil))
}

// answerError is the error of a call that got no 2xx answer; nil for one
// that did.
func answerError(rp reply) error {
	switch {
	case rp.failed != nil:
		return fmt.Errorf("sandbox: %s: %s", rp.failed.Outcome, rp.failed.Detail)
	case rp.status/100 != 2:
		return fmt.Errorf("sandbox: %s", errorDetail(rp))
	}
	return nil
}

// answerOf is the 2xx answer of rp as a T; any other end of the call is
// an error.
func answerOf[T any](rp reply) (T, error) {
	if err := answerError(rp); err != nil {
		var zero T
		return zero, err
	}
	v, err := answerAs[T](rp)
	if err != nil {
		return v, fmt.Errorf("sandbox: http %d, unreadable answer: %w", rp.status, err)
	}
	return v, nil
}

// reply is how one call ended: an answer, or (failed) the outcome of
// a call that got no usable answer.
type reply struct {
	status int
	body   []byte // the answer's JSON, over HTTP
	value  any    // the answer itself, from a PSP in this process
	failed *paykit.Result
}

// maxAnswer bounds what the adapter reads of an answer.
const maxAnswer = 1 << 20

// httpConn calls the PSP over HTTP.
type httpConn struct {
	baseURL string
	auth    string // the Authorization header: "Bearer " + APIKey, or none
	client  *http.Client
	timeout time.Duration
}

// call makes one call and classifies transport
// failures by how far the call got:
//   - nothing sent (dial error, connection refused): Unacknowledged; no
//     attempt can come of this call, and a retry is safe;
//   - sent, no answer within the Timeout: Unknown; the attempt may exist;
//   - sent, the connection ended before an answer (reset, EOF):
//     Unacknowledged; the attempt may exist, callers retry with the same
//     key.
//
// The HTTP client's transparent retry of requests carrying an
// Idempotency-Key is switched off, so that every failure is seen here; a
// request that never left on a reused keep-alive connection is resent
// once, which is what the client would do for any request.
func (p *httpConn) call(ctx context.Context, deadline time.Time, rt route, key string, body any) reply {
	ctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	method, path, idemKey := routes[rt].method, rt.path(key), ""
	if rt.creates() {
		idemKey = key
	}
	if q, ok := body.(interface{ query() url.Values }); ok && method == http.MethodGet {
		if v := q.query(); len(v) > 0 {
			path += "?" + v.Encode()
		}
		body = nil
	}
	var payload []byte
	if body != nil {
		var err error
		if payload, err = json.Marshal(body); err != nil {
			return failed(paykit.OutcomeUnacknowledged, "not sent: encode: "+err.Error())
		}
	}
	for try := 0; ; try++ {
		var wrote, reused atomic.Bool
		trace := &httptrace.ClientTrace{
			GotConn:      func(i httptrace.GotConnInfo) { reused.Store(i.Reused) },
			WroteRequest: func(i httptrace.WroteRequestInfo) { wrote.Store(i.Err == nil) },
		}
		req, err := http.NewRequestWithContext(httptrace.WithClientTrace(ctx, trace), method, p.baseURL+path, bytes.NewReader(payload))
		if err != nil {
			return failed(paykit.OutcomeUnacknowledged, "not sent: "+err.Error())
		}
		req.GetBody = nil // no transparent replay: see above
		if body == nil {
			req.Body = http.NoBody
		} else {
			req.Header.Set("Content-Type", "application/json")
		}
		req.Header.Set("Accept", "application/json")
		if p.auth != "" {
			req.Header.Set("Authorization", p.auth)
		}
		if idemKey != "" {
			req.Header.Set("Idempotency-Key", idemKey)
		}
		// The PSP is paykit's own code: it joins the call's trace.
		propagation.TraceContext{}.Inject(ctx, propagation.HeaderCarrier(req.Header))
		resp, err := p.client.Do(req)
		if err != nil {
			if !wrote.Load() && reused.Load() && ctx.Err() == nil && try == 0 {
				continue // a stale keep-alive connection; nothing reached the PSP
			}
			return transportFailure(ctx, err, wrote.Load(), p.timeout)
		}
		b, err := readall.ReadAll(io.LimitReader(resp.Body, maxAnswer), resp.ContentLength, maxAnswer)
		resp.Body.Close()
		if err != nil {
			if resp.StatusCode >= 500 {
				return failed(paykit.OutcomeUnacknowledged, fmt.Sprintf("http %d, answer cut off", resp.StatusCode))
			}
			// The PSP answered, but what it said is lost.
			return failed(paykit.OutcomeUnknown, fmt.Sprintf("http %d, answer cut off: %v", resp.StatusCode, unwrapURLError(err)))
		}
		return reply{status: resp.StatusCode, body: b}
	}
}

// transportFailure classifies a call that got no HTTP answer.
func transportFailure(ctx context.Context, err error, wrote bool, timeout time.Duration) reply {
	cause := unwrapURLError(err).Error()
	switch {
	case !wrote:
		return failed(paykit.OutcomeUnacknowledged, "not sent: "+cause)
	case ctx.Err() != nil || isTimeout(err):
		// Our deadline, the caller giving up, or a client or transport
		// timeout of the host's own: the PSP may be working on it.
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return timedOut(timeout)
		}
		return failed(paykit.OutcomeUnknown, "sent, "+cause)
	default:
		return failed(paykit.OutcomeUnacknowledged, "sent, connection ended before an answer: "+cause)
	}
}

// timedOut is the failure of a call sent and not answered within timeout.
func timedOut(timeout time.Duration) reply {
	return failed(paykit.OutcomeUnknown, fmt.Sprintf("sent, no answer within %s", timeout))
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

func failed(o paykit.Outcome, detail string) reply {
	return reply{failed: &paykit.Result{Outcome: o, Detail: detail}}
}

// unwrapURLError drops the *url.Error wrapper, whose text repeats the URL.
func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// classify turns a reply into a Result; decode reads a 2xx answer.
//   - 2xx: the PSP's state, mapped by decode;
//   - 5xx: Unacknowledged (the PSP may have recorded the attempt);
//   - 404 ERR_NOT_FOUND: NotFound, the PSP's word that no attempt exists
//     (a 404 without that code, such as a wrong base URL's, says nothing
//     about the attempt and is Unknown);
//   - any other answer (409 idempotency, 400 validation, 401, 3xx):
//     Unknown. It is never a failure: only the PSP's explicit state is.
func classify(rp reply, decode func(reply) (paykit.Result, error)) paykit.Result {
	if rp.failed != nil {
		return *rp.failed
	}
	switch {
	case rp.status/100 == 2:
		r, err := decode(rp)
		if err != nil {
			return paykit.Result{Outcome: paykit.OutcomeUnknown, Detail: fmt.Sprintf("http %d, unreadable answer: %v", rp.status, err)}
		}
		return r
	case rp.status >= 500:
		return paykit.Result{Outcome: paykit.OutcomeUnacknowledged, Detail: errorDetail(rp)}
	case rp.status == http.StatusNotFound && errorOf(rp).Code == errNotFound:
		return paykit.Result{Outcome: paykit.OutcomeNotFound, Detail: errorDetail(rp)}
	}
	return paykit.Result{Outcome: paykit.OutcomeUnknown, Detail: errorDetail(rp)}
}

// answerAs is the answer of rp as a T.
func answerAs[T any](rp reply) (T, error) {
	if rp.value == nil {
		return decodeAs[T](rp.body)
	}
	v, ok := rp.value.(T)
	if !ok {
		return v, fmt.Errorf("an answer of type %T", rp.value)
	}
	return v, nil
}

// decodeAs is the JSON answer body as a T. (Apart from answerAs, whose T
// then stays off the heap.)
func decodeAs[T any](body []byte) (T, error) {
	var v T
	err := json.Unmarshal(body, &v)
	return v, err
}

// errorOf is the error answer in rp, as far as it is one.
func errorOf(rp reply) errorView {
	var e errorView
	if rp.value != nil {
		e, _ = rp.value.(errorView)
		return e
	}
	_ = json.Unmarshal(rp.body, &e)
	return e
}

// errorDetail describes an error answer for logs: status, the PSP's code
// and (shortened) message, which never carries an account number.
func errorDetail(rp reply) string {
	e := errorOf(rp)
	d := fmt.Sprintf("http %d", rp.status)
	if e.Code != "" {
		d += " " + e.Code
	}
	if msg := e.Message; msg != "" {
		if len(msg) > 200 {
			msg = msg[:200] + "…"
		}
		d += ": " + msg
	}
	return d
}

// paymentResult maps the PSP's answer about a payment attempt.
func paymentResult(rp reply) (paykit.Result, error) {
	v, err := answerAs[paymentView](rp)
	if err != nil {
		return paykit.Result{}, err
	}
	if v.State == "" {
		return paykit.Result{}, errors.New("no state")
	}
	r := stateResult(v.State, v.ErrorCode)
	r.Reference = v.ID
	r.Detail = stateDetail(v.State, v.ErrorCode, v.CancelRequestedAt)
	switch r.Outcome {
	case paykit.OutcomeRequiresAction:
		r.Action = providerAction(v)
	case paykit.OutcomeSucceeded:
		r.Fee, r.AvailableOn = v.FeeMinor, v.AvailableOn.UTC()
	}
	return r, nil
}

// transferResult maps the PSP's answer about a transfer.
func transferResult(rp reply) (paykit.Result, error) {
	v, err := answerAs[transferView](rp)
	if err != nil {
		return paykit.Result{}, err
	}
	if v.State == "" {
		return paykit.Result{}, errors.New("no state")
	}
	r := stateResult(v.State, v.ErrorCode)
	if r.Outcome == paykit.OutcomeRequiresAction {
		// A transfer never waits for a payer: an answer this adapter does
		// not understand.
		r.Outcome = paykit.OutcomeUnknown
	}
	r.Reference = v.ID
	r.Detail = stateDetail(v.State, v.ErrorCode, v.CancelRequestedAt)
	return r, nil
}

// refundResult maps the PSP's answer about a refund.
func refundResult(rp reply) (paykit.Result, error) {
	v, err := answerAs[refundView](rp)
	if err != nil {
		return paykit.Result{}, err
	}
	if v.State == "" {
		return paykit.Result{}, errors.New("no state")
	}
	r := refundStateResult(v.State, v.ErrorCode)
	r.Reference = v.ID
	r.Detail = stateDetail(v.State, v.ErrorCode, nil)
	return r, nil
}

// refundStateResult maps a refund's local state: PROCESSING is pending,
// SUCCESS succeeded, FAILED failed (declined, or provider_error for a
// code it does not know); any other state is Unknown.
func refundStateResult(state, code string) paykit.Result {
	switch state {
	case stateProcessing:
		return paykit.Result{Outcome: paykit.OutcomePending}
	case stateSuccess:
		return paykit.Result{Outcome: paykit.OutcomeSucceeded}
	case stateFailed:
		fc := paykit.RefundProviderError
		if code == errRefundDeclined {
			fc = paykit.RefundProviderDeclined
		}
		return paykit.Result{Outcome: paykit.OutcomeFailed, FailureCode: fc}
	}
	return paykit.Result{Outcome: paykit.OutcomeUnknown}
}

// stateResult maps a local state (and error code) to paykit's outcome and
// failure code. A state it does not know is Unknown, never a guess.
func stateResult(state, code string) paykit.Result {
	switch state {
	case statePayerAction:
		return paykit.Result{Outcome: paykit.OutcomeRequiresAction}
	case statePending, stateProcessing:
		return paykit.Result{Outcome: paykit.OutcomePending}
	case stateSuccess:
		return paykit.Result{Outcome: paykit.OutcomeSucceeded}
	case stateFailed:
		return paykit.Result{Outcome: paykit.OutcomeFailed, FailureCode: failureCode(code)}
	case stateCancelled, stateExpired:
		return paykit.Result{Outcome: paykit.OutcomeCancelled}
	case stateReversed:
		return paykit.Result{Outcome: paykit.OutcomeReturned}
	}
	return paykit.Result{Outcome: paykit.OutcomeUnknown}
}

// failureCode maps the PSP's error codes to the contract's failure codes.
func failureCode(code string) string {
	switch code {
	case errDeclined, errBankOffline:
		return paykit.FailureProviderDeclined
	case errAccount:
		return paykit.FailureAccountInvalid
	}
	return paykit.FailureProviderError
}

// stateDetail keeps the local words for logs.
func stateDetail(state, code string, cancelRequestedAt *time.Time) string {
	d := "state=" + state
	if code != "" {
		d += " error=" + code
	}
	if cancelRequestedAt != nil {
		d += " cancel_requested"
	}
	return d
}

// providerAction maps what the payer must do. An action kind this adapter
// does not know gives no action (paykit then treats the attempt as
// pending).
func providerAction(v paymentView) *paykit.ProviderAction {
	pa := v.PayerAction
	if pa == nil {
		return nil
	}
	a := &paykit.ProviderAction{ExpiresAt: v.ExpiresAt.UTC()}
	switch {
	case pa.Kind == actionRedirect && pa.URL != "":
		a.Type, a.URL = paykit.NextActionRedirectToURL, pa.URL
	case pa.Kind == actionQR && pa.QRString != "":
		a.Type, a.QRData = paykit.NextActionDisplayQRCode, pa.QRString
	case pa.Kind == actionVA && pa.VA != nil:
		a.Type = paykit.NextActionBankTransferInstructions
		a.BankName, a.AccountNumber, a.AccountHolder, a.Reference = pa.VA.BankName, pa.VA.Number, pa.VA.Holder, pa.VA.Reference
	default:
		return nil
	}
	return a
}
