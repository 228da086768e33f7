package httpadapter

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"mime"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/internal/readall"
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
//   - a `validate` struct tag failing (paykit.Validate, the one rule set the
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
	return body, paykit.Validate(dst)
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
	return paykit.Validate(dst)
}

func checkJSONContentType(r *http.Request) error {
	ct := r.Header.Get("Content-Type")
	mt, params, err := mime.ParseMediaType(ct)
	if ct == "" || err != nil || mt != "application/json" {
		return paykit.InvalidRequest("Content-Type", "Content-Type must be application/json.")
	}
	if cs, ok := params["charset"]; ok && !strings.EqualFold(cs, "utf-8") {
		return paykit.InvalidRequest("Content-Type", "The request body must be UTF-8 encoded.")
	}
	return nil
}

func errTooLarge() error {
	return paykit.Errorf(paykit.CodeRequestTooLarge, "", "The request body must not exceed %d bytes.", MaxBodyBytes)
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
		return nil, paykit.InvalidRequest("", "The request body could not be read.")
	}
	return body, nil
}

func errNotObject() error {
	return paykit.InvalidRequest("", "The request body must be a JSON object.")
}

// decodeJSON decodes body into dst (a pointer to a struct). A body that
// decodeQuick takes is decoded once; any other goes through
// decodeJSONChecked, which finds and names what is wrong.
func decodeJSON(body []byte, dst any) error {
	if decodeQuick(body, dst) {
		return nil
	}
	reflect.ValueOf(dst).Elem().SetZero() // what decodeQuick may have filled in
	return decodeJSONChecked(body, dst)
}

// decodeJSONChecked decodes body into dst in two passes: a generic one that finds
// syntax errors, unknown members and wrong types with their full path
// (encoding/json names neither array indexes nor map keys), then the typed
// one.
func decodeJSONChecked(body []byte, dst any) error {
	var generic any
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&generic); err != nil {
		if len(bytes.TrimSpace(body)) == 0 {
			return errNotObject()
		}
		return paykit.InvalidRequest("", "The request body is not valid JSON.")
	}
	if dec.Decode(new(any)) != io.EOF {
		return paykit.InvalidRequest("", "The request body must hold a single JSON object.")
	}
	if _, ok := generic.(map[string]any); !ok {
		return errNotObject()
	}
	if err := checkJSONText(body); err != nil {
		return err
	}
	if err := checkShape(generic, reflect.TypeOf(dst), ""); err != nil {
		return err
	}

	dec = json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields() // a backstop: checkShape has answered already
	if err := dec.Decode(dst); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) && typeErr.Field != "" {
			return paykit.InvalidRequest(typeErr.Field, "%s must be %s.", typeErr.Field, jsonTypeName(typeErr.Type))
		}
		return paykit.InvalidRequest("", "The request body does not match the expected fields.")
	}
	return nil
}

// checkJSONText rejects a string of body, member name or value, that is
// not paykit.ValidText: invalid UTF-8 (which encoding/json would silently
// replace with U+FFFD) or a NUL character (the escape \u0000, which would
// reach the Store). A value is named by its dotted path ("customer.name",
// "items.0.name"), a member name by the path of its object. body is a
// valid JSON object.
func checkJSONText(body []byte) error {
	if utf8.Valid(body) && !bytes.Contains(body, []byte(`\u0000`)) {
		return nil // the common case: no string can be bad
	}
	// A frame per open object or array: the member or index being read.
	type frame struct {
		object  bool
		wantKey bool // object: the next string is a member name
		key     string
		index   int
	}
	var stack []frame
	path := func(frames []frame) string {
		var p string
		for _, f := range frames {
			if f.object {
				p = joinPath(p, f.key)
			} else {
				p = joinPath(p, strconv.Itoa(f.index))
			}
		}
		return p
	}
	next := func() { // the value of the innermost frame is done
		if n := len(stack); n > 0 {
			if stack[n-1].object {
				stack[n-1].wantKey = true
			} else {
				stack[n-1].index++
			}
		}
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	var offset int64
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return paykit.InvalidRequest("", "The request body is not valid JSON.")
		}
		raw := body[offset:dec.InputOffset()] // the token, with the separators before it
		offset = dec.InputOffset()
		switch tok {
		case json.Delim('{'):
			stack = append(stack, frame{object: true, wantKey: true})
			continue
		case json.Delim('['):
			stack = append(stack, frame{})
			continue
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
			next()
			continue
		}
		s, isString := tok.(string)
		ok := !isString || utf8.Valid(raw) && strings.IndexByte(s, 0) < 0
		if top := &stack[len(stack)-1]; top.object && top.wantKey {
			if !ok {
				p := path(stack[:len(stack)-1])
				return paykit.InvalidRequest(p, "Member names must be UTF-8 text without NUL characters.")
			}
			top.key, top.wantKey = s, false
			continue
		}
		if !ok {
			p := path(stack)
			return paykit.InvalidRequest(p, "%s must be UTF-8 text without NUL characters.", p)
		}
		next()
	}
}

