package opnfake_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/paykit/paykit/provider/opn/opnfake"
)

func do(t *testing.T, srv *httptest.Server, method, path, user string, form url.Values, idem string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(user, "")
	if idem != "" {
		req.Header.Set("Idempotency-Key", idem)
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s %s: not JSON: %s", method, path, b)
	}
	return resp.StatusCode, m
}

func TestErrorsAndIdempotency(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	srv := httptest.NewServer(opnfake.New(opnfake.Options{SecretKey: "skey_test_1"}))
	defer srv.Close()

	status, e := do(t, srv, http.MethodGet, "/charges/chrg_test_none", "skey_test_bad", nil, "")
	is.Equal(status, http.StatusUnauthorized)
	is.Equal(e["object"], "error")
	is.Equal(e["code"], "authentication_failure")

	status, e = do(t, srv, http.MethodGet, "/charges/chrg_test_none", "skey_test_1", nil, "")
	is.Equal(status, http.StatusNotFound)
	is.Equal(e["code"], "not_found")

	form := url.Values{"amount": {"2000"}, "currency": {"thb"}, "source[type]": {"promptpay"}, "metadata[paykit_key]": {"k1"}}
	status, c1 := do(t, srv, http.MethodPost, "/charges", "skey_test_1", form, "idem-1")
	is.Equal(status, http.StatusOK)
	is.Equal(c1["object"], "charge")
	is.Equal(c1["status"], "pending")
	_, c2 := do(t, srv, http.MethodPost, "/charges", "skey_test_1", form, "idem-1")
	is.Equal(c2["id"], c1["id"]) // the first answer, replayed

	form.Set("currency", "myr")
	status, e = do(t, srv, http.MethodPost, "/charges", "skey_test_1", form, "")
	is.Equal(status, http.StatusBadRequest)
	is.Equal(e["code"], "invalid_charge")

	_, s := do(t, srv, http.MethodGet, "/search?scope=charge&query=k1", "skey_test_1", nil, "")
	is.Equal(s["object"], "search")
	is.Equal(len(s["data"].([]any)), 1)
}

func TestEMVCoChecksum(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	p := opnfake.EMVCo("TH", "THB", 2000, "chrg_test_1")
	is.True(strings.HasPrefix(p, "000201010212"))
	is.True(strings.Contains(p, "5303764540520.005802TH"))
	is.Equal(len(p[strings.LastIndex(p, "6304")+4:]), 4)
}
