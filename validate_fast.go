package paykit

import (
	"reflect"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// A quick plan is Validate's fast path for flat request structs: fields
// of string, integer and map[string]string kinds with the common tags
// (required, omitempty, min, max, len, dive with keys, and paykit's own
// rules). It only ever says "valid": whatever it is not sure of, a
// failure included, goes to the validator and checkText, which find and
// name the error. So it may be stricter than they are, never laxer.

// quickPlan is the plan of one struct type.
type quickPlan struct {
	fields []quickField
}

type quickField struct {
	index     int
	kind      reflect.Kind // reflect.String, reflect.Int64 (any integer) or reflect.Map (map[string]string)
	omitempty bool
	self      []quickRule // on the string, the integer, or the map (its length)
	keys      []quickRule // dive: on each key
	values    []quickRule // dive: on each value
	dive      bool
}

// quickRule is one tag: it holds for a string s, or for n (an integer
// field's value, or a map's length).
type quickRule struct {
	str func(s string) bool
	num func(n int64) bool
	// unknown: a tag the plan does not know; a value it applies to goes
	// to the validator.
	unknown bool
}

var quickPlans sync.Map // reflect.Type → *quickPlan (nil: no quick path)

var mapStringStringType = reflect.TypeFor[map[string]string]()

func quickPlanOf(t reflect.Type) *quickPlan {
	if p, ok := quickPlans.Load(t); ok {
		return p.(*quickPlan)
	}
	p := buildQuickPlan(t)
	quickPlans.Store(t, p)
	return p
}

// buildQuickPlan returns nil for a type the plan cannot cover.
func buildQuickPlan(t reflect.Type) *quickPlan {
	p := &quickPlan{}
	for i := range t.NumField() {
		sf := t.Field(i)
		if sf.Anonymous {
			return nil
		}
		if !sf.IsExported() {
			continue // neither checkText nor the validator looks at it
		}
		f := quickField{index: i}
		switch k := sf.Type.Kind(); {
		case k == reflect.String:
			f.kind = reflect.String
		case k >= reflect.Int && k <= reflect.Int64:
			f.kind = reflect.Int64
		case sf.Type == mapStringStringType:
			f.kind = reflect.Map
		case k == reflect.Bool && sf.Tag.Get("validate") == "":
			continue
		default:
			return nil
		}
		if !f.parseTag(sf.Tag.Get("validate")) {
			return nil
		}
		p.fields = append(p.fields, f)
	}
	return p
}

// parseTag reads a validate tag into f; false for a shape of tag the plan
// does not read (alternatives, escapes, dive on a non-map).
func (f *quickField) parseTag(tag string) bool {
	if tag == "-" || strings.ContainsAny(tag, "|\\") {
		return false
	}
	if tag == "" {
		return true
	}
	parts := strings.Split(tag, ",")
	dst := &f.self
	for i := 0; i < len(parts); i++ {
		part := parts[i]
		switch {
		case part == "omitempty":
			if i != 0 {
				return false
			}
			f.omitempty = true
			continue
		case part == "dive":
			if f.kind != reflect.Map || f.dive {
				return false
			}
			f.dive, dst = true, &f.values
			if i+1 < len(parts) && parts[i+1] == "keys" {
				i++
				dst = &f.keys
			}
			continue
		case part == "endkeys":
			if dst != &f.keys {
				return false
			}
			dst = &f.values
			continue
		}
		kind := f.kind
		if f.dive {
			kind = reflect.String // the keys and values of a map[string]string
		}
		*dst = append(*dst, quickRuleOf(part, kind))
	}
	return true
}

// quickRuleOf is the rule of tag part on a value of kind (String, Int64,
// or Map: its length).
func quickRuleOf(part string, kind reflect.Kind) quickRule {
	name, param, hasParam := strings.Cut(part, "=")
	if hasParam {
		n, err := strconv.ParseInt(param, 10, 64)
		if err != nil || n < 0 {
			return quickRule{unknown: true}
		}
		var num func(int64) bool
		switch name {
		case "min":
			num = func(v int64) bool { return v >= n }
		case "max":
			num = func(v int64) bool { return v <= n }
		case "len":
			num = func(v int64) bool { return v == n }
		default:
			return quickRule{unknown: true}
		}
		if kind == reflect.String {
			return quickRule{str: func(s string) bool { return num(int64(utf8.RuneCountInString(s))) }}
		}
		return quickRule{num: num}
	}
	switch {
	case name == "required" && kind == reflect.String:
		return quickRule{str: func(s string) bool { return s != "" }}
	case name == "required" && kind == reflect.Int64:
		return quickRule{num: func(n int64) bool { return n != 0 }}
	case name == "required" && kind == reflect.Map:
		return quickRule{num: func(n int64) bool { return n > 0 }} // the validator wants non-nil; this, entries
	case name == "minor_units" && kind == reflect.Int64:
		return quickRule{num: ValidMinorUnits}
	case kind != reflect.String:
		return quickRule{unknown: true}
	case name == "amount":
		return quickRule{str: validAmountText}
	case name == "currency":
		return quickRule{str: ValidCurrency}
	case name == "country":
		return quickRule{str: ValidCountry}
	case name == "payment_method":
		return quickRule{str: ValidPaymentMethod}
	case name == "environment":
		return quickRule{str: func(s string) bool { return Environment(s).Valid() }}
	}
	return quickRule{unknown: true}
}

func quickString(rules []quickRule, s string) bool {
	for _, r := range rules {
		if r.unknown || !r.str(s) {
			return false
		}
	}
	return true
}

func quickNum(rules []quickRule, n int64) bool {
	for _, r := range rules {
		if r.unknown || !r.num(n) {
			return false
		}
	}
	return true
}

// valid reports whether v (a struct of the plan's type) surely passes
// both checkText and the validator.
func (p *quickPlan) valid(v reflect.Value) bool {
	for i := range p.fields {
		f := &p.fields[i]
		fv := v.Field(f.index)
		switch f.kind {
		case reflect.String:
			s := fv.String()
			if !ValidText(s) {
				return false
			}
			if f.omitempty && s == "" {
				continue
			}
			if !quickString(f.self, s) {
				return false
			}
		case reflect.Int64:
			n := fv.Int()
			if f.omitempty && n == 0 {
				continue
			}
			if !quickNum(f.self, n) {
				return false
			}
		case reflect.Map:
			if fv.IsNil() {
				if f.omitempty {
					continue
				}
				if len(f.self) > 0 || f.dive {
					return false // required, or whatever a nil map means to a rule
				}
				continue
			}
			m := fv.Interface().(map[string]string)
			if !quickNum(f.self, int64(len(m))) {
				return false
			}
			for k, val := range m {
				if !ValidText(k) || !ValidText(val) {
					return false
				}
				if f.dive && (!quickString(f.keys, k) || !quickString(f.values, val)) {
					return false
				}
			}
		}
	}
	return true
}

// quickValid reports whether the quick plan vouches for v, a struct or a
// pointer to one.
func quickValid(v any) bool {
	rv := reflect.ValueOf(v)
	if rv.Kind() == reflect.Pointer {
		if rv.IsNil() {
			return false
		}
		rv = rv.Elem()
	}
	if rv.Kind() != reflect.Struct {
		return false
	}
	p := quickPlanOf(rv.Type())
	return p != nil && p.valid(rv)
}
