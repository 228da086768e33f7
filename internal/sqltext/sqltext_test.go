package sqltext

import (
	"testing"

	"github.com/matryer/is"
)

func TestDollar(t *testing.T) {
	is := is.New(t)
	is.Equal(Dollar("SELECT ? WHERE a = ? AND b = ?", 0), "SELECT $1 WHERE a = $2 AND b = $3")
	is.Equal(Dollar("SET c = $1 WHERE id = ?", 1), "SET c = $1 WHERE id = $2")
	is.Equal(Dollar("SELECT 1", 3), "SELECT 1")
}
