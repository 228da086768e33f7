// Package httpadapter serves paykit over net/http: the merchant API
// (NewMerchantAPI, HTTP Basic with API keys), the operator API
// (NewOperatorAPI, bearer tokens) and the payer-facing pages
// (NewPayHandler: continuation links, return pages and QR images, which
// take a signed token in the path instead of credentials). Each
// constructor returns an http.Handler whose paths are relative to where the
// host mounts it; examples/server mounts them under /v1, /operator and /pay
// with http.StripPrefix.
//
// Every response carries a Request-Id header. Errors are the contract's
// shape, rendered from *paykit.Error in one place:
//
//	{"error":{"code":"…","message":"…","param":"…","request_id":"req_…"}}
//
// An unknown path is 404 not_found; a known path with a method it does not
// take is 405 method_not_allowed with an Allow header listing the methods
// it takes. Strings that are not text paykit accepts (a NUL
// character or invalid UTF-8) are refused before the Service sees them: a
// path or query parameter, a body member (by its dotted path) or a payer
// form field is 400 invalid_request naming it, credentials are the usual
// 401.
//
// Each request is logged once through log/slog (method, path, status,
// duration, request id and the caller's ids; never credentials, bodies or
// query strings) and, when a prometheus.Registerer is given, counted and
// timed by route pattern and status. Panics become 500 internal_error (an
// HTML error page on the payer pages). A request whose client went away
// before the answer (its context cancelled) is logged as a warning with
// status 499, as nginx does, and counted as 499: the failure that follows
// the cancellation is not an internal error.
//
// The OpenAPI 3.1 document of both APIs is embedded (OpenAPIDocument) and
// served by the merchant API at GET /openapi.json; the tests check every
// response they receive against it.
package httpadapter
