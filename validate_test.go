package paykit

import (
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/paykit/paykit/internal/wire"
)

func TestRulesMatchTheirPatterns(t *testing.T) {
	t.Parallel()
	rules := []struct {
		pattern string
		fn      func(string) bool
	}{
		{`^[A-Z]{3,6}$`, validCurrency},
		{`^[A-Z]{2}$`, validCountry},
		{`^[1-9][0-9]{0,17}$`, wire.ValidAmount},
	}
	var inputs []string
	for _, s := range []string{"", "A", "Z", "a", "@", "[", "0", "1", "9", ":", "/", "é", "\n", "\x00"} {
		for _, t := range []string{"", "A", "Z", "a", "0", "9", "\n"} {
			for n := range 20 {
				inputs = append(inputs, s+strings.Repeat(t, n), strings.Repeat(t, n)+s)
			}
		}
	}
	for _, r := range rules {
		re := regexp.MustCompile(r.pattern)
		for _, in := range inputs {
			if got, want := r.fn(in), re.MatchString(in); got != want {
				t.Errorf("%s on %q: %v, the pattern says %v", r.pattern, in, got, want)
			}
		}
	}
}

// The textmap rule answers, for a map with one bad entry, exactly what the
// validator's own "dive,keys,min=1,max=K,endkeys,max=V" answers: the same
// param and message.
func TestTextMapMatchesDiveKeys(t *testing.T) {
	t.Parallel()
	type fast struct {
		Before   string            `json:"before" validate:"max=3"`
		Customer map[string]string `json:"customer" validate:"required,textmap=4:6"`
		After    string            `json:"after" validate:"required"`
	}
	type dive struct {
		Before   string            `json:"before" validate:"max=3"`
		Customer map[string]string `json:"customer" validate:"required,dive,keys,min=1,max=4,endkeys,max=6"`
		After    string            `json:"after" validate:"required"`
	}
	maps := []map[string]string{
		nil,
		{},
		{"name": "Ann"},
		{"": "x"},
		{"names": "x"},
		{"näme": "éééééé"},
		{"name": "ééééééé"},
		{"a": "1", "b[c]": "1234567"},
		{"ab": "1", "x.y": ""},
		{"abcd": "123456", "z": "7"},
	}
	for _, m := range maps {
		for _, before := range []string{"ok", "long"} {
			for _, after := range []string{"", "x"} {
				got := validateRequest(&fast{before, m, after})
				want := validateRequest(&dive{before, m, after})
				if !reflect.DeepEqual(got, want) {
					t.Errorf("%q %q %q: textmap %v, dive %v", before, m, after, got, want)
				}
			}
		}
	}
}
