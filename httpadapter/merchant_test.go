package httpadapter_test

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/httpadapter"
	"github.com/paykit/paykit/internal/newid"
)

var requestIDPattern = regexp.MustCompile(`^req_[0-9a-z]+$`)

// assertError checks an error response: status, code, param, the
// Request-Id rule, and for 401 the challenge.
func assertError(t *testing.T, r response, status int, code, param string) {
	t.Helper()
	if r.status != status {
		t.Fatalf("status %d, want %d; body %s", r.status, status, r.body)
	}
	e := r.errorOf(t)
	if e["code"] != code {
		t.Errorf("code %v, want %s", e["code"], code)
	}
	if p, _ := e["param"].(string); p != param {
		t.Errorf("param %q, want %q (body %s)", p, param, r.body)
	}
	if _, ok := e["param"]; param == "" && ok {
		t.Errorf("param present, want it omitted: %s", r.body)
	}
	if id := r.header.Get("Request-Id"); !requestIDPattern.MatchString(id) || e["request_id"] != id {
		t.Errorf("Request-Id %q, body request_id %v", id, e["request_id"])
	}
	if m, _ := e["message"].(string); m == "" {
		t.Errorf("empty message")
	}
}

func TestMerchantAuthFailures(t *testing.T) {
	forEachStore(t, func(t *testing.T, open func(t *testing.T) paykit.Store) {
		e := newEnv(t, open, envConfig{})
		a := e.merchant(paykit.Test)
		aLive := e.keyFor(a.merchantID, paykit.Live)
		aOther := e.keyFor(a.merchantID, paykit.Test)
		b := e.merchant(paykit.Test)
		revoked := e.keyFor(a.merchantID, paykit.Test)
		if _, err := e.svc.RevokeAPIKey(e.ctx, "test", revoked.keyID); err != nil {
			t.Fatal(err)
		}
		b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

		cases := []struct {
			name, authorization string // "" sends no header
		}{
			{"missing", ""},
			{"empty basic", "Basic "},
			{"malformed base64", "Basic %%%not-base64%%%"},
			{"no colon", "Basic " + b64(a.public+a.secret)},
			{"other scheme", "Bearer " + a.secret},
			{"empty pair", "Basic " + b64(":")},
			{"unknown public key", basicValue("pk_test_doesnotexist", a.secret)},
			{"wrong secret", basicValue(a.public, a.secret+"x")},
			{"revoked", basicValue(revoked.public, revoked.secret)},
			{"test pk live sk", basicValue(a.public, aLive.secret)},
			{"live pk test sk", basicValue(aLive.public, a.secret)},
			{"pair of two keys of one merchant", basicValue(a.public, aOther.secret)},
			{"pair of two merchants", basicValue(a.public, b.secret)},
			{"swapped", basicValue(a.secret, a.public)},
		}
		for _, path := range []string{"/v1/payment_intents", "/v1/payment_intents/pi_x"} {
			for _, c := range cases {
				t.Run(c.name+" "+path, func(t *testing.T) {
					var hs []header
					if c.authorization != "" {
						hs = append(hs, withHeader("Authorization", c.authorization))
					}
					r := e.do("GET", path, nil, hs...)
					assertError(t, r, http.StatusUnauthorized, paykit.CodeUnauthorized, "")
					if got := r.header.Get("WWW-Authenticate"); got != `Basic realm="paykit"` {
						t.Errorf("WWW-Authenticate %q", got)
					}
				})
			}
		}

		// The same keys, properly paired, work.
		is := is.New(t)
		for _, k := range []keys{a, aLive, aOther, b} {
			is.Equal(e.do("GET", "/v1/payment_intents", nil, basic(k)).status, http.StatusOK)
		}
	})
}

