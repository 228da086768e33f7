// Package quickjson decodes the plain JSON objects paykit exchanges most
// (request bodies, the sandbox PSP's messages) into structs without
// encoding/json's reflection-heavy path, and only when the result is
// surely json.Unmarshal's.
package quickjson

import (
	"encoding"
	"encoding/json"
	"reflect"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/paykit/paykit/internal/jsonscan"
)

// Decode decodes data into v, a pointer to a struct, and reports true
// when it did so exactly as json.Unmarshal would, without error. It takes
// one JSON object whose every member name is, unescaped, exactly the JSON
// name of a field (json.Unmarshal would also take "AMOUNT" for "amount",
// or skip an unknown member), and whose values are strings without
// escapes, integers, booleans and objects, decoding into fields of string,
// signed integer, bool, time.Time, *time.Time, map[string]string, struct
// and *struct types. Anything else (null, an escape, a float, an array, a
// field of another type, invalid JSON) makes it give up: false, with v
// maybe partly written, for the caller to zero and decode the usual way.
func Decode(data []byte, v any) bool {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() || rv.Elem().Kind() != reflect.Struct {
		return false
	}
	p := planOf(rv.Elem().Type())
	if p == nil {
		return false
	}
	d := decoder{jsonscan.Cursor{B: data}}
	d.Space()
	if !d.object(p, rv.Elem()) {
		return false
	}
	d.Space()
	return d.I == len(d.B)
}

// kinds of fields a plan decodes.
const (
	kString = iota
	kInt
	kBool
	kTime
	kTimePtr
	kMap // map[string]string
	kStruct
	kStructPtr
)

type field struct {
	index int
	kind  int
	sub   *plan // kStruct, kStructPtr
}

// plan is how a struct type decodes: its fields by exact JSON name.
type plan struct {
	fields map[string]field
}

var (
	plans     sync.Map // reflect.Type → *plan (nil: not decodable here)
	buildMu   sync.Mutex
	timeType  = reflect.TypeFor[time.Time]()
	mapType   = reflect.TypeFor[map[string]string]()
	jsonUnm   = reflect.TypeFor[json.Unmarshaler]()
	textUnm   = reflect.TypeFor[encoding.TextUnmarshaler]()
	maxFields = 64
)

func planOf(t reflect.Type) *plan {
	if p, ok := plans.Load(t); ok {
		return p.(*plan)
	}
	buildMu.Lock()
	defer buildMu.Unlock()
	p := build(t, map[reflect.Type]bool{})
	plans.Store(t, p)
	return p
}

// build makes t's plan; nil for a type it cannot promise json.Unmarshal's
// result for. visiting breaks recursive types (not decodable here).
func build(t reflect.Type, visiting map[reflect.Type]bool) *plan {
	if visiting[t] || t.NumField() > maxFields || hasOwnDecoding(t) {
		return nil
	}
	visiting[t] = true
	defer delete(visiting, t)
	p := &plan{fields: map[string]field{}}
	for i := range t.NumField() {
		sf := t.Field(i)
		if sf.Anonymous {
			return nil // embedded fields: encoding/json's promotion rules
		}
		tag, hasTag := sf.Tag.Lookup("json")
		if !sf.IsExported() || tag == "-" {
			continue
		}
		name, opts := tag, ""
		for j := 0; j < len(tag); j++ {
			if tag[j] == ',' {
				name, opts = tag[:j], tag[j+1:]
				break
			}
		}
		if opts != "" && opts != "omitempty" && opts != "omitzero" {
			return nil // ",string" and the like
		}
		if !hasTag || name == "" {
			name = sf.Name
		}
		if !plainName(name) {
			return nil // encoding/json has rules of its own for other tags
		}
		if _, dup := p.fields[name]; dup {
			return nil
		}
		f := field{index: i}
		ft := sf.Type
		switch {
		case ft == timeType:
			f.kind = kTime
		case ft.Kind() == reflect.Pointer && ft.Elem() == timeType:
			f.kind = kTimePtr
		case ft == mapType:
			f.kind = kMap
		case hasOwnDecoding(ft):
			return nil
		case ft.Kind() == reflect.String:
			f.kind = kString
		case ft.Kind() >= reflect.Int && ft.Kind() <= reflect.Int64:
			f.kind = kInt
		case ft.Kind() == reflect.Bool:
			f.kind = kBool
		case ft.Kind() == reflect.Struct:
			f.kind, f.sub = kStruct, build(ft, visiting)
		case ft.Kind() == reflect.Pointer && ft.Elem().Kind() == reflect.Struct && !hasOwnDecoding(ft.Elem()):
			f.kind, f.sub = kStructPtr, build(ft.Elem(), visiting)
		default:
			return nil
		}
		if (f.kind == kStruct || f.kind == kStructPtr) && f.sub == nil {
			return nil
		}
		p.fields[name] = f
	}
	return p
}

