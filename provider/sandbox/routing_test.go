package sandbox_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/internal/wire"
	"github.com/paykit/paykit/provider/sandbox"
)

func TestDefaultRouting(t *testing.T) {
	is := is.New(t)
	rt := sandbox.DefaultRouting()
	var my, th []string
	for _, r := range rt.Payments {
		is.Equal(r.Environment, paykit.Test)
		is.Equal(r.Provider, sandbox.Name)
		switch r.Country {
		case "MY":
			is.Equal(r.Currency, "MYR")
			my = append(my, r.Method)
		case "TH":
			is.Equal(r.Currency, "THB")
			th = append(th, r.Method)
		default:
			t.Fatalf("route for %s", r.Country)
		}
		want := []string{"name"}
		if r.Method == "FPX" || r.Method == "CARD" {
			want = []string{"name", "email"}
		}
		is.Equal(r.CustomerFields, want)
		is.Equal(r.NoRefunds, r.Method == "BANK_TRANSFER") // every other route refunds
		switch r.Method {
		case "PROMPTPAY", "DUITNOW_QR":
			is.Equal(r.NextAction, paykit.NextActionDisplayQRCode)
		case "BANK_TRANSFER":
			is.Equal(r.NextAction, paykit.NextActionBankTransferInstructions)
		default:
			is.Equal(r.NextAction, paykit.NextActionRedirectToURL)
		}
	}
	is.Equal(my, []string{"FPX", "TNG", "BOOST", "GRABPAY", "DUITNOW_QR", "CARD", "BANK_TRANSFER", "ALIPAY", "WECHAT_PAY", "UNIONPAY", "UMOBILE", "EMONEI"})
	is.Equal(th, []string{"PROMPTPAY", "TRUEMONEY", "CARD", "BANK_TRANSFER"})

	fpx, ok := rt.PaymentRoute(paykit.Test, "FPX", "MY", "MYR", 100)
	is.True(ok)
	is.Equal(fpx.Options, []string{"bank"})
	may, _ := fpx.Bank("MAYBANK")
	is.Equal(may, paykit.Bank{Code: "MAYBANK", Name: "Maybank2u", ProviderCode: "MBB0228", Available: true})
	bsn, _ := fpx.Bank("BSN")
	is.True(!bsn.Available)
	_, ok = rt.PaymentRoute(paykit.Live, "FPX", "MY", "MYR", 100)
	is.True(!ok) // no live routes

	for _, code := range append(slices.Clone(wire.ThaiBankCodes), "promptpay") {
		_, b, ok := rt.PayoutRoute(paykit.Test, "TH", "THB", code, 1000)
		is.True(ok)
		is.Equal(b.RequiresHolderNameTH, code != "promptpay")
		is.True(strings.HasPrefix(b.ProviderCode, "TH-"))
	}
	for _, code := range []string{"MAYBANK", "CIMB", "PUBLIC", "RHB", "HLB", "AMBANK", "BSN", "BIMB"} {
		_, _, ok := rt.PayoutRoute(paykit.Test, "MY", "MYR", code, 1000)
		is.True(ok)
	}
	is.Equal(len(rt.Payouts[0].Banks)+len(rt.Payouts[1].Banks), len(wire.ThaiBankCodes)+1+8)
	_, _, ok = rt.PayoutRoute(paykit.Live, "TH", "THB", "KBANK", 1000)
	is.True(!ok)
}

// TestEveryRouteWorksAtThePSP sends one request down every route, as
// paykit would map it: the PSP must take each and answer with the route's
// next action.
func TestEveryRouteWorksAtThePSP(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	rt := sandbox.DefaultRouting()
	for i, r := range rt.Payments {
		req := e.payment(fmt.Sprintf("pi_route_%d", i), r.Method, r.Country, 1000)
		for _, b := range r.Banks {
			if b.Available {
				req.Options["bank"] = b.ProviderCode
			}
		}
		res := e.prov.CreatePayment(ctx, req)
		if res.Outcome != paykit.OutcomeRequiresAction || res.Action == nil || res.Action.Type != r.NextAction {
			t.Errorf("%s %s: got %s %+v (%s)", r.Country, r.Method, res.Outcome, res.Action, res.Detail)
		}
	}
	for _, pr := range rt.Payouts {
		for _, b := range pr.Banks {
			key := "po_" + pr.Country + "_" + b.Code
			res := e.prov.CreatePayout(ctx, paykit.PayoutRequest{
				Key: key, Amount: 1000, Currency: pr.Currency, Country: pr.Country, BankCode: b.ProviderCode,
				AccountNumber: "0812345678", HolderName: "Recipient", HolderNameTH: "ผู้รับ",
			})
			if res.Outcome != paykit.OutcomePending {
				t.Errorf("payout %s %s: got %s (%s)", pr.Country, b.Code, res.Outcome, res.Detail)
			}
		}
	}
}

