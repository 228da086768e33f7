package xendit

import (
	"slices"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/internal/enums"
)

// channel is how a paykit method in one country maps to a Xendit channel
// (see doc.go for the sources of each row).
type channel struct {
	Method     string
	Country    string
	Currency   string
	Code       string // channel_code; FPX: the route's bank code is the channel
	NextAction string
	BankName   string // bank_transfer_instructions: the virtual account's bank
	NoRefunds  bool
}

// channels is the table doc.go documents, in the order Methods lists them.
var channels = []channel{
	{"FPX", "MY", "MYR", "", paykit.NextActionRedirectToURL, "", true},
	{"TNG", "MY", "MYR", "TOUCHNGO", paykit.NextActionRedirectToURL, "", false},
	{"GRABPAY", "MY", "MYR", "GRABPAY", paykit.NextActionRedirectToURL, "", false},
	{"WECHAT_PAY", "MY", "MYR", "WECHATPAY", paykit.NextActionRedirectToURL, "", false},
	{"BANK_TRANSFER", "MY", "MYR", "AMBANK_VIRTUAL_ACCOUNT", paykit.NextActionBankTransferInstructions, "AmBank", true},
	{"PROMPTPAY", "TH", "THB", "QRPROMPTPAY", paykit.NextActionDisplayQRCode, "", true},
	{"TRUEMONEY", "TH", "THB", "TRUEMONEY", paykit.NextActionRedirectToURL, "", false},
	{"WECHAT_PAY", "TH", "THB", "WECHATPAY", paykit.NextActionRedirectToURL, "", true},
}

// channelFor finds the channel of method in country.
func channelFor(method, country string) (channel, bool) {
	for _, c := range channels {
		if c.Method == method && c.Country == country {
			return c, true
		}
	}
	return channel{}, false
}

func served(method string) bool {
	return slices.ContainsFunc(channels, func(c channel) bool { return c.Method == method })
}

// Methods lists the paykit methods the adapter serves, in the contract's
// order.
func Methods() []string {
	var out []string
	for _, m := range enums.PaymentMethods {
		if served(m) {
			out = append(out, m)
		}
	}
	return out
}

// fpxBanks are the FPX banks by paykit's canonical code, with Xendit's
// channel code ({Bank Name}_FPX) for each.
var fpxBanks = []struct{ code, name, channel string }{
	{"MAYBANK", "Maybank2u", "MAYB2U_FPX"},
	{"CIMB", "CIMB Clicks", "CIMB_FPX"},
	{"PUBLIC", "Public Bank", "PUBLIC_FPX"},
	{"RHB", "RHB Now", "RHB_FPX"},
	{"HLB", "Hong Leong Connect", "HLB_FPX"},
	{"AMBANK", "AmOnline", "AMBANK_FPX"},
	{"BSN", "BSN", "BSN_FPX"},
	{"BIMB", "Bank Islam", "ISLAM_FPX"},
	{"AFFIN", "Affin Bank", "AFFIN_FPX"},
	{"ALLIANCE", "Alliance Bank", "ALLIANCE_FPX"},
	{"AGRO", "Agrobank", "AGRO_FPX"},
	{"MUAMALAT", "Bank Muamalat", "MUAMALAT_FPX"},
	{"RAKYAT", "Bank Rakyat", "RAKYAT_FPX"},
	{"HSBC", "HSBC", "HSBC_FPX"},
	{"KFH", "Kuwait Finance House", "KFH_FPX"},
	{"OCBC", "OCBC", "OCBC_FPX"},
	{"UOB", "UOB", "UOB_FPX"},
	{"SCB", "Standard Chartered", "SCH_FPX"},
}

// FPXBanks are the FPX banks as paykit routes name them: the canonical
// Code and Xendit's channel code as ProviderCode.
func FPXBanks() []paykit.Bank {
	out := make([]paykit.Bank, len(fpxBanks))
	for i, b := range fpxBanks {
		out[i] = paykit.Bank{Code: b.code, Name: b.name, ProviderCode: b.channel, Available: true}
	}
	return out
}

// Route returns the payment route template of a paykit method in a
// country: Environment, Provider and amounts are the caller's.
func Route(method, country string) (paykit.PaymentRoute, bool) {
	c, ok := channelFor(method, country)
	if !ok {
		return paykit.PaymentRoute{}, false
	}
	r := paykit.PaymentRoute{Method: method, Country: c.Country, Currency: c.Currency, NextAction: c.NextAction, NoRefunds: c.NoRefunds}
	if method == "FPX" {
		r.Options, r.Banks = []string{"bank"}, FPXBanks()
	}
	return r, true
}

// MethodsIn lists the methods the adapter serves in country.
func MethodsIn(country string) []string {
	var out []string
	for _, m := range Methods() {
		if _, ok := channelFor(m, country); ok {
			out = append(out, m)
		}
	}
	return out
}

// payoutBanks are the banks the adapter pays out to, by country: paykit's
// canonical code and Xendit's Payouts API channel_code.
var payoutBanks = map[string][]struct{ code, channel string }{
	"MY": {
		{"MAYBANK", "MY_MAYBANK"}, {"CIMB", "MY_CIMB"}, {"PUBLIC", "MY_PUBLIC"}, {"RHB", "MY_RHB"},
		{"HLB", "MY_HONGLEONG"}, {"AMBANK", "MY_AMBANK"}, {"BSN", "MY_BSN"}, {"BIMB", "MY_BANKISLAM"},
		{"AFFIN", "MY_AFFIN"}, {"ALLIANCE", "MY_ALLIANCE"}, {"AGRO", "MY_AGRO"}, {"MUAMALAT", "MY_MUAMALAT"},
		{"RAKYAT", "MY_RAKYAT"}, {"HSBC", "MY_HSBC"}, {"KFH", "MY_KFH"}, {"OCBC", "MY_OCBC"}, {"UOB", "MY_UOB"},
		{"SCB", "MY_STANDARD_CHARTERED"},
	},
	"TH": {
		{"BAAC", "TH_BAAC"}, {"BAY", "TH_BAY"}, {"BBL", "TH_BBL"}, {"CIMB", "TH_CIMB"}, {"GHB", "TH_GHB"},
		{"GSB", "TH_GSB"}, {"ISLAMIC", "TH_ISLAMIC"}, {"KBANK", "TH_KBANK"}, {"KKP", "TH_KKP"}, {"KTB", "TH_KTB"},
		{"LHBANK", "TH_LHBANK"}, {"SCB", "TH_SCB"}, {"SCBT", "TH_SCBT"}, {"TCR", "TH_TCRB"}, {"TISCO", "TH_TISCO"},
		{"TTB", "TH_TTB"}, {"UOB", "TH_UOB"},
	},
}

// payoutCurrencies is the currency of payouts in each country.
var payoutCurrencies = map[string]string{"MY": "MYR", "TH": "THB"}

// PayoutBanks returns the currency and banks of payouts in country, each
// with Xendit's channel_code as ProviderCode; false where the adapter
// does not pay out. A providers file may override a code per bank.
func PayoutBanks(country string) (string, []paykit.PayoutBank, bool) {
	banks, ok := payoutBanks[country]
	if !ok {
		return "", nil, false
	}
	out := make([]paykit.PayoutBank, len(banks))
	for i, b := range banks {
		out[i] = paykit.PayoutBank{Code: b.code, ProviderCode: b.channel}
	}
	return payoutCurrencies[country], out, true
}
