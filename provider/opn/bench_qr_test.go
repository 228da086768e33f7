package opn_test

import (
	"testing"

	"github.com/paykit/paykit/provider/opn"
	"github.com/paykit/paykit/provider/opn/opnfake"
)

func BenchmarkDecodeSVG(b *testing.B) {
	svg, _ := opnfake.QRSVG(opnfake.EMVCo("TH", "THB", 2000, "chrg_test_1234567890abcdef"))
	for b.Loop() {
		if _, err := opn.DecodeQR(svg); err != nil {
			b.Fatal(err)
		}
	}
}
