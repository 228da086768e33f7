package xenditfake_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/provider/xendit/xenditfake"
)

func do(t *testing.T, srv *httptest.Server, method, path, user, body, idem string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.SetBasicAuth(user, "")
	if idem != "" {
		req.Header.Set("Idempotency-key", idem)
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

// Xendit's error objects, its documented idempotency (mandatory on
// payouts: the first answer again, DUPLICATE_ERROR for another body) and
// the channels' documented limits.
func TestErrorsIdempotencyAndLimits(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	srv := httptest.NewServer(xenditfake.New(xenditfake.Options{SecretKey: "xnd_development_1"}))
	defer srv.Close()

	status, e := do(t, srv, http.MethodGet, "/v3/payment_requests/pr-x", "xnd_development_bad", "", "")
	is.Equal(status, http.StatusUnauthorized)
	is.Equal(e["error_code"], "INVALID_API_KEY")
	status, e = do(t, srv, http.MethodGet, "/v3/payment_requests/pr-x", "xnd_development_1", "", "")
	is.Equal(status, http.StatusNotFound)
	is.Equal(e["error_code"], "DATA_NOT_FOUND")

	po := `{"reference_id":"po-1","channel_code":"MY_MAYBANK","channel_properties":{"account_number":"123","account_holder_name":"A"},"amount":10.5,"currency":"MYR"}`
	status, e = do(t, srv, http.MethodPost, "/v2/payouts", "xnd_development_1", po, "")
	is.Equal(status, http.StatusBadRequest)
	is.Equal(e["error_code"], "API_VALIDATION_ERROR") // the Idempotency-key is mandatory
	status, p1 := do(t, srv, http.MethodPost, "/v2/payouts", "xnd_development_1", po, "idem-1")
	is.Equal(status, http.StatusOK)
	is.Equal(p1["status"], "ACCEPTED")
	is.Equal(p1["amount"], 10.5)
	_, p2 := do(t, srv, http.MethodPost, "/v2/payouts", "xnd_development_1", po, "idem-1")
	is.Equal(p2["id"], p1["id"])
	status, e = do(t, srv, http.MethodPost, "/v2/payouts", "xnd_development_1", strings.Replace(po, "10.5", "11", 1), "idem-1")
	is.Equal(status, http.StatusConflict)
	is.Equal(e["error_code"], "DUPLICATE_ERROR")

	pr := `{"reference_id":"r1","type":"PAY","country":"MY","currency":"MYR","request_amount":25000.01,"channel_code":"TOUCHNGO","channel_properties":{}}`
	status, e = do(t, srv, http.MethodPost, "/v3/payment_requests", "xnd_development_1", pr, "")
	is.Equal(status, http.StatusBadRequest)
	is.Equal(e["error_code"], "INVALID_VALUE_ERROR") // above Touch 'n Go's 25,000
	status, p := do(t, srv, http.MethodPost, "/v3/payment_requests", "xnd_development_1", strings.Replace(pr, "25000.01", "150", 1), "")
	is.Equal(status, http.StatusCreated)
	is.Equal(p["status"], "REQUIRES_ACTION")
	is.Equal(p["request_amount"], 150.0)
	is.Equal(len(p["payment_request_id"].(string)), 39)
}

// Transactions page newest first with after_id and filter by creation
// time; a payment's funds settle when its estimate has passed.
func TestTransactions(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	clock := paykit.NewManualClock(time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC))
	f := xenditfake.New(xenditfake.Options{SecretKey: "k", Now: clock.Now})
	srv := httptest.NewServer(f)
	defer srv.Close()
	for i, ref := range []string{"a", "b", "c"} {
		body := `{"reference_id":"` + ref + `","type":"PAY","country":"MY","currency":"MYR","request_amount":10,"channel_code":"GRABPAY","channel_properties":{}}`
		status, _ := do(t, srv, http.MethodPost, "/v3/payment_requests", "k", body, "")
		is.Equal(status, http.StatusCreated)
		is.NoErr(f.Approve(ref))
		clock.Advance(time.Duration(i+1) * time.Minute)
	}
	_, page := do(t, srv, http.MethodGet, "/transactions?limit=2", "k", "", "")
	data := page["data"].([]any)
	is.Equal(len(data), 2)
	is.Equal(page["has_more"], true)
	first := data[0].(map[string]any)
	is.Equal(first["reference_id"], "c")
	is.Equal(first["settlement_status"], "PENDING")
	is.Equal(first["fee"].(map[string]any)["xendit_fee"], 0.25)
	_, page = do(t, srv, http.MethodGet, "/transactions?limit=2&after_id="+data[1].(map[string]any)["id"].(string), "k", "", "")
	is.Equal(len(page["data"].([]any)), 1)
	is.Equal(page["has_more"], false)
	_, page = do(t, srv, http.MethodGet, "/transactions?created[lte]=2026-11-24T09:00:30Z", "k", "", "")
	is.Equal(len(page["data"].([]any)), 1)
	clock.Advance(48 * time.Hour)
	_, page = do(t, srv, http.MethodGet, "/transactions?reference_id=a", "k", "", "")
	is.Equal(page["data"].([]any)[0].(map[string]any)["settlement_status"], "SETTLED")
}
