package paykit

import (
	"crypto/rand"
	"encoding/base32"
	"io"
	"strconv"
	"strings"
	"sync"
)

var idEncoding = base32.NewEncoding("0123456789abcdefghjkmnpqrstvwxyz").WithPadding(base32.NoPadding)

// RandomID returns prefix + "_" + 24 characters of crypto randomness. It is
// the default Config.NewID.
func RandomID(prefix string) string {
	b := make([]byte, 15)
	if _, err := io.ReadFull(rand.Reader, b); err != nil {
		panic("paykit: crypto/rand failed: " + err.Error())
	}
	return prefix + "_" + idEncoding.EncodeToString(b)
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
