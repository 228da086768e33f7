// Package emvco builds EMVCo merchant-presented QR payloads (PromptPay,
// DuitNow): a string of data objects, each a two-digit id, a two-digit
// length and the value, ending with object 63 holding the
// CRC-16/CCITT-FALSE (four uppercase hex digits) of everything before it
// including "6304". The sandbox PSP and the Provider fakes use it.
package emvco

import (
	"fmt"
	"strings"
)

// TLV renders one data object. Values are ASCII and built by the caller,
// so a value of 100 characters or more is a bug.
func TLV(id, value string) string {
	if len(id) != 2 || len(value) > 99 {
		panic(fmt.Sprintf("emvco: bad data object %q (%d chars)", id, len(value)))
	}
	return fmt.Sprintf("%s%02d%s", id, len(value), value)
}

// CRC16 is CRC-16/CCITT-FALSE: polynomial 0x1021, initial value 0xFFFF,
// no reflection, no final XOR.
func CRC16(data []byte) uint16 {
	crc := uint16(0xFFFF)
	for _, b := range data {
		crc ^= uint16(b) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc
}

// Payload joins the data objects and appends the CRC object.
func Payload(objects ...string) string {
	s := strings.Join(objects, "") + "6304"
	return s + fmt.Sprintf("%04X", CRC16([]byte(s)))
}

// Amount renders minor units of a two-decimal currency (MYR, THB).
func Amount(minor int64) string { return fmt.Sprintf("%d.%02d", minor/100, minor%100) }
