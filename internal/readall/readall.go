// Package readall is io.ReadAll with a size hint.
package readall

import "io"

// ReadAll is io.ReadAll, reading into a buffer of size+1 bytes first
// when 0 <= size <= max (a Content-Length): a body of the announced size
// is read with one allocation. Any other size starts as io.ReadAll does.
func ReadAll(r io.Reader, size, max int64) ([]byte, error) {
	if size < 0 || size > max {
		return io.ReadAll(r)
	}
	b := make([]byte, 0, size+1) // +1: room to see EOF without growing
	for {
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err != nil {
			if err == io.EOF {
				err = nil
			}
			return b, err
		}
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
	}
}
