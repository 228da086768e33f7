package httpadapter

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/internal/oapitest"
	"github.com/paykit/paykit/internal/validated"
	"github.com/paykit/paykit/store/memory"
)

// sampleRequest stands in for the create routes of later issues: nested
// objects, arrays and maps, and the contract's field rules.
type sampleRequest struct {
	Amount            string            `json:"amount" validate:"required,amount"`
	Currency          string            `json:"currency" validate:"required,currency"`
	Country           string            `json:"country" validate:"required,country"`
	MerchantReference string            `json:"merchant_reference" validate:"required,max=256"`
	Customer          sampleCustomer    `json:"customer"`
	Recipient         *sampleRecipient  `json:"recipient" validate:"required"`
	Items             []sampleItem      `json:"items" validate:"max=3,dive"`
	Metadata          map[string]string `json:"metadata" validate:"max=5,dive,max=20"`
}

type sampleCustomer struct {
	Name  string `json:"name" validate:"required"`
	Email string `json:"email" validate:"omitempty,email"`
}

type sampleRecipient struct {
	Type          string `json:"type" validate:"required,oneof=bank_account"`
	AccountNumber string `json:"account_number" validate:"required,max=34"`
}

type sampleItem struct {
	SKU      string `json:"sku" validate:"required"`
	Quantity int    `json:"quantity" validate:"min=1"`
}

// sampleSpec is the real document plus the test-only POST /v1/samples.
func sampleSpec(t *testing.T) *oapitest.Validator {
	var doc map[string]any
	if err := json.Unmarshal(OpenAPIDocument(), &doc); err != nil {
		t.Fatal(err)
	}
	ref := func(name string) map[string]any { return map[string]any{"$ref": "#/components/responses/" + name} }
	doc["paths"].(map[string]any)["/v1/samples"] = map[string]any{"post": map[string]any{
		"responses": map[string]any{
			"201": map[string]any{
				"description": "echo",
				"headers":     map[string]any{"Request-Id": map[string]any{"$ref": "#/components/headers/Request-Id"}},
				"content": map[string]any{"application/json": map[string]any{"schema": map[string]any{
					"type": "object", "required": []string{"idempotency_key", "request"},
				}}},
			},
			"400": ref("BadRequest"), "401": ref("MerchantUnauthorized"), "413": ref("RequestTooLarge"),
			"429": ref("RateLimited"), "500": ref("InternalError"),
		},
	}}
	doc["paths"].(map[string]any)["/v1/panics"] = map[string]any{"get": map[string]any{
		"responses": map[string]any{"500": ref("InternalError")},
	}}
	raw, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return oapitest.New(t, raw)
}

