package gateway

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reqgate/reqgate/core/coretest"
	"github.com/reqgate/reqgate/ratelimit"
)

// panickyLimiter panics on its first Admit, to reach the gateway's per-request recovery.
type panickyLimiter struct{ calls atomic.Int32 }

func (l *panickyLimiter) Admit(context.Context, ratelimit.Request) ratelimit.Decision {
	if l.calls.Add(1) == 1 {
		panic("limiter bug")
	}
	return ratelimit.Decision{Allowed: true}
}
func (l *panickyLimiter) Status(context.Context, ratelimit.Request) time.Duration { return 0 }
func (l *panickyLimiter) RejectStatus() int                                       { return 429 }

// TestPanicRecovered checks that a panic while serving gives that caller a 500 with an XML error, and the
// gateway goes on serving.
func TestPanicRecovered(t *testing.T) {
	c := coretest.Start(t, coretest.Options{})
	opt := cachedOptions(c)
	opt.Limiter = &panickyLimiter{}
	gw := startGateway(t, opt)
	res := get(t, gw.URL+"/api2/demo/re/1")
	if got, want := res.Status, http.StatusInternalServerError; got != want {
		t.Fatalf("status=%d, want %d", got, want)
	}
	if !strings.Contains(res.Body, "<message>") || res.Header.Get("X-Request-Id") == "" {
		t.Errorf("500 without XML error or request id: %q %v", res.Body, res.Header)
	}
	if got, want := get(t, gw.URL+"/api2/demo/re/1").Status, http.StatusOK; got != want {
		t.Fatalf("after the panic: status=%d, want %d", got, want)
	}
}
