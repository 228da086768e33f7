package paykit

import (
	"errors"
	"fmt"
	"time"

	"github.com/paykit/paykit/internal/contract"
)

// Error codes of the contract. Every error a Service method returns to a
// caller is an *Error carrying one of them.
const (
	CodeInvalidRequest             = "invalid_request"
	CodeUnauthorized               = "unauthorized"
	CodeNotFound                   = "not_found"
	CodeMethodNotAllowed           = "method_not_allowed"
	CodeIdempotencyConflict        = "idempotency_conflict"
	CodeIdempotencyInProgress      = "idempotency_in_progress"
	CodeDuplicateMerchantReference = "duplicate_merchant_reference"
	CodeRequestTooLarge            = "request_too_large"
	CodeInvalidState               = "invalid_state"
	CodePaymentMethodUnavailable   = "payment_method_unavailable"
	CodePayoutRouteUnavailable     = "payout_route_unavailable"
	CodeMissingRequiredField       = "missing_required_field"
	CodeInsufficientBalance        = "insufficient_balance"
	CodeAmountExceedsRefundable    = "amount_exceeds_refundable"
	CodeRefundUnsupported          = "refund_unsupported"
	CodeRateLimited                = "rate_limited"
	CodeDispatchUnavailable        = "dispatch_unavailable"
	CodeServiceUnavailable         = "service_unavailable"
	CodeInternal                   = "internal_error"
)

// Error is the one error type of paykit: a contract code, a message safe to
// show to the caller and the offending parameter (dotted path, may be
// empty). Err keeps an internal cause for logs; it is never rendered.
// httpadapter maps codes to HTTP statuses.
type Error struct {
	Code       string
	Message    string
	Param      string
	RetryAfter time.Duration // when a retry may succeed: idempotency_in_progress, rate_limited, service_unavailable
	Err        error
}

// Error implements error.
func (e *Error) Error() string {
	msg := e.Code + ": " + e.Message
	if e.Param != "" {
		msg += " (" + e.Param + ")"
	}
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Unwrap returns the internal cause.
func (e *Error) Unwrap() error { return e.Err }

// errorf builds an *Error of code.
func errorf(code, param, format string, args ...any) *Error {
	return &Error{Code: code, Param: param, Message: fmt.Sprintf(format, args...)}
}

// invalidRequest is shorthand for an invalid_request error naming param.
func invalidRequest(param, format string, args ...any) *Error {
	return errorf(CodeInvalidRequest, param, format, args...)
}

// internalError wraps an unexpected failure as internal_error, whose
// message reveals nothing. A Store that cannot take more work
// (ErrUnavailable) is not a failure of the request: that cause gives
// service_unavailable instead.
func internalError(cause error) *Error {
	if errors.Is(cause, ErrUnavailable) {
		return &Error{Code: CodeServiceUnavailable, Message: "The service is busy; retry the request later.", RetryAfter: unavailableRetryAfter, Err: cause}
	}
	return &Error{Code: CodeInternal, Message: contract.InternalMessage, Err: cause}
}

// unavailableRetryAfter is the Retry-After of service_unavailable.
const unavailableRetryAfter = time.Second

// AsError returns err as an *Error: contract errors unchanged, anything else
// as internal_error (service_unavailable when it is ErrUnavailable).
func AsError(err error) *Error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return internalError(err)
}

// ErrorCode returns the contract code of err ("" for nil).
func ErrorCode(err error) string {
	if err == nil {
		return ""
	}
	return AsError(err).Code
}

// unauthorized is the single answer to every authentication failure.
func unauthorized() *Error {
	return &Error{Code: CodeUnauthorized, Message: contract.UnauthorizedMessage}
}

func notFound(what string) *Error {
	return errorf(CodeNotFound, "", "No such %s.", what)
}
