package paykit

import (
	"crypto/rand"
	"encoding/base32"
	"strconv"
	"strings"
	"sync"
)

var idEncoding = base32.NewEncoding("0123456789abcdefghjkmnpqrstvwxyz").WithPadding(base32.NoPadding)

// RandomID returns prefix + "_" + 24 characters of crypto randomness. It is
// the default Config.NewID.
func RandomID(prefix string) string {
	var b [15]byte
	rand.Read(b[:]) // never fails: it crashes the program instead
	var buf [64]byte
	out := append(append(buf[:0], prefix...), '_')
	return string(idEncoding.AppendEncode(out, b[:]))
}

// SequentialIDs returns a NewID function that makes predictable ids
// (prefix_000001, prefix_000002, ...) for tests.
func SequentialIDs() func(prefix string) string {
	var mu sync.Mutex
	n := 0
	return func(prefix string) string {
		mu.Lock()
		defer mu.Unlock()
		n++
		return prefix + "_" + strings.Repeat("0", max(0, 6-len(strconv.Itoa(n)))) + strconv.Itoa(n)
	}
}
