package paykit

import "github.com/paykit/paykit/internal/enums"

// The lists of the enumerations, for the packages that show or check them.
func init() {
	enums.PaymentStatuses = enums.Strings(paymentStatuses)
	enums.PayoutStatuses = enums.Strings(payoutStatuses)
	enums.CheckoutStatuses = enums.Strings(checkoutStatuses)
	enums.RefundStatuses = enums.Strings(refundStatuses)
	enums.DisputeStatuses = enums.Strings(disputeStatuses)
	enums.BalanceTransactionTypes = enums.Strings(balanceTxnTypes)
	enums.BalanceTransactionStatuses = enums.Strings(balanceTxnStatuses)
	enums.JobStates = enums.Strings(jobStates)
	enums.EventTypes = enums.Strings(eventTypes)
}
