package sandbox_test

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/provider/sandbox"
)

func TestRedirectPaymentWaitsForPayer(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	e := newEnv(t)
	req := e.payment("pi_redirect", "TNG", "MY", 15000)
	r := e.prov.CreatePayment(ctx, req)
	is.Equal(r.Outcome, paykit.OutcomeRequiresAction)
	is.True(strings.HasPrefix(r.Reference, "pay_"))
	is.Equal(r.Action.Type, paykit.NextActionRedirectToURL)
	is.Equal(r.Action.URL, e.base+"/pay/"+r.Reference)
	is.True(r.Action.ExpiresAt.Equal(req.ExpiresAt))
	is.Equal(r.Detail, "state=PAYER_ACTION")
	is.Equal(r.FailureCode, "")

	again := e.prov.InquirePayment(ctx, paykit.AttemptRef{Key: "pi_redirect"})
	is.Equal(again.Outcome, paykit.OutcomeRequiresAction)
	is.Equal(again.Reference, r.Reference)
	is.Equal(*again.Action, *r.Action)
}

func TestMagicAmounts(t *testing.T) {
	ctx := context.Background()
	t.Run("901 declined at creation", func(t *testing.T) {
		is := is.New(t)
		e := newEnv(t)
		r := e.prov.CreatePayment(ctx, e.payment("pi_901", "TNG", "MY", 1901))
		is.Equal(r.Outcome, paykit.OutcomeFailed)
		is.Equal(r.FailureCode, paykit.FailureProviderDeclined)
		is.Equal(r.Detail, "state=FAILED error=ERR_DECLINED")
		is.True(r.Reference != "")
		is.Equal(e.prov.InquirePayment(ctx, paykit.AttemptRef{Key: "pi_901"}).Outcome, paykit.OutcomeFailed)
	})
	for _, tc := range []struct {
		amount  int64
		outcome paykit.Outcome
		failure string
	}{
		{902, paykit.OutcomeSucceeded, ""},
		{3903, paykit.OutcomeFailed, paykit.FailureProviderDeclined},
	} {
		t.Run(fmt.Sprintf("%d times out then settles", tc.amount), func(t *testing.T) {
			is := is.New(t)
			e := newEnv(t)
			start := time.Now()
			r := e.prov.CreatePayment(ctx, e.payment("pi_t", "CARD", "TH", tc.amount))
			is.Equal(r.Outcome, paykit.OutcomeUnknown)
			is.True(strings.Contains(r.Detail, "no answer within 300ms"))
			is.True(time.Since(start) < 3*time.Second) // the held request ended with the client
			is.Equal(e.psp.PaymentCount(), 1)          // recorded before holding

			p := e.prov.InquirePayment(ctx, paykit.AttemptRef{Key: "pi_t"})
			is.Equal(p.Outcome, paykit.OutcomePending)
			is.Equal(p.Detail, "state=PENDING")
			// A retry under the key is answered at once with the attempt.
			retry := e.prov.CreatePayment(ctx, e.payment("pi_t", "CARD", "TH", tc.amount))
			is.Equal(retry.Outcome, paykit.OutcomePending)
			is.Equal(retry.Reference, p.Reference)

			e.clock.Advance(testDelay - time.Millisecond)
			is.Equal(e.prov.InquirePayment(ctx, paykit.AttemptRef{Key: "pi_t"}).Outcome, paykit.OutcomePending)
			e.clock.Advance(time.Millisecond)
			final := e.prov.InquirePayment(ctx, paykit.AttemptRef{Key: "pi_t"})
			is.Equal(final.Outcome, tc.outcome)
			is.Equal(final.FailureCode, tc.failure)
			is.Equal(e.psp.CreateCalls("pi_t"), 2)
			is.Equal(e.psp.PaymentCount(), 1)
		})
	}
}