func TestTenantScoping(t *testing.T) {
	forEachStore(t, func(t *testing.T, open func(t *testing.T) paykit.Store) {
		is := is.New(t)
		e := newEnv(t, open, envConfig{})
		aTest := e.merchant(paykit.Test)
		aLive := e.keyFor(aTest.merchantID, paykit.Live)
		b := e.merchant(paykit.Test)
		now := time.Now()
		piA := e.seed(aTest, paykit.Test, newid.Random("pi"), "order-1", paykit.PaymentRequiresAction, now)
		piALive := e.seed(aLive, paykit.Live, newid.Random("pi"), "order-1", paykit.PaymentSucceeded, now)
		piB := e.seed(b, paykit.Test, newid.Random("pi"), "order-1", paykit.PaymentProcessing, now)

		listIDs := func(k keys) []string {
			r := e.do("GET", "/v1/payment_intents", nil, basic(k))
			is.Equal(r.status, http.StatusOK)
			var ids []string
			for _, item := range r.json(t)["data"].([]any) {
				ids = append(ids, item.(map[string]any)["id"].(string))
			}
			return ids
		}
		is.Equal(listIDs(aTest), []string{piA.ID})
		is.Equal(listIDs(aLive), []string{piALive.ID}) // a live key sees no test data
		is.Equal(listIDs(b), []string{piB.ID})

		is.Equal(e.do("GET", "/v1/payment_intents/"+piA.ID, nil, basic(aTest)).status, http.StatusOK)
		for _, c := range []struct {
			name string
			k    keys
			id   string
		}{
			{"other merchant's", b, piA.ID},
			{"own, other environment", aLive, piA.ID},
			{"own live from test", aTest, piALive.ID},
			{"unknown", aTest, "pi_unknown"},
		} {
			r := e.do("GET", "/v1/payment_intents/"+c.id, nil, basic(c.k))
			assertError(t, r, http.StatusNotFound, paykit.CodeNotFound, "")
			is.Equal(r.errorOf(t)["message"], "No such payment_intent.") // indistinguishable from unknown
		}

		// Filters do not reach across tenants either.
		r := e.do("GET", "/v1/payment_intents?merchant_reference=order-1&status=succeeded", nil, basic(aTest))
		is.Equal(len(r.json(t)["data"].([]any)), 0)
	})
}

func TestGetPaymentIntentProjection(t *testing.T) {
	forEachStore(t, func(t *testing.T, open func(t *testing.T) paykit.Store) {
		is := is.New(t)
		e := newEnv(t, open, envConfig{})
		k := e.merchant(paykit.Test)
		created := time.Date(2026, 3, 4, 5, 6, 7, 891_000_000, time.UTC)
		pending := e.seed(k, paykit.Test, "pi_pending_"+newid.Random("x"), "ref-pending", paykit.PaymentRequiresAction, created)
		paid := e.seed(k, paykit.Test, "pi_paid_"+newid.Random("x"), "ref-paid", paykit.PaymentSucceeded, created.Add(time.Second))

		got := e.do("GET", "/v1/payment_intents/"+pending.ID, nil, basic(k)).json(t)
		is.Equal(got, map[string]any{
			"object": "payment_intent", "id": pending.ID, "status": "requires_action",
			"amount": "12345", "captured_amount": "0", "refunded_amount": "0", "disputed_amount": "0", "currency": "MYR", "country": "MY",
			"merchant_reference": "ref-pending", "payment_method": "FPX", "environment": "test",
			"next_action": map[string]any{
				"type": "redirect_to_url", "url": "http://127.0.0.1/pay/continue/" + pending.ID,
				"expires_at": "2026-03-04T05:36:07.891Z",
			},
			"failure_code": nil, "receipt": nil,
			"expires_at": "2026-03-04T05:36:07.891Z", "completed_at": nil,
			"created_at": "2026-03-04T05:06:07.891Z", "updated_at": "2026-03-04T05:06:07.891Z",
		})

		got = e.do("GET", "/v1/payment_intents/"+paid.ID, nil, basic(k)).json(t)
		is.Equal(got["status"], "succeeded")
		is.Equal(got["captured_amount"], "12345")
		is.Equal(got["next_action"], nil)
		is.Equal(got["completed_at"], "2026-03-04T05:07:08.891Z")
		is.Equal(got["receipt"], map[string]any{
			"number": "R-" + paid.ID, "paid_at": "2026-03-04T05:07:08.891Z", "amount": "12345",
			"currency": "MYR", "payment_method": "FPX",
		})

		// A query parameter this route does not define is refused.
		assertError(t, e.do("GET", "/v1/payment_intents/"+paid.ID+"?expand=x", nil, basic(k)), 400, paykit.CodeInvalidRequest, "expand")
	})
}

