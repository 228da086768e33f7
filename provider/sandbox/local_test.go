package sandbox_test

import (
	"context"
	"fmt"
	"net/http"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/provider/sandbox"
)

// A call to a PSP in this process (Config.PSP) ends as the same call over
// HTTP does: each case runs through both adapters of one PSP, under keys
// of their own, and gives the same Results and errors but for the PSP's
// generated ids.
func TestLocalCallsEndAsOverHTTP(t *testing.T) {
	type call func(ctx context.Context, e *env, p *sandbox.Provider, k func(string) string) []any
	pay := func(e *env, key, method, country string, amount int64) paykit.PaymentRequest {
		return e.payment(key, method, country, amount)
	}
	faulted := func(op string, kind sandbox.FaultKind, after bool, fn call) call {
		return func(ctx context.Context, e *env, p *sandbox.Provider, k func(string) string) []any {
			e.psp.InjectFault(sandbox.Fault{Op: op, Kind: kind, AfterRecord: after})
			return fn(ctx, e, p, k)
		}
	}
	createPayment := func(method, country string, amount int64, opts ...string) call {
		return func(ctx context.Context, e *env, p *sandbox.Provider, k func(string) string) []any {
			req := pay(e, k("pi"), method, country, amount)
			if len(opts) > 0 {
				req.Options["bank"] = opts[0]
			}
			return []any{p.CreatePayment(ctx, req), p.InquirePayment(ctx, paykit.AttemptRef{Key: k("pi")})}
		}
	}
	createPayout := func(acct string) call {
		return func(ctx context.Context, e *env, p *sandbox.Provider, k func(string) string) []any {
			return []any{p.CreatePayout(ctx, payout(k("po"), acct)), p.InquirePayout(ctx, paykit.AttemptRef{Key: k("po")})}
		}
	}
	// paidThen makes a succeeded payment under k("pi") and refunds amount
	// of it under k("rf").
	refund := func(amount int64) call {
		return func(ctx context.Context, e *env, p *sandbox.Provider, k func(string) string) []any {
			r := p.CreatePayment(ctx, pay(e, k("pi"), "TNG", "MY", 5000))
			err := p.Approve(ctx, k("pi"))
			rf := p.CreateRefund(ctx, paykit.RefundRequest{Key: k("rf"), PaymentKey: k("pi"), PaymentRef: r.Reference, Amount: amount, Currency: "MYR"})
			return []any{r, err, rf, p.InquireRefund(ctx, paykit.AttemptRef{Key: k("rf")})}
		}
	}
	cases := map[string]call{
		"redirect":      createPayment("TNG", "MY", 1000),
		"fpx":           createPayment("FPX", "MY", 1000, "MBB0228"),
		"fpx offline":   createPayment("FPX", "MY", 1000, "BSN0601"),
		"fpx bad bank":  createPayment("FPX", "MY", 1000, "NOPE"),
		"qr":            createPayment("PROMPTPAY", "TH", 1000),
		"bank transfer": createPayment("BANK_TRANSFER", "MY", 1000),
		"declined":      createPayment("TNG", "MY", 1901),
		"held":          createPayment("CARD", "TH", 902),
		"not offered":   createPayment("PROMPTPAY", "MY", 1000),
		"no amount":     createPayment("TNG", "MY", 0),
		"conflict": func(ctx context.Context, e *env, p *sandbox.Provider, k func(string) string) []any {
			return []any{p.CreatePayment(ctx, pay(e, k("pi"), "TNG", "MY", 1000)), p.CreatePayment(ctx, pay(e, k("pi"), "TNG", "MY", 2000))}
		},
		"unknown key": func(ctx context.Context, e *env, p *sandbox.Provider, k func(string) string) []any {
			return []any{p.InquirePayment(ctx, paykit.AttemptRef{Key: k("none")}), p.InquirePayout(ctx, paykit.AttemptRef{Key: k("none")}),
				p.InquireRefund(ctx, paykit.AttemptRef{Key: k("none")}), p.CancelPayment(ctx, paykit.AttemptRef{Key: k("none")}),
				p.Approve(ctx, k("none")), p.ReturnPayout(ctx, k("none"))}
		},
		"key with a slash": func(ctx context.Context, e *env, p *sandbox.Provider, k func(string) string) []any {
			return []any{p.CreatePayment(ctx, pay(e, k("a/b c"), "TNG", "MY", 1000)), p.InquirePayment(ctx, paykit.AttemptRef{Key: k("a/b c")})}
		},
		"approve, decline and cancel": func(ctx context.Context, e *env, p *sandbox.Provider, k func(string) string) []any {
			p.CreatePayment(ctx, pay(e, k("a"), "TNG", "MY", 1000))
			p.CreatePayment(ctx, pay(e, k("d"), "TNG", "MY", 1000))
			p.CreatePayment(ctx, pay(e, k("c"), "TNG", "MY", 1000))
			return []any{p.Approve(ctx, k("a")), p.Approve(ctx, k("a")), p.Decline(ctx, k("d")),
				p.CancelPayment(ctx, paykit.AttemptRef{Key: k("c")}), p.CancelPayment(ctx, paykit.AttemptRef{Key: k("a")}),
				p.InquirePayment(ctx, paykit.AttemptRef{Key: k("a")}), p.InquirePayment(ctx, paykit.AttemptRef{Key: k("d")})}
		},
		"payout":         createPayout("123456789012"),
		"payout invalid": createPayout("000111111116"),
		"payout held":    createPayout("000222222227"),
		"payout dropped": createPayout("000333333335"),
		"payout bad":     createPayout("12"),
		"payout slow, cancel": func(ctx context.Context, e *env, p *sandbox.Provider, k func(string) string) []any {
			return []any{p.CreatePayout(ctx, payout(k("po"), "000444444440")), p.CancelPayout(ctx, paykit.AttemptRef{Key: k("po")}),
				p.InquirePayout(ctx, paykit.AttemptRef{Key: k("po")}), p.ReturnPayout(ctx, k("po"))}
		},
		"payout returned": func(ctx context.Context, e *env, p *sandbox.Provider, k func(string) string) []any {
			r := p.CreatePayout(ctx, payout(k("po"), "123456789012"))
			e.clock.Advance(testDelay)
			return []any{r, p.ReturnPayout(ctx, k("po")), p.InquirePayout(ctx, paykit.AttemptRef{Key: k("po")})}
		},
		"refund":          refund(1000),
		"refund declined": refund(1911),
		"refund held":     refund(1912),
		"refund too much": refund(9000),
		"refund nothing":  refund(0),
		"wrong API key": func(ctx context.Context, e *env, _ *sandbox.Provider, k func(string) string) []any {
			p := e.localOrHTTP(k, "guess", testTimeout)
			return []any{p.CreatePayment(ctx, pay(e, k("pi"), "TNG", "MY", 1000)), p.Approve(ctx, k("pi"))}
		},
		"cancelled before": func(ctx context.Context, e *env, p *sandbox.Provider, k func(string) string) []any {
			ctx, cancel := context.WithCancel(ctx)
			cancel()
			return []any{p.CreatePayment(ctx, pay(e, k("pi"), "TNG", "MY", 1000)), e.psp.CreateCalls(k("pi"))}
		},
		"no time left": func(ctx context.Context, e *env, _ *sandbox.Provider, k func(string) string) []any {
			p := e.localOrHTTP(k, testAPIKey, time.Nanosecond)
			return []any{p.CreatePayment(ctx, pay(e, k("pi"), "TNG", "MY", 1000)), e.psp.CreateCalls(k("pi"))}
		},
	}
	for _, op := range []string{sandbox.OpCreatePayment, sandbox.OpInquirePayment, sandbox.OpCancelPayment} {
		for _, kind := range []sandbox.FaultKind{sandbox.FaultTimeout, sandbox.FaultReset, sandbox.FaultStatus500} {
			for _, after := range []bool{false, true} {
				cases[fmt.Sprintf("%s fault %d after %t", op, kind, after)] = func(ctx context.Context, e *env, p *sandbox.Provider, k func(string) string) []any {
					first := p.CreatePayment(ctx, pay(e, k("pi0"), "TNG", "MY", 1000))
					e.psp.InjectFault(sandbox.Fault{Op: op, Kind: kind, AfterRecord: after})
					key := k("pi0")
					var r paykit.Result
					switch op {
					case sandbox.OpCreatePayment:
						key = k("pi")
						r = p.CreatePayment(ctx, pay(e, key, "TNG", "MY", 1000))
					case sandbox.OpInquirePayment:
						r = p.InquirePayment(ctx, paykit.AttemptRef{Key: key})
					default:
						r = p.CancelPayment(ctx, paykit.AttemptRef{Key: key})
					}
					return []any{first, r, p.InquirePayment(ctx, paykit.AttemptRef{Key: key}), e.psp.CreateCalls(key)}
				}
			}
		}
	}
	for _, op := range []string{sandbox.OpCreatePayout, sandbox.OpCancelPayout, sandbox.OpCreateRefund, sandbox.OpInquireRefund} {
		for _, kind := range []sandbox.FaultKind{sandbox.FaultTimeout, sandbox.FaultReset, sandbox.FaultStatus500} {
			name := fmt.Sprintf("%s fault %d", op, kind)
			switch op {
			case sandbox.OpCreatePayout:
				cases[name] = faulted(op, kind, true, createPayout("123456789012"))
			case sandbox.OpCancelPayout:
				cases[name] = func(ctx context.Context, e *env, p *sandbox.Provider, k func(string) string) []any {
					r := p.CreatePayout(ctx, payout(k("po"), "123456789012"))
					e.psp.InjectFault(sandbox.Fault{Op: op, Kind: kind})
					return []any{r, p.CancelPayout(ctx, paykit.AttemptRef{Key: k("po")}), p.InquirePayout(ctx, paykit.AttemptRef{Key: k("po")})}
				}
			default:
				cases[name] = func(ctx context.Context, e *env, p *sandbox.Provider, k func(string) string) []any {
					e.psp.InjectFault(sandbox.Fault{Op: op, Kind: kind, AfterRecord: true})
					return refund(1000)(ctx, e, p, k)
				}
			}
		}
	}

	ctx := context.Background()
	for name, fn := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			local := sandbox.New(sandbox.Config{PSP: e.psp, APIKey: testAPIKey, Timeout: testTimeout})
			// Each HTTP call on a new connection: the HTTP client resends
			// a GET whose reused connection broke, where a call in
			// process, which has no connection, is not resent.
			remote := sandbox.New(sandbox.Config{BaseURL: e.base, APIKey: testAPIKey, Timeout: testTimeout, Client: freshConns})
			run := func(prefix string, p *sandbox.Provider) []any {
				k := func(s string) string { return prefix + s }
				out := fn(ctx, e, p, k)
				// The ids the PSP made for this side's keys read as
				// placeholders.
				var ids []string
				for _, pm := range e.psp.Payments() {
					if strings.HasPrefix(pm.Key, prefix) {
						ids = append(ids, pm.ID, strings.ToUpper(strings.TrimPrefix(pm.ID, "pay_")))
					}
				}
				for _, tr := range e.psp.Transfers() {
					if strings.HasPrefix(tr.Key, prefix) {
						ids = append(ids, tr.ID)
					}
				}
				for _, rf := range e.psp.Refunds() {
					if strings.HasPrefix(rf.Key, prefix) {
						ids = append(ids, rf.ID)
					}
				}
				for i, v := range out {
					out[i] = normalize(v, prefix, ids)
				}
				return out
			}
			overHTTP := run("h-", remote)
			inProcess := run("l-", local)
			if !reflect.DeepEqual(overHTTP, inProcess) {
				t.Errorf("over HTTP:\n%#v\nin process:\n%#v", overHTTP, inProcess)
			}
		})
	}
}

