package httpadapter_test

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/httpadapter"
	"github.com/paykit/paykit/internal/newid"
	"github.com/paykit/paykit/store/memory"
)

func TestOperatorFlow(t *testing.T) {
	forEachStore(t, func(t *testing.T, open func(t *testing.T) paykit.Store) {
		is := is.New(t)
		e := newEnv(t, open, envConfig{})
		op := bearer(e.opToken)

		// Create a merchant.
		r := e.do("POST", "/operator/merchants", map[string]any{"name": "  Kedai Kopi  "}, op)
		is.Equal(r.status, http.StatusCreated)
		m := r.json(t)
		is.Equal(m["object"], "merchant")
		is.Equal(m["name"], "Kedai Kopi")
		id := m["id"].(string)
		is.True(strings.HasPrefix(id, "mch_"))
		r = e.do("GET", "/operator/merchants/"+id, nil, op)
		is.Equal(r.status, http.StatusOK)
		is.Equal(r.json(t), m)

		// Issue a test key pair; the secret is in this answer only.
		r = e.do("POST", "/operator/merchants/"+id+"/api_keys", map[string]any{"environment": "test"}, op)
		is.Equal(r.status, http.StatusCreated)
		key := r.json(t)
		is.Equal(key["object"], "api_key")
		is.Equal(key["merchant_id"], id)
		is.Equal(key["environment"], "test")
		pk, sk := key["public_key"].(string), key["secret_key"].(string)
		is.True(strings.HasPrefix(pk, "pk_test_"))
		is.True(strings.HasPrefix(sk, "sk_test_"))
		k := keys{merchantID: id, keyID: key["id"].(string), public: pk, secret: sk}

		// It authenticates on the merchant API.
		r = e.do("GET", "/v1/payment_intents", nil, basic(k))
		is.Equal(r.status, http.StatusOK)
		is.Equal(r.json(t), map[string]any{"object": "list", "data": []any{}, "has_more": false, "next_cursor": nil})

		// A live key of the same merchant sees none of its test data.
		r = e.do("POST", "/operator/merchants/"+id+"/api_keys", map[string]any{"environment": "live"}, op)
		is.Equal(r.status, http.StatusCreated)
		liveKey := r.json(t)
		live := keys{merchantID: id, public: liveKey["public_key"].(string), secret: liveKey["secret_key"].(string)}
		is.True(strings.HasPrefix(live.public, "pk_live_"))
		e.seed(k, paykit.Test, newid.Random("pi"), "ref-1", paykit.PaymentSucceeded, e.svc.Now())
		is.Equal(len(e.do("GET", "/v1/payment_intents", nil, basic(k)).json(t)["data"].([]any)), 1)
		is.Equal(len(e.do("GET", "/v1/payment_intents", nil, basic(live)).json(t)["data"].([]any)), 0)

		// Listing keys shows no secret.
		r = e.do("GET", "/operator/merchants/"+id+"/api_keys", nil, op)
		is.Equal(r.status, http.StatusOK)
		is.True(!strings.Contains(string(r.body), sk))
		list := r.json(t)
		is.Equal(list["has_more"], false)
		is.Equal(len(list["data"].([]any)), 2)
		listed := list["data"].([]any)[1].(map[string]any) // newest first
		is.Equal(listed["id"], k.keyID)
		is.Equal(listed["secret_key_last4"], sk[len(sk)-4:])
		is.Equal(listed["revoked_at"], nil)

		// Revoke: the key stops working at once, the other keeps working.
		r = e.do("POST", "/operator/api_keys/"+k.keyID+"/revoke", nil, op)
		is.Equal(r.status, http.StatusOK)
		revoked := r.json(t)
		is.Equal(revoked["id"], k.keyID)
		is.True(revoked["revoked_at"] != nil)
		assertError(t, e.do("GET", "/v1/payment_intents", nil, basic(k)), http.StatusUnauthorized, paykit.CodeUnauthorized, "")
		is.Equal(e.do("GET", "/v1/payment_intents", nil, basic(live)).status, http.StatusOK)
		r = e.do("POST", "/operator/api_keys/"+k.keyID+"/revoke", nil, bearer("op-token-bob-9876543210"))
		is.Equal(r.status, http.StatusOK) // again: harmless, unchanged
		is.Equal(r.json(t)["revoked_at"], revoked["revoked_at"])

		// The audit log says who did what.
		r = e.do("GET", "/operator/audit_events?merchant_id="+id, nil, op)
		is.Equal(r.status, http.StatusOK)
		var actions []string
		for _, item := range r.json(t)["data"].([]any) {
			ev := item.(map[string]any)
			is.Equal(ev["object"], "audit_event")
			is.Equal(ev["actor"], "alice")
			is.Equal(ev["merchant_id"], id)
			actions = append(actions, ev["action"].(string))
		}
		// Newest first by time; actions within one millisecond have no
		// order, so compare the set.
		slices.Sort(actions)
		is.Equal(actions, []string{"api_key.create", "api_key.create", "api_key.revoke", "merchant.create"})

		// Filter by action, and page.
		r = e.do("GET", "/operator/audit_events?merchant_id="+id+"&action=api_key.create&limit=1", nil, op)
		page := r.json(t)
		is.Equal(len(page["data"].([]any)), 1)
		is.Equal(page["has_more"], true)
		r = e.do("GET", "/operator/audit_events?merchant_id="+id+"&action=api_key.create&limit=1&cursor="+page["next_cursor"].(string), nil, op)
		page2 := r.json(t)
		is.Equal(len(page2["data"].([]any)), 1)
		is.Equal(page2["has_more"], false)
		is.True(page2["data"].([]any)[0].(map[string]any)["id"] != page["data"].([]any)[0].(map[string]any)["id"])
		is.Equal(page2["data"].([]any)[0].(map[string]any)["environment"], "test")
	})
}

