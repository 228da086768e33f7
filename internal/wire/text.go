package wire

import (
	"strings"
	"unicode/utf8"
)

// ValidText reports whether s is text paykit accepts: valid UTF-8 without
// a NUL character. Anything else is refused as invalid_request before it
// reaches a Store (PostgreSQL's text types cannot hold NUL, and invalid
// UTF-8 would be stored mangled or not at all).
func ValidText(s string) bool { return utf8.ValidString(s) && strings.IndexByte(s, 0) < 0 }
