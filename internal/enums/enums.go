// Package enums holds the values of paykit's enumerations as strings, in
// the contract's order, for the packages that list them: httpadapter (the
// dashboard's filters, the OpenAPI checks), internal/shapes and the
// Providers. The payment methods are plain strings and are defined here;
// the statuses, states and event types are paykit's constants, and paykit
// fills their lists in its init (it imports this package, not the other
// way round).
package enums

// PaymentMethods are the payment methods of the contract.
var PaymentMethods = []string{
	"FPX", "PROMPTPAY", "TRUEMONEY", "BANK_TRANSFER", "TNG", "BOOST", "CARD",
	"GRABPAY", "ALIPAY", "UMOBILE", "EMONEI", "DUITNOW_QR", "WECHAT_PAY", "UNIONPAY",
}

// Lists of paykit's constants, set by paykit's init.
var (
	PaymentStatuses  []string // every paykit.PaymentStatus
	PayoutStatuses   []string // every paykit.PayoutStatus
	CheckoutStatuses []string // every paykit.CheckoutStatus
	RefundStatuses   []string // every paykit.RefundStatus
	JobStates        []string // the paykit.JobState values a job list can be filtered by
	EventTypes       []string // every event type
)

// Lists of paykit's money constants, set by paykit's init.
var (
	DisputeStatuses            []string // every paykit.DisputeStatus
	BalanceTransactionTypes    []string // every paykit.BalanceTransactionType
	BalanceTransactionStatuses []string // every paykit.BalanceTransactionStatus
)

// Strings returns v as strings, in a new slice.
func Strings[S ~string](v []S) []string {
	out := make([]string, len(v))
	for i, s := range v {
		out[i] = string(s)
	}
	return out
}
