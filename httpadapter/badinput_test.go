package httpadapter_test

import (
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/matryer/is"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/httpadapter"
	"github.com/paykit/paykit/internal/newid"
)

// Input that is not text (a NUL character or invalid UTF-8) is refused at
// the edge, whatever the route and wherever it hides, on every Store: no
// 5xx, only the contract's 400 naming the parameter, or 401 for
// credentials.

// badText are the two ways a string can fail to be text, as raw bytes.
var badText = []struct{ name, raw, json string }{
	{"NUL", "a\x00b", `"a\u0000b"`},
	{"invalid UTF-8", "a\xffb", "\"a\xffb\""},
}

// routeAPI is one of the APIs env mounts, with what its routes need.
type routeAPI struct {
	prefix  string
	handler http.Handler // a twin of the mounted one: its Patterns are the same
	auth    header       // valid credentials
	// badAuth is credentials holding raw; sendable reports whether an HTTP
	// client can send them (Go refuses a NUL in a header value).
	badAuth func(raw string) (h header, sendable bool)
}

func routeAPIs(e *env, k keys) []routeAPI {
	return []routeAPI{
		{"/v1", httpadapter.NewMerchantAPI(e.svc, httpadapter.Options{}), basic(k),
			func(raw string) (header, bool) {
				return func(h http.Header) { h.Set("Authorization", basicValue(k.public+raw, k.secret)) }, true
			}},
		{"/operator", httpadapter.NewOperatorAPI(e.svc, httpadapter.OperatorOptions{}), bearer(e.opToken),
			func(raw string) (header, bool) { return bearer(e.opToken + raw), !strings.Contains(raw, "\x00") }},
	}
}

// wildcards returns the names of the {wildcards} of a path template.
func wildcards(path string) []string {
	var names []string
	for seg := range strings.SplitSeq(path, "/") {
		if name, ok := strings.CutPrefix(seg, "{"); ok {
			names = append(names, strings.TrimSuffix(strings.TrimSuffix(name, "}"), "..."))
		}
	}
	return names
}

// fillPath replaces each wildcard of path by its value in values, or
// "x_1", escaped.
func fillPath(path string, values map[string]string) string {
	segs := strings.Split(path, "/")
	for i, seg := range segs {
		if name, ok := strings.CutPrefix(seg, "{"); ok {
			v, ok := values[strings.TrimSuffix(name, "}")]
			if !ok {
				v = "x_1"
			}
			segs[i] = url.PathEscape(v)
		}
	}
	return strings.Join(segs, "/")
}

// nestedBodyField is the body member spoilt for creates that have nested
// ones, to see the dotted path named.
var nestedBodyField = map[string]string{
	"POST /v1/payment_intents": "customer.name",
	"POST /v1/checkouts":       "customer.name",
	"POST /v1/payout_intents":  "recipient.account_number",
}

// bodyFieldFor names the body member the test spoils for an operation
// ("POST /v1/payment_intents"): the nested one of nestedBodyField, else the
// first string member of the documented schema (sorted), else an
// undocumented one (the text is refused before the member is).
func bodyFieldFor(key string, op *openapi3.Operation) string {
	if f, ok := nestedBodyField[key]; ok {
		return f
	}
	if mt := op.RequestBody.Value.Content.Get("application/json"); mt != nil && mt.Schema != nil {
		props := mt.Schema.Value.Properties
		for _, name := range slices.Sorted(maps.Keys(props)) {
			if t := props[name].Value.Type; t != nil && t.Includes("string") {
				return name
			}
		}
	}
	return "x"
}

// jsonWith is a JSON object whose member at the dotted path holds value
// (JSON text).
func jsonWith(path, value string) string {
	parts := strings.Split(path, ".")
	for i := len(parts) - 1; i >= 0; i-- {
		value = `{"` + parts[i] + `":` + value + `}`
	}
	return value
}

// hasHeaderParam reports whether op documents the header parameter name.
func hasHeaderParam(op *openapi3.Operation, name string) bool {
	for _, p := range op.Parameters {
		if p.Value != nil && p.Value.In == "header" && p.Value.Name == name {
			return true
		}
	}
	return false
}

// serveDirect sends req to the env's handler in-process, for what no HTTP
// client sends (a NUL in a header), and validates the answer against the
// OpenAPI document like the env's client does.
func (e *env) serveDirect(req *http.Request) response {
	e.t.Helper()
	rec := httptest.NewRecorder()
	e.srv.Config.Handler.ServeHTTP(rec, req)
	resp := rec.Result()
	if err := spec().Check(req, resp); err != nil {
		e.t.Errorf("OpenAPI: %s %s → %d: %v", req.Method, req.URL.Path, resp.StatusCode, err)
	}
	body, _ := io.ReadAll(resp.Body)
	return response{resp.StatusCode, resp.Header, body}
}

