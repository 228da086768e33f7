package opnfake

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"strings"

	"github.com/paykit/paykit/internal/emvco"
	qrcode "github.com/skip2/go-qrcode"
)

// BillReference is the bill reference the fake's acquirer puts in the QR
// payload of a charge: 20 digits derived from its id, as banks issue
// numeric references (the charge id itself is Opn's, which merchants
// never see).
func BillReference(chargeID string) string {
	sum := sha256.Sum256([]byte(chargeID))
	return fmt.Sprintf("%020d", binary.BigEndian.Uint64(sum[:8]))
}

// EMVCo returns an EMVCo merchant-presented QR payload of a dynamic
// (point-of-initiation 12) code for amount minor units of ccy in country:
// PromptPay's layout (tag 29) for TH, DuitNow's (tag 26) for MY, with the
// CRC-16/CCITT-FALSE checksum of tag 63. ref is put in tag 62.
func EMVCo(country, ccy string, amount int64, ref string) string {
	tlv := emvco.TLV
	merchant := tlv("29", tlv("00", "A000000677010111")+tlv("03", "010000000000000"))
	if country == "MY" {
		merchant = tlv("26", tlv("00", "my.com.paynet")+tlv("01", "890000")+tlv("02", "0000000000000000"))
	}
	if len(ref) > 25 {
		ref = ref[len(ref)-25:]
	}
	return emvco.Payload(tlv("00", "01"), tlv("01", "12"), merchant,
		tlv("53", map[string]string{"THB": "764", "MYR": "458"}[ccy]), tlv("54", emvco.Amount(amount)),
		tlv("58", country), tlv("62", tlv("05", ref)))
}

// QRSVG draws payload as an SVG QR code: one rect per dark module, on a
// white background rect.
func QRSVG(payload string) ([]byte, error) {
	q, err := qrcode.New(payload, qrcode.Medium)
	if err != nil {
		return nil, err
	}
	bm := q.Bitmap() // with its quiet zone
	n := len(bm)
	var b strings.Builder
	fmt.Fprintf(&b, `<?xml version="1.0" encoding="UTF-8"?>`+"\n"+`<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %d %d" width="%d" height="%d">`, n, n, n*4, n*4)
	fmt.Fprintf(&b, `<rect x="0" y="0" width="%d" height="%d" fill="#ffffff"/>`, n, n)
	for y, row := range bm {
		for x, dark := range row {
			if dark {
				fmt.Fprintf(&b, `<rect x="%d" y="%d" width="1" height="1" fill="#000000"/>`, x, y)
			}
		}
	}
	b.WriteString("</svg>")
	return []byte(b.String()), nil
}