var (
	unmarshalerType     = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// checkShape compares the generic JSON value v with Go type t and reports
// the first member (sorted key order, depth first) that t has no field for
// or whose JSON type does not fit, naming it by its dotted path
// ("recipient.bank", "items.0.quantity"). null fits everything, as in
// encoding/json; the validator decides whether it is allowed.
func checkShape(v any, t reflect.Type, path string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	pt := reflect.PointerTo(t)
	if v == nil || t.Kind() == reflect.Interface || pt.Implements(unmarshalerType) || pt.Implements(textUnmarshalerType) {
		return nil // decodes itself; the typed pass checks it
	}
	mismatch := func() error {
		if path == "" {
			return errNotObject()
		}
		return paykit.InvalidRequest(path, "%s must be %s.", path, jsonTypeName(t))
	}
	switch t.Kind() {
	case reflect.Struct:
		obj, ok := v.(map[string]any)
		if !ok {
			return mismatch()
		}
		fields := jsonFields(t)
		for _, k := range slices.Sorted(maps.Keys(obj)) {
			ft, ok := fields[k]
			if !ok {
				p := joinPath(path, k)
				return paykit.InvalidRequest(p, "Received unknown parameter: %s.", p)
			}
			if err := checkShape(obj[k], ft, joinPath(path, k)); err != nil {
				return err
			}
		}
	case reflect.Map:
		obj, ok := v.(map[string]any)
		if !ok {
			return mismatch()
		}
		for _, k := range slices.Sorted(maps.Keys(obj)) {
			if err := checkShape(obj[k], t.Elem(), joinPath(path, k)); err != nil {
				return err
			}
		}
	case reflect.Slice, reflect.Array:
		if t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Uint8 {
			if _, ok := v.(string); !ok { // []byte is base64 text
				return mismatch()
			}
			return nil
		}
		arr, ok := v.([]any)
		if !ok {
			return mismatch()
		}
		for i, e := range arr {
			if err := checkShape(e, t.Elem(), joinPath(path, strconv.Itoa(i))); err != nil {
				return err
			}
		}
	case reflect.String:
		if _, ok := v.(string); !ok {
			return mismatch()
		}
	case reflect.Bool:
		if _, ok := v.(bool); !ok {
			return mismatch()
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, ok := v.(json.Number)
		if !ok {
			return mismatch()
		}
		i, err := strconv.ParseInt(string(n), 10, 64)
		if err != nil || reflect.New(t).Elem().OverflowInt(i) {
			return mismatch()
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		n, ok := v.(json.Number)
		if !ok {
			return mismatch()
		}
		u, err := strconv.ParseUint(string(n), 10, 64)
		if err != nil || reflect.New(t).Elem().OverflowUint(u) {
			return mismatch()
		}
	case reflect.Float32, reflect.Float64:
		if _, ok := v.(json.Number); !ok {
			return mismatch()
		}
	}
	return nil
}

var fieldCache sync.Map // reflect.Type → map[string]reflect.Type

// jsonFields maps the JSON names of struct type t (embedded structs
// flattened) to their types.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	if f, ok := fieldCache.Load(t); ok {
		return f.(map[string]reflect.Type)
	}
	fields := map[string]reflect.Type{}
	for i := range t.NumField() {
		sf := t.Field(i)
		tag := sf.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if sf.Anonymous && name == "" {
			ft := sf.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				for k, v := range jsonFields(ft) {
					fields[k] = v
				}
				continue
			}
		}
		if !sf.IsExported() {
			continue
		}
		if name == "" {
			name = sf.Name
		}
		fields[name] = sf.Type
	}
	fieldCache.Store(t, fields)
	return fields
}

func joinPath(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
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
		return "", paykit.InvalidRequest(param, "The Idempotency-Key header is required.")
	case len(values) > 1:
		return "", paykit.InvalidRequest(param, "The Idempotency-Key header must be sent once.")
	}
	key := values[0]
	if len(key) > 255 {
		return "", paykit.InvalidRequest(param, "Idempotency-Key must be at most 255 characters.")
	}
	for i := 0; i < len(key); i++ {
		if key[i] < '!' || key[i] > '~' {
			return "", paykit.InvalidRequest(param, "Idempotency-Key must consist of printable ASCII characters without spaces.")
		}
	}
	return key, nil
}