func TestListPaymentIntentsFiltersAndPaging(t *testing.T) {
	forEachStore(t, func(t *testing.T, open func(t *testing.T) paykit.Store) {
		e := newEnv(t, open, envConfig{})
		k := e.merchant(paykit.Test)
		base := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
		type seeded struct {
			status   paykit.PaymentStatus
			currency string
			country  string
			minutes  int
		}
		rows := []seeded{
			{paykit.PaymentRequiresAction, "MYR", "MY", 0},
			{paykit.PaymentSucceeded, "MYR", "MY", 1},
			{paykit.PaymentFailed, "THB", "TH", 2},
			{paykit.PaymentSucceeded, "THB", "TH", 3},
			{paykit.PaymentProcessing, "MYR", "MY", 4},
			{paykit.PaymentCancelled, "MYR", "MY", 5},
			{paykit.PaymentSucceeded, "MYR", "MY", 6},
		}
		ids := make([]string, len(rows)) // ids[i] is row i; newest is last
		for i, r := range rows {
			ids[i] = fmt.Sprintf("pi_%02d_%s", i, newid.Random("x"))
			pi := e.seed(k, paykit.Test, ids[i], fmt.Sprintf("order-%d", i), r.status, base.Add(time.Duration(r.minutes)*time.Minute))
			if r.currency != "MYR" {
				pi.Currency, pi.Country = r.currency, r.country
				if err := e.store.UpdatePaymentIntent(e.ctx, pi); err != nil {
					t.Fatal(err)
				}
			}
		}
		newestFirst := func(idx ...int) []string {
			out := []string{}
			for _, i := range idx {
				out = append(out, ids[i])
			}
			return out
		}

		// list returns all ids over every page (page size limit), checking
		// has_more and next_cursor on each.
		list := func(t *testing.T, query string, limit int) []string {
			t.Helper()
			var got []string
			cursor := ""
			for pages := 0; ; pages++ {
				if pages > len(rows) {
					t.Fatal("paging does not end")
				}
				q, _ := url.ParseQuery(query)
				if limit > 0 {
					q.Set("limit", fmt.Sprint(limit))
				}
				if cursor != "" {
					q.Set("cursor", cursor)
				}
				r := e.do("GET", "/v1/payment_intents?"+q.Encode(), nil, basic(k))
				if r.status != http.StatusOK {
					t.Fatalf("status %d: %s", r.status, r.body)
				}
				body := r.json(t)
				if body["object"] != "list" {
					t.Fatalf("object %v", body["object"])
				}
				data := body["data"].([]any)
				for _, item := range data {
					got = append(got, item.(map[string]any)["id"].(string))
				}
				if body["has_more"] != true {
					if body["next_cursor"] != nil {
						t.Fatalf("last page has next_cursor %v", body["next_cursor"])
					}
					return got
				}
				if limit > 0 && len(data) != limit {
					t.Fatalf("a page before the last has %d items, want %d", len(data), limit)
				}
				cursor = body["next_cursor"].(string)
			}
		}

		cases := []struct {
			name  string
			query string
			want  []string
		}{
			{"all", "", newestFirst(6, 5, 4, 3, 2, 1, 0)},
			{"one status", "status=succeeded", newestFirst(6, 3, 1)},
			{"comma-separated statuses", "status=succeeded,failed", newestFirst(6, 3, 2, 1)},
			{"repeated status", "status=succeeded&status=requires_action", newestFirst(6, 3, 1, 0)},
			{"currency", "currency=THB", newestFirst(3, 2)},
			{"country", "country=MY", newestFirst(6, 5, 4, 1, 0)},
			{"merchant reference", "merchant_reference=order-4", newestFirst(4)},
			{"created_after is inclusive", "created_after=2026-05-01T00:04:00Z", newestFirst(6, 5, 4)},
			{"created_before is exclusive", "created_before=2026-05-01T00:02:00.000Z", newestFirst(1, 0)},
			{"window with offsets", "created_after=2026-05-01T07:01:00%2B07:00&created_before=2026-04-30T19:03:00-05:00", newestFirst(2, 1)},
			{"unencoded plus", "created_after=2026-05-01T07:05:00+07:00", newestFirst(6, 5)},
			{"combined", "status=succeeded&currency=MYR&created_after=2026-05-01T00:01:00Z", newestFirst(6, 1)},
			{"no match", "country=SG", newestFirst()},
		}
		for _, c := range cases {
			for _, limit := range []int{0, 1, 2, 100} {
				t.Run(fmt.Sprintf("%s limit %d", c.name, limit), func(t *testing.T) {
					got := list(t, c.query, limit)
					if got == nil {
						got = []string{}
					}
					if strings.Join(got, " ") != strings.Join(c.want, " ") {
						t.Errorf("got %v\nwant %v", got, c.want)
					}
				})
			}
		}

		t.Run("default limit is 25", func(t *testing.T) {
			is := is.New(t)
			for i := range 30 {
				e.seed(k, paykit.Test, fmt.Sprintf("pi_bulk_%02d_%s", i, newid.Random("x")), fmt.Sprintf("bulk-%d", i),
					paykit.PaymentExpired, base.Add(-time.Duration(i+1)*time.Hour))
			}
			body := e.do("GET", "/v1/payment_intents", nil, basic(k)).json(t)
			is.Equal(len(body["data"].([]any)), 25)
			is.Equal(body["has_more"], true)
			is.Equal(len(list(t, "status=expired", 0)), 30)
		})
	})
}

