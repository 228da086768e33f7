package wire

import (
	"errors"
	"strconv"
)

// MaxAmount is the largest amount of the contract: 18 digits of minor
// units.
const MaxAmount int64 = 999_999_999_999_999_999

// ValidMinorUnits reports whether v is a contract amount: 1 to MaxAmount.
func ValidMinorUnits(v int64) bool { return v > 0 && v <= MaxAmount }

// ValidAmount reports whether s matches ^[1-9][0-9]{0,17}$: the API's
// amounts, decimal strings of minor units.
func ValidAmount(s string) bool {
	if len(s) < 1 || len(s) > 18 || s[0] < '1' || s[0] > '9' {
		return false
	}
	for i := 1; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

var errAmount = errors.New("amount must be a string of a positive integer in minor units")

// ParseAmount parses a contract amount string (ValidAmount: at most 18
// digits, so that it always fits an int64) into minor units.
func ParseAmount(s string) (int64, error) {
	if !ValidAmount(s) {
		return 0, errAmount
	}
	return strconv.ParseInt(s, 10, 64)
}
