package sandbox

// The sandbox PSP's own vocabulary. None of it may reach paykit's mapped
// fields (Outcome, FailureCode, Action.Type): the adapter translates it,
// and keeps the local words only in Result.Detail.

// Local attempt and transfer states.
const (
	statePayerAction = "PAYER_ACTION" // waiting for the payer on the PSP's page, QR or transfer
	statePending     = "PENDING"      // payment accepted, result comes later
	stateProcessing  = "PROCESSING"   // transfer in flight
	stateSuccess     = "SUCCESS"
	stateFailed      = "FAILED"
	stateCancelled   = "CANCELLED"
	stateExpired     = "EXPIRED"  // the payer never acted before expires_at
	stateReversed    = "REVERSED" // a successful transfer whose funds came back
)

// Local dispute states. WON and LOST are final.
const (
	stateNeedsResponse = "NEEDS_RESPONSE" // the merchant may answer until evidence_due_by
	stateUnderReview   = "UNDER_REVIEW"   // evidence submitted, the bank decides
	stateWon           = "WON"
	stateLost          = "LOST"
)

// Local dispute reasons: why the payer's bank took the money back.
const (
	reasonFraud              = "FRAUD"
	reasonNotReceived        = "NOT_RECEIVED"
	reasonNotAsDescribed     = "NOT_AS_DESCRIBED"
	reasonDuplicate          = "DUPLICATE"
	reasonCreditNotProcessed = "CREDIT_NOT_PROCESSED"
	reasonGeneral            = "GENERAL"
)

// disputeReasons are the local dispute reasons.
var disputeReasons = []string{reasonFraud, reasonNotReceived, reasonNotAsDescribed, reasonDuplicate, reasonCreditNotProcessed, reasonGeneral}

// Local settlement line types.
const (
	linePayment         = "PAYMENT"          // a succeeded payment: +amount, its fee
	lineRefund          = "REFUND"           // a succeeded refund: -amount
	lineDispute         = "DISPUTE"          // an opened dispute: -amount, the dispute fee
	lineDisputeReversal = "DISPUTE_REVERSAL" // a won dispute: +amount
)

// final reports whether no scheduled transition applies to a state any
// more (REVERSED is reached from SUCCESS only by an explicit return).
func final(state string) bool {
	switch state {
	case stateSuccess, stateFailed, stateCancelled, stateExpired, stateReversed, stateWon, stateLost:
		return true
	}
	return false
}

// Local error codes.
const (
	errDeclined    = "ERR_DECLINED"     // issuer or payer refused
	errAccount     = "ERR_ACCOUNT"      // beneficiary account does not exist
	errBankOffline = "ERR_BANK_OFFLINE" // the payer's bank is down
	errValidation  = "ERR_VALIDATION"
	errAuth        = "ERR_AUTH"
	errNotFound    = "ERR_NOT_FOUND"
	errIdempotency = "ERR_IDEMPOTENCY" // key reused with a different request
	errState       = "ERR_STATE"       // action not possible in the current state
	errTimeout     = "ERR_TIMEOUT"     // the PSP gave up on a held request
	errInternal    = "ERR_INTERNAL"    // the PSP broke (or a test made it break)
	errNoRoute     = "ERR_NO_ROUTE"    // no such API path: unlike ERR_NOT_FOUND it says nothing about an attempt

	// Refund refusals (422): nothing was recorded.
	errRefundPayment     = "ERR_REFUND_PAYMENT"     // no such payment, not SUCCESS, or another currency
	errRefundAmount      = "ERR_REFUND_AMOUNT"      // more than is left to refund of the payment
	errRefundUnsupported = "ERR_REFUND_UNSUPPORTED" // the payment's channel cannot refund
	// errRefundDeclined: a recorded refund the PSP declined (FAILED).
	errRefundDeclined = "ERR_REFUND_DECLINED"

	// Dispute refusals (422): nothing was recorded.
	errDisputePayment = "ERR_DISPUTE_PAYMENT" // no such payment, or not SUCCESS
	errDisputeAmount  = "ERR_DISPUTE_AMOUNT"  // more than its refunds and disputes left of the payment
)

// errorMessages are the PSP's English texts of its error codes.
var errorMessages = map[string]string{
	errDeclined:       "The payer or their bank declined the payment.",
	errAccount:        "The beneficiary account does not exist.",
	errBankOffline:    "The payer's bank is offline.",
	errRefundDeclined: "The PSP declined the refund.",
}

// Local payer-action kinds.
const (
	actionRedirect = "REDIRECT"
	actionQR       = "QR"
	actionVA       = "VA" // pay into a virtual account
)

// channel is how the PSP names a payment method.
type channel struct {
	code    string // local channel code
	label   string // shown on the payer page
	country string
	action  string // local payer-action kind
}