func TestListPaymentIntentsBadParameters(t *testing.T) {
	forEachStore(t, func(t *testing.T, open func(t *testing.T) paykit.Store) {
		e := newEnv(t, open, envConfig{})
		k := e.merchant(paykit.Test)
		opCursor := func() string { // a cursor of another list
			for range 2 {
				if _, err := e.svc.CreateMerchant(e.ctx, "test", "x"); err != nil {
					t.Fatal(err)
				}
			}
			r := e.do("GET", "/operator/audit_events?limit=1", nil, bearer(e.opToken))
			return r.json(t)["next_cursor"].(string)
		}()
		cases := []struct{ query, param string }{
			{"limit=0", "limit"},
			{"limit=101", "limit"},
			{"limit=-1", "limit"},
			{"limit=ten", "limit"},
			{"limit=", "limit"},
			{"limit=1&limit=2", "limit"},
			{"cursor=", "cursor"},
			{"cursor=bm90LWEtY3Vyc29y", "cursor"},
			{"cursor=abc.def", "cursor"},
			{"cursor=" + url.QueryEscape(opCursor), "cursor"},
			{"status=", "status"},
			{"status=paid", "status"},
			{"status=succeeded,", "status"},
			{"status=succeeded,,failed", "status"},
			{"status=SUCCEEDED", "status"},
			{"currency=myr", "currency"},
			{"currency=MY", "currency"},
			{"currency=", "currency"},
			{"country=MYS", "country"},
			{"country=my", "country"},
			{"merchant_reference=", "merchant_reference"},
			{"merchant_reference=" + strings.Repeat("r", 257), "merchant_reference"},
			{"created_after=2026-05-01", "created_after"},
			{"created_after=2026-05-01T00:00:00", "created_after"},
			{"created_after=yesterday", "created_after"},
			{"created_after=", "created_after"},
			{"created_before=1714521600", "created_before"},
			{"starting_after=pi_1", "starting_after"},
		}
		for _, c := range cases {
			t.Run(c.query, func(t *testing.T) {
				r := e.do("GET", "/v1/payment_intents?"+c.query, nil, basic(k))
				assertError(t, r, http.StatusBadRequest, paykit.CodeInvalidRequest, c.param)
			})
		}
	})
}