func TestParseCallback(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	prov := sandbox.New(sandbox.Config{BaseURL: "http://psp.invalid", APIKey: testAPIKey})
	request := func(body, sig string) ([]paykit.CallbackEvent, error) {
		req := httptest.NewRequest("POST", "/providers/sandbox", strings.NewReader(body))
		if sig != "" {
			req.Header.Set(sandbox.SignatureHeader, sig)
		}
		return prov.ParseCallback(ctx, req)
	}
	hexMAC := func(key, body string) string {
		m := hmac.New(sha256.New, []byte(key))
		m.Write([]byte(body))
		return hex.EncodeToString(m.Sum(nil))
	}

	body := `{"id":"evt_1","kind":"payout","key":"po_1","state":"FAILED","error_code":"ERR_ACCOUNT"}`
	evs, err := request(body, hexMAC(testAPIKey, body))
	is.NoErr(err)
	is.Equal(len(evs), 1)
	is.Equal(evs[0].ID, "evt_1")
	is.Equal(evs[0].Kind, "payout")
	is.Equal(evs[0].Key, "po_1")
	is.Equal(evs[0].Result.Outcome, paykit.OutcomeFailed)
	is.Equal(evs[0].Result.FailureCode, paykit.FailureAccountInvalid)

	body = `{"id":"evt_2","kind":"payment","key":"pi_1","state":"SUCCESS"}`
	evs, err = request(body, strings.ToUpper(hexMAC(testAPIKey, body)))
	is.NoErr(err)
	is.Equal(evs[0].Result.Outcome, paykit.OutcomeSucceeded)

	refund := `{"id":"evt_3","kind":"refund","key":"re_1","state":"FAILED","error_code":"ERR_REFUND_DECLINED"}`
	evs, err = request(refund, hexMAC(testAPIKey, refund))
	is.NoErr(err)
	is.Equal(evs[0].Kind, "refund")
	is.Equal(evs[0].Key, "re_1")
	is.Equal(evs[0].Result.Outcome, paykit.OutcomeFailed)
	is.Equal(evs[0].Result.FailureCode, paykit.RefundProviderDeclined)

	for name, tc := range map[string][2]string{
		"no signature":   {body, ""},
		"wrong key":      {body, hexMAC("other", body)},
		"changed body":   {strings.Replace(body, "SUCCESS", "FAILED", 1), hexMAC(testAPIKey, body)},
		"not hex":        {body, "zz"},
		"bad kind":       {`{"id":"e","kind":"transfer","key":"k","state":"SUCCESS"}`, hexMAC(testAPIKey, `{"id":"e","kind":"transfer","key":"k","state":"SUCCESS"}`)},
		"not json":       {`nope`, hexMAC(testAPIKey, `nope`)},
		"unknown fields": {`{"id":"e","kind":"payment","key":"k","state":"SUCCESS","x":1}`, hexMAC(testAPIKey, `{"id":"e","kind":"payment","key":"k","state":"SUCCESS","x":1}`)},
	} {
		if _, err := request(tc[0], tc[1]); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}

	keyless := sandbox.New(sandbox.Config{BaseURL: "http://psp.invalid"})
	req := httptest.NewRequest("POST", "/providers/sandbox", strings.NewReader(body))
	req.Header.Set(sandbox.SignatureHeader, hexMAC("", body))
	_, err = keyless.ParseCallback(ctx, req)
	is.True(err != nil) // nothing to verify with
}
