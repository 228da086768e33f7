package httpadapter

import (
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
		{1234, "JPY", "JPY 1234"},
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