// sampleServer mounts a merchant API with the sample routes under /v1.
func sampleServer(t *testing.T) (*httptest.Server, keysForTest) {
	t.Helper()
	svc, err := paykit.New(paykit.Config{Store: memory.New(), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	m := NewMerchantAPI(svc, Options{Logger: slog.New(slog.DiscardHandler)}).(*merchantAPI)
	m.handle("POST /samples", m.auth(func(w http.ResponseWriter, r *http.Request, p paykit.Principal) error {
		key, err := idempotencyKey(r)
		if err != nil {
			return err
		}
		var req sampleRequest
		if _, err := decodeBody(w, r, &req); err != nil {
			return err
		}
		m.writeJSON(w, r, http.StatusCreated, map[string]any{"idempotency_key": key, "request": req})
		return nil
	}))
	m.handle("GET /panics", func(w http.ResponseWriter, r *http.Request) error {
		var nilMap map[string]int
		//lint:ignore SA5000 the write to a nil map is the runtime panic this handler exists to raise
		nilMap["x"]++
		return nil
	})
	mux := http.NewServeMux()
	mux.Handle("/v1/", http.StripPrefix("/v1", m))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	ctx := t.Context()
	merchant, err := svc.CreateMerchant(ctx, "test", "Sample")
	if err != nil {
		t.Fatal(err)
	}
	k, err := svc.CreateAPIKey(ctx, "test", merchant.ID, paykit.Test)
	if err != nil {
		t.Fatal(err)
	}
	return srv, keysForTest{k.PublicKey, k.SecretKey}
}

type keysForTest struct{ public, secret string }

const validSample = `{"amount":"10000","currency":"MYR","country":"MY","merchant_reference":"order-1",
	"customer":{"name":"Aisyah","email":"a@example.com"},
	"recipient":{"type":"bank_account","account_number":"000111"},
	"items":[{"sku":"kopi","quantity":2}],"metadata":{"note":"hi"}}`

// withField returns validSample with one top-level or nested member
// replaced (value as raw JSON) or, with value "", removed.
func withField(t *testing.T, path, value string) string {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal([]byte(validSample), &doc); err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(path, ".")
	var node any = doc
	for _, p := range parts[:len(parts)-1] {
		switch n := node.(type) {
		case map[string]any:
			node = n[p]
		case []any:
			node = n[int(p[0]-'0')]
		}
	}
	last := parts[len(parts)-1]
	obj := node.(map[string]any)
	if value == "" {
		delete(obj, last)
	} else {
		var v any
		if err := json.Unmarshal([]byte(value), &v); err != nil {
			t.Fatal(err)
		}
		obj[last] = v
	}
	raw, _ := json.Marshal(doc)
	return string(raw)
}

// chunked hides a reader's length, so the body is sent chunked.
type chunked struct{ io.Reader }

func TestDecodeAndValidate(t *testing.T) {
	v := sampleSpec(t)
	srv, k := sampleServer(t)
	client := v.Client(t)

	type tc struct {
		name        string
		body        io.Reader
		contentType string // "-" sends none
		idemKeys    []string
		status      int
		code, param string
	}
	body := func(s string) io.Reader { return strings.NewReader(s) }
	ok := func(name, b string) tc { return tc{name: name, body: body(b), status: 201} }
	bad := func(name, b, param string) tc {
		return tc{name: name, body: body(b), status: 400, code: paykit.CodeInvalidRequest, param: param}
	}
	big := `{"merchant_reference":"` + strings.Repeat("x", MaxBodyBytes) + `"}`
	exactly := withField(t, "metadata", `{"pad":"`+strings.Repeat("p", 10)+`"}`)
	exactly += strings.Repeat(" ", MaxBodyBytes-len(exactly)) // valid JSON of exactly 64 KiB
	cases := []tc{
		ok("valid", validSample),
		ok("without optional members", withField(t, "items", "")),
		{name: "charset utf-8", body: body(validSample), contentType: "application/json; charset=utf-8", status: 201},
		{name: "exactly 64 KiB", body: body(exactly), status: 201},

		// Headers.
		{name: "no Content-Type", body: body(validSample), contentType: "-", status: 400, code: paykit.CodeInvalidRequest, param: "Content-Type"},
		{name: "text/plain", body: body(validSample), contentType: "text/plain", status: 400, code: paykit.CodeInvalidRequest, param: "Content-Type"},
		{name: "latin1", body: body(validSample), contentType: "application/json; charset=latin1", status: 400, code: paykit.CodeInvalidRequest, param: "Content-Type"},
		{name: "no Idempotency-Key", body: body(validSample), idemKeys: []string{}, status: 400, code: paykit.CodeInvalidRequest, param: "Idempotency-Key"},
		{name: "Idempotency-Key with space", body: body(validSample), idemKeys: []string{"a b"}, status: 400, code: paykit.CodeInvalidRequest, param: "Idempotency-Key"},
		{name: "Idempotency-Key not ASCII", body: body(validSample), idemKeys: []string{"kunci-é"}, status: 400, code: paykit.CodeInvalidRequest, param: "Idempotency-Key"},
		{name: "Idempotency-Key 256", body: body(validSample), idemKeys: []string{strings.Repeat("k", 256)}, status: 400, code: paykit.CodeInvalidRequest, param: "Idempotency-Key"},
		{name: "Idempotency-Key twice", body: body(validSample), idemKeys: []string{"a", "b"}, status: 400, code: paykit.CodeInvalidRequest, param: "Idempotency-Key"},
		{name: "Idempotency-Key 255", body: body(validSample), idemKeys: []string{strings.Repeat("k", 255)}, status: 201},
		{name: "Idempotency-Key punctuation", body: body(validSample), idemKeys: []string{"!~{}\"'"}, status: 201},

		// Size.
		{name: "too large", body: body(big), status: 413, code: paykit.CodeRequestTooLarge},
		{name: "too large, chunked", body: chunked{body(big)}, status: 413, code: paykit.CodeRequestTooLarge},

		// Not a JSON object.
		bad("empty", "", ""),
		bad("whitespace", "  \n", ""),
		bad("not JSON", "amount=1", ""),
		bad("truncated", validSample[:40], ""),
		bad("array", "[]", ""),
		bad("null", "null", ""),
		bad("string", `"x"`, ""),
		bad("two objects", validSample+"{}", ""),

		// Unknown members, named by their full path.
		bad("unknown top-level", withField(t, "checkout_mode", `"hosted"`), "checkout_mode"),
		bad("unknown provider", withField(t, "provider", `"x"`), "provider"),
		bad("case differs", withField(t, "Amount", `"1"`), "Amount"),
		bad("unknown nested", withField(t, "recipient.bank", `"BBL"`), "recipient.bank"),
		bad("unknown in array", withField(t, "items.0.price", `"1"`), "items.0.price"),
		bad("unknown in customer", withField(t, "customer.phone", `"+60"`), "customer.phone"),

		// Wrong JSON types.
		bad("amount number", withField(t, "amount", `10000`), "amount"),
		bad("recipient string", withField(t, "recipient", `"x"`), "recipient"),
		bad("quantity string", withField(t, "items.0.quantity", `"2"`), "items.0.quantity"),
		bad("quantity fraction", withField(t, "items.0.quantity", `1.5`), "items.0.quantity"),
		bad("name number", withField(t, "customer.name", `5`), "customer.name"),
		bad("items object", withField(t, "items", `{}`), "items"),
		bad("metadata value number", withField(t, "metadata.note", `1`), "metadata.note"),

		// Struct validation, named by JSON path.
		bad("amount missing", withField(t, "amount", ""), "amount"),
		bad("amount null", withField(t, "amount", "null"), "amount"),
		bad("amount zero-led", withField(t, "amount", `"0100"`), "amount"),
		bad("amount negative", withField(t, "amount", `"-1"`), "amount"),
		bad("currency lowercase", withField(t, "currency", `"myr"`), "currency"),
		bad("country long", withField(t, "country", `"MYS"`), "country"),
		bad("reference long", withField(t, "merchant_reference", `"`+strings.Repeat("r", 257)+`"`), "merchant_reference"),
		bad("customer email", withField(t, "customer.email", `"not-an-email"`), "customer.email"),
		bad("customer name", withField(t, "customer.name", ""), "customer.name"),
		bad("recipient missing", withField(t, "recipient", ""), "recipient"),
		bad("recipient account", withField(t, "recipient.account_number", ""), "recipient.account_number"),
		bad("recipient type", withField(t, "recipient.type", `"card"`), "recipient.type"),
		bad("item sku", withField(t, "items.0.sku", ""), "items.0.sku"),
		bad("too many items", withField(t, "items", `[{"sku":"a","quantity":1},{"sku":"b","quantity":1},{"sku":"c","quantity":1},{"sku":"d","quantity":1}]`), "items"),
		bad("metadata value long", withField(t, "metadata.note", `"`+strings.Repeat("n", 21)+`"`), "metadata.note"),
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			req, err := http.NewRequest("POST", srv.URL+"/v1/samples", c.body)
			is.NoErr(err)
			req.SetBasicAuth(k.public, k.secret)
			switch c.contentType {
			case "":
				req.Header.Set("Content-Type", "application/json")
			case "-":
			default:
				req.Header.Set("Content-Type", c.contentType)
			}
			if c.idemKeys == nil {
				c.idemKeys = []string{"key-" + strings.ReplaceAll(c.name, " ", "_")}
			}
			for _, key := range c.idemKeys {
				req.Header.Add("Idempotency-Key", key)
			}
			resp, err := client.Do(req)
			is.NoErr(err)
			defer resp.Body.Close()
			raw, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != c.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, c.status, raw)
			}
			var got map[string]any
			is.NoErr(json.Unmarshal(raw, &got))
			if c.status == 201 {
				is.Equal(got["idempotency_key"], c.idemKeys[0])
				return
			}
			e := got["error"].(map[string]any)
			is.Equal(e["code"], c.code)
			param, _ := e["param"].(string)
			is.Equal(param, c.param)
		})
	}

	t.Run("decoded values", func(t *testing.T) {
		is := is.New(t)
		var req sampleRequest
		is.NoErr(decodeJSON([]byte(validSample), &req))
		is.NoErr(validated.Check(&req))
		is.Equal(req, sampleRequest{
			Amount: "10000", Currency: "MYR", Country: "MY", MerchantReference: "order-1",
			Customer:  sampleCustomer{Name: "Aisyah", Email: "a@example.com"},
			Recipient: &sampleRecipient{Type: "bank_account", AccountNumber: "000111"},
			Items:     []sampleItem{{SKU: "kopi", Quantity: 2}},
			Metadata:  map[string]string{"note": "hi"},
		})
	})

	t.Run("credentials are checked before the body", func(t *testing.T) {
		is := is.New(t)
		req, _ := http.NewRequest("POST", srv.URL+"/v1/samples", bytes.NewReader([]byte("not json")))
		resp, err := client.Do(req)
		is.NoErr(err)
		resp.Body.Close()
		is.Equal(resp.StatusCode, http.StatusUnauthorized)
	})
}

