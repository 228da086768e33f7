package httpadapter

import (
	"bytes"
	"encoding/json"
	"reflect"
	"unicode/utf8"

	"github.com/paykit/paykit/internal/jsonnames"
	"github.com/paykit/paykit/internal/quickjson"
)

// decodeQuick decodes body into dst (a pointer to a struct) in one typed
// pass when that gives what decodeJSONChecked would: the body is one JSON
// object of UTF-8 text without \u0000, every member name of an object
// decoded into a struct is, unescaped, exactly one of its JSON names (the
// typed pass alone would take "AMOUNT" for "amount" and so needs the
// generic one), and the typed pass succeeds. On false, dst may be partly
// filled in.
func decodeQuick(body []byte, dst any) bool {
	if !utf8.Valid(body) || bytes.Contains(body, []byte(`\u0000`)) {
		return false // checkJSONText names the string
	}
	t := reflect.TypeOf(dst)
	if t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct {
		return false
	}
	if quickjson.Decode(body, dst) {
		return true // what json.Unmarshal gives, without its reflection
	}
	reflect.ValueOf(dst).Elem().SetZero()
	// An object (json.Unmarshal takes null too), and a single valid JSON
	// value (json.Unmarshal refuses anything else).
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	return len(trimmed) > 0 && trimmed[0] == '{' && jsonnames.Exact(body, t) && json.Unmarshal(body, dst) == nil
}
