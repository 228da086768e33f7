package httpadapter

import (
	"math"
	"testing"

	"github.com/matryer/is"
)

func TestFormatMoney(t *testing.T) {
	is := is.New(t)
	for _, c := range []struct {
		minor    int64
		currency string
		want     string
	}{
		{15000, "MYR", "MYR 150.00"},
		{5, "THB", "THB 0.05"},
		{99, "MYR", "MYR 0.99"},
		{1234, "JPY", "JPY 1,234"},
		{150000, "THB", "THB 1,500.00"},
		{100000000, "THB", "THB 1,000,000.00"},
		{99999, "MYR", "MYR 999.99"},
		{-5, "MYR", "MYR -0.05"},
		{-150000, "THB", "THB -1,500.00"},
		{-123456, "JPY", "JPY -123,456"},
		{1234567, "KWD", "KWD 1,234.567"},
		{math.MaxInt64, "MYR", "MYR 92,233,720,368,547,758.07"},
		{math.MinInt64, "MYR", "MYR -92,233,720,368,547,758.08"},
		{1, "KWD", "KWD 0.001"},
		{123456, "BHD", "BHD 123.456"},
	} {
		is.Equal(formatMoney(c.minor, c.currency), c.want)
	}
}

func TestMaskTokens(t *testing.T) {
	is := is.New(t)
	token := "MTc4MDMwMjQwMAp0ZXN0Cm1jaF8xCnBpXzE.c2lnbmF0dXJlLW9mLXRoZS1saW5r"
	is.Equal(maskTokens("/pay/continue/"+token), "/pay/continue/{token}")
	is.Equal(maskTokens("/pay/qr/"+token+".png"), "/pay/qr/{token}.png")
	is.Equal(maskTokens("/pay/return/short"), "/pay/return/short")
}
