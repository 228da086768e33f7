package paykit

import (
	"regexp"
	"strings"
	"testing"
)

// ValidIdempotencyKey accepts exactly what the pattern ^[!-~]{1,255}$
// does (1 to 255 printable ASCII characters).
func TestValidIdempotencyKeyAsPattern(t *testing.T) {
	pattern := regexp.MustCompile(`^[!-~]{1,255}$`)
	keys := []string{"", "a", "k-1", " ", "a b", "~", "!", "\x7f", "\x00", "é", "ключ", "\xff", "a\n",
		strings.Repeat("k", 254), strings.Repeat("k", 255), strings.Repeat("k", 256), strings.Repeat("é", 100)}
	for c := 0; c < 256; c++ {
		keys = append(keys, string([]byte{byte(c)}), "k"+string([]byte{byte(c)}))
	}
	for _, k := range keys {
		if got, want := ValidIdempotencyKey(k), pattern.MatchString(k); got != want {
			t.Errorf("ValidIdempotencyKey(%q) = %t, the pattern says %t", k, got, want)
		}
	}
}
