package opnfake_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

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

// A successful charge states fee and fee_vat at the documented example's
// rates and names its transaction; Opn's test-mode dispute endpoint opens
// a dispute of the whole charge, once; a message makes it pending, after
// which it takes no more updates nor an accept; its charge takes no
// refund.
func TestFeesAndDisputes(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	now := time.Date(2026, 11, 24, 15, 4, 5, 0, time.UTC)
	f := opnfake.New(opnfake.Options{SecretKey: "skey_test_1", Now: func() time.Time { return now }})
	srv := httptest.NewServer(f)
	defer srv.Close()
	form := url.Values{"amount": {"12345"}, "currency": {"thb"}, "source[type]": {"promptpay"}, "metadata[paykit_key]": {"kd"}}
	_, c := do(t, srv, http.MethodPost, "/charges", "skey_test_1", form, "")
	id := c["id"].(string)
	status, _ := do(t, srv, http.MethodPost, "/charges/"+id+"/disputes", "skey_test_1", nil, "")
	is.Equal(status, http.StatusBadRequest) // pending: nothing to dispute
	is.NoErr(f.Approve("kd"))

	_, c = do(t, srv, http.MethodGet, "/charges/"+id, "skey_test_1", nil, "")
	is.Equal(c["fee"], float64(451))    // 3.65 % of 12345
	is.Equal(c["fee_vat"], float64(32)) // 7 % of 451
	is.Equal(c["net"], float64(12345-451-32))
	fee, ok := f.Fee("kd")
	is.True(ok)
	is.Equal(fee, int64(483))
	_, tr := do(t, srv, http.MethodGet, "/transactions/"+c["transaction"].(string), "skey_test_1", nil, "")
	is.Equal(tr["object"], "transaction")
	is.Equal(tr["amount"], float64(12345-451-32))
	is.Equal(tr["transferable_at"], "2026-11-27T00:00:00Z")

	status, d := do(t, srv, http.MethodPost, "/charges/"+id+"/disputes", "skey_test_1", nil, "")
	is.Equal(status, http.StatusOK)
	is.Equal(d["object"], "dispute")
	is.Equal(d["status"], "open")
	is.Equal(d["amount"], float64(12345))
	is.Equal(d["charge"], id)
	dispute := d["id"].(string)
	status, _ = do(t, srv, http.MethodPost, "/charges/"+id+"/disputes", "skey_test_1", nil, "")
	is.Equal(status, http.StatusBadRequest) // once per charge

	status, e := do(t, srv, http.MethodPost, "/charges/"+id+"/refunds", "skey_test_1", url.Values{"amount": {"100"}}, "")
	is.Equal(status, http.StatusBadRequest)
	is.Equal(e["code"], "failed_refund")

	status, d = do(t, srv, http.MethodPatch, "/disputes/"+dispute, "skey_test_1", url.Values{"message": {"delivered"}}, "")
	is.Equal(status, http.StatusOK)
	is.Equal(d["status"], "pending")
	is.Equal(d["message"], "delivered")
	status, _ = do(t, srv, http.MethodPatch, "/disputes/"+dispute, "skey_test_1", url.Values{"message": {"again"}}, "")
	is.Equal(status, http.StatusBadRequest)
	status, _ = do(t, srv, http.MethodPatch, "/disputes/"+dispute+"/accept", "skey_test_1", nil, "")
	is.Equal(status, http.StatusBadRequest)
	is.NoErr(f.DecideDispute(dispute, false))
	_, d = do(t, srv, http.MethodGet, "/disputes/"+dispute, "skey_test_1", nil, "")
	is.Equal(d["status"], "lost")
	is.Equal(d["closed_at"], "2026-11-24T15:04:05Z")
	status, _ = do(t, srv, http.MethodGet, "/disputes/dspt_test_none", "skey_test_1", nil, "")
	is.Equal(status, http.StatusNotFound)
}

// Options.AvailableOn sets the transferable_at of a charge's transaction.
func TestAvailableOnOption(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	now := time.Date(2026, 11, 24, 15, 4, 5, 0, time.UTC)
	f := opnfake.New(opnfake.Options{SecretKey: "skey_test_1", Now: func() time.Time { return now },
		AvailableOn: func(paid time.Time) time.Time { return paid.Add(90 * time.Second) }})
	srv := httptest.NewServer(f)
	defer srv.Close()
	form := url.Values{"amount": {"12345"}, "currency": {"thb"}, "source[type]": {"promptpay"}, "metadata[paykit_key]": {"ka"}}
	_, c := do(t, srv, http.MethodPost, "/charges", "skey_test_1", form, "")
	is.NoErr(f.Approve("ka"))
	_, c = do(t, srv, http.MethodGet, "/charges/"+c["id"].(string), "skey_test_1", nil, "")
	_, tr := do(t, srv, http.MethodGet, "/transactions/"+c["transaction"].(string), "skey_test_1", nil, "")
	is.Equal(tr["transferable_at"], "2026-11-24T15:05:35Z")
}

