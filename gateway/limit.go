package gateway

import (
	"context"
	"strconv"
	"time"
	"unsafe"

	"github.com/valyala/fasthttp"

	"github.com/reqgate/reqgate/internal/wire"
	"github.com/reqgate/reqgate/internal/wire/route"
	"github.com/reqgate/reqgate/ratelimit"
)

// Limiter is what the gateway needs of a rate limiter; *ratelimit.Limiter implements it.
type Limiter interface {
	// Admit decides on one request, possibly holding it for a shaped slot; it never fails.
	Admit(ctx context.Context, r ratelimit.Request) ratelimit.Decision
	// Status reports how long until a request would be admitted, without counting it.
	Status(ctx context.Context, r ratelimit.Request) time.Duration
	// RejectStatus is the status of a rejection: 429, or 503 for the mirrored service's clients.
	RejectStatus() int
}

var _ Limiter = (*ratelimit.Limiter)(nil)

// admit applies the limiter to an API request. It returns false after writing the rejection.
func (g *Gateway) admit(x *exchange, req ratelimit.Request) bool {
	limiter := x.live.limiter
	if limiter == nil {
		return true
	}
	// No deadline of the gateway's own: the limiter bounds its Redis calls itself (ratelimit.redis_timeout)
	// and a shaped request's hold by the policy's max_delay; a context per request would cost a timer.
	d := limiter.Admit(context.Background(), req)
	x.held += d.Delay // a request may be held before verification too (its ip policies, a login's wait)
	if d.Limited {
		if d.Policy != "" {
			x.addHeader("Ratelimit-Policy", d.Policy)
		}
		if b := d.AppendRateLimit(x.rlBuf[:0]); len(b) > 0 {
			x.addHeader("Ratelimit", unsafe.String(unsafe.SliceData(b), len(b)))
		}
	}
	if d.Allowed {
		return true
	}
	x.throttled = true
	ctx := x.ctx
	ctx.SetStatusCode(limiter.RejectStatus())
	ctx.SetContentType(wire.ContentTypeXML)
	ctx.Response.Header.Set("Retry-After", strconv.Itoa(ratelimit.RetryAfterSeconds(d.RetryAfter)))
	ctx.SetBody(throttleXML(d.RetryAfter))
	g.translateResponse(x)
	return false
}

// admitUnverified charges a caller the gateway has not verified yet to its address's policies. It returns false
// after answering. rate_throttle_status answers 200 even then, as the interface promises: when the address's
// policies would refuse a call, it says so with the time left, without counting the question (a call that
// counts would start a blocked address's block again).
func (g *Gateway) admitUnverified(x *exchange) bool {
	req := ratelimit.Request{IP: x.clientIP(), Stripe: x.conn.stripeOf()}
	if g.throttleStatusRequest(x) && readMethod(x.ctx) {
		c, cancel := context.WithTimeout(context.Background(), g.opt.UpstreamTimeout)
		wait := x.live.limiter.Status(c, req)
		cancel()
		if wait > 0 {
			g.writeThrottleStatus(x, wait)
			return false
		}
	}
	if !g.admit(x, req) {
		return false
	}
	x.ipCharged = true
	return true
}

// throttleRoute is rate_throttle_status in the route table, which the gateway answers itself.
var throttleRoute, _ = route.Throttle.Spec()

// throttleStatusRequest reports whether x is addressed to rate_throttle_status, which the gateway answers itself
// (the table's methods, GET, and HEAD; others 405) and never charges.
func (g *Gateway) throttleStatusRequest(x *exchange) bool {
	return x.rt.Class == route.Throttle
}

// throttleStatus answers GET {base_url}/rate_throttle_status for a verified caller, without counting; without
// a limiter the API is always available.
func (g *Gateway) throttleStatus(x *exchange, req ratelimit.Request) {
	var wait time.Duration
	if limiter := x.live.limiter; limiter != nil {
		c, cancel := context.WithTimeout(context.Background(), g.opt.UpstreamTimeout)
		wait = limiter.Status(c, req)
		cancel()
	}
	g.writeThrottleStatus(x, wait)
}

// writeThrottleStatus answers rate_throttle_status: 200, with the time until a call would be admitted: wait, or
// the time the upstream's block of the account has left when that is longer.
func (g *Gateway) writeThrottleStatus(x *exchange, wait time.Duration) {
	if left, _ := g.upBlocks.blocked(x.rt.APIKey, g.opt.Now()); left > wait {
		wait = left // the upstream's own block of the account (upthrottle.go)
	}
	ctx := x.ctx
	ctx.SetStatusCode(fasthttp.StatusOK)
	ctx.SetContentType(wire.ContentTypeXML)
	ctx.SetBody(throttleStatusXML(wait))
	g.translateResponse(x)
}
