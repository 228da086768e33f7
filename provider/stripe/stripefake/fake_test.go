package stripefake_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"
	"github.com/paykit/paykit/provider/stripe/stripefake"
)

func post(t *testing.T, srv *httptest.Server, path, key, apiKey string, form url.Values) (*http.Response, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, srv.URL+path, strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(apiKey, "")
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: not JSON: %s", path, b)
	}
	return resp, m
}

// The fake answers as Stripe documents: 401 for a bad key, the saved
// answer for a replayed Idempotency-Key, 400 idempotency_error for the key
// with other parameters, JSON 404 for unknown URLs.
func TestFakeProtocol(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	srv := httptest.NewServer(stripefake.New(stripefake.Options{SecretKey: "sk_test_1", WebhookSecret: "whsec_1"}))
	defer srv.Close()
	form := url.Values{"amount": {"5000"}, "currency": {"myr"}, "confirm": {"true"}, "payment_method_types[0]": {"grabpay"},
		"payment_method_data[type]": {"grabpay"}, "return_url": {"https://x.example"}, "metadata[paykit_key]": {"k1"}}

	resp, body := post(t, srv, "/v1/payment_intents", "k1", "sk_test_wrong", form)
	is.Equal(resp.StatusCode, 401)
	is.Equal(body["error"].(map[string]any)["type"], "invalid_request_error")

	resp, first := post(t, srv, "/v1/payment_intents", "k1", "sk_test_1", form)
	is.Equal(resp.StatusCode, 200)
	is.Equal(first["status"], "requires_action")
	is.Equal(first["object"], "payment_intent")
	resp, again := post(t, srv, "/v1/payment_intents", "k1", "sk_test_1", form)
	is.Equal(resp.Header.Get("Idempotent-Replayed"), "true")
	is.Equal(again["id"], first["id"])

	form.Set("amount", "6000")
	resp, body = post(t, srv, "/v1/payment_intents", "k1", "sk_test_1", form)
	is.Equal(resp.StatusCode, 400)
	is.Equal(body["error"].(map[string]any)["type"], "idempotency_error")

	// A request that fails validation saves nothing under its key.
	form.Del("return_url")
	resp, _ = post(t, srv, "/v1/payment_intents", "k2", "sk_test_1", form)
	is.Equal(resp.StatusCode, 400)
	form.Set("return_url", "https://x.example")
	resp, _ = post(t, srv, "/v1/payment_intents", "k2", "sk_test_1", form)
	is.Equal(resp.StatusCode, 200)

	resp, body = post(t, srv, "/v1/nothing", "", "sk_test_1", nil)
	is.Equal(resp.StatusCode, 404)
	is.True(strings.Contains(body["error"].(map[string]any)["message"].(string), "Unrecognized request URL"))
}

// Webhook requests are signed over "t.payload" and name the key.
func TestFakeWebhook(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	f := stripefake.New(stripefake.Options{SecretKey: "sk_test_1", WebhookSecret: "whsec_1"})
	_, err := f.Webhook("payment_intent.succeeded", "none")
	is.Equal(err, stripefake.ErrNotFound)
	is.Equal(f.Approve("none"), stripefake.ErrNotFound)
	srv := httptest.NewServer(f)
	defer srv.Close()
	form := url.Values{"amount": {"5000"}, "currency": {"myr"}, "confirm": {"true"}, "payment_method_types[0]": {"fpx"},
		"payment_method_data[type]": {"fpx"}, "payment_method_data[fpx][bank]": {"cimb"}, "return_url": {"https://x.example"}, "metadata[paykit_key]": {"wk"}}
	resp, _ := post(t, srv, "/v1/payment_intents", "wk", "sk_test_1", form)
	is.Equal(resp.StatusCode, 200)
	r, err := f.Webhook("payment_intent.requires_action", "wk")
	is.NoErr(err)
	b, _ := io.ReadAll(r.Body)
	is.True(strings.Contains(string(b), `"paykit_key":"wk"`))
	sig := r.Header.Get("Stripe-Signature")
	ts := strings.TrimPrefix(strings.Split(sig, ",")[0], "t=")
	tm, _ := strconvParse(ts)
	is.Equal(stripefake.Sign(b, "whsec_1", tm), sig)
	is.Equal(f.Events(), []string{"payment_intent.created", "payment_intent.requires_action"})
}

func strconvParse(s string) (time.Time, error) {
	n, err := strconv.ParseInt(s, 10, 64)
	return time.Unix(n, 0), err
}

func get(t *testing.T, srv *httptest.Server, path, apiKey string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, srv.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.SetBasicAuth(apiKey, "")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
		t.Fatalf("%s: not JSON: %v", path, err)
	}
	return resp.StatusCode, m
}

