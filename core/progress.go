package core

import "context"

// progressKey is the context key of WithProgress.
type progressKey struct{}

// WithProgress returns a context under which the long store operations, Importer.Import and
// Store.Apply, call fn as they write records: with the number of records written since the previous call
// (Apply: one at a time; Import: a batch at a time). fn runs on the goroutine doing the work, inside its
// transaction, so it must return quickly. The callback travels in the context, as net/http/httptrace's hooks
// do, so that the store interfaces and their wrappers (storemetrics) need no extra parameter for it.
func WithProgress(ctx context.Context, fn func(records int)) context.Context {
	return context.WithValue(ctx, progressKey{}, fn)
}

// ProgressFunc is the callback of WithProgress under ctx, or a function that does nothing.
func ProgressFunc(ctx context.Context) func(records int) {
	if fn, ok := ctx.Value(progressKey{}).(func(int)); ok && fn != nil {
		return fn
	}
	return func(int) {}
}
