package httpadapter_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"
	dto "github.com/prometheus/client_model/go"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/internal/newid"
)

// logLines decodes the JSON log lines written so far.
func logLines(t *testing.T, e *env) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(e.logs.String()), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		out = append(out, m)
	}
	return out
}

func TestAccessLogKeepsSecretsOut(t *testing.T) {
	forEachStore(t, func(t *testing.T, open func(t *testing.T) paykit.Store) {
		is := is.New(t)
		e := newEnv(t, open, envConfig{})
		op := bearer(e.opToken)

		// A key pair issued over the API, so that its secret passes through
		// the handler.
		r := e.do("POST", "/operator/merchants", map[string]any{"name": "Kedai"}, op)
		mid := r.json(t)["id"].(string)
		r = e.do("POST", "/operator/merchants/"+mid+"/api_keys", map[string]any{"environment": "test"}, op)
		key := r.json(t)
		k := keys{merchantID: mid, keyID: key["id"].(string), public: key["public_key"].(string), secret: key["secret_key"].(string)}
		for i := range 3 {
			e.seed(k, paykit.Test, newid.Random("pi"), "ref-"+string(rune('a'+i)), paykit.PaymentRequiresAction, time.Now().Add(time.Duration(i)*time.Second))
		}

		list := e.do("GET", "/v1/payment_intents?limit=1&status=requires_action", nil, basic(k))
		is.Equal(list.status, http.StatusOK)
		cursor := list.json(t)["next_cursor"].(string)
		is.Equal(e.do("GET", "/v1/payment_intents?limit=1&cursor="+url.QueryEscape(cursor), nil, basic(k)).status, http.StatusOK)
		wrongSecret := k.secret[:len(k.secret)-1] + "Q"
		if wrongSecret == k.secret {
			wrongSecret = k.secret[:len(k.secret)-1] + "R"
		}
		is.Equal(e.do("GET", "/v1/payment_intents", nil, basic(keys{public: k.public, secret: wrongSecret})).status, http.StatusUnauthorized)
		is.Equal(e.do("GET", "/operator/audit_events", nil, bearer("not-the-token-but-secret-ish")).status, http.StatusUnauthorized)
		is.Equal(e.do("POST", "/operator/merchants", `{"name":"x","password":"hunter2-body-secret"}`, op).status, http.StatusBadRequest)

		logs := e.logs.String()
		for name, secret := range map[string]string{
			"secret key":               k.secret,
			"secret key (random part)": strings.TrimPrefix(k.secret, "sk_test_"),
			"wrong secret":             wrongSecret,
			"basic credentials":        base64.StdEncoding.EncodeToString([]byte(k.public + ":" + k.secret)),
			"Authorization value":      basicValue(k.public, k.secret),
			"operator token":           e.opToken,
			"failed operator token":    "not-the-token-but-secret-ish",
			"cursor":                   cursor,
			"body":                     "hunter2-body-secret",
			"query":                    "status=requires_action",
		} {
			if strings.Contains(logs, secret) {
				t.Errorf("log contains the %s", name)
			}
		}
		is.True(!strings.Contains(strings.ToLower(logs), "authorization"))

		// The access log line of an authenticated request.
		var found map[string]any
		for _, l := range logLines(t, e) {
			if l["msg"] == "http request" && l["route"] == "GET /payment_intents" && l["status"] == float64(200) {
				found = l
				break
			}
		}
		is.True(found != nil)
		is.Equal(found["api"], "merchant")
		is.Equal(found["method"], "GET")
		is.Equal(found["path"], "/v1/payment_intents")
		is.Equal(found["merchant_id"], mid)
		is.Equal(found["key_id"], k.keyID)
		is.True(strings.HasPrefix(found["request_id"].(string), "req_"))
		_, hasDuration := found["duration"]
		is.True(hasDuration)

		// The operator's name is in its lines.
		for _, l := range logLines(t, e) {
			if l["route"] == "POST /merchants" && l["status"] == float64(201) {
				is.Equal(l["actor"], "alice")
			}
		}
	})
}

