package paykit

import (
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