// Every movement of the balance is a transaction, listed by creation
// (chronological by default), within from and to, limit at a time from
// offset: a charge's net credit, a refund's debit, a sent transfer's
// debit.
func TestTransactionsList(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	now := time.Date(2026, 6, 1, 8, 0, 0, 0, time.UTC)
	f := opnfake.New(opnfake.Options{SecretKey: "skey_test_1", Now: func() time.Time { return now }})
	srv := httptest.NewServer(f)
	defer srv.Close()
	form := url.Values{"amount": {"10000"}, "currency": {"thb"}, "source[type]": {"promptpay"}, "metadata[paykit_key]": {"kt"}}
	_, c := do(t, srv, http.MethodPost, "/charges", "skey_test_1", form, "")
	is.NoErr(f.Approve("kt"))
	now = now.Add(time.Hour)
	status, rf := do(t, srv, http.MethodPost, "/charges/"+c["id"].(string)+"/refunds", "skey_test_1", url.Values{"amount": {"2500"}}, "")
	is.Equal(status, http.StatusOK)
	_, rc := do(t, srv, http.MethodPost, "/recipients", "skey_test_1", url.Values{"name": {"Somchai"}, "type": {"individual"},
		"bank_account[brand]": {"kbank"}, "bank_account[number]": {"1234567890"}, "bank_account[name]": {"Somchai"}}, "")
	_, tr := do(t, srv, http.MethodPost, "/transfers", "skey_test_1", url.Values{"amount": {"5000"}, "recipient": {rc["id"].(string)},
		"metadata[paykit_key]": {"kp"}}, "")
	is.NoErr(f.PayTransfer("kp"))

	status, list := do(t, srv, http.MethodGet, "/transactions", "skey_test_1", nil, "")
	is.Equal(status, http.StatusOK)
	is.Equal(list["object"], "list")
	is.Equal(list["total"], float64(3))
	var got []string
	for _, d := range list["data"].([]any) {
		tx := d.(map[string]any)
		got = append(got, tx["direction"].(string)+" "+tx["origin"].(string)+" "+fmt.Sprint(tx["amount"]))
	}
	is.Equal(got, []string{
		"credit " + c["id"].(string) + " 9609", // 10000 less 365 and 26 VAT
		"debit " + rf["id"].(string) + " 2500",
		"debit " + tr["id"].(string) + " 5000",
	})
	_, page := do(t, srv, http.MethodGet, "/transactions?order=reverse_chronological&limit=1&offset=1", "skey_test_1", nil, "")
	is.Equal(len(page["data"].([]any)), 1)
	is.Equal(page["data"].([]any)[0].(map[string]any)["origin"], rf["id"])
	_, later := do(t, srv, http.MethodGet, "/transactions?from=2026-06-01T08:30:00Z", "skey_test_1", nil, "")
	is.Equal(later["total"], float64(2))
	for _, q := range []string{"limit=0", "limit=101", "offset=-1", "order=sideways", "from=yesterday"} {
		status, _ := do(t, srv, http.MethodGet, "/transactions?"+q, "skey_test_1", nil, "")
		is.Equal(status, http.StatusBadRequest) // q
	}
}

// A source type the account is not enabled for is refused with Opn's
// invalid_charge, and no charge is made.
func TestDisabledSource(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	f := opnfake.New(opnfake.Options{SecretKey: "skey_test_1"})
	srv := httptest.NewServer(f)
	defer srv.Close()
	form := url.Values{"amount": {"15000"}, "currency": {"myr"}, "source[type]": {"touch_n_go"}, "metadata[paykit_key]": {"k_tng"}}
	f.DisableSource("touch_n_go", true)
	status, e := do(t, srv, http.MethodPost, "/charges", "skey_test_1", form, "")
	is.Equal(status, http.StatusBadRequest)
	is.Equal(e["code"], "invalid_charge")
	is.Equal(f.Charges("k_tng"), 0)
	f.DisableSource("touch_n_go", false)
	status, c := do(t, srv, http.MethodPost, "/charges", "skey_test_1", form, "")
	is.Equal(status, http.StatusOK)
	is.Equal(c["status"], "pending")
}
