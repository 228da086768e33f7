// Package oapitest checks HTTP responses against paykit's OpenAPI document
// in tests, so that the document cannot drift from the handlers.
//
// It uses kin-openapi, which loads OpenAPI 3.1 documents natively and, for
// them, validates bodies and headers with a JSON Schema 2020-12 validator
// (type arrays with "null", const, $ref siblings). Every response must match
// the operation's documented status, headers and body; a request for a
// documented path with a method it does not document must have been
// answered as the document's MethodNotAllowed response says (405, Allow
// listing exactly the documented methods, and HEAD with GET); any other
// request no documented operation takes must have been answered 404 with
// the error shape. Error bodies must also repeat the Request-Id header.
package oapitest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
)

// Validator checks responses against one document.
type Validator struct {
	doc    *openapi3.T
	router routers.Router
}

// New loads and validates spec; modify may add test-only operations before
// the router is built.
func New(t testing.TB, spec []byte, modify ...func(doc *openapi3.T)) *Validator {
	t.Helper()
	ctx := context.Background()
	doc, err := openapi3.NewLoader().LoadFromData(spec)
	if err != nil {
		t.Fatalf("oapitest: load document: %v", err)
	}
	if !doc.IsOpenAPI31OrLater() {
		t.Fatalf("oapitest: document is OpenAPI %s, want 3.1", doc.OpenAPI)
	}
	if err := doc.Validate(ctx); err != nil {
		t.Fatalf("oapitest: invalid document: %v", err)
	}
	for _, m := range modify {
		m(doc)
	}
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		t.Fatalf("oapitest: router: %v", err)
	}
	return &Validator{doc: doc, router: router}
}

// Doc returns the loaded document.
func (v *Validator) Doc() *openapi3.T { return v.doc }

// Check validates resp, the answer to req. It reads resp.Body and puts an
// identical reader back.
func (v *Validator) Check(req *http.Request, resp *http.Response) error {
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("read body: %w", err)
	}
	if resp.Header.Get("Request-Id") == "" {
		return errors.New("no Request-Id header")
	}
	if resp.StatusCode >= 400 {
		if err := sameRequestID(resp, body); err != nil {
			return err
		}
	}

	route, params, err := v.router.FindRoute(req)
	if errors.Is(err, routers.ErrMethodNotAllowed) {
		return v.checkMethodNotAllowed(req, resp, body)
	}
	if errors.Is(err, routers.ErrPathNotFound) {
		return v.checkUndocumented(resp, body)
	}
	if err != nil {
		return fmt.Errorf("find route: %w", err)
	}
	return openapi3filter.ValidateResponse(context.Background(), &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route},
		Status:                 resp.StatusCode,
		Header:                 resp.Header,
		Body:                   io.NopCloser(bytes.NewReader(body)),
		Options:                &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true},
	})
}

// checkUndocumented accepts only the JSON 404 of an unknown route.
func (v *Validator) checkUndocumented(resp *http.Response, body []byte) error {
	if resp.StatusCode != http.StatusNotFound {
		return fmt.Errorf("undocumented operation answered %d, want 404", resp.StatusCode)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		return fmt.Errorf("Content-Type %q, want application/json", ct)
	}
	var value any
	if err := json.Unmarshal(body, &value); err != nil {
		return fmt.Errorf("body is not JSON: %w", err)
	}
	schema := v.doc.Components.Schemas["Error"].Value
	if err := schema.VisitJSON(value, openapi3.EnableJSONSchema2020()); err != nil {
		return fmt.Errorf("404 body does not match Error: %w", err)
	}
	return nil
}

// allMethods are the methods checkMethodNotAllowed tries on a path.
var allMethods = []string{
	http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
	http.MethodDelete, http.MethodOptions, http.MethodTrace,
}

