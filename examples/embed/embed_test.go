package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"
)

// The README's "Embed it" listing is this program, byte for byte.
func TestREADMEListsMain(t *testing.T) {
	is := is.New(t)
	readme, err := os.ReadFile("../../README.md")
	is.NoErr(err)
	main, err := os.ReadFile("main.go")
	is.NoErr(err)
	is.True(strings.Contains(string(readme), "```go\n"+string(main)+"```\n")) // README holds main.go verbatim in a go block
}

// TestServe takes a sandbox payment through every mount the program sets
// up, uses its operator token, and shuts it down.
func TestServe(t *testing.T) {
	is := is.New(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, err := start(ctx, "")
	is.NoErr(err)
	is.True(strings.HasPrefix(s.url, "http://127.0.0.1:"))
	token := s.printed["operator token"]
	is.True(len(token) >= 16) // drawn, and printed because it was
	is.True(strings.HasPrefix(s.printed["test public key"], "pk_test_"))
	is.True(strings.HasPrefix(s.printed["test secret key"], "sk_test_"))

	// /operator, with the printed token.
	status := s.operator(t, "GET", "/operator/merchants/"+s.printed["merchant"], token)
	is.Equal(status, http.StatusOK)
	status = s.operator(t, "GET", "/operator/merchants/"+s.printed["merchant"], "not-the-operator-token")
	is.Equal(status, http.StatusUnauthorized)

	// /v1: an FPX payment waits for its payer ...
	status, pi := s.merchant("POST", "/v1/payment_intents", `{"amount":"15000","currency":"MYR","country":"MY",
		"merchant_reference":"order-1","payment_method":"FPX","payment_method_options":{"bank":"MAYBANK"},
		"customer":{"name":"Aisyah","email":"aisyah@example.com"}}`)
	is.Equal(status, http.StatusCreated)
	is.Equal(pi["status"], "requires_action")
	id := pi["id"].(string)
	next := pi["next_action"].(map[string]any)["url"].(string)

	// ... whose link goes through /pay (PublicURL) to the PSP's page at /sandbox.
	is.True(strings.HasPrefix(next, s.url+"/pay/continue/"))
	resp, err := noRedirects.Get(next)
	is.NoErr(err)
	resp.Body.Close()
	is.Equal(resp.StatusCode, http.StatusSeeOther)
	page := resp.Header.Get("Location")
	is.True(strings.HasPrefix(page, s.url+"/sandbox/pay/"))
	resp, err = http.Get(page)
	is.NoErr(err)
	resp.Body.Close()
	is.Equal(resp.StatusCode, http.StatusOK)

	// The test helper approves as the payer would there.
	status, pi = s.merchant("POST", "/v1/test_helpers/payment_intents/"+id+"/approve", "")
	is.Equal(status, http.StatusOK)
	is.Equal(pi["status"], "succeeded")
	status, pi = s.merchant("GET", "/v1/payment_intents/"+id, "")
	is.Equal(status, http.StatusOK)
	is.Equal(pi["status"], "succeeded")

	// A payer who approves on the PSP's page and never comes back: the PSP's
	// signed callback to /providers settles the payment, well before the
	// Service's first fallback inquiry (5s after the create).
	created := time.Now()
	status, pi = s.merchant("POST", "/v1/payment_intents", `{"amount":"16000","currency":"MYR","country":"MY",
		"merchant_reference":"order-2","payment_method":"TNG","customer":{"name":"Aisyah"}}`)
	is.Equal(status, http.StatusCreated)
	id = pi["id"].(string)
	resp, err = noRedirects.Get(pi["next_action"].(map[string]any)["url"].(string))
	is.NoErr(err)
	resp.Body.Close()
	page = resp.Header.Get("Location")
	resp, err = http.Get(page)
	is.NoErr(err)
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	is.NoErr(err)
	form := approveForm.FindStringSubmatch(string(body))
	is.True(form != nil) // the PSP's page has an Approve form
	pageURL, err := url.Parse(page)
	is.NoErr(err)
	approve, err := pageURL.Parse(form[1])
	is.NoErr(err)
	resp, err = noRedirects.Post(approve.String(), "application/x-www-form-urlencoded", nil)
	is.NoErr(err)
	resp.Body.Close()
	is.Equal(resp.StatusCode, http.StatusSeeOther) // back towards /pay/return, not followed
	for {
		status, pi = s.merchant("GET", "/v1/payment_intents/"+id, "")
		is.Equal(status, http.StatusOK)
		if pi["status"] == "succeeded" {
			break
		}
		if time.Since(created) > 4*time.Second {
			t.Fatalf("payment %s is %v 4s after its payer approved; the PSP's callback did not arrive", id, pi["status"])
		}
		time.Sleep(20 * time.Millisecond)
	}

	// /providers: the sandbox adapter checks its callbacks' signatures.
	resp, err = http.Post(s.url+"/providers/sandbox/webhooks", "application/json", strings.NewReader(`{"id":"forged"}`))
	is.NoErr(err)
	resp.Body.Close()
	is.Equal(resp.StatusCode, http.StatusBadRequest)

	// Graceful shutdown: serve returns nil and the port closes.
	cancel()
	select {
	case err := <-s.done:
		is.NoErr(err)
	case <-time.After(15 * time.Second):
		t.Fatal("serve did not return after its context ended")
	}
	_, err = net.Dial("tcp", strings.TrimPrefix(s.url, "http://"))
	is.True(err != nil) // nothing listens any more
}

// A given operator token is used and never printed.
func TestServeGivenOperatorToken(t *testing.T) {
	is := is.New(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const given = "given-operator-token-0123456789"
	s, err := start(ctx, given)
	is.NoErr(err)
	is.Equal(s.printed["operator token"], "(from PAYKIT_OPERATOR_TOKEN)")
	is.Equal(s.operator(t, "GET", "/operator/merchants/"+s.printed["merchant"], given), http.StatusOK)
}

// approveForm is the Approve form of the sandbox PSP's payer page.
var approveForm = regexp.MustCompile(`<form method="post" action="([^"]*/approve)"`)

// noRedirects shows a redirect instead of following it.
var noRedirects = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// operator calls the operator API with a bearer token and returns the status.
func (s *running) operator(t *testing.T, method, path, token string) int {
	t.Helper()
	req, err := http.NewRequest(method, s.url+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}
