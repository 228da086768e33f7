package xendit_test

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/matryer/is"

	"github.com/paykit/paykit/provider/xendit"
)

// Amounts cross between paykit's minor units and Xendit's decimals
// exactly, through their text: no float on the way, even above 2^53.
func TestDecimalAmounts(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	for minor, text := range map[int64]string{
		0: "0.00", 5: "0.05", 99: "0.99", 100: "1.00", 15025: "150.25",
		1 << 53: "90071992547409.92", math.MaxInt64: "92233720368547758.07",
	} {
		d, err := xendit.Decimal(minor, "MYR")
		is.NoErr(err)
		is.Equal(d, json.Number(text))
		back, err := xendit.MinorUnits(text, "THB")
		is.NoErr(err)
		is.Equal(back, minor)
	}
	for text, minor := range map[string]int64{"150": 15000, "150.2": 15020, "150.250": 15025, "0.1": 10, "007.00": 700} {
		got, err := xendit.MinorUnits(text, "MYR")
		is.NoErr(err)
		is.Equal(got, minor)
	}
	for _, bad := range []string{"", ".5", "1.", "1.234", "-1.00", "1e3", "1,00", "92233720368547758.08", " 1"} {
		_, err := xendit.MinorUnits(bad, "MYR")
		is.True(err != nil)
	}
	_, err := xendit.Decimal(100, "IDR")
	is.True(err != nil)
	_, err = xendit.Decimal(-1, "MYR")
	is.True(err != nil)
}