func TestPayerApproveAndDeclineThroughAdapter(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	e := newEnv(t)
	e.prov.CreatePayment(ctx, e.payment("pi_a", "GRABPAY", "MY", 5000))
	e.prov.CreatePayment(ctx, e.payment("pi_d", "GRABPAY", "MY", 5000))

	is.NoErr(e.prov.Approve(ctx, "pi_a"))
	is.Equal(e.prov.InquirePayment(ctx, paykit.AttemptRef{Key: "pi_a"}).Outcome, paykit.OutcomeSucceeded)
	is.NoErr(e.prov.Decline(ctx, "pi_d"))
	d := e.prov.InquirePayment(ctx, paykit.AttemptRef{Key: "pi_d"})
	is.Equal(d.Outcome, paykit.OutcomeFailed)
	is.Equal(d.FailureCode, paykit.FailureProviderDeclined)

	err := e.prov.Decline(ctx, "pi_a") // the payer already chose
	is.True(err != nil && strings.Contains(err.Error(), "ERR_STATE"))
	is.Equal(e.prov.InquirePayment(ctx, paykit.AttemptRef{Key: "pi_a"}).Outcome, paykit.OutcomeSucceeded)
	err = e.prov.Approve(ctx, "pi_none")
	is.True(err != nil && strings.Contains(err.Error(), "ERR_NOT_FOUND"))
}

func TestIdempotentCreate(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	e := newEnv(t)
	req := e.payment("pi_idem", "BOOST", "MY", 4200)
	first := e.prov.CreatePayment(ctx, req)
	second := e.prov.CreatePayment(ctx, req)
	is.Equal(first.Outcome, paykit.OutcomeRequiresAction)
	is.Equal(second.Outcome, paykit.OutcomeRequiresAction)
	is.Equal(second.Reference, first.Reference)
	is.Equal(e.psp.CreateCalls("pi_idem"), 2)
	is.Equal(e.psp.PaymentCount(), 1)

	changed := req
	changed.Amount = 4300
	r := e.prov.CreatePayment(ctx, changed)
	is.Equal(r.Outcome, paykit.OutcomeUnknown) // never a failure
	is.True(strings.Contains(r.Detail, "http 409 ERR_IDEMPOTENCY"))
	is.Equal(e.psp.PaymentCount(), 1)
	is.Equal(e.prov.InquirePayment(ctx, paykit.AttemptRef{Key: "pi_idem"}).Reference, first.Reference)
}

// tlvs parses EMVCo data objects: two-digit id, two-digit length, value.
func tlvs(t *testing.T, s string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for len(s) > 0 {
		if len(s) < 4 {
			t.Fatalf("truncated data object %q", s)
		}
		var n int
		if _, err := fmt.Sscanf(s[2:4], "%02d", &n); err != nil || len(s) < 4+n {
			t.Fatalf("bad length in %q", s)
		}
		out[s[:2]] = s[4 : 4+n]
		s = s[4+n:]
	}
	return out
}

// crcCCITTFalse is an independent CRC-16/CCITT-FALSE, table driven.
func crcCCITTFalse(data string) uint16 {
	var table [256]uint16
	for i := range table {
		c := uint16(i) << 8
		for range 8 {
			if c&0x8000 != 0 {
				c = c<<1 ^ 0x1021
			} else {
				c <<= 1
			}
		}
		table[i] = c
	}
	crc := uint16(0xFFFF)
	for i := 0; i < len(data); i++ {
		crc = crc<<8 ^ table[byte(crc>>8)^data[i]]
	}
	return crc
}

