package paykit

import (
	"errors"
	"strconv"
)

// FormatAmount renders minor units as the contract's amount string.
func FormatAmount(v int64) string { return strconv.FormatInt(v, 10) }

var errAmount = errors.New("amount must be a string of a positive integer in minor units")

// ParseAmount parses a contract amount string (^[1-9]\d*$, at most 18
// digits so that it always fits an int64) into minor units.
func ParseAmount(s string) (int64, error) {
	if s == "" || s[0] < '1' || s[0] > '9' || len(s) > 18 {
		return 0, errAmount
	}
	for i := 1; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, errAmount
		}
	}
	return strconv.ParseInt(s, 10, 64)
}

// MaxAmount is the largest amount of the contract: 18 digits of minor
// units.
const MaxAmount int64 = 999_999_999_999_999_999

// ValidMinorUnits reports whether v is a contract amount: 1 to MaxAmount.
func ValidMinorUnits(v int64) bool { return v > 0 && v <= MaxAmount }