func TestOperatorAuthFailures(t *testing.T) {
	forEachStore(t, func(t *testing.T, open func(t *testing.T) paykit.Store) {
		e := newEnv(t, open, envConfig{})
		k := e.merchant(paykit.Test)
		for _, c := range []struct{ name, authorization string }{
			{"missing", ""},
			{"empty bearer", "Bearer "},
			{"wrong token", "Bearer " + e.opToken + "x"},
			{"prefix of token", "Bearer " + e.opToken[:10]},
			{"basic", basicValue("alice", e.opToken)},
			{"merchant key", basicValue(k.public, k.secret)},
			{"secret key as token", "Bearer " + k.secret},
			{"no scheme", e.opToken},
		} {
			for _, target := range []struct{ method, path string }{
				{"GET", "/operator/audit_events"},
				{"POST", "/operator/merchants"},
				{"POST", "/operator/api_keys/" + k.keyID + "/revoke"},
			} {
				t.Run(c.name+" "+target.method+" "+target.path, func(t *testing.T) {
					var hs []header
					if c.authorization != "" {
						hs = append(hs, withHeader("Authorization", c.authorization))
					}
					r := e.do(target.method, target.path, nil, hs...)
					assertError(t, r, http.StatusUnauthorized, paykit.CodeUnauthorized, "")
					if got := r.header.Get("WWW-Authenticate"); got != `Bearer realm="paykit-operator"` {
						t.Errorf("WWW-Authenticate %q", got)
					}
				})
			}
		}
		// Nothing was revoked.
		is.New(t).Equal(e.do("GET", "/v1/payment_intents", nil, basic(k)).status, http.StatusOK)
		// The scheme name is case-insensitive.
		is.New(t).Equal(e.do("GET", "/operator/audit_events", nil, withHeader("Authorization", "bearer "+e.opToken)).status, http.StatusOK)
	})
}

func TestOperatorWithoutTokensRefusesAll(t *testing.T) {
	t.Parallel()
	svc, err := paykit.New(paykit.Config{Store: memory.New()})
	if err != nil {
		t.Fatal(err)
	}
	client := spec().Client(t)
	for _, tokens := range []map[string]string{nil, {"alice": ""}} {
		srv := httptest.NewServer(http.StripPrefix("/operator", httpadapter.NewOperatorAPI(svc, httpadapter.OperatorOptions{
			Tokens: tokens, Logger: slog.New(slog.DiscardHandler),
		})))
		for _, auth := range []string{"", "Bearer ", "Bearer x", "Bearer alice"} {
			req, _ := http.NewRequest("GET", srv.URL+"/operator/audit_events", nil)
			if auth != "" {
				req.Header.Set("Authorization", auth)
			}
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusUnauthorized {
				t.Errorf("tokens %v, Authorization %q: status %d", tokens, auth, resp.StatusCode)
			}
		}
		srv.Close()
	}
}

