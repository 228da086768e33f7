package opn_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/internal/wire"
	"github.com/paykit/paykit/provider/opn"
	"github.com/paykit/paykit/provider/opn/opnfake"
)

// recorder serves the fake and keeps the forms of POST /charges.
type recorder struct {
	fake  http.Handler
	mu    sync.Mutex
	forms []url.Values
}

func (r *recorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if req.Method == http.MethodPost && req.URL.Path == "/charges" {
		_ = req.ParseForm()
		r.mu.Lock()
		r.forms = append(r.forms, req.PostForm)
		r.mu.Unlock()
	}
	r.fake.ServeHTTP(w, req)
}

func (r *recorder) last() url.Values {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.forms[len(r.forms)-1]
}

// setup serves a fake and returns it with an adapter calling it.
func setup(t *testing.T) (*opnfake.Fake, *recorder, *opn.Provider) {
	t.Helper()
	f := newFake(t)
	rec := &recorder{fake: f}
	srv := httptest.NewServer(rec)
	t.Cleanup(srv.Close)
	// No faults here: a longer timeout keeps QR decoding under -race
	// from ever being cut short.
	return f, rec, adapterWithin(t, f, srv.URL, 5*time.Second)
}

func TestSourcesAndActions(t *testing.T) {
	t.Parallel()
	cases := []struct {
		method, ccy, country, source, action string
		customer, options                    map[string]string
	}{
		{"PROMPTPAY", "THB", "TH", "promptpay", paykit.NextActionDisplayQRCode, nil, nil},
		{"DUITNOW_QR", "MYR", "MY", "duitnow_qr", paykit.NextActionDisplayQRCode, nil, nil},
		{"WECHAT_PAY", "THB", "TH", "wechat_pay", paykit.NextActionDisplayQRCode, nil, nil},
		{"TRUEMONEY", "THB", "TH", "truemoney", paykit.NextActionRedirectToURL, map[string]string{"phone": "0812345678"}, nil},
		{"ALIPAY", "THB", "TH", "alipay", paykit.NextActionRedirectToURL, nil, nil},
		{"TNG", "MYR", "MY", "touch_n_go", paykit.NextActionRedirectToURL, nil, nil},
		{"FPX", "MYR", "MY", "fpx", paykit.NextActionRedirectToURL, map[string]string{"email": "aisyah@example.com"}, map[string]string{"bank": "maybank2u"}},
	}
	for _, c := range cases {
		t.Run(c.method, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			_, rec, p := setup(t)
			key := "k_" + c.method
			r := p.CreatePayment(context.Background(), paykit.PaymentRequest{
				Key: key, Amount: 12345, Currency: c.ccy, Country: c.country, Method: c.method,
				Customer: c.customer, Options: c.options, ReturnURL: "https://pay.example/return",
			})
			is.Equal(r.Outcome, paykit.OutcomeRequiresAction) // r.Detail
			is.True(strings.HasPrefix(r.Reference, "chrg_test_"))
			is.Equal(r.Action.Type, c.action)
			form := rec.last()
			is.Equal(form.Get("source[type]"), c.source)
			is.Equal(form.Get("metadata[paykit_key]"), key)
			is.Equal(form.Get("return_uri"), "https://pay.example/return")
			is.Equal(form.Get("amount"), "12345")
			switch c.action {
			case paykit.NextActionDisplayQRCode:
				want := opnfake.EMVCo(c.country, c.ccy, 12345, opnfake.BillReference(r.Reference))
				is.Equal(r.Action.QRData, want) // the payload decoded from Opn's QR image
			default:
				is.True(strings.HasSuffix(r.Action.URL, "/payments/"+r.Reference+"/authorize"))
			}
			if c.method == "FPX" {
				is.Equal(form.Get("source[bank]"), "maybank2u")
				is.Equal(form.Get("source[email]"), "aisyah@example.com")
			}
			if c.method == "TRUEMONEY" {
				is.Equal(form.Get("source[phone_number]"), "0812345678")
			}
		})
	}
}

func TestValidationErrorIsRefused(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	f, _, p := setup(t)
	// TrueMoney without the payer's phone: Opn refuses it, nothing exists.
	r := p.CreatePayment(context.Background(), paykit.PaymentRequest{Key: "k_tm", Amount: 2000, Currency: "THB", Country: "TH", Method: "TRUEMONEY"})
	is.Equal(r.Outcome, paykit.OutcomeRefused)
	is.True(strings.Contains(r.Detail, "invalid_charge"))
	is.Equal(r.FailureCode, "")
	is.Equal(f.Charges("k_tm"), 0)
}

func TestWrongSecretIsRefused(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	f := newFake(t)
	srv := httptest.NewServer(f)
	defer srv.Close()
	p, err := opn.New(opn.Config{SecretKey: "skey_test_wrong", BaseURL: srv.URL, Timeout: testTimeout})
	is.NoErr(err)
	r := p.CreatePayment(context.Background(), promptpay("k_auth", 2000))
	is.Equal(r.Outcome, paykit.OutcomeRefused)
	is.True(strings.Contains(r.Detail, "authentication_failure"))
}

