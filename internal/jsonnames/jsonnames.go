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

	"github.com/paykit/paykit/internal/jsonscan"
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
	s := nameScanner{jsonscan.Cursor{B: body}}
	if !s.value(t, 0) {
		return false
	}
	s.Space()
	return s.I == len(body)
}

var (
	unmarshalerType     = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// nameScanner walks a JSON text along a Go type, checking the member names
// of objects that decode into structs. It gives up (false) on anything
// that is not plainly right, invalid JSON included.
type nameScanner struct{ jsonscan.Cursor }

// maxScanDepth bounds nesting; deeper bodies take the checked path.
const maxScanDepth = 64

// str reads the string at s.I (an opening quote) and returns its raw
// text, and whether that holds escapes.
func (s *nameScanner) str() (raw []byte, escaped, ok bool) {
	s.I++
	start := s.I
	for s.I < len(s.B) {
		switch s.B[s.I] {
		case '"':
			raw = s.B[start:s.I]
			s.I++
			return raw, escaped, true
		case '\\':
			escaped = true
			s.I += 2
			continue
		}
		s.I++
	}
	return nil, false, false
}

// value reads the value at s.I, which decodes into t (nil: anything).
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
	s.Space()
	if s.I >= len(s.B) {
		return false
	}
	switch s.B[s.I] {
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
		s.I++
		s.Space()
		if s.I < len(s.B) && s.B[s.I] == '}' {
			s.I++
			return true
		}
		for {
			s.Space()
			if s.I >= len(s.B) || s.B[s.I] != '"' {
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
			s.Space()
			if s.I >= len(s.B) || s.B[s.I] != ':' {
				return false
			}
			s.I++
			if !s.value(vt, depth+1) {
				return false
			}
			if end, ok := s.Next('}'); !ok || end {
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
		s.I++
		s.Space()
		if s.I < len(s.B) && s.B[s.I] == ']' {
			s.I++
			return true
		}
		for {
			if !s.value(elem, depth+1) {
				return false
			}
			if end, ok := s.Next(']'); !ok || end {
				return ok
			}
		}
	case '"':
		_, _, ok := s.str()
		return ok
	}
	// A number, true, false or null: the typed pass checks it.
	start := s.I
	for s.I < len(s.B) {
		switch s.B[s.I] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return s.I > start
		}
		s.I++
	}
	return s.I > start
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
