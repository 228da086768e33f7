package httpadapter

import (
	"bytes"
	"errors"
	"io"
	"mime"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/internal/readall"
	"github.com/paykit/paykit/internal/validated"
)

// MaxBodyBytes is the largest request body accepted (64 KiB); a larger one
// is answered 413 request_too_large.
const MaxBodyBytes = 64 << 10

// decodeBody reads a JSON request body into dst (a pointer to a struct) and
// validates it, answering every failure the contract's way:
//   - Content-Type other than application/json: 400, param Content-Type;
//   - more than MaxBodyBytes: 413 request_too_large;
//   - not a single JSON object: 400;
//   - a member dst has no field for (names match exactly, case included):
//     400 naming it by its dotted path, e.g. param "recipient.bank";
//   - a value of the wrong JSON type: 400 naming it, e.g. "items.0.quantity";
//   - a `validate` struct tag failing (validated.Check, the one rule set the
//     Service also uses): 400 naming the field by its JSON path.
//
// It returns the raw body (for idempotency fingerprints).
func decodeBody(w http.ResponseWriter, r *http.Request, dst any) ([]byte, error) {
	if err := checkJSONContentType(r); err != nil {
		return nil, err
	}
	body, err := readBody(w, r)
	if err != nil {
		return nil, err
	}
	if err := decodeJSON(body, dst); err != nil {
		return nil, err
	}
	return body, validated.Check(dst)
}

// decodeOptionalBody is decodeBody for routes whose body may be left out
// (cancel, test helpers): an empty body (nothing or white space only) needs
// no Content-Type and decodes as the zero value, which is then validated;
// any other body is held to decodeBody's rules.
func decodeOptionalBody(w http.ResponseWriter, r *http.Request, dst any) error {
	body, err := readBody(w, r)
	if err != nil {
		return err
	}
	if len(bytes.TrimSpace(body)) > 0 {
		if err := checkJSONContentType(r); err != nil {
			return err
		}
		if err := decodeJSON(body, dst); err != nil {
			return err
		}
	}
	return validated.Check(dst)
}

func checkJSONContentType(r *http.Request) error {
	ct := r.Header.Get("Content-Type")
	mt, params, err := mime.ParseMediaType(ct)
	if ct == "" || err != nil || mt != "application/json" {
		return invalidRequest("Content-Type", "Content-Type must be application/json.")
	}
	if cs, ok := params["charset"]; ok && !strings.EqualFold(cs, "utf-8") {
		return invalidRequest("Content-Type", "The request body must be UTF-8 encoded.")
	}
	return nil
}

func errTooLarge() error {
	return errorf(paykit.CodeRequestTooLarge, "", "The request body must not exceed %d bytes.", MaxBodyBytes)
}

func readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	if r.ContentLength > MaxBodyBytes {
		return nil, errTooLarge()
	}
	body, err := readall.ReadAll(http.MaxBytesReader(w, r.Body, MaxBodyBytes), r.ContentLength, MaxBodyBytes)
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return nil, errTooLarge()
	}
	if err != nil {
		return nil, invalidRequest("", "The request body could not be read.")
	}
	return body, nil
}

func errNotObject() error {
	return invalidRequest("", "The request body must be a JSON object.")
}

// Request bodies decode with json v2 (github.com/go-json-experiment/json),
// which names every error by its JSON pointer. Its defaults already refuse
// unknown and case-variant member names; invalid UTF-8 is refused before
// (checkJSONText names the string), a lone surrogate escape decodes to
// U+FFFD, and a repeated member is taken, the last one winning, as
// encoding/json did.
var (
	// lenientText reads any well-formed JSON text.
	lenientText = json.JoinOptions(jsontext.AllowInvalidUTF8(true), jsontext.AllowDuplicateNames(true))
	// decodeOptions decodes a body into a request struct.
	decodeOptions = json.JoinOptions(lenientText, json.RejectUnknownMembers(true))
	// sortedMembers writes a JSON text with every object's members sorted.
	sortedMembers = json.JoinOptions(lenientText, jsontext.ReorderRawObjects(true))
)

// decodeJSON decodes body into dst (a pointer to a struct) in one pass;
// a body that does not decode plainly goes to decodeJSONChecked, which
// finds and names what is wrong.
func decodeJSON(body []byte, dst any) error {
	if isObject(body) && plainText(body) && json.Unmarshal(body, dst, decodeOptions) == nil {
		return nil
	}
	reflect.ValueOf(dst).Elem().SetZero() // what Unmarshal may have filled in
	return decodeJSONChecked(body, dst)
}

// isObject reports whether body's first non-white-space byte opens an
// object.
func isObject(body []byte) bool {
	b := bytes.TrimLeft(body, " \t\r\n")
	return len(b) > 0 && b[0] == '{'
}

// plainText reports whether no string of body can be refused by
// checkJSONText: the common case.
func plainText(body []byte) bool {
	return utf8.Valid(body) && !bytes.Contains(body, []byte(`\u0000`))
}

