package paykit

import (
	"regexp"
	"unicode/utf8"
)

var (
	currencyPattern = regexp.MustCompile(`^[A-Z]{3,6}$`)
	countryPattern  = regexp.MustCompile(`^[A-Z]{2}$`)
)

// ValidCurrency reports whether s matches ^[A-Z]{3,6}$.
func ValidCurrency(s string) bool { return currencyPattern.MatchString(s) }

// ValidCountry reports whether s matches ^[A-Z]{2}$.
func ValidCountry(s string) bool { return countryPattern.MatchString(s) }

// validateListFilters checks the shared list filters; empty means unset.
func validateListFilters(currency, country, merchantReference string) error {
	if currency != "" && !ValidCurrency(currency) {
		return InvalidRequest("currency", "currency must match ^[A-Z]{3,6}$.")
	}
	if country != "" && !ValidCountry(country) {
		return InvalidRequest("country", "country must match ^[A-Z]{2}$.")
	}
	if n := utf8.RuneCountInString(merchantReference); n > 256 {
		return InvalidRequest("merchant_reference", "merchant_reference must be 1 to 256 characters.")
	}
	return nil
}
