package httpadapter

import (
	"net/http"
	"slices"
)

// Patterns returns the route patterns registered on h, a handler that
// NewMerchantAPI, NewOperatorAPI, NewPayHandler or NewProviderCallbacks
// returned, in registration order, so that tests can walk every route,
// also those added later.
func Patterns(h http.Handler) []string {
	return slices.Clone(h.(interface{ routes() []string }).routes())
}

func (a *api) routes() []string { return a.patterns }