// decodeJSONChecked decodes body into dst and answers the first thing wrong
// with it, in this order: not valid JSON, more than one value, not an
// object, a string that is not wire.ValidText (checkJSONText), then the
// first member, in sorted name order depth first, that dst has no field for
// or whose JSON type does not fit, named by its dotted path
// ("recipient.bank", "items.0.quantity").
func decodeJSONChecked(body []byte, dst any) error {
	dec := jsontext.NewDecoder(bytes.NewReader(body), lenientText)
	v, err := dec.ReadValue()
	if err != nil {
		if len(bytes.TrimSpace(body)) == 0 {
			return errNotObject()
		}
		return invalidRequest("", "The request body is not valid JSON.")
	}
	v = v.Clone() // valid only until the next read
	if _, err := dec.ReadValue(); err != io.EOF {
		return invalidRequest("", "The request body must hold a single JSON object.")
	}
	if v.Kind() != '{' {
		return errNotObject()
	}
	if !plainText(v) {
		if err := checkJSONText(v); err != nil {
			return err
		}
	}
	// Decoded with sorted members, the first error is the first in sorted
	// order; the value is then decoded from the body as it came.
	sorted := v.Clone()
	if err := sorted.Format(sortedMembers); err != nil {
		return invalidRequest("", "The request body is not valid JSON.")
	}
	if err := json.Unmarshal(sorted, dst, decodeOptions); err != nil {
		return decodeError(err)
	}
	reflect.ValueOf(dst).Elem().SetZero()
	if err := json.Unmarshal(v, dst, decodeOptions); err != nil {
		return decodeError(err)
	}
	return nil
}

// decodeError answers json.Unmarshal's error: an unknown member or a
// value of the wrong JSON type, named by its dotted path.
func decodeError(err error) error {
	var se *json.SemanticError
	if !errors.As(err, &se) {
		return invalidRequest("", "The request body does not match the expected fields.")
	}
	path := dottedPath(se.JSONPointer)
	switch {
	case errors.Is(err, json.ErrUnknownName):
		return invalidRequest(path, "Received unknown parameter: %s.", path)
	case path == "":
		return errNotObject()
	case se.GoType == nil:
		return invalidRequest("", "The request body does not match the expected fields.")
	}
	return invalidRequest(path, "%s must be %s.", path, jsonTypeName(se.GoType))
}

// dottedPath turns a JSON pointer ("/items/0/quantity") into the
// contract's parameter name ("items.0.quantity").
func dottedPath(p jsontext.Pointer) string {
	return strings.Join(slices.Collect(p.Tokens()), ".")
}

// checkJSONText rejects a string of v (a valid JSON object), member name
// or value, that is not wire.ValidText: invalid UTF-8 (which json would
// replace with U+FFFD) or a NUL character (the escape \u0000, which would
// reach the Store). The first one in the text is named: a value by its
// dotted path ("customer.name", "items.0.name"), a member name by the path
// of its object.
func checkJSONText(v jsontext.Value) error {
	dec := jsontext.NewDecoder(bytes.NewReader(v), lenientText)
	var offset int64
	for {
		tok, err := dec.ReadToken()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return invalidRequest("", "The request body is not valid JSON.")
		}
		raw := v[offset:dec.InputOffset()] // the token, with the separators before it
		offset = dec.InputOffset()
		if tok.Kind() != '"' || utf8.Valid(raw) && strings.IndexByte(tok.String(), 0) < 0 {
			continue
		}
		p := dec.StackPointer()
		if kind, n := dec.StackIndex(dec.StackDepth()); kind == '{' && n%2 == 1 { // a member name
			p = p.Parent()
			return invalidRequest(dottedPath(p), "Member names must be UTF-8 text without NUL characters.")
		}
		path := dottedPath(p)
		return invalidRequest(path, "%s must be UTF-8 text without NUL characters.", path)
	}
}

// jsonTypeName names the JSON type a Go type decodes from, with an article.
func jsonTypeName(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	default:
		return "an object"
	}
}

// idempotencyKey returns the request's Idempotency-Key header, which create
// and cancel routes require: 1 to 255 printable ASCII characters
// (^[!-~]+$), sent once.
func idempotencyKey(r *http.Request) (string, error) {
	const param = "Idempotency-Key"
	values := r.Header.Values(param)
	switch {
	case len(values) == 0 || values[0] == "":
		return "", invalidRequest(param, "The Idempotency-Key header is required.")
	case len(values) > 1:
		return "", invalidRequest(param, "The Idempotency-Key header must be sent once.")
	}
	key := values[0]
	if len(key) > 255 {
		return "", invalidRequest(param, "Idempotency-Key must be at most 255 characters.")
	}
	for i := 0; i < len(key); i++ {
		if key[i] < '!' || key[i] > '~' {
			return "", invalidRequest(param, "Idempotency-Key must consist of printable ASCII characters without spaces.")
		}
	}
	return key, nil
}
