// Package newid makes paykit's ids: unguessable ones (Random), ones that
// sort in creation order (Sortable, the default of paykit.Config.NewID) and
// predictable ones for tests (Sequential).
package newid

import (
	"crypto/rand"
	"encoding/base32"
	"encoding/binary"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// idAlphabet is in ascending byte order, so that ids compare as the
// numbers they encode.
const idAlphabet = "0123456789abcdefghjkmnpqrstvwxyz"

var idEncoding = base32.NewEncoding(idAlphabet).WithPadding(base32.NoPadding)

// Random returns prefix + "_" + 24 characters of crypto randomness. Use it
// where an id must be unguessable (a session); resource ids come from
// Sortable.
func Random(prefix string) string {
	var b [15]byte
	rand.Read(b[:]) // never fails: it crashes the program instead
	var buf [64]byte
	out := append(append(buf[:0], prefix...), '_')
	return string(idEncoding.AppendEncode(out, b[:]))
}

// idClock is the last (Unix millisecond << idSeqBits | sequence) a
// Sortable id used.
var idClock atomic.Uint64

// idSeqBits is the width of the sequence within one millisecond.
const idSeqBits = 20

// Sortable returns prefix + "_" + 24 characters, in the alphabet of
// Random, that sort in creation order within the process: 10 characters
// of Unix milliseconds, 4 of a sequence within the millisecond, then 10 of
// crypto randomness (50 bits). An id made later in the process sorts after
// every earlier one, even when the wall clock steps back or a millisecond
// makes more than a million ids (the time part then runs ahead). It is the
// default paykit.Config.NewID, so that ids order payments created in one
// millisecond.
func Sortable(prefix string) string {
	now := uint64(max(time.Now().UnixMilli(), 0)) << idSeqBits
	var next uint64
	for {
		last := idClock.Load()
		next = max(now, last+1)
		if idClock.CompareAndSwap(last, next) {
			break
		}
	}
	var r [8]byte
	rand.Read(r[:])
	random := binary.BigEndian.Uint64(r[:])
	var buf [64]byte
	out := append(append(buf[:0], prefix...), '_')
	out = AppendBase32(out, idAlphabet, next, 14)
	out = AppendBase32(out, idAlphabet, random, 10)
	return string(out)
}

// Sequential returns a paykit.Config.NewID function that makes predictable
// ids (prefix_000001, prefix_000002, ...) for tests.
func Sequential() func(prefix string) string {
	var mu sync.Mutex
	n := 0
	return func(prefix string) string {
		mu.Lock()
		defer mu.Unlock()
		n++
		return prefix + "_" + strings.Repeat("0", max(0, 6-len(strconv.Itoa(n)))) + strconv.Itoa(n)
	}
}

// AppendBase32 appends the low 5*n bits of v as n digits of alphabet
// (32 characters), most significant first.
func AppendBase32(b []byte, alphabet string, v uint64, n int) []byte {
	for i := n - 1; i >= 0; i-- {
		b = append(b, alphabet[(v>>(5*uint(i)))&31])
	}
	return b
}
