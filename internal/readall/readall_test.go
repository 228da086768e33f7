package readall

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// TestReadAllAsIOReadAll: whatever the hint, the bytes and the error are
// io.ReadAll's.
func TestReadAllAsIOReadAll(t *testing.T) {
	boom := errors.New("boom")
	for _, n := range []int{0, 1, 200, 511, 512, 513, 5000} {
		data := strings.Repeat("x", n)
		readers := map[string]func() io.Reader{
			"plain":    func() io.Reader { return strings.NewReader(data) },
			"one byte": func() io.Reader { return iotest.OneByteReader(strings.NewReader(data)) },
			"error":    func() io.Reader { return io.MultiReader(strings.NewReader(data), iotest.ErrReader(boom)) },
			"limited":  func() io.Reader { return io.LimitReader(strings.NewReader(data), 300) },
		}
		for name, r := range readers {
			want, wantErr := io.ReadAll(r())
			for _, size := range []int64{-1, 0, int64(n) - 1, int64(n), int64(n) + 1, 10000, 1 << 40} {
				got, err := ReadAll(r(), size, 1<<20)
				if !bytes.Equal(got, want) || !errors.Is(err, wantErr) && err != wantErr {
					t.Errorf("%s, %d bytes, size %d: %d bytes, %v; io.ReadAll: %d bytes, %v", name, n, size, len(got), err, len(want), wantErr)
				}
			}
		}
	}
}