// channels maps paykit's payment methods to the PSP's channels per country.
var channels = map[string]map[string]channel{
	"MY": {
		"FPX":           {fpxChannel, "FPX online banking", "MY", actionRedirect},
		"TNG":           {"ewallet_tngd", "Touch 'n Go eWallet", "MY", actionRedirect},
		"BOOST":         {"ewallet_boost", "Boost", "MY", actionRedirect},
		"GRABPAY":       {"ewallet_grabpay", "GrabPay", "MY", actionRedirect},
		"DUITNOW_QR":    {"qr_duitnow", "DuitNow QR", "MY", actionQR},
		"CARD":          {"card_my", "Card", "MY", actionRedirect},
		"BANK_TRANSFER": {"va_my", "Bank transfer", "MY", actionVA},
		"ALIPAY":        {"ewallet_alipay", "Alipay", "MY", actionRedirect},
		"WECHAT_PAY":    {"ewallet_wechat", "WeChat Pay", "MY", actionRedirect},
		"UNIONPAY":      {"card_unionpay", "UnionPay", "MY", actionRedirect},
		"UMOBILE":       {"ewallet_umobile", "U Mobile", "MY", actionRedirect},
		"EMONEI":        {"ewallet_emonei", "Emonei", "MY", actionRedirect},
	},
	"TH": {
		"PROMPTPAY":     {"qr_promptpay", "PromptPay", "TH", actionQR},
		"TRUEMONEY":     {"ewallet_truemoney", "TrueMoney Wallet", "TH", actionRedirect},
		"CARD":          {"card_th", "Card", "TH", actionRedirect},
		"BANK_TRANSFER": {"va_th", "Bank transfer", "TH", actionVA},
	},
}

// methodOrder lists the methods of each country in the order routes are
// offered.
var methodOrder = map[string][]string{
	"MY": {"FPX", "TNG", "BOOST", "GRABPAY", "DUITNOW_QR", "CARD", "BANK_TRANSFER", "ALIPAY", "WECHAT_PAY", "UNIONPAY", "UMOBILE", "EMONEI"},
	"TH": {"PROMPTPAY", "TRUEMONEY", "CARD", "BANK_TRANSFER"},
}

// fpxChannel is the one channel that takes a bank choice.
const fpxChannel = "fpx_b2c"

// payerFields are the payer fields a channel requires: online banking
// and cards need an email for the receipt, everything else a name.
func (c channel) payerFields() []string {
	switch c.code {
	case fpxChannel, "card_my", "card_th":
		return []string{"name", "email"}
	}
	return []string{"name"}
}

// isCard reports whether c is the channel of method CARD.
func (c channel) isCard() bool { return c.code == "card_my" || c.code == "card_th" }

// channelByCode finds a channel by its local code.
func channelByCode(code string) (channel, bool) {
	for _, byMethod := range channels {
		for _, c := range byMethod {
			if c.code == code {
				return c, true
			}
		}
	}
	return channel{}, false
}

// bank is one bank the PSP reaches, with the service's canonical code.
type bank struct {
	code    string // paykit's canonical code
	name    string // display name (FPX shows the online-banking brand)
	local   string // the PSP's code
	offline bool   // the PSP reports it down: FPX payments to it fail, routes mark it unavailable
}

// myBanks are the Malaysian banks, for FPX and (later) MY payouts. The
// local codes are FPX-style bank ids.
var myBanks = []bank{
	{"MAYBANK", "Maybank2u", "MBB0228", false},
	{"CIMB", "CIMB Clicks", "BCBB0235", false},
	{"PUBLIC", "Public Bank", "PBB0233", false},
	{"RHB", "RHB Now", "RHB0218", false},
	{"HLB", "Hong Leong Connect", "HLB0224", false},
	{"AMBANK", "AmOnline", "AMBB0209", false},
	{"BSN", "BSN", "BSN0601", true},
	{"BIMB", "Bank Islam", "BIMB0340", false},
}

// promptPayLocal is the PSP's code of a PromptPay payout destination.
const promptPayLocal = "TH-PP"

// thBanks are the Thai payout banks by canonical code (wire.ThaiBankCodes
// plus promptpay), with the PSP's "TH-nnn" codes.
var thBanks = []bank{
	{"BBL", "Bangkok Bank", "TH-002", false},
	{"KBANK", "Kasikornbank", "TH-004", false},
	{"KTB", "Krungthai Bank", "TH-006", false},
	{"TTB", "TMBThanachart Bank", "TH-011", false},
	{"SCB", "Siam Commercial Bank", "TH-014", false},
	{"SCBT", "Standard Chartered Bank (Thai)", "TH-020", false},
	{"CIMB", "CIMB Thai Bank", "TH-022", false},
	{"UOB", "United Overseas Bank (Thai)", "TH-024", false},
	{"BAY", "Bank of Ayudhya", "TH-025", false},
	{"GSB", "Government Savings Bank", "TH-030", false},
	{"GHB", "Government Housing Bank", "TH-033", false},
	{"BAAC", "Bank for Agriculture and Agricultural Cooperatives", "TH-034", false},
	{"EXIM", "Export-Import Bank of Thailand", "TH-035", false},
	{"ISLAMIC", "Islamic Bank of Thailand", "TH-066", false},
	{"TISCO", "TISCO Bank", "TH-067", false},
	{"KKP", "Kiatnakin Phatra Bank", "TH-069", false},
	{"TCR", "Thai Credit Bank", "TH-071", false},
	{"LHBANK", "Land and Houses Bank", "TH-073", false},
	{"SME", "SME Development Bank", "TH-098", false},
	{"CLICX", "CLICX", "TH-099", false},
	{"promptpay", "PromptPay", promptPayLocal, false},
}

// payoutBanks are the banks the PSP pays out to, by country.
var payoutBanks = map[string][]bank{"MY": myBanks, "TH": thBanks}

// localBank finds a bank of country by its local code.
func localBank(country, local string) (bank, bool) {
	for _, b := range payoutBanks[country] {
		if b.local == local {
			return b, true
		}
	}
	return bank{}, false
}

// currencies are the PSP's currency per country.
var currencies = map[string]string{"MY": "MYR", "TH": "THB"}
