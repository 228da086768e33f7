// Package workctx marks the contexts of the Service's background worker,
// so that a Store can serve the worker from a share of its connections of
// its own: requests then cannot starve the worker, nor the worker requests.
package workctx

import "context"

type key struct{}

// With returns ctx marked as the worker's.
func With(ctx context.Context) context.Context {
	if Is(ctx) {
		return ctx
	}
	return context.WithValue(ctx, key{}, true)
}

// Is reports whether ctx, or a context it derives from, was marked by With.
func Is(ctx context.Context) bool {
	v, _ := ctx.Value(key{}).(bool)
	return v
}