// checkMethodNotAllowed accepts, for a documented path requested with a
// method it does not document, only the response
// components/responses/MethodNotAllowed describes, with code
// method_not_allowed and an Allow header that lists the path's documented
// methods (and HEAD with GET, which Go's ServeMux serves for it).
func (v *Validator) checkMethodNotAllowed(req *http.Request, resp *http.Response, body []byte) error {
	if resp.StatusCode != http.StatusMethodNotAllowed {
		return fmt.Errorf("method %s is not documented for the path: answered %d, want 405", req.Method, resp.StatusCode)
	}
	ref := v.doc.Components.Responses["MethodNotAllowed"]
	if ref == nil {
		return errors.New("the document has no components/responses/MethodNotAllowed")
	}
	op := openapi3.NewOperation()
	op.Responses = openapi3.NewResponses(openapi3.WithStatus(http.StatusMethodNotAllowed, ref))
	err := openapi3filter.ValidateResponse(context.Background(), &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{
			Request: req, Route: &routers.Route{Spec: v.doc, Method: req.Method, Operation: op},
		},
		Status:  resp.StatusCode,
		Header:  resp.Header,
		Body:    io.NopCloser(bytes.NewReader(body)),
		Options: &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true},
	})
	if err != nil {
		return err
	}
	var e struct {
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	if err := json.Unmarshal(body, &e); err != nil || e.Error.Code != "method_not_allowed" {
		return fmt.Errorf("405 body %s: want code method_not_allowed", body)
	}
	var want []string
	for _, m := range allMethods {
		probe := req.Clone(req.Context())
		probe.Method = m
		if _, _, err := v.router.FindRoute(probe); err == nil {
			want = append(want, m)
			if m == http.MethodGet {
				want = append(want, http.MethodHead)
			}
		}
	}
	slices.Sort(want)
	want = slices.Compact(want)
	got := strings.Split(resp.Header.Get("Allow"), ", ")
	slices.Sort(got)
	if !slices.Equal(got, want) {
		return fmt.Errorf("header Allow is %q, want the documented methods %q", resp.Header.Get("Allow"), strings.Join(want, ", "))
	}
	return nil
}

func sameRequestID(resp *http.Response, body []byte) error {
	var e struct {
		Error struct {
			RequestID string `json:"request_id"`
		} `json:"error"`
	}
	if err := json.Unmarshal(body, &e); err != nil {
		return fmt.Errorf("error body is not JSON: %w", err)
	}
	if got, want := e.Error.RequestID, resp.Header.Get("Request-Id"); got != want {
		return fmt.Errorf("error.request_id %q differs from Request-Id header %q", got, want)
	}
	return nil
}

// Transport returns a RoundTripper that sends through base (nil:
// http.DefaultTransport) and reports every response that does not match
// the document as a test error.
func (v *Validator) Transport(t testing.TB, base http.RoundTripper) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return roundTripper(func(req *http.Request) (*http.Response, error) {
		resp, err := base.RoundTrip(req)
		if err != nil {
			return resp, err
		}
		if err := v.Check(req, resp); err != nil {
			t.Errorf("OpenAPI: %s %s → %d: %v", req.Method, req.URL.Path, resp.StatusCode, err)
		}
		return resp, nil
	})
}

// Client returns an http.Client using Transport.
func (v *Validator) Client(t testing.TB) *http.Client {
	return &http.Client{Transport: v.Transport(t, nil)}
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// CheckWebhook validates one webhook delivery, its headers and JSON body,
// against the operation of the document's webhooks section named by the
// body's event type.
func (v *Validator) CheckWebhook(header http.Header, body []byte) error {
	var ev struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(body, &ev); err != nil {
		return fmt.Errorf("webhook body: %w", err)
	}
	item := v.doc.Webhooks[ev.Type]
	if item == nil || item.Post == nil {
		return fmt.Errorf("webhook %q: not in the document's webhooks", ev.Type)
	}
	if ct := header.Get("Content-Type"); ct != "application/json" {
		return fmt.Errorf("webhook %q: Content-Type %q", ev.Type, ct)
	}
	for _, ref := range item.Post.Parameters {
		p := ref.Value
		if p.In != openapi3.ParameterInHeader {
			continue
		}
		val := header.Get(p.Name)
		if val == "" {
			if p.Required {
				return fmt.Errorf("webhook %q: no %s header", ev.Type, p.Name)
			}
			continue
		}
		if err := p.Schema.Value.VisitJSON(val, openapi3.EnableJSONSchema2020()); err != nil {
			return fmt.Errorf("webhook %q: header %s: %w", ev.Type, p.Name, err)
		}
	}
	var doc any
	if err := json.Unmarshal(body, &doc); err != nil {
		return err
	}
	schema := item.Post.RequestBody.Value.Content.Get("application/json").Schema.Value
	if err := schema.VisitJSON(doc, openapi3.EnableJSONSchema2020()); err != nil {
		return fmt.Errorf("webhook %q: body: %w", ev.Type, err)
	}
	return nil
}
