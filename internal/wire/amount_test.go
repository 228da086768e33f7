package wire_test

import (
	"testing"

	"github.com/matryer/is"

	"github.com/paykit/paykit/internal/wire"
)

func TestParseAmount(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	for in, want := range map[string]int64{"1": 1, "100": 100, "999999999999999999": 999999999999999999} {
		got, err := wire.ParseAmount(in)
		is.NoErr(err)
		is.Equal(got, want)
	}
	for _, bad := range []string{"", "0", "01", "-1", "1.5", "1e3", " 1", "1000000000000000000", "٣"} {
		_, err := wire.ParseAmount(bad)
		is.True(err != nil)
	}
}
