package wire

// ThaiBankCodes are the service's canonical Thai payout bank codes.
var ThaiBankCodes = []string{
	"BAAC", "BAY", "BBL", "CIMB", "CLICX", "EXIM", "GHB", "GSB", "ISLAMIC", "KBANK",
	"KKP", "KTB", "LHBANK", "SCB", "SCBT", "SME", "TCR", "TISCO", "TTB", "UOB",
}

// PromptPayBankCode is the bank code of a PromptPay destination; the
// PromptPay id (phone number or national id) is the account number.
const PromptPayBankCode = "promptpay"
