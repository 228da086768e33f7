package httpadapter

import (
	"bytes"
	"unicode/utf8"

	"github.com/paykit/paykit/internal/jsonnames"
)

// decodeQuick decodes body into dst (a pointer to a struct) in one typed
// pass when that gives what decodeJSONChecked would: the body is one JSON
// object of UTF-8 text without \u0000, every member name of an object
// decoded into a struct is, unescaped, exactly one of its JSON names (the
// typed pass alone would take "AMOUNT" for "amount" and so needs the
// generic one), and the typed pass succeeds. On false, dst is zero.
func decodeQuick(body []byte, dst any) bool {
	if !utf8.Valid(body) || bytes.Contains(body, []byte(`\u0000`)) {
		return false // checkJSONText names the string
	}
	return jsonnames.Decode(body, dst)
}
