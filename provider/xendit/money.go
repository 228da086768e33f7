package xendit

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// Xendit states amounts in major units with decimals (request_amount
// 150.25 MYR); paykit keeps int64 minor units. The conversion is done on
// the decimal text, never through a float.

// exponents are the minor-unit exponents of the currencies the adapter
// serves.
var exponents = map[string]int{"MYR": 2, "THB": 2}

// Decimal is the JSON number of minor units of ccy in major units, with
// all the currency's decimals ("150.25" for 15025 MYR).
func Decimal(minor int64, ccy string) (json.Number, error) {
	exp, ok := exponents[ccy]
	if !ok {
		return "", fmt.Errorf("xendit: currency %q is not one the adapter serves", ccy)
	}
	if minor < 0 {
		return "", fmt.Errorf("xendit: negative amount %d", minor)
	}
	s := strconv.FormatInt(minor, 10)
	if exp == 0 {
		return json.Number(s), nil
	}
	if len(s) <= exp {
		s = strings.Repeat("0", exp-len(s)+1) + s
	}
	return json.Number(s[:len(s)-exp] + "." + s[len(s)-exp:]), nil
}

// MinorUnits reads a decimal amount of ccy ("150.25", 150, "150.250")
// into minor units. More decimals than the currency has are accepted
// only when they are zeros; exponents, signs and overflows are errors.
func MinorUnits(v string, ccy string) (int64, error) {
	exp, ok := exponents[ccy]
	if !ok {
		return 0, fmt.Errorf("currency %q is not one the adapter serves", ccy)
	}
	whole, frac, _ := strings.Cut(v, ".")
	if whole == "" || !digits(whole) || (frac == "" && strings.Contains(v, ".")) || !digits(frac) {
		return 0, fmt.Errorf("amount %q is not a plain decimal", v)
	}
	if len(frac) > exp {
		if strings.Trim(frac[exp:], "0") != "" {
			return 0, fmt.Errorf("amount %q has more decimals than %s has", v, ccy)
		}
		frac = frac[:exp]
	}
	frac += strings.Repeat("0", exp-len(frac))
	s := strings.TrimLeft(whole+frac, "0")
	if s == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("amount %q is out of range", v)
	}
	return n, nil
}

func digits(s string) bool {
	for i := range len(s) {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// amount is a JSON amount Xendit may send as a number or as a string.
type amount string

// UnmarshalJSON keeps the decimal text of a number or string.
func (a *amount) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*a = ""
		return nil
	}
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*a = amount(s)
		return nil
	}
	var n json.Number
	if err := json.Unmarshal(b, &n); err != nil {
		return err
	}
	*a = amount(n)
	return nil
}

// minor reads a in minor units of ccy.
func (a amount) minor(ccy string) (int64, error) {
	if a == "" {
		return 0, fmt.Errorf("no amount")
	}
	return MinorUnits(string(a), ccy)
}
