// Package contract holds values of paykit's API contract that both the
// Service and httpadapter state: httpadapter checks a request with them
// before the Service sees it.
package contract

import "time"

// Page limits: a list's page holds DefaultPageLimit items unless the
// caller asks for 1 to MaxPageLimit.
const (
	DefaultPageLimit = 25
	MaxPageLimit     = 100
)

// DefaultSecretOverlap is how long the previous secrets of a webhook
// endpoint keep signing after a rotation unless the operator says
// otherwise.
const DefaultSecretOverlap = 24 * time.Hour

// AdjustmentAmountMessage explains the amount of a balance adjustment.
const AdjustmentAmountMessage = "amount must be a non-zero integer of minor units, negative to debit."

// Messages of errors that httpadapter gives as the Service does.
const (
	UnauthorizedMessage = "Invalid or missing API credentials."
	InternalMessage     = "An internal error occurred."
)
