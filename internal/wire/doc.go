// Package wire holds the contract's wire formats that paykit, httpadapter
// and the Providers share: amounts of minor units, timestamps, text, and the
// canonical Thai payout bank codes.
package wire