func TestPanicRecovery(t *testing.T) {
	is := is.New(t)
	v := sampleSpec(t)
	srv, _ := sampleServer(t)
	resp, err := v.Client(t).Get(srv.URL + "/v1/panics")
	is.NoErr(err)
	defer resp.Body.Close()
	is.Equal(resp.StatusCode, http.StatusInternalServerError)
	var got map[string]map[string]any
	is.NoErr(json.NewDecoder(resp.Body).Decode(&got))
	is.Equal(got["error"]["code"], "internal_error")
	is.Equal(got["error"]["message"], "An internal error occurred.")
	is.Equal(got["error"]["request_id"], resp.Header.Get("Request-Id"))
	// The server is still there.
	resp2, err := v.Client(t).Get(srv.URL + "/v1/openapi.json")
	is.NoErr(err)
	resp2.Body.Close()
	is.Equal(resp2.StatusCode, http.StatusOK)
}

// TestRoutesMatchDocument keeps the document's operations and the
// handlers' routes the same set.
func TestRoutesMatchDocument(t *testing.T) {
	is := is.New(t)
	svc, err := paykit.New(paykit.Config{Store: memory.New()})
	is.NoErr(err)
	served := map[string]bool{}
	for prefix, h := range map[string]http.Handler{
		"/v1":        NewMerchantAPI(svc, Options{}),
		"/operator":  NewOperatorAPI(svc, OperatorOptions{}),
		"/providers": NewProviderCallbacks(svc, CallbackOptions{}),
	} {
		var a *api
		switch h := h.(type) {
		case *merchantAPI:
			a = h.api
		case *operatorAPI:
			a = h.api
		case *api:
			a = h
		}
		for _, p := range a.patterns {
			method, path, _ := strings.Cut(p, " ")
			served[method+" "+prefix+path] = true
		}
	}
	documented := map[string]bool{}
	doc := oapitest.New(t, OpenAPIDocument()).Doc()
	for path, item := range doc.Paths.Map() {
		for method := range item.Operations() {
			documented[method+" "+path] = true
		}
	}
	is.Equal(served, documented)
}

func TestStatusForCode(t *testing.T) {
	is := is.New(t)
	is.Equal(StatusForCode(paykit.CodeDispatchUnavailable), 503)
	is.Equal(StatusForCode(paykit.CodeInvalidState), 422)
	is.Equal(StatusForCode(paykit.CodeIdempotencyConflict), 409)
	is.Equal(StatusForCode("nonsense"), 500)
}
