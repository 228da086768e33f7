// Package validated gives httpadapter the Service's validator (Check) and
// marks a context whose request body httpadapter has already held to the
// validate tags of the Service's request type (the body's tags are the same
// rules, field for field), so that the Service does not run the same rules
// a second time.
package validated

import "context"

// Check holds v's `validate` struct tags and text to the Service's rules,
// returning the first failure as a paykit invalid_request error. paykit sets
// it when it is loaded.
var Check func(v any) error

type key struct{}

// With returns ctx marked as carrying a validated request.
func With(ctx context.Context) context.Context { return context.WithValue(ctx, key{}, true) }

// In reports whether ctx carries a validated request.
func In(ctx context.Context) bool {
	v, _ := ctx.Value(key{}).(bool)
	return v
}