// A succeeded PaymentIntent's charge and balance transaction expand in
// place; a field that names no object does not. A dispute withdraws its
// amount with the dispute fee; closed, it is lost and takes no more
// updates; its charge takes no refund; unknown evidence fields are
// refused before anything changes.
func TestFakeChargesAndDisputes(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	f := stripefake.New(stripefake.Options{SecretKey: "sk_test_1", WebhookSecret: "whsec_1"})
	srv := httptest.NewServer(f)
	defer srv.Close()
	form := url.Values{"amount": {"10000"}, "currency": {"myr"}, "confirm": {"true"}, "payment_method_types[0]": {"grabpay"},
		"payment_method_data[type]": {"grabpay"}, "return_url": {"https://x.example"}, "metadata[paykit_key]": {"d1"}}
	_, pi := post(t, srv, "/v1/payment_intents", "d1", "sk_test_1", form)
	_, err := f.OpenDispute("d1", 0, "")
	is.True(err != nil) // not succeeded yet
	is.NoErr(f.Approve("d1"))

	status, got := get(t, srv, "/v1/payment_intents/"+pi["id"].(string)+"?expand[]=latest_charge.balance_transaction", "sk_test_1")
	is.Equal(status, 200)
	ch := got["latest_charge"].(map[string]any)
	is.Equal(ch["object"], "charge")
	bt := ch["balance_transaction"].(map[string]any)
	is.Equal(bt["object"], "balance_transaction")
	is.Equal(bt["fee"], float64(300)) // 3 % of 10000
	is.Equal(bt["net"], float64(9700))
	fee, ok := f.Fee("d1")
	is.True(ok)
	is.Equal(fee, int64(300))
	status, got = get(t, srv, "/v1/payment_intents/"+pi["id"].(string), "sk_test_1")
	is.Equal(status, 200)
	_, isID := got["latest_charge"].(string)
	is.True(isID) // not expanded unless asked
	status, got = get(t, srv, "/v1/payment_intents/"+pi["id"].(string)+"?expand[]=payment_method", "sk_test_1")
	is.Equal(status, 400)
	is.Equal(got["error"].(map[string]any)["param"], "expand")

	id, err := f.OpenDispute("d1", 4000, "fraudulent")
	is.NoErr(err)
	_, err = f.OpenDispute("d1", 1000, "")
	is.True(err != nil) // a charge is disputed once
	status, d := get(t, srv, "/v1/disputes/"+id, "sk_test_1")
	is.Equal(status, 200)
	is.Equal(d["status"], "needs_response")
	is.Equal(d["amount"], float64(4000))
	w := d["balance_transactions"].([]any)[0].(map[string]any)
	is.Equal(w["amount"], float64(-4000))
	is.Equal(w["fee"], float64(stripefake.DisputeFee))

	resp, body := post(t, srv, "/v1/disputes/"+id, "", "sk_test_1", url.Values{"evidence[no_such_field]": {"x"}})
	is.Equal(resp.StatusCode, 400)
	is.Equal(body["error"].(map[string]any)["param"], "evidence[no_such_field]")
	resp, _ = post(t, srv, "/v1/disputes/"+id, "", "sk_test_1", url.Values{"evidence[uncategorized_text]": {"draft"}, "submit": {"false"}})
	is.Equal(resp.StatusCode, 200)
	resp, body = post(t, srv, "/v1/refunds", "r1", "sk_test_1", url.Values{"payment_intent": {pi["id"].(string)}, "amount": {"100"}})
	is.Equal(resp.StatusCode, 400)
	is.Equal(body["error"].(map[string]any)["code"], "charge_disputed")
	resp, body = post(t, srv, "/v1/disputes/"+id+"/close", "", "sk_test_1", nil)
	is.Equal(resp.StatusCode, 200)
	is.Equal(body["status"], "lost")
	is.Equal(body["evidence"].(map[string]any)["uncategorized_text"], "draft")
	resp, _ = post(t, srv, "/v1/disputes/"+id+"/close", "", "sk_test_1", nil)
	is.Equal(resp.StatusCode, 400)
	status, _ = get(t, srv, "/v1/disputes/du_none", "sk_test_1")
	is.Equal(status, 404)

	evs := f.Events()
	is.Equal(evs[len(evs)-4:], []string{"charge.dispute.created", "charge.dispute.funds_withdrawn", "charge.dispute.updated", "charge.dispute.closed"})
}

// Options.AvailableOn sets a charge's available_on; by default it is
// 00:00 UTC three days after the charge.
func TestFakeAvailableOn(t *testing.T) {
	t.Parallel()
	paid := time.Date(2026, 11, 24, 15, 4, 5, 0, time.UTC)
	for _, tc := range []struct {
		name string
		opt  func(time.Time) time.Time
		want time.Time
	}{
		{"default", nil, time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC)},
		{"option", func(p time.Time) time.Time { return p.Add(90 * time.Second) }, paid.Add(90 * time.Second)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			f := stripefake.New(stripefake.Options{SecretKey: "sk_test_1", WebhookSecret: "whsec_1",
				Now: func() time.Time { return paid }, AvailableOn: tc.opt})
			srv := httptest.NewServer(f)
			defer srv.Close()
			form := url.Values{"amount": {"10000"}, "currency": {"myr"}, "confirm": {"true"}, "payment_method_types[0]": {"grabpay"},
				"payment_method_data[type]": {"grabpay"}, "return_url": {"https://x.example"}, "metadata[paykit_key]": {"a1"}}
			_, pi := post(t, srv, "/v1/payment_intents", "a1", "sk_test_1", form)
			is.NoErr(f.Approve("a1"))
			_, got := get(t, srv, "/v1/payment_intents/"+pi["id"].(string)+"?expand[]=latest_charge.balance_transaction", "sk_test_1")
			bt := got["latest_charge"].(map[string]any)["balance_transaction"].(map[string]any)
			is.Equal(bt["available_on"], float64(tc.want.Unix()))
		})
	}
}

