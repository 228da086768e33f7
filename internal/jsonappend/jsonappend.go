// Package jsonappend appends JSON values byte for byte as encoding/json
// writes them, without reflection, for the few hot shapes that are
// encoded on every request (and hashed, where a byte that differed would
// change a stored fingerprint).
package jsonappend

import (
	"encoding/json"
	"slices"
	"strconv"
	"time"
)

// String appends s as encoding/json quotes it: printable ASCII but for
// the characters it escapes is copied, anything else goes through
// json.Marshal.
func String(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // a string always encodes
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// Member appends an object member with a string value: name is what
// precedes the value, as in `,"id":`.
func Member(b []byte, name, v string) []byte { return String(append(b, name...), v) }

// IntMember appends an object member with an integer value.
func IntMember(b []byte, name string, v int64) []byte {
	return strconv.AppendInt(append(b, name...), v, 10)
}

// TimeMember appends an object member with a time value, as Time does;
// false where Time is.
func TimeMember(b []byte, name string, t time.Time) ([]byte, bool) {
	return Time(append(b, name...), t)
}

// StringMap appends m as encoding/json does: its keys sorted, and null
// for a nil map.
func StringMap(b []byte, m map[string]string) []byte {
	if m == nil {
		return append(b, "null"...)
	}
	var arr [8]string
	keys := arr[:0]
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = String(b, k)
		b = append(b, ':')
		b = String(b, m[k])
	}
	return append(b, '}')
}

// Time appends t as Time.MarshalJSON does, for the years and whole-minute
// offsets it takes without an error; false for others.
func Time(b []byte, t time.Time) ([]byte, bool) {
	if _, off := t.Zone(); t.Year() < 0 || t.Year() > 9999 || off%60 != 0 || off <= -24*3600 || off >= 24*3600 {
		return nil, false
	}
	b = append(b, '"')
	b = t.AppendFormat(b, time.RFC3339Nano)
	return append(b, '"'), true
}
