package sandbox_test

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/paykit/paykit"
)

func getPage(t *testing.T, u string) (*http.Response, string) {
	t.Helper()
	resp, err := noRedirects.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

func postForm(t *testing.T, u string, header http.Header) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, u, strings.NewReader(""))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := noRedirects.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}

func TestPayerPage(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	e := newEnv(t)
	req := e.payment("pi_page", "FPX", "MY", 15050)
	req.Options["bank"] = "HLB0224"
	r := e.prov.CreatePayment(ctx, req)

	resp, body := getPage(t, r.Action.URL)
	is.Equal(resp.StatusCode, 200)
	is.Equal(resp.Header.Get("Content-Type"), "text/html; charset=utf-8")
	for _, want := range []string{"MYR 150.50", "FPX online banking", "Hong Leong Connect", "Sandbox PSP", r.Reference,
		`action="` + r.Reference + `/approve"`, `action="` + r.Reference + `/decline"`, ">Approve<", ">Decline<"} {
		if !strings.Contains(body, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	is.True(!strings.Contains(body, "<script"))
	is.True(!strings.Contains(body, "http://") && !strings.Contains(body, "https://")) // no external assets
	csp := resp.Header.Get("Content-Security-Policy")
	is.True(strings.HasPrefix(csp, "default-src 'none'; style-src 'nonce-"))
	is.True(strings.Contains(csp, "form-action 'self' https://shop.example;")) // the 303 after the post goes there
	is.True(strings.Contains(csp, "frame-ancestors 'none'"))
	nonce := csp[strings.Index(csp, "'nonce-")+7:]
	nonce = nonce[:strings.Index(nonce, "'")]
	is.True(strings.Contains(body, `<style nonce="`+nonce+`">`))
	is.Equal(resp.Header.Get("X-Frame-Options"), "DENY")
	is.Equal(resp.Header.Get("Referrer-Policy"), "no-referrer")
	_, again := getPage(t, r.Action.URL)
	is.True(!strings.Contains(again, nonce)) // a fresh nonce each time

	resp, body = getPage(t, e.base+"/pay/pay_nosuchpayment")
	is.Equal(resp.StatusCode, 404)
	is.True(strings.Contains(body, "Not found"))
	is.Equal(resp.Header.Get("X-Frame-Options"), "DENY")
	is.True(strings.HasPrefix(resp.Header.Get("Content-Security-Policy"), "default-src 'none'"))
}

func TestPayerPageForms(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	e := newEnv(t)

	// Approve: 303 to the return URL; the attempt succeeded.
	r := e.prov.CreatePayment(ctx, e.payment("pi_yes", "WECHAT_PAY", "MY", 8800))
	resp := postForm(t, r.Action.URL+"/approve", nil)
	is.Equal(resp.StatusCode, http.StatusSeeOther)
	is.Equal(resp.Header.Get("Location"), "https://shop.example/return?order=1")
	is.Equal(e.prov.InquirePayment(ctx, paykit.AttemptRef{Key: "pi_yes"}).Outcome, paykit.OutcomeSucceeded)

	// Decline without a return URL: 303 back to the page, which shows the
	// result (relative, so it works under the /sandbox mount).
	req := e.payment("pi_no", "UNIONPAY", "MY", 8800)
	req.ReturnURL = ""
	r = e.prov.CreatePayment(ctx, req)
	resp = postForm(t, r.Action.URL+"/decline", nil)
	is.Equal(resp.StatusCode, http.StatusSeeOther)
	loc, err := resp.Request.URL.Parse(resp.Header.Get("Location"))
	is.NoErr(err)
	is.Equal(loc.String(), r.Action.URL)
	page, body := getPage(t, loc.String())
	is.Equal(page.StatusCode, 200)
	is.True(strings.Contains(body, "Payment not completed"))
	is.True(!strings.Contains(body, ">Approve<"))
	d := e.prov.InquirePayment(ctx, paykit.AttemptRef{Key: "pi_no"})
	is.Equal(d.Outcome, paykit.OutcomeFailed)
	is.Equal(d.FailureCode, paykit.FailureProviderDeclined)

	// A second choice changes nothing; it shows the page.
	resp = postForm(t, r.Action.URL+"/approve", nil)
	is.Equal(resp.StatusCode, http.StatusSeeOther)
	is.Equal(e.prov.InquirePayment(ctx, paykit.AttemptRef{Key: "pi_no"}).Outcome, paykit.OutcomeFailed)

	// Cross-site posts are refused; unknown ids are 404.
	r = e.prov.CreatePayment(ctx, e.payment("pi_csrf", "UMOBILE", "MY", 8800))
	resp = postForm(t, r.Action.URL+"/approve", http.Header{"Sec-Fetch-Site": {"cross-site"}})
	is.Equal(resp.StatusCode, http.StatusForbidden)
	is.Equal(e.prov.InquirePayment(ctx, paykit.AttemptRef{Key: "pi_csrf"}).Outcome, paykit.OutcomeRequiresAction)
	resp = postForm(t, e.base+"/pay/pay_nosuch/approve", nil)
	is.Equal(resp.StatusCode, 404)
	resp, _ = noRedirects.Get(e.base + "/pay/" + url.PathEscape(r.Reference) + "/approve")
	resp.Body.Close()
	is.Equal(resp.StatusCode, http.StatusNotFound) // the choice is a POST only
	is.Equal(e.prov.InquirePayment(ctx, paykit.AttemptRef{Key: "pi_csrf"}).Outcome, paykit.OutcomeRequiresAction)
}