func TestBadTextIsRefusedOnEveryRoute(t *testing.T) {
	forEachStore(t, func(t *testing.T, open func(t *testing.T) paykit.Store) {
		e := newEnv(t, open, envConfig{})
		k := e.merchant(paykit.Test)
		doc := spec().Doc()
		for _, a := range routeAPIs(e, k) {
			for _, pattern := range httpadapter.Patterns(a.handler) {
				method, path, _ := strings.Cut(pattern, " ")
				key := method + " " + a.prefix + path
				item := doc.Paths.Find(a.prefix + path)
				if item == nil || item.GetOperation(method) == nil {
					t.Errorf("%s: not in the OpenAPI document", key)
					continue
				}
				op := item.GetOperation(method)
				authenticated := op.Security == nil || len(*op.Security) > 0
				for _, bad := range badText {
					// Every request is otherwise good enough to reach the
					// input it spoils.
					send := func(path, query string, body any, hs ...header) response {
						hs = append([]header{a.auth, idem("bad-text-" + newid.Random("k"))}, hs...)
						return e.do(method, a.prefix+path+query, body, hs...)
					}
					t.Run(key+"/"+bad.name, func(t *testing.T) {
						for _, w := range wildcards(path) {
							r := send(fillPath(path, map[string]string{w: "pi_" + bad.raw}), "", nil)
							assertError(t, r, http.StatusBadRequest, paykit.CodeInvalidRequest, w)
						}
						q := "?merchant_reference=" + url.QueryEscape(bad.raw)
						assertError(t, send(fillPath(path, nil), q, nil), http.StatusBadRequest, paykit.CodeInvalidRequest, "merchant_reference")
						q = "?" + url.QueryEscape(bad.raw) + "=1"
						assertError(t, send(fillPath(path, nil), q, nil), http.StatusBadRequest, paykit.CodeInvalidRequest, "")
						if op.RequestBody != nil {
							field := bodyFieldFor(key, op)
							r := send(fillPath(path, nil), "", jsonWith(field, bad.json))
							assertError(t, r, http.StatusBadRequest, paykit.CodeInvalidRequest, field)
							// A member name.
							r = send(fillPath(path, nil), "", `{"metadata":{`+bad.json+`:"v"}}`)
							assertError(t, r, http.StatusBadRequest, paykit.CodeInvalidRequest, "metadata")
						}
						if hasHeaderParam(op, "Idempotency-Key") {
							req := httptest.NewRequest(method, a.prefix+fillPath(path, nil), strings.NewReader("{}"))
							req.Header.Set("Content-Type", "application/json")
							a.auth(req.Header)
							req.Header.Set("Idempotency-Key", "key-"+bad.raw)
							assertError(t, e.serveDirect(req), http.StatusBadRequest, paykit.CodeInvalidRequest, "Idempotency-Key")
						}
						if authenticated {
							h, sendable := a.badAuth(bad.raw)
							var r response
							if sendable {
								r = e.do(method, a.prefix+fillPath(path, nil), nil, h)
							} else {
								req := httptest.NewRequest(method, a.prefix+fillPath(path, nil), nil)
								h(req.Header)
								r = e.serveDirect(req)
							}
							assertError(t, r, http.StatusUnauthorized, paykit.CodeUnauthorized, "")
							if r.header.Get("WWW-Authenticate") == "" {
								t.Errorf("401 without WWW-Authenticate")
							}
						}
					})
				}
			}
		}
	})
}

// The payer pages answer bad text with their HTML error page, the Provider
// callbacks with the JSON error; neither lets it reach the Store.
func TestBadTextPayerPagesAndCallbacks(t *testing.T) {
	forEachStore(t, func(t *testing.T, open func(t *testing.T) paykit.Store) {
		is := is.New(t)
		e := newPayEnv(t, open)
		k := e.merchant(paykit.Test)
		co := e.createCheckout(k, "co-bad-text", checkoutBody("15000", "order-bad-text"))
		cu := co["checkout_url"].(string)
		f := e.openForm(cu)
		htmlError := func(r response) {
			t.Helper()
			is.Equal(r.status, http.StatusBadRequest)
			is.Equal(r.header.Get("Content-Type"), "text/html; charset=utf-8")
			is.True(strings.Contains(string(r.body), "Something went wrong"))
		}
		for _, bad := range badText {
			t.Run(bad.name, func(t *testing.T) {
				payer := fpxPayer("MAYBANK")
				payer.Set("customer.name", "Aisyah "+bad.raw)
				htmlError(e.submit(cu, f, f.cookie, payer))
				htmlError(e.visit("GET", cu+"?continue="+url.QueryEscape(bad.raw)))
				htmlError(e.visit("GET", e.srv.URL+"/pay/continue/"+url.PathEscape("tok"+bad.raw)))
				htmlError(e.visit("GET", e.srv.URL+"/pay/checkouts/"+url.PathEscape(tokenOf(cu)+bad.raw)))

				r := e.do("POST", "/providers/"+url.PathEscape("sandbox"+bad.raw)+"/webhooks", "{}")
				assertError(t, r, http.StatusBadRequest, paykit.CodeInvalidRequest, "provider")
				r = e.do("POST", "/providers/sandbox/webhooks?id="+url.QueryEscape(bad.raw), "{}")
				assertError(t, r, http.StatusBadRequest, paykit.CodeInvalidRequest, "id")
			})
		}
		// Nothing was started: the payer can still pay.
		is.Equal(e.psp.PaymentCount(), 0)
		is.Equal(e.submit(cu, f, f.cookie, fpxPayer("MAYBANK")).status, http.StatusSeeOther)
	})
}