// localOrHTTP is an adapter with apiKey and timeout of the kind k's side
// uses.
func (e *env) localOrHTTP(k func(string) string, apiKey string, timeout time.Duration) *sandbox.Provider {
	if strings.HasPrefix(k(""), "l-") {
		return sandbox.New(sandbox.Config{PSP: e.psp, APIKey: apiKey, Timeout: timeout})
	}
	return sandbox.New(sandbox.Config{BaseURL: e.base, APIKey: apiKey, Timeout: timeout, Client: freshConns})
}

// freshConns is a client that makes each call on a new connection.
var freshConns = &http.Client{
	Transport:     &http.Transport{DisableKeepAlives: true},
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

// tcpCause is the cause of a broken TCP call (where the socket layer adds
// the addresses), or of one in process.
var tcpCause = regexp.MustCompile(`connection ended before an answer: .*(connection reset by peer|EOF)$`)

// normalize makes v, a Result, error or count of one side, comparable
// with the other's: its ids and key prefix read as placeholders, and a QR
// payload's checksum (of the id) is dropped.
func normalize(v any, prefix string, ids []string) any {
	repl := func(s string) string {
		for _, id := range ids {
			if id != "" {
				s = strings.ReplaceAll(s, id, "ID")
			}
		}
		return strings.ReplaceAll(s, prefix, "KEY-")
	}
	switch v := v.(type) {
	case paykit.Result:
		v.Reference, v.Detail = repl(v.Reference), tcpCause.ReplaceAllString(repl(v.Detail), "connection ended before an answer: reset")
		var a paykit.ProviderAction
		if v.Action != nil {
			a = *v.Action
			a.URL, a.QRData, a.Reference = repl(a.URL), repl(a.QRData), repl(a.Reference)
			if i := strings.LastIndex(a.QRData, "6304"); i >= 0 && i == len(a.QRData)-8 {
				a.QRData = a.QRData[:i]
			}
			if len(a.AccountNumber) == 12 && strings.HasPrefix(a.AccountNumber, "88") {
				a.AccountNumber = "88 + 10 digits of the id's hash"
			}
		}
		v.Action = nil
		return struct {
			paykit.Result
			Action paykit.ProviderAction
		}{v, a}
	case error:
		return "error: " + repl(v.Error())
	}
	return v
}
