package sandbox

import (
	"slices"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/internal/wire"
)

// DefaultRouting returns the contract's sandbox routes: every method of
// MY/MYR and TH/THB, and payouts to the Thai banks (plus promptpay) and
// the Malaysian banks, all in the test environment through Provider Name.
// The live environment has no routes.
func DefaultRouting() paykit.Routing {
	var rt paykit.Routing
	for _, country := range []string{"MY", "TH"} {
		for _, m := range methodOrder[country] {
			ch := channels[country][m]
			r := paykit.PaymentRoute{
				Environment: paykit.Test, Method: m, Country: country, Currency: currencies[country],
				Provider: Name, NextAction: nextActionType(ch.action), CustomerFields: ch.payerFields(),
				// Bank transfers into a virtual account cannot be refunded.
				NoRefunds: m == "BANK_TRANSFER",
			}
			if ch.code == fpxChannel {
				r.Options = []string{"bank"}
				for _, b := range myBanks {
					r.Banks = append(r.Banks, paykit.Bank{Code: b.code, Name: b.name, ProviderCode: b.local, Available: !b.offline})
				}
			}
			rt.Payments = append(rt.Payments, r)
		}
	}
	th := paykit.PayoutRoute{Environment: paykit.Test, Country: "TH", Currency: "THB", Provider: Name}
	for _, code := range append(slices.Clone(wire.ThaiBankCodes), wire.PromptPayBankCode) {
		i := slices.IndexFunc(thBanks, func(b bank) bool { return b.code == code })
		if i < 0 {
			panic("sandbox: no local code for Thai bank " + code)
		}
		th.Banks = append(th.Banks, paykit.PayoutBank{
			Code: code, ProviderCode: thBanks[i].local, RequiresHolderNameTH: code != wire.PromptPayBankCode,
		})
	}
	my := paykit.PayoutRoute{Environment: paykit.Test, Country: "MY", Currency: "MYR", Provider: Name}
	for _, b := range myBanks {
		my.Banks = append(my.Banks, paykit.PayoutBank{Code: b.code, ProviderCode: b.local})
	}
	rt.Payouts = []paykit.PayoutRoute{th, my}
	return rt
}

// nextActionType is paykit's next action type of a local payer-action kind.
func nextActionType(action string) string {
	switch action {
	case actionQR:
		return paykit.NextActionDisplayQRCode
	case actionVA:
		return paykit.NextActionBankTransferInstructions
	}
	return paykit.NextActionRedirectToURL
}
