// Package sqltext rewrites SQL text.
package sqltext

import (
	"strconv"
	"strings"
)

// Dollar writes query's ? placeholders as PostgreSQL's $from+1, $from+2,
// and so on. Every ? is one: the queries keep them out of literals.
func Dollar(query string, from int) string {
	var b strings.Builder
	b.Grow(len(query) + 8)
	for _, r := range query {
		if r == '?' {
			from++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(from))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}
