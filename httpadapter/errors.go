package httpadapter

import (
	"fmt"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/internal/contract"
)

// The contract errors httpadapter answers with itself, before or instead of
// the Service.

// errorf builds a *paykit.Error of code.
func errorf(code, param, format string, args ...any) *paykit.Error {
	return &paykit.Error{Code: code, Param: param, Message: fmt.Sprintf(format, args...)}
}

// invalidRequest is an invalid_request error naming param.
func invalidRequest(param, format string, args ...any) *paykit.Error {
	return errorf(paykit.CodeInvalidRequest, param, format, args...)
}

// unauthorized is the single answer to every authentication failure, the
// Service's.
func unauthorized() *paykit.Error {
	return &paykit.Error{Code: paykit.CodeUnauthorized, Message: contract.UnauthorizedMessage}
}

// internalError is an unexpected failure (no contract error) as
// internal_error, whose message reveals nothing, or service_unavailable
// when the Store could not take more work; with a nil cause, the message
// alone.
func internalError(cause error) *paykit.Error {
	if cause == nil {
		return &paykit.Error{Code: paykit.CodeInternal, Message: contract.InternalMessage}
	}
	return paykit.AsError(cause)
}