func TestQRPaymentsCarryEMVCoPayloads(t *testing.T) {
	ctx := context.Background()
	is := is.New(t)
	is.Equal(crcCCITTFalse("123456789"), uint16(0x29B1)) // the catalogue check value
	for _, tc := range []struct {
		method, country, ccy, template string
	}{
		{"PROMPTPAY", "TH", "764", "30"},
		{"DUITNOW_QR", "MY", "458", "26"},
	} {
		t.Run(tc.method, func(t *testing.T) {
			is := is.New(t)
			e := newEnv(t)
			r := e.prov.CreatePayment(ctx, e.payment("pi_qr", tc.method, tc.country, 123456))
			is.Equal(r.Outcome, paykit.OutcomeRequiresAction)
			is.Equal(r.Action.Type, paykit.NextActionDisplayQRCode)
			is.Equal(r.Action.URL, "")
			qr := r.Action.QRData
			is.True(strings.HasPrefix(qr, "000201010212")) // format 01, dynamic
			is.Equal(qr[len(qr)-8:len(qr)-4], "6304")
			is.Equal(fmt.Sprintf("%04X", crcCCITTFalse(qr[:len(qr)-4])), qr[len(qr)-4:])
			objs := tlvs(t, qr)
			is.Equal(objs["54"], "1234.56")
			is.Equal(objs["53"], tc.ccy)
			is.Equal(objs["58"], tc.country)
			is.Equal(objs["59"], "SANDBOX PSP")
			is.True(objs[tc.template] != "")

			broken := strings.Replace(qr, "1234.56", "1234.57", 1)
			is.True(fmt.Sprintf("%04X", crcCCITTFalse(broken[:len(broken)-4])) != broken[len(broken)-4:])
		})
	}
}

func TestBankTransferInstructions(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	e := newEnv(t)
	r := e.prov.CreatePayment(ctx, e.payment("pi_va", "BANK_TRANSFER", "TH", 99000))
	is.Equal(r.Outcome, paykit.OutcomeRequiresAction)
	a := r.Action
	is.Equal(a.Type, paykit.NextActionBankTransferInstructions)
	is.Equal(a.BankName, "Kasikornbank")
	is.True(regexp.MustCompile(`^88\d{10}$`).MatchString(a.AccountNumber))
	is.True(a.AccountHolder != "")
	is.True(a.Reference != "")
	is.Equal(*e.prov.InquirePayment(ctx, paykit.AttemptRef{Key: "pi_va"}).Action, *a) // stable
	is.NoErr(e.prov.Approve(ctx, "pi_va"))
	is.Equal(e.prov.InquirePayment(ctx, paykit.AttemptRef{Key: "pi_va"}).Outcome, paykit.OutcomeSucceeded)
}

func TestUnpaidAttemptExpires(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	e := newEnv(t)
	req := e.payment("pi_exp", "ALIPAY", "MY", 1000)
	req.ExpiresAt = e.clock.Now().Add(10 * time.Minute)
	e.prov.CreatePayment(ctx, req)
	e.clock.Advance(10*time.Minute - time.Millisecond)
	is.Equal(e.prov.InquirePayment(ctx, paykit.AttemptRef{Key: "pi_exp"}).Outcome, paykit.OutcomeRequiresAction)
	e.clock.Advance(time.Millisecond)
	r := e.prov.InquirePayment(ctx, paykit.AttemptRef{Key: "pi_exp"})
	is.Equal(r.Outcome, paykit.OutcomeCancelled) // paykit makes it expired: no cancel was asked
	is.Equal(r.Detail, "state=EXPIRED")
	is.True(e.prov.Approve(ctx, "pi_exp") != nil) // too late for the payer

	// Without an expiry the PSP gives the payer 30 minutes.
	req = e.payment("pi_default", "ALIPAY", "MY", 1000)
	req.ExpiresAt = time.Time{}
	is.True(e.prov.CreatePayment(ctx, req).Action.ExpiresAt.Equal(e.clock.Now().Add(30 * time.Minute)))
}

