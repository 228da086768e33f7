package jsonappend

import (
	"encoding/json"
	"math"
	"testing"
	"time"
)

func TestAsEncodingJSON(t *testing.T) {
	for _, s := range []string{"", "plain", "q\"b\\s", "<>&", "\n\r\t\x00\x1f\x7f", "é", "\u2028", "\xff", "🎉"} {
		want, _ := json.Marshal(s)
		if got := String(nil, s); string(got) != string(want) {
			t.Errorf("String(%q) = %s, json.Marshal: %s", s, got, want)
		}
		if got := Member([]byte("{"), `"k":`, s); string(got) != `{"k":`+string(want) {
			t.Errorf("Member(%q) = %s", s, got)
		}
	}
	for _, m := range []map[string]string{nil, {}, {"b": "2", "a": "1"}, {"<": ">", "é": "\x00", "1": "", "0": "a", "x": "y", "z": "w", "m": "n", "k": "l", "j": "i"}} {
		want, _ := json.Marshal(m)
		if got := StringMap(nil, m); string(got) != string(want) {
			t.Errorf("StringMap(%v) = %s, json.Marshal: %s", m, got, want)
		}
	}
	for _, tm := range []time.Time{time.Date(2026, 11, 25, 4, 41, 0, 123456789, time.UTC), time.Unix(0, 0).In(time.FixedZone("", 8*3600)), {}} {
		want, _ := json.Marshal(tm)
		got, ok := Time(nil, tm)
		if !ok || string(got) != string(want) {
			t.Errorf("Time(%v) = %s, %t; json.Marshal: %s", tm, got, ok, want)
		}
		if got, ok := TimeMember([]byte("{"), `"t":`, tm); !ok || string(got) != `{"t":`+string(want) {
			t.Errorf("TimeMember(%v) = %s, %t", tm, got, ok)
		}
	}
	for _, v := range []int64{0, -1, 15000, math.MaxInt64, math.MinInt64} {
		want, _ := json.Marshal(v)
		if got := IntMember([]byte("{"), `"n":`, v); string(got) != `{"n":`+string(want) {
			t.Errorf("IntMember(%d) = %s", v, got)
		}
	}
	if _, ok := Time(nil, time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)); ok {
		t.Error("Time took a year json.Marshal refuses")
	}
	if _, ok := TimeMember(nil, `"t":`, time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)); ok {
		t.Error("TimeMember took a year json.Marshal refuses")
	}
}