// plainName reports whether name is letters, digits and underscores.
func plainName(name string) bool {
	for i := 0; i < len(name); i++ {
		c := name[i]
		if (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') && (c < '0' || c > '9') && c != '_' {
			return false
		}
	}
	return name != ""
}

// hasOwnDecoding reports whether encoding/json decodes t through a method.
func hasOwnDecoding(t reflect.Type) bool {
	pt := reflect.PointerTo(t)
	return t.Implements(jsonUnm) || pt.Implements(jsonUnm) || t.Implements(textUnm) || pt.Implements(textUnm)
}

type decoder struct{ jsonscan.Cursor }

// str reads the string at d.I (at its opening quote): its raw text,
// which is its value, or false for one with an escape, a control
// character or invalid UTF-8, or no end.
func (d *decoder) str() ([]byte, bool) {
	if d.I >= len(d.B) || d.B[d.I] != '"' {
		return nil, false
	}
	start := d.I + 1
	ascii := true
	for j := start; j < len(d.B); j++ {
		switch c := d.B[j]; {
		case c == '"':
			d.I = j + 1
			raw := d.B[start:j]
			return raw, ascii || utf8.Valid(raw)
		case c == '\\' || c < 0x20:
			return nil, false
		case c >= 0x80:
			ascii = false
		}
	}
	return nil, false
}

// literal reads the run of number or literal characters at d.I.
func (d *decoder) literal() []byte {
	start := d.I
	for d.I < len(d.B) {
		c := d.B[d.I]
		if (c < '0' || c > '9') && (c < 'a' || c > 'z') && c != '-' && c != '+' && c != '.' && (c < 'A' || c > 'Z') {
			break
		}
		d.I++
	}
	return d.B[start:d.I]
}

func (d *decoder) object(p *plan, v reflect.Value) bool {
	return d.members(func(name []byte) bool {
		f, ok := p.fields[string(name)]
		return ok && d.value(f, v.Field(f.index))
	})
}

// members reads the object at d.I (at its opening brace), calling member
// for each member with its name once d.I is at its value, which member
// reads; false when the text is not such an object or member fails.
func (d *decoder) members(member func(name []byte) bool) bool {
	if d.I >= len(d.B) || d.B[d.I] != '{' {
		return false
	}
	d.I++
	d.Space()
	if d.I < len(d.B) && d.B[d.I] == '}' {
		d.I++
		return true
	}
	for {
		d.Space()
		name, ok := d.str()
		if !ok {
			return false
		}
		d.Space()
		if d.I >= len(d.B) || d.B[d.I] != ':' {
			return false
		}
		d.I++
		d.Space()
		if !member(name) {
			return false
		}
		if end, ok := d.Next('}'); !ok || end {
			return ok
		}
	}
}

func (d *decoder) value(f field, fv reflect.Value) bool {
	switch f.kind {
	case kString:
		s, ok := d.str()
		if !ok {
			return false
		}
		fv.SetString(string(s))
	case kInt:
		lit := d.literal()
		if !plainInteger(lit) {
			return false
		}
		n, err := strconv.ParseInt(string(lit), 10, 64)
		if err != nil || fv.OverflowInt(n) {
			return false
		}
		fv.SetInt(n)
	case kBool:
		switch string(d.literal()) {
		case "true":
			fv.SetBool(true)
		case "false":
			fv.SetBool(false)
		default:
			return false
		}
	case kTime, kTimePtr:
		start := d.I
		if _, ok := d.str(); !ok {
			return false
		}
		var t time.Time
		if t.UnmarshalJSON(d.B[start:d.I]) != nil {
			return false
		}
		switch {
		case f.kind == kTime:
			*fv.Addr().Interface().(*time.Time) = t // no boxing of t
		case fv.IsNil():
			fv.Set(reflect.ValueOf(&t))
		default:
			*fv.Interface().(*time.Time) = t
		}
	case kMap:
		return d.stringMap(fv)
	case kStruct:
		return d.object(f.sub, fv)
	case kStructPtr:
		if d.I >= len(d.B) || d.B[d.I] != '{' {
			return false // null among others
		}
		if fv.IsNil() {
			fv.Set(reflect.New(fv.Type().Elem()))
		}
		return d.object(f.sub, fv.Elem())
	default:
		return false
	}
	return true
}

// plainInteger reports whether lit is a JSON integer: -?(0|[1-9][0-9]*).
func plainInteger(lit []byte) bool {
	if len(lit) > 0 && lit[0] == '-' {
		lit = lit[1:]
	}
	if len(lit) == 0 || lit[0] == '0' && len(lit) > 1 {
		return false
	}
	for _, c := range lit {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

func (d *decoder) stringMap(fv reflect.Value) bool {
	if d.I >= len(d.B) || d.B[d.I] != '{' {
		return false
	}
	if fv.IsNil() {
		fv.Set(reflect.ValueOf(map[string]string{}))
	}
	m := fv.Interface().(map[string]string)
	return d.members(func(k []byte) bool {
		val, ok := d.str()
		if ok {
			m[string(k)] = string(val)
		}
		return ok
	})
}