func TestFPXBanksAndPayerFields(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	e := newEnv(t)
	req := e.payment("pi_fpx_ok", "FPX", "MY", 15000)
	req.Options["bank"] = "MBB0228"
	is.Equal(e.prov.CreatePayment(ctx, req).Outcome, paykit.OutcomeRequiresAction)

	req = e.payment("pi_fpx_offline", "FPX", "MY", 15000)
	req.Options["bank"] = "BSN0601"
	r := e.prov.CreatePayment(ctx, req)
	is.Equal(r.Outcome, paykit.OutcomeFailed)
	is.Equal(r.FailureCode, paykit.FailureProviderDeclined)
	is.Equal(r.Detail, "state=FAILED error=ERR_BANK_OFFLINE")

	req = e.payment("pi_fpx_badbank", "FPX", "MY", 15000)
	req.Options["bank"] = "MAYBANK" // a canonical code: the route should have mapped it
	r = e.prov.CreatePayment(ctx, req)
	is.Equal(r.Outcome, paykit.OutcomeUnknown)
	is.True(strings.Contains(r.Detail, "http 400 ERR_VALIDATION"))

	req = e.payment("pi_card_noemail", "CARD", "MY", 15000)
	delete(req.Customer, "email")
	r = e.prov.CreatePayment(ctx, req)
	is.Equal(r.Outcome, paykit.OutcomeUnknown)
	is.True(strings.Contains(r.Detail, "payer.email is required"))

	req = e.payment("pi_tng_noemail", "TNG", "MY", 15000)
	delete(req.Customer, "email")
	is.Equal(e.prov.CreatePayment(ctx, req).Outcome, paykit.OutcomeRequiresAction)
}

func TestCancelPayment(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	e := newEnv(t)
	e.prov.CreatePayment(ctx, e.payment("pi_c", "EMONEI", "MY", 1000))
	r := e.prov.CancelPayment(ctx, paykit.AttemptRef{Key: "pi_c"})
	is.Equal(r.Outcome, paykit.OutcomeCancelled)
	is.Equal(r.Detail, "state=CANCELLED cancel_requested")
	is.Equal(e.prov.CancelPayment(ctx, paykit.AttemptRef{Key: "pi_c"}).Outcome, paykit.OutcomeCancelled) // again: same answer
	is.True(e.prov.Approve(ctx, "pi_c") != nil)

	e.prov.CreatePayment(ctx, e.payment("pi_paid", "EMONEI", "MY", 1000))
	is.NoErr(e.prov.Approve(ctx, "pi_paid"))
	is.Equal(e.prov.CancelPayment(ctx, paykit.AttemptRef{Key: "pi_paid"}).Outcome, paykit.OutcomeSucceeded) // too late

	// A pending attempt is already at the bank: the cancel is noted, and it
	// settles as it would have.
	e.prov.CreatePayment(ctx, e.payment("pi_pending", "EMONEI", "MY", 902))
	r = e.prov.CancelPayment(ctx, paykit.AttemptRef{Key: "pi_pending"})
	is.Equal(r.Outcome, paykit.OutcomePending)
	is.Equal(r.Detail, "state=PENDING cancel_requested")
	e.clock.Advance(testDelay)
	is.Equal(e.prov.InquirePayment(ctx, paykit.AttemptRef{Key: "pi_pending"}).Outcome, paykit.OutcomeSucceeded)

	is.Equal(e.prov.CancelPayment(ctx, paykit.AttemptRef{Key: "pi_none"}).Outcome, paykit.OutcomeNotFound)
}

func TestInquiryOutcomesWithoutAttempt(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	e := newEnv(t)
	r := e.prov.InquirePayment(ctx, paykit.AttemptRef{Key: "pi_never"})
	is.Equal(r.Outcome, paykit.OutcomeNotFound)
	is.True(strings.Contains(r.Detail, "ERR_NOT_FOUND"))

	// A 404 that is not the PSP's word about the key (a wrong base URL)
	// proves nothing.
	lost := sandbox.New(sandbox.Config{BaseURL: e.srv.URL + "/elsewhere", APIKey: testAPIKey, Timeout: testTimeout})
	r = lost.InquirePayment(ctx, paykit.AttemptRef{Key: "pi_never"})
	is.Equal(r.Outcome, paykit.OutcomeUnknown)
	is.True(strings.HasPrefix(r.Detail, "http 404"))
	unrouted := sandbox.New(sandbox.Config{BaseURL: e.base + "/api/v0", APIKey: testAPIKey, Timeout: testTimeout})
	r = unrouted.InquirePayment(ctx, paykit.AttemptRef{Key: "pi_never"})
	is.Equal(r.Outcome, paykit.OutcomeUnknown)
	is.Equal(r.Detail[:len("http 404 ERR_NO_ROUTE")], "http 404 ERR_NO_ROUTE")

	// A wrong API key: unknown, never failed.
	intruder := sandbox.New(sandbox.Config{BaseURL: e.base, APIKey: "guess", Timeout: testTimeout})
	r = intruder.CreatePayment(ctx, e.payment("pi_x", "TNG", "MY", 1000))
	is.Equal(r.Outcome, paykit.OutcomeUnknown)
	is.True(strings.Contains(r.Detail, "http 401 ERR_AUTH"))
	is.Equal(e.psp.PaymentCount(), 0)
}