// Timestamps outside the years 0001 to 9999 (in UTC) are refused on every
// route that takes one, on every Store; the bounds themselves are fine.
func TestTimestampsOutOfRange(t *testing.T) {
	forEachStore(t, func(t *testing.T, open func(t *testing.T) paykit.Store) {
		e := newEnv(t, open, envConfig{})
		k := e.merchant(paykit.Test)
		doc := spec().Doc()
		tested := 0
		for _, a := range routeAPIs(e, k) {
			for _, pattern := range httpadapter.Patterns(a.handler) {
				method, path, _ := strings.Cut(pattern, " ")
				op := doc.Paths.Find(a.prefix + path).GetOperation(method)
				for _, p := range op.Parameters {
					if p.Value.In != "query" || p.Value.Schema == nil || p.Value.Schema.Value.Format != "date-time" {
						continue
					}
					name := p.Value.Name
					tested++
					target := a.prefix + fillPath(path, nil) + "?" + name + "="
					t.Run(pattern+"/"+name, func(t *testing.T) {
						for _, v := range []string{
							"0000-01-01T00:00:00Z",
							"0000-12-31T23:59:59.999Z",
							"0001-01-01T00:00:00+00:01", // 0000-12-31 in UTC
							"9999-12-31T23:30:00-01:00", // 10000-01-01 in UTC
						} {
							r := e.do(method, target+url.QueryEscape(v), nil, a.auth)
							assertError(t, r, http.StatusBadRequest, paykit.CodeInvalidRequest, name)
						}
						for _, v := range []string{"0001-01-01T00:00:00Z", "9999-12-31T23:59:59.999Z", "2026-01-02T03:04:05+08:00"} {
							if r := e.do(method, target+url.QueryEscape(v), nil, a.auth); r.status != http.StatusOK {
								t.Errorf("%s=%s: %d %s", name, v, r.status, r.body)
							}
						}
					})
				}
			}
		}
		if tested == 0 {
			t.Fatal("no route takes a date-time parameter")
		}
	})
}

// A known path with a method it does not take is 405 method_not_allowed,
// with Allow listing the methods of the path, on every route; an unknown
// path stays 404.
func TestMethodNotAllowed(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	e := newEnv(t, onMemory, envConfig{})
	k := e.merchant(paykit.Test)
	for _, a := range routeAPIs(e, k) {
		methods := map[string][]string{} // path → its methods
		for _, pattern := range httpadapter.Patterns(a.handler) {
			method, path, _ := strings.Cut(pattern, " ")
			methods[path] = append(methods[path], method)
		}
		for path, ms := range methods {
			allow := slices.Clone(ms)
			if slices.Contains(ms, http.MethodGet) {
				allow = append(allow, http.MethodHead)
			}
			slices.Sort(allow)
			for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
				if slices.Contains(allow, m) {
					continue
				}
				r := e.do(m, a.prefix+fillPath(path, nil), nil, a.auth)
				assertError(t, r, http.StatusMethodNotAllowed, paykit.CodeMethodNotAllowed, "")
				is.Equal(r.header.Get("Allow"), strings.Join(allow, ", "))
			}
		}
		r := e.do("DELETE", a.prefix+"/no/such/path", nil, a.auth)
		assertError(t, r, http.StatusNotFound, paykit.CodeNotFound, "")
		is.Equal(r.errorOf(t)["message"], "Unrecognized request URL (DELETE /no/such/path).")
	}
	// The access log and the metrics see them as unmatched.
	is.True(metricValue(t, e, "paykit_http_requests_total", map[string]string{"api": "merchant", "route": "unmatched", "status": "405"}) != nil)
}