// failingStore makes ListPaymentIntents panic or fail, to exercise the
// 500 paths with a real backend underneath.
type failingStore struct {
	paykit.Store
	panicking bool
}

func (s failingStore) ListPaymentIntents(ctx context.Context, q paykit.ListQuery[paykit.ListParams[paykit.PaymentStatus]]) ([]paykit.PaymentIntent, error) {
	if s.panicking {
		panic("boom: store exploded with dsn postgres://u:hunter2@db")
	}
	return nil, errors.New("dial tcp: connection refused for postgres://u:hunter2@db")
}

func TestInternalErrorsRevealNothing(t *testing.T) {
	forEachStore(t, func(t *testing.T, open func(t *testing.T) paykit.Store) {
		for _, panicking := range []bool{true, false} {
			name := map[bool]string{true: "panic", false: "error"}[panicking]
			t.Run(name, func(t *testing.T) {
				is := is.New(t)
				e := newEnv(t, func(t *testing.T) paykit.Store { return failingStore{open(t), panicking} }, envConfig{})
				k := e.merchant(paykit.Test)
				r := e.do("GET", "/v1/payment_intents", nil, basic(k))
				assertError(t, r, http.StatusInternalServerError, paykit.CodeInternal, "")
				is.Equal(r.errorOf(t)["message"], "An internal error occurred.")
				is.True(!strings.Contains(string(r.body), "hunter2"))
				// The server lives on.
				is.Equal(e.do("GET", "/v1/payment_intents/pi_x", nil, basic(k)).status, http.StatusNotFound)
				// The cause is logged with the request id, for the operator.
				logs := e.logs.String()
				is.True(strings.Contains(logs, r.header.Get("Request-Id")))
				is.True(strings.Contains(logs, map[bool]string{true: "store exploded", false: "connection refused"}[panicking]))
			})
		}
	})
}

// metricValue finds one sample of a metric family by its labels.
func metricValue(t *testing.T, e *env, name string, labels map[string]string) *dto.Metric {
	t.Helper()
	families, err := e.registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
	metrics:
		for _, m := range f.GetMetric() {
			for _, lp := range m.GetLabel() {
				if want, ok := labels[lp.GetName()]; ok && want != lp.GetValue() {
					continue metrics
				}
			}
			return m
		}
	}
	return nil
}

func TestMetrics(t *testing.T) {
	forEachStore(t, func(t *testing.T, open func(t *testing.T) paykit.Store) {
		is := is.New(t)
		e := newEnv(t, open, envConfig{})
		k := e.merchant(paykit.Test)
		for range 3 {
			e.do("GET", "/v1/payment_intents", nil, basic(k))
		}
		e.do("GET", "/v1/payment_intents", nil)
		e.do("GET", "/v1/payment_intents/pi_nope", nil, basic(k))
		e.do("GET", "/v1/no/such/route/"+newid.Random("x"), nil)
		e.do("GET", "/operator/audit_events", nil, bearer(e.opToken))

		count := func(api, route, status string) float64 {
			m := metricValue(t, e, "paykit_http_requests_total", map[string]string{"api": api, "route": route, "status": status})
			if m == nil {
				return 0
			}
			return m.GetCounter().GetValue()
		}
		is.Equal(count("merchant", "GET /payment_intents", "200"), 3.0)
		is.Equal(count("merchant", "GET /payment_intents", "401"), 1.0)
		is.Equal(count("merchant", "GET /payment_intents/{id}", "404"), 1.0)
		is.Equal(count("merchant", "unmatched", "404"), 1.0) // never the raw path
		is.Equal(count("operator", "GET /audit_events", "200"), 1.0)
		h := metricValue(t, e, "paykit_http_request_duration_seconds", map[string]string{"api": "merchant", "route": "GET /payment_intents", "status": "200"})
		is.True(h != nil)
		is.Equal(h.GetHistogram().GetSampleCount(), uint64(3))
	})
}
