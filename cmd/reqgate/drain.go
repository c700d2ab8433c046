package main

import (
	"context"
	"errors"
	"log/slog"
	"time"
)

// A drain that runs past server.shutdown_timeout is cut: the requests still in flight end with the process (their
// callers see the connection close), and the stop is still a clean one, exit status 0, since the operator's
// timeout did what it is for. Each part logs what it cut; a supervisor that reads a non-zero status as a crash
// would otherwise restart, alert on or back off a process that did exactly what it was told.

// drainCut reports whether err is a part's drain ended by the shutdown timeout (ctx), not a failure.
func drainCut(ctx context.Context, err error) bool {
	return err != nil && ctx.Err() != nil && errors.Is(err, context.DeadlineExceeded)
}

// logCut logs what a part cut when its drain ran past the shutdown timeout.
func logCut(log *slog.Logger, part string, err error, args ...any) {
	log.Warn("shutdown: server.shutdown_timeout passed; cutting what is still in flight",
		append([]any{"part", part, "err", err}, args...)...)
}

// spanFlushMin is the least time the queued spans get to reach the collector at a stop, even when the drain used
// up server.shutdown_timeout: the spans of the requests that finished are what explains a slow drain.
const spanFlushMin = 5 * time.Second

// flushContext is ctx, the shutdown's, with at least spanFlushMin left.
func flushContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if d, ok := ctx.Deadline(); ok && time.Until(d) >= spanFlushMin {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(context.WithoutCancel(ctx), spanFlushMin)
}