func TestOperatorBadRequests(t *testing.T) {
	forEachStore(t, func(t *testing.T, open func(t *testing.T) paykit.Store) {
		e := newEnv(t, open, envConfig{})
		op := bearer(e.opToken)
		k := e.merchant(paykit.Test)
		cases := []struct {
			name, method, path string
			body               any
			headers            []header
			status             int
			code, param        string
		}{
			{"no body", "POST", "/operator/merchants", nil, []header{withHeader("Content-Type", "application/json")}, 400, paykit.CodeInvalidRequest, ""},
			{"form body", "POST", "/operator/merchants", "name=x", []header{withHeader("Content-Type", "application/x-www-form-urlencoded")}, 400, paykit.CodeInvalidRequest, "Content-Type"},
			{"missing name", "POST", "/operator/merchants", map[string]any{}, nil, 400, paykit.CodeInvalidRequest, "name"},
			{"blank name", "POST", "/operator/merchants", map[string]any{"name": "   "}, nil, 400, paykit.CodeInvalidRequest, "name"},
			{"long name", "POST", "/operator/merchants", map[string]any{"name": strings.Repeat("n", 257)}, nil, 400, paykit.CodeInvalidRequest, "name"},
			{"name not a string", "POST", "/operator/merchants", map[string]any{"name": 7}, nil, 400, paykit.CodeInvalidRequest, "name"},
			{"unknown field", "POST", "/operator/merchants", map[string]any{"name": "x", "country": "MY"}, nil, 400, paykit.CodeInvalidRequest, "country"},
			{"field name case", "POST", "/operator/merchants", map[string]any{"Name": "x"}, nil, 400, paykit.CodeInvalidRequest, "Name"},
			{"bad environment", "POST", "/operator/merchants/" + k.merchantID + "/api_keys", map[string]any{"environment": "staging"}, nil, 400, paykit.CodeInvalidRequest, "environment"},
			{"missing environment", "POST", "/operator/merchants/" + k.merchantID + "/api_keys", map[string]any{}, nil, 400, paykit.CodeInvalidRequest, "environment"},
			{"key for unknown merchant", "POST", "/operator/merchants/mch_nope/api_keys", map[string]any{"environment": "test"}, nil, 404, paykit.CodeNotFound, ""},
			{"unknown merchant", "GET", "/operator/merchants/mch_nope", nil, nil, 404, paykit.CodeNotFound, ""},
			{"keys of unknown merchant", "GET", "/operator/merchants/mch_nope/api_keys", nil, nil, 404, paykit.CodeNotFound, ""},
			{"revoke unknown key", "POST", "/operator/api_keys/key_nope/revoke", nil, nil, 404, paykit.CodeNotFound, ""},
			{"audit limit", "GET", "/operator/audit_events?limit=0", nil, nil, 400, paykit.CodeInvalidRequest, "limit"},
			{"audit cursor", "GET", "/operator/audit_events?cursor=x", nil, nil, 400, paykit.CodeInvalidRequest, "cursor"},
			{"audit empty filter", "GET", "/operator/audit_events?action=", nil, nil, 400, paykit.CodeInvalidRequest, "action"},
			{"audit unknown filter", "GET", "/operator/audit_events?actor=alice", nil, nil, 400, paykit.CodeInvalidRequest, "actor"},
			{"too large", "POST", "/operator/merchants", `{"name":"` + strings.Repeat("n", 70_000) + `"}`, nil, 413, paykit.CodeRequestTooLarge, ""},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				r := e.do(c.method, c.path, c.body, append([]header{op}, c.headers...)...)
				assertError(t, r, c.status, c.code, c.param)
			})
		}
	})
}
