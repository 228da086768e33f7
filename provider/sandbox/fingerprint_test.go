package sandbox

import (
	"testing"
	"time"

	"github.com/matryer/is"
)

// A create's fingerprint changes with every field, not with the order a
// map is filled in, and not two field lists write the same bytes.
func TestFingerprintCoversEveryField(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	at := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	base := paymentCreate{AmountMinor: 1500, Ccy: "MYR", Country: "MY", Channel: "FPX", Bank: "MB2U0227",
		Payer: map[string]string{"name": "A", "email": "a@example.com"}, ReturnURL: "https://m.example/r", ExpiresAt: &at}
	later := at.Add(time.Nanosecond)
	changes := []func(*paymentCreate){
		func(p *paymentCreate) { p.AmountMinor++ },
		func(p *paymentCreate) { p.Ccy = "THB" },
		func(p *paymentCreate) { p.Country = "TH" },
		func(p *paymentCreate) { p.Channel = "DUITNOW_QR" },
		func(p *paymentCreate) { p.Bank = "" },
		func(p *paymentCreate) { p.Payer = map[string]string{"name": "A", "email": "b@example.com"} },
		func(p *paymentCreate) { p.Payer = map[string]string{"name": "A"} },
		func(p *paymentCreate) { p.Payer = nil },
		func(p *paymentCreate) { p.ReturnURL = "" },
		func(p *paymentCreate) { p.ExpiresAt = &later },
		func(p *paymentCreate) { p.ExpiresAt = nil },
		func(p *paymentCreate) { p.Ccy, p.Country = "MYRM", "Y" }, // the same bytes, split elsewhere
	}
	seen := map[string]int{base.fingerprint(): -1}
	for i, change := range changes {
		p := base
		change(&p)
		fp := p.fingerprint()
		if j, ok := seen[fp]; ok {
			t.Errorf("change %d has the fingerprint of %d", i, j)
		}
		seen[fp] = i
	}
	same := base
	same.Payer = map[string]string{"email": "a@example.com"}
	same.Payer["name"] = "A"
	is.Equal(same.fingerprint(), base.fingerprint())

	po := payoutCreate{AmountMinor: 1, Ccy: "MYR", Country: "MY", Bank: "MBBEMYKL", BeneficiaryAcct: "1", BeneficiaryName: "B"}
	po2 := po
	po2.BeneficiaryAcct = "2"
	is.True(po.fingerprint() != po2.fingerprint())
	rf := refundCreate{PaymentID: "pay_1", AmountMinor: 1, Ccy: "MYR"}
	rf2 := rf
	rf2.PaymentKey, rf2.PaymentID = "pay_1", ""
	is.True(rf.fingerprint() != rf2.fingerprint())
}