func TestPaymentLifecycle(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	t.Run("approved", func(t *testing.T) {
		t.Parallel()
		is := is.New(t)
		f, _, p := setup(t)
		created := p.CreatePayment(ctx, promptpay("k_ok", 2000))
		is.NoErr(f.Approve("k_ok"))
		r := p.InquirePayment(ctx, paykit.AttemptRef{Key: "k_ok", Reference: created.Reference})
		is.Equal(r.Outcome, paykit.OutcomeSucceeded)
		is.Equal(r.Reference, created.Reference)
		// Cancelling a succeeded charge leaves it succeeded.
		is.Equal(p.CancelPayment(ctx, paykit.AttemptRef{Key: "k_ok", Reference: created.Reference}).Outcome, paykit.OutcomeSucceeded)
	})
	t.Run("declined", func(t *testing.T) {
		t.Parallel()
		is := is.New(t)
		f, _, p := setup(t)
		p.CreatePayment(ctx, promptpay("k_dec", 2000))
		is.NoErr(f.Decline("k_dec"))
		r := p.InquirePayment(ctx, paykit.AttemptRef{Key: "k_dec"})
		is.Equal(r.Outcome, paykit.OutcomeFailed)
		is.Equal(r.FailureCode, paykit.FailureProviderDeclined)
		is.True(strings.Contains(r.Detail, "payment_rejected")) // the local code stays in Detail
	})
	t.Run("expired", func(t *testing.T) {
		t.Parallel()
		is := is.New(t)
		_, _, p := setup(t)
		created := p.CreatePayment(ctx, promptpay("k_exp", 2000))
		r := p.CancelPayment(ctx, paykit.AttemptRef{Key: "k_exp"})
		is.Equal(r.Outcome, paykit.OutcomeCancelled)
		is.Equal(r.Reference, created.Reference)
		is.Equal(p.InquirePayment(ctx, paykit.AttemptRef{Key: "k_exp", Reference: created.Reference}).Outcome, paykit.OutcomeCancelled)
	})
}

func TestRefunds(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	is := is.New(t)
	f, _, p := setup(t)
	pay := p.CreatePayment(ctx, promptpay("k_pay", 30000))
	is.NoErr(f.Approve("k_pay"))

	part := p.CreateRefund(ctx, paykit.RefundRequest{Key: "k_rf1", PaymentKey: "k_pay", PaymentRef: pay.Reference, Amount: 10000, Currency: "THB"})
	is.Equal(part.Outcome, paykit.OutcomeSucceeded)
	is.True(strings.HasPrefix(part.Reference, pay.Reference+"/rfnd_test_"))
	is.Equal(p.InquireRefund(ctx, paykit.AttemptRef{Key: "k_rf1", Reference: part.Reference}).Outcome, paykit.OutcomeSucceeded)
	amount, ccy, ok := f.Received("k_rf1")
	is.True(ok)
	is.Equal(amount, int64(10000))
	is.Equal(ccy, "THB")

	// Without the payment's id, the adapter finds the charge by its key.
	declined := p.CreateRefund(ctx, paykit.RefundRequest{Key: "k_rf2", PaymentKey: "k_pay", Amount: 1911, Currency: "THB"})
	is.Equal(declined.Outcome, paykit.OutcomeFailed)
	is.Equal(declined.FailureCode, paykit.RefundProviderDeclined)

	over := p.CreateRefund(ctx, paykit.RefundRequest{Key: "k_rf3", PaymentKey: "k_pay", PaymentRef: pay.Reference, Amount: 20001, Currency: "THB"})
	is.Equal(over.Outcome, paykit.OutcomeFailed)
	is.True(strings.Contains(over.Detail, "invalid_amount"))
}

func TestPayouts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	t.Run("paid", func(t *testing.T) {
		t.Parallel()
		is := is.New(t)
		f, _, p := setup(t)
		r := p.CreatePayout(ctx, payout("k_po", "1234567890"))
		is.Equal(r.Outcome, paykit.OutcomePending)
		is.True(strings.HasPrefix(r.Reference, "trsf_test_"))
		is.NoErr(f.PayTransfer("k_po"))
		is.Equal(p.InquirePayout(ctx, paykit.AttemptRef{Key: "k_po", Reference: r.Reference}).Outcome, paykit.OutcomeSucceeded)
		// Paid: it cannot be cancelled any more.
		is.Equal(p.CancelPayout(ctx, paykit.AttemptRef{Key: "k_po", Reference: r.Reference}).Outcome, paykit.OutcomeSucceeded)
	})
	t.Run("invalid account", func(t *testing.T) {
		t.Parallel()
		is := is.New(t)
		_, _, p := setup(t)
		r := p.CreatePayout(ctx, payout("k_bad", opnfake.InvalidAccount))
		is.Equal(r.Outcome, paykit.OutcomeFailed)
		is.Equal(r.FailureCode, paykit.FailureAccountInvalid)
		is.True(!strings.Contains(r.Detail, opnfake.InvalidAccount)) // no account numbers in Detail
	})
	t.Run("failed", func(t *testing.T) {
		t.Parallel()
		is := is.New(t)
		f, _, p := setup(t)
		p.CreatePayout(ctx, payout("k_fail", "1234567890"))
		is.NoErr(f.FailTransfer("k_fail"))
		r := p.InquirePayout(ctx, paykit.AttemptRef{Key: "k_fail"})
		is.Equal(r.Outcome, paykit.OutcomeFailed)
		is.Equal(r.FailureCode, paykit.FailureProviderDeclined)
	})
	t.Run("cancelled", func(t *testing.T) {
		t.Parallel()
		is := is.New(t)
		f, _, p := setup(t)
		r := p.CreatePayout(ctx, payout("k_cnl", "1234567890"))
		is.Equal(p.CancelPayout(ctx, paykit.AttemptRef{Key: "k_cnl"}).Outcome, paykit.OutcomeCancelled)
		is.Equal(p.InquirePayout(ctx, paykit.AttemptRef{Key: "k_cnl", Reference: r.Reference}).Outcome, paykit.OutcomeCancelled)
		is.True(f.PayTransfer("k_cnl") != nil) // a destroyed transfer is never paid
	})
}