func TestRequestIDAndUnknownRoutes(t *testing.T) {
	forEachStore(t, func(t *testing.T, open func(t *testing.T) paykit.Store) {
		is := is.New(t)
		e := newEnv(t, open, envConfig{})
		k := e.merchant(paykit.Test)
		seen := map[string]bool{}
		// An unknown path is 404; a known path with another method 405,
		// with Allow listing the methods it takes.
		for _, c := range []struct {
			method, path string
			auth         header
			allow        string // "": 404
		}{
			{"GET", "/v1/nope", basic(k), ""},
			{"GET", "/v1/nope", nil, ""},
			{"GET", "/v1/payment_intents/", basic(k), ""},
			{"POST", "/v1/payment_intents/pi_1", basic(k), "GET, HEAD"},
			{"DELETE", "/v1/payment_intents", basic(k), "GET, HEAD, POST"},
			{"PUT", "/v1/openapi.json", nil, "GET, HEAD"},
			{"GET", "/v1/", nil, ""},
			{"GET", "/operator/nope", bearer(e.opToken), ""},
			{"DELETE", "/operator/merchants/mch_1", bearer(e.opToken), "GET, HEAD"},
		} {
			var hs []header
			if c.auth != nil {
				hs = append(hs, c.auth)
			}
			r := e.do(c.method, c.path, nil, hs...)
			if c.allow == "" {
				assertError(t, r, http.StatusNotFound, paykit.CodeNotFound, "")
				is.True(strings.HasPrefix(r.errorOf(t)["message"].(string), "Unrecognized request URL ("+c.method+" "))
			} else {
				assertError(t, r, http.StatusMethodNotAllowed, paykit.CodeMethodNotAllowed, "")
				is.Equal(r.header.Get("Allow"), c.allow)
			}
			id := r.header.Get("Request-Id")
			is.True(!seen[id]) // a fresh id per request
			seen[id] = true
		}
		// Successes carry one as well.
		r := e.do("GET", "/v1/payment_intents", nil, basic(k))
		is.Equal(r.status, http.StatusOK)
		is.True(requestIDPattern.MatchString(r.header.Get("Request-Id")))
		is.True(!seen[r.header.Get("Request-Id")])
	})
}

func TestOpenAPIDocumentServed(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	e := newEnv(t, onMemory, envConfig{})
	r := e.do("GET", "/v1/openapi.json", nil) // no credentials needed
	is.Equal(r.status, http.StatusOK)
	is.Equal(r.header.Get("Content-Type"), "application/json")
	is.Equal(strings.TrimSpace(string(r.body)), strings.TrimSpace(string(httpadapter.OpenAPIDocument())))
	is.Equal(r.json(t)["openapi"], "3.1.0")
}

func TestRateLimit(t *testing.T) {
	forEachStore(t, func(t *testing.T, open func(t *testing.T) paykit.Store) {
		is := is.New(t)
		clock := paykit.NewManualClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
		e := newEnv(t, open, envConfig{rateLimit: 2, now: clock.Now}) // 2/s, burst 4
		a := e.merchant(paykit.Test)
		b := e.merchant(paykit.Test)

		for range 4 {
			is.Equal(e.do("GET", "/v1/payment_intents", nil, basic(a)).status, http.StatusOK)
		}
		r := e.do("GET", "/v1/payment_intents", nil, basic(a))
		assertError(t, r, http.StatusTooManyRequests, paykit.CodeRateLimited, "")
		is.Equal(r.header.Get("Retry-After"), "1") // half a second, rounded up
		// Other keys have their own bucket.
		is.Equal(e.do("GET", "/v1/payment_intents", nil, basic(b)).status, http.StatusOK)
		// A refused request takes no token: after 500 ms one is back.
		clock.Advance(500 * time.Millisecond)
		is.Equal(e.do("GET", "/v1/payment_intents", nil, basic(a)).status, http.StatusOK)
		assertError(t, e.do("GET", "/v1/payment_intents/pi_x", nil, basic(a)), http.StatusTooManyRequests, paykit.CodeRateLimited, "")
		clock.Advance(2 * time.Second)
		for range 4 {
			is.Equal(e.do("GET", "/v1/payment_intents", nil, basic(a)).status, http.StatusOK)
		}
		// Failed authentication is 401, never 429, and the spec is public.
		assertError(t, e.do("GET", "/v1/payment_intents", nil, basic(keys{public: a.public, secret: a.secret + "x"})), 401, paykit.CodeUnauthorized, "")
		is.Equal(e.do("GET", "/v1/openapi.json", nil).status, http.StatusOK)
	})
}

func TestRateLimitOff(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	clock := paykit.NewManualClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	e := newEnv(t, onMemory, envConfig{now: clock.Now})
	k := e.merchant(paykit.Test)
	for range 50 {
		is.Equal(e.do("GET", "/v1/payment_intents", nil, basic(k)).status, http.StatusOK)
	}
}
