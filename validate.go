package paykit

import (
	"errors"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/go-playground/validator/v10"

	"github.com/paykit/paykit/internal/validated"
	"github.com/paykit/paykit/internal/wire"
)

// validCurrency reports whether s matches ^[A-Z]{3,6}$.
func validCurrency(s string) bool { return len(s) >= 3 && len(s) <= 6 && upperASCII(s) }

// validCountry reports whether s matches ^[A-Z]{2}$.
func validCountry(s string) bool { return len(s) == 2 && upperASCII(s) }

func upperASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 'A' || s[i] > 'Z' {
			return false
		}
	}
	return true
}

// validateListFilters checks the shared list filters; empty means unset.
func validateListFilters(currency, country, merchantReference string) error {
	if !wire.ValidText(merchantReference) {
		return invalidRequest("merchant_reference", "merchant_reference must be UTF-8 text without NUL characters.")
	}
	if currency != "" && !validCurrency(currency) {
		return invalidRequest("currency", "currency must match ^[A-Z]{3,6}$.")
	}
	if country != "" && !validCountry(country) {
		return invalidRequest("country", "country must match ^[A-Z]{2}$.")
	}
	if n := utf8.RuneCountInString(merchantReference); n > 256 {
		return invalidRequest("merchant_reference", "merchant_reference must be 1 to 256 characters.")
	}
	return nil
}

func init() { validated.Check = validateRequest }

var (
	validateOnce sync.Once
	validate     *validator.Validate
)

// validatorInstance is the one validator: json field names, the contract's
// custom rules.
func validatorInstance() *validator.Validate {
	validateOnce.Do(func() {
		v := validator.New(validator.WithRequiredStructEnabled())
		v.RegisterTagNameFunc(func(f reflect.StructField) string {
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" {
				return ""
			}
			return name
		})
		must := func(tag string, fn func(string) bool) {
			if err := v.RegisterValidation(tag, func(fl validator.FieldLevel) bool { return fn(fl.Field().String()) }); err != nil {
				panic(err)
			}
		}
		must("amount", wire.ValidAmount)
		if err := v.RegisterValidation("minor_units", func(fl validator.FieldLevel) bool { return wire.ValidMinorUnits(fl.Field().Int()) }); err != nil {
			panic(err)
		}
		must("currency", validCurrency)
		must("country", validCountry)
		must("payment_method", validPaymentMethod)
		must("environment", func(s string) bool { return Environment(s).Valid() })
		if err := v.RegisterValidation("textmap", func(fl validator.FieldLevel) bool {
			m, _ := fl.Field().Interface().(map[string]string)
			_, _, _, bad := textMapFailure(m, fl.Param())
			return !bad
		}); err != nil {
			panic(err)
		}
		validate = v
	})
	return validate
}

var ruleMessages = map[string]string{
	"required":       "is required",
	"amount":         "must be a string of a positive integer in minor units (^[1-9]\\d*$, at most 18 digits)",
	"minor_units":    "must be a positive integer of minor units (at most 18 digits)",
	"currency":       "must match ^[A-Z]{3,6}$",
	"country":        "must match ^[A-Z]{2}$",
	"payment_method": "is not a supported payment method",
	"environment":    "must be test or live",
	"http_url":       "must be an absolute http or https URL",
	"email":          "must be an email address",
}

// validateRequest checks v's `validate` struct tags and returns the first
// failure as a 400 invalid_request whose param is the dotted JSON path of
// the field (customer.email, recipient.account_number). Every string in v
// (struct fields, map keys and values, slice elements) must also be
// wire.ValidText. httpadapter calls it as validated.Check.
func validateRequest(v any) error {
	if err := checkText(reflect.ValueOf(v), ""); err != nil {
		return err
	}
	err := validatorInstance().Struct(v)
	var errs validator.ValidationErrors
	if !errors.As(err, &errs) {
		if err != nil {
			return internalError(err)
		}
		return nil
	}
	fe := errs[0]
	ns, tag, ruleParam := fe.Namespace(), fe.Tag(), fe.Param()
	if tag == "textmap" {
		m, _ := fe.Value().(map[string]string)
		var key string
		key, tag, ruleParam, _ = textMapFailure(m, ruleParam)
		ns += "[" + key + "]"
	}
	param := jsonPath(ns)
	msg, ok := ruleMessages[tag]
	switch {
	case ok:
	case tag == "min" || tag == "max" || tag == "len":
		msg = "has the wrong length (" + tag + " " + ruleParam + ")"
	case tag == "oneof":
		msg = "must be one of: " + ruleParam
	default:
		msg = "is invalid (" + tag + ")"
	}
	return invalidRequest(param, "%s %s.", param, msg)
}