func TestAmountsAboveFloatPrecision(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	f, _, p := setup(t)
	const big = 1<<53 + 1
	r := p.CreatePayment(context.Background(), paykit.PaymentRequest{Key: "k_big", Amount: big, Currency: "MYR", Country: "MY", Method: "TNG"})
	is.Equal(r.Outcome, paykit.OutcomeRequiresAction)
	amount, _, ok := f.Received("k_big")
	is.True(ok)
	is.Equal(amount, int64(big))
	po := p.CreatePayout(context.Background(), paykit.PayoutRequest{Key: "k_bigpo", Amount: big, Currency: "THB", Country: "TH", BankCode: "scb", AccountNumber: "1234567890", HolderName: "A"})
	is.Equal(po.Outcome, paykit.OutcomePending)
	amount, _, _ = f.Received("k_bigpo")
	is.Equal(amount, int64(big))
}

func TestNewRefusesBadConfig(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	_, err := opn.New(opn.Config{})
	is.True(err != nil && strings.Contains(err.Error(), "SecretKey"))
	_, err = opn.New(opn.Config{SecretKey: testSecret, Methods: []string{"PROMPTPAY", "GRABPAY"}})
	is.True(err != nil && strings.Contains(err.Error(), "GRABPAY"))
	_, err = opn.New(opn.Config{SecretKey: testSecret, WebhookSecrets: []string{"not base64!"}})
	is.True(err != nil && strings.Contains(err.Error(), "WebhookSecrets[0]"))
	_, err = opn.New(opn.Config{SecretKey: testSecret, BaseURL: "ftp://x"})
	is.True(err != nil && strings.Contains(err.Error(), "BaseURL"))
	p, err := opn.New(opn.Config{SecretKey: testSecret, Methods: []string{"TNG"}})
	is.NoErr(err)
	// A method the configuration leaves out is refused without a call.
	is.Equal(p.CreatePayment(context.Background(), promptpay("k", 2000)).Outcome, paykit.OutcomeRefused)
}

func TestRoutes(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	is.Equal(opn.Methods(), []string{"FPX", "PROMPTPAY", "TRUEMONEY", "TNG", "ALIPAY", "DUITNOW_QR", "WECHAT_PAY"})
	for _, m := range opn.Methods() {
		_, okTH := opn.Route(m, "TH")
		_, okMY := opn.Route(m, "MY")
		is.True(okTH != okMY) // each method serves one country
	}
	fpx, ok := opn.Route("FPX", "MY")
	is.True(ok)
	is.Equal(fpx.Currency, "MYR")
	is.Equal(fpx.Options, []string{"bank"})
	is.Equal(fpx.CustomerFields, []string{"email"})
	is.True(fpx.NoRefunds)
	for _, code := range []string{"MAYBANK", "CIMB", "PUBLIC", "RHB", "HLB", "AMBANK", "BSN", "BIMB"} {
		b, ok := fpx.Bank(code)
		is.True(ok) // code
		is.True(b.ProviderCode != "" && b.ProviderCode == strings.ToLower(b.ProviderCode))
	}
	pp, _ := opn.Route("PROMPTPAY", "TH")
	is.Equal(pp.NextAction, paykit.NextActionDisplayQRCode)
	tm, _ := opn.Route("TRUEMONEY", "TH")
	is.Equal(tm.CustomerFields, []string{"phone"})
	_, ok = opn.Route("GRABPAY", "MY")
	is.True(!ok)

	banks := opn.ThaiPayoutBanks()
	seen := map[string]bool{}
	for _, b := range banks {
		is.True(b.Code != wire.PromptPayBankCode) // Opn transfers go to bank accounts only
		is.True(b.RequiresHolderNameTH)
		is.True(b.ProviderCode != "")
		seen[b.Code] = true
	}
	for _, c := range wire.ThaiBankCodes {
		if c != "CLICX" && c != "EXIM" && c != "SME" {
			is.True(seen[c]) // c
		}
	}
}