func TestRequestsThePSPDoesNotServeAreNotSent(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	e := newEnv(t)
	for _, req := range []paykit.PaymentRequest{
		e.payment("pi_pp_my", "PROMPTPAY", "MY", 1000),
		e.payment("pi_sg", "CARD", "SG", 1000),
		func() paykit.PaymentRequest {
			r := e.payment("pi_usd", "CARD", "MY", 1000)
			r.Currency = "USD"
			return r
		}(),
	} {
		r := e.prov.CreatePayment(ctx, req)
		is.Equal(r.Outcome, paykit.OutcomeFailed)
		is.Equal(r.FailureCode, paykit.FailureProviderError)
		is.True(strings.HasPrefix(r.Detail, "not sent"))
		is.Equal(e.psp.CreateCalls(req.Key), 0)
	}
	po := payout("po_sg", "123456789012")
	po.Country, po.Currency = "SG", "SGD"
	r := e.prov.CreatePayout(ctx, po)
	is.Equal(r.Outcome, paykit.OutcomeFailed)
	is.Equal(r.FailureCode, paykit.FailureProviderError)
	is.Equal(e.psp.CreateCalls("po_sg"), 0)
}

func TestRefusedConnectionIsUnacknowledged(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	e := newEnv(t)
	e.srv.Close()
	for name, r := range map[string]paykit.Result{
		"create payment": e.prov.CreatePayment(ctx, e.payment("pi_down", "TNG", "MY", 1000)),
		"inquire":        e.prov.InquirePayment(ctx, paykit.AttemptRef{Key: "pi_down"}),
		"create payout":  e.prov.CreatePayout(ctx, payout("po_down", "123456789012")),
		"cancel payout":  e.prov.CancelPayout(ctx, paykit.AttemptRef{Key: "po_down"}),
	} {
		if r.Outcome != paykit.OutcomeUnacknowledged || !strings.HasPrefix(r.Detail, "not sent") {
			t.Errorf("%s: got %s %q, want unacknowledged, not sent", name, r.Outcome, r.Detail)
		}
	}
	is.True(e.prov.Approve(ctx, "pi_down") != nil)
}

func TestAPIRejectsBadRequests(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	post := func(path, key, body string) (int, string) { return e.raw(t, http.MethodPost, path, key, body) }
	status, body := post("/api/payments", "", `{}`)
	is.Equal(status, 400)
	is.True(strings.Contains(body, "Idempotency-Key"))
	status, body = post("/api/payments", "k1", `{"amount_minor":1000,"ccy":"MYR","country":"MY","channel":"ewallet_tngd","payer":{"name":"A"},"surprise":1}`)
	is.Equal(status, 400)
	is.True(strings.Contains(body, "surprise"))
	status, _ = post("/api/payments", "k2", `{"amount_minor":1000,"ccy":"MYR","country":"MY","channel":"ewallet_tngd","payer":{"name":"A"},"return_url":"javascript:alert(1)"}`)
	is.Equal(status, 400)
	status, _ = post("/api/payments", "k3", `{"amount_minor":1000,"ccy":"MYR","country":"MY","channel":"ewallet_tngd","payer":{"name":"A"}}`)
	is.Equal(status, 201)
	is.Equal(e.psp.PaymentCount(), 1)
}
