package opn_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/provider/opn"
	"github.com/paykit/paykit/provider/opn/opnfake"
)

func secret(t *testing.T) string {
	t.Helper()
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return base64.StdEncoding.EncodeToString(b)
}

// signedEvent is an event body signed at ts under the secrets, one
// comma-separated signature each.
func signedEvent(t *testing.T, body string, ts time.Time, secrets ...string) *http.Request {
	t.Helper()
	var sigs []string
	for _, s := range secrets {
		sig, err := opn.Sign(s, ts.Unix(), []byte(body))
		if err != nil {
			t.Fatal(err)
		}
		sigs = append(sigs, sig)
	}
	r := httptest.NewRequest(http.MethodPost, "/webhooks/opn", strings.NewReader(body))
	r.Header.Set(opn.SignatureHeader, strings.Join(sigs, ","))
	r.Header.Set(opn.SignatureTimestampHeader, strconv.FormatInt(ts.Unix(), 10))
	return r
}

const chargeEvent = `{"object":"event","id":"evnt_test_5abc","livemode":false,"key":"charge.complete","created_at":"2026-01-01T00:00:00Z",
"data":{"object":"charge","id":"chrg_test_5abc","amount":2000,"currency":"THB","status":"successful","metadata":{"paykit_key":"k_cb"},
"fee":73,"fee_vat":5,"net":1922,"transaction":{"object":"transaction","id":"trxn_test_5abc","transferable_at":"2026-01-04T00:00:00Z"}}}`

func TestWebhookVerification(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	old, cur := secret(t), secret(t)
	p, err := opn.New(opn.Config{SecretKey: testSecret, WebhookSecrets: []string{cur, old}, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	t.Run("valid", func(t *testing.T) {
		is := is.New(t)
		evs, err := p.ParseCallback(ctx, signedEvent(t, chargeEvent, now, cur))
		is.NoErr(err)
		is.Equal(len(evs), 1)
		is.Equal(evs[0], paykit.CallbackEvent{ID: "evnt_test_5abc", Kind: "payment", Key: "k_cb", Result: paykit.Result{
			Outcome: paykit.OutcomeSucceeded, Reference: "chrg_test_5abc", Fee: 73 + 5, AvailableOn: time.Date(2026, 1, 4, 0, 0, 0, 0, time.UTC),
			Detail: evs[0].Result.Detail}})
	})
	t.Run("a successful charge stating no fee is unknown", func(t *testing.T) {
		is := is.New(t)
		body := strings.Replace(chargeEvent, `"fee":73,`, "", 1)
		evs, err := p.ParseCallback(ctx, signedEvent(t, body, now, cur))
		is.NoErr(err)
		is.Equal(len(evs), 1)
		is.Equal(evs[0].Result.Outcome, paykit.OutcomeUnknown)
		is.Equal(evs[0].Result.Reference, "chrg_test_5abc")
		is.Equal(evs[0].Result.Fee, int64(0))
	})
	t.Run("rotation", func(t *testing.T) {
		is := is.New(t)
		// Signed with the old secret only, or with both during the roll.
		_, err := p.ParseCallback(ctx, signedEvent(t, chargeEvent, now, old))
		is.NoErr(err)
		_, err = p.ParseCallback(ctx, signedEvent(t, chargeEvent, now, secret(t), old))
		is.NoErr(err)
	})
	t.Run("stale or future timestamp", func(t *testing.T) {
		is := is.New(t)
		_, err := p.ParseCallback(ctx, signedEvent(t, chargeEvent, now.Add(-6*time.Minute), cur))
		is.True(err != nil)
		_, err = p.ParseCallback(ctx, signedEvent(t, chargeEvent, now.Add(6*time.Minute), cur))
		is.True(err != nil)
		_, err = p.ParseCallback(ctx, signedEvent(t, chargeEvent, now.Add(-4*time.Minute), cur))
		is.NoErr(err)
	})
	t.Run("tampered", func(t *testing.T) {
		is := is.New(t)
		r := signedEvent(t, chargeEvent, now, cur)
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(bytes.Replace(body, []byte("2000"), []byte("2001"), 1)))
		_, err := p.ParseCallback(ctx, r)
		is.True(err != nil)
		// The timestamp is signed too.
		r = signedEvent(t, chargeEvent, now, cur)
		r.Header.Set(opn.SignatureTimestampHeader, strconv.FormatInt(now.Unix()+1, 10))
		_, err = p.ParseCallback(ctx, r)
		is.True(err != nil)
		// An unknown secret.
		_, err = p.ParseCallback(ctx, signedEvent(t, chargeEvent, now, secret(t)))
		is.True(err != nil)
	})
	t.Run("events not ours", func(t *testing.T) {
		is := is.New(t)
		for _, body := range []string{
			`{"object":"event","id":"evnt_test_1","key":"customer.create","data":{"object":"customer","id":"cust_test_1","metadata":{"paykit_key":"x"}}}`,
			`{"object":"event","id":"evnt_test_2","key":"charge.create","data":{"object":"charge","id":"chrg_test_2","status":"pending","metadata":{}}}`,
		} {
			evs, err := p.ParseCallback(ctx, signedEvent(t, body, now, cur))
			is.NoErr(err)
			is.Equal(len(evs), 0)
		}
	})
}

// The fake posts its events, signed, to WebhookURL; the adapter maps them.
func TestFakeDeliversSignedEvents(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	var (
		mu     sync.Mutex
		events []paykit.CallbackEvent
		p      *opn.Provider
	)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		evs, err := p.ParseCallback(r.Context(), r)
		if err != nil {
			http.Error(w, err.Error(), http.StatusUnauthorized)
			return
		}
		mu.Lock()
		events = append(events, evs...)
		mu.Unlock()
	}))
	defer hook.Close()
	f := opnfake.New(opnfake.Options{SecretKey: testSecret, WebhookURL: hook.URL})
	api := httptest.NewServer(f)
	defer api.Close()
	p = adapter(t, f, api.URL)
	ctx := context.Background()

	p.CreatePayment(ctx, promptpay("k_hook", 2000))
	is.NoErr(f.Approve("k_hook"))
	ref := p.CreateRefund(ctx, paykit.RefundRequest{Key: "k_hookrf", PaymentKey: "k_hook", Amount: 500, Currency: "THB"})
	is.Equal(ref.Outcome, paykit.OutcomeSucceeded)
	p.CreatePayout(ctx, payout("k_hookpo", "1234567890"))
	is.NoErr(f.PayTransfer("k_hookpo"))

	mu.Lock()
	defer mu.Unlock()
	got := map[string]paykit.Outcome{}
	for _, e := range events {
		got[e.Kind+" "+e.Key] = e.Result.Outcome // the last event of each wins
	}
	is.Equal(got, map[string]paykit.Outcome{
		"payment k_hook":  paykit.OutcomeSucceeded,
		"refund k_hookrf": paykit.OutcomeSucceeded,
		"payout k_hookpo": paykit.OutcomeSucceeded,
	})
}
