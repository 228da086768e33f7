package httpadapter

import (
	"net/http"

	"github.com/paykit/paykit"
)

// statusByCode is the one table mapping the contract's error codes to HTTP
// statuses.
var statusByCode = map[string]int{
	paykit.CodeInvalidRequest:             http.StatusBadRequest,
	paykit.CodeUnauthorized:               http.StatusUnauthorized,
	paykit.CodeNotFound:                   http.StatusNotFound,
	paykit.CodeMethodNotAllowed:           http.StatusMethodNotAllowed,
	paykit.CodeIdempotencyConflict:        http.StatusConflict,
	paykit.CodeIdempotencyInProgress:      http.StatusConflict,
	paykit.CodeDuplicateMerchantReference: http.StatusConflict,
	paykit.CodeRequestTooLarge:            http.StatusRequestEntityTooLarge,
	paykit.CodeInvalidState:               http.StatusUnprocessableEntity,
	paykit.CodePaymentMethodUnavailable:   http.StatusUnprocessableEntity,
	paykit.CodePayoutRouteUnavailable:     http.StatusUnprocessableEntity,
	paykit.CodeMissingRequiredField:       http.StatusUnprocessableEntity,
	paykit.CodeInsufficientBalance:        http.StatusUnprocessableEntity,
	paykit.CodeAmountExceedsRefundable:    http.StatusUnprocessableEntity,
	paykit.CodeRefundUnsupported:          http.StatusUnprocessableEntity,
	paykit.CodeRateLimited:                http.StatusTooManyRequests,
	paykit.CodeDispatchUnavailable:        http.StatusServiceUnavailable,
	paykit.CodeServiceUnavailable:         http.StatusServiceUnavailable,
	paykit.CodeInternal:                   http.StatusInternalServerError,
}

// StatusForCode returns the HTTP status of a contract error code; unknown
// codes map to 500.
func StatusForCode(code string) int {
	if s, ok := statusByCode[code]; ok {
		return s
	}
	return http.StatusInternalServerError
}
