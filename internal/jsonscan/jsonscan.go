// Package jsonscan is the cursor that paykit's one-pass JSON readers
// (quickjson, jsonnames) walk a text with.
package jsonscan

// Cursor is a position I in the JSON text B.
type Cursor struct {
	B []byte
	I int
}

// Space skips white space.
func (c *Cursor) Space() {
	for c.I < len(c.B) {
		switch c.B[c.I] {
		case ' ', '\t', '\n', '\r':
			c.I++
		default:
			return
		}
	}
}

// Next reads what follows a member or element: a comma, with more to
// come, or close, which ends the object or array (end). ok is false on
// anything else.
func (c *Cursor) Next(close byte) (end, ok bool) {
	c.Space()
	if c.I >= len(c.B) {
		return false, false
	}
	switch c.B[c.I] {
	case ',':
		c.I++
		return false, true
	case close:
		c.I++
		return true, true
	}
	return false, false
}
