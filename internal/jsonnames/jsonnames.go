// Package jsonnames checks that the member names of a JSON text are
// exactly the JSON names of the Go type it decodes into.
package jsonnames

import (
	"bytes"
	"encoding"
	"encoding/json"
	"reflect"
	"strings"
	"sync"

	"github.com/paykit/paykit/internal/quickjson"
)

// Decode decodes body into v, a pointer to a struct, and reports true when
// it did so as a strict decoder (no unknown fields, one value) would: a
// plain object through quickjson, else an object of exactly v's names
// through json.Unmarshal. On false v is zero again, for the caller's
// checked path.
func Decode(body []byte, v any) bool {
	if quickjson.Decode(body, v) {
		return true
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() || rv.Elem().Kind() != reflect.Struct {
		return false
	}
	rv = rv.Elem()
	rv.SetZero()
	// An object (json.Unmarshal takes null too) of exactly v's names.
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	if len(trimmed) > 0 && trimmed[0] == '{' && Exact(body, rv.Type()) && json.Unmarshal(body, v) == nil {
		return true
	}
	rv.SetZero() // what Unmarshal may have filled in
	return false
}

// Exact reports whether body is one JSON value, which decodes into t,
// whose every object decoded into a struct has, unescaped, exactly that
// struct's JSON names (encoding/json would also take "AMOUNT" for
// "amount"). Interfaces, maps' keys and types with their own
// UnmarshalJSON or UnmarshalText take any names. False means "not
// surely": bodies it does not understand, invalid JSON included, arrays,
// embedded structs and tag options other than omitempty and omitzero.
// It allocates nothing once a type's names are cached.
func Exact(body []byte, t reflect.Type) bool {
	s := nameScanner{b: body}
	if !s.value(t, 0) {
		return false
	}
	s.space()
	return s.i == len(body)
}

var (
	unmarshalerType     = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// nameScanner walks a JSON text along a Go type, checking the member names
// of objects that decode into structs. It gives up (false) on anything
// that is not plainly right, invalid JSON included.
type nameScanner struct {
	b []byte
	i int
}

// maxScanDepth bounds nesting; deeper bodies take the checked path.
const maxScanDepth = 64

func (s *nameScanner) space() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// str reads the string at s.i (an opening quote) and returns its raw
// text, and whether that holds escapes.
func (s *nameScanner) str() (raw []byte, escaped, ok bool) {
	s.i++
	start := s.i
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case '"':
			raw = s.b[start:s.i]
			s.i++
			return raw, escaped, true
		case '\\':
			escaped = true
			s.i += 2
			continue
		}
		s.i++
	}
	return nil, false, false
}

// value reads the value at s.i, which decodes into t (nil: anything).
func (s *nameScanner) value(t reflect.Type, depth int) bool {
	if depth > maxScanDepth {
		return false
	}
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t != nil && (t.Kind() == reflect.Interface || decodesItself(t)) {
		t = nil
	}
	s.space()
	if s.i >= len(s.b) {
		return false
	}
	switch s.b[s.i] {
	case '{':
		var fields map[string]reflect.Type
		var elem reflect.Type
		switch {
		case t == nil:
		case t.Kind() == reflect.Struct:
			if fields = structNames(t); fields == nil {
				return false
			}
		case t.Kind() == reflect.Map:
			elem = t.Elem()
		default:
			return false
		}
		s.i++
		s.space()
		if s.i < len(s.b) && s.b[s.i] == '}' {
			s.i++
			return true
		}
		for {
			s.space()
			if s.i >= len(s.b) || s.b[s.i] != '"' {
				return false
			}
			name, escaped, ok := s.str()
			if !ok {
				return false
			}
			vt := elem
			if fields != nil {
				if escaped {
					return false
				}
				if vt, ok = fields[string(name)]; !ok {
					return false
				}
			}
			s.space()
			if s.i >= len(s.b) || s.b[s.i] != ':' {
				return false
			}
			s.i++
			if !s.value(vt, depth+1) {
				return false
			}
			if end, ok := s.next('}'); !ok || end {
				return ok
			}
		}
	case '[':
		var elem reflect.Type
		switch {
		case t == nil:
		case t.Kind() == reflect.Slice && t.Elem().Kind() != reflect.Uint8:
			elem = t.Elem()
		default:
			// Arrays: encoding/json drops extra elements unchecked.
			return false
		}
		s.i++
		s.space()
		if s.i < len(s.b) && s.b[s.i] == ']' {
			s.i++
			return true
		}
		for {
			if !s.value(elem, depth+1) {
				return false
			}
			if end, ok := s.next(']'); !ok || end {
				return ok
			}
		}
	case '"':
		_, _, ok := s.str()
		return ok
	}
	// A number, true, false or null: the typed pass checks it.
	start := s.i
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return s.i > start
		}
		s.i++
	}
	return s.i > start
}

// decodesItself reports whether t decodes through its own method.
func decodesItself(t reflect.Type) bool {
	pt := reflect.PointerTo(t)
	return pt.Implements(unmarshalerType) || pt.Implements(textUnmarshalerType)
}

var fieldCache sync.Map // reflect.Type → map[string]reflect.Type (nil: no quick path)

// structNames maps the JSON names of struct type t to their types; nil for a
// struct where encoding/json might see them otherwise (embedded fields,
// tag options other than omitempty and omitzero).
func structNames(t reflect.Type) map[string]reflect.Type {
	if f, ok := fieldCache.Load(t); ok {
		return f.(map[string]reflect.Type)
	}
	fields := map[string]reflect.Type{}
	for i := range t.NumField() {
		sf := t.Field(i)
		if sf.Anonymous {
			fields = nil
			break
		}
		tag := sf.Tag.Get("json")
		if !sf.IsExported() || tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if opts != "" && opts != "omitempty" && opts != "omitzero" {
			fields = nil
			break
		}
		if name == "" {
			name = sf.Name
		}
		if _, dup := fields[name]; dup {
			fields = nil
			break
		}
		fields[name] = sf.Type
	}
	fieldCache.Store(t, fields)
	return fields
}

// next reads what follows a member or element: a comma, with more to
// come, or close, which ends the object or array (end). ok is false on
// anything else.
func (s *nameScanner) next(close byte) (end, ok bool) {
	s.space()
	if s.i >= len(s.b) {
		return false, false
	}
	switch s.b[s.i] {
	case ',':
		s.i++
		return false, true
	case close:
		s.i++
		return true, true
	}
	return false, false
}
