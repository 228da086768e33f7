package emvco_test

import (
	"testing"

	"github.com/matryer/is"

	"github.com/paykit/paykit/internal/emvco"
)

func TestPayload(t *testing.T) {
	is := is.New(t)
	// CRC-16/CCITT-FALSE of "123456789" is 0x29B1 (the standard check value).
	is.Equal(emvco.CRC16([]byte("123456789")), uint16(0x29B1))
	is.Equal(emvco.TLV("54", "12.34"), "540512.34")
	is.Equal(emvco.Amount(150), "1.50")
	p := emvco.Payload(emvco.TLV("00", "01"), emvco.TLV("58", "TH"))
	is.Equal(p[:len(p)-4], "0002015802TH6304")
	is.Equal(len(p), len("0002015802TH6304")+4)
}