// textMapFailure checks the rule textmap=K:V on a string map: every key 1
// to K characters, every value at most V. It is the validator's
// "dive,keys,min=1,max=K,endkeys,max=V" without a reflection walk per
// entry, and names the first failure (by key order) as that rule would:
// the key, the failing tag ("min" or "max") and its parameter.
func textMapFailure(m map[string]string, param string) (key, tag, ruleParam string, bad bool) {
	ks, vs, _ := strings.Cut(param, ":")
	maxKey, _ := strconv.Atoi(ks)
	maxValue, _ := strconv.Atoi(vs)
	ok := func(k, v string) bool {
		n := utf8.RuneCountInString(k)
		return n >= 1 && n <= maxKey && utf8.RuneCountInString(v) <= maxValue
	}
	for k, v := range m {
		if !ok(k, v) {
			bad = true
			break
		}
	}
	if !bad {
		return "", "", "", false
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		switch n := utf8.RuneCountInString(k); {
		case n < 1:
			return k, "min", "1", true
		case n > maxKey:
			return k, "max", ks, true
		case utf8.RuneCountInString(m[k]) > maxValue:
			return k, "max", vs, true
		}
	}
	return "", "", "", false
}

// jsonPath turns a validator namespace ("Request.customer[email]") into the
// contract's dotted parameter name ("customer.email").
func jsonPath(ns string) string {
	if _, rest, ok := strings.Cut(ns, "."); ok {
		ns = rest
	}
	ns = strings.ReplaceAll(ns, "[", ".")
	return strings.ReplaceAll(ns, "]", "")
}

// checkText returns a 400 naming, by its dotted JSON path, the first string
// in v that is not wire.ValidText; a map key that is not names the map.
func checkText(v reflect.Value, path string) error {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			return checkText(v.Elem(), path)
		}
	case reflect.String:
		if !wire.ValidText(v.String()) {
			return invalidRequest(path, "%s must be UTF-8 text without NUL characters.", path)
		}
	case reflect.Struct:
		t := v.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if !f.IsExported() || name == "-" {
				continue
			}
			if f.Anonymous && name == "" { // an embedded struct's fields are its parent's
				if err := checkText(v.Field(i), path); err != nil {
					return err
				}
				continue
			}
			if name == "" {
				name = f.Name
			}
			fv := v.Field(i)
			if fv.Kind() == reflect.String { // most fields: no path unless it fails
				if !wire.ValidText(fv.String()) {
					p := joinPath(path, name)
					return invalidRequest(p, "%s must be UTF-8 text without NUL characters.", p)
				}
				continue
			}
			if err := checkText(fv, joinPath(path, name)); err != nil {
				return err
			}
		}
	case reflect.Map:
		if m, ok := v.Interface().(map[string]string); ok && validTextMap(m) {
			return nil // the usual case, without reflection: the sorted walk below finds the first failure
		}
		keys := v.MapKeys()
		if v.Type().Key().Kind() == reflect.String {
			slices.SortFunc(keys, func(a, b reflect.Value) int { return strings.Compare(a.String(), b.String()) })
		}
		for _, k := range keys {
			p := path
			if k.Kind() == reflect.String {
				if !wire.ValidText(k.String()) {
					return invalidRequest(path, "Member names must be UTF-8 text without NUL characters.")
				}
				p = joinPath(path, k.String())
			}
			if err := checkText(v.MapIndex(k), p); err != nil {
				return err
			}
		}
	case reflect.Slice, reflect.Array:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return nil // bytes, not text
		}
		for i := range v.Len() {
			if err := checkText(v.Index(i), joinPath(path, strconv.Itoa(i))); err != nil {
				return err
			}
		}
	}
	return nil
}

// validTextMap reports whether every key and value of m is wire.ValidText.
func validTextMap(m map[string]string) bool {
	for k, v := range m {
		if !wire.ValidText(k) || !wire.ValidText(v) {
			return false
		}
	}
	return true
}

func joinPath(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}
