// Package view holds the small pieces of the contract's JSON projections
// that paykit and httpadapter both render.
package view

import (
	"strconv"
	"time"
)

// NullString is s, or nil (JSON null) when s is empty.
func NullString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// Amount renders minor units as the contract's amount string.
func Amount(v int64) string { return strconv.FormatInt(v, 10) }

// Time renders t in UTC with layout, or nil (JSON null) when t is nil.
func Time(t *time.Time, layout string) *string {
	if t == nil {
		return nil
	}
	s := t.UTC().Format(layout)
	return &s
}
