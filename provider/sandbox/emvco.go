package sandbox

import (
	"fmt"
	"strings"
)

// EMVCo merchant-presented QR payloads: a string of data objects, each a
// two-digit id, a two-digit length and the value, ending with object 63
// holding the CRC-16/CCITT-FALSE (as four uppercase hex digits) of
// everything before it including "6304".

// tlv renders one data object. Values here are ASCII and built by this
// package, so a value of 100 characters or more is a bug.
func tlv(id, value string) string {
	if len(id) != 2 || len(value) > 99 {
		panic(fmt.Sprintf("sandbox: bad EMVCo data object %q (%d chars)", id, len(value)))
	}
	return fmt.Sprintf("%s%02d%s", id, len(value), value)
}

// crc16 is CRC-16/CCITT-FALSE: polynomial 0x1021, initial value 0xFFFF,
// no reflection, no final XOR.
func crc16(data []byte) uint16 {
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

// emvPayload joins the data objects and appends the CRC object.
func emvPayload(objects ...string) string {
	s := strings.Join(objects, "") + "6304"
	return s + fmt.Sprintf("%04X", crc16([]byte(s)))
}

// emvAmount renders minor units of a two-decimal currency (MYR, THB).
func emvAmount(minor int64) string { return fmt.Sprintf("%d.%02d", minor/100, minor%100) }

// Sandbox merchant identity inside the QR codes.
const (
	qrMerchantName   = "SANDBOX PSP"
	promptPayBiller  = "010555012345601" // tax id + suffix of the sandbox biller
	duitNowAcquirer  = "890053"
	duitNowMerchant  = "SBX0000000001"
	promptPayBillAID = "A000000677010112" // PromptPay bill payment (tag 30)
	duitNowAID       = "A0000006150001"   // PayNet DuitNow (tag 26)
)

// promptPayQR is a dynamic PromptPay bill-payment QR (tag 30) for the
// amount, carrying ref as reference 1.
func promptPayQR(ref string, amount int64) string {
	return emvPayload(
		tlv("00", "01"),
		tlv("01", "12"), // dynamic: single use, amount fixed
		tlv("30", tlv("00", promptPayBillAID)+tlv("01", promptPayBiller)+tlv("02", ref)),
		tlv("53", "764"),
		tlv("54", emvAmount(amount)),
		tlv("58", "TH"),
		tlv("59", qrMerchantName),
		tlv("60", "BANGKOK"),
	)
}

// duitNowQR is a dynamic DuitNow QR (tag 26) for the amount, carrying ref
// as the reference label of the additional data (tag 62).
func duitNowQR(ref string, amount int64) string {
	return emvPayload(
		tlv("00", "01"),
		tlv("01", "12"),
		tlv("26", tlv("00", duitNowAID)+tlv("01", duitNowAcquirer)+tlv("02", duitNowMerchant)),
		tlv("52", "5999"),
		tlv("53", "458"),
		tlv("54", emvAmount(amount)),
		tlv("58", "MY"),
		tlv("59", qrMerchantName),
		tlv("60", "KUALA LUMPUR"),
		tlv("62", tlv("05", ref)),
	)
}