// PayOut pays out what is available, one payout per currency with its own
// balance transaction; the lists of payouts and of a payout's balance
// transactions come newest first and page as Stripe's do: starting_after
// goes to older objects, ending_before to the newer ones nearest it, and
// has_more says whether more lie that way.
func TestFakePayoutsAndTheirLists(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	f := stripefake.New(stripefake.Options{SecretKey: "sk_test_1", WebhookSecret: "whsec_1",
		AvailableOn: func(paid time.Time) time.Time { return paid }})
	srv := httptest.NewServer(f)
	defer srv.Close()
	pay := func(key string) {
		form := url.Values{"amount": {"10000"}, "currency": {"myr"}, "confirm": {"true"}, "payment_method_types[0]": {"grabpay"},
			"payment_method_data[type]": {"grabpay"}, "return_url": {"https://x.example"}, "metadata[paykit_key]": {key}}
		resp, _ := post(t, srv, "/v1/payment_intents", key, "sk_test_1", form)
		is.Equal(resp.StatusCode, 200)
		is.NoErr(f.Approve(key))
	}
	ids := func(list map[string]any) []string {
		out := []string{}
		for _, o := range list["data"].([]any) {
			out = append(out, o.(map[string]any)["id"].(string))
		}
		return out
	}
	var po []string // oldest first
	for i := range 4 {
		pay("po" + strconv.Itoa(i))
		made, err := f.PayOut("")
		is.NoErr(err)
		is.Equal(len(made), 1)
		po = append(po, made[0])
	}
	made, err := f.PayOut("paid")
	is.NoErr(err)
	is.Equal(len(made), 0) // nothing left to pay out

	_, all := get(t, srv, "/v1/payouts", "sk_test_1")
	is.Equal(ids(all), []string{po[3], po[2], po[1], po[0]})
	_, p := get(t, srv, "/v1/payouts?limit=2&starting_after="+po[3], "sk_test_1")
	is.Equal(ids(p), []string{po[2], po[1]})
	is.Equal(p["has_more"], true)
	_, p = get(t, srv, "/v1/payouts?limit=2&ending_before="+po[0], "sk_test_1")
	is.Equal(ids(p), []string{po[2], po[1]}) // the newer ones nearest it
	is.Equal(p["has_more"], true)
	_, p = get(t, srv, "/v1/payouts?limit=2&ending_before="+po[2], "sk_test_1")
	is.Equal(ids(p), []string{po[3]})
	is.Equal(p["has_more"], false)
	status, _ := get(t, srv, "/v1/payouts?ending_before=po_none", "sk_test_1")
	is.Equal(status, 400)

	_, one := get(t, srv, "/v1/payouts/"+po[0], "sk_test_1")
	is.Equal(one["status"], "paid")
	is.Equal(one["reconciliation_status"], "completed")
	is.Equal(one["amount"], float64(9700)) // 10000 less the fee
	_, txns := get(t, srv, "/v1/balance_transactions?payout="+po[0]+"&expand[]=data.source", "sk_test_1")
	data := txns["data"].([]any)
	is.Equal(len(data), 2)
	own, charge := data[0].(map[string]any), data[1].(map[string]any) // newest first
	is.Equal(own["type"], "payout")
	is.Equal(own["amount"], float64(-9700))
	is.Equal(own["source"].(map[string]any)["id"], po[0])
	is.Equal(charge["type"], "payment") // not a card
	is.Equal(charge["source"].(map[string]any)["object"], "charge")
	status, _ = get(t, srv, "/v1/balance_transactions?payout=po_none", "sk_test_1")
	is.Equal(status, 404)

	// A payout in transit fails: its amount comes back, and the next
	// payout pays it out with what came since.
	pay("po_failing")
	failing, err := f.PayOut("in_transit")
	is.NoErr(err)
	is.True(f.SetPayoutStatus(failing[0], "paid") == nil)
	is.True(f.SetPayoutStatus(failing[0], "failed") != nil) // paid already
	pay("po_failing_2")
	failing, err = f.PayOut("pending")
	is.NoErr(err)
	is.NoErr(f.SetPayoutStatus(failing[0], "failed"))
	pay("po_after")
	again, err := f.PayOut("paid")
	is.NoErr(err)
	_, txns = get(t, srv, "/v1/balance_transactions?payout="+again[0], "sk_test_1")
	var types []string
	for _, o := range txns["data"].([]any) {
		types = append(types, o.(map[string]any)["type"].(string))
	}
	is.Equal(types, []string{"payout", "payment", "payout_failure"})
	_, one = get(t, srv, "/v1/payouts/"+again[0], "sk_test_1")
	is.Equal(one["amount"], float64(2*9700))
}
