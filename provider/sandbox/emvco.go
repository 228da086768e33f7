package sandbox

import "github.com/paykit/paykit/internal/emvco"

// The QR payloads the sandbox PSP shows, built with internal/emvco.

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
	return emvco.Payload(
		emvco.TLV("00", "01"),
		emvco.TLV("01", "12"), // dynamic: single use, amount fixed
		emvco.TLV("30", emvco.TLV("00", promptPayBillAID)+emvco.TLV("01", promptPayBiller)+emvco.TLV("02", ref)),
		emvco.TLV("53", "764"),
		emvco.TLV("54", emvco.Amount(amount)),
		emvco.TLV("58", "TH"),
		emvco.TLV("59", qrMerchantName),
		emvco.TLV("60", "BANGKOK"),
	)
}

// duitNowQR is a dynamic DuitNow QR (tag 26) for the amount, carrying ref
// as the reference label of the additional data (tag 62).
func duitNowQR(ref string, amount int64) string {
	return emvco.Payload(
		emvco.TLV("00", "01"),
		emvco.TLV("01", "12"),
		emvco.TLV("26", emvco.TLV("00", duitNowAID)+emvco.TLV("01", duitNowAcquirer)+emvco.TLV("02", duitNowMerchant)),
		emvco.TLV("52", "5999"),
		emvco.TLV("53", "458"),
		emvco.TLV("54", emvco.Amount(amount)),
		emvco.TLV("58", "MY"),
		emvco.TLV("59", qrMerchantName),
		emvco.TLV("60", "KUALA LUMPUR"),
		emvco.TLV("62", emvco.TLV("05", ref)),
	)
}
